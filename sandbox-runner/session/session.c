/* A session's supervisor, top to bottom: load the row (sstore.c), start the sandbox
 * with the agent as its first process (ssandbox.c, through launch.c as a job's
 * sandbox starts), then one poll loop: frames from the agent (sagent.c, every one
 * validated: the agent is as untrusted as anything in the sandbox), the request rows
 * (served here: commands, kills, stdin, file requests through sfiles.c), output
 * flushes, command deadlines, cgroup limits, lease, idle time and lifetime; then the
 * end (ssandbox.c: kill, clean up, record).
 *
 * A network session (network=1) is a network job's sandbox with the agent in it:
 * bwrap waits on --block-fd until slirp4netns (net.c: the slot uid, its own seccomp
 * and read-only root, PR_SET_PDEATHSIG so it dies with this process) has configured
 * tap0 and the unreachable routes are in; only then does the agent start. slirp4netns
 * is this process's child, outside bwrap's process group and the cgroup:
 * launch_cleanup() kills and reaps it on every end path. */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentproto.h"
#include "artname.h"
#include "bwstatus.h"
#include "cgroup.h"
#include "fault.h"
#include "jobstate.h"
#include "launch.h"
#include "log.h"
#include "net.h"
#include "pathrules.h"
#include "profile.h"
#include "retry.h"
#include "sandbox.h"
#include "scfilter.h"
#include "sfiles.h"
#include "sesint.h"
#include "sreq.h"
#include "sstore.h"
#include "strbuf.h"
#include "util.h"
#include "wake.h"
#include "workspace.h"

#define HELLO_MS 10000
#define BEAT_MS 2000
#define REQ_BUSY_MS 5
#define REQ_IDLE_MS 100
#define BUSY_WINDOW_MS 2000
#define CG_BUSY_MS 50
#define CG_IDLE_MS 500
#define OUTQ_SOFT (1 << 20)     /* past this, stdin and commands wait for the agent */

/* ---- small helpers */

int ses_db_ready(struct ses *s)
{
	char err[256];

	if (s->db)
		return 0;
	s->db = db_open(s->cfg, err, sizeof err);
	if (s->db == NULL)
		log_kv("warn", "db_connect", "session", s->id, "error", err, (char *)NULL);
	return s->db ? 0 : -1;
}

/* A DB error: a connection that is gone is dropped and reopened at the next use. */
void ses_db_error_seen(struct ses *s, const char *step)
{
	log_kv("warn", "db_error", "session", s->id, "step", step, "error",
	       s->db ? db_error(s->db) : "no connection", (char *)NULL);
	if (s->db && db_gone(s->db)) {
		db_close(s->db);
		s->db = NULL;
	}
}

/* The first reason to end wins; the rest of the loop winds down. */
void ses_end(struct ses *s, const char *status, const char *fmt, ...)
{
	va_list ap;

	if (s->end_status)
		return;
	s->end_status = status;
	va_start(ap, fmt);
	vsnprintf(s->end_reason, sizeof s->end_reason, fmt, ap);
	va_end(ap);
}

/* The words of a failure at stage (launch_fail, which keeps the facts: failure.*):
 * the session ends failed. */
static void fail_words(void *ctx, enum job_stage stage, const char *what)
{
	(void)stage;
	ses_end(ctx, "failed", "%s", what);
}

int ses_start_fail(struct ses *s, enum job_stage stage, const char *what, const char *error)
{
	return launch_fail(&s->l, stage, what, error);
}

void ses_log_attempt(const struct ses *s, const char *step, int attempt, int max,
		     const char *type, int retry)
{
	launch_log_attempt(&s->l, step, attempt, max, type, retry);
}

/* ---- requests */

enum req_rc { REQ_DONE, REQ_DEFER };

static json_t *req_args(const struct db_res *res, size_t i)
{
	const char *a = db_res_s(res, i, "args_json");
	json_t *j = a ? json_loadb(a, db_res_l(res, i, "args_json"), JSON_REJECT_DUPLICATES, NULL)
		      : json_object();

	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* "K=V" strings of a command's env object (the API validated it; re-checked). */
static char **env_list(const json_t *env, size_t *n)
{
	size_t cnt = json_is_object(env) ? json_object_size(env) : 0, i = 0;
	char **v = calloc(cnt + 1, sizeof *v);
	const char *k;
	json_t *val;

	*n = 0;
	if (v == NULL)
		return NULL;
	if (cnt)
		json_object_foreach((json_t *)env, k, val) {
			char *e;
			if (!json_is_string(val) || *k == '\0' || strchr(k, '=') ||
			    asprintf(&e, "%s=%s", k, json_string_value(val)) < 0)
				continue;
			v[i++] = e;
		}
	*n = i;
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		explicit_bzero(v[i], strlen(v[i])); /* env values */
		free(v[i]);
	}
	free(v);
}

/* argv of a command row: its argv_json strings, or /bin/sh -c command. */
static char **argv_list(const struct ss_cmd *c, size_t *n)
{
	size_t cnt = c->argv ? json_array_size(c->argv) : 3;
	char **v;

	*n = 0;
	if (cnt == 0 || cnt > AP_MAX_ARGS || (c->argv == NULL && c->command == NULL))
		return NULL;
	v = calloc(cnt + 1, sizeof *v);
	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < cnt; i++) {
		const char *a = c->argv ? json_string_value(json_array_get(c->argv, i))
			      : i == 0 ? "/bin/sh" : i == 1 ? "-c" : c->command;
		if (a == NULL || (v[i] = strdup(a)) == NULL) {
			free_list(v, i);
			return NULL;
		}
	}
	*n = cnt;
	return v;
}

/* Encodes the SPAWN frame of a command: its payload length, or -1 (why set). */
static long spawn_payload(struct ses *s, const struct ss_cmd *c, uint32_t flags,
			  unsigned char *buf, const char **why)
{
	char cwd[CFG_PATH_MAX + 16], err[256];
	size_t argc, envc;
	char **argv = argv_list(c, &argc), **env = env_list(c->env, &envc);
	long len = -1;

	*why = "the command has no valid argv";
	if (*c->cwd && pr_job_path(s->cfg, c->cwd) != NULL)
		*why = "cwd is not a valid workspace path";
	else if (*c->cwd && ws_mkdirs(s->l.wsfd, c->cwd, s->l.uid, err, sizeof err) < 0)
		*why = "cwd could not be created in the workspace (a link or a file is in the way)";
	else if (argv && env) {
		snprintf(cwd, sizeof cwd, "%s%s%s", s->e2b ? PROF_E2B_HOME : PROF_WORKSPACE,
			 *c->cwd ? "/" : "", c->cwd);
		len = ap_spawn_encode(buf, flags, cwd, argv, argc, env, envc);
		if (len < 0)
			*why = "the command, its arguments and environment are too large for the agent";
	}
	free_list(argv, argc);
	free_list(env, envc);
	return len;
}

/* A command request: its row -> SPAWN; the row turns running at STARTED. */
static enum req_rc req_command(struct ses *s, long long req, const char *cid)
{
	struct ss_cmd c;
	struct scmd *sc;
	unsigned char *buf;
	const char *why;
	long len;
	uint32_t flags;
	int rc;

	rc = cid ? ss_cmd_load(s->db, s->id, cid, &c) : 1;
	if (rc != 0) {
		if (rc < 0) { /* nothing done: give the claim back, try again later */
			sreq_unclaim(s->db, req);
			return REQ_DEFER;
		}
		ss_req_fail(s->db, req, "not_found", "no such command in this session");
		return REQ_DONE;
	}
	if (strcmp(c.status, "queued") != 0 || c.pid <= 0 || c.pid > 0x7fffffff ||
	    ses_find_cmd(s, (uint32_t)c.pid) || ses_find_cmd_id(s, c.id)) {
		ss_req_fail(s->db, req, "conflict", "the command is not queued");
		ss_cmd_free(&c);
		return REQ_DONE;
	}
	flags = (c.stdin_len > 0 || c.stdin_open) ? AP_SPAWN_STDIN : 0;
	buf = malloc(AP_MAX_PAYLOAD);
	len = buf ? spawn_payload(s, &c, flags, buf, &why) : -1;
	sc = len >= 0 ? calloc(1, sizeof *sc) : NULL;
	if (sc == NULL) {
		ses_command_error(s, c.id, buf ? why : "supervisor out of memory");
	} else {
		snprintf(sc->id, sizeof sc->id, "%s", c.id);
		sc->cid = (uint32_t)c.pid;
		sc->want_stdin = flags != 0;
		sc->stdin_open = c.stdin_open;
		sc->stdin0 = c.stdin_buf, sc->stdin0_len = c.stdin_len;
		c.stdin_buf = NULL, c.stdin_len = 0;
		sc->cap = c.output_bytes;
		sc->timeout_s = c.timeout_s;
		sc->deadline = c.timeout_s > 0 ? util_mono_ms() + (double)c.timeout_s * 1e3 : 0;
		sc->next = s->cmds;
		s->cmds = sc;
		ses_send_frame(s, AP_SPAWN, sc->cid, buf, (size_t)len);
	}
	if (buf)
		explicit_bzero(buf, AP_MAX_PAYLOAD);
	free(buf);
	ss_cmd_free(&c);
	ss_req_done(s->db, req, NULL, NULL, 0);
	return REQ_DONE;
}

static enum req_rc req_kill(struct ses *s, long long req, const char *cid, const json_t *args)
{
	struct scmd *c = cid ? ses_find_cmd_id(s, cid) : NULL;
	json_int_t sig = json_integer_value(json_object_get(args, "signal"));

	if (sig < 1 || sig > 64) {
		ss_req_fail(s->db, req, "invalid_signal", "signal must be 1..64");
		return REQ_DONE;
	}
	if (c == NULL) {
		ss_req_fail(s->db, req, "not_running", "the command is not running");
		return REQ_DONE;
	}
	if (c->why == WHY_NONE) {
		c->why = WHY_KILL;
		c->sig = (int)sig;
	}
	ses_send_u32(s, AP_SIGNAL, c->cid, (uint32_t)sig);
	ss_req_done(s->db, req, json_object(), NULL, 0);
	return REQ_DONE;
}

static enum req_rc req_stdin(struct ses *s, long long req, const char *cid, const json_t *args,
			     const struct db_res *res, size_t i)
{
	struct scmd *c = cid ? ses_find_cmd_id(s, cid) : NULL;
	json_t *empty = json_object();

	size_t n = db_res_l(res, i, "data");
	char msg[200];

	if (c == NULL || !c->stdin_open) {
		ss_req_fail(s->db, req, "stdin_closed",
			    c ? "the command's stdin is closed" : "the command is not running");
	} else if (n > AP_STDIN_WINDOW) {
		snprintf(msg, sizeof msg, "a stdin write is at most %u bytes: send it in parts",
			 AP_STDIN_WINDOW);
		ss_req_fail(s->db, req, "too_large", msg);
	} else if (n > 0 && (c->stdin0_pending || c->stdin_inflight + n > AP_STDIN_WINDOW)) {
		/* back-pressure: nothing taken, nothing acknowledged that may be dropped */
		snprintf(msg, sizeof msg,
			 "the command has %zu bytes of stdin it has not read yet (at most %u):"
			 " retry when it has read some",
			 c->stdin_inflight + (c->stdin0_len - c->stdin0_off), AP_STDIN_WINDOW);
		ss_req_fail(s->db, req, "stdin_backlog_full", msg);
	} else {
		ses_send_stdin(s, c, (const unsigned char *)db_res_s(res, i, "data"), n);
		if (json_is_true(json_object_get(args, "close"))) {
			if (!c->stdin0_pending) /* else pump_stdin0 closes it after stdin0 */
				ses_send_frame(s, AP_STDIN_CLOSE, c->cid, NULL, 0);
			ses_stdin_closed(s, c);
		}
		ss_req_done(s->db, req, empty, NULL, 0);
	}
	json_decref(empty);
	return REQ_DONE;
}

static void req_sf_fail(struct ses *s, long long req, const struct sf_err *e)
{
	ss_req_fail(s->db, req, e->code, e->msg);
}

/* One file request's wall-time budget: session_host_ms, at most a tenth of the lease,
 * so that no request keeps the loop from its heartbeat. */
static long long host_op_ms(const struct ses *s)
{
	long long cap = s->cfg->runner_lease_seconds * 100;

	return s->cfg->session_host_ms < cap ? s->cfg->session_host_ms : cap;
}

/* This process's CPU time (user + system), µs. */
static long long cpu_us(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* The file kinds, host side by fd (sfiles.c), within budget b. */
static void req_file_do(struct ses *s, long long req, const char *kind, const json_t *args,
			const struct db_res *res, size_t i, struct sf_budget *b)
{
	const char *path = json_string_value(json_object_get(args, "path"));
	size_t maxp = (size_t)s->cfg->max_path_bytes;
	struct sf_err e = { 0 };

	if (sf_entry_kind(kind)) {
		const struct sf_limits lim = { s->cfg->session_list_max_files,
					       s->cfg->session_file_max_bytes, maxp };
		json_t *out = NULL;
		if (sf_entry_request(s->l.wsfd, s->l.uid, kind, args, &lim,
				     (const unsigned char *)db_res_s(res, i, "data"),
				     db_res_l(res, i, "data"), b, &out, &e) < 0)
			return req_sf_fail(s, req, &e);
		ss_req_done(s->db, req, out, NULL, 0);
		json_decref(out);
		return;
	}
	if (strcmp(kind, "file_list") == 0) {
		const json_t *rec = json_object_get(args, "recursive");
		json_t *out = NULL;
		if (sf_list(s->l.wsfd, json_string_value(json_object_get(args, "root")),
			    rec ? json_is_true(rec) : 1, json_is_true(json_object_get(args, "sha256")),
			    s->cfg->session_list_max_files, maxp, b, &out, &e) < 0)
			return req_sf_fail(s, req, &e);
		ss_req_done(s->db, req, out, NULL, 0);
		json_decref(out);
		return;
	}
	if (path == NULL) {
		ss_req_fail(s->db, req, "invalid_path", "path is required");
		return;
	}
	if (strcmp(kind, "file_get") == 0) {
		unsigned char *d = NULL;
		size_t n = 0;
		if (sf_get(s->l.wsfd, path, s->cfg->session_file_max_bytes, maxp, b, &d, &n, &e) < 0)
			return req_sf_fail(s, req, &e);
		json_t *r = json_pack("{s:I}", "size", (json_int_t)n);
		ss_req_done(s->db, req, r, d ? d : (unsigned char *)"", n);
		json_decref(r);
		free(d);
	} else if (strcmp(kind, "file_put") == 0) {
		const json_t *m = json_object_get(args, "mode");
		json_int_t mode = m ? json_integer_value(m) : 0644;
		size_t n = db_res_l(res, i, "data");
		if (!(m == NULL || json_is_integer(m)) || mode < 0 || mode > 0777) {
			ss_req_fail(s->db, req, "invalid_mode", "mode must be 0..0777");
			return;
		}
		if ((long long)n > s->cfg->session_file_max_bytes) {
			ss_req_fail(s->db, req, "too_large", "the file is over session_file_max_bytes");
			return;
		}
		if (sf_put(s->l.wsfd, path, (const unsigned char *)db_res_s(res, i, "data"), n,
			   (unsigned)mode, s->l.uid, maxp, b, &e) < 0)
			return req_sf_fail(s, req, &e);
		json_t *r = json_pack("{s:s, s:I}", "path", path, "size", (json_int_t)n);
		ss_req_done(s->db, req, r, NULL, 0);
		json_decref(r);
	} else {
		if (sf_delete(s->l.wsfd, path, maxp, &e) < 0)
			return req_sf_fail(s, req, &e);
		json_t *r = json_object();
		ss_req_done(s->db, req, r, NULL, 0);
		json_decref(r);
	}
}

/* A file request within its budget, its cost added to the session's host work. */
static void req_file(struct ses *s, long long req, const char *kind, const json_t *args,
		     const struct db_res *res, size_t i)
{
	struct sf_budget b;
	long long c0 = cpu_us();

	sf_budget_init(&b, s->cfg->session_host_bytes, host_op_ms(s));
	req_file_do(s, req, kind, args, res, i, &b);
	s->host_bytes += b.bytes;
	s->host_cpu_us += cpu_us() - c0;
	if (b.cut)
		log_kv("info", "session_host_budget", "session", s->id, "kind", kind, "limit", b.cut,
		       (char *)NULL);
}


/* Whether a request must wait its turn (nothing done, nothing claimed yet): a kill
 * or stdin for a command whose STARTED has not arrived; commands and stdin while
 * more than OUTQ_SOFT is queued to the agent. */
static int must_wait(struct ses *s, const char *kind, const char *cid)
{
	const struct scmd *c = cid ? ses_find_cmd_id(s, cid) : NULL;
	int full = ses_outq_pending(s) > OUTQ_SOFT;

	if (strcmp(kind, "command") == 0)
		return full;
	if (strcmp(kind, "kill") == 0)
		return c && !c->started;
	if (strcmp(kind, "stdin") == 0)
		return c && (!c->started || full);
	return 0;
}

/* One pending request. REQ_DEFER leaves it (and the ones after it) for later. It is
 * claimed (pending -> taken) before anything is done: a request the API has failed
 * meanwhile (504 request_timeout) is skipped, never carried out (common/sreq.h). */
static enum req_rc handle_request(struct ses *s, const struct db_res *res, size_t i)
{
	long long req = db_res_i(res, i, "id", 0);
	const char *kind = db_res_s(res, i, "kind"), *cid = db_res_s(res, i, "command_id");
	json_t *args;
	enum req_rc rc = REQ_DONE;

	if (must_wait(s, kind, cid))
		return REQ_DEFER;
	switch (sreq_claim(s->db, req)) {
	case -1:
		ses_db_error_seen(s, "claim");
		return REQ_DEFER;
	case 0:
		return REQ_DONE; /* failed by the API, or the session ended: not ours to do */
	default:
		break;
	}
	args = req_args(res, i);
	if (args == NULL)
		ss_req_fail(s->db, req, "invalid_args", "args_json is not a JSON object");
	else if (strcmp(kind, "command") == 0)
		rc = req_command(s, req, cid);
	else if (strcmp(kind, "kill") == 0)
		rc = req_kill(s, req, cid, args);
	else if (strcmp(kind, "stdin") == 0)
		rc = req_stdin(s, req, cid, args, res, i);
	else if (strncmp(kind, "file_", 5) == 0 &&
		 (strcmp(kind, "file_list") == 0 || strcmp(kind, "file_get") == 0 ||
		  strcmp(kind, "file_put") == 0 || strcmp(kind, "file_delete") == 0 ||
		  sf_entry_kind(kind)))
		req_file(s, req, kind, args, res, i);
	else if (strcmp(kind, "close") == 0) {
		ss_req_done(s->db, req, NULL, NULL, 0);
		ses_end(s, "closed", "close requested");
	} else
		ss_req_fail(s->db, req, "unknown_kind", "unknown request kind");
	json_decref(args);
	return rc;
}

static void heartbeat(struct ses *s);

/* Pending requests in id order, until one must wait or the round has used its time
 * (host_op_ms: the rest wait for the next round, a few ms later); the lease is renewed
 * between requests when due. 1 when any was handled. */
static int serve_requests(struct ses *s)
{
	struct db_res *res;
	int any = 0;
	double t0 = util_mono_ms(), now;

	if (ses_db_ready(s) < 0)
		return 0;
	res = ss_requests(s->db, s->id, 16);
	if (res == NULL) {
		ses_db_error_seen(s, "requests");
		return 0;
	}
	/* test build only (fault.h): stop between reading the rows and acting on them, so
	 * that a suite can fail one meanwhile as the API's timeout does */
	if (db_res_rows(res) > 0 && fault_at("requests"))
		raise(SIGSTOP);
	for (size_t i = 0; i < db_res_rows(res) && !s->end_status; i++) {
		if (handle_request(s, res, i) == REQ_DEFER)
			break;
		any = 1;
		if ((now = util_mono_ms()) >= s->next_beat) {
			heartbeat(s);
			s->next_beat = now + BEAT_MS;
		}
		if (now - t0 >= (double)host_op_ms(s))
			break;
	}
	db_res_free(res);
	return any;
}

/* ---- limits, lease, idle, lifetime */

/* The session's cgroup: a limit hit ends the whole session (failed, named). */
void ses_check_limits(struct ses *s)
{
	struct cg_usage u;

	if (!s->l.cg_on)
		return;
	cg_read(&s->l.cg, &u);
	if (u.oom_kills > 0)
		ses_end(s, "failed", "session exceeded memory limit (memory_mb=%lld)", s->row.memory_mb);
	else if (u.pids_denied > 0)
		ses_end(s, "failed", "session exceeded pids limit (pids=%lld)", s->row.pids);
	else if (u.cpu_ns + s->host_cpu_us * 1000 > s->row.cpu_seconds * 1000000000LL)
		ses_end(s, "failed", "session exceeded cpu limit (cpu_seconds=%lld)", s->row.cpu_seconds);
}

/* The host work done since the last save, onto the session's row. */
void ses_save_host_work(struct ses *s)
{
	if (s->host_bytes == s->saved_bytes && s->host_cpu_us == s->saved_cpu_us)
		return;
	if (ses_db_ready(s) < 0 || ss_host_work(s->db, s->id, s->runner_id, s->host_bytes,
					    s->host_cpu_us / 1000) < 0) {
		ses_db_error_seen(s, "host_work");
		return;
	}
	s->saved_bytes = s->host_bytes;
	s->saved_cpu_us = s->host_cpu_us;
}

/* Renews the lease; reads close_requested, last activity and the lifetime (and an E2B
 * sandbox's idle timeout). */
static void heartbeat(struct ses *s)
{
	struct ss_beat b;

	if (ses_db_ready(s) < 0 || ss_heartbeat(s->db, s->id, s->runner_id,
					    s->cfg->runner_lease_seconds, &b) < 0) {
		ses_db_error_seen(s, "heartbeat");
		return; /* the lease may lapse: the dispatcher then marks the session lost */
	}
	if (!b.ours) {
		s->ours = 0;
		ses_end(s, "lost", "the session is no longer owned by this runner");
		return;
	}
	s->beat = b;
	s->beat_at = util_mono_ms();
	/* an E2B sandbox's idle timeout follows its timeout, which the API may change */
	if (s->e2b && ss_idle_seconds(s->db, s->id, &s->row.idle_seconds) < 0)
		ses_db_error_seen(s, "idle_seconds");
	ses_save_host_work(s);
	if (b.close_requested)
		ses_end(s, "closed", "close requested");
}

/* The lifetime is the row's expires_at, read at each heartbeat: the API may move it
 * (E2B's setTimeout), so a lifetime that seems over is read once more before the
 * session ends, and the end names the lifetime as it is then. */
static void check_time(struct ses *s, double now)
{
	long long life;

	if (s->beat_at == 0)
		return;
	if (s->beat_at + (double)s->beat.expires_in_ms <= now && now - s->beat_at > 50) {
		heartbeat(s);
		s->next_beat = now + BEAT_MS;
		if (s->end_status)
			return;
		now = util_mono_ms();
	}
	if (s->beat_at + (double)s->beat.expires_in_ms <= now) {
		life = s->db ? ss_lifetime(s->db, s->id) : -1;
		ses_end(s, "expired", "max lifetime of %lld s reached",
			life > 0 ? life : s->row.max_seconds);
		return;
	}
	if (s->ready && s->cmds == NULL) {
		double active = s->beat_at - (double)s->beat.idle_ms;
		if (s->last_cmd_end > active)
			active = s->last_cmd_end;
		if (now - active > (double)s->row.idle_seconds * 1e3)
			ses_end(s, "expired", "idle for %lld s", s->row.idle_seconds);
	}
}

static void check_deadlines(struct ses *s, double now)
{
	for (struct scmd *c = s->cmds; c; c = c->next)
		if (c->started && c->deadline > 0 && now >= c->deadline && c->why == WHY_NONE) {
			c->why = WHY_TIMEOUT;
			ses_send_u32(s, AP_SIGNAL, c->cid, SIGKILL);
		}
}

/* ---- the loop */

/* The poll timeout: the nearest of the next request poll, heartbeat, cgroup check,
 * output flush and command deadline. */
static int next_wait(const struct ses *s, double now)
{
	double due = s->next_beat;

	if (s->ready && s->next_req < due)
		due = s->next_req;
	if (s->next_cg < due)
		due = s->next_cg;
	for (const struct scmd *c = s->cmds; c; c = c->next) {
		for (int k = 0; k < 2; k++)
			if (c->io[k].len && c->io[k].last + FLUSH_MS < due)
				due = c->io[k].last + FLUSH_MS;
		if (c->deadline > 0 && c->deadline < due)
			due = c->deadline;
	}
	if (!s->ready && s->t0 + HELLO_MS < due)
		due = s->t0 + HELLO_MS;
	return due <= now ? 0 : due - now > 1000 ? 1000 : (int)(due - now) + 1;
}

static void wait_events(struct ses *s, int ms)
{
	struct pollfd p[4];
	nfds_t n = 0;

	if (s->ag >= 0)
		p[n++] = (struct pollfd){ .fd = s->ag,
					  .events = POLLIN | (ses_outq_pending(s) ? POLLOUT : 0) };
	if (s->errfd >= 0)
		p[n++] = (struct pollfd){ .fd = s->errfd, .events = POLLIN };
	if (s->statusfd >= 0)
		p[n++] = (struct pollfd){ .fd = s->statusfd, .events = POLLIN };
	if (s->pidfd >= 0)
		p[n++] = (struct pollfd){ .fd = s->pidfd, .events = POLLIN };
	if (poll(p, n, ms) <= 0)
		return;
	for (nfds_t i = 0; i < n; i++) {
		if (p[i].revents == 0)
			continue;
		if (p[i].fd == s->ag && (p[i].revents & (POLLIN | POLLHUP | POLLERR)))
			ses_read_agent(s);
		else if (p[i].fd == s->errfd)
			ses_read_stderr(s);
		else if (p[i].fd == s->statusfd)
			launch_read_status(&s->l, &s->statusfd);
		else if (p[i].fd == s->pidfd)
			launch_close_fd(&s->pidfd); /* bwrap exited: below */
	}
	if (s->ag >= 0 && ses_outq_pending(s))
		ses_flush_outq(s);
}

/* The sandbox or the agent went away on its own: a session limit (the OOM killer
 * may take the agent itself) or a failure of the sandbox. */
static void sandbox_gone(struct ses *s)
{
	ses_check_limits(s);
	if (s->end_status)
		return;
	s->l.stage = s->ready ? STAGE_EXECUTION : STAGE_COMMAND_START;
	s->l.instance_status = JS_INSTANCE_EXITED;
	snprintf(s->l.failure_error, sizeof s->l.failure_error, "%s",
		 s->ready ? "the sandbox agent exited" : "the sandbox exited before the agent said hello");
	ses_end(s, "failed", "%s", s->l.failure_error);
}

/* The periodic work after each wake-up. */
static void tick(struct ses *s)
{
	double now = util_mono_ms();

	if (!s->ready && now >= s->t0 + HELLO_MS) {
		ses_start_fail(s, STAGE_COMMAND_START, "the sandbox agent did not say hello within 10 s",
			   "no HELLO");
		return;
	}
	ses_flush_all(s, 0);
	check_deadlines(s, now);
	if (s->ready && now >= s->next_req) {
		if (serve_requests(s))
			s->last_busy = now;
		now = util_mono_ms();
		s->next_req = now + (now - s->last_busy < BUSY_WINDOW_MS ? REQ_BUSY_MS : REQ_IDLE_MS);
	}
	if (now >= s->next_beat) {
		heartbeat(s);
		s->next_beat = now + BEAT_MS;
	}
	if (now >= s->next_cg) {
		ses_check_limits(s);
		s->next_cg = now + (s->cmds ? CG_BUSY_MS : CG_IDLE_MS);
	}
	check_time(s, now);
	if (ses_outq_pending(s))
		ses_flush_outq(s);
}

static void run_loop(struct ses *s)
{
	s->last_busy = s->last_cmd_end = util_mono_ms();
	while (!s->end_status) {
		wait_events(s, next_wait(s, util_mono_ms()));
		if (s->ag < 0 || s->pidfd < 0) {
			sandbox_gone(s);
			break;
		}
		tick(s);
	}
}

/* ---- main */

static int load(struct ses *s)
{
	for (int attempt = 1; attempt <= 10; attempt++) {
		int rc = ses_db_ready(s) < 0 ? -1 : ss_load(s->db, s->id, s->runner_id, &s->row);
		if (rc == 0 && ss_load_e2b(s->db, s->id, &s->e2b) == 0)
			return 0;
		if (rc == 0)
			rc = -1;
		if (rc == 1)
			return 1;
		ss_session_free(&s->row);
		ses_log_attempt(s, "load_session", attempt, 10, "db", attempt < 10);
		if (s->db)
			ses_db_error_seen(s, "load_session");
		util_sleep_ms(retry_delay_ms(200, 5000, attempt));
	}
	return -1;
}

static void ses_init(struct ses *s, const struct cfg *cfg, const char *id, int slot,
		     const char *runner_id)
{
	memset(s, 0, sizeof *s);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	s->cfg = cfg;
	s->id = id;
	s->runner_id = runner_id;
	launch_init(&s->l, cfg, LAUNCH_SESSION, slot);
	s->l.id = id, s->l.runner_id = runner_id;
	s->l.on_fail = fail_words, s->l.ctx = s;
	s->ag = s->errfd = s->statusfd = s->pidfd = -1;
	s->ours = 1;
	sb_init(&s->outq);
}

static void ses_free(struct ses *s)
{
	while (s->cmds)
		ses_unlink_cmd(s, s->cmds);
	sb_release(&s->outq);
	launch_release(&s->l);
	ss_session_free(&s->row);
	free(s->prof);
	free(s->in);
	db_close(s->db);
}

int session_main(const struct cfg *cfg, const char *session_id, int slot,
		 const char *runner_id)
{
	struct ses s;
	int rc;

	ses_init(&s, cfg, session_id, slot, runner_id);
	rc = load(&s);
	if (rc != 0) {
		log_kv("error", "session_load_failed", "session", session_id, "reason",
		       rc > 0 ? "not ours or not starting" : "database", (char *)NULL);
		ses_free(&s);
		return rc > 0 ? 0 : 1;
	}
	log_kv("info", "session_started", "session", session_id, "runner", runner_id, "network",
	       s.row.network ? "on" : "off", (char *)NULL);
	/* a dead supervisor's processes in this slot go first */
	sb_kill_uid(s.l.uid);
	s.in = malloc(AP_HDR + AP_MAX_PAYLOAD);
	if (s.in == NULL)
		ses_end(&s, "failed", "supervisor out of memory");
	else if ((!s.row.network || ses_net_available(&s) == 0) && ses_prepare_workspace(&s) == 0 &&
		 ses_prepare_limits(&s) == 0 && ses_start_sandbox(&s) == 0)
		run_loop(&s);
	ses_end_session(&s);
	ses_free(&s);
	return 0;
}
