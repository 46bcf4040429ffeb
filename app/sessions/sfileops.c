/* The session API's file API (docs/SESSIONS.md): list, get, put and delete files in
 * a ready session's workspace. Each is a request relayed to the session's supervisor
 * (app/sessions/srelay.h), which walks the workspace; the API checks the path (the
 * job path rule) and the supervisor's answer (a listing rebuilt from well-formed
 * entries only, a file no larger than session_file_max_bytes). */
#include "sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "http_util.h"
#include "routes.h"
#include "sapi.h"
#include "srelay.h"
#include "svalidate.h"

/* The decoded, checked {path*} of .../files/{path*}: 0, or -1 after a 400. */
static int file_path(struct api_ctx *ctx, struct req *r, const struct route_args *a, char *path,
		     size_t n)
{
	const char *why = NULL;

	if (http_pct_decode(a->rest, strlen(a->rest), path, n) < 0 ||
	    (why = sv_file_path(ctx->cfg, path)) != NULL) {
		char msg[200];
		snprintf(msg, sizeof msg, "path %s", why ? why : "is not a valid percent-encoded path");
		http_send_error(r, 400, "invalid_request", msg, "path", NULL);
		return -1;
	}
	return 0;
}

/* A supervisor's file listing, checked and rebuilt: only {path, size, sha256?} of
 * well-formed entries (sha256 null: not hashed, the host's budget ran out), at most
 * session_list_max_files, and `cut` when it names one of the two budgets. NULL if
 * malformed. */
static json_t *listing(const json_t *res, long long max)
{
	json_t *files = json_object_get(res, "files"), *out, *e, *o;
	int truncated = json_is_true(json_object_get(res, "truncated"));
	const char *cut = json_string_value(json_object_get(res, "cut"));
	size_t i;

	if (!json_is_array(files) || (out = json_array()) == NULL)
		return NULL;
	json_array_foreach(files, i, e) {
		json_t *p = json_object_get(e, "path"), *sz = json_object_get(e, "size"),
		       *h = json_object_get(e, "sha256"), *item;

		if ((long long)i >= max) {
			truncated = 1;
			break;
		}
		if (!json_is_string(p) || !json_is_integer(sz) || json_integer_value(sz) < 0 ||
		    (h != NULL && !json_is_null(h) &&
		     (!json_is_string(h) || json_string_length(h) != 64))) {
			json_decref(out);
			return NULL;
		}
		item = json_pack("{s:O, s:O}", "path", p, "size", sz);
		if (item != NULL && h != NULL)
			json_object_set(item, "sha256", h); /* a digest, or null: not hashed */
		json_array_append_new(out, item);
	}
	o = json_pack("{s:o, s:b}", "files", out, "truncated", truncated);
	if (o != NULL && cut != NULL &&
	    (strcmp(cut, "session_host_bytes") == 0 || strcmp(cut, "session_host_ms") == 0))
		json_object_set_new(o, "cut", json_string(cut));
	return o;
}

void h_files_list(struct api_ctx *ctx, struct req *r, const struct identity *who,
		  const struct route_args *a)
{
	static const char *const names[] = { "root", "recursive", "sha256", NULL };
	char vals[3][128] = { "", "", "" };
	int present[3] = { 0, 0, 0 }, recursive = 1, digests = 0;
	struct srelay_answer ans;
	enum srelay_rc rc;
	struct sess s;
	json_t *args, *out;
	const char *why;

	if (srelay_resuming(r)) {
		memset(&s, 0, sizeof s);
		s.v.status = "ready"; /* the first run saw it so and sent the request */
	} else if (sapi_open_session(ctx, r, who, a->id, &s) < 0) {
		return;
	}
	if (http_parse_query(r, names, vals, present) < 0) {
		sapi_sess_free(&s);
		return;
	}
	if (present[0] && vals[0][0] != '\0' && (why = sv_file_path(ctx->cfg, vals[0])) != NULL) {
		char msg[200];
		snprintf(msg, sizeof msg, "root %s", why);
		http_send_error(r, 400, "invalid_request", msg, "root", NULL);
	} else if (present[1] && sv_bool(vals[1], &recursive) < 0) {
		http_send_error(r, 400, "invalid_request", "recursive must be true or false",
				"recursive", NULL);
	} else if (present[2] && sv_bool(vals[2], &digests) < 0) {
		http_send_error(r, 400, "invalid_request", "sha256 must be true or false", "sha256",
				NULL);
	} else if (srelay_need_ready(r, &s) == 0) {
		sapi_sess_free(&s);
		args = json_pack("{s:s, s:b, s:b}", "root", vals[0], "recursive", recursive,
				 "sha256", digests);
		rc = srelay_call(ctx, r, who, a->id, "file_list", NULL, args, NULL, 0, &ans);
		json_decref(args);
		if (rc == SREQ_DEFERRED) {
			; /* answered on the re-dispatch */
		} else if (rc == SREQ_DONE) {
			out = listing(ans.result, ctx->cfg->session_list_max_files);
			if (out == NULL)
				http_send_error(r, 502, "bad_gateway", "the session's runner host"
						" gave a malformed file list", NULL, NULL);
			else
				http_send_json(r, 200, out, NULL);
		} else {
			srelay_send_error(ctx, r, rc, &ans);
		}
		srelay_free(&ans);
		return;
	}
	sapi_sess_free(&s);
}

/* The session of a file request, ready, and the checked path: 0 or -1 (answered). */
static int open_file(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     const struct route_args *a, char *path, size_t n)
{
	struct sess s;
	int rc;

	if (srelay_resuming(r))
		return file_path(ctx, r, a, path, n); /* the first run checked the rest */
	if (sapi_open_session(ctx, r, who, a->id, &s) < 0)
		return -1;
	rc = file_path(ctx, r, a, path, n);
	if (rc == 0)
		rc = srelay_need_ready(r, &s);
	sapi_sess_free(&s);
	return rc;
}

/* GET and DELETE of a file: no query parameters, the session ready, the path
 * checked, then the request `kind` about it: 0 with *rc and *ans (release it), or -1
 * after answering. */
static int path_request(struct api_ctx *ctx, struct req *r, const struct identity *who,
			const struct route_args *a, const char *kind, char *path, size_t n,
			enum srelay_rc *rc, struct srelay_answer *ans)
{
	json_t *args;

	if (*r->query != '\0') {
		http_send_error(r, 400, "invalid_request", "this endpoint takes no query parameters",
				NULL, NULL);
		return -1;
	}
	if (open_file(ctx, r, who, a, path, n) < 0)
		return -1;
	args = json_pack("{s:s}", "path", path);
	*rc = srelay_call(ctx, r, who, a->id, kind, NULL, args, NULL, 0, ans);
	json_decref(args);
	return 0;
}

void h_file_get(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	char path[1100];
	struct srelay_answer ans;
	enum srelay_rc rc;

	if (path_request(ctx, r, who, a, "file_get", path, sizeof path, &rc, &ans) < 0)
		return;
	if (rc == SREQ_DEFERRED)
		; /* answered on the re-dispatch */
	else if (rc != SREQ_DONE)
		srelay_send_error(ctx, r, rc, &ans);
	else if ((long long)ans.len > ctx->cfg->session_file_max_bytes)
		http_send_error(r, 502, "bad_gateway", "the session's runner host sent more than"
				" session_file_max_bytes", NULL, NULL);
	else
		http_send_bytes(r, 200, "application/octet-stream", ans.data ? (const void *)ans.data : "",
				ans.len, NULL);
	srelay_free(&ans);
}

void h_file_put(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	static const char *const names[] = { "mode", NULL };
	char vals[1][128] = { "" }, path[1100];
	int present[1] = { 0 }, mode = 0644, status;
	struct srelay_answer ans;
	enum srelay_rc rc;
	json_t *args;

	if (http_parse_query(r, names, vals, present) < 0)
		return;
	if (present[0] && sv_file_mode(vals[0], &mode) < 0) {
		http_send_error(r, 400, "invalid_request", "mode must be octal permissions from 0 to"
				" 0777 (e.g. 0644)", "mode", NULL);
		return;
	}
	if ((long long)r->body_len > ctx->cfg->session_file_max_bytes) {
		http_send_error(r, 413, "payload_too_large", "the file exceeds session_file_max_bytes",
				NULL, NULL);
		return;
	}
	if (open_file(ctx, r, who, a, path, sizeof path) < 0)
		return;
	args = json_pack("{s:s, s:i}", "path", path, "mode", mode);
	rc = srelay_call(ctx, r, who, a->id, "file_put", NULL, args, r->body ? r->body : "",
			 r->body_len, &ans);
	json_decref(args);
	if (rc == SREQ_DEFERRED) {
		; /* answered on the re-dispatch */
	} else if (rc == SREQ_DONE) {
		/* 200 when the supervisor says it replaced a file, else 201. */
		status = json_is_false(json_object_get(ans.result, "created")) ? 200 : 201;
		http_send_json(r, status, json_pack("{s:s, s:I}", "path", path, "size",
						    (json_int_t)r->body_len), NULL);
	} else {
		srelay_send_error(ctx, r, rc, &ans);
	}
	srelay_free(&ans);
}

void h_file_delete(struct api_ctx *ctx, struct req *r, const struct identity *who,
		   const struct route_args *a)
{
	static const char head[] = "Status: 204 No Content\r\nCache-Control: no-store\r\n\r\n";
	char path[1100];
	struct srelay_answer ans;
	enum srelay_rc rc;

	if (path_request(ctx, r, who, a, "file_delete", path, sizeof path, &rc, &ans) < 0)
		return;
	if (rc == SREQ_DEFERRED) {
		; /* answered on the re-dispatch */
	} else if (rc == SREQ_DONE) {
		FCGX_PutStr(head, (int)sizeof head - 1, r->fcgi->out);
		r->status = 204;
		r->sent_bytes = 0;
	} else {
		srelay_send_error(ctx, r, rc, &ans);
	}
	srelay_free(&ans);
}
