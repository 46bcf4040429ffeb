/* Job states: one table for the API and the runner (DESIGN.md section 5). */
#ifndef SANDBOX_JOBSTATE_H
#define SANDBOX_JOBSTATE_H

enum job_state {
	JS_QUEUED,
	JS_RUNNING,
	JS_SUCCEEDED,
	JS_FAILED,
	JS_TIMED_OUT,
	JS_OUTPUT_LIMIT,
	JS_RESOURCE_LIMIT,
	JS_BLOCKED,
	JS_ERROR,
	JS_CANCELLED,
	JS_LOST,
	JS_COUNT
};

/* "queued", ...; NULL outside the enum. */
const char *js_name(enum job_state s);
/* The state named exactly (byte for byte), or -1. */
int js_parse(const char *name);
int js_is_terminal(enum job_state s);

#endif
