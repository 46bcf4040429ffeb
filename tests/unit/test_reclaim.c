/* sandbox-runner/dispatch/reclaim.c: which slot a runner id names, and which command line is a
 * lost lease's supervisor (a wrong match would kill another claim's supervisor). */
#include <string.h>

#include "reclaim.h"
#include "tests.h"

static void test_slot_of(void)
{
	static const struct {
		const char *rid, *kind;
		int want;
	} rows[] = {
		{ "h1/slot-3/ab12", "slot", 3 },
		{ "h1/session-0/ab12", "session", 0 },
		{ "h1/session-31/x", "session", 31 },
		{ "h1/session-32/x", "session", -1 }, /* past max */
		{ "h1/slot-3/ab12", "session", -1 },
		{ "h10/slot-3/ab12", "slot", -1 },    /* another host, same prefix */
		{ "h/slot-3/ab12", "slot", -1 },
		{ "h1/slot-/x", "slot", -1 },
		{ "h1/slot-3", "slot", -1 },
		{ "h1/slot--3/x", "slot", -1 },
		{ "h1/slot-3x/x", "slot", -1 },
		{ "live-test-elsewhere", "slot", -1 },
		{ "", "slot", -1 },
	};

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		CHECK_INT_AT(rows[i].rid, rc_slot_of(rows[i].rid, "h1", rows[i].kind, 32),
			     rows[i].want);
	CHECK_INT(rc_slot_of(NULL, "h1", "slot", 32), -1);
}

static void test_cmdline_has(void)
{
	static const char exec_cl[] = "sandbox-runner\0--config\0c\0--supervise-session\0id\0"
				      "--slot\0001000\0--runner-id\0h/session-0/ab\0--lock-fd\0005";
	static const char spare_cl[] = "sandbox-runner --config c --supervise id --slot 2"
				       " --runner-id h/slot-2/cd";
	static const char last_cl[] = "x\0--runner-id\0h/slot-2/cd";

	CHECK(rc_cmdline_has(exec_cl, sizeof exec_cl, "h/session-0/ab"), "exec'd supervisor");
	CHECK(!rc_cmdline_has(exec_cl, sizeof exec_cl, "h/session-0/a"), "a prefix is not it");
	CHECK(!rc_cmdline_has(exec_cl, sizeof exec_cl, "h/session-0/abc"), "nor a longer id");
	CHECK(rc_cmdline_has(spare_cl, strlen(spare_cl), "h/slot-2/cd"), "a spare's title");
	CHECK(!rc_cmdline_has(spare_cl, strlen(spare_cl), "h/slot-2/c"), "a spare: prefix");
	CHECK(rc_cmdline_has(last_cl, sizeof last_cl - 1, "h/slot-2/cd"), "at the very end");
	CHECK(!rc_cmdline_has("x--runner-id h/slot-2/cd", 24, "h/slot-2/cd"),
	      "the option must be a word of its own");
	CHECK(!rc_cmdline_has(exec_cl, sizeof exec_cl, ""), "an empty id names nobody");
}

void suite_reclaim(void)
{
	static const CU_TestInfo tests[] = {
		{ "slot of a runner id: this host, this kind, in range", test_slot_of },
		{ "a supervisor's command line names its runner id", test_cmdline_has },
		CU_TEST_INFO_NULL,
	};
	t_register("reclaim", tests);
}
