/* A prewarm holder's life (warm.h: the dispatcher's side, the pool): forked from the
 * dispatcher like a spare, it prepares its slot up to a running bwrap whose command
 * is the exec stub (supervise_warm_start, through launch.c as any job's sandbox),
 * says "R" and waits for two things at once:
 *   its socket   "ID RUNNER_ID": the claimed job; it answers "A" before anything
 *                else and is that job's supervisor (supervise_warm_run, under the
 *                command line a launched supervisor has); the end of the socket (the
 *                dispatcher stopped, or asked for the slot back): it stands down.
 *   bwrap's pidfd the sandbox died while idle: it stands down.
 * Standing down kills the sandbox, cleans the slot exactly as after a job and exits,
 * which releases the slot's lock. */
#include "holder.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "retry.h"
#include "scfilter.h"
#include "strbuf.h"
#include "stubproto.h"
#include "supint.h"
#include "title.h"
#include "util.h"
#include "wake.h"

#define MSG_MAX 256

/* ---- the prewarmed sandbox
 *
 * Before the job is known (supervise_warm_start), exactly as a cold launch up to
 * bwrap: the slot's leftovers removed, the workspace tmpfs (at disk_mb_max), the
 * slot's cgroup (memory_mb_max, pids_max + 2), the pipes, the seccomp filter, the
 * default profile's arguments with an empty cwd and no job env, the private /etc,
 * rlimits at the operator's maxima, the uid drop, and bwrap itself, whose command
 * is the exec stub (stub.c) waiting on SB_FD_CTL. At assignment
 * (supervise_warm_run): the job is loaded and checked, the workspace remounted at
 * its disk_mb, its files written, the cgroup's limits lowered to its own, the usage
 * baselines taken, and the stub gets argv, env, cwd and rlimits; from there on it
 * is the cold supervisor's loop, result and cleanup. */

struct sup_warm {
	struct sup s;
	struct launch_fds f;
	int ctl;   /* our end of the stub's spec socket */
	int pidfd; /* bwrap's: readable once it ended */
	char digest[PROFILE_DIGEST_LEN];
};

_Static_assert(SB_FD_AGENT == STUB_FD_EXE && SB_FD_CTL == STUB_FD_CTL,
	       "the stub finds its descriptors where sb_spawn puts them");
#define STR_(x) #x
#define STR(x) STR_(x)

/* Kills the sandbox and cleans the slot as after a job; the struct stays usable
 * for a cold start in the same slot. */
static void warm_teardown(struct sup_warm *w)
{
	struct sup *s = &w->s;

	launch_fds_close(&w->f);
	launch_close_fd(&w->ctl);
	launch_close_fd(&w->pidfd);
	launch_cleanup(&s->l);
	s->l.pid = 0;
	s->l.cg_on = 0;
	s->l.ws_path[0] = '\0';
	s->l.cleanup_status = JS_CLEANUP_NOT_STARTED;
	s->l.cleanup_error[0] = '\0';
	memset(&s->base, 0, sizeof s->base);
	bws_release(&s->l.bst);
	bws_init(&s->l.bst);
	sup_reset_stream(&s->out, s->job.limits[LIM_OUTPUT_BYTES]);
	sup_reset_stream(&s->err, s->job.limits[LIM_OUTPUT_BYTES]);
}

static void warm_free(struct sup_warm *w)
{
	launch_fds_close(&w->f);
	launch_close_fd(&w->ctl);
	launch_close_fd(&w->pidfd);
	sup_free(&w->s);
	free(w);
}

static void supervise_warm_abort(struct sup_warm *w)
{
	if (w == NULL)
		return;
	warm_teardown(w);
	warm_free(w);
}

static int supervise_warm_fd(const struct sup_warm *w)
{
	return w->pidfd;
}

/* bwrap and the stub, from the prepared slot. 0 or -1 with err. */
static int warm_spawn(struct sup_warm *w, char *err, size_t errlen)
{
	struct sup *s = &w->s;
	struct launch_fds *f = &w->f;
	char *cmd[] = { (char *)"/proc/self/fd/" STR(SB_FD_AGENT), (char *)STUB_ARG0, NULL };
	const struct prof_job pj = { s->l.ws_path, "", s->cfg->runner_tmp_mb, NULL, SB_FD_SECCOMP,
				     SB_FD_STATUS, -1 };
	int sv[2] = { -1, -1 }, agent = -1;
	struct sb_spawn sp;

	if (launch_pipes(f, 0) < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "pipes: %s", strerror(errno));
		goto fail;
	}
	if ((f->sc = sc_build_fd(err, errlen)) < 0 ||
	    (f->args = prof_job_args(s->cfg, &prof_default, &pj, err, errlen)) < 0 ||
	    (agent = agent_memfd(s->cfg, err, errlen)) < 0)
		goto fail;
	launch_sb(&s->l, f, s->job.limits, cmd, &sp);
	sp.has_agent = 1, sp.agent_fd = agent, sp.ctl_fd = sv[1];
	s->l.pid = launch_spawn(&s->l, &sp, 0, err, errlen); /* once: the holder logs err */
	if (s->l.pid < 0)
		goto fail;
	close(agent);
	close(sv[1]);
	w->ctl = sv[0];
	launch_keep_parent_ends(f); /* block[] is -1: no network job is prewarmed */
	w->pidfd = (int)syscall(SYS_pidfd_open, s->l.pid, 0);
	if (w->pidfd < 0) {
		snprintf(err, errlen, "pidfd_open: %s", strerror(errno));
		return -1;
	}
	return 0;
fail:
	if (agent >= 0)
		close(agent);
	if (sv[0] >= 0)
		close(sv[0]), close(sv[1]);
	return -1;
}

static struct sup_warm *supervise_warm_start(const struct cfg *cfg, struct db *db, int slot,
				      char *err, size_t errlen)
{
	struct sup_warm *w = calloc(1, sizeof *w);
	struct sup *s;

	if (w == NULL) {
		snprintf(err, errlen, "out of memory");
		db_close(db);
		return NULL;
	}
	s = &w->s;
	sup_init(s, cfg, slot);
	s->db = db;
	launch_fds_init(&w->f);
	w->ctl = w->pidfd = -1;
	s->job.cwd = (char *)"";
	memcpy(s->job.limits, cfg->limit_max, sizeof s->job.limits);
	if (strcmp(cfg->runner_limits_mode, "cgroup") != 0) {
		snprintf(err, errlen, "runner_limits_mode is not cgroup");
		warm_free(w);
		return NULL;
	}
	if (prof_digest(cfg, w->digest) < 0) {
		snprintf(err, errlen, "the profile digest could not be computed");
		warm_free(w);
		return NULL;
	}
	if (sup_prepare_workspace(s) < 0 || sup_prepare_limits(s) < 0) {
		/* as snprintf's "%s" would, without its truncation warning */
		size_t n = strnlen(s->l.failure_error, errlen - 1);
		memcpy(err, s->l.failure_error, n);
		err[n] = '\0';
		goto fail;
	}
	if (warm_spawn(w, err, errlen) < 0)
		goto fail;
	return w;
fail:
	supervise_warm_abort(w);
	return NULL;
}

/* Why this job cannot use the prewarmed sandbox, or NULL. */
static const char *warm_ineligible(struct sup_warm *w)
{
	struct sup *s = &w->s;
	char digest[PROFILE_DIGEST_LEN];
	struct pollfd p = { .fd = w->pidfd, .events = POLLIN };

	if (s->job.network)
		return "a network job";
	if (s->job.profile && strcmp(s->job.profile, PROF_DEFAULT) != 0)
		return "a named profile";
	if (s->job.compile_argv)
		return "a compile step";
	if (prof_digest(s->cfg, digest) < 0 || strcmp(digest, w->digest) != 0)
		return "the profile changed since the sandbox was prewarmed";
	if (w->pidfd < 0 || poll(&p, 1, 0) != 0)
		return "the prewarmed sandbox had ended";
	return NULL;
}

/* The spec (stubproto.h) into b: 0, or -1 (too large for the stub: cold). */
static int warm_spec(struct sup *s, struct strbuf *b, char *err, size_t errlen)
{
	struct strbuf env = STRBUF_INIT;
	struct stub_hdr h = { STUB_MAGIC, 0, 0, 0, 0 };
	char **cmd = sup_command_argv(&s->job);
	int envc = prof_job_env(s->cfg, &prof_default, s->job.env, &env, err, errlen);
	size_t start;

	if (cmd == NULL || envc < 0) {
		free(cmd);
		sb_release(&env);
		return -1;
	}
	for (const struct prof_rlimit *r = prof_default.rlimits;
	     r < prof_default.rlimits + prof_default.n_rlimits; r++) {
		rlim_t soft, hard;
		if (r->only_without_cgroup)
			continue; /* as sandbox.c set_rlimits with a cgroup */
		prof_rlimit_value(r, s->job.limits, 0, &soft, &hard);
		h.nrl++;
	}
	while (cmd[h.argc])
		h.argc++;
	h.envc = (uint32_t)envc;
	sb_add(b, &h, sizeof h);
	for (const struct prof_rlimit *r = prof_default.rlimits;
	     r < prof_default.rlimits + prof_default.n_rlimits; r++) {
		struct stub_rl rl = { r->res, 0, 0, 0 };
		rlim_t soft, hard;
		if (r->only_without_cgroup)
			continue;
		prof_rlimit_value(r, s->job.limits, 0, &soft, &hard);
		rl.soft = soft, rl.hard = hard;
		sb_add(b, &rl, sizeof rl);
	}
	start = b->len;
	sb_addf(b, "/workspace%s%s", *s->job.cwd ? "/" : "", s->job.cwd);
	sb_add(b, "", 1);
	for (uint32_t i = 0; i < h.argc; i++)
		sb_add(b, cmd[i], strlen(cmd[i]) + 1);
	sb_add(b, env.buf, env.len);
	explicit_bzero(env.buf, env.len);
	sb_release(&env);
	free(cmd);
	h.strbytes = (uint32_t)(b->len - start);
	if (b->failed || b->len > STUB_SPEC_MAX || h.argc >= STUB_ARG_MAX / 2 ||
	    h.envc >= STUB_ARG_MAX / 2) {
		snprintf(err, errlen, "the command and environment are too large for the stub");
		return -1;
	}
	memcpy(b->buf, &h, sizeof h);
	return 0;
}

/* Sends the spec and shuts our side: 0, or -1 (the stub is gone). */
static int warm_send(struct sup_warm *w, const struct strbuf *b)
{
	size_t off = 0;

	while (off < b->len) {
		ssize_t n = send(w->ctl, b->buf + off, b->len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return shutdown(w->ctl, SHUT_WR);
}

/* bwrap's own words for a failure in its child (die_with_error: "bwrap: ...: %s\n"
 * on the command's stderr, exit 1), as the job's stderr: through a pipe into the
 * pump, like any output. */
static void bwrap_words(struct sup *s, const char *what, const char *arg, int e)
{
	char line[PATH_MAX + 256];
	int p[2], n = snprintf(line, sizeof line, "bwrap: %s %s: %s\n", what, arg, strerror(e));

	if (n < 0 || pipe2(p, O_CLOEXEC) < 0)
		return;
	if ((size_t)n >= sizeof line)
		n = (int)sizeof line - 1;
	if (write(p[1], line, (size_t)n) != n) {
		/* a pipe takes 4 KiB at once: nothing lost */
	}
	close(p[1]);
	while (p[0] >= 0)
		if (pump_drain(&p[0], &s->err))
			break;
	if (p[0] >= 0)
		close(p[0]);
}

/* The stub's answer after the sandbox ended: nothing (the command was exec'd), or a
 * step and an errno, turned into what a cold launch reports for the same failure. */
static void warm_answer(struct sup_warm *w)
{
	struct sup *s = &w->s;
	struct stub_fail a;
	char what[128], detail[160], cwd[PATH_MAX];
	char **cmd;

	if (w->ctl < 0 || recv(w->ctl, &a, sizeof a, MSG_DONTWAIT) != (ssize_t)sizeof a)
		return;
	switch (a.step) {
	case STUB_STEP_EXEC:
		if ((cmd = sup_command_argv(&s->job)) != NULL)
			bwrap_words(s, "execvp", cmd[0], a.err);
		free(cmd);
		break;
	case STUB_STEP_CHDIR:
		snprintf(cwd, sizeof cwd, "/workspace%s%s", *s->job.cwd ? "/" : "", s->job.cwd);
		bwrap_words(s, "Can't chdir to", cwd, a.err);
		break;
	case STUB_STEP_RLIMIT:
		snprintf(what, sizeof what, "sandbox start failed after 1 of %lld attempts (%s)",
			 s->cfg->runner_start_attempts, retry_errname(a.err));
		snprintf(detail, sizeof detail, "rlimit: %s", strerror(a.err));
		sup_setup_fail(s, STAGE_COMMAND_START, what, detail);
		break;
	default:
		sup_setup_fail(s, STAGE_COMMAND_START, "sandbox start failed",
			   "the exec stub refused its spec");
	}
}

/* The job in the prewarmed sandbox: 0, or -1 when the sandbox turned out to be gone
 * before the spec went (nothing of the job ran: the caller starts it cold). */
static int warm_execute(struct sup_warm *w, struct artifact **arts, size_t *narts)
{
	struct sup *s = &w->s;
	struct strbuf spec = STRBUF_INIT;
	char err[512];

	if (warm_spec(s, &spec, err, sizeof err) < 0) {
		sb_release(&spec);
		s->cold_reason = "the command and environment are too large for the stub";
		return -1;
	}
	if (ws_resize(s->l.ws_path, s->l.uid, s->job.limits[LIM_DISK_MB], err, sizeof err) < 0) {
		sup_setup_fail(s, STAGE_CREATE, "workspace setup failed", err);
		goto out;
	}
	if (sup_write_inputs(s) < 0)
		goto out;
	sup_mark(s, "ws_create");
	if (cg_set_limits(&s->l.cg, s->job.limits[LIM_MEMORY_MB] << 20, s->job.limits[LIM_PIDS] + 2,
			  err, sizeof err) < 0) {
		sup_setup_fail(s, STAGE_INITIALIZE, "resource limits", err);
		goto out;
	}
	sup_limits_diag(s);
	/* Usage counts from the sandbox's start, as a cold job's does: cpu_ms and the
	 * memory peak include bwrap's own start (the idle wait adds nothing: the stub
	 * blocks in read), and so does the process CPU time RLIMIT_CPU bounds. Only the
	 * event counters (OOM kills, refused forks) start from the job. */
	cg_read(&s->l.cg, &s->base);
	s->base.cpu_ns = 0;
	if (warm_send(w, &spec) < 0) {
		explicit_bzero(spec.buf, spec.len);
		sb_release(&spec);
		s->cold_reason = "the prewarmed sandbox had ended";
		return -1;
	}
	explicit_bzero(spec.buf, spec.len); /* env values */
	sb_release(&spec);
	sup_mark(s, "sb_spawn");
	sup_placement_diag(s);
	sup_diag(s, "launch: prewarmed sandbox");
	s->launch_noted = 1;
	sup_run(s, &w->f, arts, narts);
	warm_answer(w);
out:
	launch_fds_close(&w->f);
	sup_mark(s, "close_fds");
	launch_cleanup(&s->l);
	return 0;
}

/* Back to the state of a supervisor that has loaded its job: the warm sandbox is
 * gone, the slot clean, the diagnostics empty. */
static void warm_to_cold(struct sup_warm *w, const char *why)
{
	struct sup *s = &w->s;

	warm_teardown(w);
	json_decref(s->diag);
	s->diag = json_array();
	s->l.stage = STAGE_NONE;
	s->l.failure_error[0] = '\0';
	s->cold_reason = why;
}

static int supervise_warm_run(struct sup_warm *w, const char *job_id, const char *runner_id,
		       int fresh)
{
	struct sup *s = &w->s;
	struct artifact *arts = NULL;
	size_t narts = 0;
	const char *why;

	s->l.runner_id = runner_id;
	if (!fresh) {
		db_close(s->db);
		s->db = NULL; /* load_job connects, as a launched supervisor does */
	}
	memset(&s->job, 0, sizeof s->job);
	snprintf(s->job.id, sizeof s->job.id, "%s", job_id);
	if (sup_load_job(s, job_id) < 0) {
		log_kv("error", "job_load_failed", "job", job_id, (char *)NULL);
		supervise_warm_abort(w);
		return 1; /* the lease expires and the job ends as lost */
	}
	log_kv("info", "job_started", "job", job_id, "runner", runner_id, (char *)NULL);
	s->out.limit = s->err.limit = (size_t)s->job.limits[LIM_OUTPUT_BYTES];
	json_decref(s->diag);
	s->diag = json_array(); /* the prewarm's own lines are not the job's */
	if ((why = warm_ineligible(w)) != NULL) {
		warm_to_cold(w, why);
		sup_execute(s, &arts, &narts);
	} else if (sup_gate(s) < 0) {
		warm_teardown(w); /* refused: as cold, nothing of the job ran */
		s->l.cleanup_status = JS_CLEANUP_NOT_STARTED;
	} else if (warm_execute(w, &arts, &narts) < 0) {
		warm_to_cold(w, s->cold_reason);
		sup_execute(s, &arts, &narts);
	}
	log_kv("info", "job_launch", "job", job_id, "launch", s->cold_reason ? "cold" : "prewarmed",
	       (char *)NULL);
	sup_finish(s, arts, narts);
	ws_free_artifacts(arts, narts);
	store_job_free(&s->job);
	warm_free(w);
	return 0;
}

/* ---- the holder's life */

/* "ID RUNNER_ID": 0, or -1 (the end of the socket, or anything else). */
static int take_job(char id[UUID_STR_LEN], char *rid, size_t ridlen)
{
	char buf[MSG_MAX + 1], idb[64], ridb[MSG_MAX];
	ssize_t n;

	do
		n = recv(HOLDER_FD, buf, MSG_MAX, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%63s %255s", idb, ridb) != 2 || !util_is_uuid(idb) ||
	    strlen(ridb) >= ridlen)
		return -1;
	memcpy(id, idb, UUID_STR_LEN);
	memcpy(rid, ridb, strlen(ridb) + 1);
	return 0;
}

void holder_main(const struct cfg *cfg, const char *conf, int slot)
{
	char config_path[CFG_PATH_MAX], err[512], slotnum[16], id[UUID_STR_LEN], rid[160];
	struct sup_warm *w;
	struct db *db;
	int rc, fresh;

	signal(SIGTERM, SIG_IGN); /* as any supervisor: a job outlives the dispatcher */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	snprintf(config_path, sizeof config_path, "%s", conf);
	snprintf(slotnum, sizeof slotnum, "%d", slot);
	log_init("sandbox-supervisor");
	title_set((const char *const[]){ "sandbox-runner", "--config", config_path, "--warm",
					 "--slot", slotnum, NULL });
	db = db_open(cfg, err, sizeof err);
	if (db == NULL) {
		log_kv("warn", "warm_db_connect", "slot", slotnum, "error", err, (char *)NULL);
		_exit(1);
	}
	w = supervise_warm_start(cfg, db, slot, err, sizeof err);
	if (w == NULL) {
		log_kv("warn", "warm_failed", "slot", slotnum, "error", err, (char *)NULL);
		_exit(1);
	}
	if (write(HOLDER_FD, "R", 1) != 1) {
		supervise_warm_abort(w);
		_exit(0);
	}
	for (;;) {
		struct pollfd p[2] = { { .fd = HOLDER_FD, .events = POLLIN },
				       { .fd = supervise_warm_fd(w), .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* a job first: a sandbox that died meanwhile makes it run cold, not wait */
		if (p[0].revents)
			break;
		if (p[1].revents) {
			log_kv("info", "warm_sandbox_ended", "slot", slotnum, "note",
			       "the idle sandbox exited: the slot is cleaned and given back",
			       (char *)NULL);
			supervise_warm_abort(w);
			_exit(0);
		}
	}
	if (take_job(id, rid, sizeof rid) < 0) {
		supervise_warm_abort(w); /* the dispatcher stopped or wants the slot */
		_exit(0);
	}
	title_set((const char *const[]){ "sandbox-runner", "--config", config_path,
					 "--supervise", id, "--slot", slotnum, "--runner-id",
					 rid, "--lock-fd", "4", NULL });
	if (write(HOLDER_FD, "A", 1) != 1) {
		/* the dispatcher is gone, but the job was claimed for us: run it */
	}
	close(HOLDER_FD);
	fresh = store_db_fresh(db);
	rc = supervise_warm_run(w, id, rid, fresh);
	close(LOCK_FD); /* the slot is free: wake an idle dispatcher (wake.h) */
	wake_send(cfg->runner_wake_socket);
	exit(rc);
}
