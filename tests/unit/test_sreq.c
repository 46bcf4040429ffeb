/* common/sreq (session request answer codes): every code a supervisor can give maps
 * to one documented HTTP status, the API passes on exactly those pairs, and the
 * runner's sources use no code outside the table (a code added on one side only is
 * the 502 `bad_gateway` of issue 25 item 6). The source and docs checks read the
 * tree from the working directory (make runs them from the top): a missing file is
 * a visible skip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sreq.h"
#include "tests.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (f == NULL)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			char *p = realloc(buf, cap = cap ? cap * 2 : 65536);
			if (p == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		r = fread(buf + n, 1, 4096, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void test_table(void)
{
	size_t n = 0;

	for (const struct sreq_code *c = sreq_codes; c->code; c++, n++) {
		CHECK(c->http >= 400 && c->http <= 599, "%s: status %d", c->code, c->http);
		CHECK(sreq_code_status(c->code) == c->http, "%s: looked up", c->code);
		CHECK(sreq_passthrough(c->http, c->code), "%s %d passed on", c->code, c->http);
		CHECK(!sreq_passthrough(c->http == 500 ? 502 : 500, c->code),
		      "%s with another status not passed on", c->code);
		CHECK(c->what && c->what[0], "%s: says when", c->code);
		for (const struct sreq_code *d = sreq_codes; d < c; d++)
			CHECK(strcmp(c->code, d->code) != 0, "%s twice", c->code);
	}
	CHECK(n >= 10, "the table has %zu codes", n);
	CHECK(sreq_code_status("bad_gateway") == 0, "bad_gateway is the API's own");
	CHECK(sreq_code_status(NULL) == 0, "NULL");
	CHECK(!sreq_passthrough(404, NULL), "NULL code");
	CHECK(!sreq_passthrough(404, "nope"), "unknown code");
	CHECK(sreq_passthrough(409, "session_ended"), "session_ended as documented (409)");
}

/* Every code in the table is in docs/SESSIONS.md and docs/openapi.yaml. */
static void test_documented(void)
{
	const char *docs[] = { "docs/SESSIONS.md", "docs/openapi.yaml" };

	for (size_t i = 0; i < 2; i++) {
		char *text = slurp(docs[i]);
		if (text == NULL) {
			printf("\n    SKIPPED: %s not found (run from the top of the tree)\n",
			       docs[i]);
			continue;
		}
		for (const struct sreq_code *c = sreq_codes; c->code; c++) {
			char quoted[64];
			snprintf(quoted, sizeof quoted, "`%s`", c->code);
			CHECK(strstr(text, i == 0 ? quoted : c->code) != NULL, "%s: %s not in it",
			      docs[i], c->code);
		}
		free(text);
	}
}

/* The quoted code after each `call` in the source, e.g. ss_req_fail(s->db, req, "x". */
static void scan(const char *path, const char *call, int with_status)
{
	char *text = slurp(path);
	size_t seen = 0;

	if (text == NULL) {
		printf("\n    SKIPPED: %s not found (run from the top of the tree)\n", path);
		return;
	}
	for (char *p = strstr(text, call); p; p = strstr(p + 1, call)) {
		char *q = strchr(p, '"'), *end, code[64];
		long st = 0;

		if (q == NULL || q - p > 80)
			continue; /* a declaration or a call without a literal code */
		if (with_status)
			st = strtol(p + strlen(call), NULL, 10);
		end = strchr(q + 1, '"');
		if (end == NULL || (size_t)(end - q - 1) >= sizeof code)
			continue;
		memcpy(code, q + 1, (size_t)(end - q - 1));
		code[end - q - 1] = '\0';
		seen++;
		CHECK(sreq_code_status(code) != 0, "%s: code %s is not in common/sreq.c", path, code);
		if (with_status && sreq_code_status(code))
			CHECK(st == sreq_code_status(code), "%s: %s with %ld, the table says %d",
			      path, code, st, sreq_code_status(code));
	}
	CHECK(seen > 0, "%s: no %s with a code found", path, call);
	free(text);
}

static void test_sources(void)
{
	scan("sandbox-runner/session/session.c", "ss_req_fail(s->db, req, ", 0);
	scan("sandbox-runner/session/sfiles.c", "fail(e, ", 1);
}

void suite_sreq(void)
{
	static CU_TestInfo tests[] = {
		{ "every code one status, passed on as it is", test_table },
		{ "every code documented", test_documented },
		{ "the runner gives no code outside the table", test_sources },
		CU_TEST_INFO_NULL,
	};
	t_register("sreq", tests);
}
