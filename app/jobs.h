/* Job storage and reads for the API, always scoped to the caller's identity: a job
 * outside the scope is indistinguishable from one that does not exist. */
#ifndef SANDBOX_JOBS_H
#define SANDBOX_JOBS_H

#include <jansson.h>

#include "auth.h"
#include "config.h"
#include "db.h"
#include "jobstate.h"
#include "util.h"
#include "validate.h"

enum jobs_rc {
	JOBS_OK,
	JOBS_REPLAY,     /* idempotency key seen with the same request */
	JOBS_NOT_FOUND,
	JOBS_CONFLICT,   /* idempotency key seen with another request */
	JOBS_QUOTA,
	JOBS_STORAGE,    /* the key's stored-bytes quota */
	JOBS_BAD_CURSOR,
	JOBS_DB
};

enum jobs_rc jobs_create(struct db *db, const struct cfg *cfg, const struct identity *who,
			 const struct job_req *req, const char *idem_key,
			 const unsigned char req_hash[32], char id[UUID_STR_LEN]);
/* *out: a new job object (JOBS_OK). */
/* inline_cap: bytes of stdout/stderr rendered inline (the rest via jobs_output). */
enum jobs_rc jobs_get(struct db *db, const struct identity *who, const char *id,
		      long long inline_cap, json_t **out);
/* Current state without scope checks (the caller already proved access). */
enum jobs_rc jobs_state(struct db *db, const char *id, enum job_state *state);
/* Items carry at most `preview` bytes of each stream; status -1: any state. */
enum jobs_rc jobs_list(struct db *db, const struct identity *who, int status,
		       long long limit, const char *cursor, long long preview, json_t **out);
enum jobs_rc jobs_cancel(struct db *db, const struct identity *who, const char *id);
/* *out: bare array [{path,size,sha256}]. */
enum jobs_rc jobs_artifacts(struct db *db, const struct identity *who, const char *id,
			    json_t **out);
/* An artifact of a visible job: its size (contents via jd_each_artifact_chunk). */
enum jobs_rc jobs_artifact(struct db *db, const struct identity *who, const char *id,
			   const char *path, long long *size);

struct jobs_slice {
	unsigned char *data; /* malloc'd, free it */
	size_t len;
	long long total;     /* the stream's stored size */
	int terminal;        /* the job ended and its result is stored */
};
/* Bytes [off, off + limit) of a visible job's stdout (1) or stderr (2). */
enum jobs_rc jobs_output(struct db *db, const struct identity *who, const char *id, int stream,
			 long long off, long long limit, struct jobs_slice *out);

#endif
