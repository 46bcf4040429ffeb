#include "jobstate.h"

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
