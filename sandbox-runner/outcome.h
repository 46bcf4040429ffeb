/* Which row of DESIGN.md section 5's table (common/jobstate.h) applies to what
 * happened to a job: its state, exit code and diagnostic. Pure, unit-tested. */
#ifndef SANDBOX_OUTCOME_H
#define SANDBOX_OUTCOME_H

#include "jobstate.h"

enum stop_reason {
	STOP_NONE,     /* the command ended by itself */
	STOP_WALL,     /* wall clock */
	STOP_OUTPUT,   /* stdout or stderr cap */
	STOP_CANCEL,   /* cancelled by the client */
	STOP_MEMORY,   /* the cgroup's OOM killer */
	STOP_PIDS,     /* fork refused by pids.max */
	STOP_CPU,      /* cpu time */
};

struct outcome_in {
	enum stop_reason reason;
	int status_known;   /* bwrap reported the command's exit code */
	int code;           /* that code: 0..255, 128+N for signal N */
	long long oom_kills;
	long long pids_denied; /* forks refused by the pids limit */
	enum job_stage stage;  /* the service failed there (its diagnostic is out) */
	int cleanup_failed;    /* (its diagnostic is out too) */
};

struct outcome {
	enum job_state state;
	int exit_code;
	int signal;         /* 0: none */
	const char *diagnostic; /* NULL: none (or already reported) */
};

void outcome_map(const struct outcome_in *in, struct outcome *out);

#endif
