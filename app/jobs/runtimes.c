/* GET /v1/runtimes: what jobs can name as "runtime", as the runner hosts found it.
 * The list comes from runner_runtimes (schema 008), which each runner host refreshes
 * by probing its sandbox (sandbox-runner/dispatch/rtprobe.c): only hosts seen in the last 5
 * minutes (runner_hosts.seen_at, the dispatcher's heartbeat) count, a runtime no
 * such host provides is not listed, and each distinct version across hosts is its
 * own entry. Any authenticated key may read it. The same rows decide whether a
 * submitted job's runtime is provided (rtl_check, rtlive.h). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "api_routes.h"
#include "db.h"
#include "http.h"
#include "log.h"
#include "routes.h"
#include "rtlive.h"

/* "a,b" -> ["a","b"] ("" -> []). */
static json_t *split_aliases(const char *s)
{
	json_t *a = json_array();

	while (a && s && *s) {
		size_t n = strcspn(s, ",");
		json_array_append_new(a, json_stringn(s, n));
		s += n + (s[n] == ',');
	}
	return a;
}

void h_runtimes(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	struct db_res *res;
	json_t *list;

	(void)who;
	(void)a;
	if (*r->query != '\0') {
		http_send_error(r, 400, "invalid_request", "GET /v1/runtimes takes no query parameters",
				NULL, NULL);
		return;
	}
	res = db_querya(ctx->db,
			"SELECT t.name, t.version, MAX(t.aliases) AS aliases, MAX(t.file) AS file,"
			" MAX(t.has_compile) AS has_compile FROM runner_runtimes t"
			" JOIN runner_hosts h ON h.host = t.host"
			" WHERE h.seen_at >= NOW(3) - INTERVAL " RTL_FRESH_MINUTES " MINUTE"
			" GROUP BY t.name, t.version ORDER BY t.name, t.version",
			NULL, 0);
	if (res == NULL) {
		route_db_error(ctx, r);
		return;
	}
	list = json_array();
	for (size_t i = 0; list && i < db_res_rows(res); i++) {
		const char *v = db_res_s(res, i, "version");
		json_array_append_new(list,
				      json_pack("{s:s, s:o, s:o, s:s, s:b}", "name",
						db_res_s(res, i, "name"), "version",
						v ? json_string(v) : json_null(), "aliases",
						split_aliases(db_res_s(res, i, "aliases")), "file",
						db_res_s(res, i, "file"), "compiled",
						(int)db_res_i(res, i, "has_compile", 0)));
	}
	db_res_free(res);
	http_send_json(r, 200, json_pack("{s:o}", "runtimes", list ? list : json_array()), NULL);
}

int rtl_check(struct db *db, const struct job_req *req, struct val_err *e)
{
	struct db_res *res;
	long long reported, has;

	if (req->runtime[0] == '\0')
		return 0;
	res = db_query_p(db,
			 "SELECT COUNT(*) AS reported, COALESCE(SUM(t.name = ?), 0) AS has"
			 " FROM runner_runtimes t JOIN runner_hosts h ON h.host = t.host"
			 " WHERE h.seen_at >= NOW(3) - INTERVAL " RTL_FRESH_MINUTES " MINUTE",
			 db_str(req->runtime));
	if (res == NULL)
		return -2;
	reported = db_res_i(res, 0, "reported", 0);
	has = db_res_i(res, 0, "has", 0);
	db_res_free(res);
	if (reported == 0 || has > 0)
		return 0;
	e->status = 422;
	e->code = "runtime_unavailable";
	snprintf(e->field, sizeof e->field, "runtime");
	snprintf(e->message, sizeof e->message,
		 "no runner host provides runtime '%s': the hosts seen in the last "
		 RTL_FRESH_MINUTES " minutes lack it (GET /v1/runtimes lists what they provide)",
		 req->runtime);
	return -1;
}
