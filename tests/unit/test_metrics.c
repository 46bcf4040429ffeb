/* app/metrics.c: address allow list, request counters and their text exposition. */
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

static const CU_TestInfo tests[] = {
	{ "addr_allowed", test_allowed },
	{ "exposition", test_exposition },
	{ "webhooks", test_webhooks },
	CU_TEST_INFO_NULL,
};

void suite_metrics(void)
{
	t_register("metrics", tests);
}
