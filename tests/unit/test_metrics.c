/* app/http/metrics.c: address allow list, request counters and their text exposition. */
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "strbuf.h"
#include "tests.h"

static void test_allowed(void)
{
	static const struct {
		const char *list, *addr;
		int want;
	} rows[] = {
		{ "127.0.0.1,::1", "127.0.0.1", 1 },
		{ "127.0.0.1,::1", "::1", 1 },
		{ "127.0.0.1,::1", "127.0.0.2", 0 },
		{ "127.0.0.1, 10.1.0.0/16", "10.1.255.3", 1 },
		{ "10.1.0.0/16", "10.2.0.1", 0 },
		{ "10.1.0.0/16", "10.1.0.0", 1 },
		{ "0.0.0.0/0", "192.0.2.9", 1 },
		{ "192.0.2.9/32", "192.0.2.9", 1 },
		{ "192.0.2.9/33", "192.0.2.9", 0 }, /* a bad rule matches nothing */
		{ "10.1.0.0/16", "::ffff:10.1.0.1", 0 },
		{ "", "127.0.0.1", 0 },
		{ "127.0.0.1", "", 0 },
		{ "127.0.0.1", NULL, 0 },
		{ "127.0.0.10", "127.0.0.1", 0 }, /* whole addresses, not prefixes */
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_INT_AT(rows[i].addr ? rows[i].addr : "(null)",
			     mx_addr_allowed(rows[i].list, rows[i].addr), rows[i].want);
}

static void test_exposition(void)
{
	static const char *const names[] = { "none", "GET /v1/jobs", "POST /v1/jobs" };
	struct mx_board *b = calloc(1, sizeof *b);
	struct strbuf o = STRBUF_INIT;

	if (!CHECK(b != NULL, "calloc"))
		return;
	mx_record(&b->w[0], 1, 200, 0.4);  /* <= 1 ms */
	mx_record(&b->w[1], 1, 200, 30);   /* <= 50 ms, another worker */
	mx_record(&b->w[1], 2, 429, 3);
	mx_record(&b->w[0], 0, 404, 1);
	mx_record(&b->w[0], 2, 418, 99999); /* other status, +Inf bucket */
	mx_db_error(&b->w[1]);
	mx_db_tx(&b->w[0], DB_TX_EV_DEADLOCK);
	mx_db_tx(&b->w[1], DB_TX_EV_DEADLOCK);
	mx_db_tx(&b->w[1], DB_TX_EV_REQUESTED);
	mx_db_tx(&b->w[1], DB_TX_EV_LOST);
	mx_render_requests(&o, b, 2, names, 2);
	CHECK_HAS(o.buf, "sandbox_api_requests_total{route=\"GET /v1/jobs\",status=\"200\"} 2\n");
	CHECK_HAS(o.buf, "sandbox_api_requests_total{route=\"POST /v1/jobs\",status=\"429\"} 1\n");
	CHECK_HAS(o.buf, "sandbox_api_requests_total{route=\"POST /v1/jobs\",status=\"other\"} 1\n");
	CHECK_HAS(o.buf, "sandbox_api_requests_total{route=\"none\",status=\"404\"} 1\n");
	CHECK_HAS(o.buf, "sandbox_api_request_duration_seconds_bucket{route=\"GET /v1/jobs\",le=\"0.001\"} 1\n");
	CHECK_HAS(o.buf, "sandbox_api_request_duration_seconds_bucket{route=\"GET /v1/jobs\",le=\"0.05\"} 2\n");
	CHECK_HAS(o.buf, "sandbox_api_request_duration_seconds_bucket{route=\"POST /v1/jobs\",le=\"30\"} 1\n");
	CHECK_HAS(o.buf, "sandbox_api_request_duration_seconds_bucket{route=\"POST /v1/jobs\",le=\"+Inf\"} 2\n");
	CHECK_HAS(o.buf, "sandbox_api_request_duration_seconds_count{route=\"GET /v1/jobs\"} 2\n");
	CHECK_HAS(o.buf, "sandbox_api_db_errors_total 1\n");
	CHECK_HAS(o.buf, "# TYPE sandbox_api_tx_retries_total counter\n");
	CHECK_HAS(o.buf, "sandbox_api_tx_retries_total{cause=\"deadlock\"} 2\n");
	CHECK_HAS(o.buf, "sandbox_api_tx_retries_total{cause=\"lock_wait_timeout\"} 0\n");
	CHECK_HAS(o.buf, "sandbox_api_tx_retries_total{cause=\"requested\"} 1\n");
	CHECK_HAS(o.buf, "# TYPE sandbox_api_tx_lost_total counter\nsandbox_api_tx_lost_total 1\n");
	CHECK_HAS(o.buf, "# TYPE sandbox_api_request_duration_seconds histogram\n");
	CHECK_LACKS(o.buf, "status=\"500\""); /* no zero series */
	sb_release(&o);
	free(b);
}

/* Webhook figures: every state and outcome class shown (zero too), names from the
 * database only when they are known ones (never a free label value). */
static void test_webhooks(void)
{
	struct mx_hooks h = { { 0 }, { 0 } };
	struct strbuf o = STRBUF_INIT;

	mx_hooks_add_state(&h, "pending", 2);
	mx_hooks_add_state(&h, "failed", 1);
	mx_hooks_add_state(&h, "tenant-a\"}", 9);
	mx_hooks_add_state(&h, NULL, 9);
	mx_hooks_add_outcome(&h, "http_status", 2);
	mx_hooks_add_outcome(&h, "delivered", 1);
	mx_hooks_add_outcome(&h, "tls", 4);
	mx_hooks_add_outcome(&h, "https://x.example/", 5);
	mx_render_webhooks(&o, &h);
	CHECK_HAS(o.buf, "# TYPE sandbox_webhook_deliveries gauge\n");
	CHECK_HAS(o.buf, "# TYPE sandbox_webhook_attempts_total counter\n");
	CHECK_HAS(o.buf, "sandbox_webhook_deliveries{state=\"pending\"} 2\n");
	CHECK_HAS(o.buf, "sandbox_webhook_deliveries{state=\"delivered\"} 0\n");
	CHECK_HAS(o.buf, "sandbox_webhook_deliveries{state=\"failed\"} 1\n");
	CHECK_HAS(o.buf, "sandbox_webhook_attempts_total{outcome=\"http_status\"} 2\n");
	CHECK_HAS(o.buf, "sandbox_webhook_attempts_total{outcome=\"tls\"} 4\n");
	CHECK_HAS(o.buf, "sandbox_webhook_attempts_total{outcome=\"timeout\"} 0\n");
	CHECK_HAS(o.buf, "sandbox_webhook_attempts_all_total 7\n");
	CHECK_LACKS(o.buf, "tenant-a");
	CHECK_LACKS(o.buf, "x.example");
	sb_release(&o);
}

/* ---- a small Prometheus text checker (what promtool check metrics refuses of ours):
 * every sample belongs to a family with HELP and TYPE given before it; _bucket, _sum
 * and _count only under a histogram; a histogram's buckets (per label set) are
 * cumulative and end with le="+Inf", whose value is the _count. NULL, or why not. */
struct family {
	char name[96], type[16];
	int help;
};

static const char *suffix_of(const char *name, size_t *base)
{
	static const char *const sfx[] = { "_bucket", "_sum", "_count" };
	size_t n = strlen(name);

	for (size_t i = 0; i < NELEM(sfx); i++) {
		size_t k = strlen(sfx[i]);
		if (n > k && strcmp(name + n - k, sfx[i]) == 0) {
			*base = n - k;
			return sfx[i];
		}
	}
	*base = n;
	return "";
}

static const char *lint(const char *text, char *why, size_t wn)
{
	struct family fam[32];
	size_t nf = 0;
	char line[512], name[96], labels[256], prev_set[256] = "", last_le[32] = "";
	double prev = -1, inf = -1;

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n"), base, f;
		const char *sfx;
		double v;

		snprintf(line, sizeof line, "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
		if (strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0) {
			char type[16] = "";
			if (sscanf(line + 7, "%95s %15s", name, type) < 1 || nf == NELEM(fam))
				return "bad comment";
			for (f = 0; f < nf && strcmp(fam[f].name, name) != 0; f++)
				;
			if (f == nf)
				memset(&fam[nf++], 0, sizeof fam[0]);
			snprintf(fam[f].name, sizeof fam[f].name, "%s", name);
			if (line[2] == 'H')
				fam[f].help = 1;
			else
				snprintf(fam[f].type, sizeof fam[f].type, "%s", type);
			continue;
		}
		labels[0] = '\0';
		if (sscanf(line, "%95[a-z_]{%255[^}]} %lf", name, labels, &v) != 3 &&
		    sscanf(line, "%95[a-z_] %lf", name, &v) != 2) {
			snprintf(why, wn, "unparsable sample '%.160s'", line);
			return why;
		}
		sfx = suffix_of(name, &base);
		for (f = 0; f < nf && strcmp(fam[f].name, name) != 0; f++)
			;
		if (f == nf && *sfx)
			for (f = 0; f < nf && (strncmp(fam[f].name, name, base) != 0 ||
					       fam[f].name[base] != '\0' ||
					       strcmp(fam[f].type, "histogram") != 0); f++)
				;
		if (f == nf || !fam[f].help || !fam[f].type[0]) {
			snprintf(why, wn, "%s: no family with HELP and TYPE", name);
			return why;
		}
		if (strcmp(fam[f].type, "histogram") != 0 || strcmp(sfx, "_bucket") != 0) {
			if (strcmp(sfx, "_count") == 0 && strcmp(fam[f].type, "histogram") == 0 &&
			    v != inf) {
				snprintf(why, wn, "%s is %g, its +Inf bucket %g", name, v, inf);
				return why;
			}
			continue;
		}
		/* a bucket: the label set without le, then le itself */
		char *le = strstr(labels, "le=\""), set[256];
		if (le == NULL)
			return "a bucket without le";
		snprintf(set, sizeof set, "%.*s", (int)(le - labels), labels);
		if (strcmp(set, prev_set) != 0) {
			if (prev >= 0 && strcmp(last_le, "+Inf") != 0)
				return "a histogram's buckets do not end with le=\"+Inf\"";
			snprintf(prev_set, sizeof prev_set, "%s", set);
			prev = -1;
		}
		snprintf(last_le, sizeof last_le, "%.*s", (int)strcspn(le + 4, "\""), le + 4);
		if (v < prev) {
			snprintf(why, wn, "%s{%s}: %g after %g (not cumulative)", name, labels, v, prev);
			return why;
		}
		prev = v;
		if (strcmp(last_le, "+Inf") == 0)
			inf = v;
	}
	if (prev >= 0 && strcmp(last_le, "+Inf") != 0)
		return "a histogram's buckets do not end with le=\"+Inf\"";
	return NULL;
}

/* The checker itself: what promtool refused (issue 25), and worse, must fail it. */
static void test_lint(void)
{
	static const struct {
		const char *text, *want; /* want: a part of why, NULL: valid */
	} rows[] = {
		{ "# HELP a_seconds x\n# TYPE a_seconds gauge\na_seconds_bucket{le=\"1\"} 0\n",
		  "a_seconds_bucket: no family" },
		{ "# TYPE a gauge\na 1\n", "a: no family" },
		{ "# HELP a x\n# TYPE a histogram\na_bucket{le=\"1\"} 2\na_bucket{le=\"2\"} 1\n",
		  "not cumulative" },
		{ "# HELP a x\n# TYPE a histogram\na_bucket{le=\"1\"} 2\na_sum 1\na_count 2\n",
		  "+Inf" },
		{ "# HELP a x\n# TYPE a histogram\na_bucket{le=\"+Inf\"} 2\na_sum 1\na_count 3\n",
		  "a_count is 3" },
		{ "# HELP a x\n# TYPE a histogram\na_bucket{le=\"1\"} 1\na_bucket{le=\"+Inf\"} 2\n"
		  "a_sum 1.5\na_count 2\n# HELP b_total y\n# TYPE b_total counter\nb_total 4\n",
		  NULL },
	};
	char why[256];

	for (size_t i = 0; i < NELEM(rows); i++) {
		const char *got = lint(rows[i].text, why, sizeof why);
		if (rows[i].want == NULL)
			CHECK(got == NULL, "row %zu: valid text refused: %s", i, got);
		else if (CHECK(got != NULL, "row %zu: invalid text accepted", i))
			CHECK_HAS_AT(rows[i].text, got, rows[i].want);
	}
}

/* The recent-jobs histograms (GET /metrics): the whole text, row by row. */
static void test_window(void)
{
	static const double le[] = { 0.01, 0.5, 300 };
	static const struct {
		long long cum[3], count, sum_us;
		const char *want;
	} rows[] = {
		{ { 0, 0, 0 }, 0, 0,
		  "a_bucket{le=\"0.01\"} 0\na_bucket{le=\"0.5\"} 0\na_bucket{le=\"300\"} 0\n"
		  "a_bucket{le=\"+Inf\"} 0\na_sum 0.000000\na_count 0\n" },
		{ { 0, 1, 1 }, 1, 30000,
		  "a_bucket{le=\"0.01\"} 0\na_bucket{le=\"0.5\"} 1\na_bucket{le=\"300\"} 1\n"
		  "a_bucket{le=\"+Inf\"} 1\na_sum 0.030000\na_count 1\n" },
		/* a job over the last bound: only in +Inf; sums past a second */
		{ { 1, 2, 2 }, 3, 400123456,
		  "a_bucket{le=\"0.01\"} 1\na_bucket{le=\"0.5\"} 2\na_bucket{le=\"300\"} 2\n"
		  "a_bucket{le=\"+Inf\"} 3\na_sum 400.123456\na_count 3\n" },
		/* out of order or over the count: raised, capped (still a histogram) */
		{ { 3, 2, 9 }, 4, 7,
		  "a_bucket{le=\"0.01\"} 3\na_bucket{le=\"0.5\"} 3\na_bucket{le=\"300\"} 4\n"
		  "a_bucket{le=\"+Inf\"} 4\na_sum 0.000007\na_count 4\n" },
		/* clocks that went back (started before created): the sign kept */
		{ { 1, 1, 1 }, 1, -1500,
		  "a_bucket{le=\"0.01\"} 1\na_bucket{le=\"0.5\"} 1\na_bucket{le=\"300\"} 1\n"
		  "a_bucket{le=\"+Inf\"} 1\na_sum -0.001500\na_count 1\n" },
	};
	char why[256], want[512];

	for (size_t i = 0; i < NELEM(rows); i++) {
		struct strbuf o = STRBUF_INIT;
		const struct mx_window w = { "a", "Queue wait (a window).", le, rows[i].cum, 3,
					     rows[i].count, rows[i].sum_us };
		char ctx[32];
		const char *bad;

		snprintf(ctx, sizeof ctx, "window row %zu", i);
		mx_render_window(&o, &w);
		snprintf(want, sizeof want, "# HELP a Queue wait (a window).\n# TYPE a histogram\n%s",
			 rows[i].want);
		CHECK_STR_AT(ctx, o.buf, want);
		bad = lint(o.buf, why, sizeof why);
		CHECK(bad == NULL, "%s: not valid Prometheus text: %s", ctx, bad);
		sb_release(&o);
	}
}

/* Every family the pure renderers write passes the checker. */
static void test_valid_text(void)
{
	static const char *const names[] = { "none", "GET /v1/jobs", "POST /v1/jobs" };
	struct mx_board *b = calloc(1, sizeof *b);
	struct mx_hooks h = { { 1, 2, 3 }, { 4, 5, 6, 7, 8, 9, 10, 11 } };
	struct strbuf o = STRBUF_INIT;
	char why[256];
	const char *bad;

	if (!CHECK(b != NULL, "calloc"))
		return;
	mx_render_requests(&o, b, 2, names, 2); /* nothing recorded: families without samples */
	bad = lint(o.buf, why, sizeof why);
	CHECK(bad == NULL, "request metrics, none recorded: %s", bad);
	sb_release(&o);
	mx_record(&b->w[0], 1, 200, 0.4);
	mx_record(&b->w[1], 1, 200, 30);
	mx_record(&b->w[1], 2, 429, 99999);
	mx_render_requests(&o, b, 2, names, 2);
	bad = lint(o.buf, why, sizeof why);
	CHECK(bad == NULL, "request metrics: %s", bad);
	sb_release(&o);
	mx_render_webhooks(&o, &h);
	bad = lint(o.buf, why, sizeof why);
	CHECK(bad == NULL, "webhook metrics: %s", bad);
	sb_release(&o);
	free(b);
}

static const CU_TestInfo tests[] = {
	{ "addr_allowed", test_allowed },
	{ "exposition", test_exposition },
	{ "webhooks", test_webhooks },
	{ "lint", test_lint },
	{ "window", test_window },
	{ "valid_text", test_valid_text },
	CU_TEST_INFO_NULL,
};

void suite_metrics(void)
{
	t_register("metrics", tests);
}
