/* GET /v1/jobs: a page of the caller's jobs (?status, ?limit, ?cursor), or the jobs
 * named by ?ids=a,b,c in the order asked, the others listed as missing. */
#include <stdio.h>
#include <string.h>

#include "api_routes.h"
#include "http_util.h"
#include "jobroutes.h"
#include "render.h"

#define LIST_DEFAULT 20
#define LIST_MAX 100

/* ?ids=a,b,c of GET /v1/jobs: at most JOBS_IDS_MAX ids, each once, in the order given. */
#define IDS_QUERY_MAX (JOBS_IDS_MAX * 40 + 64)

/* The list's query: status, limit, cursor (as parse_query) and ids, whose value is
 * longer than parse_query's. 0, or -1 after answering the error. */
static int list_query(struct req *r, char (*vals)[128], int *present, char *ids)
{
	static const char *const names[] = { "status", "limit", "cursor", "ids" };
	static char val[IDS_QUERY_MAX];
	const char *q = r->query;
	char key[64], msg[160];
	int rc;

	while ((rc = http_query_next(&q, key, sizeof key, val, sizeof val)) == 1) {
		int i;
		for (i = 0; i < 4; i++)
			if (strcmp(key, names[i]) == 0)
				break;
		if (i == 4) {
			snprintf(msg, sizeof msg, "unknown query parameter '%.60s'", key);
			http_send_error(r, 400, "invalid_request", msg, key, NULL);
			return -1;
		}
		if (i == 3 && present[3]) {
			http_send_error(r, 400, "invalid_request", "ids is given more than once",
					"ids", NULL);
			return -1;
		}
		present[i] = 1;
		if (i == 3)
			memcpy(ids, val, strlen(val) + 1);
		else if (snprintf(vals[i], 128, "%s", val) >= 128) {
			snprintf(msg, sizeof msg, "%s is too long", key);
			http_send_error(r, 400, "invalid_request", msg, key, NULL);
			return -1;
		}
	}
	if (rc < 0) {
		http_send_error(r, 400, "invalid_request", "malformed or oversized query string",
				NULL, NULL);
		return -1;
	}
	return 0;
}

/* Splits ids (comma-separated) in place into out, without repeats. The count, or -1
 * after answering the error. */
static int split_ids(struct req *r, char *ids, const char **out)
{
	size_t n = 0;

	for (char *p = ids, *next; p != NULL; p = next) {
		next = strchr(p, ',');
		if (next)
			*next++ = '\0';
		if (*p == '\0' || strlen(p) > 64) {
			http_send_error(r, 400, "invalid_request",
					"ids must be a comma-separated list of job ids", "ids", NULL);
			return -1;
		}
		size_t k;
		for (k = 0; k < n && strcmp(out[k], p) != 0; k++)
			;
		if (k < n)
			continue;
		if (n == JOBS_IDS_MAX) {
			http_send_error(r, 400, "invalid_request", "ids names at most 100 jobs",
					"ids", NULL);
			return -1;
		}
		out[n++] = p;
	}
	return (int)n;
}

/* GET /v1/jobs?ids=a,b,c: the caller's jobs among them in the order asked, the rest
 * (unknown, another identity's, not an id at all) only listed in "missing", alike. */
static void list_ids(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     char *idtext)
{
	const char *ids[JOBS_IDS_MAX];
	struct job_view v[JOBS_IDS_MAX];
	struct job_set s;
	size_t nv = 0;
	json_t *missing = json_array(), *out = NULL;
	int n = split_ids(r, idtext, ids);
	enum jobs_rc rc;

	if (n < 0) {
		json_decref(missing);
		return;
	}
	rc = jobs_get_ids(ctx->db, who, ids, (size_t)n, ctx->cfg->list_preview_bytes, &s);
	for (int i = 0; rc == JOBS_OK && i < n; i++) {
		size_t k;
		for (k = 0; k < s.n && strcmp(s.v[k].id, ids[i]) != 0; k++)
			;
		if (k < s.n)
			v[nv++] = s.v[k];
		else if (json_array_append_new(missing, json_string(ids[i])) < 0)
			rc = JOBS_DB;
	}
	if (rc == JOBS_OK && (out = render_job_list(v, nv, NULL)) != NULL &&
	    json_object_set(out, "missing", missing) < 0) {
		json_decref(out);
		out = NULL;
	}
	jobs_set_free(&s);
	json_decref(missing);
	if (rc != JOBS_OK)
		route_db_error(ctx, r);
	else
		http_send_json(r, 200, out, NULL);
}

void h_list(struct api_ctx *ctx, struct req *r, const struct identity *who,
	    const struct route_args *a)
{
	char vals[3][128] = { "", "", "" };
	static char ids[IDS_QUERY_MAX];
	int present[4] = { 0, 0, 0, 0 };
	long long limit = LIST_DEFAULT;
	int status = -1;
	struct job_set s;
	json_t *out = NULL;
	enum jobs_rc rc;

	(void)a;
	ids[0] = '\0';
	if (list_query(r, vals, present, ids) < 0)
		return;
	if (present[3]) {
		if (present[0] || present[1] || present[2]) {
			http_send_error(r, 400, "invalid_request",
					"ids cannot be combined with status, limit or cursor", "ids",
					NULL);
			return;
		}
		list_ids(ctx, r, who, ids);
		return;
	}
	if (present[0] && (status = js_parse(vals[0])) < 0) {
		http_send_error(r, 400, "invalid_request", "status is not a job state", "status",
				NULL);
		return;
	}
	if (present[1] && util_parse_ll(vals[1], 1, LIST_MAX, &limit) < 0) {
		http_send_error(r, 400, "invalid_request", "limit must be an integer from 1 to 100",
				"limit", NULL);
		return;
	}
	rc = jobs_list(ctx->db, who, status, limit,
		       present[2] ? vals[2] : NULL, ctx->cfg->list_preview_bytes, &s);
	if (rc == JOBS_OK &&
	    (out = render_job_list(s.v, s.n, s.more ? s.v[s.n - 1].id : NULL)) == NULL)
		rc = JOBS_DB;
	jobs_set_free(&s);
	if (rc == JOBS_BAD_CURSOR)
		http_send_error(r, 400, "invalid_request", "cursor is not valid", "cursor", NULL);
	else if (rc != JOBS_OK)
		route_db_error(ctx, r);
	else
		http_send_json(r, 200, out, NULL);
}
