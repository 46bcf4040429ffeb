/* A key's quotas at submit: queued+running jobs (max_queued) and stored bytes
 * (max_stored_mb). The policy that keeps the check cheap far from a quota and exact
 * near it lives here; app/jobs.c only asks. */
#ifndef SANDBOX_QUOTA_H
#define SANDBOX_QUOTA_H

#include <jansson.h>

#include "auth.h"
#include "config.h"
#include "db.h"

enum quota_rc {
	QUOTA_OK,
	QUOTA_QUEUED, /* too many queued or running jobs */
	QUOTA_STORED, /* the stored-bytes quota would be exceeded by `incoming` */
	QUOTA_DB
};

/* Inside the submit transaction (it may lock the key's row): may one more job of
 * `who`, holding `incoming` bytes of inputs, be queued? */
enum quota_rc quota_admit(struct db *db, const struct cfg *cfg, const struct identity *who,
			  long long incoming);

/* What a key may use and what it uses now, for GET /v1/identity: a new object
 * {max_queued, active_jobs, max_stored_bytes, stored_bytes, max_running}, or NULL on a
 * database error. */
json_t *quota_report(struct db *db, const struct cfg *cfg, const struct identity *who);

#endif
