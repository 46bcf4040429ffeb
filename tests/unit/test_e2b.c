/* app/e2b/e2butil.c: E2B paths as workspace-relative paths (never above /home/user,
 * lexical "." and ".." resolution, no prefix tricks such as /home/username) and back,
 * and the Connect code <-> HTTP status tables of envd's errors. */
#include <stdio.h>
#include <string.h>

#include "e2b.h"
#include "tests.h"

void suite_e2b(void); /* registered by tests/unit/main.c */

static void test_path_rel(void)
{
	static const struct {
		const char *in, *out; /* out NULL: refused */
	} rows[] = {
		{ "/home/user", "" },
		{ "/home/user/", "" },
		{ "/home/user/a", "a" },
		{ "/home/user/a/b.txt", "a/b.txt" },
		{ "/home/user/a/../b", "b" },
		{ "/home/user//a///b/", "a/b" },
		{ "/home/user/./a/./b", "a/b" },
		{ "/home/user/a/b/../../c", "c" },
		{ "/home/user/a/..", "" },
		{ "a/b", "a/b" },
		{ "./a", "a" },
		{ ".", "" },
		{ "a/../b", "b" },
		{ "/home/user/..", NULL },
		{ "/home/user/../user/x", NULL },
		{ "/home/user/a/../../x", NULL },
		{ "/etc/passwd", NULL },
		{ "/home/username", NULL },
		{ "/home/username/x", NULL },
		{ "/home/use", NULL },
		{ "/home", NULL },
		{ "/", NULL },
		{ "/tmp/x", NULL },
		{ "../x", NULL },
		{ "..", NULL },
		{ "a/../../x", NULL },
		{ "", NULL },
		{ "//home/user/a", NULL },
	};
	char out[64];
	const char *why;

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int rc = e2b_path_rel(rows[i].in, out, sizeof out, &why);

		CHECK_INT_AT(rows[i].in, rc, rows[i].out ? 0 : -1);
		if (rows[i].out) {
			CHECK_STR_AT(rows[i].in, out, rows[i].out);
			CHECK_STR_AT(rows[i].in, why, NULL);
		} else {
			CHECK_INT_AT(rows[i].in, why != NULL && *why != '\0', 1);
		}
	}
	/* too long for the buffer: refused, never truncated */
	CHECK_INT_AT("short buffer", e2b_path_rel("/home/user/abcdefgh", out, 8, &why), -1);
	CHECK_INT_AT("exact fit", e2b_path_rel("/home/user/abcdefg", out, 8, &why), 0);
	CHECK_STR_AT("exact fit", out, "abcdefg");
	CHECK_INT_AT("NULL", e2b_path_rel(NULL, out, sizeof out, &why), -1);
}

static void test_path_abs(void)
{
	char out[32];

	CHECK_INT(e2b_path_abs("", out, sizeof out), 0);
	CHECK_STR(out, "/home/user");
	CHECK_INT(e2b_path_abs("a/b", out, sizeof out), 0);
	CHECK_STR(out, "/home/user/a/b");
	CHECK_INT(e2b_path_abs("0123456789012345678901234567890", out, sizeof out), -1);
}

static void test_codes(void)
{
	static const struct {
		const char *code;
		int http;
	} rows[] = {
		{ "canceled", 499 },          { "invalid_argument", 400 }, { "deadline_exceeded", 504 },
		{ "not_found", 404 },         { "already_exists", 409 },   { "permission_denied", 403 },
		{ "resource_exhausted", 429 }, { "failed_precondition", 400 }, { "aborted", 409 },
		{ "out_of_range", 400 },      { "unimplemented", 501 },    { "unavailable", 503 },
		{ "unauthenticated", 401 },   { "internal", 500 },         { "unknown", 500 },
		{ "data_loss", 500 },         { "NOT_FOUND", 500 },        { "", 500 },
	};
	static const struct {
		int http;
		const char *code;
	} back[] = {
		{ 400, "invalid_argument" }, { 413, "invalid_argument" }, { 401, "unauthenticated" },
		{ 403, "permission_denied" }, { 404, "not_found" },       { 409, "failed_precondition" },
		{ 429, "resource_exhausted" }, { 503, "unavailable" },    { 504, "deadline_exceeded" },
		{ 500, "internal" },          { 502, "internal" },        { 200, "internal" },
	};

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		CHECK_INT_AT(rows[i].code, envd_http_of_code(rows[i].code), rows[i].http);
	CHECK_INT(envd_http_of_code(NULL), 500);
	for (size_t i = 0; i < sizeof back / sizeof back[0]; i++) {
		char ctx[16];
		snprintf(ctx, sizeof ctx, "%d", back[i].http);
		CHECK_STR_AT(ctx, envd_code_of_http(back[i].http), back[i].code);
	}
}

void suite_e2b(void)
{
	static CU_TestInfo tests[] = {
		{ "E2B paths as workspace paths", test_path_rel },
		{ "workspace paths as E2B paths", test_path_abs },
		{ "Connect codes and HTTP statuses", test_codes },
		CU_TEST_INFO_NULL,
	};
	t_register("e2b", tests);
}
