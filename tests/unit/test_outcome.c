/* outcome_map: DESIGN.md section 5, row by row. */
#include <signal.h>
#include <stdio.h>

#include "outcome.h"
#include "tests.h"

/* A run that the service did not fail. */
#define IN(...) { __VA_ARGS__, STAGE_NONE, 0 }

static const struct row {
	const char *name;
	struct outcome_in in;
	const char *state;
	int exit_code, signal;
	const char *diag; /* the diagnostics joined by "; " (the reference's stderr line) */
} rows[] = {
	{ "exit 0", IN(STOP_NONE, 1, 0, 0, 0), "succeeded", 0, 0, "" },
	{ "exit 3", IN(STOP_NONE, 1, 3, 0, 0), "failed", 3, 0, "" },
	{ "exit 128", IN(STOP_NONE, 1, 128, 0, 0), "failed", 128, 0, "" },
	{ "SIGKILL", IN(STOP_NONE, 1, 137, 0, 0), "failed", 137, 9, "" },
	{ "SIGSEGV", IN(STOP_NONE, 1, 139, 0, 0), "failed", 139, 11, "" },
	{ "wall", IN(STOP_WALL, 1, 137, 0, 0), "timed_out", 124, 0, "command timed out" },
	{ "output", IN(STOP_OUTPUT, 1, 141, 0, 0), "output_limit", 122, 0,
	  "command output limit exceeded" },
	{ "cancel", IN(STOP_CANCEL, 1, 137, 0, 0), "cancelled", 137, 9, "command cancelled" },
	{ "pids", IN(STOP_PIDS, 1, 0, 0, 0), "resource_limit", 137, 9,
	  "command exceeded pids resource limit" },
	{ "cpu by cgroup", IN(STOP_CPU, 1, 137, 0, 0), "resource_limit", 137, 9,
	  "command exceeded cpu resource limit" },
	{ "cpu by rlimit", IN(STOP_NONE, 1, 128 + SIGXCPU, 0, 0), "resource_limit", 128 + SIGXCPU,
	  SIGXCPU, "command exceeded cpu resource limit" },
	{ "memory (oom kill seen)", IN(STOP_NONE, 1, 137, 1, 0), "resource_limit", 137, 9,
	  "command exceeded memory resource limit" },
	{ "memory stop", IN(STOP_MEMORY, 1, 137, 1, 0), "resource_limit", 137, 9,
	  "command exceeded memory resource limit" },
	{ "oom of a child, main exited 1", IN(STOP_NONE, 1, 1, 2, 0), "resource_limit", 1, 0,
	  "command exceeded memory resource limit" },
	{ "fork refused, command exited 0", IN(STOP_NONE, 1, 0, 0, 3), "resource_limit", 137, 9,
	  "command exceeded pids resource limit" },
	{ "OOM killed bwrap itself", IN(STOP_NONE, 0, 0, 1, 0), "resource_limit", 137, 9,
	  "command exceeded memory resource limit" },
	{ "no status from bwrap", IN(STOP_NONE, 0, 0, 0, 0), "error", 125, 0,
	  "sandbox did not report an exit status" },
	{ "wall wins over status", IN(STOP_WALL, 0, 0, 0, 0), "timed_out", 124, 0,
	  "command timed out" },
};

/* o's diagnostics joined by "; ", as the reference appends them to stderr. */
static const char *joined(const struct outcome *o, char *buf, size_t n)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < o->ndiag && off < n; i++)
		off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? "; " : "",
					o->diagnostics[i]);
	return buf;
}

/* One row: outcome_map(in) gives this state, exit code, signal and diagnostics. */
static void check_row(const char *name, const struct outcome_in *in, const char *state,
		      int exit_code, int sig, const char *diag)
{
	struct outcome o;
	char ctx[96], d[256];

	outcome_map(in, &o);
	snprintf(ctx, sizeof ctx, "%s: state", name);
	CHECK_STR_AT(ctx, js_name(o.state), state);
	snprintf(ctx, sizeof ctx, "%s: exit_code", name);
	CHECK_INT_AT(ctx, o.exit_code, exit_code);
	snprintf(ctx, sizeof ctx, "%s: signal", name);
	CHECK_INT_AT(ctx, o.signal, sig);
	snprintf(ctx, sizeof ctx, "%s: diagnostics", name);
	CHECK_STR_AT(ctx, joined(&o, d, sizeof d), diag);
}

static void test_table(void)
{
	for (size_t i = 0; i < NELEM(rows); i++)
		check_row(rows[i].name, &rows[i].in, rows[i].state, rows[i].exit_code,
			  rows[i].signal, rows[i].diag);
}

/* The service's failures and cleanup failures: precedence and every diagnostic, in
 * the reference's order (limits not applied, output limit, timed out, resource
 * limit, cleanup failed). The stage's own "local-process controls failed: <reason>"
 * and "blocked by local-process policy: <reason>" are the supervisor's. */
static void test_stages(void)
{
	static const struct {
		const char *name;
		enum stop_reason reason;
		int code;
		long long oom;
		enum job_stage stage;
		int cleanup_failed;
		const char *state;
		int exit_code, signal;
		const char *diag;
	} srows[] = {
		{ "policy refusal", STOP_NONE, 0, 0, STAGE_POLICY, 0, "blocked", 126, 0, "" },
		{ "workspace", STOP_NONE, 0, 0, STAGE_CREATE, 0, "error", 125, 0, "" },
		{ "input files", STOP_NONE, 0, 0, STAGE_INPUT_FILES, 0, "error", 125, 0, "" },
		{ "limits", STOP_NONE, 0, 0, STAGE_INITIALIZE, 0, "error", 125, 0,
		  "resource limits were not applied" },
		{ "limits + cleanup", STOP_NONE, 0, 0, STAGE_INITIALIZE, 1, "error", 125, 0,
		  "resource limits were not applied; command process-group cleanup failed" },
		{ "start + cleanup", STOP_NONE, 0, 0, STAGE_COMMAND_START, 1, "error", 125, 0,
		  "command process-group cleanup failed" },
		/* the runner's own stops keep their codes; cleanup failure is added */
		{ "timeout + cleanup", STOP_WALL, 137, 0, STAGE_NONE, 1, "timed_out", 124, 0,
		  "command timed out; command process-group cleanup failed" },
		{ "output + cleanup", STOP_OUTPUT, 141, 0, STAGE_NONE, 1, "output_limit", 122, 0,
		  "command output limit exceeded; command process-group cleanup failed" },
		{ "cancel + cleanup", STOP_CANCEL, 137, 0, STAGE_NONE, 1, "cancelled", 137, 9,
		  "command cancelled; command process-group cleanup failed" },
		/* anything else whose cleanup failed is error 125, its diagnostic kept */
		{ "memory + cleanup", STOP_MEMORY, 137, 1, STAGE_NONE, 1, "error", 125, 0,
		  "command exceeded memory resource limit; command process-group cleanup failed" },
		{ "exit 0 + cleanup", STOP_NONE, 0, 0, STAGE_NONE, 1, "error", 125, 0,
		  "command process-group cleanup failed" },
		{ "exit 3 + cleanup", STOP_NONE, 3, 0, STAGE_NONE, 1, "error", 125, 0,
		  "command process-group cleanup failed" },
	};

	for (size_t i = 0; i < NELEM(srows); i++) {
		struct outcome_in in = { srows[i].reason, 1, srows[i].code, srows[i].oom, 0,
					 srows[i].stage, srows[i].cleanup_failed };

		check_row(srows[i].name, &in, srows[i].state, srows[i].exit_code, srows[i].signal,
			  srows[i].diag);
	}
}

/* The names the API and the database know, exactly. */
static void test_names(void)
{
	static const char *const stages[] = { NULL,		   "policy",
					      "create",		   "input_files.write",
					      "initialize",	   "command.start",
					      "cleanup",	   "execution",
					      "result.store" };

	CHECK_INT(NELEM(stages), STAGE_COUNT);
	for (int i = 0; i < STAGE_COUNT; i++)
		CHECK_STR_AT(stages[i] ? stages[i] : "(none)", js_stage_name((enum job_stage)i),
			     stages[i]);
	CHECK_STR(js_stage_name(STAGE_COUNT), NULL);
	for (int i = 0; i < JS_COUNT; i++)
		CHECK_INT_AT(js_name((enum job_state)i), js_parse(js_name((enum job_state)i)), i);
	CHECK_INT(js_parse("Running"), -1);
	CHECK_STR(js_outcome(JO_LOST)->diagnostic, "runner lost during execution");
	CHECK_INT(js_outcome(JO_LOST)->code, 125);
	CHECK_STR(js_name(js_outcome(JO_LOST)->state), "lost");
	CHECK_STR(js_outcome(JO_LIMITS_NOT_APPLIED)->diagnostic,
		  "resource limits were not applied");
	/* the reference SDK's exact words */
	CHECK_STR(js_outcome(JO_CLEANUP_FAILED)->diagnostic,
		  "command process-group cleanup failed");
	CHECK_STR(js_outcome(JO_BLOCKED)->diagnostic, "blocked by local-process policy");
	CHECK_STR(js_outcome(JO_SETUP_FAILED)->diagnostic, "local-process controls failed");
	CHECK_STR(js_outcome(JO_TIMED_OUT)->diagnostic, "command timed out");
	CHECK_STR(js_outcome(JO_OUTPUT_LIMIT)->diagnostic, "command output limit exceeded");
	CHECK_STR(js_outcome(JO_CPU)->diagnostic, "command exceeded cpu resource limit");
	/* every row has a terminal state */
	for (int i = 0; i < JO_COUNT; i++)
		CHECK(js_is_terminal(js_outcome((enum job_outcome)i)->state),
		      "outcome row %d: state %s is not terminal", i,
		      js_name(js_outcome((enum job_outcome)i)->state));
}

void suite_outcome(void)
{
	static const CU_TestInfo tests[] = { { "status_exit_code_table", test_table },
					     { "service_failure_stages", test_stages },
					     { "state_and_stage_names", test_names },
					     CU_TEST_INFO_NULL };

	t_register("outcome", tests);
}
