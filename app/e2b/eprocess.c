/* envd's process service over Connect (POST /process.Process/{method}): a sandbox's
 * commands as the E2B SDK runs them (commands.run, connect, sendStdin, closeStdin,
 * kill, list), each carried out through the session API's own handlers (subcall) under
 * the sandbox key's identity.
 *
 * Start and Connect are server streams, answered over many re-dispatches without
 * holding a worker: the first run sends the headers and `start`, then each run sends
 * what output the command's row counts past what was sent (stdout, then stderr; at
 * most STREAM_BURSTS bursts of STREAM_BURST bytes a run, each written only when the
 * connection to nginx has room for it), and hands the wait for more to the waiter
 * (wt_stream: WT_COMMAND_OUTPUT on both streams' sum, until the next keepalive is
 * due). A connection to nginx that cannot take a piece without blocking waits a second
 * (the client is slow: it holds no worker). The stream ends with `end` and the
 * end-of-stream envelope once the command has ended and its output is out, or with an
 * error in the end-of-stream envelope: Connect-Timeout-Ms passed (deadline_exceeded),
 * the worker stops (unavailable: reconnect), the key's share of the wait board is
 * used up (resource_exhausted). */
#include "e2b.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_routes.h"
#include "connect.h"
#include "jobdata.h"
#include "log.h"
#include "sapi.h"
#include "subcall.h"
#include "util.h"
#include "validate.h"
#include "waiter.h"

#define STREAM_BURST 49152  /* output bytes of a burst (framing and base64 fit 64 KiB) */
#define STREAM_BURSTS 8     /* bursts a run sends, each while nginx's connection has room */
#define STREAM_PIECE 12288  /* bytes of output per data event */
#define SLOW_CLIENT_MS 1000 /* the wait when nginx's connection cannot take a piece */

/* The session routes this file calls (same patterns as api_routes.h). */
static const struct route proutes[] = {
	{ "POST", "/v1/sessions/{id}/commands", h_cmd_create, "h_cmd_create", 0 },
	{ "POST", "/v1/sessions/{id}/commands/{cid}/kill", h_cmd_kill, "h_cmd_kill", 0 },
	{ "POST", "/v1/sessions/{id}/commands/{cid}/stdin", h_cmd_stdin, "h_cmd_stdin", 0 },
};

/* A stream between its runs. */
struct pstream {
	char sid[40], cid[40], key_id[40];
	long long pid;
	long long sent[2];  /* stdout, stderr bytes sent */
	double deadline;    /* util_mono_ms() past which the stream ends (0: none) */
	double keep_at;     /* the next keepalive */
	long long keep_ms;
};

static void ps_release(void *p)
{
	free(p);
}

/* ------------------------------------------------------------------ answers */

/* Our error answer (a sub-request's) as a Connect code and message. */
static void sub_error(const struct sub *s, const char **code, char *msg, size_t n)
{
	const json_t *e = json_object_get(s->json, "error");
	const char *m = json_string_value(json_object_get(e, "message"));

	*code = envd_code_of_http(s->status);
	snprintf(msg, n, "%s", m ? m : "the request failed");
}

/* A stream refused before it started: 200, then the error in the end envelope. */
void envd_stream_refuse(struct req *r, const char *code, const char *message)
{
	struct strbuf sb = STRBUF_INIT;

	if (cx_frame_end(&sb, code, message) == 0 && http_stream_head(r, 200, CX_CTYPE_STREAM) == 0)
		http_stream_write(r, sb.buf, sb.len);
	sb_release(&sb);
}

/* Sends sb (envelopes) and empties it; -1 when the connection failed. */
static int flush(struct req *r, struct strbuf *sb)
{
	int rc = sb->len ? http_stream_write(r, sb->buf, sb->len) : 0;

	sb_reset(sb);
	return rc;
}

/* ------------------------------------------------------------------ the request */

/* {"process": {"pid": N} | {"tag": "t"}} of a request: the command's id in session sid.
 * 1 found, 0 not (msg says why), -1 database error. */
static int select_process(struct db *db, const char *sid, const json_t *req, char *cid,
			  size_t n, long long *pid, char *msg, size_t mn)
{
	const json_t *p = json_object_get(req, "process");
	const json_t *jp = json_object_get(p, "pid"), *jt = json_object_get(p, "tag");
	struct db_res *res;
	int rc;

	if (json_is_integer(jp) && json_integer_value(jp) > 0)
		res = db_query_p(db, "SELECT id, pid FROM session_commands WHERE session_id = ?"
				     " AND pid = ?",
				 db_str(sid), db_i64(json_integer_value(jp)));
	else if (json_is_string(jt))
		res = db_query_p(db, "SELECT id, pid FROM session_commands WHERE session_id = ?"
				     " AND tag = ? ORDER BY seq DESC LIMIT 1",
				 db_str(sid), db_str(json_string_value(jt)));
	else {
		snprintf(msg, mn, "process must name a pid or a tag");
		return 0;
	}
	if (res == NULL)
		return -1;
	rc = db_res_rows(res) > 0;
	if (rc) {
		snprintf(cid, n, "%s", db_res_s(res, 0, "id"));
		*pid = db_res_i(res, 0, "pid", 0);
	} else if (json_is_integer(jp))
		snprintf(msg, mn, "process with pid %lld not found", (long long)json_integer_value(jp));
	else
		snprintf(msg, mn, "process with tag not found");
	db_res_free(res);
	return rc;
}

/* A string -> string object (envs), or NULL/absent. 0, or -1. */
static int string_map(const json_t *o)
{
	const char *k;
	const json_t *v;

	if (o == NULL || json_is_null(o))
		return 0;
	if (!json_is_object(o))
		return -1;
	json_object_foreach((json_t *)o, k, v)
		if (!json_is_string(v))
			return -1;
	return 0;
}

/* Start's request as our command body: {"argv": [cmd, args...], "env", "cwd",
 * "stdin_open", "tag", "timeout_seconds": 0 (until the sandbox ends: E2B's commands
 * have no limit of their own; the stream has Connect-Timeout-Ms), "output_bytes": the
 * most the key may store per stream (envd stores nothing and limits nothing: ours is
 * kept, so it is bounded, as high as the key allows)}. NULL with why. */
static json_t *start_body(const json_t *req, long long output_max, const char **why)
{
	const json_t *p = json_object_get(req, "process"), *args, *v;
	const char *cmd = json_string_value(json_object_get(p, "cmd"));
	const char *cwd = json_string_value(json_object_get(p, "cwd"));
	const json_t *tag = json_object_get(req, "tag");
	char rel[4096];
	json_t *argv, *b;
	size_t i;

	if (json_object_get(req, "pty") != NULL && !json_is_null(json_object_get(req, "pty"))) {
		*why = "pty: terminals are not supported by this service (docs/E2B.md)";
		return NULL;
	}
	if (!json_is_object(p) || cmd == NULL || *cmd == '\0') {
		*why = "process.cmd must be a non-empty string";
		return NULL;
	}
	args = json_object_get(p, "args");
	if (args != NULL && !json_is_array(args)) {
		*why = "process.args must be an array of strings";
		return NULL;
	}
	if (string_map(json_object_get(p, "envs")) < 0) {
		*why = "process.envs must map names to strings";
		return NULL;
	}
	if (tag != NULL && !json_is_null(tag) && !json_is_string(tag)) {
		*why = "tag must be a string";
		return NULL;
	}
	rel[0] = '\0';
	if (cwd != NULL && *cwd != '\0' && e2b_path_rel(cwd, rel, sizeof rel, why) < 0)
		return NULL;
	argv = json_array();
	json_array_append_new(argv, json_string(cmd));
	json_array_foreach(args, i, v) {
		if (!json_is_string(v)) {
			json_decref(argv);
			*why = "process.args must be an array of strings";
			return NULL;
		}
		json_array_append(argv, (json_t *)v);
	}
	b = json_pack("{s:o, s:b, s:i, s:I}", "argv", argv, "stdin_open",
		      json_is_true(json_object_get(req, "stdin")), "timeout_seconds", 0,
		      "output_bytes", (json_int_t)output_max);
	if (b == NULL) {
		*why = "out of memory";
		return NULL;
	}
	if (json_is_object(json_object_get(p, "envs")) && json_object_size(json_object_get(p, "envs")))
		json_object_set(b, "env", json_object_get(p, "envs"));
	if (rel[0] != '\0')
		json_object_set_new(b, "cwd", json_string(rel));
	if (json_is_string(tag))
		json_object_set(b, "tag", (json_t *)tag);
	return b;
}

/* Runs one of proutes for the caller; 0 (s answered or deferred), or -1 with code and
 * msg set (no route: internal). */
static int call(struct api_ctx *ctx, struct req *r, const struct envd_caller *c,
		const char *path, json_t *body, struct sub *s)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	int rc;

	json_decref(body);
	if (text == NULL)
		return -1;
	rc = subcall(ctx, r, &c->who, proutes, sizeof proutes / sizeof proutes[0], "POST", path,
		     "", text, strlen(text), s);
	free(text);
	return rc;
}

/* ------------------------------------------------------------------ streams */

/* The end of a stream: `end` from the command's row, then the end envelope. A
 * command that did not simply exit or die of a signal (lost with its sandbox, timed
 * out, never started) says why: its first diagnostic. */
static void send_end(struct strbuf *sb, const struct cmd_view *v)
{
	json_t *d = v->diagnostics_json ? json_loads(v->diagnostics_json, 0, NULL) : NULL;
	const json_t *first = json_array_get(d, 0);
	const char *why = json_is_string(first) ? json_string_value(first)
			  : json_string_value(json_object_get(first, "message"));
	long long code = -1, sig = 0;
	int plain;

	/* the row's decimal columns, checked: anything else reads as "not set" */
	if (v->exit_code == NULL || util_parse_ll(v->exit_code, 0, 255, &code) < 0)
		code = -1;
	if (v->signal == NULL || util_parse_ll(v->signal, 1, 64, &sig) < 0)
		sig = 0;

	plain = strcmp(v->status, "succeeded") == 0 || strcmp(v->status, "failed") == 0 ||
		strcmp(v->status, "killed") == 0;
	cx_frame_json(sb, 0, cx_ev_end(v->status, code, (int)sig, plain ? NULL : why));
	cx_frame_end(sb, NULL, NULL);
	json_decref(d);
}

static void stream_fail(struct req *r, struct strbuf *sb, const char *code, const char *msg)
{
	cx_frame_end(sb, code, msg);
	flush(r, sb);
}

/* One run of a stream (see the file's comment). */
static void pump(struct api_ctx *ctx, struct req *r, struct pstream *ps)
{
	struct strbuf sb = STRBUF_INIT;
	double now = util_mono_ms();
	struct db *db = route_db(ctx);
	struct db_res *res = NULL;
	struct cmd_view v;
	long long wait_ms;
	int rc, ended, slow = 0;

	if (r->wait.stopping) {
		stream_fail(r, &sb, "unavailable", "the service is restarting: reconnect");
		goto out;
	}
	if (ps->deadline > 0 && now >= ps->deadline) {
		stream_fail(r, &sb, "deadline_exceeded", "the stream's Connect-Timeout-Ms passed");
		goto out;
	}
	if (db == NULL || (rc = sapi_cmd_load(db, ps->sid, ps->cid, &res, &v)) < 0) {
		stream_fail(r, &sb, "unavailable", "the database is unavailable; retry");
		goto out;
	}
	if (rc == 0) {
		stream_fail(r, &sb, "not_found", "the process no longer exists");
		goto out;
	}
	/* bursts while nginx's connection has room for one, a few per run */
	for (int burst = 0; burst < STREAM_BURSTS; burst++) {
		long long budget = STREAM_BURST;

		if (!http_stream_room(r, 65536)) {
			if (burst > 0)
				break;
			slow = 1;
			wait_ms = SLOW_CLIENT_MS;
			goto wait;
		}
		for (int k = 0; k < 2 && budget > 0; k++) {
			long long total = k == 0 ? v.stdout_bytes : v.stderr_bytes;

			while (ps->sent[k] < total && budget > 0) {
				long long want = total - ps->sent[k];
				unsigned char *d = NULL;
				size_t len = 0;

				if (want > STREAM_PIECE)
					want = STREAM_PIECE;
				if (want > budget)
					want = budget;
				if (jd_read_output(db, ps->cid, k == 0 ? JD_STDOUT : JD_STDERR,
						   ps->sent[k], want, &d, &len) < 0) {
					stream_fail(r, &sb, "unavailable",
						    "the database is unavailable; retry");
					goto out;
				}
				if (len == 0) {
					free(d);
					break;
				}
				cx_frame_json(&sb, 0, cx_ev_data(k == 1, d, len));
				free(d);
				ps->sent[k] += (long long)len;
				budget -= (long long)len;
			}
		}
		if (sb.len == 0)
			break; /* all that is counted is out */
		if (flush(r, &sb) < 0)
			goto out; /* the connection failed: nothing more to say */
	}
	ended = sapi_cmd_ended(v.status) && ps->sent[0] >= v.stdout_bytes &&
		ps->sent[1] >= v.stderr_bytes;
	if (ended) {
		send_end(&sb, &v);
		flush(r, &sb);
		goto out;
	}
	if (now >= ps->keep_at) {
		cx_frame_json(&sb, 0, cx_ev_keepalive());
		ps->keep_at = now + (double)ps->keep_ms;
	}
	if (flush(r, &sb) < 0)
		goto out; /* the connection failed: nothing more to say */
	/* more already counted: come back at the next tick */
	wait_ms = ps->keep_at - now;
wait:
	if (ps->deadline > 0 && ps->deadline - now < (double)wait_ms)
		wait_ms = (long long)(ps->deadline - now) + 1;
	if (wait_ms < 1)
		wait_ms = 1;
	/* a slow client waits for its connection (or the command's end), not for output */
	if (!wt_stream(r, ps->key_id,
		       &(struct wt_cond){ WT_COMMAND_OUTPUT, ps->cid, 3,
					  slow ? LLONG_MAX / 2 : ps->sent[0] + ps->sent[1] },
		       wait_ms))
		stream_fail(r, &sb, r->wait.stopping ? "unavailable" : "resource_exhausted",
			    r->wait.stopping ? "the service is restarting: reconnect"
					     : "too many open streams and waits for this key");
out:
	sb_release(&sb);
	db_res_free(res);
}

/* A new stream's state from the request's headers. */
static struct pstream *ps_new(struct req *r, const struct envd_caller *c, const char *cid,
			      long long pid)
{
	struct pstream *ps = calloc(1, sizeof *ps);
	long long t = cx_timeout_ms(e2b_param(r, "HTTP_CONNECT_TIMEOUT_MS"));
	double now = util_mono_ms();

	if (ps == NULL)
		return NULL;
	snprintf(ps->sid, sizeof ps->sid, "%s", c->sid);
	snprintf(ps->cid, sizeof ps->cid, "%s", cid);
	snprintf(ps->key_id, sizeof ps->key_id, "%s", c->who.key_id);
	ps->pid = pid;
	ps->deadline = t > 0 ? now + (double)t : 0;
	ps->keep_ms = 1000 * cx_keepalive_s(e2b_param(r, "HTTP_KEEPALIVE_PING_INTERVAL"), 50);
	ps->keep_at = now + (double)ps->keep_ms;
	r->stream.state = ps;
	r->stream.release = ps_release;
	return ps;
}

/* Begins a stream for command cid: the headers and `start`, then the first run. */
static void stream_begin(struct api_ctx *ctx, struct req *r, const struct envd_caller *c,
			 const char *cid, long long pid, const long long from[2])
{
	struct strbuf sb = STRBUF_INIT;
	struct pstream *ps = ps_new(r, c, cid, pid);

	if (ps == NULL) {
		envd_stream_refuse(r, "internal", "out of memory");
		return;
	}
	ps->sent[0] = from[0];
	ps->sent[1] = from[1];
	if (http_stream_head(r, 200, CX_CTYPE_STREAM) < 0 ||
	    cx_frame_json(&sb, 0, cx_ev_start(pid)) < 0 || flush(r, &sb) < 0) {
		sb_release(&sb);
		return;
	}
	sb_release(&sb);
	pump(ctx, r, ps);
}

static void do_start(struct api_ctx *ctx, struct req *r, const struct envd_caller *c,
		     const json_t *req)
{
	const char *why = NULL, *code;
	struct cfg eff = *ctx->cfg;
	json_t *body;
	char path[128], msg[256];
	const long long zero[2] = { 0, 0 };
	struct sub s;

	val_key_limits(&eff, c->who.max_limits);
	body = start_body(req, eff.limit_max[LIM_OUTPUT_BYTES], &why);
	if (body == NULL) {
		envd_stream_refuse(r, "invalid_argument", why);
		return;
	}
	snprintf(path, sizeof path, "/v1/sessions/%s/commands", c->sid);
	if (call(ctx, r, c, path, body, &s) < 0 || s.deferred) {
		sub_free(&s);
		if (!r->wait.deferred)
			envd_stream_refuse(r, "internal", "the command could not be created");
		return;
	}
	if (s.status != 202 || !json_is_string(json_object_get(s.json, "id"))) {
		sub_error(&s, &code, msg, sizeof msg);
		envd_stream_refuse(r, code, msg);
		sub_free(&s);
		return;
	}
	stream_begin(ctx, r, c, json_string_value(json_object_get(s.json, "id")),
		     json_integer_value(json_object_get(s.json, "pid")), zero);
	sub_free(&s);
}

/* Sandbox-Output-Offset: "N,M" (ours, not E2B's): replay stdout from byte N and stderr
 * from byte M; envd's Connect sends only what comes after it. */
static int replay_from(const char *v, long long out[2])
{
	char *end;

	if (v == NULL)
		return 0;
	out[0] = strtoll(v, &end, 10);
	if (end == v || *end != ',' || out[0] < 0)
		return -1;
	v = end + 1;
	out[1] = strtoll(v, &end, 10);
	return end == v || *end != '\0' || out[1] < 0 ? -1 : 1;
}

static void do_connect(struct api_ctx *ctx, struct req *r, const struct envd_caller *c,
		       const json_t *req)
{
	char cid[40], msg[128];
	long long pid = 0, from[2] = { 0, 0 };
	struct db *db = route_db(ctx);
	struct db_res *res = NULL;
	struct cmd_view v;
	int rc, replay = replay_from(e2b_param(r, "HTTP_SANDBOX_OUTPUT_OFFSET"), from);

	if (replay < 0) {
		envd_stream_refuse(r, "invalid_argument",
			      "Sandbox-Output-Offset must be two byte offsets: stdout,stderr");
		return;
	}
	if (db == NULL || (rc = select_process(db, c->sid, req, cid, sizeof cid, &pid, msg,
						sizeof msg)) < 0) {
		envd_stream_refuse(r, "unavailable", "the database is unavailable; retry");
		return;
	}
	if (rc == 0) {
		envd_stream_refuse(r, "not_found", msg);
		return;
	}
	if (!replay) {
		/* from now on, as envd does */
		if (sapi_cmd_load(db, c->sid, cid, &res, &v) <= 0) {
			envd_stream_refuse(r, "not_found", "the process no longer exists");
			return;
		}
		from[0] = v.stdout_bytes;
		from[1] = v.stderr_bytes;
		db_res_free(res);
	}
	stream_begin(ctx, r, c, cid, pid, from);
}

/* ------------------------------------------------------------------ unary calls */

static void send_empty(struct req *r)
{
	http_send_json(r, 200, json_object(), NULL);
}

/* SendInput, CloseStdin, SendSignal: the command's stdin or kill route. */
static void do_relay(struct api_ctx *ctx, struct req *r, const struct envd_caller *c,
		     const char *method, const json_t *req)
{
	char cid[40], msg[256], path[160];
	const char *code, *what;
	long long pid;
	struct db *db = route_db(ctx);
	json_t *body;
	struct sub s;
	int rc;

	if (db == NULL ||
	    (rc = select_process(db, c->sid, req, cid, sizeof cid, &pid, msg, sizeof msg)) < 0) {
		envd_send_error(r, "unavailable", "the database is unavailable; retry");
		return;
	}
	if (rc == 0) {
		envd_send_error(r, "not_found", msg);
		return;
	}
	if (strcmp(method, "SendSignal") == 0) {
		const char *sig = cx_signal_name(json_object_get(req, "signal"));
		if (sig == NULL) {
			envd_send_error(r, "invalid_argument",
					"signal must be SIGNAL_SIGKILL or SIGNAL_SIGTERM (or SIGINT, "
					"SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2)");
			return;
		}
		what = "kill";
		body = json_pack("{s:s}", "signal", sig);
	} else if (strcmp(method, "CloseStdin") == 0) {
		what = "stdin";
		body = json_pack("{s:b}", "close", 1);
	} else {
		const json_t *in = json_object_get(req, "input");
		const json_t *b64 = json_object_get(in, "stdin");
		if (json_object_get(in, "pty") != NULL) {
			envd_send_error(r, "unimplemented", "pty input: terminals are not supported");
			return;
		}
		if (!json_is_string(b64)) {
			envd_send_error(r, "invalid_argument", "input.stdin must be base64 bytes");
			return;
		}
		what = "stdin";
		body = json_pack("{s:O}", "data_base64", (json_t *)b64);
	}
	snprintf(path, sizeof path, "/v1/sessions/%s/commands/%s/%s", c->sid, cid, what);
	if (call(ctx, r, c, path, body, &s) < 0) {
		sub_free(&s);
		envd_send_error(r, "internal", "the request could not be carried out");
		return;
	}
	if (s.deferred) {
		sub_free(&s);
		return; /* the waiter's: this runs again */
	}
	if (s.status >= 200 && s.status <= 299)
		send_empty(r);
	else if (s.status == 409 && strcmp(what, "kill") == 0)
		envd_send_error(r, "not_found", "the process has ended"); /* envd: kill() false */
	else {
		sub_error(&s, &code, msg, sizeof msg);
		envd_send_error(r, code, msg);
	}
	sub_free(&s);
}

/* List: the sandbox's running commands. Env values are not shown (REST never shows
 * them back either). */
static void do_list(struct api_ctx *ctx, struct req *r, const struct envd_caller *c)
{
	struct db *db = route_db(ctx);
	struct db_res *res = db ? db_query_p(db, "SELECT pid, tag, command, argv_json, cwd"
						 " FROM session_commands WHERE session_id = ? AND"
						 " status IN ('queued', 'running') ORDER BY seq"
						 " LIMIT 1000",
					     db_str(c->sid))
				: NULL;
	json_t *list = json_array();

	if (res == NULL) {
		json_decref(list);
		envd_send_error(r, "unavailable", "the database is unavailable; retry");
		return;
	}
	for (size_t i = 0; i < db_res_rows(res); i++) {
		const char *argv_json = db_res_s(res, i, "argv_json"), *tag = db_res_s(res, i, "tag");
		json_t *argv = argv_json ? json_loads(argv_json, 0, NULL) : NULL, *args = json_array();
		char cwd[4200];
		const char *cmd = "/bin/sh";

		if (json_is_array(argv) && json_array_size(argv) > 0) {
			cmd = json_string_value(json_array_get(argv, 0));
			for (size_t k = 1; k < json_array_size(argv); k++)
				json_array_append(args, json_array_get(argv, k));
		} else {
			json_array_append_new(args, json_string("-c"));
			json_array_append_new(args, json_string(db_res_s(res, i, "command")
								? db_res_s(res, i, "command") : ""));
		}
		if (e2b_path_abs(db_res_s(res, i, "cwd") ? db_res_s(res, i, "cwd") : "", cwd,
				 sizeof cwd) < 0)
			snprintf(cwd, sizeof cwd, "%s", E2B_HOME);
		json_t *p = json_pack("{s:I, s:{s:s, s:o, s:{}, s:s}}", "pid",
				      (json_int_t)db_res_i(res, i, "pid", 0), "config", "cmd",
				      cmd ? cmd : "", "args", args, "envs", "cwd", cwd);
		if (p != NULL && tag != NULL)
			json_object_set_new(p, "tag", json_string(tag));
		if (p != NULL)
			json_array_append_new(list, p);
		json_decref(argv);
	}
	db_res_free(res);
	http_send_json(r, 200, json_pack("{s:o}", "processes", list), NULL);
}

/* ------------------------------------------------------------------ the route */

static int is_stream(const char *m)
{
	return strcmp(m, "Start") == 0 || strcmp(m, "Connect") == 0;
}

void h_envd_process(struct api_ctx *ctx, struct req *r, const struct identity *unused,
		    const struct route_args *a)
{
	const char *m = a->id, *why = NULL;
	struct envd_caller c;
	struct envd_err e;
	json_t *req = NULL;

	(void)unused;
	if (r->stream.state != NULL) { /* a stream's next run */
		pump(ctx, r, r->stream.state);
		return;
	}
	if (!is_stream(m) && strcmp(m, "List") != 0 && strcmp(m, "SendInput") != 0 &&
	    strcmp(m, "CloseStdin") != 0 && strcmp(m, "SendSignal") != 0) {
		envd_send_error(r, "unimplemented",
				strcmp(m, "Update") == 0 || strcmp(m, "StreamInput") == 0
					? "terminals and client streams are not supported (docs/E2B.md)"
					: "no such method of process.Process");
		return;
	}
	if (envd_resolve(ctx, r, &c, &e) < 0) {
		/* an ended sandbox: unavailable (the SDK's SandboxNotFoundError), as efs.c */
		if (e.http == 404)
			e.code = "unavailable";
		if (is_stream(m))
			envd_stream_refuse(r, e.code, e.msg);
		else
			envd_send_error(r, e.code, e.msg);
		return;
	}
	if (is_stream(m)) {
		if (r->content_type == NULL || strncmp(r->content_type, CX_CTYPE_STREAM,
						       strlen(CX_CTYPE_STREAM)) != 0) {
			envd_stream_refuse(r, "invalid_argument",
				      "a stream's request must be application/connect+json");
			return;
		}
		if (cx_unframe_json(r->body, r->body_len, &req, &why) < 0) {
			envd_stream_refuse(r, "invalid_argument", why);
			return;
		}
		if (strcmp(m, "Start") == 0)
			do_start(ctx, r, &c, req);
		else
			do_connect(ctx, r, &c, req);
		json_decref(req);
		return;
	}
	if (r->content_type == NULL || strncmp(r->content_type, "application/json", 16) != 0) {
		envd_send_error(r, "invalid_argument", "a unary request must be application/json");
		return;
	}
	req = json_loadb(r->body ? r->body : "", r->body_len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(req)) {
		json_decref(req);
		envd_send_error(r, "invalid_argument", "the request is not a JSON object");
		return;
	}
	if (strcmp(m, "List") == 0)
		do_list(ctx, r, &c);
	else
		do_relay(ctx, r, &c, m, req);
	json_decref(req);
}
