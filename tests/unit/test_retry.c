/* Which spawn errors are retried, and the backoff between attempts. */
#include <errno.h>
#include <string.h>

#include "retry.h"
#include "tests.h"

static void test_transient(void)
{
	static const struct {
		int err, transient;
	} rows[] = {
		{ EAGAIN, 1 }, { ENOMEM, 1 }, { EINTR, 1 }, { EBUSY, 1 }, { ENFILE, 1 },
		{ ENOENT, 0 }, { EACCES, 0 }, { EPERM, 0 }, { EINVAL, 0 }, { ENOEXEC, 0 },
		{ ELOOP, 0 },  { ENOSPC, 0 }, { EMFILE, 0 }, { 0, 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_INT_AT(strerror(rows[i].err), retry_transient(rows[i].err),
			     rows[i].transient);
}

static void test_delay(void)
{
	CHECK_INT(retry_delay_ms(200, 400, 1), 200);
	CHECK_INT(retry_delay_ms(200, 400, 2), 400);
	CHECK_INT(retry_delay_ms(200, 400, 3), 400);
	CHECK_INT(retry_delay_ms(100, 10000, 1), 100);
	CHECK_INT(retry_delay_ms(100, 10000, 7), 6400);
	CHECK_INT(retry_delay_ms(100, 10000, 8), 10000);
	CHECK_INT(retry_delay_ms(100, 10000, 1000000), 10000); /* no overflow */
	CHECK_INT(retry_delay_ms(200, 5000, 5), 3200);
	CHECK_INT(retry_delay_ms(200, 5000, 6), 5000);
}

/* The error type of a retry log line and diagnostic: the errno's name, nothing else. */
static void test_errname(void)
{
	CHECK_STR(retry_errname(EAGAIN), "EAGAIN");
	CHECK_STR(retry_errname(EBUSY), "EBUSY");
	CHECK_STR(retry_errname(ENOENT), "ENOENT");
	CHECK_STR(retry_errname(0), "errno 0");
	CHECK_STR(retry_errname(100000), "errno 100000");
}

/* The reference's startup backoff: min(delay * 2^attempt, 1 s), delay 100 ms. */
static void test_start_backoff(void)
{
	static const long want[] = { 100, 200, 400, 800, 1000, 1000 };

	for (int a = 1; a <= 6; a++)
		CHECK_INT(retry_delay_ms(100, 1000, a), want[a - 1]);
	CHECK_INT(retry_delay_ms(1000, 1000, 1), 1000);
	CHECK_INT(retry_delay_ms(1, 1000, 20), 1000);
}

void suite_retry(void)
{
	static const CU_TestInfo tests[] = { { "transient_errno", test_transient },
					     { "capped_backoff", test_delay },
					     { "errno_names", test_errname },
					     { "start_backoff", test_start_backoff },
					     CU_TEST_INFO_NULL };

	t_register("retry", tests);
}
