/* SANDBOX_FAULTS of the test runner (sandbox-runner/launch/fault.h): the parser and the
 * countdown. */
#include <errno.h>
#include <stdio.h>

#include "fault.h"
#include "tests.h"

static void test_parse(void)
{
	struct fault f[FAULT_MAX];
	char err[160];

	CHECK_INT(fault_parse("start:EAGAIN:2,cleanup:EBUSY,limits:EINVAL", f, FAULT_MAX, err,
			      sizeof err),
		  3);
	CHECK_STR(f[0].point, "start");
	CHECK_INT(f[0].err, EAGAIN);
	CHECK_INT(f[0].count, 2);
	CHECK_STR(f[1].point, "cleanup");
	CHECK_INT(f[1].err, EBUSY);
	CHECK_INT(f[1].count, -1);
	CHECK_INT(f[2].err, EINVAL);
	CHECK_INT(fault_parse("", f, FAULT_MAX, err, sizeof err), 0);
}

static void test_refused(void)
{
	static const struct {
		const char *spec, *why;
	} rows[] = {
		{ "start", "want POINT:ERRNO" },
		{ "start:EWHAT", "unknown errno name EWHAT" },
		{ "launch:EAGAIN", "unknown fault point" },
		{ "start:EAGAIN:0", "COUNT must be 1..1000" },
		{ "start:EAGAIN:2x", "COUNT must be 1..1000" },
		{ "start:EAGAIN:1001", "COUNT must be 1..1000" },
		{ "start:EAGAIN,cleanup:EBUSY,start:EAGAIN", "more than 2 faults" },
	};
	struct fault f[2];
	char err[160];

	for (size_t i = 0; i < NELEM(rows); i++) {
		err[0] = '\0';
		CHECK_INT_AT(rows[i].spec, fault_parse(rows[i].spec, f, 2, err, sizeof err), -1);
		CHECK_HAS_AT(rows[i].spec, err, rows[i].why);
	}
}

/* start:EAGAIN:2 fails twice, then lets the third attempt through. */
static void test_countdown(void)
{
	struct fault f[FAULT_MAX];
	char err[160];
	int n = fault_parse("start:EAGAIN:2,cleanup:EBUSY", f, FAULT_MAX, err, sizeof err);

	CHECK_INT(fault_take(f, (size_t)n, "start"), EAGAIN);
	CHECK_INT(fault_take(f, (size_t)n, "start"), EAGAIN);
	CHECK_INT(fault_take(f, (size_t)n, "start"), 0);
	for (int i = 0; i < 5; i++)
		CHECK_INT(fault_take(f, (size_t)n, "cleanup"), EBUSY);
	CHECK_INT(fault_take(f, (size_t)n, "limits"), 0);
	/* the release build's fault_at: nothing, ever */
	CHECK_INT(fault_at("start"), 0);
}

void suite_fault(void)
{
	static const CU_TestInfo tests[] = { { "parse", test_parse },
					     { "refused_specs", test_refused },
					     { "countdown", test_countdown },
					     CU_TEST_INFO_NULL };

	t_register("fault", tests);
}
