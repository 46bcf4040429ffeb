/* envd's filesystem for E2B sandboxes (app/e2b/e2b.h; docs/E2B.md "envd: filesystem"):
 * the Connect unary methods filesystem.Filesystem/Stat, ListDir, MakeDir, Move and
 * Remove (JSON codec), GET and POST /files (raw bytes; multipart/form-data or
 * application/octet-stream uploads) and GET /health. Each call names its sandbox and
 * proves it with the envd token (envd_resolve), then acts under the identity of the
 * sandbox's key exactly as the session API does: every file operation is a request
 * row relayed to the session's supervisor (app/sessions/srelay.h: the same waits,
 * charges and budgets), which works on the workspace by fd (sandbox-runner/session/
 * sfiles.c, sfentry.c). Paths are E2B paths: /home/user (the workspace) and below;
 * anything else is refused, naming the limitation. WatchDir is a stream: ewatch.c. */
#include "e2b.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "e2bctl.h"
#include "efsform.h"
#include "http_util.h"
#include "log.h"
#include "sapi.h"
#include "srelay.h"
#include "sreq.h"
#include "util.h"

route_fn h_envd_fs, h_envd_file_get, h_envd_file_post, h_envd_health;

/* How an envd answer is shaped: a Connect unary error, or /files' {"code":N,...}. */
enum form { RPC, PLAIN };

static void fail(struct req *r, enum form f, int http, const char *code, const char *msg)
{
	if (f == RPC)
		envd_send_error(r, code, msg);
	else
		e2b_send_error(r, http, msg, http == 429 || http == 503 ? "Retry-After: 1\r\n" : NULL);
}

/* The caller's sandbox, running: 0, or -1 after answering. A sandbox that is not
 * running answers as E2B's proxy does for a dead one (502; the SDK's isRunning reads
 * false, its calls a timeout), never not_found, which the SDK would take for "no such
 * file". */
static int begin(struct api_ctx *ctx, struct req *r, enum form f, struct envd_caller *c)
{
	struct envd_err e;
	struct sess s;
	char msg[200];
	int rc = 0;

	if (envd_resolve(ctx, r, c, &e) < 0) {
		if (e.http == 404)
			fail(r, f, 502, "unavailable", e.msg);
		else
			fail(r, f, e.http, e.code, e.msg);
		return -1;
	}
	if (srelay_resuming(r))
		return 0; /* the first run saw it running and sent the request */
	if (sapi_open_session(ctx, r, &c->who, c->sid, &s) < 0)
		return -1;
	if (strcmp(s.v.status, "ready") != 0) {
		snprintf(msg, sizeof msg, "sandbox %s is not running (status %s)", c->sid,
			 s.v.status);
		fail(r, f, 502, "unavailable", msg);
		rc = -1;
	}
	sapi_sess_free(&s);
	return rc;
}

/* An E2B path as the workspace path of a request: 0, or -1 after a 400 naming what is
 * wrong (a path outside /home/user names the limitation). */
static int rel_path(struct req *r, enum form f, const char *what, const char *path, char *out,
		    size_t n)
{
	const char *why;
	char msg[400];

	if (path != NULL && e2b_path_rel(path, out, n, &why) == 0)
		return 0;
	if (path == NULL)
		why = "it is required";
	snprintf(msg, sizeof msg, "%s: %s%s", what, why,
		 path && *path == '/' && strncmp(path, E2B_HOME, strlen(E2B_HOME)) != 0
			 ? "; only " E2B_HOME " (the sandbox's workspace) is reachable through the"
			   " file API: reach /tmp and the rest through a command"
			 : "");
	fail(r, f, 400, "invalid_argument", msg);
	return -1;
}

/* The Connect code of a supervisor's answer code (docs/SESSIONS.md). */
static const char *connect_code(const char *ours, int http)
{
	static const char *const map[][2] = {
		{ "not_found", "not_found" },           { "invalid_path", "invalid_argument" },
		{ "invalid_args", "invalid_argument" }, { "invalid_mode", "invalid_argument" },
		{ "symlink", "failed_precondition" },   { "not_regular_file", "failed_precondition" },
		{ "not_a_directory", "failed_precondition" }, { "too_large", "resource_exhausted" },
		{ "disk_full", "resource_exhausted" },  { "session_ended", "unavailable" },
	};

	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(ours, map[i][0]) == 0)
			return map[i][1];
	return envd_code_of_http(http);
}

/* A request that did not end `done`, in form f: the relay's own refusals, or the
 * supervisor's (code, status) of common/sreq.c's table with its message. A storage
 * failure drops a connection that is gone (as route_db_error does). */
static void relay_fail(struct api_ctx *ctx, struct req *r, enum form f, enum srelay_rc rc,
		       const struct srelay_answer *a)
{
	static const struct {
		enum srelay_rc rc;
		int http;
		const char *code, *msg;
	} fixed[] = {
		{ SREQ_DB, 503, "unavailable", "the database is unavailable; retry later" },
		{ SREQ_QUOTA, 429, "resource_exhausted", "the API key has no room left for stored"
		  " bytes (remove files, kill sandboxes or wait for old ones to be purged)" },
		{ SREQ_KEY_SHARE, 429, "resource_exhausted", "this key already has"
		  " api_wait_slots_per_key requests waiting for an answer: retry" },
		{ SREQ_NO_ROOM, 503, "unavailable", "the API instance holds api_wait_capacity"
		  " waiting requests: retry later" },
		{ SREQ_TIMEOUT, 504, "deadline_exceeded", "the sandbox's runner host did not take the"
		  " request in time: it will not be carried out" },
		{ SREQ_IN_PROGRESS, 504, "deadline_exceeded", "the sandbox's runner host took the"
		  " request and has not answered yet: look at its effect later" },
	};
	const char *code, *msg;
	int st;

	if (rc == SREQ_DB && f == PLAIN) {
		e2b_db_error(ctx, r);
		return;
	}
	if (rc == SREQ_DB && ctx->db && db_gone(ctx->db)) {
		log_kv("error", "db_error", "error", db_error(ctx->db), (char *)NULL);
		db_close(ctx->db);
		ctx->db = NULL;
	}
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (fixed[i].rc == rc) {
			fail(r, f, fixed[i].http, fixed[i].code, fixed[i].msg);
			return;
		}
	st = a->http_status;
	code = json_string_value(json_object_get(a->result, "error"));
	msg = json_string_value(json_object_get(a->result, "message"));
	if (!sreq_passthrough(st, code)) {
		fail(r, f, 500, "internal", "the sandbox's runner host gave no usable answer");
		return;
	}
	if (msg == NULL || strlen(msg) > 512 || !util_utf8_valid((const unsigned char *)msg, strlen(msg)))
		msg = "the sandbox's runner host refused the request";
	if (strcmp(code, "session_ended") == 0)
		st = 502; /* as for a dead sandbox (begin) */
	fail(r, f, st, connect_code(code, st), msg);
}

/* Relays kind with args (and data) for the caller's sandbox: 1 done (a filled), 0
 * answered or deferred (the waiter re-dispatches the request). */
static int relay(struct api_ctx *ctx, struct req *r, enum form f, const struct envd_caller *c,
		 const char *kind, json_t *args, const void *data, size_t len,
		 struct srelay_answer *a)
{
	enum srelay_rc rc = srelay_call(ctx, r, &c->who, c->sid, kind, NULL, args, data, len, a);

	if (rc == SREQ_DONE)
		return 1;
	if (rc != SREQ_DEFERRED)
		relay_fail(ctx, r, f, rc, a);
	srelay_free(a);
	return 0;
}

/* ---- filesystem.Filesystem/{method} */

static const struct {
	const char *method, *kind;
} methods[] = {
	{ "Stat", "file_stat" },       { "ListDir", "file_listdir" }, { "MakeDir", "file_mkdir" },
	{ "Move", "file_move" },       { "Remove", "file_remove" },
};

/* The supervisor's args of a method's request body (JSON object q): NULL after a 400. */
static json_t *method_args(struct req *r, const char *kind, const json_t *q)
{
	char a[1100], b[1100];
	const json_t *d = json_object_get(q, "depth");
	long long depth = 1;

	if (strcmp(kind, "file_move") == 0)
		return rel_path(r, RPC, "source", json_string_value(json_object_get(q, "source")),
				a, sizeof a) < 0 ||
				       rel_path(r, RPC, "destination",
						json_string_value(json_object_get(q, "destination")),
						b, sizeof b) < 0
			       ? NULL
			       : json_pack("{s:s, s:s}", "source", a, "destination", b);
	if (rel_path(r, RPC, "path", json_string_value(json_object_get(q, "path")), a, sizeof a) < 0)
		return NULL;
	if (strcmp(kind, "file_listdir") != 0)
		return json_pack("{s:s}", "path", a);
	/* proto3 JSON: a uint32 is a number or a decimal string; 0 (absent) lists one level */
	if (json_is_integer(d))
		depth = json_integer_value(d);
	else if (json_is_string(d) &&
		 util_parse_ll(json_string_value(d), 0, 0xffffffffLL, &depth) < 0)
		depth = -1;
	if (depth < 0 || depth > 0xffffffffLL ||
	    (d && !json_is_integer(d) && !json_is_string(d) && !json_is_null(d))) {
		envd_send_error(r, "invalid_argument", "depth must be a non-negative integer");
		return NULL;
	}
	return json_pack("{s:s, s:I}", "path", a, "depth", (json_int_t)(depth < 1 ? 1 : depth));
}

/* The answer of a method whose request was done. */
static void method_answer(struct req *r, const char *kind, const json_t *res)
{
	json_t *out, *list, *e;
	size_t i;

	if (strcmp(kind, "file_remove") == 0) {
		http_send_json(r, 200, json_object(), NULL);
		return;
	}
	if (strcmp(kind, "file_listdir") == 0) {
		const char *cut = json_string_value(json_object_get(res, "cut"));
		char msg[300];
		if (json_is_true(json_object_get(res, "truncated"))) {
			snprintf(msg, sizeof msg, "the listing is larger than one answer (%s): list a"
				 " smaller depth or directory", cut ? cut : "session_list_max_files");
			envd_send_error(r, "resource_exhausted", msg);
			return;
		}
		list = json_array();
		json_array_foreach(json_object_get(res, "entries"), i, e)
			if ((out = efs_entry_info(e)) == NULL || json_array_append_new(list, out) < 0)
				break;
		if (list == NULL || i != json_array_size(json_object_get(res, "entries")) ||
		    !json_is_array(json_object_get(res, "entries"))) {
			json_decref(list);
			envd_send_error(r, "internal", "the sandbox's runner host gave a malformed listing");
			return;
		}
		http_send_json(r, 200, json_pack("{s:o}", "entries", list), NULL);
		return;
	}
	if (strcmp(kind, "file_mkdir") == 0 && json_is_false(json_object_get(res, "created"))) {
		envd_send_error(r, "already_exists", "the directory already exists");
		return;
	}
	if ((out = efs_entry_info(res)) == NULL) {
		envd_send_error(r, "internal", "the sandbox's runner host gave a malformed entry");
		return;
	}
	http_send_json(r, 200, json_pack("{s:o}", "entry", out), NULL);
}

void h_envd_fs(struct api_ctx *ctx, struct req *r, const struct identity *who,
	       const struct route_args *a)
{
	struct envd_caller c;
	struct srelay_answer ans;
	const char *kind = NULL;
	json_t *q, *args;
	char msg[200];

	(void)who; /* public: the envd token names the sandbox and its key */
	if (a->rest && strcmp(a->rest, "WatchDir") == 0) { /* a stream: ewatch.c */
		struct envd_err e;
		if (r->stream.state == NULL && envd_resolve(ctx, r, &c, &e) < 0) {
			envd_stream_refuse(r, e.http == 404 ? "unavailable" : e.code, e.msg);
			return;
		}
		envd_watch(ctx, r, &c);
		return;
	}
	if (begin(ctx, r, RPC, &c) < 0)
		return;
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
		if (a->rest && strcmp(a->rest, methods[i].method) == 0)
			kind = methods[i].kind;
	if (kind == NULL) {
		snprintf(msg, sizeof msg, "filesystem.Filesystem/%.60s is not implemented here",
			 a->rest ? a->rest : "");
		envd_send_error(r, "unimplemented", msg);
		return;
	}
	if (!http_is_json_type(r->content_type)) {
		envd_send_error(r, "invalid_argument", "a unary call's Content-Type is"
				" application/json (Connect protocol, JSON codec)");
		return;
	}
	q = json_loadb(r->body ? r->body : "", r->body_len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(q)) {
		json_decref(q);
		envd_send_error(r, "invalid_argument", "the request body is not a JSON object");
		return;
	}
	args = method_args(r, kind, q);
	json_decref(q);
	if (args == NULL)
		return;
	if (relay(ctx, r, RPC, &c, kind, args, NULL, 0, &ans)) {
		method_answer(r, kind, ans.result);
		srelay_free(&ans);
	}
	json_decref(args);
}

/* ---- GET/POST /files, GET /health */

/* ?path= as a workspace path: 0, or -1 after a 400. */
static int query_path(struct req *r, char *rel, size_t n, int *present)
{
	char raw[1100];
	int rc = efs_query(r->query, "path", raw, sizeof raw);

	*present = rc == 1;
	if (rc < 0) {
		e2b_send_error(r, 400, "path: malformed or too long", NULL);
		return -1;
	}
	return rc == 0 ? 0 : rel_path(r, PLAIN, "path", raw, rel, n);
}

void h_envd_file_get(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     const struct route_args *a)
{
	struct envd_caller c;
	struct srelay_answer ans;
	char rel[1100];
	int present;
	json_t *args;

	(void)who, (void)a;
	if (begin(ctx, r, PLAIN, &c) < 0 || query_path(r, rel, sizeof rel, &present) < 0)
		return;
	if (!present) {
		e2b_send_error(r, 400, "path: it is required", NULL);
		return;
	}
	args = json_pack("{s:s}", "path", rel);
	if (relay(ctx, r, PLAIN, &c, "file_get", args, NULL, 0, &ans)) {
		if ((long long)ans.len > ctx->cfg->session_file_max_bytes)
			e2b_send_error(r, 500, "the sandbox's runner host sent more than"
				       " session_file_max_bytes", NULL);
		else
			http_send_bytes(r, 200, "application/octet-stream",
					ans.data ? (const void *)ans.data : "", ans.len, NULL);
		srelay_free(&ans);
	}
	json_decref(args);
}

/* The files of an upload: target workspace paths and their bytes. */
struct upload {
	int n;
	struct efs_part *parts;   /* multipart: the body's parts */
	char (*rel)[1100];        /* each file's workspace path */
	const unsigned char **data;
	size_t *len, total;
};

static void upload_free(struct upload *u)
{
	free(u->parts);
	free(u->rel);
	free(u->data);
	free(u->len);
}

/* The files of r's body (multipart: the "file" parts, each to ?path or its file name;
 * else the body itself to ?path): 0, or -1 after a 400/413. */
static int upload_read(struct api_ctx *ctx, struct req *r, struct upload *u)
{
	char rel[1100], msg[300];
	const char *why, *enc = e2b_param(r, "HTTP_CONTENT_ENCODING");
	int present, k, multi = r->content_type &&
				strncasecmp(r->content_type, "multipart/form-data", 19) == 0;

	memset(u, 0, sizeof *u);
	if (enc && *enc && strcasecmp(enc, "identity") != 0) {
		e2b_send_error(r, 400, "compressed uploads (Content-Encoding) are not supported:"
			       " write without gzip", NULL);
		return -1;
	}
	if (query_path(r, rel, sizeof rel, &present) < 0)
		return -1;
	u->parts = calloc(EFS_PARTS_MAX, sizeof *u->parts);
	u->rel = calloc(EFS_PARTS_MAX, sizeof *u->rel);
	u->data = calloc(EFS_PARTS_MAX, sizeof *u->data);
	u->len = calloc(EFS_PARTS_MAX, sizeof *u->len);
	if (!u->parts || !u->rel || !u->data || !u->len) {
		e2b_send_error(r, 500, "out of memory", NULL);
		return -1;
	}
	k = multi ? efs_multipart(r->content_type, (const unsigned char *)r->body, r->body_len,
				  u->parts, EFS_PARTS_MAX, &why) : 0;
	if (k < 0) {
		snprintf(msg, sizeof msg, "upload: %s (at most %d files)", why, EFS_PARTS_MAX);
		e2b_send_error(r, 400, msg, NULL);
		return -1;
	}
	for (int i = 0; i < (multi ? k : 1); i++) {
		const struct efs_part *p = multi ? &u->parts[i] : NULL;
		if (p && strcmp(p->field, "file") != 0)
			continue;
		if (p && !present && rel_path(r, PLAIN, "file name", p->filename, u->rel[u->n],
					      sizeof u->rel[0]) < 0)
			return -1;
		if (present)
			snprintf(u->rel[u->n], sizeof u->rel[0], "%s", rel);
		u->data[u->n] = p ? p->data : (const unsigned char *)(r->body ? r->body : "");
		u->len[u->n] = p ? p->len : r->body_len;
		if ((long long)u->len[u->n] > ctx->cfg->session_file_max_bytes) {
			e2b_send_error(r, 413, "a file is larger than session_file_max_bytes", NULL);
			return -1;
		}
		u->total += u->len[u->n++];
	}
	if (u->n == 0 || (!multi && !present) || (present && u->n > 1)) {
		e2b_send_error(r, 400, u->n == 0 ? "upload: no \"file\" part"
				       : present ? "upload: several files with one ?path: name each"
						   " file by its file name instead"
						 : "upload: ?path is required", NULL);
		return -1;
	}
	return 0;
}

void h_envd_file_post(struct api_ctx *ctx, struct req *r, const struct identity *who,
		      const struct route_args *a)
{
	struct envd_caller c;
	struct srelay_answer ans;
	struct upload u;
	unsigned char *buf = NULL;
	json_t *files, *args = NULL, *out;
	char abs[1200];

	(void)who, (void)a;
	if (begin(ctx, r, PLAIN, &c) < 0)
		return;
	if (upload_read(ctx, r, &u) < 0)
		goto done;
	files = json_array();
	buf = malloc(u.total + 1);
	for (size_t i = 0, off = 0; files && buf && i < (size_t)u.n; off += u.len[i], i++) {
		memcpy(buf + off, u.data[i], u.len[i]);
		json_array_append_new(files, json_pack("{s:s, s:I}", "path", u.rel[i], "size",
						       (json_int_t)u.len[i]));
	}
	args = files && buf ? json_pack("{s:o}", "files", files) : (json_decref(files), NULL);
	if (args == NULL) {
		e2b_send_error(r, 500, "out of memory", NULL);
		goto done;
	}
	if (relay(ctx, r, PLAIN, &c, "file_put_many", args, buf, u.total, &ans)) {
		out = json_array();
		for (int i = 0; out && i < u.n; i++)
			if (e2b_path_abs(u.rel[i], abs, sizeof abs) == 0)
				json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "name",
								     strrchr(abs, '/') + 1, "type",
								     "file", "path", abs));
		http_send_json(r, 200, out, NULL);
		srelay_free(&ans);
	}
done:
	json_decref(args);
	free(buf);
	upload_free(&u);
}

void h_envd_health(struct api_ctx *ctx, struct req *r, const struct identity *who,
		   const struct route_args *a)
{
	static const char head[] = "Status: 204 No Content\r\nCache-Control: no-store\r\n\r\n";
	struct envd_caller c;

	(void)who, (void)a;
	if (begin(ctx, r, PLAIN, &c) < 0)
		return;
	FCGX_PutStr(head, (int)sizeof head - 1, r->fcgi->out);
	r->status = 204;
	r->sent_bytes = 0;
}
