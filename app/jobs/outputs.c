/* What a job produced, read by the client: GET /v1/jobs/{id}/artifacts (the list),
 * /artifacts/{path} (one, streamed chunk by chunk) and /output/{stdout|stderr} (a byte
 * range, with ?wait=S a long poll for more). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_routes.h"
#include "http_util.h"
#include "jobdata.h"
#include "jobroutes.h"
#include "log.h"
#include "render.h"
#include "validate.h"
#include "waiter.h"

void h_artifacts(struct api_ctx *ctx, struct req *r, const struct identity *who,
		 const struct route_args *a)
{
	struct job_set s;
	enum jobs_rc rc = jobs_artifacts(ctx->db, who, a->id, &s);

	if (!jr_send_failed(ctx, r, rc))
		http_send_json(r, 200, render_artifacts(s.art, s.nart), NULL);
	jobs_set_free(&s);
}

static int put_chunk(void *arg, const void *data, size_t len)
{
	struct req *r = arg;

	return FCGX_PutStr(data, (int)len, r->fcgi->out) < 0 ? 1 : 0;
}

/* Streams the artifact chunk by chunk: a worker holds one chunk, whatever its size. */
void h_artifact(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	const char *id = a->id, *raw_path = a->rest;
	char path[1100], head[256];
	long long size;
	enum jobs_rc rc;
	int n, sent;

	if (http_pct_decode(raw_path, strlen(raw_path), path, sizeof path) < 0 ||
	    val_rel_path(path, 1024) != NULL) {
		http_send_error(r, 404, "not_found", "no such artifact", NULL, NULL);
		return;
	}
	rc = jobs_artifact(ctx->db, who, id, path, &size);
	/* Same body whether the job or only the artifact is unknown: no leak. */
	if (jr_send_failed(ctx, r, rc))
		return;
	n = snprintf(head, sizeof head,
		     "Status: 200 OK\r\nContent-Type: application/octet-stream\r\n"
		     "Content-Length: %lld\r\nCache-Control: no-store\r\n"
		     "X-Content-Type-Options: nosniff\r\n\r\n",
		     size);
	FCGX_PutStr(head, n, r->fcgi->out);
	r->status = 200;
	r->sent_bytes = size;
	sent = jd_each_artifact_chunk(ctx->db, id, path, put_chunk, r);
	if (sent < 0) {
		/* Headers are out: the short body tells the client; the log tells us. */
		log_kv("error", "artifact_stream", "job", id, "error", db_error(ctx->db),
		       (char *)NULL);
		FCGX_SetExitStatus(1, r->fcgi->out);
	}
}

#define OUTPUT_LIMIT_DEFAULT 65536
#define OUTPUT_LIMIT_MAX 1048576

/* The slice of a stream at off; when it has no bytes there and the job has not
 * ended, and the request waits (secs > 0) and the waiter takes it, *deferred = 1 and
 * nothing is answered now: the waiter runs the handler again once the stream has
 * more than off bytes, the job ended, or secs passed (app/http/waiter.h). */
static enum jobs_rc wait_output(struct api_ctx *ctx, struct req *r, const struct identity *who,
				const char *id, int sid, long long off, long long limit,
				long long secs, struct jobs_slice *sl, int *deferred)
{
	enum jobs_rc rc = jobs_output(ctx->db, who, id, sid, off, limit, sl);

	*deferred = 0;
	if (rc != JOBS_OK || secs <= 0 || sl->len > 0 || sl->terminal)
		return rc;
	if (wt_defer(r, who->key_id, &(struct wt_cond){ WT_JOB_OUTPUT, id, sid, off }, secs)) {
		free(sl->data);
		sl->data = NULL;
		*deferred = 1;
	}
	return rc;
}

/* GET /v1/jobs/{id}/output/{stdout|stderr}?offset=N&limit=M[&encoding=base64][&wait=S]:
 * a bounded byte range of one stream as JSON; of a running job, what is stored so far
 * (eof false until the job has ended and the range reaches its total). */
void h_output(struct api_ctx *ctx, struct req *r, const struct identity *who,
	      const struct route_args *a)
{
	const char *id = a->id, *stream = a->rest;
	static const char *const names[] = { "offset", "limit", "encoding", "wait", NULL };
	char vals[4][128] = { "", "", "", "" };
	int present[4] = { 0, 0, 0, 0 }, sid, b64, deferred;
	long long off = 0, limit = OUTPUT_LIMIT_DEFAULT, wait = 0;
	struct jobs_slice sl;
	enum jobs_rc rc;
	json_t *o;

	if (strcmp(stream, "stdout") == 0)
		sid = JD_STDOUT;
	else if (strcmp(stream, "stderr") == 0)
		sid = JD_STDERR;
	else {
		http_send_error(r, 404, "not_found", "no such endpoint", NULL, NULL);
		return;
	}
	if (http_parse_query(r, names, vals, present) < 0)
		return;
	if (present[0] && util_parse_ll(vals[0], 0, (1LL << 50), &off) < 0) {
		http_send_error(r, 400, "invalid_request",
				"offset must be a non-negative integer byte offset", "offset", NULL);
		return;
	}
	if (present[1] && util_parse_ll(vals[1], 1, OUTPUT_LIMIT_MAX, &limit) < 0) {
		http_send_error(r, 400, "invalid_request",
				"limit must be an integer from 1 to 1048576", "limit", NULL);
		return;
	}
	if (present[2] && strcmp(vals[2], "base64") != 0 && strcmp(vals[2], "text") != 0) {
		http_send_error(r, 400, "invalid_request", "encoding must be 'text' or 'base64'",
				"encoding", NULL);
		return;
	}
	if (present[3] && util_parse_ll(vals[3], 0, WAIT_MAX_SECONDS, &wait) < 0) {
		http_send_error(r, 400, "invalid_request",
				"wait must be an integer number of seconds from 0 to 30", "wait", NULL);
		return;
	}
	rc = wait_output(ctx, r, who, id, sid, off, limit, wait, &sl, &deferred);
	if (deferred || jr_send_failed(ctx, r, rc))
		return;
	b64 = (present[2] && strcmp(vals[2], "base64") == 0) ||
	      !util_utf8_valid(sl.data, sl.len) || memchr(sl.data, '\0', sl.len) != NULL;
	o = json_pack("{s:s, s:I, s:I, s:I, s:b}", "stream", stream, "offset", (json_int_t)off,
		      "next_offset", (json_int_t)(off + (long long)sl.len), "total_bytes",
		      (json_int_t)sl.total, "eof",
		      sl.terminal && off + (long long)sl.len >= sl.total);
	if (o != NULL && b64) {
		char *enc = util_b64_encode(sl.data, sl.len);
		if (enc == NULL || json_object_set_new(o, "data_base64", json_string(enc)) < 0) {
			json_decref(o);
			o = NULL;
		}
		free(enc);
	} else if (o != NULL &&
		   json_object_set_new(o, "data", json_stringn((const char *)sl.data, sl.len)) <
			   0) {
		json_decref(o);
		o = NULL;
	}
	free(sl.data);
	http_send_json(r, 200, o, NULL);
}
