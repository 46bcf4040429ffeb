/* app/http/router with the API's own route table (app/http/api_routes.h): every route, every
 * method, 404 against 405 + Allow, and what the captures hold. */
#include <string.h>

#include "api_routes.h"
#include "router.h"
#include "tests.h"

static const struct route table[] = {
#define ROUTE(method, pattern, handler, is_public) { method, pattern, NULL, #handler, is_public },
	API_ROUTES(ROUTE)
#undef ROUTE
};

#define ID63 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"

static void test_routes(void)
{
	static const struct {
		const char *method, *path;
		const char *name;  /* matched handler, or NULL */
		const char *allow; /* when name is NULL: "" = 404, else the Allow value */
		const char *id, *rest;
	} rows[] = {
		{ "GET", "/v1/health", "h_health", NULL, "", NULL },
		{ "POST", "/v1/health", NULL, "GET", NULL, NULL },
		{ "HEAD", "/v1/health", NULL, "GET", NULL, NULL },
		{ "GET", "/v1/identity", "h_identity", NULL, "", NULL },
		{ "DELETE", "/v1/identity", NULL, "GET", NULL, NULL },
		{ "GET", "/v1/jobs", "h_list", NULL, "", NULL },
		{ "POST", "/v1/jobs", "h_submit", NULL, "", NULL },
		{ "DELETE", "/v1/jobs", NULL, "GET, POST", NULL, NULL },
		{ "POST", "/v1/jobs/batch", "h_batch", NULL, "", NULL },
		/* GET of it is a job id (a 404 from h_get); other methods: 405 */
		{ "GET", "/v1/jobs/batch", "h_get", NULL, "batch", NULL },
		{ "DELETE", "/v1/jobs/batch", NULL, "POST, GET", NULL, NULL },
		{ "POST", "/v1/jobs/batch/", NULL, "", NULL, NULL },
		{ "GET", "/v1/jobs/abc", "h_get", NULL, "abc", NULL },
		{ "POST", "/v1/jobs/abc", NULL, "GET", NULL, NULL },
		{ "POST", "/v1/jobs/abc/cancel", "h_cancel", NULL, "abc", NULL },
		{ "GET", "/v1/jobs/abc/cancel", NULL, "POST", NULL, NULL },
		{ "GET", "/v1/jobs/abc/artifacts", "h_artifacts", NULL, "abc", NULL },
		{ "POST", "/v1/jobs/abc/artifacts", NULL, "GET", NULL, NULL },
		{ "GET", "/v1/jobs/abc/artifacts/out/a.txt", "h_artifact", NULL, "abc", "out/a.txt" },
		{ "GET", "/v1/jobs/abc/artifacts/out/", "h_artifact", NULL, "abc", "out/" },
		{ "POST", "/v1/jobs/abc/artifacts/x", NULL, "GET", NULL, NULL },
		{ "GET", "/v1/jobs/abc/output/stdout", "h_output", NULL, "abc", "stdout" },
		{ "GET", "/v1/jobs/abc/output/other", "h_output", NULL, "abc", "other" },
		{ "PUT", "/v1/jobs/abc/output/stderr", NULL, "GET", NULL, NULL },
		{ "GET", "/v1/jobs/" ID63, "h_get", NULL, ID63, NULL },
		/* 404 whatever the method */
		{ "GET", "/v1/jobs/" ID63 "f", NULL, "", NULL, NULL }, /* id of 64 bytes */
		{ "GET", "/", NULL, "", NULL, NULL },
		{ "GET", "", NULL, "", NULL, NULL },
		{ "GET", "/v1", NULL, "", NULL, NULL },
		{ "GET", "/v1/health/", NULL, "", NULL, NULL },
		{ "GET", "/v1/jobsx", NULL, "", NULL, NULL },
		{ "GET", "/v2/jobs", NULL, "", NULL, NULL },
		{ "GET", "/v1/jobs/", NULL, "", NULL, NULL },
		{ "POST", "/v1/jobs//cancel", NULL, "", NULL, NULL },
		{ "GET", "/v1/jobs/abc/", NULL, "", NULL, NULL },
		{ "POST", "/v1/jobs/abc/cancel/", NULL, "", NULL, NULL },
		{ "GET", "/v1/jobs/abc/artifacts/", NULL, "", NULL, NULL },
		{ "GET", "/v1/jobs/abc/output/", NULL, "", NULL, NULL },
		{ "GET", "/v1/jobs/abc/output/a/b", NULL, "", NULL, NULL },
		{ "GET", "/v1/jobs/abc/unknown", NULL, "", NULL, NULL },
		{ "DELETE", "/nope", NULL, "", NULL, NULL },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		char ctx[160], allow[64];
		struct route_args a;
		const struct route *rt;

		snprintf(ctx, sizeof ctx, "%s %s", rows[i].method, rows[i].path);
		memset(&a, 0x55, sizeof a);
		rt = router_match(table, NELEM(table), rows[i].method, rows[i].path, &a, allow,
				  sizeof allow);
		CHECK_STR_AT(ctx, rt ? rt->name : NULL, rows[i].name);
		if (rt == NULL) {
			CHECK_STR_AT(ctx, allow, rows[i].allow);
			continue;
		}
		CHECK_STR_AT(ctx, a.id, rows[i].id);
		CHECK_STR_AT(ctx, a.rest, rows[i].rest);
		CHECK_INT_AT(ctx, rt->is_public, strcmp(rt->name, "h_health") == 0);
	}
}

/* Each entry of the table answers its own method and path. */
static void test_every_entry(void)
{
	for (size_t i = 0; i < NELEM(table); i++) {
		char path[128], allow[64], *p = path;
		struct route_args a;
		const struct route *rt;

		/* Instantiate the pattern: every capture becomes "x". */
		for (const char *s = table[i].pattern; *s && p < path + sizeof path - 2;) {
			if (*s == '{') {
				*p++ = 'x';
				s = strchr(s, '}') + 1;
			} else {
				*p++ = *s++;
			}
		}
		*p = '\0';
		rt = router_match(table, NELEM(table), table[i].method, path, &a, allow,
				  sizeof allow);
		CHECK(rt == &table[i], "%s %s: expected entry %zu (%s), got %s", table[i].method,
		      path, i, table[i].name, rt ? rt->name : "none");
	}
}

/* An Allow buffer too small for the list is cut, never overrun. */
static void test_allow_bounded(void)
{
	char allow[6];
	struct route_args a;

	CHECK(router_match(table, NELEM(table), "PUT", "/v1/jobs", &a, allow, sizeof allow) == NULL,
	      "PUT /v1/jobs must not match");
	CHECK_STR(allow, "GET, ");
}

void suite_router(void)
{
	static const CU_TestInfo tests[] = {
		{ "routes", test_routes },
		{ "every_entry", test_every_entry },
		{ "allow_bounded", test_allow_bounded },
		CU_TEST_INFO_NULL,
	};
	t_register("router", tests);
}
