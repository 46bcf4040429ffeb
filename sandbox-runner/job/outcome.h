/* Which row of DESIGN.md section 5's table (common/jobstate.h) applies to what
 * happened to a job: its state, exit code and diagnostics. Pure, unit-tested.
 *
 * Precedence, as in the reference SDK's local-process backend: the runner's own
 * stops keep their codes (timed out 124, output limit 122, and cancelled) even when
 * cleanup fails afterwards; any other result whose cleanup failed is error 125. Every
 * diagnostic that applies is given, in this order: resource limits were not applied,
 * command output limit exceeded, command timed out, command cancelled, command
 * exceeded <x> resource limit, sandbox did not report an exit status, command
 * process-group cleanup failed. */
#ifndef SANDBOX_OUTCOME_H
#define SANDBOX_OUTCOME_H

#include <stddef.h>

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
	enum job_stage stage;  /* the service stopped the job there (STAGE_NONE: it ran).
				* Only STAGE_INITIALIZE's diagnostic comes from here; the
				* others' (policy refusal, controls failed) are the caller's. */
	int cleanup_failed;
};

#define OUTCOME_MAX_DIAG 4

struct outcome {
	enum job_state state;
	int exit_code;
	int signal;         /* 0: none */
	const char *diagnostics[OUTCOME_MAX_DIAG]; /* in the order above */
	size_t ndiag;
};

void outcome_map(const struct outcome_in *in, struct outcome *out);

#endif
