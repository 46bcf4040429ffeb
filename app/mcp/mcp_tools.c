/* POST /v1/mcp: the MCP tools over the REST API's own code (see app/mcp/mcp.h).
 *
 * Jobs (run_command, get_job) go through validate.c and jobs.c as POST /v1/jobs and
 * GET /v1/jobs/{id} do. Session tools call the session handlers themselves with a
 * sub-request: the request's method, path, query and body are set to the REST call's
 * for the duration of the call and its FastCGI output stream is swapped for a bounded
 * memory stream, whose HTTP answer becomes the tool result. Waiting stays the waiter's:
 * a handler (or this file) that defers marks this very request deferred; the worker
 * re-dispatches POST /v1/mcp, which rebuilds the same sub-request from the same body,
 * and the handler resumes from r->wait as it does for its own route. */
#include "mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_routes.h"
#include "auth.h"
#include "http.h"
#include "http_util.h"
#include "jobs.h"
#include "log.h"
#include "render.h"
#include "routes.h"
#include "rtlive.h"
#include "sessions.h"
#include "sha256.h"
#include "strbuf.h"
#include "subcall.h"
#include "util.h"
#include "validate.h"
#include "waiter.h"

/* The session routes the tools use, for their captures (same patterns as api_routes.h). */
static const struct route sroutes[] = {
	{ "GET", "/v1/runtimes", h_runtimes, "h_runtimes", 0 },
	{ "POST", "/v1/sessions", h_sess_create, "h_sess_create", 0 },
	{ "GET", "/v1/sessions/{id}", h_sess_get, "h_sess_get", 0 },
	{ "POST", "/v1/sessions/{id}/close", h_sess_close, "h_sess_close", 0 },
	{ "GET", "/v1/sessions/{id}/commands", h_cmd_list, "h_cmd_list", 0 },
	{ "POST", "/v1/sessions/{id}/commands", h_cmd_create, "h_cmd_create", 0 },
	{ "GET", "/v1/sessions/{id}/commands/{cid}", h_cmd_get, "h_cmd_get", 0 },
	{ "GET", "/v1/sessions/{id}/commands/{cid}/output", h_cmd_output, "h_cmd_output", 0 },
	{ "GET", "/v1/sessions/{id}/files", h_files_list, "h_files_list", 0 },
	{ "GET", "/v1/sessions/{id}/files/{path*}", h_file_get, "h_file_get", 0 },
	{ "PUT", "/v1/sessions/{id}/files/{path*}", h_file_put, "h_file_put", 0 },
};

/* A session handler through the generic sub-request (app/http/subcall.h), within the
 * routes above. */
static int sub_call(struct api_ctx *ctx, struct req *r, const struct identity *who,
		    const char *method, const char *path, const char *query, const void *body,
		    size_t len, struct sub *out)
{
	return subcall(ctx, r, who, sroutes, sizeof sroutes / sizeof sroutes[0], method, path,
		       query, body, len, out);
}

/* ------------------------------------------------------------------ answers */

static void send_rpc(struct req *r, int status, json_t *msg)
{
	http_send_json(r, status, msg, NULL);
}

static void send_rpc_error(struct req *r, json_t *id, const struct mcp_err *e)
{
	send_rpc(r, id == NULL && (e->code == MCP_PARSE_ERROR || e->code == MCP_INVALID_REQUEST)
			    ? 400 : 200, mcp_error(id, e));
}

/* An invalid-params error about one argument: "invalid params: <field> <what>". */
static void send_bad_arg(struct req *r, json_t *id, const char *field, const char *what)
{
	struct mcp_err e;

	mcp_fail(&e, MCP_INVALID_PARAMS, field, "invalid params: %s %s", field, what);
	send_rpc_error(r, id, &e);
}

static void send_result(struct req *r, json_t *id, json_t *result)
{
	struct mcp_err e;

	if (result == NULL) {
		mcp_fail(&e, MCP_INTERNAL_ERROR, NULL, "internal error");
		send_rpc_error(r, id, &e);
		return;
	}
	send_rpc(r, 200, mcp_response(id, result));
}

/* A sub-request's answer other than success: a 400 is invalid params naming the
 * argument; a 5xx an internal error; the rest (404 for an unknown or foreign id, 409,
 * 429, 403) a tool error result carrying the REST error. */
static void send_sub_error(struct req *r, json_t *id, const struct sub *s, const char *prefix)
{
	const json_t *err = json_object_get(s->json, "error");
	const char *field = json_string_value(json_object_get(err, "field"));
	const char *msg = json_string_value(json_object_get(err, "message"));
	struct mcp_err e;
	char f[200];

	if (s->status == 400 || s->status == 413 || s->status == 415) {
		snprintf(f, sizeof f, "arguments%s%s%s", prefix, field && *field ? "." : "",
			 field ? field : "");
		mcp_fail(&e, MCP_INVALID_PARAMS, f, "invalid params: %s: %s", f,
			 msg ? msg : "invalid");
		send_rpc_error(r, id, &e);
	} else if (s->status >= 500 || s->status == 0) {
		mcp_fail(&e, MCP_INTERNAL_ERROR, NULL, "internal error: %s",
			 msg ? msg : "the request could not be completed; retry later");
		send_rpc_error(r, id, &e);
	} else {
		send_result(r, id, mcp_rest_error_result(s->status, s->json));
	}
}

static void send_not_found(struct req *r, json_t *id, const char *what)
{
	char msg[64];
	json_t *b;

	snprintf(msg, sizeof msg, "no such %s", what);
	b = http_error_body("not_found", msg, NULL);
	send_result(r, id, mcp_rest_error_result(404, b));
	json_decref(b);
}

/* ------------------------------------------------------------------ jobs */

static void answer_job(struct api_ctx *ctx, struct req *r, const struct identity *who,
		       json_t *rpc_id, const char *job_id)
{
	struct job_set set = { 0 };
	enum jobs_rc rc = jobs_get(ctx->db, who, job_id, ctx->cfg->inline_output_bytes, &set);
	json_t *job;

	if (rc == JOBS_NOT_FOUND) {
		send_not_found(r, rpc_id, "job");
	} else if (rc != JOBS_OK) {
		struct mcp_err e;
		mcp_fail(&e, MCP_INTERNAL_ERROR, NULL, "internal error: storage unavailable");
		send_rpc_error(r, rpc_id, &e);
	} else {
		job = render_job(&set.v[0]);
		send_result(r, rpc_id, job ? mcp_job_result(job) : NULL);
		json_decref(job);
	}
	jobs_set_free(&set);
}

/* Waits for job id (WT_JOB_DONE) up to `wait` s: 1 when deferred. */
static int defer_job(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     const char *id, long long wait)
{
	enum job_state st;

	if (wait <= 0 || r->wait.resumed)
		return 0;
	if (jobs_state(ctx->db, id, &st) == JOBS_OK && js_is_terminal(st))
		return 0;
	return wt_defer(r, who->key_id, &(struct wt_cond){ WT_JOB_DONE, id, 0, 0 }, wait);
}

static void tool_run(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     json_t *rpc_id, const json_t *args)
{
	struct cfg eff = *ctx->cfg;
	struct job_req jr;
	struct val_err ve;
	struct mcp_err e;
	unsigned char hash[32];
	char id[UUID_STR_LEN], f[200], *text;
	json_t *body;
	enum jobs_rc rc;
	int live = 0;

	if (r->wait.resumed) { /* the job exists: r->wait.id */
		answer_job(ctx, r, who, rpc_id, r->wait.id);
		return;
	}
	body = mcp_tool_body("run_command", args);
	text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (text == NULL) {
		send_result(r, rpc_id, NULL);
		return;
	}
	val_key_limits(&eff, who->max_limits);
	if (val_job_request(text, strlen(text), &eff, who->allow_network, &jr, &ve) < 0 ||
	    val_job_profile(&jr, who->profiles, who->nprofiles, &ve) < 0 ||
	    (live = rtl_check(ctx->db, &jr, &ve)) == -1) {
		snprintf(f, sizeof f, "arguments%s%s", ve.field[0] ? "." : "", ve.field);
		if (ve.status == 403 || ve.status == 422) /* the key's or the hosts' answer */
			send_result(r, rpc_id, mcp_tool_result(ve.message, json_pack(
				"{s:{s:s, s:s, s:s}}", "error", "code", ve.code, "message",
				ve.message, "field", f), 1));
		else {
			mcp_fail(&e, MCP_INVALID_PARAMS, f, "invalid params: %s: %s", f, ve.message);
			send_rpc_error(r, rpc_id, &e);
		}
		val_job_free(&jr);
		free(text);
		return;
	}
	sha256_buf(text, strlen(text), hash);
	free(text);
	rc = live < 0 ? JOBS_DB : jobs_create(ctx->db, ctx->cfg, who, &jr, NULL, hash, id);
	val_job_free(&jr);
	if (rc == JOBS_QUOTA || rc == JOBS_STORAGE) {
		json_t *b = http_error_body("quota_exceeded", rc == JOBS_QUOTA ?
					    "too many queued or running jobs for this key" :
					    "stored-bytes quota exceeded for this key", NULL);
		send_result(r, rpc_id, mcp_rest_error_result(429, b));
		json_decref(b);
		return;
	}
	if (rc != JOBS_OK) {
		mcp_fail(&e, MCP_INTERNAL_ERROR, NULL, "internal error: storage unavailable");
		send_rpc_error(r, rpc_id, &e);
		return;
	}
	log_kv("info", "job_submitted", "job", id, "key", who->key_id, "via", "mcp", (char *)NULL);
	if (defer_job(ctx, r, who, id, mcp_wait_seconds(args, MCP_WAIT_DEFAULT)))
		return;
	answer_job(ctx, r, who, rpc_id, id);
}

static void tool_get_job(struct api_ctx *ctx, struct req *r, const struct identity *who,
			 json_t *rpc_id, const json_t *args)
{
	const char *id = json_string_value(json_object_get(args, "id"));
	struct job_set set = { 0 };

	if (strlen(id) >= WT_ID_MAX) {
		send_not_found(r, rpc_id, "job");
		return;
	}
	/* Wait only for a job the caller can see (jobs_get is the scoped read). */
	if (!r->wait.resumed && mcp_wait_seconds(args, 0) > 0 &&
	    jobs_get(ctx->db, who, id, 0, &set) == JOBS_OK) {
		jobs_set_free(&set);
		if (defer_job(ctx, r, who, id, mcp_wait_seconds(args, 0)))
			return;
	} else {
		jobs_set_free(&set);
	}
	answer_job(ctx, r, who, rpc_id, id);
}

/* ------------------------------------------------------------------ sessions */

/* An id that can be a path segment: [A-Za-z0-9-], 1..63 bytes (UUIDs). Others are
 * unknown ids: "not found" like any. */
static int seg_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n < 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == n;
}

/* Percent-encodes a file path for .../files/{path*} ('/' stays). */
static int enc_path(const char *p, char *out, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (o + 4 >= n)
			return -1;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~/", c) != NULL) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

/* A sub-request of a tool: its JSON answer (2xx) in s, or -1 after answering. */
static int call(struct api_ctx *ctx, struct req *r, const struct identity *who, json_t *rpc_id,
		const char *method, const char *path, const char *query, const char *body,
		size_t len, const char *prefix, struct sub *s)
{
	if (sub_call(ctx, r, who, method, path, query, body ? body : "", body ? len : 0, s) < 0) {
		sub_free(s);
		send_not_found(r, rpc_id, "session");
		return -1;
	}
	if (s->deferred)
		return -1; /* the waiter's now */
	if (s->status < 200 || s->status > 299) {
		send_sub_error(r, rpc_id, s, prefix);
		sub_free(s);
		return -1;
	}
	return 0;
}

/* POST with the tool's arguments (less its own) as the JSON body. */
static int call_json(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     json_t *rpc_id, const char *tool, const char *path, const json_t *args,
		     struct sub *s)
{
	json_t *b = mcp_tool_body(tool, args);
	char *text = b ? json_dumps(b, JSON_COMPACT) : NULL;
	int rc;

	json_decref(b);
	if (text == NULL) {
		send_result(r, rpc_id, NULL);
		return -1;
	}
	rc = call(ctx, r, who, rpc_id, "POST", path, "", text, strlen(text), "", s);
	free(text);
	return rc;
}

static void tool_session_create(struct api_ctx *ctx, struct req *r, const struct identity *who,
				json_t *rpc_id, const json_t *args)
{
	long long wait = mcp_wait_seconds(args, MCP_WAIT_DEFAULT);
	char path[128];
	struct sub s;
	const char *id, *st;

	if (r->wait.resumed) {
		snprintf(path, sizeof path, "/v1/sessions/%s", r->wait.id);
		r->wait.aux = 0;
		if (call(ctx, r, who, rpc_id, "GET", path, "", NULL, 0, "", &s) == 0)
			send_result(r, rpc_id, mcp_tool_result(path + 13, json_incref(s.json), 0));
		sub_free(&s);
		return;
	}
	if (call_json(ctx, r, who, rpc_id, "session_create", "/v1/sessions", args, &s) < 0)
		return;
	id = json_string_value(json_object_get(s.json, "id"));
	st = json_string_value(json_object_get(s.json, "status"));
	if (id != NULL && st != NULL && strcmp(st, "starting") == 0 && wait > 0 &&
	    wt_defer(r, who->key_id, &(struct wt_cond){ WT_SESSION_READY, id, 0, 0 }, wait)) {
		sub_free(&s);
		return;
	}
	send_result(r, rpc_id, mcp_tool_result(id ? id : "", json_incref(s.json), 0));
	sub_free(&s);
}

/* A command's output stream (1 stdout, 2 stderr) as a slice object, or NULL. */
static json_t *cmd_stream(struct api_ctx *ctx, struct req *r, const struct identity *who,
			  json_t *rpc_id, const char *sid, const char *cid, const char *stream)
{
	char path[200], query[96];
	long long lim = ctx->cfg->inline_output_bytes;
	struct sub s;
	json_t *j;

	if (lim > 1048576)
		lim = 1048576;
	if (lim < 1)
		lim = 1;
	snprintf(path, sizeof path, "/v1/sessions/%s/commands/%s/output", sid, cid);
	snprintf(query, sizeof query, "stream=%s&limit=%lld", stream, lim);
	if (call(ctx, r, who, rpc_id, "GET", path, query, NULL, 0, "", &s) < 0)
		return NULL;
	j = json_incref(s.json);
	sub_free(&s);
	return j;
}

static void answer_command(struct api_ctx *ctx, struct req *r, const struct identity *who,
			   json_t *rpc_id, const char *sid, const char *cid)
{
	char path[200];
	struct sub s;
	json_t *out = NULL, *err = NULL;
	const char *st;

	r->wait.aux = 0; /* the session handlers resume only their own requests */
	snprintf(path, sizeof path, "/v1/sessions/%s/commands/%s", sid, cid);
	if (call(ctx, r, who, rpc_id, "GET", path, "", NULL, 0, "", &s) < 0)
		return;
	st = json_string_value(json_object_get(s.json, "status"));
	if (st != NULL && strcmp(st, "queued") != 0 && strcmp(st, "running") != 0) {
		if ((out = cmd_stream(ctx, r, who, rpc_id, sid, cid, "stdout")) == NULL ||
		    (err = cmd_stream(ctx, r, who, rpc_id, sid, cid, "stderr")) == NULL) {
			json_decref(out);
			sub_free(&s);
			return;
		}
	}
	send_result(r, rpc_id, mcp_command_result(s.json, out, err));
	json_decref(out);
	json_decref(err);
	sub_free(&s);
}

static void tool_session_exec(struct api_ctx *ctx, struct req *r, const struct identity *who,
			      json_t *rpc_id, const json_t *args, const char *sid)
{
	char path[128], cid[64];
	struct sub s;
	const char *id;

	if (r->wait.resumed) {
		snprintf(cid, sizeof cid, "%s", r->wait.id);
		answer_command(ctx, r, who, rpc_id, sid, cid);
		return;
	}
	snprintf(path, sizeof path, "/v1/sessions/%s/commands", sid);
	if (call_json(ctx, r, who, rpc_id, "session_exec", path, args, &s) < 0)
		return;
	id = json_string_value(json_object_get(s.json, "id"));
	if (id == NULL || strlen(id) >= sizeof cid) {
		sub_free(&s);
		send_result(r, rpc_id, NULL);
		return;
	}
	if (json_is_true(json_object_get(args, "background"))) {
		/* The command as POST .../commands answered it: id, pid, status. */
		send_result(r, rpc_id, mcp_command_result(s.json, NULL, NULL));
		sub_free(&s);
		return;
	}
	snprintf(cid, sizeof cid, "%s", id);
	sub_free(&s);
	if (wt_defer(r, who->key_id, &(struct wt_cond){ WT_COMMAND_DONE, cid, 0, 0 },
		     mcp_wait_seconds(args, MCP_WAIT_DEFAULT)))
		return;
	answer_command(ctx, r, who, rpc_id, sid, cid);
}

static void tool_read_file(struct api_ctx *ctx, struct req *r, const struct identity *who,
			   json_t *rpc_id, const json_t *args, const char *sid)
{
	const char *enc = json_string_value(json_object_get(args, "encoding"));
	const char *p = json_string_value(json_object_get(args, "path"));
	char path[3400], ep[3300];
	struct sub s;
	int b64;
	json_t *sc;

	if (enc_path(p, ep, sizeof ep) < 0) {
		send_bad_arg(r, rpc_id, "arguments.path", "is too long");
		return;
	}
	snprintf(path, sizeof path, "/v1/sessions/%s/files/%s", sid, ep);
	if (call(ctx, r, who, rpc_id, "GET", path, "", NULL, 0, "", &s) < 0)
		return;
	b64 = (enc != NULL && strcmp(enc, "base64") == 0) ||
	      memchr(s.raw, '\0', s.rawlen) != NULL ||
	      !util_utf8_valid((const unsigned char *)s.raw, s.rawlen);
	if (b64) {
		char *t = util_b64_encode((const unsigned char *)s.raw, s.rawlen);
		sc = json_pack("{s:s, s:I, s:s?}", "path", p, "size", (json_int_t)s.rawlen,
			       "content_base64", t);
		send_result(r, rpc_id, t ? mcp_tool_result(t, sc, 0) : NULL);
		free(t);
	} else {
		sc = json_pack("{s:s, s:I, s:s%}", "path", p, "size", (json_int_t)s.rawlen,
			       "content", s.raw, s.rawlen);
		send_result(r, rpc_id, mcp_tool_result(json_string_value(json_object_get(sc,
				"content")), sc, 0));
	}
	sub_free(&s);
}

static void tool_write_file(struct api_ctx *ctx, struct req *r, const struct identity *who,
			    json_t *rpc_id, const json_t *args, const char *sid)
{
	const char *p = json_string_value(json_object_get(args, "path"));
	const json_t *c = json_object_get(args, "content");
	const char *mode = json_string_value(json_object_get(args, "mode"));
	char path[3400], ep[3300], query[160];
	unsigned char *data = NULL;
	size_t len;
	struct sub s;

	if (c != NULL) {
		len = json_string_length(c);
	} else {
		const char *b = json_string_value(json_object_get(args, "content_base64"));
		data = util_b64_decode(b, strlen(b), &len);
	}
	if (c == NULL && data == NULL) {
		send_bad_arg(r, rpc_id, "arguments.content_base64", "is not valid base64");
		return;
	}
	if (enc_path(p, ep, sizeof ep) < 0 ||
	    (mode != NULL && enc_path(mode, query + 5, sizeof query - 5) < 0)) {
		free(data);
		send_bad_arg(r, rpc_id, "arguments.path", "is too long");
		return;
	}
	if (mode != NULL)
		memcpy(query, "mode=", 5);
	else
		query[0] = '\0';
	snprintf(path, sizeof path, "/v1/sessions/%s/files/%s", sid, ep);
	if (call(ctx, r, who, rpc_id, "PUT", path, query,
		 c ? json_string_value(c) : (const char *)data, len, "", &s) == 0) {
		char text[64];
		snprintf(text, sizeof text, "wrote %zu bytes", len);
		send_result(r, rpc_id, mcp_tool_result(text, json_incref(s.json), 0));
		sub_free(&s);
	}
	free(data);
}

static void tool_list_files(struct api_ctx *ctx, struct req *r, const struct identity *who,
			    json_t *rpc_id, const json_t *args, const char *sid)
{
	const char *root = json_string_value(json_object_get(args, "root"));
	const json_t *rec = json_object_get(args, "recursive");
	char path[128], query[1100] = "", er[1000];
	struct sub s;
	char *text;

	if (root != NULL) {
		if (enc_path(root, er, sizeof er) < 0) {
			send_bad_arg(r, rpc_id, "arguments.root", "is too long");
			return;
		}
		snprintf(query, sizeof query, "root=%s", er);
	}
	if (rec != NULL)
		snprintf(query + strlen(query), sizeof query - strlen(query), "%srecursive=%s",
			 query[0] ? "&" : "", json_is_true(rec) ? "true" : "false");
	snprintf(path, sizeof path, "/v1/sessions/%s/files", sid);
	if (call(ctx, r, who, rpc_id, "GET", path, query, NULL, 0, "", &s) < 0)
		return;
	text = json_dumps(s.json, JSON_COMPACT);
	send_result(r, rpc_id, text ? mcp_tool_result(text, json_incref(s.json), 0) : NULL);
	free(text);
	sub_free(&s);
}

static void tool_close(struct api_ctx *ctx, struct req *r, const struct identity *who,
		       json_t *rpc_id, const char *sid)
{
	char path[128];
	struct sub s;

	snprintf(path, sizeof path, "/v1/sessions/%s/close", sid);
	if (call(ctx, r, who, rpc_id, "POST", path, "", "{}", 2, "", &s) < 0)
		return;
	send_result(r, rpc_id, mcp_tool_result(json_string_value(json_object_get(s.json,
			"status")), json_incref(s.json), 0));
	sub_free(&s);
}


/* The command a session_command_* tool names (pid, or command_id) into cid: 0, or -1
 * after answering. A pid goes through GET .../commands?pid=N (scoped like every session
 * route: another identity's session is not found); an unknown pid or an id that cannot
 * be one is "no such command", as an unknown command id is. */
static int resolve_command(struct api_ctx *ctx, struct req *r, const struct identity *who,
			   json_t *rpc_id, const json_t *args, const char *sid, char cid[64])
{
	const char *id = json_string_value(json_object_get(args, "command_id"));
	const char *found;
	char path[128], query[64];
	struct sub s;

	if (id != NULL) {
		if (!seg_ok(id)) {
			send_not_found(r, rpc_id, "command");
			return -1;
		}
		snprintf(cid, 64, "%s", id);
		return 0;
	}
	snprintf(path, sizeof path, "/v1/sessions/%s/commands", sid);
	snprintf(query, sizeof query, "pid=%lld",
		 (long long)json_integer_value(json_object_get(args, "pid")));
	if (call(ctx, r, who, rpc_id, "GET", path, query, NULL, 0, "", &s) < 0)
		return -1;
	found = json_string_value(json_object_get(json_array_get(json_object_get(s.json,
			"commands"), 0), "id"));
	if (found == NULL || !seg_ok(found)) {
		sub_free(&s);
		send_not_found(r, rpc_id, "command");
		return -1;
	}
	snprintf(cid, 64, "%s", found);
	sub_free(&s);
	return 0;
}

static void tool_cmd_status(struct api_ctx *ctx, struct req *r, const struct identity *who,
			    json_t *rpc_id, const json_t *args, const char *sid)
{
	long long wait = mcp_wait_seconds(args, 0);
	char cid[64], path[200], query[32];
	struct sub s;

	if (resolve_command(ctx, r, who, rpc_id, args, sid, cid) < 0)
		return;
	if (wait > 0 && !r->wait.resumed) {
		/* GET .../commands/{cid}?wait=S: the handler hands the request to the waiter
		 * itself; the re-dispatch comes back here and answers. */
		snprintf(path, sizeof path, "/v1/sessions/%s/commands/%s", sid, cid);
		snprintf(query, sizeof query, "wait=%lld", wait);
		if (call(ctx, r, who, rpc_id, "GET", path, query, NULL, 0, "", &s) < 0)
			return;
		sub_free(&s);
	}
	answer_command(ctx, r, who, rpc_id, sid, cid);
}

static void tool_cmd_output(struct api_ctx *ctx, struct req *r, const struct identity *who,
			    json_t *rpc_id, const json_t *args, const char *sid)
{
	const char *stream = json_string_value(json_object_get(args, "stream"));
	const json_t *off = json_object_get(args, "offset"), *lim = json_object_get(args, "limit");
	long long limit = ctx->cfg->inline_output_bytes, wait = mcp_wait_seconds(args, 0);
	char cid[64], path[200], query[160];
	struct sub out, cmd;
	json_t *sc;
	const char *text;

	if (resolve_command(ctx, r, who, rpc_id, args, sid, cid) < 0)
		return;
	if (limit > 1048576)
		limit = 1048576;
	if (limit < 1)
		limit = 1;
	if (lim != NULL)
		limit = (long long)json_integer_value(lim);
	snprintf(path, sizeof path, "/v1/sessions/%s/commands/%s/output", sid, cid);
	snprintf(query, sizeof query, "stream=%s&offset=%lld&limit=%lld&wait=%lld",
		 stream ? stream : "stdout", off ? (long long)json_integer_value(off) : 0LL, limit,
		 r->wait.resumed ? 0 : wait);
	if (call(ctx, r, who, rpc_id, "GET", path, query, NULL, 0, "", &out) < 0)
		return; /* answered, or deferred: the waiter runs this again */
	snprintf(path, sizeof path, "/v1/sessions/%s/commands/%s", sid, cid);
	if (call(ctx, r, who, rpc_id, "GET", path, "", NULL, 0, "", &cmd) < 0) {
		sub_free(&out);
		return;
	}
	sc = json_deep_copy(out.json);
	if (sc != NULL) {
		json_object_set_new(sc, "stream", json_string(stream ? stream : "stdout"));
		json_object_set_new(sc, "offset", json_integer(off ? json_integer_value(off) : 0));
		json_object_set(sc, "id", json_object_get(cmd.json, "id"));
		json_object_set(sc, "pid", json_object_get(cmd.json, "pid"));
		json_object_set(sc, "session_id", json_object_get(cmd.json, "session_id"));
		json_object_set(sc, "status", json_object_get(cmd.json, "status"));
		json_object_set_new(sc, "exit_code", json_is_integer(json_object_get(cmd.json,
				"exit_code")) ? json_incref(json_object_get(cmd.json, "exit_code"))
				: json_null());
	}
	text = json_string_value(json_object_get(sc, "data"));
	send_result(r, rpc_id, sc ? mcp_tool_result(text ? text :
			json_object_get(sc, "data_base64") ?
			"(binary output: data_base64 in structuredContent)" : "", sc, 0) : NULL);
	sub_free(&out);
	sub_free(&cmd);
}

static void tool_list_runtimes(struct api_ctx *ctx, struct req *r, const struct identity *who,
			       json_t *rpc_id)
{
	struct strbuf text = STRBUF_INIT;
	struct sub s;
	json_t *rt;
	size_t i;

	if (call(ctx, r, who, rpc_id, "GET", "/v1/runtimes", "", NULL, 0, "", &s) < 0)
		return;
	json_array_foreach(json_object_get(s.json, "runtimes"), i, rt) {
		const char *v = json_string_value(json_object_get(rt, "version"));

		sb_addf(&text, "%s%s%s%s\n", json_string_value(json_object_get(rt, "name")),
			v ? " (" : "", v ? v : "", v ? ")" : "");
	}
	send_result(r, rpc_id, text.failed ? NULL
		    : mcp_tool_result(text.buf ? text.buf : "", json_incref(s.json), 0));
	sb_release(&text);
	sub_free(&s);
}

/* ------------------------------------------------------------------ dispatch */

static void tools_call(struct api_ctx *ctx, struct req *r, const struct identity *who,
		       json_t *rpc_id, const json_t *params)
{
	const char *name, *sid;
	const json_t *args;
	struct mcp_err e;

	if (mcp_call_params(params, &name, &args, &e) < 0 || mcp_check_args(name, args, &e) < 0) {
		send_rpc_error(r, rpc_id, &e);
		return;
	}
	if (strcmp(name, "run_command") == 0)
		return tool_run(ctx, r, who, rpc_id, args);
	if (strcmp(name, "get_job") == 0)
		return tool_get_job(ctx, r, who, rpc_id, args);
	if (strcmp(name, "session_create") == 0)
		return tool_session_create(ctx, r, who, rpc_id, args);
	if (strcmp(name, "list_runtimes") == 0)
		return tool_list_runtimes(ctx, r, who, rpc_id);
	sid = json_string_value(json_object_get(args, "session_id"));
	if (!seg_ok(sid)) {
		send_not_found(r, rpc_id, "session");
		return;
	}
	if (strcmp(name, "session_exec") == 0)
		tool_session_exec(ctx, r, who, rpc_id, args, sid);
	else if (strcmp(name, "session_read_file") == 0)
		tool_read_file(ctx, r, who, rpc_id, args, sid);
	else if (strcmp(name, "session_write_file") == 0)
		tool_write_file(ctx, r, who, rpc_id, args, sid);
	else if (strcmp(name, "session_list_files") == 0)
		tool_list_files(ctx, r, who, rpc_id, args, sid);
	else if (strcmp(name, "session_command_status") == 0)
		tool_cmd_status(ctx, r, who, rpc_id, args, sid);
	else if (strcmp(name, "session_command_output") == 0)
		tool_cmd_output(ctx, r, who, rpc_id, args, sid);
	else
		tool_close(ctx, r, who, rpc_id, sid);
}

void h_mcp(struct api_ctx *ctx, struct req *r, const struct identity *who,
	   const struct route_args *a)
{
	struct mcp_msg m;
	struct mcp_err e;
	json_t *res;

	(void)a;
	if (strcmp(r->method, "POST") != 0) {
		/* GET would open the transport's optional SSE stream, which this server does
		 * not offer: 405, as the Streamable HTTP transport says, with a JSON-RPC error
		 * body (what MCP clients parse) rather than the REST error shape. */
		mcp_fail(&e, MCP_SERVER_ERROR, NULL, "method not allowed: POST JSON-RPC messages"
			 " to this endpoint; no SSE stream is offered (single JSON responses)");
		http_send_json(r, 405, mcp_error(NULL, &e), "Allow: POST\r\n");
		return;
	}
	if (!http_is_json_type(r->content_type)) {
		http_send_error(r, 415, "unsupported_media_type",
				"Content-Type must be application/json", NULL, NULL);
		return;
	}
	if (mcp_parse(r->body, r->body_len, &m, &e) < 0) {
		send_rpc_error(r, m.id, &e);
		mcp_msg_free(&m);
		return;
	}
	if (m.method == NULL || m.id == NULL) {
		/* A notification (notifications/initialized, cancelled...) or a response:
		 * accepted, nothing to answer. */
		http_send_bytes(r, 202, "application/json", "", 0, NULL);
	} else if (strcmp(m.method, "initialize") == 0) {
		res = mcp_initialize(m.params, &e);
		if (res == NULL)
			send_rpc_error(r, m.id, &e);
		else
			send_result(r, m.id, res);
	} else if (strcmp(m.method, "ping") == 0) {
		send_result(r, m.id, json_object());
	} else if (strcmp(m.method, "tools/list") == 0) {
		send_result(r, m.id, mcp_tools_list());
	} else if (strcmp(m.method, "tools/call") == 0) {
		tools_call(ctx, r, who, m.id, m.params);
	} else {
		mcp_fail(&e, MCP_METHOD_NOT_FOUND, NULL, "method not found: %.80s", m.method);
		send_rpc_error(r, m.id, &e);
	}
	mcp_msg_free(&m);
}
