/* jobcache: only finished, small jobs are kept; every hit is scoped like the SQL. */
#include <stdio.h>
#include <string.h>

#include "jobcache.h"
#include "tests.h"

#define ID1 "01900000-0000-7000-8000-000000000001"
#define ID2 "01900000-0000-7000-8000-000000000002"

static json_t *job(const char *status, const char *subject, size_t out_len)
{
	char out[20000];

	memset(out, 'x', out_len);
	out[out_len] = '\0';
	return json_pack("{s:s, s:{s:s, s:s, s:s, s:s}, s:{s:s}}", "status", status, "identity",
			 "identity_namespace", "ns", "tenant_id", "t1", "subject_type", "user",
			 "subject_id", subject, "result", "stdout", out);
}

static struct identity who(const char *tenant, const char *subject, int admin)
{
	struct identity w;

	memset(&w, 0, sizeof w);
	snprintf(w.ns, sizeof w.ns, "ns");
	snprintf(w.tenant, sizeof w.tenant, "%s", tenant);
	snprintf(w.subject_type, sizeof w.subject_type, "user");
	snprintf(w.subject_id, sizeof w.subject_id, "%s", subject);
	w.tenant_admin = admin;
	return w;
}

static void test_scope_and_state(void)
{
	json_t *done = job("succeeded", "alice", 10), *queued = job("queued", "alice", 10), *got;
	struct identity alice = who("t1", "alice", 0), bob = who("t1", "bob", 0);
	struct identity admin = who("t1", "root", 1), other = who("t2", "alice", 1);

	jc_clear();
	jc_put(ID1, done);
	jc_put(ID2, queued);
	got = jc_get(ID1, &alice);
	CHECK(got == done, "the owner gets the cached finished job");
	json_decref(got);
	got = jc_get(ID1, &admin);
	CHECK(got == done, "a tenant admin of the same tenant gets it");
	json_decref(got);
	CHECK(jc_get(ID1, &bob) == NULL, "another subject gets nothing from the cache");
	CHECK(jc_get(ID1, &other) == NULL, "an admin of another tenant gets nothing");
	CHECK(jc_get(ID2, &alice) == NULL, "a queued job is never cached");
	jc_clear();
	CHECK(jc_get(ID1, &alice) == NULL, "jc_clear empties the cache");
	json_decref(done);
	json_decref(queued);
}

/* A finished job whose webhook is still pending changes (callback.attempts_log):
 * only a settled callback, or none, is cached. */
static void test_pending_callback_not_kept(void)
{
	static const char *const st[] = { "pending", "delivered", "failed" };
	struct identity alice = who("t1", "alice", 0);

	for (size_t i = 0; i < 3; i++) {
		json_t *j = job("succeeded", "alice", 1), *got;

		json_object_set_new(j, "callback", json_pack("{s:s}", "state", st[i]));
		jc_clear();
		jc_put(ID1, j);
		got = jc_get(ID1, &alice);
		CHECK((got != NULL) == (i != 0), "callback %s: cached %d", st[i], got != NULL);
		json_decref(got);
		json_decref(j);
	}
	jc_clear();
}

static void test_big_output_not_kept(void)
{
	json_t *big = job("failed", "alice", JOBCACHE_MAX_OUTPUT + 1);
	struct identity alice = who("t1", "alice", 0);

	jc_clear();
	jc_put(ID1, big);
	CHECK(jc_get(ID1, &alice) == NULL, "a job with more than %d bytes of output is not kept",
	      JOBCACHE_MAX_OUTPUT);
	json_decref(big);
}

static void test_eviction(void)
{
	struct identity alice = who("t1", "alice", 0);
	json_t *j = job("succeeded", "alice", 1), *got;
	char id[40];

	jc_clear();
	for (int i = 0; i < JOBCACHE_ENTRIES + 10; i++) {
		snprintf(id, sizeof id, "01900000-0000-7000-8000-%012d", i);
		jc_put(id, j);
	}
	snprintf(id, sizeof id, "01900000-0000-7000-8000-%012d", 0);
	CHECK(jc_get(id, &alice) == NULL, "the oldest entry was evicted");
	snprintf(id, sizeof id, "01900000-0000-7000-8000-%012d", JOBCACHE_ENTRIES + 9);
	got = jc_get(id, &alice);
	CHECK(got == j, "the newest entry is there");
	json_decref(got);
	jc_clear();
	json_decref(j);
}

static void test_text(void)
{
	json_t *done = job("succeeded", "alice", 5), *copy = json_deep_copy(done), *got;
	struct identity alice = who("t1", "alice", 0);
	char want[256];
	const char *t;
	size_t n = 0, wn;

	jc_clear();
	jc_put(ID1, done);
	got = jc_get(ID1, &alice);
	wn = json_dumpb(done, want, sizeof want - 1, JSON_COMPACT);
	want[wn++] = '\n';
	t = jc_text(got, &n);
	CHECK(t != NULL && n == wn && memcmp(t, want, wn) == 0,
	      "a cached job's text is its compact JSON and a newline (got %zu bytes, want %zu)", n,
	      wn);
	CHECK(jc_text(copy, &n) == NULL, "an equal object that is not the cached one has no text");
	CHECK(jc_text(NULL, &n) == NULL, "NULL has no text");
	json_decref(got);
	jc_clear();
	CHECK(jc_text(done, &n) == NULL, "after jc_clear nothing has a text");
	json_decref(done);
	json_decref(copy);
}

static void test_pending_callback(void)
{
	static const char *const states[] = { "pending", "delivered", "failed" };
	struct identity alice = who("t1", "alice", 0);

	for (int i = 0; i < 3; i++) {
		json_t *j = job("succeeded", "alice", 1), *got;

		json_object_set_new(j, "callback", json_pack("{s:s}", "state", states[i]));
		jc_clear();
		jc_put(ID1, j);
		got = jc_get(ID1, &alice);
		CHECK((got != NULL) == (i != 0), "a finished job whose webhook is %s is %scached",
		      states[i], i ? "" : "not ");
		json_decref(got);
		json_decref(j);
	}
	jc_clear();
}

void suite_jobcache(void)
{
	static const CU_TestInfo tests[] = { { "scope_and_state", test_scope_and_state },
					     { "big_output_not_kept", test_big_output_not_kept },
					     { "pending_callback_not_kept", test_pending_callback_not_kept },
					     { "eviction", test_eviction },
					     { "text", test_text },
					     { "pending_callback", test_pending_callback },
					     CU_TEST_INFO_NULL };

	t_register("jobcache", tests);
}
