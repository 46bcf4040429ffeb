/* The dispatcher: the route table (api_routes.h) matched, the caller authenticated,
 * the handler run; a worker's database connection and the answers to a storage
 * failure; and the service's own routes, GET /v1/health and GET /metrics (the figures
 * read at scrape time). The handlers of jobs, sessions and MCP live in their
 * subsystems (app/jobs, app/sessions, app/mcp), which include app/http, never the
 * other way round. */
#include "routes.h"

#include <stdio.h>
#include <string.h>

#include "api_routes.h"
#include "auth.h"
#include "jobstate.h"
#include "log.h"
#include "metrics.h"
#include "router.h"
#include "strbuf.h"
#include "util.h"
#include "waiter.h"

#define RETRY_AFTER "Retry-After: 1\r\n"

/* A connection idle for a while may have died with a MariaDB restart: check it
 * first, so that the request reconnects instead of answering 503. */
struct db *route_db(struct api_ctx *ctx)
{
	char err[512];
	double now = util_mono_ms();

	if (ctx->db != NULL && now - ctx->db_used > 1000.0 && db_ping(ctx->db) < 0) {
		db_close(ctx->db);
		ctx->db = NULL;
	}
	ctx->db_used = now;
	if (ctx->db == NULL) {
		ctx->db = db_open(ctx->cfg, err, sizeof err);
		if (ctx->db == NULL)
			log_kv("error", "db_connect", "error", err, (char *)NULL);
	}
	return ctx->db;
}

static void send_unavailable(struct req *r)
{
	http_send_error(r, 503, "service_unavailable", "the database is unavailable; retry later",
			NULL, RETRY_AFTER);
}

/* Answers a storage failure; drops the connection when it is gone (routes.h). */
void route_db_error(struct api_ctx *ctx, struct req *r)
{
	char code[16];

	if (ctx->mx)
		mx_db_error(&ctx->mx->w[ctx->slot]);

	snprintf(code, sizeof code, "%u", db_errno(ctx->db));
	log_kv("error", "db_error", "errno", code, "error", db_error(ctx->db), "lost_conflict",
	       db_tx_lost(ctx->db) || db_retryable(ctx->db) ? "1" : "0", (char *)NULL);
	if (db_gone(ctx->db)) {
		db_close(ctx->db);
		ctx->db = NULL;
		send_unavailable(r);
		return;
	}
	/* A transaction that kept losing to concurrent ones (db_tx's bound): the request
	 * is fine, the moment was not. */
	if (db_tx_lost(ctx->db) || db_retryable(ctx->db)) {
		http_send_error(r, 503, "service_unavailable", "the request kept conflicting"
				" with concurrent ones and was not carried out; retry", NULL,
				RETRY_AFTER);
		return;
	}
	http_send_error(r, 500, "internal_error", "internal error", NULL, NULL);
}

static int authenticate(struct api_ctx *ctx, struct req *r, struct identity *who)
{
	struct db *db = route_db(ctx);

	if (db == NULL) {
		send_unavailable(r);
		return -1;
	}
	switch (auth_identify(db, r->authorization, who)) {
	case AUTH_OK:
		return 0;
	case AUTH_MISSING:
		http_send_error(r, 401, "unauthorized", "missing bearer token", NULL,
				"WWW-Authenticate: Bearer realm=\"sandbox\"\r\n");
		return -1;
	case AUTH_INVALID:
		http_send_error(r, 401, "unauthorized", "invalid or revoked token", NULL,
				"WWW-Authenticate: Bearer realm=\"sandbox\", "
				"error=\"invalid_token\"\r\n");
		return -1;
	case AUTH_DB_ERROR:
	default:
		route_db_error(ctx, r);
		return -1;
	}
}

void h_health(struct api_ctx *ctx, struct req *r, const struct identity *who,
	      const struct route_args *a)
{
	struct db *db = route_db(ctx);
	struct db_res *res;

	if (db == NULL) {
		send_unavailable(r);
		return;
	}
	(void)who;
	(void)a;
	res = db_querya(db, "SELECT 1", NULL, 0);
	if (res == NULL) {
		route_db_error(ctx, r);
		return;
	}
	db_res_free(res);
	http_send_json(r, 200, json_pack("{s:s, s:s}", "status", "ok", "database", "ok"), NULL);
}

static const struct route routes[] = {
#define ROUTE(method, pattern, handler, is_public) \
	{ method, pattern, handler, #handler, is_public },
	API_ROUTES(ROUTE)
#undef ROUTE
};

#define NROUTES (sizeof routes / sizeof routes[0])

/* A runner host's name as a label value: it is the runner's (gethostname), never a
 * tenant's; still, only characters that need no escaping are kept. */
static void host_label(char *out, size_t n, const char *host)
{
	snprintf(out, n, "%s", host ? host : "");
	for (char *c = out; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '.' || *c == '_'))
			*c = '_';
}

/* A gauge by runner host: its HELP and TYPE lines, then one sample per row of res
 * (its "host" column the label, col the value). */
static void host_gauge(struct strbuf *o, const char *name, const char *help,
		       const struct db_res *res, const char *col)
{
	sb_addf(o, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (size_t i = 0; i < db_res_rows(res); i++) {
		char host[130];
		host_label(host, sizeof host, db_res_s(res, i, "host"));
		sb_addf(o, "%s{runner_host=\"%s\"} %lld\n", name, host, db_res_i(res, i, col, 0));
	}
}

/* Capacity per live runner host (runner_hosts, refreshed every 5 s by each
 * dispatcher; hosts silent for a minute are left out), sessions by status, and the
 * long-polls this API instance holds. */
static int host_metrics(struct db *db, struct strbuf *o)
{
	static const char *const sst[] = { "starting", "ready", "closed", "expired", "failed",
					   "lost" };
	struct db_res *res = db_querya(db,
				       "SELECT host, slots, max_sessions FROM runner_hosts WHERE"
				       " seen_at >= CURRENT_TIMESTAMP(3) - INTERVAL 60 SECOND"
				       " ORDER BY host",
				       NULL, 0);
	long long waiting = 0;
	unsigned long long polls, queries;

	if (res == NULL)
		return -1;
	host_gauge(o, "sandbox_runner_slots", "Job slots per live runner host.", res, "slots");
	host_gauge(o, "sandbox_runner_max_sessions", "Session places per live runner host.", res,
		   "max_sessions");
	db_res_free(res);
	res = db_querya(db, "SELECT status, COUNT(*) AS n FROM sessions GROUP BY status", NULL, 0);
	if (res == NULL)
		return -1;
	sb_adds(o, "# HELP sandbox_sessions Sessions in the database, by status.\n"
		   "# TYPE sandbox_sessions gauge\n");
	for (size_t k = 0; k < sizeof sst / sizeof sst[0]; k++) {
		long long n = 0;
		for (size_t i = 0; i < db_res_rows(res); i++)
			if (db_res_s(res, i, "status") && strcmp(db_res_s(res, i, "status"), sst[k]) == 0)
				n = db_res_i(res, i, "n", 0);
		sb_addf(o, "sandbox_sessions{status=\"%s\"} %lld\n", sst[k], n);
	}
	db_res_free(res);
	wt_stats(&polls, &queries, &waiting);
	sb_addf(o, "# HELP sandbox_api_waiting_requests Long-polls this API instance holds now.\n"
		   "# TYPE sandbox_api_waiting_requests gauge\nsandbox_api_waiting_requests %lld\n",
		waiting);
	return 0;
}

/* Webhook deliveries by state (a GROUP BY over the job_callbacks_due index of a table
 * purge keeps bounded: 15 ms for 100k rows) and attempts by outcome class (the sums of
 * webhook_attempt_counts, at most 128 rows); app/http/metrics.c renders them. */
static int webhook_metrics(struct db *db, struct strbuf *o)
{
	struct mx_hooks h = { { 0 }, { 0 } };
	struct db_res *res = db_querya(db, "SELECT state, COUNT(*) AS n FROM job_callbacks"
					   " GROUP BY state", NULL, 0);

	if (res == NULL)
		return -1;
	for (size_t i = 0; i < db_res_rows(res); i++)
		mx_hooks_add_state(&h, db_res_s(res, i, "state"), db_res_i(res, i, "n", 0));
	db_res_free(res);
	res = db_querya(db, "SELECT outcome, SUM(n) AS n FROM webhook_attempt_counts"
			    " GROUP BY outcome", NULL, 0);
	if (res == NULL)
		return -1;
	for (size_t i = 0; i < db_res_rows(res); i++)
		mx_hooks_add_outcome(&h, db_res_s(res, i, "outcome"), db_res_i(res, i, "n", 0));
	db_res_free(res);
	mx_render_webhooks(o, &h);
	return 0;
}

/* Queue wait and run time of the jobs that finished in the last 5 minutes, as two
 * histograms (app/http/metrics.c): whole microseconds in SQL (a DOUBLE sum came back
 * through the prepared-statement protocol rounded to "0"), seconds in the text. */
static int recent_metrics(struct db *db, struct strbuf *o)
{
	static const double le[] = { 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 300 };
	static const char *const what[2][3] = {
		{ "sandbox_recent_job_queue_wait_seconds", "Queue wait", "w" },
		{ "sandbox_recent_job_run_seconds", "Run time", "r" },
	};
	struct strbuf q = STRBUF_INIT;
	struct db_res *res;

	sb_adds(&q, "SELECT COUNT(*) AS n, COALESCE(SUM(w), 0) AS ws, COALESCE(SUM(r), 0) AS rs");
	for (size_t k = 0; k < sizeof le / sizeof le[0]; k++)
		sb_addf(&q, ", COALESCE(SUM(w <= %lld), 0) AS w%zu, COALESCE(SUM(r <= %lld), 0)"
			    " AS r%zu", (long long)(le[k] * 1e6), k, (long long)(le[k] * 1e6), k);
	sb_adds(&q, " FROM (SELECT TIMESTAMPDIFF(MICROSECOND, created_at, started_at) AS w,"
		    " TIMESTAMPDIFF(MICROSECOND, started_at, finished_at) AS r"
		    " FROM jobs WHERE finished_at >= CURRENT_TIMESTAMP(3) - INTERVAL 300 SECOND"
		    " AND started_at IS NOT NULL) recent");
	res = q.failed ? NULL : db_querya(db, q.buf, NULL, 0);
	sb_release(&q);
	if (res == NULL)
		return -1;
	for (int i = 0; i < 2; i++) {
		long long cum[sizeof le / sizeof le[0]];
		char col[8], help[128];
		struct mx_window w = { what[i][0], help, le, cum, sizeof le / sizeof le[0],
				       db_res_i(res, 0, "n", 0), 0 };

		snprintf(col, sizeof col, "%ss", what[i][2]);
		w.sum_us = db_res_i(res, 0, col, 0);
		for (size_t k = 0; k < w.n; k++) {
			snprintf(col, sizeof col, "%s%zu", what[i][2], k);
			cum[k] = db_res_i(res, 0, col, 0);
		}
		snprintf(help, sizeof help, "%s of the jobs finished in the last 5 minutes (a"
			 " window, not a running total).", what[i][1]);
		mx_render_window(o, &w);
	}
	db_res_free(res);
	return 0;
}

/* The job figures of GET /metrics, from the database at scrape time. Costs: one
 * GROUP BY over the jobs table's state index (grows with the table: purge keeps it
 * bounded), the rest through indexes. */
static int job_metrics(struct db *db, struct strbuf *o)
{
	struct db_res *res;

	res = db_querya(db, "SELECT state, COUNT(*) AS n FROM jobs GROUP BY state", NULL, 0);
	if (res == NULL)
		return -1;
	sb_adds(o, "# HELP sandbox_jobs Jobs in the database, by state.\n"
		   "# TYPE sandbox_jobs gauge\n");
	for (int st = 0; st < JS_COUNT; st++) {
		long long n = 0;
		for (size_t i = 0; i < db_res_rows(res); i++)
			if (js_parse(db_res_s(res, i, "state")) == st)
				n = db_res_i(res, i, "n", 0);
		sb_addf(o, "sandbox_jobs{state=\"%s\"} %lld\n", js_name(st), n);
	}
	db_res_free(res);
	/* The job at the head of the claim order: how long the next job to run waited. */
	res = db_querya(db,
			"SELECT TIMESTAMPDIFF(MICROSECOND, created_at, CURRENT_TIMESTAMP(3)) AS us"
			" FROM jobs WHERE state = 'queued' ORDER BY fair_tag, seq LIMIT 1",
			NULL, 0);
	if (res == NULL)
		return -1;
	sb_addf(o, "# HELP sandbox_queue_head_age_seconds How long the next job to be claimed"
		   " has waited (0: queue empty).\n# TYPE sandbox_queue_head_age_seconds gauge\n"
		   "sandbox_queue_head_age_seconds %.3f\n",
		db_res_rows(res) ? (double)db_res_i(res, 0, "us", 0) / 1e6 : 0.0);
	db_res_free(res);
	res = db_querya(db,
			"SELECT SUBSTRING_INDEX(runner_id, '/', 1) AS host, COUNT(*) AS n FROM jobs"
			" WHERE state = 'running' GROUP BY host ORDER BY host",
			NULL, 0);
	if (res == NULL)
		return -1;
	host_gauge(o, "sandbox_runner_busy_slots", "Running jobs per runner host.", res, "n");
	db_res_free(res);
	if (host_metrics(db, o) < 0 || webhook_metrics(db, o) < 0)
		return -1;
	return recent_metrics(db, o);
}

/* GET /metrics: Prometheus text. Public in the route table (scrapers hold no API
 * key); nginx allows it from configured addresses only and the API checks
 * REMOTE_ADDR against metrics_allow as well. */
void h_metrics(struct api_ctx *ctx, struct req *r, const struct identity *who,
	       const struct route_args *a)
{
	static const char *names[NROUTES + 1];
	static char labels[NROUTES + 1][96];
	struct strbuf o = STRBUF_INIT;
	struct db *db;

	(void)who;
	(void)a;
	if (!mx_addr_allowed(ctx->cfg->metrics_allow, r->remote_addr)) {
		http_send_error(r, 403, "forbidden", "metrics are not served to this address",
				NULL, NULL);
		return;
	}
	if ((db = route_db(ctx)) == NULL) {
		send_unavailable(r);
		return;
	}
	if (job_metrics(db, &o) < 0) {
		sb_release(&o);
		route_db_error(ctx, r);
		return;
	}
	for (size_t i = 0; i < NROUTES; i++) {
		snprintf(labels[i + 1], sizeof labels[i + 1], "%s %s", routes[i].method,
			 routes[i].pattern);
		names[i + 1] = labels[i + 1];
	}
	names[0] = "none";
	if (ctx->mx)
		mx_render_requests(&o, ctx->mx, (size_t)ctx->cfg->api_workers, names, NROUTES);
	if (o.failed) {
		sb_release(&o);
		http_send_error(r, 500, "internal_error", "internal error", NULL, NULL);
		return;
	}
	http_send_bytes(r, 200, "text/plain; version=0.0.4; charset=utf-8", o.buf, o.len, NULL);
	sb_release(&o);
}

void routes_handle(struct api_ctx *ctx, struct req *r)
{
	char allow[64], hdr[96];
	struct route_args a;
	struct identity who;
	const struct route *rt = router_match(routes, sizeof routes / sizeof routes[0], r->method,
					      r->path, &a, allow, sizeof allow);

	if (rt == NULL && allow[0] == '\0') {
		http_send_error(r, 404, "not_found", "no such endpoint", NULL, NULL);
		return;
	}
	if (rt == NULL) {
		snprintf(hdr, sizeof hdr, "Allow: %s\r\n", allow);
		http_send_error(r, 405, "method_not_allowed", "method not allowed", NULL, hdr);
		return;
	}
	r->route = (int)(rt - routes) + 1;
	if (rt->is_public) {
		rt->handler(ctx, r, NULL, &a);
		return;
	}
	if (authenticate(ctx, r, &who) < 0)
		return;
	routes_ratelimit(ctx, r, &who);
	rt->handler(ctx, r, &who, &a);
}
