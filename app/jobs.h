/* Job storage and reads for the API, always scoped to the caller's identity: a job
 * outside the scope is indistinguishable from one that does not exist. */
#ifndef SANDBOX_JOBS_H
#define SANDBOX_JOBS_H

#include <jansson.h>

#include "auth.h"
#include "config.h"
#include "db.h"
#include "util.h"
#include "validate.h"

enum jobs_rc {
	JOBS_OK,
	JOBS_REPLAY,     /* idempotency key seen with the same request */
	JOBS_NOT_FOUND,
	JOBS_CONFLICT,   /* idempotency key seen with another request */
	JOBS_QUOTA,
	JOBS_BAD_CURSOR,
	JOBS_DB
};

enum jobs_rc jobs_create(struct db *db, const struct cfg *cfg, const struct identity *who,
			 const struct job_req *req, const char *idem_key,
			 const unsigned char req_hash[32], char id[UUID_STR_LEN]);
/* *out: a new job object (JOBS_OK). */
enum jobs_rc jobs_get(struct db *db, const struct identity *who, const char *id, json_t **out);
/* Current state without scope checks (the caller already proved access). */
enum jobs_rc jobs_state(struct db *db, const char *id, char state[24]);
enum jobs_rc jobs_list(struct db *db, const struct identity *who, const char *status,
		       long long limit, const char *cursor, json_t **out);
enum jobs_rc jobs_cancel(struct db *db, const struct identity *who, const char *id);
/* *out: bare array [{path,size,sha256}]. */
enum jobs_rc jobs_artifacts(struct db *db, const struct identity *who, const char *id,
			    json_t **out);
/* *res: one row (content); caller frees with db_res_free. */
enum jobs_rc jobs_artifact(struct db *db, const struct identity *who, const char *id,
			   const char *path, struct db_res **res);

#endif
