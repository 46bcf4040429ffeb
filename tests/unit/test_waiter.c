/* waiter: the conditions of every kind, the batch sizes and query texts, the board's
 * capacity, per-key share and generations, and wt_defer's contract with a handler. */
#include <stdio.h>
#include <string.h>

#include "http.h"
#include "tests.h"
#include "util.h"
#include "waiter.h"

#define ID1 "01900000-0000-7000-8000-000000000001"
#define ID2 "01900000-0000-7000-8000-000000000002"

static void test_conditions(void)
{
	static const struct {
		enum wt_kind kind;
		int stream;
		long long baseline;
		int found;
		const char *state;
		long long n1, n2;
		int ready;
	} rows[] = {
		{ WT_JOB_DONE, 0, 0, 1, "queued", 0, 0, 0 },
		{ WT_JOB_DONE, 0, 0, 1, "running", 0, 0, 0 },
		{ WT_JOB_DONE, 0, 0, 1, "succeeded", 0, 0, 1 },
		{ WT_JOB_DONE, 0, 0, 1, "cancelled", 0, 0, 1 },
		{ WT_JOB_DONE, 0, 0, 1, "lost", 0, 0, 1 },
		{ WT_JOB_DONE, 0, 0, 1, "no-such-state", 0, 0, 1 },
		{ WT_JOB_DONE, 0, 0, 0, NULL, 0, 0, 1 },
		{ WT_JOB_OUTPUT, 1, 10, 1, "running", 10, 99, 0 },
		{ WT_JOB_OUTPUT, 1, 10, 1, "running", 11, 0, 1 },
		{ WT_JOB_OUTPUT, 2, 10, 1, "running", 99, 10, 0 },
		{ WT_JOB_OUTPUT, 2, 10, 1, "running", 0, 11, 1 },
		{ WT_JOB_OUTPUT, 1, 10, 1, "failed", 10, 0, 1 },
		{ WT_SESSION_READY, 0, 0, 1, "starting", 0, 0, 0 },
		{ WT_SESSION_READY, 0, 0, 1, "ready", 0, 0, 1 },
		{ WT_SESSION_READY, 0, 0, 1, "failed", 0, 0, 1 },
		{ WT_SESSION_READY, 0, 0, 0, NULL, 0, 0, 1 },
		{ WT_COMMAND_DONE, 0, 0, 1, "queued", 0, 0, 0 },
		{ WT_COMMAND_DONE, 0, 0, 1, "running", 0, 0, 0 },
		{ WT_COMMAND_DONE, 0, 0, 1, "killed", 0, 0, 1 },
		{ WT_COMMAND_OUTPUT, 1, 0, 1, "running", 0, 5, 0 },
		{ WT_COMMAND_OUTPUT, 1, 0, 1, "running", 1, 0, 1 },
		{ WT_COMMAND_OUTPUT, 2, 7, 1, "running", 100, 7, 0 },
		{ WT_COMMAND_OUTPUT, 2, 7, 1, "timed_out", 0, 7, 1 },
		/* stream 3: both streams' sum (envd's streams, app/e2b/eprocess.c) */
		{ WT_COMMAND_OUTPUT, 3, 7, 1, "running", 3, 4, 0 },
		{ WT_COMMAND_OUTPUT, 3, 7, 1, "running", 3, 5, 1 },
		{ WT_COMMAND_OUTPUT, 3, 7, 1, "running", 8, 0, 1 },
		{ WT_COMMAND_OUTPUT, 3, 99, 1, "succeeded", 0, 0, 1 },
		{ WT_SESSION_ENDED, 0, 0, 1, "starting", 0, 0, 0 },
		{ WT_SESSION_ENDED, 0, 0, 1, "ready", 0, 0, 0 },
		{ WT_SESSION_ENDED, 0, 0, 1, "closed", 0, 0, 1 },
		{ WT_SESSION_ENDED, 0, 0, 1, "expired", 0, 0, 1 },
		{ WT_SESSION_ENDED, 0, 0, 1, "lost", 0, 0, 1 },
		{ WT_SESSION_ENDED, 0, 0, 0, NULL, 0, 0, 1 },
		{ WT_REQUEST_DONE, 0, 0, 1, "pending", 0, 0, 0 },
		{ WT_REQUEST_DONE, 0, 0, 1, "done", 0, 0, 1 },
		{ WT_REQUEST_DONE, 0, 0, 1, "failed", 0, 0, 1 },
		{ WT_REQUEST_DONE, 0, 0, 0, NULL, 0, 0, 1 },
	};
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct wt_cond c = { rows[i].kind, ID1, rows[i].stream, rows[i].baseline };
		struct wt_row r = { rows[i].found, rows[i].state, rows[i].n1, rows[i].n2 };
		char ctx[96];

		snprintf(ctx, sizeof ctx, "row %zu (kind %d, state %s)", i, rows[i].kind,
			 rows[i].state ? rows[i].state : "(none)");
		CHECK_INT_AT(ctx, wt_cond_ready(&c, &r), rows[i].ready);
	}
	CHECK_INT(wt_source_of(WT_COMMAND_DONE), WS_COMMANDS);
	CHECK_INT(wt_source_of(WT_COMMAND_OUTPUT), WS_COMMANDS);
	CHECK_INT(wt_source_of(WT_JOB_DONE), WS_JOBS);
	CHECK_INT(wt_source_of(WT_SESSION_READY), WS_SESSIONS);
	/* close's wait shares the sessions query with ?wait=S on a session */
	CHECK_INT(wt_source_of(WT_SESSION_ENDED), WS_SESSIONS);
	CHECK_INT(wt_source_of(WT_REQUEST_DONE), WS_REQUESTS);
	for (int s = 0; s < WS_SOURCES; s++)
		CHECK_INT_AT("numeric sources", wt_source_numeric((enum wt_source)s),
			     s == WS_REQUESTS);
}

/* Request ids are BIGINTs: only their canonical decimal text is a valid id (the poll
 * matches the rows' CAST(id AS CHAR) to the entries by text). */
static void test_request_ids(void)
{
	static const struct {
		enum wt_kind kind;
		const char *id;
		int ok;
	} ids[] = {
		{ WT_REQUEST_DONE, "1", 1 },
		{ WT_REQUEST_DONE, "9223372036854775807", 1 },
		{ WT_REQUEST_DONE, "9223372036854775808", 0 },
		{ WT_REQUEST_DONE, "0", 0 },
		{ WT_REQUEST_DONE, "012", 0 },
		{ WT_REQUEST_DONE, "-1", 0 },
		{ WT_REQUEST_DONE, "+1", 0 },
		{ WT_REQUEST_DONE, " 1", 0 },
		{ WT_REQUEST_DONE, "1x", 0 },
		{ WT_REQUEST_DONE, "", 0 },
		{ WT_REQUEST_DONE, ID1, 0 },
		{ WT_SESSION_ENDED, ID1, 1 },
		{ WT_SESSION_ENDED, "", 0 },
		{ WT_KINDS, "1", 0 },
	};
	char sql[8192];

	for (size_t i = 0; i < NELEM(ids); i++) {
		char ctx[64];
		snprintf(ctx, sizeof ctx, "kind %d id '%s'", ids[i].kind, ids[i].id);
		CHECK_INT_AT(ctx, wt_id_ok(ids[i].kind, ids[i].id), ids[i].ok);
	}
	CHECK_INT(wt_query_text(WS_REQUESTS, 8, sql, sizeof sql), 0);
	CHECK_STR(sql, "SELECT CAST(id AS CHAR) AS id, state AS st, 0 AS n1, 0 AS n2"
		       " FROM session_requests WHERE id IN (?,?,?,?,?,?,?,?)");
	CHECK_INT(wt_query_text(WS_SESSIONS, 1, sql, sizeof sql), 0);
	CHECK_STR(sql, "SELECT id, status AS st, 0 AS n1, 0 AS n2 FROM sessions WHERE id IN (?)");
}

static size_t count(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static void test_batches(void)
{
	static const size_t in[] = { 1, 2, 8, 9, 64, 65, 500, 512 };
	static const size_t out[] = { 1, 8, 8, 64, 64, 512, 512, 512 };
	char sql[8192];

	for (size_t i = 0; i < NELEM(in); i++) {
		char ctx[32];
		snprintf(ctx, sizeof ctx, "wt_pad_size(%zu)", in[i]);
		CHECK_INT_AT(ctx, wt_pad_size(in[i]), out[i]);
	}
	for (int s = 0; s < WS_SOURCES; s++) {
		for (size_t i = 0; i < NELEM(out); i++) {
			char ctx[48];
			snprintf(ctx, sizeof ctx, "source %d, %zu ids", s, out[i]);
			CHECK_INT_AT(ctx, wt_query_text((enum wt_source)s, out[i], sql, sizeof sql), 0);
			CHECK_INT_AT(ctx, count(sql, '?'), out[i]);
			CHECK_HAS_AT(ctx, sql, " IN (?");
			CHECK_INT_AT(ctx, sql[strlen(sql) - 1], ')');
		}
	}
	CHECK_INT(wt_query_text(WS_JOBS, 0, sql, sizeof sql), -1);
	CHECK_INT(wt_query_text(WS_JOBS, 513, sql, sizeof sql), -1);
	CHECK_INT(wt_query_text(WS_JOBS, 64, sql, 80), -1);
	CHECK_INT(wt_query_text(WS_SOURCES, 1, sql, sizeof sql), -1);
}

static void test_board(void)
{
	struct wt_board *b = wt_board_create(4, 3, 0, 25);
	struct wt_cond c = { WT_JOB_DONE, ID1, 0, 0 };
	int ta = wt_key_tag("key-a"), tb = wt_key_tag("key-b"), e[5];
	unsigned g[5];

	if (!CHECK(b != NULL, "board created"))
		return;
	CHECK(ta != 0 && ta != tb, "key tags are non-zero and differ");
	for (int i = 0; i < 3; i++)
		CHECK((e[i] = wt_board_take(b, 0, ta, &c, &g[i])) >= 0, "key a takes entry %d", i);
	CHECK_INT(wt_board_take(b, 0, ta, &c, &g[3]), -1); /* its share: 3 */
	CHECK((e[3] = wt_board_take(b, 1, tb, &c, &g[3])) >= 0, "key b still gets one");
	CHECK_INT(wt_board_take(b, 1, tb, &c, &g[4]), -1); /* capacity: 4 */
	wt_board_give(b, e[0], g[0] + 1); /* a stale generation frees nothing */
	CHECK_INT(wt_board_take(b, 1, tb, &c, &g[4]), -1);
	wt_board_give(b, e[0], g[0]);
	CHECK((e[4] = wt_board_take(b, 1, tb, &c, &g[4])) >= 0, "a freed entry is taken again");
	CHECK(e[4] != e[0] || g[4] != g[0], "with a new generation");
	wt_release_owner(b, 1); /* a dead worker's entries */
	CHECK((e[0] = wt_board_take(b, 2, tb, &c, &g[0])) >= 0, "after the owner died");
	wt_board_destroy(b);

	b = wt_board_create(10, 0, 0, 25); /* per key 0: half */
	for (int i = 0; i < 5; i++)
		wt_board_take(b, 0, ta, &c, &g[0]);
	CHECK_INT(wt_board_take(b, 0, ta, &c, &g[0]), -1);
	wt_board_destroy(b);
}

static void test_defer(void)
{
	struct wt_board *b = wt_board_create(2, 1, 1, 25);
	struct req r, r2, r3;
	double t0 = util_mono_ms();

	if (!CHECK(b != NULL, "board created"))
		return;
	wt_attach(b, 0);
	memset(&r, 0, sizeof r);
	memset(&r2, 0, sizeof r2);
	memset(&r3, 0, sizeof r3);
	CHECK_INT(wt_defer(&r, "k1", &(struct wt_cond){ WT_JOB_DONE, ID1, 0, 0 }, 0), 0);
	CHECK_INT(wt_defer(&r, "k1", &(struct wt_cond){ WT_JOB_OUTPUT, ID1, 3, 0 }, 5), 0);
	CHECK_INT(wt_defer(&r, "k1", &(struct wt_cond){ WT_JOB_DONE, "", 0, 0 }, 5), 0);
	CHECK_INT(wt_defer(&r, "k1", &(struct wt_cond){ WT_JOB_DONE, ID1, 0, 0 }, 99), 1);
	CHECK_INT(r.wait.deferred, 1);
	CHECK_STR(r.wait.id, ID1);
	CHECK(r.wait.deadline_ms >= t0 + 30000 - 1 && r.wait.deadline_ms <= t0 + 31000,
	      "the wait is capped at 30 s (%.0f ms)", r.wait.deadline_ms - t0);
	CHECK_INT(wt_is_ready(&r), 0);
	CHECK(wt_any_waiting(), "the board has a waiter");
	CHECK_INT(wt_defer(&r2, "k1", &(struct wt_cond){ WT_JOB_DONE, ID2, 0, 0 }, 5), 0);
	CHECK_INT(r2.wait.deferred, 0);
	CHECK_INT(wt_defer(&r2, "k3", &(struct wt_cond){ WT_REQUEST_DONE, "07", 0, 0 }, 5), 0);
	CHECK_INT(wt_defer(&r2, "k3", &(struct wt_cond){ WT_REQUEST_DONE, ID2, 0, 0 }, 5), 0);
	CHECK_INT(r2.wait.deferred, 0);
	CHECK_INT(wt_defer(&r3, "k2", &(struct wt_cond){ WT_COMMAND_OUTPUT, ID2, 2, 10 }, 5), 1);
	CHECK(wt_claim_tick(util_mono_ms()), "the first tick is claimed");
	CHECK(!wt_claim_tick(util_mono_ms()), "only once per tick");
	wt_release(&r);
	CHECK_INT(r.wait.deferred, 0);
	CHECK_INT(wt_is_ready(&r), 1); /* its entry is gone */
	r.wait.resumed = 1;
	CHECK_INT(wt_defer(&r, "k1", &(struct wt_cond){ WT_JOB_DONE, ID1, 0, 0 }, 5), 0);
	/* a stream waits again after a re-dispatch, in milliseconds, never while stopping */
	t0 = util_mono_ms();
	CHECK_INT(wt_stream(&r, "k1", &(struct wt_cond){ WT_JOB_OUTPUT, ID1, 3, 0 }, 500), 0);
	CHECK_INT(wt_stream(&r, "k1", &(struct wt_cond){ WT_COMMAND_OUTPUT, ID1, 3, 0 }, 0), 0);
	CHECK_INT(wt_stream(&r, "k1", &(struct wt_cond){ WT_COMMAND_OUTPUT, ID1, 3, 4 }, 500), 1);
	CHECK(r.wait.deadline_ms >= t0 + 499 && r.wait.deadline_ms <= t0 + 1000,
	      "a stream's wait is in ms (%.0f ms)", r.wait.deadline_ms - t0);
	wt_release(&r);
	CHECK_INT(wt_stream(&r, "k1", &(struct wt_cond){ WT_COMMAND_OUTPUT, ID1, 3, 4 }, 99999), 1);
	CHECK(r.wait.deadline_ms <= util_mono_ms() + 30000, "capped at 30 s too");
	wt_release(&r);
	r.wait.stopping = 1;
	CHECK_INT(wt_stream(&r, "k1", &(struct wt_cond){ WT_COMMAND_OUTPUT, ID1, 3, 4 }, 500), 0);
	wt_release(&r3);
	CHECK(!wt_any_waiting(), "nothing waits after the releases");
	wt_attach(NULL, -1);
	wt_board_destroy(b);
}

/* Reservations (a session request: its place first, its condition after the INSERT):
 * a reserved entry counts on the capacity and the key's share, is never polled, and
 * is armed, given back or released with its worker. */
static void test_reserve(void)
{
	struct wt_board *b = wt_board_create(3, 2, 1, 25);
	struct req r, r2, r3, r4;
	unsigned g;
	int e;

	if (!CHECK(b != NULL, "board created"))
		return;
	memset(&r, 0, sizeof r);
	memset(&r2, 0, sizeof r2);
	memset(&r3, 0, sizeof r3);
	memset(&r4, 0, sizeof r4);
	CHECK_INT(wt_reserve(&r, "k1"), WT_NO_BOARD); /* not attached: no board */
	CHECK_INT(r.wait.reserved, 0);
	wt_attach(b, 0);
	CHECK_INT(wt_reserve(&r, "k1"), WT_RESERVED);
	CHECK_INT(r.wait.reserved, 1);
	CHECK_INT(r.wait.deferred, 0);
	CHECK(wt_any_waiting(), "a reservation counts as taken");
	CHECK_INT(wt_reserve(&r2, "k1"), WT_RESERVED);
	CHECK_INT(wt_reserve(&r3, "k1"), WT_KEY_SHARE); /* share 2 */
	CHECK_INT(r3.wait.reserved, 0);
	CHECK_INT(wt_defer(&r3, "k1", &(struct wt_cond){ WT_JOB_DONE, ID1, 0, 0 }, 5), 0);
	CHECK_INT(wt_reserve(&r3, "k2"), WT_RESERVED);
	CHECK_INT(wt_reserve(&r4, "k3"), WT_NO_ROOM); /* capacity 3 */
	/* armed: waits like wt_defer's */
	CHECK_INT(wt_defer_reserved(&r, &(struct wt_cond){ WT_REQUEST_DONE, "42", 0, 0 }, 5), 1);
	CHECK_INT(r.wait.reserved, 0);
	CHECK_INT(r.wait.deferred, 1);
	CHECK_STR(r.wait.id, "42");
	CHECK_INT(wt_is_ready(&r), 0);
	/* a bad condition gives the reservation back: answer now */
	CHECK_INT(wt_defer_reserved(&r2, &(struct wt_cond){ WT_REQUEST_DONE, "07", 0, 0 }, 5), 0);
	CHECK_INT(r2.wait.reserved, 0);
	CHECK_INT(r2.wait.deferred, 0);
	CHECK_INT(wt_reserve(&r4, "k1"), WT_RESERVED); /* its place is free again */
	/* given back (the INSERT failed), twice: the second is a no-op */
	wt_unreserve(&r4);
	wt_unreserve(&r4);
	CHECK_INT(r4.wait.reserved, 0);
	CHECK_INT(wt_defer_reserved(&r4, &(struct wt_cond){ WT_REQUEST_DONE, "43", 0, 0 }, 5), 0);
	CHECK_INT(wt_reserve(&r4, "k1"), WT_RESERVED);
	r4.wait.resumed = 1;
	CHECK_INT(wt_reserve(&r2, "k9"), WT_NO_ROOM);
	/* a stale generation arms nothing */
	CHECK_INT(wt_board_arm(b, r4.wait.entry, r4.wait.gen + 1,
			       &(struct wt_cond){ WT_REQUEST_DONE, "44", 0, 0 }), -1);
	wt_release(&r);
	wt_unreserve(&r4);
	wt_release_owner(b, 0); /* r3's reservation, with its dead worker */
	CHECK(!wt_any_waiting(), "nothing held after the releases");
	e = wt_board_reserve(b, 0, wt_key_tag("k1"), &g);
	CHECK(e >= 0, "reserved on the board directly");
	CHECK_INT(wt_board_arm(b, e, g, &(struct wt_cond){ WT_REQUEST_DONE, "45", 0, 0 }), 0);
	CHECK_INT(wt_board_arm(b, e, g, &(struct wt_cond){ WT_REQUEST_DONE, "45", 0, 0 }), -1);
	wt_board_give(b, e, g);
	wt_attach(NULL, -1);
	wt_board_destroy(b);
}

/* The result wake-up (wt_nudge): brings the next poll forward, never sooner than
 * WT_NUDGE_MIN_US after the last poll began, never later than it was due. */
static void test_nudge(void)
{
	struct wt_board *b = wt_board_create(2, 1, 1, 5000);
	struct req r;
	double now;

	CHECK_INT(wt_nudge_at(50000, 10000, 90000), 50000);    /* due now */
	CHECK_INT(wt_nudge_at(10200, 10000, 90000), 11000);    /* 1 ms after the last */
	CHECK_INT(wt_nudge_at(50000, 10000, 20000), 20000);    /* already due sooner */
	CHECK_INT(wt_nudge_at(10000, 10000, 10500), 10500);
	if (!CHECK(b != NULL, "board created"))
		return;
	wt_attach(b, 0);
	memset(&r, 0, sizeof r);
	now = util_mono_ms();
	wt_nudge(now); /* nobody waits: nothing changes */
	CHECK_INT(wt_defer(&r, "k1", &(struct wt_cond){ WT_JOB_DONE, ID1, 0, 0 }, 5), 1);
	CHECK(wt_claim_tick(now), "the first tick is claimed");
	CHECK(wt_next_poll_ms() >= now + 4999, "the next poll is a tick (5 s) away");
	CHECK(!wt_claim_tick(now + 500), "no poll before the tick without a wake-up");
	wt_nudge(now + 500);
	CHECK(wt_next_poll_ms() <= now + 501, "a wake-up brings it to now (%.1f ms away)",
	      wt_next_poll_ms() - now);
	CHECK(wt_claim_tick(now + 500), "then the poll is claimed at once");
	wt_nudge(now + 500.2);
	CHECK(!wt_claim_tick(now + 500.2), "a second wake-up within 1 ms: no poll yet");
	CHECK(wt_claim_tick(now + 501.1), "but 1 ms after the last one");
	for (int i = 0; i < 1000; i++)
		wt_nudge(now + 501.2); /* a flood */
	CHECK(!wt_claim_tick(now + 501.5), "a flood of wake-ups: still one poll per ms");
	CHECK(wt_claim_tick(now + 502.1), "the coalesced poll");
	wt_release(&r);
	wt_attach(NULL, -1);
	wt_board_destroy(b);
}

/* A group (wt_defer_all, a batch's ?wait=S): all entries or none, each counted
 * against the key's share, given back together, ready only when each entry is. */
static void test_group(void)
{
	struct wt_board *b = wt_board_create(6, 4, 1, 25);
	const char *ids[3] = { ID1, ID2, ID1 };
	struct wt_cond c[5];
	struct req r;
	unsigned g, g1;
	int head, one;

	if (!CHECK(b != NULL, "board created"))
		return;
	for (int i = 0; i < 5; i++)
		c[i] = (struct wt_cond){ WT_JOB_DONE, ID1, 0, 0 };
	CHECK_INT(wt_board_take_all(b, 0, 7, c, 5, &g), -1); /* over the share of 4 */
	CHECK_INT(wt_board_take_all(b, 0, 7, c, 0, &g), -1);
	CHECK((head = wt_board_take_all(b, 0, 7, c, 3, &g)) >= 0, "a group of 3 within the share");
	CHECK((one = wt_board_take(b, 0, 7, c, &g1)) >= 0, "the share's fourth entry");
	CHECK_INT(wt_board_take(b, 0, 7, c, &g1), -1);
	CHECK_INT(wt_board_take_all(b, 0, 9, c, 3, &g1), -1); /* 2 free entries left */
	wt_board_give(b, head, g + 1); /* a stale generation frees nothing */
	CHECK_INT(wt_board_take_all(b, 0, 9, c, 3, &g1), -1);
	wt_board_give(b, head, g); /* the whole group */
	CHECK(wt_board_take_all(b, 0, 9, c, 4, &g1) >= 0, "the group's 3 entries came back");
	wt_board_destroy(b);

	b = wt_board_create(4, 0, 1, 25);
	if (!CHECK(b != NULL, "board created"))
		return;
	wt_attach(b, 0);
	memset(&r, 0, sizeof r);
	CHECK_INT(wt_defer_all(&r, "k1", WT_JOB_OUTPUT, ids, 2, 5), 0);
	CHECK_INT(wt_defer_all(&r, "k1", WT_JOB_DONE, ids, 3, 5), 0); /* share: 2 */
	CHECK_INT(wt_defer_all(&r, "k1", WT_JOB_DONE, ids, 2, 5), 1);
	CHECK_INT(r.wait.deferred, 1);
	CHECK_STR(r.wait.id, ID1);
	CHECK_INT(wt_is_ready(&r), 0);
	wt_release(&r);
	CHECK(!wt_any_waiting(), "the group's entries are all given back");
	wt_attach(NULL, -1);
	wt_board_destroy(b);
}

void suite_waiter(void)
{
	static const CU_TestInfo tests[] = {
		{ "conditions of every kind", test_conditions },
		{ "batch sizes and query texts", test_batches },
		{ "request ids (BIGINT) and the new kinds' queries", test_request_ids },
		{ "board: capacity, share, generations", test_board },
		{ "wt_defer and a handler", test_defer },
		{ "reservations: place first, condition after", test_reserve },
		{ "result wake-up: nudge and coalescing", test_nudge },
		{ "groups: all or none, share, give back", test_group },
		CU_TEST_INFO_NULL,
	};
	t_register("waiter", tests);
}
