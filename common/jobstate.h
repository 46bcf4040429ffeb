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
	JO_BLOCKED,      /* diagnostic: "blocked by local-process policy: <reason>" */
	JO_SETUP_FAILED, /* diagnostic: "local-process controls failed: <reason>" */
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

/* Where the service (not the command) failed: failure.stage. The names follow the
 * reference SDK's sandbox lifecycle (create, initialize, input_files.write,
 * command.start, cleanup); execution (lease expired) and result.store are the
 * service's own. A policy refusal is the job's outcome, not a service failure: it
 * has a stage here (the supervisor stops there) but no failure object. */
enum job_stage {
	STAGE_NONE,
	STAGE_POLICY,        /* "policy": refused before anything was created */
	STAGE_CREATE,        /* "create": the slot's workspace */
	STAGE_INPUT_FILES,   /* "input_files.write": files and cwd in the workspace */
	STAGE_INITIALIZE,    /* "initialize": cgroup limits */
	STAGE_COMMAND_START, /* "command.start": seccomp, bwrap, network, until exec */
	STAGE_CLEANUP,       /* "cleanup": process group (cgroup, uid) or workspace */
	STAGE_EXECUTION,     /* "execution": the runner was lost (lease expired) */
	STAGE_RESULT_STORE,  /* "result.store": the database refused the result */
	STAGE_COUNT
};

/* "policy", "create", ..., "result.store"; NULL for STAGE_NONE and outside. */
const char *js_stage_name(enum job_stage s);

/* failure.instance_status: how far the sandbox instance got. */
#define JS_INSTANCE_NOT_CREATED "not_created" /* nothing was created */
#define JS_INSTANCE_CREATED "created"         /* set up, the command never started */
#define JS_INSTANCE_EXITED "exited"           /* the command ran and ended */
#define JS_INSTANCE_UNKNOWN "unknown"         /* the runner was lost */
/* failure.cleanup_status: the reference's words, and unknown for a lost runner. */
#define JS_CLEANUP_NOT_STARTED "not_started"
#define JS_CLEANUP_COMPLETED "completed"
#define JS_CLEANUP_FAILED "failed"
#define JS_CLEANUP_UNKNOWN "unknown"

#endif
