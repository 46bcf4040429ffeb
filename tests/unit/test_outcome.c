/* outcome_map: DESIGN.md section 5, row by row. */
#include <signal.h>
#include <stdio.h>

#include "outcome.h"
#include "tests.h"

static const struct row {
	const char *name;
	struct outcome_in in;
	const char *state;
	int exit_code, signal;
	const char *diag; /* NULL: none */
} rows[] = {
	{ "exit 0", { STOP_NONE, 1, 0, 0, 0 }, "succeeded", 0, 0, NULL },
	{ "exit 3", { STOP_NONE, 1, 3, 0, 0 }, "failed", 3, 0, NULL },
	{ "exit 128", { STOP_NONE, 1, 128, 0, 0 }, "failed", 128, 0, NULL },
	{ "SIGKILL", { STOP_NONE, 1, 137, 0, 0 }, "failed", 137, 9, NULL },
	{ "SIGSEGV", { STOP_NONE, 1, 139, 0, 0 }, "failed", 139, 11, NULL },
	{ "wall", { STOP_WALL, 1, 137, 0, 0 }, "timed_out", 124, 0, "command timed out" },
	{ "output", { STOP_OUTPUT, 1, 141, 0, 0 }, "output_limit", 122, 0,
	  "command output limit exceeded" },
	{ "cancel", { STOP_CANCEL, 1, 137, 0, 0 }, "cancelled", 137, 9, "command cancelled" },
	{ "pids", { STOP_PIDS, 1, 0, 0, 0 }, "resource_limit", 137, 9,
	  "command exceeded pids resource limit" },
	{ "cpu by cgroup", { STOP_CPU, 1, 137, 0, 0 }, "resource_limit", 137, 9,
	  "command exceeded cpu resource limit" },
	{ "cpu by rlimit", { STOP_NONE, 1, 128 + SIGXCPU, 0, 0 }, "resource_limit", 128 + SIGXCPU,
	  SIGXCPU, "command exceeded cpu resource limit" },
	{ "memory (oom kill seen)", { STOP_NONE, 1, 137, 1, 0 }, "resource_limit", 137, 9,
	  "command exceeded memory resource limit" },
	{ "memory stop", { STOP_MEMORY, 1, 137, 1, 0 }, "resource_limit", 137, 9,
	  "command exceeded memory resource limit" },
	{ "oom of a child, main exited 1", { STOP_NONE, 1, 1, 2, 0 }, "resource_limit", 1, 0,
	  "command exceeded memory resource limit" },
	{ "fork refused, command exited 0", { STOP_NONE, 1, 0, 0, 3 }, "resource_limit", 137, 9,
	  "command exceeded pids resource limit" },
	{ "OOM killed bwrap itself", { STOP_NONE, 0, 0, 1, 0 }, "resource_limit", 137, 9,
	  "command exceeded memory resource limit" },
	{ "no status from bwrap", { STOP_NONE, 0, 0, 0, 0 }, "error", 125, 0,
	  "sandbox did not report an exit status" },
	{ "wall wins over status", { STOP_WALL, 0, 0, 0, 0 }, "timed_out", 124, 0,
	  "command timed out" },
};

static void test_table(void)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct outcome o;
		char ctx[96];

		outcome_map(&rows[i].in, &o);
		snprintf(ctx, sizeof ctx, "%s: state", rows[i].name);
		CHECK_STR_AT(ctx, o.state, rows[i].state);
		snprintf(ctx, sizeof ctx, "%s: exit_code", rows[i].name);
		CHECK_INT_AT(ctx, o.exit_code, rows[i].exit_code);
		snprintf(ctx, sizeof ctx, "%s: signal", rows[i].name);
		CHECK_INT_AT(ctx, o.signal, rows[i].signal);
		snprintf(ctx, sizeof ctx, "%s: diagnostic", rows[i].name);
		CHECK_STR_AT(ctx, o.diagnostic, rows[i].diag);
	}
}

void suite_outcome(void)
{
	static const CU_TestInfo tests[] = { { "status_exit_code_table", test_table },
					     CU_TEST_INFO_NULL };

	t_register("outcome", tests);
}
