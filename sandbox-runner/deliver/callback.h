/* Webhook delivery (issue 12): the dispatcher forks one delivery pass at a time
 * (dispatch.c); the pass claims a few due job_callbacks rows, checks where each URL
 * points after DNS (common/netcheck.h), POSTs the signed job object to exactly that
 * address with libcurl and records the outcome. Runs in its own process so that a
 * slow receiver never holds up claims or heartbeats. */
#ifndef SANDBOX_CALLBACK_H
#define SANDBOX_CALLBACK_H

#include "config.h"

#define CB_PER_PASS 4          /* deliveries one pass sends at most */
#define CB_CLAIM_SECONDS 60    /* a claimed row is not due again before this */
#define CB_CONNECT_MS 5000
#define CB_TOTAL_MS 10000
#define CB_BODY_PREVIEW 65536  /* stdout/stderr bytes inline in the POSTed job object */
#define CB_RESPONSE_MAX 65536  /* response bytes read (and discarded) at most */

/* One pass in the calling process (the forked child): its own DB connection, then,
 * when run as root, the nobody uid before any network I/O. Number of deliveries
 * attempted, or -1 when the database could not be reached. */
int cb_pass(const struct cfg *cfg);

#endif
