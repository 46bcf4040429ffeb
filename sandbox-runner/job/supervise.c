/* One job's supervisor, top to bottom: load the job, policy check (policy.c),
 * workspace and limits, start bwrap as the slot uid (launch.c; the profile's
 * arguments from profile.c, scfilter.c), then one poll loop that pumps output
 * (pump.c), reads bwrap's status (bwstatus.c) and enforces wall clock, cgroup
 * limits, heartbeat and cancellation, and stores the output as it arrives
 * (liveout.c); the compile step of a compiled runtime; then artifacts, clean up,
 * outcome and result (finish.c). The entry points: a launched or pre-forked
 * supervisor (supervise_run), a job without the database (supervise_local); the
 * prewarm holder's are in holder.c. */
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
#include "store.h"
#include "strbuf.h"
#include "supint.h"
#include "util.h"
#include "wake.h"
#include "workspace.h"

#define HEARTBEAT_MS 500   /* also the cancel check: cancellation lands within 1 s */
#define CG_CHECK_MS 50
void sup_mark(const struct sup *s, const char *step)
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

void sup_diag(struct sup *s, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	json_array_append_new(s->diag, json_string(line));
}

/* Logs one attempt the way the reference does (launch.h). */
void sup_log_attempt(const struct sup *s, const char *step, int attempt, int max,
		     const char *type, int retry)
{
	launch_log_attempt(&s->l, step, attempt, max, type, retry);
}

int sup_db_ready(struct sup *s)
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

void sup_db_drop_if_lost(struct sup *s)
{
	if (s->db && db_gone(s->db)) {
		db_close(s->db);
		s->db = NULL;
	}
}

void sup_stop(struct sup *s, enum stop_reason why)
{
	if (s->reason == STOP_NONE)
		s->reason = why;
	launch_kill(&s->l);
}

/* The words of a failure at stage (launch_fail, which keeps the facts): "local-process
 * controls failed: <what>" (the reference's words), the detail in failure.error. The
 * limits' own diagnostic ("resource limits were not applied") comes with the outcome
 * (outcome.h). */
static void fail_words(void *ctx, enum job_stage stage, const char *what)
{
	if (stage != STAGE_INITIALIZE)
		sup_diag(ctx, "%s: %s", js_outcome(JO_SETUP_FAILED)->diagnostic, what);
}

int sup_setup_fail(struct sup *s, enum job_stage stage, const char *what, const char *error)
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

int sup_prepare_workspace(struct sup *s)
{
	if (launch_workspace(&s->l, s->job.limits[LIM_DISK_MB]) < 0)
		return -1;
	return sup_write_inputs(s);
}

/* The job's files and cwd, by fd under the workspace. */
int sup_write_inputs(struct sup *s)
{
	char err[512];

	if (injected(s, "files", err, sizeof err))
		return sup_setup_fail(s, STAGE_INPUT_FILES, "writing input files failed", err);
	for (size_t i = 0; i < s->job.nfiles; i++) {
		const struct job_file_in *f = &s->job.files[i];
		if (ws_write_file(s->l.wsfd, f->path, f->data, f->len, f->executable, s->l.uid, err,
				  sizeof err) < 0)
			return sup_setup_fail(s, STAGE_INPUT_FILES, "writing input files failed", err);
	}
	if (*s->job.cwd && ws_mkdirs(s->l.wsfd, s->job.cwd, s->l.uid, err, sizeof err) < 0)
		return sup_setup_fail(s, STAGE_INPUT_FILES, "creating cwd failed", err);
	return 0;
}

void sup_limits_diag(struct sup *s)
{
	sup_diag(s, "limits: %s (memory, swap, pids, cpu accounting) and rlimits (CPU, FSIZE, "
		"NOFILE, CORE=0)", cg_describe(&s->l.cg));
}

int sup_prepare_limits(struct sup *s)
{
	long long mem = s->job.limits[LIM_MEMORY_MB] << 20;

	if (strcmp(s->cfg->runner_limits_mode, "rlimit-only") == 0) {
		sup_diag(s, "limits: rlimit-only mode (operator setting): memory by RLIMIT_AS, pids "
			"by RLIMIT_NPROC, cpu by RLIMIT_CPU; no cgroup");
		return 0;
	}
	if (launch_cgroup(&s->l, mem, s->job.limits[LIM_PIDS], "resource limits") < 0)
		return -1;
	sup_limits_diag(s);
	return 0;
}

char **sup_command_argv(const struct job *j)
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

/* Network jobs: bwrap is blocked before exec until slirp4netns has configured tap0
 * in the sandbox's network namespace (launch_net_setup). */
static int net_setup(struct sup *s, struct launch_fds *f)
{
	if (launch_net_setup(&s->l, &f->status[0], &f->block[1]) < 0)
		return -1;
	sup_diag(s, "network: slirp4netns user-mode NAT (unprivileged, slot uid); host, private "
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
		return sup_setup_fail(s, STAGE_COMMAND_START, msg, err);
	}
	if (s->db && strcmp(name, PROF_DEFAULT) != 0 &&
	    store_set_profile(s->db, s->job.id, s->l.runner_id, digest) < 0)
		return sup_setup_fail(s, STAGE_COMMAND_START, "sandbox setup failed", db_error(s->db));
	return 0;
}

void sup_placement_diag(struct sup *s)
{
	if (s->l.cg_on)
		sup_diag(s, "limits: cgroup placement %s", strcmp(cg_placement(), "clone3") == 0
			? "clone3 (born in the slot's cgroup, CLONE_INTO_CGROUP)"
			: "procs (the child wrote its pid to cgroup.procs before exec)");
}

static int start(struct sup *s, struct launch_fds *f)
{
	char err[512];
	char **cmd = sup_command_argv(&s->job);
	struct sb_spawn sp;

	launch_fds_init(f);
	if (cmd == NULL || launch_pipes(f, s->job.network) < 0) {
		free(cmd);
		return sup_setup_fail(s, STAGE_COMMAND_START, "sandbox setup failed", strerror(errno));
	}
	sup_mark(s, "pipes");
	f->sc = sc_build_fd(err, sizeof err);
	sup_mark(s, "sc_build_fd");
	if (f->sc < 0) {
		free(cmd);
		return sup_setup_fail(s, STAGE_COMMAND_START, "seccomp filter could not be built", err);
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
		return sup_setup_fail(s, STAGE_COMMAND_START, "sandbox setup failed", err);
	}
	sup_mark(s, "prof_bwrap_args");
	launch_sb(&s->l, f, s->job.limits, cmd, &sp);
	s->l.pid = launch_spawn(&s->l, &sp, 1, err, sizeof err);
	free(cmd);
	if (s->l.pid < 0)
		return -1;
	sup_mark(s, "sb_spawn");
	sup_placement_diag(s);
	if (s->cfg->runner_warm_sandboxes > 0 && !s->launch_noted) {
		/* prewarming is on: say why this one was not */
		sup_diag(s, "launch: cold (%s)", s->cold_reason ? s->cold_reason
							     : "no prewarmed sandbox was ready");
		s->launch_noted = 1;
	}
	launch_keep_parent_ends(f);
	if (s->job.network && net_setup(s, f) < 0) {
		launch_kill(&s->l);
		return -1;
	}
	return 0;
}

static void heartbeat(struct sup *s)
{
	int cancel = 0, rc;

	if (s->local)
		return;
	if (sup_db_ready(s) < 0)
		return; /* the job keeps running; the result waits for the DB */
	rc = store_heartbeat(s->db, s->job.id, s->l.runner_id, s->cfg->runner_lease_seconds,
			     &cancel);
	if (rc < 0) {
		sup_log_attempt(s, "heartbeat", 1, 1, "db", 1);
		sup_db_drop_if_lost(s);
		return;
	}
	if (cancel)
		sup_stop(s, STOP_CANCEL);
	else if (rc == 1) /* marked lost or taken over: nobody wants this result */
		sup_stop(s, STOP_CANCEL);
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
		sup_stop(s, STOP_PIDS);
	else if (u.cpu_ns > s->job.limits[LIM_CPU_SECONDS] * 1000000000LL)
		sup_stop(s, STOP_CPU);
	else if (u.oom_kills > 0)
		sup_stop(s, STOP_MEMORY);
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
		sup_stop(s, STOP_OUTPUT);
	if (f->err[0] >= 0 && pump_drain(&f->err[0], &s->err))
		sup_stop(s, STOP_OUTPUT);
	if (f->status[0] >= 0)
		launch_read_status(&s->l, &f->status[0]);
	if (f->in[1] >= 0)
		pump_feed(&f->in[1], s->job.stdin_buf, s->job.stdin_len, in_off);
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
		launch_close_fd(&f->in[1]);
	while (!exited || f->out[0] >= 0 || f->err[0] >= 0) {
		double now;

		wait_io(f, exited ? -1 : pidfd,
			exited ? 20 : sup_flush_wait_ms(s, util_mono_ms(), CG_CHECK_MS));
		pump_io(s, f, &in_off);
		if (!exited && wait4(s->l.pid, &wst, WNOHANG, &s->ru) == s->l.pid) {
			exited = 1;
			sup_mark(s, "run");
			/* The pid namespace is gone with bwrap; anything that escaped
			 * it into the cgroup or the uid goes now. */
			launch_kill(&s->l);
			sup_mark(s, "kill_after_exit");
		}
		now = util_mono_ms();
		if (!exited && now >= deadline)
			sup_stop(s, STOP_WALL);
		if (!exited && now >= next_cg) {
			check_cgroup(s);
			next_cg = now + CG_CHECK_MS;
		}
		if (!exited)
			sup_flush_live(s, now);
		if (!exited && now >= next_hb) {
			heartbeat(s);
			next_hb = util_mono_ms() + HEARTBEAT_MS;
		}
		if (exited && now >= deadline + 5000)
			break; /* pipes held open by something unkillable: give up on them */
		if (exited && pidfd >= 0)
			launch_close_fd(&pidfd);
	}
	launch_close_fd(&pidfd);
	sup_mark(s, "drain_after_exit");
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
		sup_setup_fail(s, STAGE_COMMAND_START, "sandbox start failed",
			   msg[0] ? msg : "bwrap exited before starting the command");
	}
}

int sup_load_job(struct sup *s, const char *id)
{
	for (int attempt = 1; attempt <= 10; attempt++) {
		if (sup_db_ready(s) == 0 && store_load(s->db, id, &s->job) == 0)
			return 0;
		store_job_free(&s->job);
		snprintf(s->job.id, sizeof s->job.id, "%s", id);
		sup_log_attempt(s, "load_job", attempt, 10, "db", attempt < 10);
		if (s->db)
			sup_db_drop_if_lost(s);
		util_sleep_ms(retry_delay_ms(200, 5000, attempt));
	}
	return -1;
}

void sup_init(struct sup *s, const struct cfg *cfg, int slot)
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

void sup_run(struct sup *s, struct launch_fds *f, struct artifact **arts, size_t *narts)
{
	s->t0 = s->l.t_spawn > 0 ? s->l.t_spawn : util_mono_ms(); /* a prewarmed sandbox: now */
	run_loop(s, f);
	if (s->l.cg_on)
		read_usage(s, &s->usage);
	sup_mark(s, "cg_read");
	sup_collect(s, arts, narts);
	sup_mark(s, "artifacts");
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

void sup_reset_stream(struct pump_out *p, long long limit)
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
	sup_reset_stream(&s->out, s->job.limits[LIM_OUTPUT_BYTES]);
	sup_reset_stream(&s->err, s->job.limits[LIM_OUTPUT_BYTES]);
	if (s->reason == STOP_WALL) {
		sup_diag(s, "compile step used all of wall_seconds (%lld s): the program was not run",
		     s->job.limits[LIM_WALL_SECONDS]);
		return -1;
	}
	if (o.state != JS_SUCCEEDED) {
		sup_diag(s, "compile step ended %s with exit code %d: the program was not run",
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
int sup_gate(struct sup *s)
{
	const char *why;
	char err[256];

	/* read per job (a fresh process): the runner refused to start with an unsafe
	 * one, so failing here means it was changed since */
	if (s->cfg->runner_command_policy[0] &&
	    cmdpol_load(s->cfg->runner_command_policy, &s->pol, err, sizeof err) < 0) {
		sup_setup_fail(s, STAGE_CREATE, "command policy could not be read", err);
		return -1;
	}
	if ((why = policy_check(s)) != NULL) {
		/* refused before anything exists: no workspace, no bwrap, no cleanup */
		sup_diag(s, "%s: %s", js_outcome(JO_BLOCKED)->diagnostic, why);
		s->l.stage = STAGE_POLICY;
		return -1;
	}
	return 0;
}

/* Policy check, workspace, limits, sandbox, run, artifacts, cleanup. */
void sup_execute(struct sup *s, struct artifact **arts, size_t *narts)
{
	struct launch_fds f;

	memset(&f, -1, sizeof f);
	s->out.limit = s->err.limit = (size_t)s->job.limits[LIM_OUTPUT_BYTES];
	if (sup_gate(s) < 0)
		return;
	if (sup_prepare_workspace(s) == 0) {
		sup_mark(s, "ws_create");
		if (sup_prepare_limits(s) == 0) {
			sup_mark(s, "cg_setup");
			if (compile_step(s) == 0 && start(s, &f) == 0)
				sup_run(s, &f, arts, narts);
		}
	}
	launch_fds_close(&f);
	sup_mark(s, "close_fds");
	launch_cleanup(&s->l);
}

void sup_free(struct sup *s)
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
	if (sup_load_job(&s, job_id) < 0) {
		log_kv("error", "job_load_failed", "job", job_id, (char *)NULL);
		sup_free(&s);
		return 1; /* the lease expires and the job ends as lost */
	}
	log_kv("info", "job_started", "job", job_id, "runner", runner_id, (char *)NULL);
	sup_execute(&s, &arts, &narts);
	sup_finish(&s, arts, narts);
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
	sup_execute(&s, &arts, &narts);
	ws_free_artifacts(arts, narts);
	sup_outcome_for(&s, &o);
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
