/* A job's runtime against what the live runner hosts reported (app/jobs/runtimes.c). */
#ifndef SANDBOX_RTLIVE_H
#define SANDBOX_RTLIVE_H

#include "db.h"
#include "validate.h"

/* The window in which a runner host counts as live (runner_hosts.seen_at): the
 * same for GET /v1/runtimes and for this check. */
#define RTL_FRESH_MINUTES "5"

/* A job that names a runtime (req->runtime) is refused when the live hosts that
 * reported runtimes (a runner_runtimes row, hosts seen in the last
 * RTL_FRESH_MINUTES) all lack it: 422 `runtime_unavailable`, field `runtime`. When
 * no live host reported anything (cron runners that have not run lately, a fresh
 * installation), the job is accepted and waits for a runner, as before the check.
 * 0 accepted, -1 refused (e filled), -2 database error. */
int rtl_check(struct db *db, const struct job_req *req, struct val_err *e);

#endif
