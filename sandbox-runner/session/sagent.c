/* The session agent's protocol on the host side (agentproto.h): frames to the agent
 * (commands, stdin paced by its window, signals), the session's commands and their
 * output (stored as it arrives, capped), and frames from the agent, every one
 * validated: the agent is as untrusted as anything in the sandbox. */
#include "sesint.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artname.h"
#include "jobstate.h"
#include "log.h"
#include "retry.h"
#include "wake.h"

#define FLUSH_BYTES 65536

/* ---- frames to the agent */

void ses_send_frame(struct ses *s, uint8_t type, uint32_t cid, const void *p, size_t len)
{
	unsigned char hdr[AP_HDR];

	ap_put_header(hdr, (uint32_t)len, type, 0, cid);
	sb_add(&s->outq, hdr, sizeof hdr);
	if (len)
		sb_add(&s->outq, p, len);
	if (s->outq.failed)
		ses_end(s, "failed", "supervisor out of memory");
}

void ses_send_u32(struct ses *s, uint8_t type, uint32_t cid, uint32_t v)
{
	unsigned char p[4];

	ap_put_u32(p, v);
	ses_send_frame(s, type, cid, p, sizeof p);
}

/* Bytes for a command's stdin, in frames of at most AP_MAX_PAYLOAD; they count in
 * flight until the agent acknowledges them (the callers keep it within the window). */
void ses_send_stdin(struct ses *s, struct scmd *c, const unsigned char *d, size_t n)
{
	for (size_t off = 0; off < n; off += AP_MAX_PAYLOAD)
		ses_send_frame(s, AP_STDIN, c->cid, d + off,
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
		ses_send_stdin(s, c, c->stdin0 + c->stdin0_off, n);
		c->stdin0_off += n;
	}
	if (c->stdin0_off < c->stdin0_len)
		return;
	c->stdin0_pending = 0;
	if (!c->stdin_open)
		ses_send_frame(s, AP_STDIN_CLOSE, c->cid, NULL, 0);
	if (c->stdin0)
		explicit_bzero(c->stdin0, c->stdin0_len);
	free(c->stdin0);
	c->stdin0 = NULL;
}

/* The command's stdin closed: its row says so (stdin_open is the truth). */
void ses_stdin_closed(struct ses *s, struct scmd *c)
{
	c->stdin_open = 0;
	if (ses_db_ready(s) < 0 || ss_cmd_stdin_closed(s->db, s->id, c->id) < 0)
		ses_db_error_seen(s, "command_stdin_closed");
}

size_t ses_outq_pending(const struct ses *s)
{
	return s->outq.len - s->outoff;
}

/* Writes what the socket takes now. */
void ses_flush_outq(struct ses *s)
{
	while (s->ag >= 0 && ses_outq_pending(s) > 0) {
		ssize_t w = send(s->ag, s->outq.buf + s->outoff, ses_outq_pending(s),
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			if (errno != EAGAIN)
				ses_end(s, "failed", "the sandbox agent's channel broke (%s)",
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

struct scmd *ses_find_cmd(struct ses *s, uint32_t cid)
{
	for (struct scmd *c = s->cmds; c; c = c->next)
		if (c->cid == cid)
			return c;
	return NULL;
}

struct scmd *ses_find_cmd_id(struct ses *s, const char *id)
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

void ses_unlink_cmd(struct ses *s, struct scmd *c)
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
		if (ses_db_ready(s) < 0 ||
		    ss_output(s->db, s->id, s->row.key_id, c->id, k + 1, st->stored, st->buf, n) < 0) {
			ses_db_error_seen(s, "output");
			return;
		}
		st->stored += (long long)n;
		memmove(st->buf, st->buf + n, st->len - n);
		st->len -= n;
	}
}

void ses_flush_all(struct ses *s, int force)
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
			ses_send_u32(s, AP_SIGNAL, c->cid, SIGKILL);
		}
	}
	if (keep == 0)
		return;
	unsigned char *nb = realloc(st->buf, st->len + keep);
	if (nb == NULL) {
		ses_end(s, "failed", "supervisor out of memory");
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
		if (c->io[0].len == 0 && c->io[1].len == 0 && ses_db_ready(s) == 0 &&
		    ss_cmd_finish(s->db, c->id, &e) == 0)
			break;
		ses_db_error_seen(s, "command_finish");
		if (attempt >= 5)
			break; /* the session's end cancels it if it is still running */
		util_sleep_ms(retry_delay_ms(50, 1000, attempt));
	}
	json_decref(diag);
	wake_send(s->cfg->api_wake_socket); /* its end committed: local long-polls answer now */
	s->last_cmd_end = util_mono_ms();
	ses_unlink_cmd(s, c);
}

/* A command row that cannot run ends `error` 125 with one diagnostic. */
void ses_command_error(struct ses *s, const char *cid, const char *why)
{
	json_t *diag = json_pack("[s]", why);
	struct ss_end_cmd e = { .status = "error", .exit_code = 125, .diagnostics = diag };

	if (ses_db_ready(s) < 0 || ss_cmd_finish(s->db, cid, &e) < 0)
		ses_db_error_seen(s, "command_error");
	json_decref(diag);
}

/* ---- frames from the agent */

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
	ses_end(s, "failed", "sandbox agent protocol violation");
}

static void on_hello(struct ses *s, const struct ap_frame *f)
{
	int rc;

	if (s->ready || f->len != 4 || f->cid != 0 || ap_get_u32(f->payload) != AP_VERSION)
		return violation(s, "bad HELLO");
	s->ready = 1;
	ses_ports_start(s); /* before the session is ready: its ports work from then on */
	for (int attempt = 1; attempt <= 5; attempt++) {
		rc = ses_db_ready(s) < 0 ? -1 : ss_set_ready(s->db, s->id, s->runner_id);
		if (rc == 0) {
			char ms[24];
			snprintf(ms, sizeof ms, "%.0f", util_mono_ms() - s->t0);
			log_kv("info", "session_ready", "session", s->id, "ms", ms, (char *)NULL);
			return;
		}
		if (rc == 1) {
			s->ours = 0;
			ses_end(s, "closed", "the session is no longer owned by this runner");
			return;
		}
		ses_db_error_seen(s, "set_ready");
		util_sleep_ms(retry_delay_ms(100, 1000, attempt));
	}
	ses_start_fail(s, STAGE_INITIALIZE, "the session could not be marked ready", "database");
}

static void on_started(struct ses *s, struct scmd *c, const struct ap_frame *f)
{
	if (c->started || f->len != 4)
		return violation(s, "bad STARTED");
	c->started = 1;
	if (ses_db_ready(s) < 0 || ss_cmd_started(s->db, c->id) < 0)
		ses_db_error_seen(s, "command_started");
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
	ses_stdin_closed(s, c);
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
	ses_command_error(s, c->id, why);
	s->last_cmd_end = util_mono_ms();
	ses_unlink_cmd(s, c);
}

/* A command that died of a signal (or whose shell reports one: 128+N) may be the
 * OOM killer's or the pids limit's victim: then the session ends (failed, the
 * limit named) and the command is cancelled with it, rather than reported as a
 * failure of its own. */
static void on_exit_frame(struct ses *s, struct scmd *c, int wst)
{
	if (c->why == WHY_NONE && (WIFSIGNALED(wst) || WEXITSTATUS(wst) > 128))
		ses_check_limits(s);
	if (s->end_status) {
		flush_stream(s, c, 0, 1, util_mono_ms());
		flush_stream(s, c, 1, 1, util_mono_ms());
		ses_unlink_cmd(s, c); /* its row is cancelled by the session's end */
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
	c = ses_find_cmd(s, f->cid);
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
void ses_read_agent(struct ses *s)
{
	const size_t cap = AP_HDR + AP_MAX_PAYLOAD;
	size_t off = 0;
	ssize_t r;

	do
		r = recv(s->ag, s->in + s->inlen, cap - s->inlen, MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r == 0 || (r < 0 && errno != EAGAIN)) {
		launch_close_fd(&s->ag);
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
void ses_read_stderr(struct ses *s)
{
	char tmp[1024];
	ssize_t r = read(s->errfd, tmp, sizeof tmp);

	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
		launch_close_fd(&s->errfd);
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
