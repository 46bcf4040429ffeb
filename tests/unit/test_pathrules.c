/* Job paths: one rule and one limit (max_path_bytes) for the API's validation and the
 * runner's re-check; at the boundary both sides agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pathrules.h"
#include "policy.h"
#include "tests.h"
#include "validate.h"

/* "a/aaa...": n bytes, nested so that the components matter too. */
static char *path_of(size_t n)
{
	char *p = malloc(n + 1);

	if (p == NULL)
		return NULL;
	memset(p, 'a', n);
	if (n > 2)
		p[1] = '/';
	p[n] = '\0';
	return p;
}

/* 1 when the API accepts a job whose file path, cwd and artifacts are p. */
static int api_accepts(const struct cfg *c, const char *p, char *why, size_t whylen)
{
	size_t n = 3 * strlen(p) + 128;
	char *body = malloc(n);
	struct job_req r;
	struct val_err e;
	int ok;

	if (body == NULL)
		return 0;
	snprintf(body, n,
		 "{\"command\":\"x\",\"cwd\":\"%s\",\"artifacts\":\"%s\","
		 "\"files\":[{\"path\":\"%s\",\"content\":\"\"}]}", p, p, p);
	ok = val_job_request(body, strlen(body), c, 0, &r, &e) == 0;
	if (!ok)
		snprintf(why, whylen, "%.100s: %.200s", e.field, e.message);
	val_job_free(&r); /* also after a refusal, as the API does */
	free(body);
	return ok;
}

/* NULL when the runner's policy check passes a job whose paths are all p. */
static const char *runner_refuses(const struct cfg *c, char *p, char *why, size_t whylen)
{
	struct job_file_in f = { .path = p };
	struct job j;

	memset(&j, 0, sizeof j);
	j.cwd = p;
	j.artifacts_dir = p;
	j.files = &f;
	j.nfiles = 1;
	return pol_paths(c, &j, why, whylen);
}

static void test_boundary(void)
{
	static const long long limits[] = { 1, 3, 255, 256, 1024 };

	for (size_t i = 0; i < NELEM(limits); i++) {
		struct cfg c;
		char why[400] = "", ctx[96];

		cfg_defaults(&c);
		c.max_path_bytes = limits[i];
		for (size_t extra = 0; extra < 2; extra++) {
			size_t n = (size_t)limits[i] + extra;
			char *p = path_of(n);
			const char *r;

			if (!CHECK(p != NULL, "out of memory"))
				return;
			snprintf(ctx, sizeof ctx, "max_path_bytes %lld, path of %zu bytes",
				 limits[i], n);
			why[0] = '\0';
			CHECK(api_accepts(&c, p, why, sizeof why) == !extra,
			      "%s: API expected %s, got %s (%s)", ctx, extra ? "refusal" : "accept",
			      extra ? "accept" : "refusal", why);
			r = runner_refuses(&c, p, why, sizeof why);
			CHECK((r == NULL) == !extra, "%s: runner expected %s, got %s", ctx,
			      extra ? "refusal" : "accept", r ? r : "accept");
			CHECK((pr_job_path(&c, p) == NULL) == !extra, "%s: pr_job_path", ctx);
			free(p);
		}
	}
}

/* The runner names the first bad path's kind, like the API names the field. */
static void test_runner_reasons(void)
{
	struct cfg c;
	char why[160], ok[] = "a/b", bad[] = "../x";
	struct job_file_in f[2] = { { .path = ok }, { .path = bad } };
	struct job j;

	cfg_defaults(&c);
	memset(&j, 0, sizeof j);
	j.cwd = ok;
	j.files = f;
	j.nfiles = 2;
	CHECK_STR(pol_paths(&c, &j, why, sizeof why),
		  "file path must not contain '.' or '..' components");
	j.cwd = (char *)"";
	j.artifacts_dir = (char *)"/out";
	CHECK_STR(pol_paths(&c, &j, why, sizeof why), "artifacts must be relative");
	j.cwd = (char *)"a//b";
	CHECK_STR(pol_paths(&c, &j, why, sizeof why), "cwd must not contain empty components");
	j.cwd = (char *)"";
	j.artifacts_dir = NULL;
	j.nfiles = 1;
	CHECK_STR(pol_paths(&c, &j, why, sizeof why), NULL);
}

/* A session file path arrives percent-decoded (any byte): what is not UTF-8 is refused
 * by the rule itself, before anything else (issue 25 item 5: %ff answered 500). */
static void test_utf8(void)
{
	static const struct {
		const char *path, *why;
	} rows[] = {
		{ "\xff", "must be valid UTF-8" },
		{ "\xc0\xae", "must be valid UTF-8" },          /* overlong '.' */
		{ "a/\xc0\xae\xc0\xae/b", "must be valid UTF-8" }, /* overlong ".." */
		{ "a/\xed\xa0\x80", "must be valid UTF-8" },      /* a surrogate */
		{ "a/\xe2\x82", "must be valid UTF-8" },          /* cut short */
		{ "\xf4\x90\x80\x80", "must be valid UTF-8" },   /* past U+10FFFF */
		{ "/\xff", "must be valid UTF-8" },              /* before "relative" */
		{ "caf\xc3\xa9/\xe2\x82\xac.txt", NULL },
		{ "\xf0\x9f\x98\x80", NULL },
	};

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		CHECK_STR(pr_rel_path(rows[i].path, 4096), rows[i].why);
}

void suite_pathrules(void)
{
	static const CU_TestInfo tests[] = { { "api_and_runner_agree_at_max_path_bytes",
					       test_boundary },
					     { "runner_reasons", test_runner_reasons },
					     { "invalid UTF-8 refused first", test_utf8 },
					     CU_TEST_INFO_NULL };

	t_register("pathrules", tests);
}
