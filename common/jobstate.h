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

/* DESIGN.md section 5's outcome table: what happened to a job -> its state, how its
 * exit code is found, and the diagnostic appended. outcome.c decides which row
 * applies; the store and the supervisor take states, codes and texts from here. */
enum js_code_rule {
	JC_OWN,    /* the command's own code (128+N means signal N) */
	JC_FIXED,  /* the row's code, no signal */
	JC_SIGNAL, /* 128+N for the signal N the command died of, else 128+SIGKILL */
	JC_KILLED, /* 128+SIGKILL: the runner killed the job */
};

enum job_outcome {
	JO_SUCCEEDED,
	JO_FAILED,
	JO_TIMED_OUT,
	JO_OUTPUT_LIMIT,
	JO_CANCELLED,
	JO_MEMORY,       /* the runner or the OOM killer ended the job */
	JO_MEMORY_SEEN,  /* an OOM kill inside a job that ended by itself */
	JO_PIDS,         /* the runner stopped the job at its pids limit */
	JO_PIDS_SEEN,    /* a fork was refused; the job ended by itself */
	JO_CPU,
	JO_BLOCKED,      /* diagnostic: "blocked by policy: <reason>" */
	JO_SETUP_FAILED, /* the stage's own diagnostic says what */
	JO_LIMITS_NOT_APPLIED,
	JO_CLEANUP_FAILED,
	JO_NO_STATUS,
	JO_LOST,
	JO_UNSTORABLE,   /* diagnostic: "result could not be stored: <cause>" */
	JO_COUNT
};

struct js_outcome_row {
	enum job_state state;
	enum js_code_rule rule;
	int code;               /* JC_FIXED */
	const char *diagnostic; /* NULL: none */
};

/* The row of o (o must be < JO_COUNT). */
const struct js_outcome_row *js_outcome(enum job_outcome o);
/* Applies o's code rule to the command's code (code_known 0: there is none). */
void js_exit_code(enum job_outcome o, int code_known, int code, int *exit_code, int *sig);

/* Where the service (not the command) failed: failure.stage. */
enum job_stage {
	STAGE_NONE,
	STAGE_POLICY,
	STAGE_WORKSPACE,
	STAGE_LIMITS,
	STAGE_SANDBOX,
	STAGE_NETWORK,
	STAGE_CLEANUP,
	STAGE_EXECUTION,
	STAGE_RESULT_STORE,
	STAGE_COUNT
};

/* "policy", "workspace", ..., "result.store"; NULL for STAGE_NONE and outside. */
const char *js_stage_name(enum job_stage s);

#endif
