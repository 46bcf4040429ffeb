/* Mapping of what happened to a job onto its status, exit code and diagnostics
 * (DESIGN.md section 5). Pure, unit-tested. */
#ifndef SANDBOX_OUTCOME_H
#define SANDBOX_OUTCOME_H

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
};

struct outcome {
	const char *state;
	int exit_code;
	int signal;         /* 0: none */
	const char *diagnostic; /* NULL: none */
};

void outcome_map(const struct outcome_in *in, struct outcome *out);

#endif
