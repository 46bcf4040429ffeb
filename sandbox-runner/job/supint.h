/* The job supervisor's own state and steps, shared by its files: supervise.c (load,
 * policy, start, the poll loop, compile step, the entry points), liveout.c (live
 * output), finish.c (artifacts, outcome, result) and holder.c (the prewarm holder).
 * Not for other modules: they call supervise.h. */
#ifndef SANDBOX_SUPINT_H
#define SANDBOX_SUPINT_H

#include <jansson.h>
#include <sys/resource.h>

#include "launch.h"
#include "outcome.h"
#include "policy.h"
#include "profile.h"
#include "pump.h"
#include "store.h"
#include "workspace.h"

struct sup_probe; /* supervise.h */

enum live { LIVE_UNKNOWN, LIVE_ON, LIVE_OFF };

struct sup {
	const struct cfg *cfg;
	struct db *db;
	struct job job;
	struct prof_named *prof;  /* the job's profile (use_profile) */
	json_t *diag;
	struct launch l;               /* the slot and its sandbox (launch.h) */
	enum stop_reason reason;
	int status_known, code;
	struct pump_out out, err;
	enum live live;                /* LIVE_OFF: everything waits for the result */
	int live_tried;                /* a flush was attempted: the result reads what is stored */
	double flush_retry_at;         /* no flush before this (monotonic ms) */
	double t0;
	struct rusage ru;
	struct cg_usage usage; /* read before the cgroup is removed */
	const struct sup_probe *probe; /* benchmark hook, or NULL */
	int local;                     /* supervise_local: no database at all */
	struct cmdpol pol;             /* the operator's command policy (policy.h) */
	json_t *compile;               /* result.compile (compile_step), NULL: none */
	double compile_ms;             /* wall time the compile step used: the run gets the rest */
	struct cg_usage base;          /* a prewarmed slot's event counts before the job */
	const char *cold_reason;       /* why a job ran cold with prewarming on, NULL: none */
	int launch_noted;              /* the "launch:" diagnostic is there */
};

void sup_init(struct sup *s, const struct cfg *cfg, int slot);
void sup_free(struct sup *s);
/* After each step of the launch path, for the benchmark (supervise.h). */
void sup_mark(const struct sup *s, const char *step);
/* One line of the job's diagnostics. */
void sup_diag(struct sup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sup_log_attempt(const struct sup *s, const char *step, int attempt, int max,
		     const char *type, int retry);
/* The connection, opened when there is none: 0, or -1 (logged). */
int sup_db_ready(struct sup *s);
/* A connection that is gone is closed (sup_db_ready opens a new one). */
void sup_db_drop_if_lost(struct sup *s);
/* The first reason wins; every process of the job is killed. */
void sup_stop(struct sup *s, enum stop_reason why);
/* The service failed at stage (launch_fail; the job's diagnostic says what). -1. */
int sup_setup_fail(struct sup *s, enum job_stage stage, const char *what, const char *error);
/* The job's attempts at loading its row: 0, or -1 (the lease expires: lost). */
int sup_load_job(struct sup *s, const char *id);
/* The operator's command policy and the runner's re-check: 0 go on, -1 the job ends
 * here (recorded). */
int sup_gate(struct sup *s);
/* Workspace (and the job's files), limits; each 0 or -1 (recorded). */
int sup_prepare_workspace(struct sup *s);
int sup_write_inputs(struct sup *s);
int sup_prepare_limits(struct sup *s);
void sup_limits_diag(struct sup *s);
void sup_placement_diag(struct sup *s);
/* The command's argv (the shell for a command string), borrowed strings; free() it. */
char **sup_command_argv(const struct job *j);
/* Policy check, workspace, limits, sandbox, run, artifacts, cleanup. */
void sup_execute(struct sup *s, struct artifact **arts, size_t *narts);
/* The started sandbox until it ended: the loop, usage, artifacts. */
void sup_run(struct sup *s, struct launch_fds *f, struct artifact **arts, size_t *narts);
void sup_reset_stream(struct pump_out *p, long long limit);

/* liveout.c: stores the streams that are due (never during the job's first FLUSH_MS). */
void sup_flush_live(struct sup *s, double now);
/* How long the loop may sleep before a pending stream is due: at most cap ms. */
int sup_flush_wait_ms(const struct sup *s, double now, int cap);

/* finish.c: the job's artifacts (artifacts_dir), with one diagnostic per kind skipped. */
void sup_collect(struct sup *s, struct artifact **arts, size_t *n);
/* The job's status from what happened; appends the outcome's diagnostic. */
void sup_outcome_for(struct sup *s, struct outcome *o);
/* The result stored (retried until stored or no longer ours), the API woken. */
void sup_finish(struct sup *s, struct artifact *arts, size_t narts);

#endif
