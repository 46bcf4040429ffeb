/* common/util: base64, UTF-8, UUIDs, integer parsing, file reading. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "util.h"

/* ------------------------------------------------------------------ base64 */

static void test_b64_decode_valid(void)
{
	static const struct {
		const char *in;
		const char *out;
		size_t outlen;
	} rows[] = {
		{ "", "", 0 },                 /* empty input is empty output */
		{ "Zg==", "f", 1 },            /* two padding characters */
		{ "Zm8=", "fo", 2 },           /* one */
		{ "Zm9v", "foo", 3 },          /* none */
		{ "Zm9vYg==", "foob", 4 },
		{ "Zm9vYmE=", "fooba", 5 },
		{ "Zm9vYmFy", "foobar", 6 },
		{ "AAEC", "\x00\x01\x02", 3 }, /* NUL bytes survive */
		{ "/wD+", "\xff\x00\xfe", 3 },  /* '/' and '+' */
		{ "+/+/", "\xfb\xff\xbf", 3 },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		size_t len = 12345;
		unsigned char *d = util_b64_decode(rows[i].in, strlen(rows[i].in), &len);

		if (!CHECK(d != NULL, "decode \"%s\": expected success, got NULL (errno %d)",
			   rows[i].in, errno))
			continue;
		CHECK_MEM_AT(rows[i].in, d, len, rows[i].out, rows[i].outlen);
		CHECK(d[len] == '\0', "decode \"%s\": output not NUL-terminated", rows[i].in);
		free(d);
	}
}

static void test_b64_decode_invalid(void)
{
	static const char *const rows[] = {
		"Zg=",      /* length not a multiple of 4 */
		"Zm8",      /* same */
		"Z",        /* same */
		"Zm9vY",    /* same */
		"Zm9*",     /* invalid character */
		"Zm-v",     /* base64url alphabet is not accepted */
		"Zm_v",
		"Zm9v\n",   /* no whitespace */
		"Zm 9",
		"Zg==Zg==", /* padding in the middle */
		"Z===",     /* three padding characters */
		"====",
		"=Zm9",     /* padding first */
		"Zm=v",     /* padding not at the end */
		"Zh==",     /* non-canonical: 'h' leaves stray bits under "==" */
		"Zm9=",     /* non-canonical: '9' leaves stray bits under "=" */
		"Zm8A=",    /* bad length */
		"\xc3\xa9==",
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		size_t len = 0;
		char show[64];
		unsigned char *d;

		errno = 0;
		d = util_b64_decode(rows[i], strlen(rows[i]), &len);
		t_show(rows[i], strlen(rows[i]), show, sizeof show);
		CHECK(d == NULL, "decode \"%s\": expected NULL, got %zu bytes", show, len);
		CHECK(errno == EINVAL, "decode \"%s\": expected errno EINVAL, got %d", show, errno);
		free(d);
	}
	/* An embedded NUL is an invalid character, not an end of input. */
	{
		size_t len = 0;
		unsigned char *d = util_b64_decode("Zm\0v", 4, &len);
		CHECK(d == NULL, "decode \"Zm\\0v\": expected NULL, got %zu bytes", len);
		free(d);
	}
}

static void test_b64_encode_vectors(void)
{
	static const struct {
		const char *in;
		const char *out;
	} rows[] = {
		{ "", "" },         { "f", "Zg==" },         { "fo", "Zm8=" },
		{ "foo", "Zm9v" },  { "foob", "Zm9vYg==" },  { "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		char *e = util_b64_encode((const unsigned char *)rows[i].in, strlen(rows[i].in));
		CHECK_STR_AT(rows[i].in, e, rows[i].out);
		free(e);
	}
}

/* Every byte value, at every length 0..256 (so each padding case and every byte in
 * each of the three positions of a group). */
static void test_b64_round_trip(void)
{
	unsigned char all[256];
	int bad = 0;

	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	for (size_t n = 0; n <= sizeof all && bad < 3; n++) {
		/* Rotate so every byte also appears at offsets 1 and 2 of a group. */
		for (size_t rot = 0; rot < 3 && bad < 3; rot++) {
			unsigned char in[256];
			size_t len = 0;
			char ctx[64];

			for (size_t k = 0; k < n; k++)
				in[k] = all[(k + rot) % 256];
			char *e = util_b64_encode(in, n);
			if (!CHECK(e != NULL, "encode of %zu bytes returned NULL", n)) {
				bad++;
				continue;
			}
			snprintf(ctx, sizeof ctx, "round trip n=%zu rot=%zu", n, rot);
			if (!CHECK_INT_AT(ctx, strlen(e), (n + 2) / 3 * 4))
				bad++;
			unsigned char *d = util_b64_decode(e, strlen(e), &len);
			if (!CHECK(d != NULL, "%s: decode of own encoding \"%.40s\" failed", ctx, e))
				bad++;
			else if (!CHECK_MEM_AT(ctx, d, len, in, n))
				bad++;
			free(d);
			free(e);
		}
	}
}

/* ------------------------------------------------------------------ UTF-8 */

static void test_utf8(void)
{
	static const struct {
		const char *what;
		const char *s;
		size_t n;
		int ok;
	} rows[] = {
		{ "empty", "", 0, 1 },
		{ "ASCII", "hello, world", 12, 1 },
		{ "NUL is a valid code point", "a\0b", 3, 1 },
		{ "2-byte U+00E9", "\xc3\xa9", 2, 1 },
		{ "2-byte U+0080 (lowest)", "\xc2\x80", 2, 1 },
		{ "2-byte U+07FF (highest)", "\xdf\xbf", 2, 1 },
		{ "3-byte U+20AC", "\xe2\x82\xac", 3, 1 },
		{ "3-byte U+0800 (lowest)", "\xe0\xa0\x80", 3, 1 },
		{ "3-byte U+D7FF (below surrogates)", "\xed\x9f\xbf", 3, 1 },
		{ "3-byte U+E000 (above surrogates)", "\xee\x80\x80", 3, 1 },
		{ "3-byte U+FFFF", "\xef\xbf\xbf", 3, 1 },
		{ "4-byte U+1F600", "\xf0\x9f\x98\x80", 4, 1 },
		{ "4-byte U+10000 (lowest)", "\xf0\x90\x80\x80", 4, 1 },
		{ "4-byte U+10FFFF (highest)", "\xf4\x8f\xbf\xbf", 4, 1 },
		{ "mixed", "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z", 11, 1 },
		{ "overlong C0 80", "\xc0\x80", 2, 0 },
		{ "overlong C1 BF", "\xc1\xbf", 2, 0 },
		{ "overlong E0 80 80", "\xe0\x80\x80", 3, 0 },
		{ "overlong E0 9F BF", "\xe0\x9f\xbf", 3, 0 },
		{ "overlong F0 80 80 80", "\xf0\x80\x80\x80", 4, 0 },
		{ "overlong F0 8F BF BF", "\xf0\x8f\xbf\xbf", 4, 0 },
		{ "surrogate ED A0 80", "\xed\xa0\x80", 3, 0 },
		{ "surrogate ED BF BF", "\xed\xbf\xbf", 3, 0 },
		{ "above U+10FFFF F4 90 80 80", "\xf4\x90\x80\x80", 4, 0 },
		{ "F5 lead byte", "\xf5\x80\x80\x80", 4, 0 },
		{ "FE", "\xfe", 1, 0 },
		{ "FF", "\xff", 1, 0 },
		{ "truncated 2-byte", "\xc3", 1, 0 },
		{ "truncated 3-byte", "\xe2\x82", 2, 0 },
		{ "truncated 4-byte", "\xf0\x9f\x98", 3, 0 },
		{ "truncated at end of text", "ab\xe2\x82", 4, 0 },
		{ "lone continuation 80", "\x80", 1, 0 },
		{ "lone continuation BF in text", "a\xbf" "b", 3, 0 },
		{ "bad continuation C3 28", "\xc3\x28", 2, 0 },
		{ "bad continuation E2 28 A1", "\xe2\x28\xa1", 3, 0 },
		{ "bad continuation F0 9F 28 80", "\xf0\x9f\x28\x80", 4, 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_INT_AT(rows[i].what,
			     util_utf8_valid((const unsigned char *)rows[i].s, rows[i].n),
			     rows[i].ok);
	/* The length bounds the scan: a valid prefix of an invalid buffer is valid, and a
	 * sequence cut by n is truncated even if the bytes after n would complete it. */
	CHECK_INT(util_utf8_valid((const unsigned char *)"ab\xff", 2), 1);
	CHECK_INT(util_utf8_valid((const unsigned char *)"\xc3\xa9", 1), 0);
	CHECK_INT(util_utf8_valid((const unsigned char *)"\xe2\x82\xac", 2), 0);
	CHECK_INT(util_utf8_valid((const unsigned char *)"\xf0\x9f\x98\x80", 3), 0);
	CHECK_INT(util_utf8_valid((const unsigned char *)"a\xf0\x9f\x98\x80", 4), 0);
}

/* ------------------------------------------------------------------ UUIDs */

static void test_is_uuid(void)
{
	static const struct {
		const char *s;
		int ok;
	} rows[] = {
		{ "0190a5c8-7b2e-7c3d-8e4f-0123456789ab", 1 },
		{ "00000000-0000-0000-0000-000000000000", 1 },
		{ "0190A5C8-7B2E-7C3D-8E4F-0123456789AB", 0 }, /* upper case */
		{ "0190a5c8-7b2e-7c3d-8e4f-0123456789aB", 0 },
		{ "0190a5c8-7b2e-7c3d-8e4f-0123456789a", 0 },   /* 35 */
		{ "0190a5c8-7b2e-7c3d-8e4f-0123456789abc", 0 }, /* 37 */
		{ "0190a5c87b2e7c3d8e4f0123456789ab", 0 },      /* no dashes */
		{ "0190a5c8-7b2e7-c3d-8e4f-0123456789ab", 0 },  /* dash moved */
		{ "0190a5c87-b2e-7c3d-8e4f-0123456789ab", 0 },
		{ "0190a5c8_7b2e_7c3d_8e4f_0123456789ab", 0 },
		{ "0190a5c8-7b2e-7c3d-8e4f-0123456789ag", 0 },  /* not hex */
		{ "{0190a5c8-7b2e-7c3d-8e4f-0123456789ab}", 0 },
		{ "0190a5c8-7b2e-7c3d-8e4f-0123456789a ", 0 },
		{ "------------------------------------", 0 },
		{ "", 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_INT_AT(rows[i].s, util_is_uuid(rows[i].s), rows[i].ok);
}

static void test_uuid7(void)
{
	char a[UUID_STR_LEN], b[UUID_STR_LEN];
	unsigned long long ms = 0;
	struct timespec ts;

	memset(a, 'x', sizeof a);
	memset(b, 'x', sizeof b);
	CHECK_INT(util_uuid7(a), 0);
	CHECK_INT(util_uuid7(b), 0);
	CHECK_INT(strlen(a), 36);
	CHECK(util_is_uuid(a), "util_uuid7 gave \"%s\", which util_is_uuid refuses", a);
	CHECK(util_is_uuid(b), "util_uuid7 gave \"%s\", which util_is_uuid refuses", b);
	CHECK(a[14] == '7', "version nibble of %s: expected '7', got '%c'", a, a[14]);
	CHECK(strchr("89ab", a[19]) != NULL, "variant nibble of %s: expected 8-b, got '%c'", a,
	      a[19]);
	CHECK(b[14] == '7' && strchr("89ab", b[19]) != NULL, "version/variant of %s", b);
	CHECK(strcmp(a, b) != 0, "two consecutive UUIDs are equal: %s", a);
	/* The first 48 bits are the Unix time in milliseconds. */
	for (int i = 0; i < 13; i++) {
		if (a[i] == '-')
			continue;
		ms = ms << 4 | (unsigned long long)strtoul((char[]){ a[i], '\0' }, NULL, 16);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long long now = (unsigned long long)ts.tv_sec * 1000u +
				 (unsigned long long)ts.tv_nsec / 1000000u;
	CHECK(ms <= now && now - ms < 5000,
	      "timestamp of %s: expected about %llu ms, got %llu", a, now, ms);
	/* Ids made in a row are time-ordered (same ms or later). */
	CHECK(strncmp(a, b, 13) <= 0, "uuid7 not time-ordered: %s then %s", a, b);
}

static void test_hex(void)
{
	char out[9];

	memset(out, 'x', sizeof out);
	util_hex((const unsigned char *)"\x00\x9f\xa0\xff", 4, out);
	CHECK_STR(out, "009fa0ff");
	util_hex((const unsigned char *)"", 0, out);
	CHECK_STR(out, "");
}

/* ------------------------------------------------------------------ integers */

static void test_parse_ll(void)
{
	static const struct {
		const char *s;
		long long min, max;
		int rc;
		long long v;
	} rows[] = {
		{ "0", 0, 10, 0, 0 },
		{ "10", 0, 10, 0, 10 },
		{ "7", 0, 10, 0, 7 },
		{ "-5", -10, 10, 0, -5 },
		{ "-10", -10, 10, 0, -10 },
		{ "007", 0, 10, 0, 7 },
		{ "11", 0, 10, -1, 0 },  /* above range */
		{ "-1", 0, 10, -1, 0 },  /* below range */
		{ "abc", 0, 10, -1, 0 }, /* junk */
		{ "12abc", 0, 100, -1, 0 },
		{ "1.5", 0, 10, -1, 0 },
		{ "0x10", 0, 100, -1, 0 },
		{ "1e3", 0, 10000, -1, 0 },
		{ "", 0, 10, -1, 0 },    /* empty */
		{ "-", -10, 10, -1, 0 },
		{ "+5", 0, 10, -1, 0 },  /* leading '+' */
		{ " 5", 0, 10, -1, 0 },  /* leading space */
		{ "5 ", 0, 10, -1, 0 },  /* trailing space */
		{ "9223372036854775807", LLONG_MIN, LLONG_MAX, 0, LLONG_MAX },
		{ "-9223372036854775808", LLONG_MIN, LLONG_MAX, 0, LLONG_MIN },
		{ "9223372036854775808", LLONG_MIN, LLONG_MAX, -1, 0 },   /* overflow */
		{ "-9223372036854775809", LLONG_MIN, LLONG_MAX, -1, 0 },  /* underflow */
		{ "99999999999999999999999", LLONG_MIN, LLONG_MAX, -1, 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		long long v = 4242;
		char ctx[80], show[40];
		int rc = util_parse_ll(rows[i].s, rows[i].min, rows[i].max, &v);

		snprintf(ctx, sizeof ctx, "util_parse_ll(\"%s\", %lld, %lld)",
			 t_show(rows[i].s, strlen(rows[i].s), show, sizeof show), rows[i].min,
			 rows[i].max);
		CHECK_INT_AT(ctx, rc, rows[i].rc);
		if (rows[i].rc == 0)
			CHECK_INT_AT(ctx, v, rows[i].v);
		else
			CHECK_INT_AT(ctx, v, 4242); /* untouched on failure */
	}
	{
		long long v = 1;
		CHECK_INT(util_parse_ll(NULL, 0, 10, &v), -1);
	}
}

/* ------------------------------------------------------------------ files */

static void test_read_file(void)
{
	char *path = t_tempfile("hello\nworld\n");
	size_t len = 0;
	char *s;

	if (!CHECK(path != NULL, "cannot create a temporary file"))
		return;
	s = util_read_file(path, 100, &len);
	CHECK_STR(s, "hello\nworld\n");
	CHECK_INT(len, 12);
	free(s);
	s = util_read_file(path, 12, &len);
	CHECK(s != NULL, "a file of exactly max bytes must be read");
	free(s);
	errno = 0;
	s = util_read_file(path, 11, &len);
	CHECK(s == NULL, "a file over max must be refused");
	CHECK_INT(errno, EFBIG);
	free(s);
	unlink(path);
	free(path);
	errno = 0;
	s = util_read_file("/nonexistent/sandbox-unit", 100, &len);
	CHECK(s == NULL, "a missing file must be NULL");
	CHECK_INT(errno, ENOENT);
	free(s);
	s = util_read_file("/tmp", 100, &len);
	CHECK(s == NULL, "a directory must be refused");
	free(s);
}

/* strtoll skips any isspace() byte; a leading space is refused, so must the rest be
 * (app/jobs/jobroutes.c parses `?wait=%095` with util_parse_ll). */
static void test_parse_ll_leading_whitespace(void)
{
	static const char *const rows[] = { "\t5", "\n5", "\r5", "\v5", "\f5", " \t5" };

	for (size_t i = 0; i < NELEM(rows); i++) {
		long long v = 4242;
		char show[16];
		int rc = util_parse_ll(rows[i], 0, 10, &v);

		t_show(rows[i], strlen(rows[i]), show, sizeof show);
		CHECK(rc == -1, "util_parse_ll(\"%s\", 0, 10): expected -1, got %d (value %lld)",
		      show, rc, v);
	}
}

/* Identity values with white space at an edge are refused by `keys create`. */
static void test_edge_space(void)
{
	static const struct {
		const char *in;
		int want;
	} rows[] = {
		{ "eve", 0 },          { "eve ", 1 },           { " eve", 1 },
		{ "e ve", 0 },         { "eve\t", 1 },          { "\neve", 1 },
		{ "eve\xc2\xa0", 1 },  /* NO-BREAK SPACE */
		{ "\xe3\x80\x80" "eve", 1 }, /* IDEOGRAPHIC SPACE */
		{ "eve\xe2\x80\x8b", 1 }, /* ZERO WIDTH SPACE */
		{ "\xef\xbb\xbf" "eve", 1 }, /* BOM */
		{ "ev\xc3\xa9", 0 },  /* a letter, not a space */
		{ "", 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_INT_AT(rows[i].in, util_edge_space(rows[i].in), rows[i].want);
}

/* sandboxctl purge --older-than */
static void test_parse_duration(void)
{
	static const struct {
		const char *in;
		long long want;
	} rows[] = {
		{ "30d", 2592000 }, { "12h", 43200 }, { "90m", 5400 }, { "3600s", 3600 },
		{ "7", 604800 },    { "0s", 0 },      { "", -1 },      { "d", -1 },
		{ "-1d", -1 },      { "5x", -1 },     { "5dd", -1 },   { " 5d", -1 },
		{ "36500d", 3153600000LL }, { "36501d", -1 },
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_INT_AT(rows[i].in, util_parse_duration(rows[i].in), rows[i].want);
}

static const CU_TestInfo tests[] = {
	{ "edge_space", test_edge_space },
	{ "parse_duration", test_parse_duration },
	{ "b64_decode_valid", test_b64_decode_valid },
	{ "b64_decode_invalid", test_b64_decode_invalid },
	{ "b64_encode_vectors", test_b64_encode_vectors },
	{ "b64_round_trip_all_bytes", test_b64_round_trip },
	{ "utf8_valid", test_utf8 },
	{ "is_uuid", test_is_uuid },
	{ "uuid7", test_uuid7 },
	{ "hex", test_hex },
	{ "parse_ll", test_parse_ll },
	{ "parse_ll_leading_whitespace", test_parse_ll_leading_whitespace },
	{ "read_file", test_read_file },
	CU_TEST_INFO_NULL,
};

void suite_util(void)
{
	t_register("util", tests);
}
