/* What the job routes (app/jobs/jobroutes.c, joblist.c, batch.c, outputs.c) share:
 * the ?wait parameter, a job's end as its object shows it, the Idempotency-Key rule
 * and the answer to a storage result. Their handlers are declared by the route table
 * (app/http/api_routes.h). */
#ifndef SANDBOX_JOBROUTES_H
#define SANDBOX_JOBROUTES_H

#include <jansson.h>

#include "http.h"
#include "jobs.h"
#include "routes.h"

#define WAIT_MAX_SECONDS 30

/* ?wait=S (0..30) of GET /v1/jobs/{id}, POST /v1/jobs and POST /v1/jobs/batch: 0 and
 * *wait set, or -1 after answering the error. */
int jr_parse_wait(struct req *r, long long *wait);
/* The job object's status is a final one. */
int jr_job_terminal(const json_t *job);
/* An idempotency key: 1 to 255 printable ASCII characters. */
int jr_idem_key_ok(const char *k);
/* Answers a storage result other than JOBS_OK (404 for a job outside the caller's
 * scope, exactly as for an unknown one); 1 when it answered. */
int jr_send_failed(struct api_ctx *ctx, struct req *r, enum jobs_rc rc);

#endif
