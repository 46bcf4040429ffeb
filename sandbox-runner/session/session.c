/* A session's supervisor, top to bottom: load the row (sstore.c), workspace and
 * its files, cgroup, the agent in a sealed memfd, bwrap as the slot uid with the
 * agent as its command (launch.c, as a job's sandbox starts; the arguments from
 * profile.c), then one poll loop: frames from the agent (agentproto.h, every one
 * validated: the agent is as untrusted as anything in the sandbox), request rows,
 * output flushes, command deadlines, cgroup limits, lease, idle time and lifetime;
 * then the end: kill, clean up (launch.c), record (sstore.c).
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
#include "sreq.h"
#include "sstore.h"
#include "strbuf.h"
#include "util.h"
#include "wake.h"
#include "workspace.h"

#define HELLO_MS 10000
#define BEAT_MS 2000
#define FLUSH_MS 50
#define FLUSH_BYTES 65536
#define REQ_BUSY_MS 5
#define REQ_IDLE_MS 100
#define BUSY_WINDOW_MS 2000
#define CG_BUSY_MS 50
#define CG_IDLE_MS 500
#define OUTQ_SOFT (1 << 20)     /* past this, stdin and commands wait for the agent */
#define STDERR_KEEP 2048        /* the agent's stderr we keep for the log */

enum why { WHY_NONE, WHY_KILL, WHY_TIMEOUT, WHY_OUTPUT };

struct stream {
	unsigned char *buf;
	size_t len;
	long long stored; /* bytes in job_output */
	int trunc;
	double last;      /* when it was last stored (0: never) */
};

/* A command the agent was asked to start. */
struct scmd {
	struct scmd *next;
	char id[UUID_STR_LEN];
	uint32_t cid;
	int started, stdin_open, want_stdin;
	unsigned char *stdin0; /* initial stdin, sent from STARTED on, paced by the window */
	size_t stdin0_len, stdin0_off;
	int stdin0_pending;    /* stdin0 (then STDIN_CLOSE if not stdin_open) not all sent */
	size_t stdin_inflight; /* sent, not yet acknowledged (STDIN_ACK): <= AP_STDIN_WINDOW */
	int stdin_gone;        /* STDIN_GONE came */
	long long stdin_lost;  /* bytes the agent discarded (STDIN_GONE): a diagnostic */
	enum why why;
	int sig;               /* the signal a kill request sent */
	double deadline;       /* 0: none */
	long long cap, timeout_s;
	struct stream io[2];   /* stdout, stderr */
};

struct ses {
	const struct cfg *cfg;
	struct db *db;
	const char *id, *runner_id;
	struct launch l;       /* the slot and its sandbox (launch.h); l.blockfd: network,
				* bwrap's --block-fd, written once tap0 is up */
	struct ss_session row;
	struct prof_named *prof;
	int ag, errfd, statusfd, pidfd;
	unsigned char *in;     /* agent bytes not yet parsed */
	size_t inlen;
	struct strbuf outq;    /* frames for the agent */
	size_t outoff;
	char errtail[STDERR_KEEP];
	size_t errlen;
	struct scmd *cmds;
	int ready, ours;
	double t0, last_busy, last_cmd_end, next_beat, next_req, next_cg, beat_at;
	struct ss_beat beat;
	/* The host's own work for the session's file requests (issue 25): bytes read,
	 * hashed or written and this process's CPU time; charged to the session's
	 * cpu_seconds and stored on its row (host_read_bytes, host_cpu_ms). */
	long long host_bytes, host_cpu_us, saved_bytes, saved_cpu_us;
	/* the end (its failure facts are l's) */
	const char *end_status;        /* NULL: still running */
	char end_reason[300];
};

/* ---- small helpers */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int db_ready(struct ses *s)
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
static void db_error_seen(struct ses *s, const char *step)
{
	log_kv("warn", "db_error", "session", s->id, "step", step, "error",
	       s->db ? db_error(s->db) : "no connection", (char *)NULL);
	if (s->db && db_gone(s->db)) {
		db_close(s->db);
		s->db = NULL;
	}
}

/* The first reason to end wins; the rest of the loop winds down. */
static void end(struct ses *s, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void end(struct ses *s, const char *status, const char *fmt, ...)
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
	end(ctx, "failed", "%s", what);
}

static int start_fail(struct ses *s, enum job_stage stage, const char *what, const char *error)
{
	return launch_fail(&s->l, stage, what, error);
}

/* Everything inside the sandbox, the agent included, is untrusted: a frame that
 * breaks the protocol ends the session, never the supervisor. */
static void violation(struct ses *s, const char *what)
{
	if (s->end_status)
		return;
	log_kv("warn", "agent_protocol_violation", "session", s->id, "detail", what, (char *)NULL);
	s->l.stage = STAGE_EXECUTION;
	s->l.instance_status = JS_INSTANCE_CREATED;
	snprintf(s->l.failure_error, sizeof s->l.failure_error, "%s", what);
	end(s, "failed", "sandbox agent protocol violation");
}

static void log_attempt(const struct ses *s, const char *step, int attempt, int max,
			const char *type, int retry)
{
	launch_log_attempt(&s->l, step, attempt, max, type, retry);
}

/* ---- frames to the agent */

static void send_frame(struct ses *s, uint8_t type, uint32_t cid, const void *p, size_t len)
{
	unsigned char hdr[AP_HDR];

	ap_put_header(hdr, (uint32_t)len, type, 0, cid);
	sb_add(&s->outq, hdr, sizeof hdr);
	if (len)
		sb_add(&s->outq, p, len);
	if (s->outq.failed)
		end(s, "failed", "supervisor out of memory");
}

static void send_u32(struct ses *s, uint8_t type, uint32_t cid, uint32_t v)
{
	unsigned char p[4];

	ap_put_u32(p, v);
	send_frame(s, type, cid, p, sizeof p);
}

/* Bytes for a command's stdin, in frames of at most AP_MAX_PAYLOAD; they count in
 * flight until the agent acknowledges them (the callers keep it within the window). */
static void send_stdin(struct ses *s, struct scmd *c, const unsigned char *d, size_t n)
{
	for (size_t off = 0; off < n; off += AP_MAX_PAYLOAD)
		send_frame(s, AP_STDIN, c->cid, d + off,
			   n - off < AP_MAX_PAYLOAD ? n - off : AP_MAX_PAYLOAD);
	c->stdin_inflight += n;
}

/* The initial stdin, at most AP_STDIN_WINDOW in flight (the rest as STDIN_ACKs free
 * room), then STDIN_CLOSE for a command not started with stdin_open. */
static void pump_stdin0(struct ses *s, struct scmd *c)
{
	if (!c->stdin0_pending)
		return;
	if (c->stdin0_off < c->stdin0_len && c->stdin_inflight < AP_STDIN_WINDOW) {
		size_t n = c->stdin0_len - c->stdin0_off, room = AP_STDIN_WINDOW - c->stdin_inflight;
		if (n > room)
			n = room;
		send_stdin(s, c, c->stdin0 + c->stdin0_off, n);
		c->stdin0_off += n;
	}
	if (c->stdin0_off < c->stdin0_len)
		return;
	c->stdin0_pending = 0;
	if (!c->stdin_open)
		send_frame(s, AP_STDIN_CLOSE, c->cid, NULL, 0);
	if (c->stdin0)
		explicit_bzero(c->stdin0, c->stdin0_len);
	free(c->stdin0);
	c->stdin0 = NULL;
}

/* The command's stdin closed: its row says so (stdin_open is the truth). */
static void stdin_closed(struct ses *s, struct scmd *c)
{
	c->stdin_open = 0;
	if (db_ready(s) < 0 || ss_cmd_stdin_closed(s->db, s->id, c->id) < 0)
		db_error_seen(s, "command_stdin_closed");
}

static size_t outq_pending(const struct ses *s)
{
	return s->outq.len - s->outoff;
}

/* Writes what the socket takes now. */
static void flush_outq(struct ses *s)
{
	while (s->ag >= 0 && outq_pending(s) > 0) {
		ssize_t w = send(s->ag, s->outq.buf + s->outoff, outq_pending(s),
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			if (errno != EAGAIN)
				end(s, "failed", "the sandbox agent's channel broke (%s)",
				    retry_errname(errno));
			return;
		}
		s->outoff += (size_t)w;
	}
	if (s->outoff == s->outq.len) {
		sb_reset(&s->outq);
		s->outoff = 0;
	}
}

/* ---- commands */

static struct scmd *find_cmd(struct ses *s, uint32_t cid)
{
	for (struct scmd *c = s->cmds; c; c = c->next)
		if (c->cid == cid)
			return c;
	return NULL;
}

static struct scmd *find_cmd_id(struct ses *s, const char *id)
{
	for (struct scmd *c = s->cmds; c; c = c->next)
		if (strcmp(c->id, id) == 0)
			return c;
	return NULL;
}

static void free_cmd(struct scmd *c)
{
	free(c->io[0].buf);
	free(c->io[1].buf);
	if (c->stdin0)
		explicit_bzero(c->stdin0, c->stdin0_len);
	free(c->stdin0);
	free(c);
}

static void unlink_cmd(struct ses *s, struct scmd *c)
{
	for (struct scmd **p = &s->cmds; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	free_cmd(c);
}

/* Stores buffered output in chunks of at most FLUSH_BYTES: all of it (force), a full
 * chunk, or what is there once FLUSH_MS have passed since the stream was last stored.
 * A rate, not a delay: a line after a quiet spell is stored at once (a tailing client
 * sees it within a waiter tick), a chatty stream at most every FLUSH_MS. A DB error
 * keeps the bytes for later. */
static void flush_stream(struct ses *s, struct scmd *c, int k, int force, double now)
{
	struct stream *st = &c->io[k];

	if (st->len == 0 || (!force && st->len < FLUSH_BYTES && now - st->last < FLUSH_MS))
		return;
	st->last = now;
	while (st->len > 0) {
		size_t n = st->len < FLUSH_BYTES ? st->len : FLUSH_BYTES;
		if (db_ready(s) < 0 ||
		    ss_output(s->db, s->id, s->row.key_id, c->id, k + 1, st->stored, st->buf, n) < 0) {
			db_error_seen(s, "output");
			return;
		}
		st->stored += (long long)n;
		memmove(st->buf, st->buf + n, st->len - n);
		st->len -= n;
	}
}

static void flush_all(struct ses *s, int force)
{
	double now = util_mono_ms();

	for (struct scmd *c = s->cmds; c; c = c->next)
		for (int k = 0; k < 2; k++)
			flush_stream(s, c, k, force, now);
}

/* Keeps output up to the command's cap; past it the command is killed
 * (output_limit) and the rest dropped. */
static void take_output(struct ses *s, struct scmd *c, int k, const unsigned char *p, size_t n)
{
	struct stream *st = &c->io[k];
	long long room = c->cap - st->stored - (long long)st->len;
	size_t keep = room <= 0 ? 0 : (long long)n > room ? (size_t)room : n;

	if (keep < n) {
		st->trunc = 1;
		if (c->why == WHY_NONE) {
			c->why = WHY_OUTPUT;
			send_u32(s, AP_SIGNAL, c->cid, SIGKILL);
		}
	}
	if (keep == 0)
		return;
	unsigned char *nb = realloc(st->buf, st->len + keep);
	if (nb == NULL) {
		end(s, "failed", "supervisor out of memory");
		return;
	}
	st->buf = nb;
	memcpy(st->buf + st->len, p, keep);
	st->len += keep;
}

/* The command's terminal status from its raw wait status and why we stopped it. */
static void command_outcome(const struct scmd *c, int wst, struct ss_end_cmd *e, json_t *diag)
{
	int sig = WIFSIGNALED(wst) ? WTERMSIG(wst) : 0;
	int code = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + sig;
	char line[160];

	e->signal = 0;
	switch (c->why) {
	case WHY_TIMEOUT:
		e->status = "timed_out", e->exit_code = 124;
		snprintf(line, sizeof line, "command timed out after %lld s", c->timeout_s);
		json_array_append_new(diag, json_string(line));
		return;
	case WHY_OUTPUT:
		e->status = "output_limit", e->exit_code = 122;
		snprintf(line, sizeof line, "output limit reached (output_bytes=%lld per stream)", c->cap);
		json_array_append_new(diag, json_string(line));
		return;
	case WHY_KILL:
		e->status = "killed", e->signal = sig ? sig : c->sig, e->exit_code = 128 + e->signal;
		snprintf(line, sizeof line, "killed on request (signal %d)", c->sig);
		json_array_append_new(diag, json_string(line));
		return;
	case WHY_NONE:
		break;
	}
	if (c->stdin_lost > 0) {
		snprintf(line, sizeof line,
			 "stdin: %lld bytes were never written to the command (it closed its stdin)",
			 c->stdin_lost);
		json_array_append_new(diag, json_string(line));
	}
	e->status = code == 0 ? "succeeded" : "failed";
	e->exit_code = code;
	e->signal = sig;
}

/* EXIT: all of its output stored, then its terminal row; it is forgotten. */
static void finish_cmd(struct ses *s, struct scmd *c, int wst)
{
	json_t *diag = json_array();
	struct ss_end_cmd e = { 0 };

	command_outcome(c, wst, &e, diag);
	e.out_trunc = c->io[0].trunc, e.err_trunc = c->io[1].trunc, e.diagnostics = diag;
	for (int attempt = 1;; attempt++) {
		double now = util_mono_ms();
		flush_stream(s, c, 0, 1, now);
		flush_stream(s, c, 1, 1, now);
		if (c->io[0].len == 0 && c->io[1].len == 0 && db_ready(s) == 0 &&
		    ss_cmd_finish(s->db, c->id, &e) == 0)
			break;
		db_error_seen(s, "command_finish");
		if (attempt >= 5)
			break; /* the session's end cancels it if it is still running */
		util_sleep_ms(retry_delay_ms(50, 1000, attempt));
	}
	json_decref(diag);
	wake_send(s->cfg->api_wake_socket); /* its end committed: local long-polls answer now */
	s->last_cmd_end = util_mono_ms();
	unlink_cmd(s, c);
}

/* A command row that cannot run ends `error` 125 with one diagnostic. */
static void command_error(struct ses *s, const char *cid, const char *why)
{
	json_t *diag = json_pack("[s]", why);
	struct ss_end_cmd e = { .status = "error", .exit_code = 125, .diagnostics = diag };

	if (db_ready(s) < 0 || ss_cmd_finish(s->db, cid, &e) < 0)
		db_error_seen(s, "command_error");
	json_decref(diag);
}

/* ---- frames from the agent */

static void on_hello(struct ses *s, const struct ap_frame *f)
{
	int rc;

	if (s->ready || f->len != 4 || f->cid != 0 || ap_get_u32(f->payload) != AP_VERSION)
		return violation(s, "bad HELLO");
	s->ready = 1;
	for (int attempt = 1; attempt <= 5; attempt++) {
		rc = db_ready(s) < 0 ? -1 : ss_set_ready(s->db, s->id, s->runner_id);
		if (rc == 0) {
			char ms[24];
			snprintf(ms, sizeof ms, "%.0f", util_mono_ms() - s->t0);
			log_kv("info", "session_ready", "session", s->id, "ms", ms, (char *)NULL);
			return;
		}
		if (rc == 1) {
			s->ours = 0;
			end(s, "closed", "the session is no longer owned by this runner");
			return;
		}
		db_error_seen(s, "set_ready");
		util_sleep_ms(retry_delay_ms(100, 1000, attempt));
	}
	start_fail(s, STAGE_INITIALIZE, "the session could not be marked ready", "database");
}

static void on_started(struct ses *s, struct scmd *c, const struct ap_frame *f)
{
	if (c->started || f->len != 4)
		return violation(s, "bad STARTED");
	c->started = 1;
	if (db_ready(s) < 0 || ss_cmd_started(s->db, c->id) < 0)
		db_error_seen(s, "command_started");
	c->stdin0_pending = c->want_stdin;
	pump_stdin0(s, c);
}

/* STDIN_ACK: n more bytes reached the command's pipe; room for more initial stdin. */
static void on_stdin_ack(struct ses *s, struct scmd *c, const struct ap_frame *f)
{
	uint32_t n = f->len == 4 ? ap_get_u32(f->payload) : 0;

	if (!c->started || !c->want_stdin || n == 0 || n > c->stdin_inflight)
		return violation(s, "bad STDIN_ACK");
	c->stdin_inflight -= n;
	pump_stdin0(s, c);
}

/* STDIN_GONE: the command closed its stdin; what was in flight or not yet sent of
 * the initial stdin never reached it (counted for its diagnostics). */
static void on_stdin_gone(struct ses *s, struct scmd *c, const struct ap_frame *f)
{
	if (!c->started || !c->want_stdin || c->stdin_gone || f->len != 0)
		return violation(s, "bad STDIN_GONE");
	c->stdin_gone = 1;
	c->stdin_lost += (long long)c->stdin_inflight;
	c->stdin_inflight = 0;
	if (c->stdin0_pending) {
		c->stdin_lost += (long long)(c->stdin0_len - c->stdin0_off);
		c->stdin0_off = c->stdin0_len;
		c->stdin_open = 0; /* nothing more is sent: pump's STDIN_CLOSE is harmless */
		pump_stdin0(s, c);
	}
	stdin_closed(s, c);
}

static void on_spawn_failed(struct ses *s, struct scmd *c, const struct ap_frame *f)
{
	char text[201], esc[420], why[560];
	size_t n;

	if (c->started || f->len < 4 || f->len > 4 + 200)
		return violation(s, "bad SPAWN_FAILED");
	n = f->len - 4;
	memcpy(text, f->payload + 4, n);
	text[n] = '\0';
	text[strnlen(text, n)] = '\0';
	an_escape(esc, sizeof esc, text); /* the agent's words: untrusted, escaped */
	snprintf(why, sizeof why, "command could not be started: %s (%s)", esc,
		 retry_errname((int)ap_get_u32(f->payload)));
	command_error(s, c->id, why);
	s->last_cmd_end = util_mono_ms();
	unlink_cmd(s, c);
}

static void check_limits(struct ses *s);

/* A command that died of a signal (or whose shell reports one: 128+N) may be the
 * OOM killer's or the pids limit's victim: then the session ends (failed, the
 * limit named) and the command is cancelled with it, rather than reported as a
 * failure of its own. */
static void on_exit_frame(struct ses *s, struct scmd *c, int wst)
{
	if (c->why == WHY_NONE && (WIFSIGNALED(wst) || WEXITSTATUS(wst) > 128))
		check_limits(s);
	if (s->end_status) {
		flush_stream(s, c, 0, 1, util_mono_ms());
		flush_stream(s, c, 1, 1, util_mono_ms());
		unlink_cmd(s, c); /* its row is cancelled by the session's end */
		return;
	}
	finish_cmd(s, c, wst);
}

static void on_frame(struct ses *s, const struct ap_frame *f)
{
	struct scmd *c;

	if (f->type == AP_HELLO)
		return on_hello(s, f);
	if (!s->ready)
		return violation(s, "a frame before HELLO");
	c = find_cmd(s, f->cid);
	if (c == NULL)
		return violation(s, "a frame for an unknown command");
	switch (f->type) {
	case AP_STARTED: return on_started(s, c, f);
	case AP_SPAWN_FAILED: return on_spawn_failed(s, c, f);
	case AP_OUTPUT:
		if (!c->started || f->len == 0 || (f->stream != 1 && f->stream != 2))
			return violation(s, "bad OUTPUT");
		return take_output(s, c, f->stream - 1, f->payload, f->len);
	case AP_EXIT:
		if (!c->started || f->len != 4)
			return violation(s, "bad EXIT");
		return on_exit_frame(s, c, (int)ap_get_u32(f->payload));
	case AP_STDIN_ACK: return on_stdin_ack(s, c, f);
	case AP_STDIN_GONE: return on_stdin_gone(s, c, f);
	default: return violation(s, "a frame type the agent may not send");
	}
}

/* Reads what the agent sent and handles every whole frame; at most one frame's
 * worth is ever buffered. */
static void read_agent(struct ses *s)
{
	const size_t cap = AP_HDR + AP_MAX_PAYLOAD;
	size_t off = 0;
	ssize_t r;

	do
		r = recv(s->ag, s->in + s->inlen, cap - s->inlen, MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r == 0 || (r < 0 && errno != EAGAIN)) {
		close_fd(&s->ag);
		return;
	}
	if (r < 0)
		return;
	s->inlen += (size_t)r;
	while (!s->end_status) {
		struct ap_frame f;
		int rc = ap_parse(s->in + off, s->inlen - off, &f);
		if (rc < 0)
			return violation(s, "an invalid frame header");
		if (rc == 0)
			break;
		if (!ap_frame_valid(&f))
			return violation(s, "a frame whose payload does not fit its type");
		on_frame(s, &f);
		off += AP_HDR + f.len;
	}
	memmove(s->in, s->in + off, s->inlen - off);
	s->inlen -= off;
}

/* The agent's stderr: kept (bounded) for the log, the rest read and dropped. */
static void read_stderr(struct ses *s)
{
	char tmp[1024];
	ssize_t r = read(s->errfd, tmp, sizeof tmp);

	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
		close_fd(&s->errfd);
		return;
	}
	if (r > 0 && s->errlen < sizeof s->errtail - 1) {
		size_t n = (size_t)r < sizeof s->errtail - 1 - s->errlen ? (size_t)r
									 : sizeof s->errtail - 1 - s->errlen;
		memcpy(s->errtail + s->errlen, tmp, n);
		s->errlen += n;
		s->errtail[s->errlen] = '\0';
	}
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
		snprintf(cwd, sizeof cwd, "/workspace%s%s", *c->cwd ? "/" : "", c->cwd);
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
	    find_cmd(s, (uint32_t)c.pid) || find_cmd_id(s, c.id)) {
		ss_req_fail(s->db, req, "conflict", "the command is not queued");
		ss_cmd_free(&c);
		return REQ_DONE;
	}
	flags = (c.stdin_len > 0 || c.stdin_open) ? AP_SPAWN_STDIN : 0;
	buf = malloc(AP_MAX_PAYLOAD);
	len = buf ? spawn_payload(s, &c, flags, buf, &why) : -1;
	sc = len >= 0 ? calloc(1, sizeof *sc) : NULL;
	if (sc == NULL) {
		command_error(s, c.id, buf ? why : "supervisor out of memory");
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
		send_frame(s, AP_SPAWN, sc->cid, buf, (size_t)len);
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
	struct scmd *c = cid ? find_cmd_id(s, cid) : NULL;
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
	send_u32(s, AP_SIGNAL, c->cid, (uint32_t)sig);
	ss_req_done(s->db, req, json_object(), NULL, 0);
	return REQ_DONE;
}

static enum req_rc req_stdin(struct ses *s, long long req, const char *cid, const json_t *args,
			     const struct db_res *res, size_t i)
{
	struct scmd *c = cid ? find_cmd_id(s, cid) : NULL;
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
		send_stdin(s, c, (const unsigned char *)db_res_s(res, i, "data"), n);
		if (json_is_true(json_object_get(args, "close"))) {
			if (!c->stdin0_pending) /* else pump_stdin0 closes it after stdin0 */
				send_frame(s, AP_STDIN_CLOSE, c->cid, NULL, 0);
			stdin_closed(s, c);
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
	const struct scmd *c = cid ? find_cmd_id(s, cid) : NULL;
	int full = outq_pending(s) > OUTQ_SOFT;

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
		db_error_seen(s, "claim");
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
		  strcmp(kind, "file_put") == 0 || strcmp(kind, "file_delete") == 0))
		req_file(s, req, kind, args, res, i);
	else if (strcmp(kind, "close") == 0) {
		ss_req_done(s->db, req, NULL, NULL, 0);
		end(s, "closed", "close requested");
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

	if (db_ready(s) < 0)
		return 0;
	res = ss_requests(s->db, s->id, 16);
	if (res == NULL) {
		db_error_seen(s, "requests");
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
static void check_limits(struct ses *s)
{
	struct cg_usage u;

	if (!s->l.cg_on)
		return;
	cg_read(&s->l.cg, &u);
	if (u.oom_kills > 0)
		end(s, "failed", "session exceeded memory limit (memory_mb=%lld)", s->row.memory_mb);
	else if (u.pids_denied > 0)
		end(s, "failed", "session exceeded pids limit (pids=%lld)", s->row.pids);
	else if (u.cpu_ns + s->host_cpu_us * 1000 > s->row.cpu_seconds * 1000000000LL)
		end(s, "failed", "session exceeded cpu limit (cpu_seconds=%lld)", s->row.cpu_seconds);
}

/* The host work done since the last save, onto the session's row. */
static void save_host_work(struct ses *s)
{
	if (s->host_bytes == s->saved_bytes && s->host_cpu_us == s->saved_cpu_us)
		return;
	if (db_ready(s) < 0 || ss_host_work(s->db, s->id, s->runner_id, s->host_bytes,
					    s->host_cpu_us / 1000) < 0) {
		db_error_seen(s, "host_work");
		return;
	}
	s->saved_bytes = s->host_bytes;
	s->saved_cpu_us = s->host_cpu_us;
}

/* Renews the lease; reads close_requested, last activity and the lifetime. */
static void heartbeat(struct ses *s)
{
	struct ss_beat b;

	if (db_ready(s) < 0 || ss_heartbeat(s->db, s->id, s->runner_id,
					    s->cfg->runner_lease_seconds, &b) < 0) {
		db_error_seen(s, "heartbeat");
		return; /* the lease may lapse: the dispatcher then marks the session lost */
	}
	if (!b.ours) {
		s->ours = 0;
		end(s, "lost", "the session is no longer owned by this runner");
		return;
	}
	s->beat = b;
	s->beat_at = util_mono_ms();
	save_host_work(s);
	if (b.close_requested)
		end(s, "closed", "close requested");
}

static void check_time(struct ses *s, double now)
{
	if (s->beat_at == 0)
		return;
	if (s->beat_at + (double)s->beat.expires_in_ms <= now) {
		end(s, "expired", "max lifetime of %lld s reached", s->row.max_seconds);
		return;
	}
	if (s->ready && s->cmds == NULL) {
		double active = s->beat_at - (double)s->beat.idle_ms;
		if (s->last_cmd_end > active)
			active = s->last_cmd_end;
		if (now - active > (double)s->row.idle_seconds * 1e3)
			end(s, "expired", "idle for %lld s", s->row.idle_seconds);
	}
}

static void check_deadlines(struct ses *s, double now)
{
	for (struct scmd *c = s->cmds; c; c = c->next)
		if (c->started && c->deadline > 0 && now >= c->deadline && c->why == WHY_NONE) {
			c->why = WHY_TIMEOUT;
			send_u32(s, AP_SIGNAL, c->cid, SIGKILL);
		}
}

/* ---- start */

/* Workspace (tmpfs of disk_mb) and the session's files, by fd. */
static int prepare_workspace(struct ses *s)
{
	char err[512];
	struct db_res *files;

	if (launch_workspace(&s->l, s->row.disk_mb) < 0)
		return -1;
	files = db_ready(s) == 0 ? ss_files(s->db, s->id) : NULL;
	if (files == NULL)
		return start_fail(s, STAGE_INPUT_FILES, "reading the session's files failed", "database");
	for (size_t i = 0; i < db_res_rows(files); i++) {
		const char *path = db_res_s(files, i, "path");
		if (path == NULL || pr_job_path(s->cfg, path) != NULL ||
		    ws_write_file(s->l.wsfd, path, (const unsigned char *)db_res_s(files, i, "content"),
				  db_res_l(files, i, "content"), db_res_i(files, i, "executable", 0) != 0,
				  s->l.uid, err, sizeof err) < 0) {
			db_res_free(files);
			return start_fail(s, STAGE_INPUT_FILES, "writing the session's files failed",
					  path && pr_job_path(s->cfg, path) ? "invalid path" : err);
		}
	}
	db_res_free(files);
	return 0;
}

static int prepare_limits(struct ses *s)
{
	if (strcmp(s->cfg->runner_limits_mode, "rlimit-only") == 0)
		return 0;
	return launch_cgroup(&s->l, s->row.memory_mb << 20, s->row.pids,
			     "resource limits could not be applied");
}

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* What a network session needs from this host, checked as for a network job
 * (supervise.c's policy_check): 0, or the session ends failed at stage create
 * naming what is missing. */
static int net_available(struct ses *s)
{
	static const char *const why = "network access is not available on this runner";
	struct stat st;
	char err[CFG_PATH_MAX + 64];
	int trc;

	if (access(s->cfg->slirp4netns_path, X_OK) != 0) {
		snprintf(err, sizeof err, "slirp4netns_path %s: %s", s->cfg->slirp4netns_path,
			 strerror(errno));
		end(s, "failed", "%s (no slirp4netns)", why);
	} else if (access(IP_PATH, X_OK) != 0) {
		snprintf(err, sizeof err, "%s: %s", IP_PATH, strerror(errno));
		end(s, "failed", "%s (no %s)", why, IP_PATH);
	} else if ((trc = stat("/dev/net/tun", &st)) != 0 || !S_ISCHR(st.st_mode)) {
		snprintf(err, sizeof err, "/dev/net/tun: %s",
			 trc != 0 ? strerror(errno) : "not a character device");
		end(s, "failed", "%s (no /dev/net/tun)", why);
	} else {
		return 0;
	}
	s->l.stage = STAGE_CREATE;
	s->l.instance_status = JS_INSTANCE_NOT_CREATED;
	snprintf(s->l.failure_error, sizeof s->l.failure_error, "%s", err);
	return -1;
}

/* Network sessions: bwrap is blocked before exec until slirp4netns has configured
 * tap0 in the sandbox's network namespace and the unreachable routes are in. */
static int net_setup(struct ses *s)
{
	if (launch_net_setup(&s->l, &s->statusfd, &s->l.blockfd) < 0)
		return -1;
	log_kv("info", "session_network", "session", s->id, "network",
	       "slirp4netns user-mode NAT (unprivileged, slot uid); host, private and link-local "
	       "addresses unreachable", (char *)NULL);
	return 0;
}

/* bwrap as the slot uid, the agent as its command on a socketpair (stdin and
 * stdout), its stderr on a pipe. */
static int start_sandbox(struct ses *s)
{
	char err[512];
	int sv[2] = { -1, -1 }, ep[2] = { -1, -1 }, st[2] = { -1, -1 }, bl[2] = { -1, -1 };
	int sc = -1, args = -1, agent;
	long long lim[LIM_COUNT] = { 0 };
	char *cmd[] = { (char *)PROF_AGENT_PATH, NULL };
	struct sb_spawn sp;
	int rc = -1;

	s->prof = malloc(sizeof *s->prof);
	if (s->prof == NULL || prof_load(s->cfg, s->row.profile, s->prof, err, sizeof err) < 0)
		return start_fail(s, STAGE_COMMAND_START, "the session's sandbox profile is not available on this runner host",
				  s->prof ? err : "out of memory");
	if ((agent = agent_memfd(s->cfg, err, sizeof err)) < 0)
		return start_fail(s, STAGE_COMMAND_START, "the sandbox agent could not be loaded", err);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(ep, O_CLOEXEC) < 0 ||
	    pipe2(st, O_CLOEXEC) < 0 || (s->row.network && pipe2(bl, O_CLOEXEC) < 0)) {
		start_fail(s, STAGE_COMMAND_START, "sandbox setup failed", strerror(errno));
		goto out;
	}
	if ((sc = sc_build_fd(err, sizeof err)) < 0) {
		start_fail(s, STAGE_COMMAND_START, "seccomp filter could not be built", err);
		goto out;
	}
	const struct prof_job pj = { s->l.ws_path, "", s->cfg->runner_tmp_mb, s->row.env,
				     SB_FD_SECCOMP, SB_FD_STATUS,
				     s->row.network ? SB_FD_BLOCK : -1 };
	if ((args = prof_session_args(s->cfg, &s->prof->t, &pj, SB_FD_AGENT, err, sizeof err)) < 0) {
		start_fail(s, STAGE_COMMAND_START, "sandbox setup failed", err);
		goto out;
	}
	lim[LIM_WALL_SECONDS] = s->row.max_seconds, lim[LIM_CPU_SECONDS] = s->row.cpu_seconds;
	lim[LIM_MEMORY_MB] = s->row.memory_mb, lim[LIM_PIDS] = s->row.pids;
	lim[LIM_DISK_MB] = s->row.disk_mb;
	launch_sb(&s->l, NULL, lim, cmd, &sp);
	sp.args_fd = args, sp.seccomp_fd = sc, sp.status_fd = st[1];
	sp.stdin_fd = sv[1], sp.stdout_fd = sv[1], sp.stderr_fd = ep[1], sp.block_fd = bl[0];
	sp.has_agent = 1, sp.agent_fd = agent;
	s->t0 = util_mono_ms();
	s->l.pid = launch_spawn(&s->l, &sp, 1, err, sizeof err);
	if (s->l.pid > 0) {
		s->ag = sv[0], sv[0] = -1;
		s->errfd = ep[0], ep[0] = -1;
		s->statusfd = st[0], st[0] = -1;
		/* kept open until tap0 is up: bwrap would go on at its EOF */
		s->l.blockfd = bl[1], bl[1] = -1;
		nonblock(s->ag), nonblock(s->errfd), nonblock(s->statusfd);
		s->pidfd = (int)syscall(SYS_pidfd_open, s->l.pid, 0);
		rc = 0;
	}
out:
	close_fd(&sv[0]), close_fd(&sv[1]), close_fd(&ep[0]), close_fd(&ep[1]);
	close_fd(&st[0]), close_fd(&st[1]), close_fd(&sc), close_fd(&args), close_fd(&agent);
	close_fd(&bl[0]), close_fd(&bl[1]);
	if (rc == 0 && s->row.network) {
		/* our end of the sandbox's pipes is closed: only bwrap holds them */
		rc = net_setup(s);
		s->t0 = util_mono_ms(); /* the agent's 10 s start when it may run */
	}
	return rc;
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
					  .events = POLLIN | (outq_pending(s) ? POLLOUT : 0) };
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
			read_agent(s);
		else if (p[i].fd == s->errfd)
			read_stderr(s);
		else if (p[i].fd == s->statusfd)
			launch_read_status(&s->l, &s->statusfd);
		else if (p[i].fd == s->pidfd)
			close_fd(&s->pidfd); /* bwrap exited: below */
	}
	if (s->ag >= 0 && outq_pending(s))
		flush_outq(s);
}

/* The sandbox or the agent went away on its own: a session limit (the OOM killer
 * may take the agent itself) or a failure of the sandbox. */
static void sandbox_gone(struct ses *s)
{
	check_limits(s);
	if (s->end_status)
		return;
	s->l.stage = s->ready ? STAGE_EXECUTION : STAGE_COMMAND_START;
	s->l.instance_status = JS_INSTANCE_EXITED;
	snprintf(s->l.failure_error, sizeof s->l.failure_error, "%s",
		 s->ready ? "the sandbox agent exited" : "the sandbox exited before the agent said hello");
	end(s, "failed", "%s", s->l.failure_error);
}

/* The periodic work after each wake-up. */
static void tick(struct ses *s)
{
	double now = util_mono_ms();

	if (!s->ready && now >= s->t0 + HELLO_MS) {
		start_fail(s, STAGE_COMMAND_START, "the sandbox agent did not say hello within 10 s",
			   "no HELLO");
		return;
	}
	flush_all(s, 0);
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
		check_limits(s);
		s->next_cg = now + (s->cmds ? CG_BUSY_MS : CG_IDLE_MS);
	}
	check_time(s, now);
	if (outq_pending(s))
		flush_outq(s);
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

/* ---- the end */

/* The end must not be lost to a DB outage: retried until stored or no longer ours
 * (the dispatcher marks a session whose lease lapsed lost). */
static void record_end(struct ses *s)
{
	json_t *fail = launch_failure_json(&s->l);
	struct ss_end e = { s->end_status, s->end_reason, fail, s->l.cleanup_status };

	for (int attempt = 1; s->ours; attempt++) {
		int rc = db_ready(s) < 0 ? -1 : ss_finish(s->db, s->id, s->runner_id, &e);
		if (rc == 0)
			break;
		if (rc == 1) {
			log_kv("warn", "session_end_discarded", "session", s->id, "reason",
			       "session no longer owned by this runner", (char *)NULL);
			break;
		}
		log_attempt(s, "session_end", attempt, 0, "db", 1);
		db_error_seen(s, "session_end");
		util_sleep_ms(retry_delay_ms(100, 5000, attempt));
	}
	json_decref(fail);
}

static void log_end(struct ses *s)
{
	char esc[STDERR_KEEP * 4 + 8];

	if (s->errlen) {
		an_escape(esc, sizeof esc, s->errtail); /* the agent's words: untrusted */
		log_kv("info", "agent_stderr", "session", s->id, "text", esc, (char *)NULL);
	}
	log_kv("info", "session_ended", "session", s->id, "status", s->end_status, "reason",
	       s->end_reason, "cleanup", s->l.cleanup_status, (char *)NULL);
}

static void end_session(struct ses *s)
{
	if (s->ag >= 0 && s->ours)
		flush_all(s, 1); /* what the commands wrote before the end is kept */
	close_fd(&s->ag);
	close_fd(&s->errfd);
	close_fd(&s->statusfd);
	close_fd(&s->pidfd);
	launch_cleanup(&s->l);
	if (s->ours)
		save_host_work(s);
	record_end(s);
	log_end(s);
}

/* ---- main */

static int load(struct ses *s)
{
	for (int attempt = 1; attempt <= 10; attempt++) {
		int rc = db_ready(s) < 0 ? -1 : ss_load(s->db, s->id, s->runner_id, &s->row);
		if (rc == 0)
			return 0;
		if (rc == 1)
			return 1;
		ss_session_free(&s->row);
		log_attempt(s, "load_session", attempt, 10, "db", attempt < 10);
		if (s->db)
			db_error_seen(s, "load_session");
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
		unlink_cmd(s, s->cmds);
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
		end(&s, "failed", "supervisor out of memory");
	else if ((!s.row.network || net_available(&s) == 0) && prepare_workspace(&s) == 0 &&
		 prepare_limits(&s) == 0 && start_sandbox(&s) == 0)
		run_loop(&s);
	end_session(&s);
	ses_free(&s);
	return 0;
}
