/* What the job store's two halves share (app/jobs/jobs.c: reads, cancel; app/jobs/
 * submit.c: new jobs): the format of every time the API renders, and the job_events
 * row. Only those two files include it. */
#ifndef SANDBOX_JOBSQL_H
#define SANDBOX_JOBSQL_H

#include "auth.h"
#include "db.h"
#include "jobstate.h"

#define TS(col) "DATE_FORMAT(" col ", '%Y-%m-%dT%H:%i:%s.%fZ')"

/* One job_events row, actor "key:<key_id>"; from -1: none (the job is new). 0 or -1. */
int jobs_add_event(struct db *db, const char *id, int from, enum job_state to,
		   const struct identity *who, const char *detail);

#endif
