/* common/redact: secrets are scrubbed from free text, everything else is kept. */
#include <stdio.h>
#include <string.h>

#include "redact.h"
#include "tests.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define TOKEN "sbx_" HEX64

struct row {
	const char *in;
	int count;            /* secrets found */
	const char *out;      /* exact result */
	const char *gone[4];  /* substrings that must not survive */
};

static void run_rows(const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char buf[512], ctx[128], show[100];
		size_t before = strlen(rows[i].in);

		snprintf(buf, sizeof buf, "%s", rows[i].in);
		snprintf(ctx, sizeof ctx, "redact(\"%s\")",
			 t_show(rows[i].in, before, show, sizeof show));
		CHECK_INT_AT(ctx, redact(buf), rows[i].count);
		CHECK_STR_AT(ctx, buf, rows[i].out);
		CHECK(strlen(buf) <= before, "%s grew from %zu to %zu bytes", ctx, before,
		      strlen(buf));
		for (size_t k = 0; k < NELEM(rows[i].gone) && rows[i].gone[k] != NULL; k++)
			CHECK_LACKS_AT(ctx, buf, rows[i].gone[k]);
	}
}

static void test_bearer_header(void)
{
	static const struct row rows[] = {
		{ "Authorization: Bearer " TOKEN, 1, "Authorization: Bearer " REDACTED,
		  { HEX64, "0123456789", NULL } },
		{ "authorization: bearer " TOKEN "\r\n", 1, "authorization: bearer " REDACTED "\r\n",
		  { HEX64, "0123456789", NULL } },
		{ "Bearer abcdefghijklmnopqrstuvwxyz", 1, "Bearer " REDACTED, { "abcdefghij", NULL } },
		/* A short bearer value is cut to nothing (the marker would be longer). */
		{ "Bearer x", 1, "Bearer ", { "Bearer x", NULL } },
	};

	run_rows(rows, NELEM(rows));
}

static void test_bare_token(void)
{
	static const struct row rows[] = {
		{ "key " TOKEN " was rejected", 1, "key sbx_" REDACTED " was rejected",
		  { HEX64, "0123456789", NULL } },
		{ TOKEN, 1, "sbx_" REDACTED, { HEX64, NULL } },
		{ "(" TOKEN ")", 1, "(sbx_" REDACTED ")", { HEX64, NULL } },
		{ "SBX_" HEX64, 1, "SBX_" REDACTED, { HEX64, NULL } },
		{ "sbx_", 0, "sbx_", { NULL } },            /* nothing after the prefix */
		{ "Bearer ", 0, "Bearer ", { NULL } },
	};

	run_rows(rows, NELEM(rows));
}

static void test_password_pairs(void)
{
	static const struct row rows[] = {
		{ "password=hunter2 user=x", 1, "password= user=x", { "hunter2", NULL } },
		{ "PASSWORD=Hunter2 user=x", 1, "PASSWORD= user=x", { "Hunter2", NULL } },
		{ "login failed: passwd=correcthorsebattery", 1, "login failed: passwd=" REDACTED,
		  { "correcthorse", "battery", NULL } },
		{ "token=abc123&x=1", 1, "token=&x=1", { "abc123", NULL } },
		{ "secret=averylongsecretvalue", 1, "secret=" REDACTED, { "averylong", NULL } },
		/* exactly the marker's length (10) is replaced, one less is cut */
		{ "password=0123456789 x", 1, "password=" REDACTED " x", { "0123456789", NULL } },
		{ "password=012345678 x", 1, "password= x", { "012345678", NULL } },
	};

	run_rows(rows, NELEM(rows));
}

static void test_no_secret_unchanged(void)
{
	static const struct row rows[] = {
		{ "", 0, "", { NULL } },
		{ "job 0190a5c8-7b2e-7c3d-8e4f-0123456789ab finished: exit=0 user=alice", 0,
		  "job 0190a5c8-7b2e-7c3d-8e4f-0123456789ab finished: exit=0 user=alice", { NULL } },
		{ "GET /v1/jobs?wait=10 HTTP/1.1", 0, "GET /v1/jobs?wait=10 HTTP/1.1", { NULL } },
		{ "the password is checked", 0, "the password is checked", { NULL } },
	};

	run_rows(rows, NELEM(rows));
}

static void test_several_secrets(void)
{
	static const struct row rows[] = {
		{ "Authorization: Bearer " TOKEN " password=hunter2 key=" TOKEN " secret=s3cr3t", 4,
		  "Authorization: Bearer " REDACTED " password= key=sbx_" REDACTED " secret=",
		  { HEX64, "hunter2", "s3cr3t", NULL } },
		{ "token=aaaaaaaaaaaaaaaa token=bbbbbbbbbbbbbbbb", 2,
		  "token=" REDACTED " token=" REDACTED, { "aaaa", "bbbb", NULL } },
	};

	run_rows(rows, NELEM(rows));
}

/* A quoted value is still a password: `password="hunter2"` or `password='hunter2'`
 * (SQL in a MariaDB error message, a shell-ish client string). */
static void test_quoted_password(void)
{
	static const char *const rows[] = {
		"password=\"hunter2\"",
		"password='hunter2'",
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		char buf[64];

		snprintf(buf, sizeof buf, "%s", rows[i]);
		int n = redact(buf);
		CHECK(n == 1, "redact(%s): expected 1 secret, got %d", rows[i], n);
		CHECK_LACKS_AT(rows[i], buf, "hunter2");
	}
}

static const CU_TestInfo tests[] = {
	{ "bearer_header", test_bearer_header },
	{ "bare_token", test_bare_token },
	{ "password_pairs", test_password_pairs },
	{ "no_secret_unchanged", test_no_secret_unchanged },
	{ "several_secrets", test_several_secrets },
	{ "quoted_password", test_quoted_password },
	CU_TEST_INFO_NULL,
};

void suite_redact(void)
{
	t_register("redact", tests);
}
