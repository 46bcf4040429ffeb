/* One job's supervisor: a process of its own, detached from the dispatcher, that
 * prepares the workspace and limits, runs bwrap, enforces wall clock, output caps,
 * cancellation, renews the lease, cleans up and stores the result. */
#ifndef SANDBOX_SUPERVISE_H
#define SANDBOX_SUPERVISE_H

#include "config.h"

/* Never returns an error to a caller that could retry the job: it exits. */
int supervise_main(const struct cfg *cfg, const char *job_id, int slot,
		   const char *runner_id);

#endif
