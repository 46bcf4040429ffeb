/* One job's supervisor: a process of its own, detached from the dispatcher, that
 * prepares the workspace and limits, runs bwrap, enforces wall clock, output caps,
 * cancellation, renews the lease, cleans up and stores the result. */
#ifndef SANDBOX_SUPERVISE_H
#define SANDBOX_SUPERVISE_H

#include "config.h"
#include "jobstate.h"
#include "store.h"

/* For the benchmark: called after each step of the launch path with its name
 * (ws_create, cg_setup, pipes, sc_build_fd, prof_bwrap_args, sb_spawn, run,
 * kill_after_exit, drain_after_exit, cg_read, artifacts, close_fds, cleanup_kill,
 * cg_destroy, ws_destroy). */
struct sup_probe {
	void (*mark)(void *ctx, const char *step);
	void *ctx;
};

/* Never returns an error to a caller that could retry the job: it exits. */
int supervise_main(const struct cfg *cfg, const char *job_id, int slot,
		   const char *runner_id);
/* supervise_main with a connection opened beforehand (a pre-forked supervisor,
 * spare.c), or NULL; it is closed before this returns. */
int supervise_run(const struct cfg *cfg, struct db *db, const char *job_id, int slot,
		  const char *runner_id);
/* The same execution path for a job that is not in the database (no lease, no
 * result row): fills state (terminal status) and exit_code. 0, or -1 if the job
 * could not be run at all. */
int supervise_local(const struct cfg *cfg, struct job *job, int slot,
		    const struct sup_probe *probe, enum job_state *state, int *exit_code);
/* supervise_local for the runtimes probe (rtprobe.c): also copies up to *outlen
 * bytes of the job's stdout (or stderr, when stdout is empty) to out, *outlen set to
 * the count. */
int supervise_capture(const struct cfg *cfg, struct job *job, int slot, enum job_state *state,
		      int *exit_code, unsigned char *out, size_t *outlen);

#endif
