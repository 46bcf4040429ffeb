/* Which row of the outcome table (common/jobstate.h) applies to what happened to a job (see
 * outcome.h). */
#include "outcome.h"

#include <signal.h>
#include <stddef.h>

/* The row for a job that ran (or was stopped). */
static enum job_outcome run_row(const struct outcome_in *in)
{
	int sig = in->status_known && in->code > 128 && in->code <= 128 + 64 ? in->code - 128 : 0;

	switch (in->reason) {
	case STOP_WALL: return JO_TIMED_OUT;
	case STOP_OUTPUT: return JO_OUTPUT_LIMIT;
	case STOP_CANCEL: return JO_CANCELLED;
	case STOP_PIDS: return JO_PIDS;
	case STOP_CPU: return JO_CPU;
	case STOP_MEMORY: return JO_MEMORY;
	case STOP_NONE: break;
	}
	if (!in->status_known)
		/* with an OOM kill, it took bwrap itself (tmpfs pages cannot be reclaimed) */
		return in->oom_kills > 0 ? JO_MEMORY : JO_NO_STATUS;
	/* A fork was refused. Even if the command's first process exited by itself,
	 * the rest of the job was killed with the sandbox: 128+N (DESIGN.md 5). */
	if (in->pids_denied > 0)
		return JO_PIDS_SEEN;
	/* the OOM killer hit some process of the job: report the code we saw */
	if (in->oom_kills > 0)
		return JO_MEMORY_SEEN;
	if (sig == SIGXCPU)
		return JO_CPU;
	return in->code == 0 ? JO_SUCCEEDED : JO_FAILED;
}

static void fill(struct outcome *o, enum job_outcome row, const struct outcome_in *in)
{
	o->state = js_outcome(row)->state;
	js_exit_code(row, in->status_known, in->code, &o->exit_code, &o->signal);
}

static void add(struct outcome *o, enum job_outcome row)
{
	const char *d = js_outcome(row)->diagnostic;

	if (d && o->ndiag < OUTCOME_MAX_DIAG)
		o->diagnostics[o->ndiag++] = d;
}

/* The runner's own stops: their codes stand even when cleanup fails. */
static int keeps_code(enum job_outcome row)
{
	return row == JO_TIMED_OUT || row == JO_OUTPUT_LIMIT || row == JO_CANCELLED;
}

void outcome_map(const struct outcome_in *in, struct outcome *o)
{
	enum job_outcome row;

	o->ndiag = 0;
	if (in->stage == STAGE_POLICY) {
		/* refused before anything was created: nothing to clean up */
		fill(o, JO_BLOCKED, in);
		return;
	}
	if (in->stage != STAGE_NONE) {
		fill(o, JO_SETUP_FAILED, in);
		if (in->stage == STAGE_INITIALIZE)
			add(o, JO_LIMITS_NOT_APPLIED);
	} else {
		row = run_row(in);
		fill(o, row, in);
		add(o, row);
		if (in->cleanup_failed && !keeps_code(row))
			fill(o, JO_CLEANUP_FAILED, in);
	}
	if (in->cleanup_failed)
		add(o, JO_CLEANUP_FAILED);
}
