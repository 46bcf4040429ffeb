/* app/http/http_util: percent-decoding, query strings, headers, error bodies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_util.h"
#include "tests.h"

static void test_pct_decode(void)
{
	static const struct {
		const char *in;
		int rc;
		const char *out;
	} rows[] = {
		{ "", 0, "" },
		{ "abc", 0, "abc" },
		{ "%41", 0, "A" },
		{ "%2F", 0, "/" },
		{ "%2f", 0, "/" },
		{ "a%20b", 0, "a b" },
		{ "a+b", 0, "a+b" },           /* '+' stays '+' */
		{ "%25", 0, "%" },
		{ "%e2%82%AC", 0, "\xe2\x82\xac" },
		{ "%4", -1, NULL },            /* truncated escape */
		{ "%", -1, NULL },
		{ "a%", -1, NULL },
		{ "%zz", -1, NULL },           /* not hex */
		{ "%4g", -1, NULL },
		{ "%g4", -1, NULL },
		{ "%00", -1, NULL },           /* encoded NUL */
		{ "a%00b", -1, NULL },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		char out[64];
		int rc = http_pct_decode(rows[i].in, strlen(rows[i].in), out, sizeof out);
		CHECK_INT_AT(rows[i].in, rc, rows[i].rc);
		if (rows[i].rc == 0 && rc == 0)
			CHECK_STR_AT(rows[i].in, out, rows[i].out);
	}
}

static void test_pct_decode_bounds(void)
{
	char out[4];

	/* n bounds the input: the escape past n is not read. */
	CHECK_INT(http_pct_decode("ab%41", 2, out, sizeof out), 0);
	CHECK_STR(out, "ab");
	CHECK_INT(http_pct_decode("a%4", 2, out, sizeof out), -1);
	CHECK_INT(http_pct_decode("%41", 2, out, sizeof out), -1); /* escape cut by n */
	CHECK_INT(http_pct_decode("%41", 1, out, sizeof out), -1);
	/* out must hold the result and its NUL */
	CHECK_INT(http_pct_decode("abc", 3, out, sizeof out), 0);
	CHECK_STR(out, "abc");
	CHECK_INT(http_pct_decode("abcd", 4, out, sizeof out), -1);
	CHECK_INT(http_pct_decode("%41%42%43", 9, out, sizeof out), 0);
	CHECK_STR(out, "ABC");
	CHECK_INT(http_pct_decode("%41%42%43%44", 12, out, sizeof out), -1);
}

static void test_query_next(void)
{
	const char *q = "wait=1&x=%20y&&flag";
	char k[32], v[32];

	CHECK_INT(http_query_next(&q, k, sizeof k, v, sizeof v), 1);
	CHECK_STR(k, "wait");
	CHECK_STR(v, "1");
	CHECK_INT(http_query_next(&q, k, sizeof k, v, sizeof v), 1);
	CHECK_STR(k, "x");
	CHECK_STR(v, " y");
	CHECK_INT(http_query_next(&q, k, sizeof k, v, sizeof v), 1);
	CHECK_STR(k, "flag");
	CHECK_STR(v, "");
	CHECK_INT(http_query_next(&q, k, sizeof k, v, sizeof v), 0);
	CHECK_INT(http_query_next(&q, k, sizeof k, v, sizeof v), 0); /* stays at the end */
}

static void test_query_edge_cases(void)
{
	static const struct {
		const char *q;
		int rc;
		const char *k, *v;
	} rows[] = {
		{ "", 0, NULL, NULL },
		{ "&&&", 0, NULL, NULL },
		{ "a=", 1, "a", "" },
		{ "=v", 1, "", "v" },
		{ "a=b=c", 1, "a", "b=c" },
		{ "st%61tus=que%75ed", 1, "status", "queued" },
		{ "a=%zz", -1, NULL, NULL },
		{ "a%00=1", -1, NULL, NULL },
		{ "a=%4", -1, NULL, NULL },
		{ "a=0123456789abcdef", -1, NULL, NULL },   /* value longer than vn */
		{ "0123456789abcdef=1", -1, NULL, NULL },   /* key longer than kn */
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		const char *q = rows[i].q;
		char k[16], v[16];
		int rc = http_query_next(&q, k, sizeof k, v, sizeof v);

		CHECK_INT_AT(rows[i].q, rc, rows[i].rc);
		if (rows[i].rc == 1 && rc == 1) {
			CHECK_STR_AT(rows[i].q, k, rows[i].k);
			CHECK_STR_AT(rows[i].q, v, rows[i].v);
		}
	}
}

static void test_is_json_type(void)
{
	static const struct {
		const char *ct;
		int ok;
	} rows[] = {
		{ "application/json", 1 },
		{ "application/json; charset=utf-8", 1 },
		{ "application/json;charset=UTF-8", 1 },
		{ "APPLICATION/JSON", 1 },
		{ "Application/Json", 1 },
		{ "application/jsonp", 0 },
		{ "application/json-patch+json", 0 },
		{ "application/jso", 0 },
		{ "text/plain", 0 },
		{ "text/json", 0 },
		{ "", 0 },
		{ "multipart/form-data; boundary=x", 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_INT_AT(rows[i].ct, http_is_json_type(rows[i].ct), rows[i].ok);
	CHECK_INT(http_is_json_type(NULL), 0);
}

static void test_bearer(void)
{
	static const struct {
		const char *h;
		const char *tok; /* NULL = none */
	} rows[] = {
		{ "Bearer abc", "abc" },
		{ "bearer abc", "abc" },
		{ "BEARER sbx_0123", "sbx_0123" },
		{ "Bearer   abc", "abc" },
		{ "Bearer ", NULL },
		{ "Bearer    ", NULL },
		{ "Bearer", NULL },
		{ "Bearerabc", NULL },
		{ "Basic dXNlcjpwYXNz", NULL },
		{ "", NULL },
		{ "Token abc", NULL },
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_STR_AT(rows[i].h, http_bearer(rows[i].h), rows[i].tok);
	CHECK(http_bearer(NULL) == NULL, "http_bearer(NULL) must be NULL");
}

static void test_content_length(void)
{
	static const struct {
		const char *s;
		int rc;
		long long v;
	} rows[] = {
		{ "", 0, 0 },
		{ "0", 0, 0 },
		{ "12", 0, 12 },
		{ "10485760", 0, 10485760 },
		{ "-1", -1, 0 },
		{ "1x", -1, 0 },
		{ "+1", -1, 0 },
		{ " 1", -1, 0 },
		{ "1 ", -1, 0 },
		{ "0x10", -1, 0 },
		{ "99999999999999999999", -1, 0 }, /* overflow */
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		long long v = -42;
		int rc = http_content_length(rows[i].s, &v);
		CHECK_INT_AT(rows[i].s, rc, rows[i].rc);
		if (rows[i].rc == 0)
			CHECK_INT_AT(rows[i].s, v, rows[i].v);
	}
	long long v = -42;
	CHECK_INT(http_content_length(NULL, &v), 0);
	CHECK_INT(v, 0);
}

static void test_error_body(void)
{
	json_t *b, *e;

	b = http_error_body("invalid_request", "limits.memory_mb must be 16..4096",
			    "limits.memory_mb");
	if (CHECK(json_is_object(b), "http_error_body returned NULL")) {
		CHECK_INT(json_object_size(b), 1);
		e = json_object_get(b, "error");
		if (CHECK(json_is_object(e), "error must be an object")) {
			CHECK_INT(json_object_size(e), 3);
			CHECK_STR(json_string_value(json_object_get(e, "code")), "invalid_request");
			CHECK_STR(json_string_value(json_object_get(e, "message")),
				  "limits.memory_mb must be 16..4096");
			CHECK_STR(json_string_value(json_object_get(e, "field")), "limits.memory_mb");
		}
	}
	json_decref(b);

	const char *nofield[] = { NULL, "" };
	for (size_t i = 0; i < NELEM(nofield); i++) {
		b = http_error_body("not_found", "no such job", nofield[i]);
		e = json_object_get(b, "error");
		if (CHECK(json_is_object(e), "error must be an object")) {
			CHECK_INT(json_object_size(e), 2);
			CHECK_STR(json_string_value(json_object_get(e, "code")), "not_found");
			CHECK_STR(json_string_value(json_object_get(e, "message")), "no such job");
			CHECK(json_object_get(e, "field") == NULL, "field must be omitted (case %zu)",
			      i);
		}
		json_decref(b);
	}
}

static void test_reason(void)
{
	static const struct {
		int status;
		const char *text;
	} rows[] = {
		{ 200, "OK" },
		{ 201, "Created" },
		{ 202, "Accepted" },
		{ 204, "No Content" },
		{ 400, "Bad Request" },
		{ 401, "Unauthorized" },
		{ 403, "Forbidden" },
		{ 404, "Not Found" },
		{ 405, "Method Not Allowed" },
		{ 409, "Conflict" },
		{ 413, "Payload Too Large" },
		{ 415, "Unsupported Media Type" },
		{ 429, "Too Many Requests" },
		{ 500, "Internal Server Error" },
		{ 502, "Bad Gateway" },
		{ 503, "Service Unavailable" },
		{ 504, "Gateway Timeout" },
		{ 507, "Insufficient Storage" },
		{ 410, "Gone" },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		char ctx[16];
		snprintf(ctx, sizeof ctx, "%d", rows[i].status);
		CHECK_STR_AT(ctx, http_reason(rows[i].status), rows[i].text);
	}
}

static const CU_TestInfo tests[] = {
	{ "pct_decode", test_pct_decode },
	{ "pct_decode_bounds", test_pct_decode_bounds },
	{ "query_next", test_query_next },
	{ "query_edge_cases", test_query_edge_cases },
	{ "is_json_type", test_is_json_type },
	{ "bearer", test_bearer },
	{ "content_length", test_content_length },
	{ "error_body", test_error_body },
	{ "reason", test_reason },
	CU_TEST_INFO_NULL,
};

void suite_http_util(void)
{
	t_register("http_util", tests);
}
