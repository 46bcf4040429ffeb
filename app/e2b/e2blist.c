/* GET /v2/sandboxes and GET /sandboxes (the same list): the caller's live E2B
 * sandboxes (sessions with `e2b` set; its other sessions are not sandboxes), newest
 * first, filtered by ?metadata= (an URL-encoded query string of key=value pairs, all
 * of which must match), ?state= (running, paused: nothing is ever paused; repeated or
 * comma-separated) and ?template=, paged by ?limit= (1..100, default 100) and
 * ?nextToken= (the `x-next-token` header of the previous page: the id of its last
 * sandbox). */
#include "e2bctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_util.h"
#include "strbuf.h"

#define LIST_MAX 100
#define META_MAX 4096 /* the ?metadata= value, decoded */

/* Percent-decodes s in place ('+' kept); -1 on a bad escape. */
static int pct_inplace(char *s)
{
	size_t n = strlen(s);
	char *tmp = malloc(n + 1);
	int rc = tmp ? http_pct_decode(s, n, tmp, n + 1) : -1;

	if (rc == 0)
		memcpy(s, tmp, strlen(tmp) + 1);
	free(tmp);
	return rc;
}

/* ?metadata's pairs as a JSON object to match (JSON_CONTAINS). The JS SDK sends
 * encodeURIComponent'd keys and values joined by URLSearchParams, itself sent as one
 * query value; Python sends urlencode's: so the pairs are form-decoded ('+' a space)
 * and then percent-decoded once more. NULL on a malformed value. */
static json_t *metadata_filter(const char *v)
{
	json_t *o = json_object();
	char key[256], val[1024];
	const char *q = v;
	int rc;

	while (o && (rc = http_query_next(&q, key, sizeof key, val, sizeof val)) == 1) {
		for (char *c = key; *c; c++)
			if (*c == '+')
				*c = ' ';
		for (char *c = val; *c; c++)
			if (*c == '+')
				*c = ' ';
		if (pct_inplace(key) < 0 || pct_inplace(val) < 0 || key[0] == '\0' ||
		    json_object_set_new(o, key, json_string(val)) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	if (o && rc < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

struct list_q {
	char meta[META_MAX], state[64], limit[32], next[80], templ[80];
	int has_meta, has_state, has_limit, has_next, has_templ;
};

/* The query parameters; 0, or -1 after a 400 naming the one at fault. */
static int parse_query(struct req *r, struct list_q *lq)
{
	const char *q = r->query;
	char key[64], msg[200];
	char *val = malloc(META_MAX);
	int rc;

	memset(lq, 0, sizeof *lq);
	if (val == NULL) {
		e2b_send_error(r, 500, "internal error", NULL);
		return -1;
	}
	while ((rc = http_query_next(&q, key, sizeof key, val, META_MAX)) == 1) {
		struct { const char *name; char *buf; size_t n; int *has; } p[] = {
			{ "metadata", lq->meta, sizeof lq->meta, &lq->has_meta },
			{ "state", lq->state, sizeof lq->state, &lq->has_state },
			{ "limit", lq->limit, sizeof lq->limit, &lq->has_limit },
			{ "nextToken", lq->next, sizeof lq->next, &lq->has_next },
			{ "template", lq->templ, sizeof lq->templ, &lq->has_templ },
			{ "order", NULL, 0, NULL },
		};
		size_t i;

		for (i = 0; i < sizeof p / sizeof p[0] && strcmp(p[i].name, key) != 0; i++)
			;
		if (i == sizeof p / sizeof p[0]) {
			snprintf(msg, sizeof msg, "%.60s: unknown query parameter (metadata, state,"
				 " limit, nextToken, template, order)", key);
			goto bad;
		}
		if (p[i].buf == NULL)
			continue; /* order: newest first is the only order here */
		/* state may come repeated (state=running&state=paused) or comma-separated */
		if (p[i].buf == lq->state && lq->has_state) {
			size_t l = strlen(lq->state);
			if (l + 1 + strlen(val) >= sizeof lq->state) {
				snprintf(msg, sizeof msg, "%s: too long", key);
				goto bad;
			}
			lq->state[l] = ',';
			memcpy(lq->state + l + 1, val, strlen(val) + 1);
			continue;
		}
		if (strlen(val) >= p[i].n) {
			snprintf(msg, sizeof msg, "%s: too long", key);
			goto bad;
		}
		memcpy(p[i].buf, val, strlen(val) + 1);
		*p[i].has = 1;
	}
	free(val);
	if (rc < 0) {
		e2b_send_error(r, 400, "malformed query string", NULL);
		return -1;
	}
	return 0;
bad:
	free(val);
	e2b_send_error(r, 400, msg, NULL);
	return -1;
}

/* ?state: running and/or paused, comma-separated. 1 running asked, 0 paused only,
 * -1 after a 400. */
static int state_filter(struct req *r, const struct list_q *lq)
{
	char buf[64], *save = NULL, *t;
	int running = 0;

	if (!lq->has_state)
		return 1;
	snprintf(buf, sizeof buf, "%s", lq->state);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "running") == 0)
			running = 1;
		else if (strcmp(t, "paused") != 0) {
			e2b_send_error(r, 400, "state: must be running or paused (comma-separated)",
				       NULL);
			return -1;
		}
	}
	return running;
}

void h_e2b_list(struct api_ctx *ctx, struct req *r, const struct identity *unused,
		const struct route_args *a)
{
	struct identity who;
	struct list_q lq;
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[12];
	struct db_res *res = NULL;
	json_t *filter = NULL, *out;
	char *fjson = NULL, *end, hdr[128];
	const char *domain = e2b_domain(r);
	long long limit = LIST_MAX, seq = 0;
	size_t n = 0, rows;
	int running;

	(void)unused;
	(void)a;
	if (e2b_authenticate(ctx, r, &who) < 0 || parse_query(r, &lq) < 0 ||
	    (running = state_filter(r, &lq)) < 0)
		return;
	if (lq.has_limit) {
		limit = strtoll(lq.limit, &end, 10);
		if (*end != '\0' || end == lq.limit || limit < 1 || limit > LIST_MAX) {
			e2b_send_error(r, 400, "limit: must be an integer from 1 to 100", NULL);
			return;
		}
	}
	if (lq.has_meta && (filter = metadata_filter(lq.meta)) == NULL) {
		e2b_send_error(r, 400, "metadata: must be an URL-encoded query string of key=value"
			       " pairs", NULL);
		return;
	}
	if (lq.has_next) {
		struct sess s;
		int rc = e2b_sess_load(ctx->db, &who, lq.next, &s);

		if (rc < 0) {
			json_decref(filter);
			e2b_db_error(ctx, r);
			return;
		}
		seq = rc ? db_res_i(s.res, 0, "seq", 0) : 0;
		sapi_sess_free(&s);
		if (rc == 0) {
			json_decref(filter);
			e2b_send_error(r, 400, "nextToken: names no sandbox of this list", NULL);
			return;
		}
	}
	if (!running) { /* paused only: there are none */
		json_decref(filter);
		http_send_json(r, 200, json_array(), NULL);
		return;
	}
	sb_adds(&sql, "SELECT " SESS_COLS " FROM sessions s WHERE s.e2b = 1 AND s.status IN "
		      SESS_LIVE);
	sb_adds(&sql, sapi_scope_sql(&who));
	n = auth_scope_params(&who, p, n);
	if (filter && json_object_size(filter) > 0) {
		fjson = json_dumps(filter, JSON_COMPACT);
		sb_adds(&sql, " AND JSON_CONTAINS(s.metadata_json, ?)");
		p[n++] = db_str(fjson);
	}
	if (lq.has_templ) {
		sb_adds(&sql, " AND s.profile_name = ?");
		p[n++] = db_str(strcmp(lq.templ, E2B_BASE_TEMPLATE) == 0 ? AUTH_DEFAULT_PROFILE
									  : lq.templ);
	}
	if (lq.has_next) {
		sb_adds(&sql, " AND s.seq < ?");
		p[n++] = db_i64(seq);
	}
	sb_adds(&sql, " ORDER BY s.seq DESC LIMIT ?");
	p[n++] = db_i64(limit + 1);
	if (!sql.failed && (fjson || !filter || json_object_size(filter) == 0))
		res = db_querya(ctx->db, sql.buf, p, n);
	sb_release(&sql);
	free(fjson);
	json_decref(filter);
	if (res == NULL) {
		e2b_db_error(ctx, r);
		return;
	}
	rows = db_res_rows(res) > (size_t)limit ? (size_t)limit : db_res_rows(res);
	out = json_array();
	for (size_t i = 0; out && i < rows; i++) {
		struct sess_view v;
		sapi_sess_row(res, i, &v);
		if (json_array_append_new(out, e2b_sandbox_info(&v, domain)) < 0) {
			json_decref(out);
			out = NULL;
		}
	}
	hdr[0] = '\0';
	if (db_res_rows(res) > rows && db_res_s(res, rows - 1, "id"))
		snprintf(hdr, sizeof hdr, "x-next-token: %s\r\n", db_res_s(res, rows - 1, "id"));
	db_res_free(res);
	http_send_json(r, 200, out, hdr[0] ? hdr : NULL);
}
