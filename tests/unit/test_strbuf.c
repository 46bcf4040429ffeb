/* common/strbuf and common/jobstate. */
#include <stdlib.h>
#include <string.h>

#include "jobstate.h"
#include "strbuf.h"
#include "tests.h"

static void test_invariants(void)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;
	size_t n;

	CHECK(sb.buf != NULL && sb.buf[0] == '\0' && sb.len == 0, "a new buffer is \"\"");
	sb_adds(&sb, "abc");
	sb_add(&sb, "\0de", 3); /* NUL bytes are data */
	CHECK_INT(sb.len, 6);
	CHECK(memcmp(sb.buf, "abc\0de", 7) == 0, "bytes kept, NUL-terminated");
	sb_reset(&sb);
	CHECK(sb.len == 0 && sb.buf[0] == '\0', "reset empties it");
	for (int i = 0; i < 1000; i++)
		sb_addf(&sb, "%d,", i);
	CHECK_INT(sb.len, 3890);
	CHECK(strncmp(sb.buf + sb.len - 4, "999,", 4) == 0 && sb.buf[sb.len] == '\0',
	      "formatted appends grow without truncating");
	CHECK_INT(sb.failed, 0);
	s = sb_detach(&sb, &n);
	CHECK_INT(n, 3890);
	CHECK(sb.buf != NULL && sb.len == 0, "detach leaves an empty buffer");
	free(s);
	s = sb_detach(&sb, &n);
	CHECK(s != NULL && s[0] == '\0' && n == 0, "detaching an empty buffer gives a fresh \"\"");
	free(s);
	sb_addf(&sb, "%s", "x");
	sb_release(&sb);
	CHECK(sb.buf == strbuf_empty && sb.len == 0 && sb.alloc == 0, "release empties it");
}

static void test_jobstate(void)
{
	static const char *const all[] = { "queued",   "running",        "succeeded",
					   "failed",   "timed_out",      "output_limit",
					   "resource_limit", "blocked", "error",
					   "cancelled", "lost" };

	CHECK_INT(JS_COUNT, (long long)NELEM(all));
	for (int i = 0; i < JS_COUNT; i++) {
		CHECK_STR_AT(all[i], js_name(i), all[i]);
		CHECK_INT_AT(all[i], js_parse(all[i]), i);
		CHECK_INT_AT(all[i], js_is_terminal(i), i >= JS_SUCCEEDED);
	}
	CHECK_INT(js_parse("Queued"), -1);
	CHECK_INT(js_parse("queued "), -1);
	CHECK_INT(js_parse(""), -1);
	CHECK(js_name(JS_COUNT) == NULL, "no name outside the enum");
	CHECK_INT(js_is_terminal(JS_COUNT), 0);
}

static const CU_TestInfo tests[] = {
	{ "strbuf_invariants", test_invariants },
	{ "jobstate_table", test_jobstate },
	CU_TEST_INFO_NULL,
};

void suite_strbuf(void)
{
	t_register("strbuf", tests);
}
