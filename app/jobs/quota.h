/* A key's quotas at submit: queued+running jobs (max_queued) and stored bytes
 * (max_stored_mb). The policy that keeps the check cheap far from a quota and exact
 * near it lives here; app/jobs/jobs.c only asks. */
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

/* A session's write (command env and stdin, stdin, an uploaded file) of `incoming`
 * bytes for the key key_id whose max_stored_mb is `max_mb` (-1: the default): room
 * for it? QUOTA_OK, QUOTA_STORED or QUOTA_DB. Not locked, as for jobs. */
enum quota_rc quota_stored_admit(struct db *db, const struct cfg *cfg, const char *key_id,
				 long long max_mb, long long incoming);

/* The message of a 429 quota_exceeded for stored bytes (the jobs' wording). */
#define QUOTA_STORED_MESSAGE                                                             \
	"stored-bytes quota exceeded for this key: its jobs' and sessions' output,"       \
	" artifacts and inputs leave no room for this"

/* What a key may use and what it uses now, for GET /v1/identity: a new object
 * {max_queued, active_jobs, max_stored_bytes, stored_bytes, max_running, max_sessions,
 * live_sessions}, or NULL on a
 * database error. */
json_t *quota_report(struct db *db, const struct cfg *cfg, const struct identity *who);

/* For the RateLimit headers: the key's queued+running jobs as this worker knows them,
 * and its max_queued in *max. The worker's cached count when younger than the cache's
 * 500 ms (then no query: it counts this worker's admissions since, not other workers'
 * nor jobs ended since), else one count bounded by max on (key_id, state), which is
 * then cached. -1 on a database error. */
long long quota_active_now(struct db *db, const struct cfg *cfg, const struct identity *who,
			   long long *max);

#endif
