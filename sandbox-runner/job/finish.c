/* The end of a job: its artifacts (ws_collect), its outcome (outcome.c) and the
 * result, stored whatever the database does meanwhile (store.c), then the API woken. */
#include "supint.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "retry.h"
#include "strbuf.h"
#include "util.h"
#include "wake.h"

void sup_collect(struct sup *s, struct artifact **arts, size_t *n)
{
	struct artifact_caps caps = { s->cfg->runner_max_artifact_files,
				      s->cfg->runner_max_artifact_bytes,
				      s->cfg->runner_max_artifacts_bytes };
	struct strbuf notes = STRBUF_INIT;

	*arts = NULL;
	*n = 0;
	if (s->job.artifacts_dir == NULL || s->l.wsfd < 0)
		return;
	if (ws_collect(s->l.wsfd, s->job.artifacts_dir, &caps, arts, n, &notes) < 0) {
		sup_diag(s, "artifacts could not be collected");
	} else {
		char *save = NULL;
		for (char *line = strtok_r(notes.buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			sup_diag(s, "%s", line);
	}
	sb_release(&notes);
}

/* The result must not be lost to a DB outage: retry, capped backoff, until it is
 * stored or the job turns out to be no longer ours. */
static void store_result(struct sup *s, struct job_result *r)
{
	for (int attempt = 1;; attempt++) {
		int rc = sup_db_ready(s) < 0 ? -1 : store_finish(s->db, s->job.id, s->l.runner_id, r);
		if (rc == 0)
			return;
		if (rc == 1) {
			log_kv("warn", "result_discarded", "job", s->job.id, "reason",
			       "job no longer owned by this runner", (char *)NULL);
			return;
		}
		sup_log_attempt(s, "store_result", attempt, 0, "db", 1);
		sup_db_drop_if_lost(s);
		util_sleep_ms(retry_delay_ms(100, 10000, attempt));
	}
}

/* The job's status from what happened; appends the outcome's diagnostic. */
void sup_outcome_for(struct sup *s, struct outcome *o)
{
	struct outcome_in in = { s->reason, s->status_known, s->code, s->usage.oom_kills,
				 s->usage.pids_denied, s->l.stage,
				 s->l.cleanup_error[0] != '\0' };

	outcome_map(&in, o);
	for (size_t i = 0; i < o->ndiag; i++)
		sup_diag(s, "%s", o->diagnostics[i]);
}

void sup_finish(struct sup *s, struct artifact *arts, size_t narts)
{
	struct outcome o;
	struct cg_usage u = s->usage;
	struct job_result r;
	json_t *fail;
	char ec[16];

	sup_outcome_for(s, &o);
	fail = launch_failure_json(&s->l);
	memset(&r, 0, sizeof r);
	r.state = o.state;
	r.exit_code = o.exit_code;
	r.signal = o.signal;
	r.out = s->out.data, r.out_len = s->out.len, r.out_trunc = s->out.trunc;
	r.err = s->err.data, r.err_len = s->err.len, r.err_trunc = s->err.trunc;
	r.out_off = (long long)s->out.base, r.err_off = (long long)s->err.base;
	r.live = s->live_tried;
	r.diagnostics = s->diag;
	r.failure = fail;
	r.wall_ms = s->l.pid > 0 ? (long long)(util_mono_ms() - s->t0) : -1;
	r.cpu_ms = u.cpu_ns >= 0 ? u.cpu_ns / 1000000
		   : s->l.pid > 0 ? (long long)(s->ru.ru_utime.tv_sec + s->ru.ru_stime.tv_sec) * 1000 +
					  (s->ru.ru_utime.tv_usec + s->ru.ru_stime.tv_usec) / 1000
				: -1;
	r.mem_peak = u.mem_peak >= 0 ? u.mem_peak : s->l.pid > 0 ? s->ru.ru_maxrss * 1024L : -1;
	r.artifacts = arts;
	r.nartifacts = narts;
	r.compile = s->compile;
	store_result(s, &r);
	wake_send(s->cfg->api_wake_socket); /* committed: local long-polls answer now (wake.h) */
	snprintf(ec, sizeof ec, "%d", o.exit_code);
	log_kv("info", "job_finished", "job", s->job.id, "state", js_name(o.state), "exit_code", ec,
	       "cleanup", s->l.cleanup_status, (char *)NULL);
	json_decref(fail);
}
