/* A key's quotas at submit: queued+running jobs (max_queued) and stored bytes
 * (max_stored_mb). The policy that keeps the check cheap far from a quota and exact
 * near it lives here; app/jobs.c only asks. */
#ifndef SANDBOX_QUOTA_H
#define SANDBOX_QUOTA_H

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

#endif
