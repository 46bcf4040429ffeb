/* One job's supervisor, top to bottom: load the job, policy check (policy.c),
 * workspace and limits, start bwrap as the slot uid (launch.c; the profile's
 * arguments from profile.c, scfilter.c), then one poll loop
 * that pumps output (pump.c), reads bwrap's status (bwstatus.c) and enforces wall
 * clock, cgroup limits, heartbeat and cancellation, and stores the output as it
 * arrives (live output, below); collect artifacts, clean up, map the outcome
 * (outcome.c) and store the result (store.c), retrying transient faults (retry.c).
 *
 * Live output: from the job's 50th ms on, a stream whose oldest pending byte is 50 ms
 * old, or that has 64 KiB pending, is stored (store_append: one chunk of at most
 * JD_CHUNK_BYTES per transaction, with the stream's stored length and the job's and
 * key's stored bytes) and leaves memory. A job that ends within 50 ms stores its
 * output with its result only, as before. A failed flush keeps the bytes pending (at
 * most output_bytes per stream) and is retried every 500 ms; the result transaction
 * writes whatever is still pending, starting at what the database says is stored. */
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <limits.h>
#include <stdint.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "artname.h"
#include "bwstatus.h"
#include "cgroup.h"
#include "jobdata.h"
#include "launch.h"
#include "log.h"
#include "net.h"
#include "outcome.h"
#include "policy.h"
#include "profile.h"
#include "pump.h"
#include "retry.h"
#include "sandbox.h"
#include "scfilter.h"
#include "stubproto.h"
#include "store.h"
#include "strbuf.h"
#include "util.h"
#include "wake.h"
#include "workspace.h"

#define HEARTBEAT_MS 500   /* also the cancel check: cancellation lands within 1 s */
#define CG_CHECK_MS 50
#define START_BACKOFF_CAP_MS 1000 /* the reference's cap */
#define FLUSH_MS 50               /* age of the oldest pending byte that flushes a stream */
#define FLUSH_BYTES (64 * 1024)   /* pending bytes that flush a stream */
#define FLUSH_RETRY_MS 500        /* after a failed flush (the database is away) */

enum live { LIVE_UNKNOWN, LIVE_ON, LIVE_OFF };

struct sup {
	const struct cfg *cfg;
	struct db *db;
	struct job job;
	struct prof_named *prof;  /* the job's profile (use_profile) */
	int slot;
	uid_t uid;
	json_t *diag;
	struct launch l;               /* the slot and its sandbox (launch.h) */
	enum stop_reason reason;
	int status_known, code;
	struct pump_out out, err;
	enum live live;                /* LIVE_OFF: everything waits for the result */
	int live_tried;                /* a flush was attempted: the result reads what is stored */
	double flush_retry_at;         /* no flush before this (monotonic ms) */
	double t0;
	struct rusage ru;
	struct cg_usage usage; /* read before the cgroup is removed */
	const struct sup_probe *probe; /* benchmark hook, or NULL */
	int local;                     /* supervise_local: no database at all */
	struct cmdpol pol;             /* the operator's command policy (policy.h) */
	json_t *compile;               /* result.compile (compile_step), NULL: none */
	double compile_ms;             /* wall time the compile step used: the run gets the rest */
	struct cg_usage base;          /* a prewarmed slot's event counts before the job */
	const char *cold_reason;       /* why a job ran cold with prewarming on, NULL: none */
	int launch_noted;              /* the "launch:" diagnostic is there */
};

static void mark(const struct sup *s, const char *step)
{
	launch_mark(&s->l, step);
}

/* The launch's hook: the probe, when the benchmark set one. */
static void probe_mark(void *ctx, const char *step)
{
	const struct sup *s = ctx;

	if (s->probe)
		s->probe->mark(s->probe->ctx, step);
}

static void diag(struct sup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void diag(struct sup *s, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	json_array_append_new(s->diag, json_string(line));
}

/* Logs one attempt the way the reference does (launch.h). */
static void log_attempt(const struct sup *s, const char *step, int attempt, int max,
			const char *type, int retry)
{
	launch_log_attempt(&s->l, step, attempt, max, type, retry);
}

static int db_ready(struct sup *s)
{
	char err[256];

	if (s->db)
		return 0;
	s->db = db_open(s->cfg, err, sizeof err);
	if (s->db == NULL) {
		log_kv("warn", "db_connect", "job", s->job.id, "error", err, (char *)NULL);
		return -1;
	}
	return 0;
}

static void db_drop_if_lost(struct sup *s)
{
	if (s->db && db_gone(s->db)) {
		db_close(s->db);
		s->db = NULL;
	}
}

static void kill_job(struct sup *s)
{
	launch_kill(&s->l);
}

static void stop(struct sup *s, enum stop_reason why)
{
	if (s->reason == STOP_NONE)
		s->reason = why;
	kill_job(s);
}

/* The words of a failure at stage (launch_fail, which keeps the facts): "local-process
 * controls failed: <what>" (the reference's words), the detail in failure.error. The
 * limits' own diagnostic ("resource limits were not applied") comes with the outcome
 * (outcome.h). */
static void fail_words(void *ctx, enum job_stage stage, const char *what)
{
	if (stage != STAGE_INITIALIZE)
		diag(ctx, "%s: %s", js_outcome(JO_SETUP_FAILED)->diagnostic, what);
}

static int setup_fail(struct sup *s, enum job_stage stage, const char *what, const char *error)
{
	return launch_fail(&s->l, stage, what, error);
}

/* An injected fault (the test build only, fault.h): errno set, err says so. */
static int injected(const struct sup *s, const char *point, char *err, size_t errlen)
{
	return launch_injected(&s->l, point, err, errlen);
}

/* slirp4netns opens /dev/net/tun inside the sandbox's network namespace. */
static int tun_usable(void)
{
	struct stat st;

	return stat("/dev/net/tun", &st) == 0 && S_ISCHR(st.st_mode);
}

/* Re-checks what the API validated (the runner trusts no row blindly), then the
 * operator's command policy, then what this runner can offer. */
static const char *policy_check(const struct sup *s)
{
	static char why[160];
	const char *r;

	if (pol_paths(s->cfg, &s->job, why, sizeof why) != NULL)
		return why;
	if ((r = cmdpol_check(&s->pol, &s->job)) != NULL)
		return r;
	if (s->job.compile_argv) {
		/* the compile step's program (gcc) answers to the policy too */
		struct job c = s->job;
		c.command = NULL;
		c.argv = c.compile_argv;
		if ((r = cmdpol_check(&s->pol, &c)) != NULL)
			return r;
	}
	if (s->job.network && access(s->cfg->slirp4netns_path, X_OK) != 0)
		return "network access is not available on this runner (no slirp4netns)";
	if (s->job.network && access(IP_PATH, X_OK) != 0)
		return "network access is not available on this runner (no " IP_PATH ")";
	if (s->job.network && !tun_usable())
		return "network access is not available on this runner (no /dev/net/tun)";
	return NULL;
}

static int write_inputs(struct sup *s);

static int prepare_workspace(struct sup *s)
{
	if (launch_workspace(&s->l, s->job.limits[LIM_DISK_MB]) < 0)
		return -1;
	return write_inputs(s);
}

/* The job's files and cwd, by fd under the workspace. */
static int write_inputs(struct sup *s)
{
	char err[512];

	if (injected(s, "files", err, sizeof err))
		return setup_fail(s, STAGE_INPUT_FILES, "writing input files failed", err);
	for (size_t i = 0; i < s->job.nfiles; i++) {
		const struct job_file_in *f = &s->job.files[i];
		if (ws_write_file(s->l.wsfd, f->path, f->data, f->len, f->executable, s->l.uid, err,
				  sizeof err) < 0)
			return setup_fail(s, STAGE_INPUT_FILES, "writing input files failed", err);
	}
	if (*s->job.cwd && ws_mkdirs(s->l.wsfd, s->job.cwd, s->l.uid, err, sizeof err) < 0)
		return setup_fail(s, STAGE_INPUT_FILES, "creating cwd failed", err);
	return 0;
}

static void limits_diag(struct sup *s)
{
	diag(s, "limits: %s (memory, swap, pids, cpu accounting) and rlimits (CPU, FSIZE, "
		"NOFILE, CORE=0)", cg_describe(&s->l.cg));
}

static int prepare_limits(struct sup *s)
{
	long long mem = s->job.limits[LIM_MEMORY_MB] << 20;

	if (strcmp(s->cfg->runner_limits_mode, "rlimit-only") == 0) {
		diag(s, "limits: rlimit-only mode (operator setting): memory by RLIMIT_AS, pids "
			"by RLIMIT_NPROC, cpu by RLIMIT_CPU; no cgroup");
		return 0;
	}
	if (launch_cgroup(&s->l, mem, s->job.limits[LIM_PIDS], "resource limits") < 0)
		return -1;
	limits_diag(s);
	return 0;
}

static char **command_argv(const struct job *j)
{
	size_t n = j->argv ? json_array_size(j->argv) : 3;
	char **v = calloc(n + 1, sizeof *v);

	if (v == NULL)
		return NULL;
	if (j->argv == NULL) {
		v[0] = (char *)"/bin/sh";
		v[1] = (char *)"-c";
		v[2] = j->command;
		return v;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (char *)json_string_value(json_array_get(j->argv, i));
	return v;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Network jobs: bwrap is blocked before exec until slirp4netns has configured tap0
 * in the sandbox's network namespace (launch_net_setup). */
static int net_setup(struct sup *s, struct launch_fds *f)
{
	if (launch_net_setup(&s->l, &f->status[0], &f->block[1]) < 0)
		return -1;
	diag(s, "network: slirp4netns user-mode NAT (unprivileged, slot uid); host, private "
		"and link-local addresses unreachable");
	return 0;
}

/* The profile the job named, as this host defines it (runner_profiles_dir), and its
 * digest stored with the job in place of the default's the claim wrote. */
static int use_profile(struct sup *s, char *err, size_t errlen)
{
	const char *name = s->job.profile ? s->job.profile : PROF_DEFAULT;
	char digest[PROFILE_DIGEST_LEN], msg[160];

	if (s->prof != NULL)
		return 0; /* loaded for the compile step */
	s->prof = malloc(sizeof *s->prof);
	if (s->prof == NULL || prof_load(s->cfg, name, s->prof, err, errlen) < 0 ||
	    prof_digest_tables(s->cfg, &s->prof->t, digest) < 0) {
		if (s->prof == NULL)
			snprintf(err, errlen, "out of memory");
		snprintf(msg, sizeof msg, "sandbox profile '%.64s' is not available on this "
			 "runner host", name);
		return setup_fail(s, STAGE_COMMAND_START, msg, err);
	}
	if (s->db && strcmp(name, PROF_DEFAULT) != 0 &&
	    store_set_profile(s->db, s->job.id, s->l.runner_id, digest) < 0)
		return setup_fail(s, STAGE_COMMAND_START, "sandbox setup failed", db_error(s->db));
	return 0;
}

static void placement_diag(struct sup *s)
{
	if (s->l.cg_on)
		diag(s, "limits: cgroup placement %s", strcmp(cg_placement(), "clone3") == 0
			? "clone3 (born in the slot's cgroup, CLONE_INTO_CGROUP)"
			: "procs (the child wrote its pid to cgroup.procs before exec)");
}

static int start(struct sup *s, struct launch_fds *f)
{
	char err[512];
	char **cmd = command_argv(&s->job);
	struct sb_spawn sp;

	launch_fds_init(f);
	if (cmd == NULL || launch_pipes(f, s->job.network) < 0) {
		free(cmd);
		return setup_fail(s, STAGE_COMMAND_START, "sandbox setup failed", strerror(errno));
	}
	mark(s, "pipes");
	f->sc = sc_build_fd(err, sizeof err);
	mark(s, "sc_build_fd");
	if (f->sc < 0) {
		free(cmd);
		return setup_fail(s, STAGE_COMMAND_START, "seccomp filter could not be built", err);
	}
	if (use_profile(s, err, sizeof err) < 0) {
		free(cmd);
		return -1;
	}
	const struct prof_job pj = { s->l.ws_path, s->job.cwd, s->cfg->runner_tmp_mb, s->job.env,
				     SB_FD_SECCOMP, SB_FD_STATUS,
				     s->job.network ? SB_FD_BLOCK : -1 };
	f->args = prof_job_args(s->cfg, &s->prof->t, &pj, err, sizeof err);
	if (f->args < 0) {
		free(cmd);
		return setup_fail(s, STAGE_COMMAND_START, "sandbox setup failed", err);
	}
	mark(s, "prof_bwrap_args");
	launch_sb(&s->l, f, s->job.limits, cmd, &sp);
	s->l.pid = launch_spawn(&s->l, &sp, 1, err, sizeof err);
	free(cmd);
	if (s->l.pid < 0)
		return -1;
	mark(s, "sb_spawn");
	placement_diag(s);
	if (s->cfg->runner_warm_sandboxes > 0 && !s->launch_noted) {
		/* prewarming is on: say why this one was not */
		diag(s, "launch: cold (%s)", s->cold_reason ? s->cold_reason
							     : "no prewarmed sandbox was ready");
		s->launch_noted = 1;
	}
	launch_keep_parent_ends(f);
	if (s->job.network && net_setup(s, f) < 0) {
		kill_job(s);
		return -1;
	}
	return 0;
}

static void heartbeat(struct sup *s)
{
	int cancel = 0, rc;

	if (s->local)
		return;
	if (db_ready(s) < 0)
		return; /* the job keeps running; the result waits for the DB */
	rc = store_heartbeat(s->db, s->job.id, s->l.runner_id, s->cfg->runner_lease_seconds,
			     &cancel);
	if (rc < 0) {
		log_attempt(s, "heartbeat", 1, 1, "db", 1);
		db_drop_if_lost(s);
		return;
	}
	if (cancel)
		stop(s, STOP_CANCEL);
	else if (rc == 1) /* marked lost or taken over: nobody wants this result */
		stop(s, STOP_CANCEL);
}

/* The cgroup's usage; a prewarmed slot's OOM kills and refused forks before the job
 * (none, in practice) are not the job's. */
static void read_usage(struct sup *s, struct cg_usage *u)
{
	cg_read(&s->l.cg, u);
	if (u->cpu_ns >= 0 && s->base.cpu_ns > 0)
		u->cpu_ns = u->cpu_ns > s->base.cpu_ns ? u->cpu_ns - s->base.cpu_ns : 0;
	if (u->oom_kills > 0 && s->base.oom_kills > 0)
		u->oom_kills -= s->base.oom_kills;
	if (u->pids_denied > 0 && s->base.pids_denied > 0)
		u->pids_denied -= s->base.pids_denied;
}

static void check_cgroup(struct sup *s)
{
	struct cg_usage u;

	if (!s->l.cg_on)
		return;
	read_usage(s, &u);
	if (u.pids_denied > 0)
		stop(s, STOP_PIDS);
	else if (u.cpu_ns > s->job.limits[LIM_CPU_SECONDS] * 1000000000LL)
		stop(s, STOP_CPU);
	else if (u.oom_kills > 0)
		stop(s, STOP_MEMORY);
}

/* Waits up to ms for one of the job's pipes (or bwrap's exit, through pidfd). */
static void wait_io(const struct launch_fds *f, int pidfd, int ms)
{
	struct pollfd p[5];
	int n = 0;

	if (f->out[0] >= 0)
		p[n++] = (struct pollfd){ .fd = f->out[0], .events = POLLIN };
	if (f->err[0] >= 0)
		p[n++] = (struct pollfd){ .fd = f->err[0], .events = POLLIN };
	if (f->status[0] >= 0)
		p[n++] = (struct pollfd){ .fd = f->status[0], .events = POLLIN };
	if (f->in[1] >= 0)
		p[n++] = (struct pollfd){ .fd = f->in[1], .events = POLLOUT };
	if (pidfd >= 0)
		p[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	poll(p, (nfds_t)n, ms);
}

/* Moves what is ready: output in (past the cap the job is stopped: output_limit),
 * bwrap's status in, stdin out. */
static void pump_io(struct sup *s, struct launch_fds *f, size_t *in_off)
{
	if (f->out[0] >= 0 && pump_drain(&f->out[0], &s->out))
		stop(s, STOP_OUTPUT);
	if (f->err[0] >= 0 && pump_drain(&f->err[0], &s->err))
		stop(s, STOP_OUTPUT);
	if (f->status[0] >= 0)
		launch_read_status(&s->l, &f->status[0]);
	if (f->in[1] >= 0)
		pump_feed(&f->in[1], s->job.stdin_buf, s->job.stdin_len, in_off);
}

static int flush_due(const struct pump_out *o, double now)
{
	return o->len >= FLUSH_BYTES || (o->len > 0 && now - o->since >= FLUSH_MS);
}

/* Stores what o holds, chunk by chunk: 0, or -1 (the rest stays pending). */
static int flush_stream(struct sup *s, int stream, struct pump_out *o)
{
	while (o->len > 0) {
		size_t n = o->len < JD_CHUNK_BYTES ? o->len : JD_CHUNK_BYTES;
		long long base = (long long)o->base, stored;
		int rc;

		s->live_tried = 1;
		rc = store_append(s->db, &s->job, s->l.runner_id, stream, base, o->data, n, &stored);
		if (rc == 0 || (rc == 2 && stored > base && stored <= base + (long long)o->len)) {
			/* rc 2: an earlier chunk did commit although we never heard so */
			pump_consume(o, (size_t)(stored - base));
			continue;
		}
		if (rc == 1) { /* marked lost or taken over: nobody wants this output */
			s->live = LIVE_OFF;
			stop(s, STOP_CANCEL);
		} else if (rc == 2) {
			/* only this supervisor appends: the result settles what is stored */
			log_kv("error", "live_output_mismatch", "job", s->job.id, (char *)NULL);
			s->live = LIVE_OFF;
		} else {
			log_attempt(s, "output_flush", 1, 1, "db", 1);
			db_drop_if_lost(s);
		}
		return -1;
	}
	return 0;
}

/* Live output only where the server takes a whole chunk (the dispatcher checked at
 * its start; max_allowed_packet may have shrunk since): else everything goes with the
 * result, whose own check names the cause. 0, or -1 (ask again later). */
static int live_check(struct sup *s)
{
	long long have = store_max_packet(s->db);

	if (have < 0) {
		db_drop_if_lost(s);
		return -1;
	}
	s->live = have >= JD_CHUNK_BYTES + JD_PACKET_OVERHEAD ? LIVE_ON : LIVE_OFF;
	if (s->live == LIVE_OFF)
		log_kv("warn", "live_output_off", "job", s->job.id, "reason",
		       "max_allowed_packet below one chunk", (char *)NULL);
	return 0;
}

/* Stores the streams that are due (never during the job's first FLUSH_MS). */
static void flush_live(struct sup *s, double now)
{
	int out, err;

	if (s->local || s->live == LIVE_OFF || now - s->t0 < FLUSH_MS || now < s->flush_retry_at)
		return;
	out = flush_due(&s->out, now);
	err = flush_due(&s->err, now);
	if (!out && !err)
		return;
	if (db_ready(s) < 0 || (s->live == LIVE_UNKNOWN && live_check(s) < 0) ||
	    (out && s->live == LIVE_ON && flush_stream(s, JD_STDOUT, &s->out) < 0) ||
	    (err && s->live == LIVE_ON && flush_stream(s, JD_STDERR, &s->err) < 0))
		s->flush_retry_at = util_mono_ms() + FLUSH_RETRY_MS;
}

/* How long the loop may sleep before a pending stream is due: at most cap ms. */
static int flush_wait_ms(const struct sup *s, double now, int cap)
{
	const struct pump_out *o[2] = { &s->out, &s->err };
	double ms = cap;

	if (s->local || s->live == LIVE_OFF)
		return cap;
	for (int i = 0; i < 2; i++) {
		double at = o[i]->since + FLUSH_MS;
		if (o[i]->len == 0)
			continue;
		if (at < s->t0 + FLUSH_MS)
			at = s->t0 + FLUSH_MS;
		if (at < s->flush_retry_at)
			at = s->flush_retry_at;
		if (at - now < ms)
			ms = at - now;
	}
	return ms <= 0 ? 0 : (int)ms + 1;
}

static void settle_status(struct sup *s, int wst);

/* Until bwrap has exited and the output pipes are drained: wall clock, cgroup
 * limits, heartbeat (and cancellation). */
static void run_loop(struct sup *s, struct launch_fds *f)
{
	/* compile and run share one wall_seconds budget */
	double deadline = s->t0 + (double)s->job.limits[LIM_WALL_SECONDS] * 1e3 - s->compile_ms;
	double next_hb = util_mono_ms() + HEARTBEAT_MS, next_cg = 0;
	size_t in_off = 0;
	int exited = 0, wst = 0;
	/* bwrap's exit wakes poll at once (a pidfd), instead of at the next tick. */
	int pidfd = (int)syscall(SYS_pidfd_open, s->l.pid, 0);

	if (s->job.stdin_len == 0)
		close_fd(&f->in[1]);
	while (!exited || f->out[0] >= 0 || f->err[0] >= 0) {
		double now;

		wait_io(f, exited ? -1 : pidfd,
			exited ? 20 : flush_wait_ms(s, util_mono_ms(), CG_CHECK_MS));
		pump_io(s, f, &in_off);
		if (!exited && wait4(s->l.pid, &wst, WNOHANG, &s->ru) == s->l.pid) {
			exited = 1;
			mark(s, "run");
			/* The pid namespace is gone with bwrap; anything that escaped
			 * it into the cgroup or the uid goes now. */
			kill_job(s);
			mark(s, "kill_after_exit");
		}
		now = util_mono_ms();
		if (!exited && now >= deadline)
			stop(s, STOP_WALL);
		if (!exited && now >= next_cg) {
			check_cgroup(s);
			next_cg = now + CG_CHECK_MS;
		}
		if (!exited)
			flush_live(s, now);
		if (!exited && now >= next_hb) {
			heartbeat(s);
			next_hb = util_mono_ms() + HEARTBEAT_MS;
		}
		if (exited && now >= deadline + 5000)
			break; /* pipes held open by something unkillable: give up on them */
		if (exited && pidfd >= 0)
			close_fd(&pidfd);
	}
	close_fd(&pidfd);
	mark(s, "drain_after_exit");
	if (f->status[0] >= 0)
		launch_read_status(&s->l, &f->status[0]);
	settle_status(s, wst);
}

/* The command's exit status: bwrap's report, else bwrap's own exit once it had
 * started the command; without a child-pid, bwrap failed to start it. */
static void settle_status(struct sup *s, int wst)
{
	if (s->l.bst.have_exit) {
		s->code = s->l.bst.exit_code;
		s->status_known = 1;
	} else if (WIFEXITED(wst) && s->l.bst.have_pid) {
		s->code = WEXITSTATUS(wst);
		s->status_known = 1;
	}
	if (!s->l.bst.have_pid && s->reason == STOP_NONE) {
		/* bwrap failed before starting the command: its stderr says why */
		char raw[200], msg[400];
		snprintf(raw, sizeof raw, "%.*s", (int)(s->err.head_len < 190 ? s->err.head_len : 190),
			 (const char *)s->err.head);
		raw[strcspn(raw, "\n")] = '\0';
		/* bwrap's words, but they may quote a request's path (cwd): escaped */
		an_escape(msg, sizeof msg, raw);
		setup_fail(s, STAGE_COMMAND_START, "sandbox start failed",
			   msg[0] ? msg : "bwrap exited before starting the command");
	}
}

static void collect(struct sup *s, struct artifact **arts, size_t *n)
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
		diag(s, "artifacts could not be collected");
	} else {
		char *save = NULL;
		for (char *line = strtok_r(notes.buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			diag(s, "%s", line);
	}
	sb_release(&notes);
}

static void cleanup(struct sup *s)
{
	launch_cleanup(&s->l);
}

/* The result must not be lost to a DB outage: retry, capped backoff, until it is
 * stored or the job turns out to be no longer ours. */
static void store_result(struct sup *s, struct job_result *r)
{
	for (int attempt = 1;; attempt++) {
		int rc = db_ready(s) < 0 ? -1 : store_finish(s->db, s->job.id, s->l.runner_id, r);
		if (rc == 0)
			return;
		if (rc == 1) {
			log_kv("warn", "result_discarded", "job", s->job.id, "reason",
			       "job no longer owned by this runner", (char *)NULL);
			return;
		}
		log_attempt(s, "store_result", attempt, 0, "db", 1);
		db_drop_if_lost(s);
		util_sleep_ms(retry_delay_ms(100, 10000, attempt));
	}
}

/* The job's status from what happened; appends the outcome's diagnostic. */
static void outcome_for(struct sup *s, struct outcome *o)
{
	struct outcome_in in = { s->reason, s->status_known, s->code, s->usage.oom_kills,
				 s->usage.pids_denied, s->l.stage,
				 s->l.cleanup_error[0] != '\0' };

	outcome_map(&in, o);
	for (size_t i = 0; i < o->ndiag; i++)
		diag(s, "%s", o->diagnostics[i]);
}

static void finish(struct sup *s, struct artifact *arts, size_t narts)
{
	struct outcome o;
	struct cg_usage u = s->usage;
	struct job_result r;
	json_t *fail;
	char ec[16];

	outcome_for(s, &o);
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

static int load_job(struct sup *s, const char *id)
{
	for (int attempt = 1; attempt <= 10; attempt++) {
		if (db_ready(s) == 0 && store_load(s->db, id, &s->job) == 0)
			return 0;
		store_job_free(&s->job);
		snprintf(s->job.id, sizeof s->job.id, "%s", id);
		log_attempt(s, "load_job", attempt, 10, "db", attempt < 10);
		if (s->db)
			db_drop_if_lost(s);
		util_sleep_ms(retry_delay_ms(200, 5000, attempt));
	}
	return -1;
}

static void sup_init(struct sup *s, const struct cfg *cfg, int slot)
{
	memset(s, 0, sizeof *s);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	s->cfg = cfg;
	launch_init(&s->l, cfg, LAUNCH_JOB, slot);
	s->l.id = s->job.id;
	s->l.on_fail = fail_words, s->l.ctx = s;
	s->l.mark = probe_mark, s->l.mark_ctx = s;
	s->diag = json_array();
	s->usage = (struct cg_usage){ -1, -1, -1, -1 };
}

static void run(struct sup *s, struct launch_fds *f, struct artifact **arts, size_t *narts)
{
	s->t0 = s->l.t_spawn > 0 ? s->l.t_spawn : util_mono_ms(); /* a prewarmed sandbox: now */
	run_loop(s, f);
	if (s->l.cg_on)
		read_usage(s, &s->usage);
	mark(s, "cg_read");
	collect(s, arts, narts);
	mark(s, "artifacts");
}

#define COMPILE_OUTPUT_MAX 65536 /* of each stream, in result.compile */

static void put_stream(json_t *o, const char *name, const struct pump_out *p)
{
	size_t n = p->len < COMPILE_OUTPUT_MAX ? p->len : COMPILE_OUTPUT_MAX;
	char key[32];

	if (util_utf8_valid(p->data, n) && memchr(p->data, '\0', n) == NULL) {
		json_object_set_new(o, name, json_stringn(n ? (const char *)p->data : "", n));
	} else {
		char *b = util_b64_encode(p->data, n);
		snprintf(key, sizeof key, "%s_base64", name);
		json_object_set_new(o, key, json_string(b ? b : ""));
		free(b);
	}
	snprintf(key, sizeof key, "%s_truncated", name);
	json_object_set_new(o, key, json_boolean(p->trunc || p->len > n));
}

static void reset_stream(struct pump_out *p, long long limit)
{
	pump_free(p);
	memset(p, 0, sizeof *p);
	p->limit = (size_t)limit;
}

/* A compiled runtime's compile step (schema 008): the compile argv, in the same
 * workspace, profile, cgroup and limits as the run, without stdin, network or live
 * output; compile and run share one wall_seconds budget (the run gets what the
 * compile left, s->compile_ms). Its exit status and output become result.compile;
 * 0 when the run may follow, -1 when the job ends with the compile's outcome
 * (a non-zero exit is `failed` with that code, as Piston and Judge0 report it). */
static int compile_step(struct sup *s)
{
	json_t *run_argv = s->job.argv;
	size_t stdin_len = s->job.stdin_len;
	int network = s->job.network, rc;
	enum live live = s->live;
	struct outcome o;
	struct launch_fds f;

	if (s->job.compile_argv == NULL)
		return 0;
	s->job.argv = s->job.compile_argv;
	s->job.stdin_len = 0, s->job.network = 0, s->live = LIVE_OFF;
	rc = start(s, &f);
	if (rc == 0) {
		s->t0 = s->l.t_spawn;
		run_loop(s, &f);
		s->compile_ms = util_mono_ms() - s->t0;
	}
	launch_fds_close(&f);
	s->job.argv = run_argv;
	s->job.stdin_len = stdin_len, s->job.network = network, s->live = live;
	if (rc < 0 || s->l.stage != STAGE_NONE)
		return -1; /* the service failed: recorded as for any start */
	outcome_map(&(struct outcome_in){ s->reason, s->status_known, s->code, 0, 0, STAGE_NONE, 0 },
		    &o);
	s->compile = json_pack("{s:i, s:s}", "exit_code", o.exit_code, "status", js_name(o.state));
	if (s->compile) {
		put_stream(s->compile, "stdout", &s->out);
		put_stream(s->compile, "stderr", &s->err);
	}
	reset_stream(&s->out, s->job.limits[LIM_OUTPUT_BYTES]);
	reset_stream(&s->err, s->job.limits[LIM_OUTPUT_BYTES]);
	if (s->reason == STOP_WALL) {
		diag(s, "compile step used all of wall_seconds (%lld s): the program was not run",
		     s->job.limits[LIM_WALL_SECONDS]);
		return -1;
	}
	if (o.state != JS_SUCCEEDED) {
		diag(s, "compile step ended %s with exit code %d: the program was not run",
		     js_name(o.state), o.exit_code);
		return -1;
	}
	bws_release(&s->l.bst);
	bws_init(&s->l.bst);
	s->status_known = 0, s->code = 0;
	memset(&s->ru, 0, sizeof s->ru);
	return 0;
}

/* The operator's command policy and the runner's re-check of the job: 0 go on, -1
 * the job ends here (recorded). */
static int gate(struct sup *s)
{
	const char *why;
	char err[256];

	/* read per job (a fresh process): the runner refused to start with an unsafe
	 * one, so failing here means it was changed since */
	if (s->cfg->runner_command_policy[0] &&
	    cmdpol_load(s->cfg->runner_command_policy, &s->pol, err, sizeof err) < 0) {
		setup_fail(s, STAGE_CREATE, "command policy could not be read", err);
		return -1;
	}
	if ((why = policy_check(s)) != NULL) {
		/* refused before anything exists: no workspace, no bwrap, no cleanup */
		diag(s, "%s: %s", js_outcome(JO_BLOCKED)->diagnostic, why);
		s->l.stage = STAGE_POLICY;
		return -1;
	}
	return 0;
}

/* Policy check, workspace, limits, sandbox, run, artifacts, cleanup. */
static void execute(struct sup *s, struct artifact **arts, size_t *narts)
{
	struct launch_fds f;

	memset(&f, -1, sizeof f);
	s->out.limit = s->err.limit = (size_t)s->job.limits[LIM_OUTPUT_BYTES];
	if (gate(s) < 0)
		return;
	if (prepare_workspace(s) == 0) {
		mark(s, "ws_create");
		if (prepare_limits(s) == 0) {
			mark(s, "cg_setup");
			if (compile_step(s) == 0 && start(s, &f) == 0)
				run(s, &f, arts, narts);
		}
	}
	launch_fds_close(&f);
	mark(s, "close_fds");
	cleanup(s);
}

static void sup_free(struct sup *s)
{
	pump_free(&s->out);
	pump_free(&s->err);
	launch_release(&s->l);
	cmdpol_free(&s->pol);
	json_decref(s->compile);
	json_decref(s->diag);
	free(s->prof);
	db_close(s->db);
}

/* ---- prewarmed sandboxes (warm.h)
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
	close_fd(&w->ctl);
	close_fd(&w->pidfd);
	cleanup(s);
	s->l.pid = 0;
	s->l.cg_on = 0;
	s->l.ws_path[0] = '\0';
	s->l.cleanup_status = JS_CLEANUP_NOT_STARTED;
	s->l.cleanup_error[0] = '\0';
	memset(&s->base, 0, sizeof s->base);
	bws_release(&s->l.bst);
	bws_init(&s->l.bst);
	reset_stream(&s->out, s->job.limits[LIM_OUTPUT_BYTES]);
	reset_stream(&s->err, s->job.limits[LIM_OUTPUT_BYTES]);
}

static void warm_free(struct sup_warm *w)
{
	launch_fds_close(&w->f);
	close_fd(&w->ctl);
	close_fd(&w->pidfd);
	sup_free(&w->s);
	free(w);
}

void supervise_warm_abort(struct sup_warm *w)
{
	if (w == NULL)
		return;
	warm_teardown(w);
	warm_free(w);
}

int supervise_warm_fd(const struct sup_warm *w)
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

struct sup_warm *supervise_warm_start(const struct cfg *cfg, struct db *db, int slot,
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
	if (prepare_workspace(s) < 0 || prepare_limits(s) < 0) {
		snprintf(err, errlen, "%s", s->l.failure_error);
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
	char **cmd = command_argv(&s->job);
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
		if ((cmd = command_argv(&s->job)) != NULL)
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
		setup_fail(s, STAGE_COMMAND_START, what, detail);
		break;
	default:
		setup_fail(s, STAGE_COMMAND_START, "sandbox start failed",
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
		setup_fail(s, STAGE_CREATE, "workspace setup failed", err);
		goto out;
	}
	if (write_inputs(s) < 0)
		goto out;
	mark(s, "ws_create");
	if (cg_set_limits(&s->l.cg, s->job.limits[LIM_MEMORY_MB] << 20, s->job.limits[LIM_PIDS] + 2,
			  err, sizeof err) < 0) {
		setup_fail(s, STAGE_INITIALIZE, "resource limits", err);
		goto out;
	}
	limits_diag(s);
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
	mark(s, "sb_spawn");
	placement_diag(s);
	diag(s, "launch: prewarmed sandbox");
	s->launch_noted = 1;
	run(s, &w->f, arts, narts);
	warm_answer(w);
out:
	launch_fds_close(&w->f);
	mark(s, "close_fds");
	cleanup(s);
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

int supervise_warm_run(struct sup_warm *w, const char *job_id, const char *runner_id,
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
	if (load_job(s, job_id) < 0) {
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
		execute(s, &arts, &narts);
	} else if (gate(s) < 0) {
		warm_teardown(w); /* refused: as cold, nothing of the job ran */
		s->l.cleanup_status = JS_CLEANUP_NOT_STARTED;
	} else if (warm_execute(w, &arts, &narts) < 0) {
		warm_to_cold(w, s->cold_reason);
		execute(s, &arts, &narts);
	}
	log_kv("info", "job_launch", "job", job_id, "launch", s->cold_reason ? "cold" : "prewarmed",
	       (char *)NULL);
	finish(s, arts, narts);
	ws_free_artifacts(arts, narts);
	store_job_free(&s->job);
	warm_free(w);
	return 0;
}

int supervise_main(const struct cfg *cfg, const char *job_id, int slot, const char *runner_id)
{
	return supervise_run(cfg, NULL, job_id, slot, runner_id);
}

int supervise_run(const struct cfg *cfg, struct db *db, const char *job_id, int slot,
		  const char *runner_id)
{
	struct sup s;
	struct artifact *arts = NULL;
	size_t narts = 0;

	sup_init(&s, cfg, slot);
	s.db = db;
	s.l.runner_id = runner_id;
	snprintf(s.job.id, sizeof s.job.id, "%s", job_id);
	if (load_job(&s, job_id) < 0) {
		log_kv("error", "job_load_failed", "job", job_id, (char *)NULL);
		sup_free(&s);
		return 1; /* the lease expires and the job ends as lost */
	}
	log_kv("info", "job_started", "job", job_id, "runner", runner_id, (char *)NULL);
	execute(&s, &arts, &narts);
	finish(&s, arts, narts);
	ws_free_artifacts(arts, narts);
	store_job_free(&s.job);
	sup_free(&s);
	return 0;
}

/* supervise_local, and a copy of stdout (or of stderr when stdout is empty) in out. */
static int local_run(const struct cfg *cfg, struct job *job, int slot,
		     const struct sup_probe *probe, enum job_state *state, int *exit_code,
		     unsigned char *out, size_t *outlen)
{
	struct sup s;
	struct artifact *arts = NULL;
	size_t narts = 0;
	struct outcome o;

	sup_init(&s, cfg, slot);
	s.local = 1;
	s.probe = probe;
	s.job = *job; /* borrowed: the caller frees it */
	execute(&s, &arts, &narts);
	ws_free_artifacts(arts, narts);
	outcome_for(&s, &o);
	*state = o.state;
	*exit_code = o.exit_code;
	if (out != NULL) {
		const struct pump_out *p = s.out.len ? &s.out : &s.err;
		size_t n = p->len < *outlen ? p->len : *outlen;
		if (n)
			memcpy(out, p->data, n);
		*outlen = n;
	}
	sup_free(&s);
	return s.l.pid > 0 ? 0 : -1;
}

int supervise_local(const struct cfg *cfg, struct job *job, int slot,
		    const struct sup_probe *probe, enum job_state *state, int *exit_code)
{
	return local_run(cfg, job, slot, probe, state, exit_code, NULL, NULL);
}

int supervise_capture(const struct cfg *cfg, struct job *job, int slot, enum job_state *state,
		      int *exit_code, unsigned char *out, size_t *outlen)
{
	return local_run(cfg, job, slot, NULL, state, exit_code, out, outlen);
}
