/* Shared declarations of the unit tests: one registration function per suite, and
 * assertion helpers whose failure message says what was expected and what was got. */
#ifndef SANDBOX_TESTS_H
#define SANDBOX_TESTS_H

#include <stddef.h>

#include <CUnit/CUnit.h>

void suite_util(void);
void suite_sha256(void);
void suite_redact(void);
void suite_log(void);
void suite_config(void);
void suite_validate(void);
void suite_render(void);
void suite_http_util(void);
void suite_outcome(void);
void suite_jobcache(void);
void suite_strbuf(void);
void suite_router(void);
void suite_pathrules(void);
void suite_workspace(void);
void suite_metrics(void);
void suite_bwstatus(void);
void suite_retry(void);
void suite_profile(void);
void suite_fault(void);
void suite_policy(void);
void suite_runtimes(void);
void suite_agentproto(void);
void suite_agent(void);
void suite_warm(void);
void suite_sfiles(void);
void suite_reclaim(void);
void suite_waiter(void);
void suite_svalidate(void);
void suite_srender(void);
void suite_cli(void);
void suite_mcp(void);
void suite_netcheck(void);
void suite_sreq(void);
void suite_connect(void); /* tests/unit/test_connect.c */
void suite_sports(void);  /* tests/unit/test_sports.c */

/* Adds a suite and its tests (terminated by CU_TEST_INFO_NULL); a registration
 * error is remembered and makes the run fail (see t_registration_failed). */
void t_register(const char *suite, const CU_TestInfo *tests);
int t_registration_failed(void);

/* One CUnit assertion with a printf-formatted message (kept by CUnit's report).
 * Returns ok so callers can stop early on a failed precondition. */
int t_check(int ok, const char *file, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* String equality (NULL only equals NULL); ctx names the row or expression. */
int t_check_str(const char *ctx, const char *got, const char *exp, const char *file,
		unsigned line);
int t_check_ll(const char *ctx, long long got, long long exp, const char *file, unsigned line);
int t_check_mem(const char *ctx, const void *got, size_t glen, const void *exp, size_t elen,
		const char *file, unsigned line);
/* Substring present (want=1) or absent (want=0) in hay. */
int t_check_has(const char *ctx, const char *hay, const char *needle, int want,
		const char *file, unsigned line);

/* Printable rendering of n bytes for messages (C escapes, truncated to fit). */
const char *t_show(const void *p, size_t n, char *buf, size_t bn);

/* A new temporary file holding content; returns a malloc'd path (unlink + free it). */
char *t_tempfile(const char *content);

#define CHECK(cond, ...) t_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_STR(got, exp) t_check_str(#got, (got), (exp), __FILE__, __LINE__)
#define CHECK_STR_AT(ctx, got, exp) t_check_str((ctx), (got), (exp), __FILE__, __LINE__)
#define CHECK_INT(got, exp) \
	t_check_ll(#got, (long long)(got), (long long)(exp), __FILE__, __LINE__)
#define CHECK_INT_AT(ctx, got, exp) \
	t_check_ll((ctx), (long long)(got), (long long)(exp), __FILE__, __LINE__)
#define CHECK_MEM(got, glen, exp, elen) \
	t_check_mem(#got, (got), (glen), (exp), (elen), __FILE__, __LINE__)
#define CHECK_MEM_AT(ctx, got, glen, exp, elen) \
	t_check_mem((ctx), (got), (glen), (exp), (elen), __FILE__, __LINE__)
#define CHECK_HAS(hay, needle) t_check_has(#hay, (hay), (needle), 1, __FILE__, __LINE__)
#define CHECK_LACKS(hay, needle) t_check_has(#hay, (hay), (needle), 0, __FILE__, __LINE__)
#define CHECK_HAS_AT(ctx, hay, needle) t_check_has((ctx), (hay), (needle), 1, __FILE__, __LINE__)
#define CHECK_LACKS_AT(ctx, hay, needle) \
	t_check_has((ctx), (hay), (needle), 0, __FILE__, __LINE__)

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#endif
