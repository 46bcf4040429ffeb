/* GET /v1/sessions/{id}/commands/{cid}/output: a slice of a command's stdout or
 * stderr, read from job_output (keyed by the command's id) as it grows, never past
 * what the command's row counts (a chunk is counted once it is whole); ?wait=S hands
 * the wait for more to the waiter (WT_COMMAND_OUTPUT). Rendered as text or base64 by
 * srender_output. */
#include "sessions.h"

#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "jobdata.h"
#include "routes.h"
#include "sapi.h"
#include "srender.h"
#include "util.h"
#include "waiter.h"

#define OUTPUT_LIMIT_DEFAULT 65536
#define OUTPUT_LIMIT_MAX 1048576

void h_cmd_output(struct api_ctx *ctx, struct req *r, const struct identity *who,
		  const struct route_args *a)
{
	static const char *const names[] = { "stream", "offset", "limit", "encoding", "wait",
					     NULL };
	char vals[5][128] = { "", "", "", "", "" }, cid[UUID_STR_LEN + 1];
	int present[5] = { 0, 0, 0, 0, 0 }, stream = JD_STDOUT, rc;
	long long off = 0, limit = OUTPUT_LIMIT_DEFAULT, wait, total;
	unsigned char *data = NULL;
	size_t len = 0;
	struct db_res *res = NULL;
	struct cmd_view v;

	if (sapi_open_query(ctx, r, who, a->id, names, vals, present, 4, &wait) < 0)
		return;
	if (present[0] && strcmp(vals[0], "stdout") != 0 && strcmp(vals[0], "stderr") != 0) {
		http_send_error(r, 400, "invalid_request", "stream must be stdout or stderr",
				"stream", NULL);
		return;
	}
	stream = present[0] && strcmp(vals[0], "stderr") == 0 ? JD_STDERR : JD_STDOUT;
	if (present[1] && util_parse_ll(vals[1], 0, (1LL << 50), &off) < 0) {
		http_send_error(r, 400, "invalid_request",
				"offset must be a non-negative integer byte offset", "offset", NULL);
		return;
	}
	if (present[2] && util_parse_ll(vals[2], 1, OUTPUT_LIMIT_MAX, &limit) < 0) {
		http_send_error(r, 400, "invalid_request", "limit must be an integer from 1 to 1048576",
				"limit", NULL);
		return;
	}
	if (present[3] && strcmp(vals[3], "base64") != 0 && strcmp(vals[3], "text") != 0) {
		http_send_error(r, 400, "invalid_request", "encoding must be 'text' or 'base64'",
				"encoding", NULL);
		return;
	}
	sapi_cid_of(a, cid, sizeof cid);
	for (;;) {
		long long lim;

		rc = sapi_cmd_load(ctx->db, a->id, cid, &res, &v);
		if (rc <= 0)
			break;
		total = stream == JD_STDOUT ? v.stdout_bytes : v.stderr_bytes;
		/* Never past what the row counts: a chunk is counted once it is whole. */
		lim = total - off < limit ? total - off : limit;
		len = 0;
		if (lim > 0 && jd_read_output(ctx->db, cid, stream, off, lim, &data, &len) < 0) {
			rc = -1;
			break;
		}
		if (len > 0 || sapi_cmd_ended(v.status) || wait == 0 ||
		    !wt_defer(r, who->key_id,
			      &(struct wt_cond){ WT_COMMAND_OUTPUT, cid, stream, off }, wait))
			break;
		free(data);
		db_res_free(res);
		return; /* the waiter runs this again when there is more (app/http/waiter.h) */
	}
	if (rc < 0)
		route_db_error(ctx, r);
	else if (rc == 0)
		sapi_no_command(r);
	else
		http_send_json(r, 200,
			       srender_output(stream == JD_STDOUT ? "stdout" : "stderr", off,
					      data ? data : (const unsigned char *)"", len,
					      stream == JD_STDOUT ? v.stdout_bytes : v.stderr_bytes,
					      sapi_cmd_ended(v.status),
					      present[3] && strcmp(vals[3], "base64") == 0),
			       NULL);
	free(data);
	db_res_free(res);
}
