/* Artifact name rules and diagnostic escaping (sandbox-runner/launch/artname.c).
 * The Makefile links only sandbox-runner/job/outcome.c of the runner into the unit tests,
 * so the file under test is compiled in here. */
#include <stdio.h>
#include <string.h>

#include "artname.h"
#include "tests.h"

void suite_artname(void);

static const struct name_row {
	const char *name;
	size_t n; /* 0: strlen */
	enum an_verdict want;
} names[] = {
	{ "a.txt", 0, AN_OK },
	{ "with space", 0, AN_OK },
	{ "100% ?#+&=;,'\"", 0, AN_OK },
	{ "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80", 0, AN_OK }, /* café ✓ 😀 */
	{ "\xe2\x80\xa8", 0, AN_OK },               /* U+2028: printable? no, but not Cc */
	{ "fake\ncommand timed out", 0, AN_CONTROL },
	{ "cr\r", 0, AN_CONTROL },
	{ "tab\t", 0, AN_CONTROL },
	{ "esc\x1b[31m", 0, AN_CONTROL },
	{ "del\x7f", 0, AN_CONTROL },
	{ "nel\xc2\x85", 0, AN_CONTROL },           /* U+0085, a C1 line break */
	{ "csi\xc2\x9b", 0, AN_CONTROL },           /* U+009B */
	{ "bad\xff", 0, AN_CONTROL },
	{ "lone\x80", 0, AN_CONTROL },
	{ "overlong\xc0\xaf", 0, AN_CONTROL },
	{ "overlong3\xe0\x80\xaf", 0, AN_CONTROL },
	{ "surrogate\xed\xa0\x80", 0, AN_CONTROL },
	{ "toobig\xf4\x90\x80\x80", 0, AN_CONTROL },
	{ "truncated\xe2\x9c", 0, AN_CONTROL },
	{ "back\\slash", 0, AN_BACKSLASH },
	{ "\\\n", 0, AN_CONTROL }, /* both: the control character wins */
};

static void test_names(void)
{
	for (size_t i = 0; i < NELEM(names); i++) {
		char ctx[128], shown[96];
		size_t n = names[i].n ? names[i].n : strlen(names[i].name);

		snprintf(ctx, sizeof ctx, "an_check_name(%s)",
			 t_show(names[i].name, n, shown, sizeof shown));
		CHECK_INT_AT(ctx, an_check_name(names[i].name, n), names[i].want);
	}
}

static void test_paths(void)
{
	char p[AN_PATH_MAX + 2];

	memset(p, 'a', sizeof p);
	p[AN_PATH_MAX] = '\0';
	CHECK_INT_AT("1024 plain bytes", an_check_path(p), AN_OK);
	p[AN_PATH_MAX] = 'a';
	p[AN_PATH_MAX + 1] = '\0';
	CHECK_INT_AT("1025 plain bytes", an_check_path(p), AN_TOO_LONG);
	CHECK_INT_AT("url length of a/b c%", an_url_len("a/b c%"), 12);
	CHECK_INT_AT("url length of unreserved", an_url_len("Az09-._~"), 8);
	CHECK_INT_AT("url length of two-byte char", an_url_len("\xc3\xa9"), 6);
	/* 663 three-byte-encoded bytes: 1989 encoded, fits; 664: 1992, does not */
	memset(p, ' ', 663);
	p[663] = '\0';
	CHECK_INT_AT("663 spaces (1989 encoded)", an_check_path(p), AN_OK);
	memset(p, ' ', 664);
	p[664] = '\0';
	CHECK_INT_AT("664 spaces (1992 encoded)", an_check_path(p), AN_TOO_LONG);
	CHECK_INT_AT("AN_URL_PATH_MAX", AN_URL_PATH_MAX, 1991);
}

static void test_escape(void)
{
	static const struct {
		const char *in;
		size_t outn;
		const char *want;
	} rows[] = {
		{ "out/a b.txt", 64, "out/a b.txt" },
		{ "x\ncommand timed out", 64, "x\\x0acommand timed out" },
		{ "back\\slash", 64, "back\\\\slash" },
		{ "caf\xc3\xa9", 64, "caf\\xc3\\xa9" },
		{ "\x1b[2J", 64, "\\x1b[2J" },
		{ "abcde", 6, "abcde" },
		{ "abcdef", 6, "ab..." },
		{ "ab\ncd", 8, "ab..." }, /* whole escapes only */
		{ "", 4, "" },
		{ "abcdef", 4, "..." },
		{ "abcdef", 2, "" },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		char out[64], ctx[96], shown[48];

		memset(out, 'Z', sizeof out);
		an_escape(out, rows[i].outn, rows[i].in);
		snprintf(ctx, sizeof ctx, "an_escape(%s, %zu)",
			 t_show(rows[i].in, strlen(rows[i].in), shown, sizeof shown), rows[i].outn);
		CHECK_STR_AT(ctx, out, rows[i].want);
		CHECK(strlen(out) < rows[i].outn, "%s: fits in %zu", ctx, rows[i].outn);
		for (const char *c = out; *c; c++)
			CHECK(*c >= 0x20 && *c < 0x7f, "%s: printable ASCII only", ctx);
	}
}

void suite_artname(void)
{
	static const CU_TestInfo tests[] = { { "name_rules", test_names },
					     { "path_length_rules", test_paths },
					     { "diagnostic_escaping", test_escape },
					     CU_TEST_INFO_NULL };

	t_register("artname", tests);
}
