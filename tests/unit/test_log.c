/* common/log: one line per event, values quoted/escaped, secrets redacted. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "redact.h"
#include "tests.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Formats one line with the given pairs into buf and checks the invariants every
 * line has: NUL-terminated, no raw newline, return value = length. */
static int fmt(char *buf, size_t n, const char *const *kv, size_t nkv)
{
	int len = log_format(buf, n, "info", "request", kv, nkv);

	CHECK(len >= 0 && (size_t)len < n, "log_format returned %d for a %zu-byte buffer",
	      len, n);
	CHECK_INT(strlen(buf), len);
	CHECK_LACKS(buf, "\n");
	CHECK_LACKS(buf, "\r");
	return len;
}

static void test_plain_pairs(void)
{
	static const char *const kv[] = { "method", "GET", "path", "/v1/jobs", "status", "200" };
	char buf[512];

	fmt(buf, sizeof buf, kv, NELEM(kv));
	CHECK(strncmp(buf, "ts=", 3) == 0, "line must start with ts=, got \"%s\"", buf);
	CHECK_HAS(buf, " level=info ");
	CHECK_HAS(buf, " event=request");
	CHECK_HAS(buf, " pid=");
	/* Plain values are unquoted, in order, at the end of the line. */
	const char *tail = " method=GET path=/v1/jobs status=200";
	size_t bl = strlen(buf), tl = strlen(tail);
	CHECK(bl >= tl && strcmp(buf + bl - tl, tail) == 0, "expected line to end with \"%s\", got \"%s\"",
	      tail, buf);
}

static void test_quoting_and_escaping(void)
{
	static const struct {
		const char *value;
		const char *want; /* the ` k=...` fragment */
	} rows[] = {
		{ "two words", " k=\"two words\"" },
		{ "say \"hi\"", " k=\"say \\\"hi\\\"\"" },
		{ "line1\nline2", " k=\"line1\\x0aline2\"" },
		{ "a\tb\rc", " k=\"a\\x09b\\x0dc\"" },
		{ "back\\slash", " k=\"back\\\\slash\"" },
		{ "a=b", " k=\"a=b\"" },
		{ "", " k=\"\"" },
		{ "del\x7f", " k=\"del\\x7f\"" },
		{ "he said \"no\"\nthen left", " k=\"he said \\\"no\\\"\\x0athen left\"" },
		{ "caf\xc3\xa9", " k=caf\xc3\xa9" }, /* UTF-8 passes through unquoted */
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		const char *kv[] = { "k", rows[i].value, "after", "1" };
		char buf[512], want[128], ctx[80];

		fmt(buf, sizeof buf, kv, NELEM(kv));
		snprintf(want, sizeof want, "%s after=1", rows[i].want);
		t_show(rows[i].value, strlen(rows[i].value), ctx, sizeof ctx);
		CHECK_HAS_AT(ctx, buf, want);
	}
}

static void test_null_value(void)
{
	static const char *const kv[] = { "user", NULL, "x", "y" };
	char buf[256];

	fmt(buf, sizeof buf, kv, NELEM(kv));
	CHECK_HAS(buf, " user=- x=y");
}

static void test_redaction(void)
{
	static const struct {
		const char *value;
		const char *gone;
		const char *kept;
	} rows[] = {
		{ "sbx_" HEX64, HEX64, REDACTED },
		{ "key sbx_" HEX64 " rejected", "0123456789abcdef", REDACTED },
		{ "Bearer x", "Bearer x", "auth=" },
		{ "Bearer abcdefghijklmnopqrstuvwxyz", "abcdefghij", REDACTED },
		{ "password=hunter2 user=bob", "hunter2", "user=bob" },
		/* Redaction happens before escaping: a newline cannot hide the token. */
		{ "x\nBearer sbx_" HEX64, HEX64, REDACTED },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		const char *kv[] = { "auth", rows[i].value };
		char buf[512], ctx[120];

		t_show(rows[i].value, strlen(rows[i].value), ctx, sizeof ctx);
		fmt(buf, sizeof buf, kv, NELEM(kv));
		CHECK_LACKS_AT(ctx, buf, rows[i].gone);
		CHECK_HAS_AT(ctx, buf, rows[i].kept);
	}
}

/* A small buffer truncates the line but never overruns it. */
static void test_truncation(void)
{
	static const char *const kv[] = { "msg", "a \"long\" value\nwith escapes and more text",
					  "other", "value" };

	for (size_t n = 1; n <= 200; n++) {
		char buf[256];

		memset(buf, '#', sizeof buf);
		int len = log_format(buf, n, "info", "request", kv, NELEM(kv));
		if (!CHECK(len >= 0 && (size_t)len < n && strlen(buf) == (size_t)len,
			   "n=%zu: returned %d, strlen %zu", n, len, strnlen(buf, n)))
			break;
		if (!CHECK(buf[n] == '#', "n=%zu: wrote past the buffer", n))
			break;
	}
}

/* The line's head, built without snprintf: exactly "ts=YYYY-MM-DDTHH:MM:SS.mmmZ
 * level=L prog=P pid=N event=E", N this process's pid. */
static void test_head_shape(void)
{
	char buf[256], want[128], ts[32];
	int len = log_format(buf, sizeof buf, "warn", "x_y", NULL, 0);

	CHECK_INT(strlen(buf), len);
	CHECK(len > 27 && buf[7] == '-' && buf[10] == '-' && buf[13] == 'T' && buf[16] == ':' &&
		      buf[19] == ':' && buf[22] == '.' && buf[26] == 'Z',
	      "ts shape: \"%s\"", buf);
	for (int i = 3; i < 26; i++)
		if (i != 7 && i != 10 && i != 13 && i != 16 && i != 19 && i != 22)
			CHECK(buf[i] >= '0' && buf[i] <= '9', "ts digit %d of \"%s\"", i, buf);
	snprintf(ts, sizeof ts, "%.27s", buf);
	snprintf(want, sizeof want, "%s level=warn prog=sandbox pid=%ld event=x_y", ts,
		 (long)getpid());
	CHECK_STR(buf, want);
}

/* A head cut short is a prefix of the whole (what one snprintf of it gave): every
 * buffer size from 1 to past its length. The timestamp may tick between calls, so
 * the bytes after it are compared, and its length. */
static void test_head_truncation(void)
{
	char full[256];
	int len = log_format(full, sizeof full, "info", "request", NULL, 0);

	for (size_t n = 1; n <= (size_t)len + 2; n++) {
		char buf[260];
		size_t want = n - 1 < (size_t)len ? n - 1 : (size_t)len;

		memset(buf, '#', sizeof buf);
		int got = log_format(buf, n, "info", "request", NULL, 0);
		if (!CHECK(got >= 0 && (size_t)got == want && strlen(buf) == want && buf[n] == '#',
			   "n=%zu: returned %d, strlen %zu, want %zu", n, got, strnlen(buf, n), want))
			break;
		if (want > 27 && !CHECK(memcmp(buf + 27, full + 27, want - 27) == 0,
					"n=%zu: \"%s\" is not a prefix of \"%s\"", n, buf, full))
			break;
	}
}

static const CU_TestInfo tests[] = {
	{ "plain_pairs", test_plain_pairs },
	{ "quoting_and_escaping", test_quoting_and_escaping },
	{ "null_value", test_null_value },
	{ "redaction", test_redaction },
	{ "truncation", test_truncation },
	{ "head_shape", test_head_shape },
	{ "head_truncation", test_head_truncation },
	CU_TEST_INFO_NULL,
};

void suite_log(void)
{
	t_register("log", tests);
}
