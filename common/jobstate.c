/* Job states (see jobstate.h). */
#include "jobstate.h"

#include <signal.h>
#include <string.h>

static const char *const names[JS_COUNT] = {
	[JS_QUEUED] = "queued",
	[JS_RUNNING] = "running",
	[JS_SUCCEEDED] = "succeeded",
	[JS_FAILED] = "failed",
	[JS_TIMED_OUT] = "timed_out",
	[JS_OUTPUT_LIMIT] = "output_limit",
	[JS_RESOURCE_LIMIT] = "resource_limit",
	[JS_BLOCKED] = "blocked",
	[JS_ERROR] = "error",
	[JS_CANCELLED] = "cancelled",
	[JS_LOST] = "lost",
};

const char *js_name(enum job_state s)
{
	return (unsigned)s < JS_COUNT ? names[s] : NULL;
}

int js_parse(const char *name)
{
	for (int i = 0; name && i < JS_COUNT; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

int js_is_terminal(enum job_state s)
{
	return (unsigned)s < JS_COUNT && s != JS_QUEUED && s != JS_RUNNING;
}

static const char diag_memory[] = "command exceeded memory resource limit";
static const char diag_pids[] = "command exceeded pids resource limit";

static const struct js_outcome_row outcomes[JO_COUNT] = {
	[JO_SUCCEEDED] = { JS_SUCCEEDED, JC_OWN, 0, NULL },
	[JO_FAILED] = { JS_FAILED, JC_OWN, 0, NULL },
	[JO_TIMED_OUT] = { JS_TIMED_OUT, JC_FIXED, 124, "command timed out" },
	[JO_OUTPUT_LIMIT] = { JS_OUTPUT_LIMIT, JC_FIXED, 122, "command output limit exceeded" },
	[JO_CANCELLED] = { JS_CANCELLED, JC_KILLED, 0, "command cancelled" },
	[JO_MEMORY] = { JS_RESOURCE_LIMIT, JC_SIGNAL, 0, diag_memory },
	[JO_MEMORY_SEEN] = { JS_RESOURCE_LIMIT, JC_OWN, 0, diag_memory },
	[JO_PIDS] = { JS_RESOURCE_LIMIT, JC_KILLED, 0, diag_pids },
	[JO_PIDS_SEEN] = { JS_RESOURCE_LIMIT, JC_SIGNAL, 0, diag_pids },
	[JO_CPU] = { JS_RESOURCE_LIMIT, JC_SIGNAL, 0, "command exceeded cpu resource limit" },
	[JO_BLOCKED] = { JS_BLOCKED, JC_FIXED, 126, "blocked by local-process policy" },
	[JO_SETUP_FAILED] = { JS_ERROR, JC_FIXED, 125, "local-process controls failed" },
	[JO_LIMITS_NOT_APPLIED] = { JS_ERROR, JC_FIXED, 125, "resource limits were not applied" },
	[JO_CLEANUP_FAILED] = { JS_ERROR, JC_FIXED, 125, "command process-group cleanup failed" },
	[JO_NO_STATUS] = { JS_ERROR, JC_FIXED, 125, "sandbox did not report an exit status" },
	[JO_LOST] = { JS_LOST, JC_FIXED, 125, "runner lost during execution" },
	[JO_UNSTORABLE] = { JS_ERROR, JC_FIXED, 125, "result could not be stored" },
};

const struct js_outcome_row *js_outcome(enum job_outcome o)
{
	return &outcomes[(unsigned)o < JO_COUNT ? o : JO_NO_STATUS];
}

void js_exit_code(enum job_outcome o, int code_known, int code, int *exit_code, int *sig)
{
	const struct js_outcome_row *r = js_outcome(o);
	/* bwrap reports death by signal N as 128+N, like a shell. A command that
	 * itself exits with 129..192 is indistinguishable; we report it as a signal. */
	int n = code_known && code > 128 && code <= 128 + 64 ? code - 128 : 0;

	switch (r->rule) {
	case JC_OWN:
		*exit_code = code, *sig = n;
		return;
	case JC_FIXED:
		*exit_code = r->code, *sig = 0;
		return;
	case JC_SIGNAL:
		*sig = n ? n : SIGKILL;
		*exit_code = 128 + *sig;
		return;
	case JC_KILLED:
		*exit_code = 128 + SIGKILL, *sig = SIGKILL;
		return;
	}
}

static const char *const stages[STAGE_COUNT] = {
	[STAGE_POLICY] = "policy",
	[STAGE_CREATE] = "create",
	[STAGE_INPUT_FILES] = "input_files.write",
	[STAGE_INITIALIZE] = "initialize",
	[STAGE_COMMAND_START] = "command.start",
	[STAGE_CLEANUP] = "cleanup",
	[STAGE_EXECUTION] = "execution",
	[STAGE_RESULT_STORE] = "result.store",
};

const char *js_stage_name(enum job_stage s)
{
	return (unsigned)s < STAGE_COUNT ? stages[s] : NULL;
}
