/* Job storage and reads for the API, always scoped to the caller's identity: a job
 * outside the scope is indistinguishable from one that does not exist. Reads return
 * rows (struct job_set of job_views); app/jobs/render.c turns them into JSON. */
#ifndef SANDBOX_JOBS_H
#define SANDBOX_JOBS_H

#include <jansson.h>

#include "auth.h"
#include "config.h"
#include "db.h"
#include "jobstate.h"
#include "render.h"
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
	JOBS_FORBIDDEN,  /* the key may not use the job's profile (validation says so first) */
	JOBS_DB
};

/* Jobs as stored: the views, and the rows and buffers they point into. */
struct job_set {
	struct job_view *v;
	size_t n;
	int more;              /* jobs_list: a further page follows v[n - 1] */
	struct art_view *art;  /* every artifact of the set, grouped by job */
	size_t nart;
	/* owned: */
	struct db_res **held;
	size_t nheld;
	unsigned char **bufs;
	size_t nbufs;
};
void jobs_set_free(struct job_set *s);

enum jobs_rc jobs_create(struct db *db, const struct cfg *cfg, const struct identity *who,
			 const struct job_req *req, const char *idem_key,
			 const unsigned char req_hash[32], char id[UUID_STR_LEN]);
/* jobs_create, and for a new job (JOBS_OK) *job: its object as created, rendered from
 * the request and the server's clock of the insert (no read back); NULL on a replay,
 * an error, or no memory (then read it back). */
enum jobs_rc jobs_create_job(struct db *db, const struct cfg *cfg, const struct identity *who,
			     const struct job_req *req, const char *idem_key,
			     const unsigned char req_hash[32], char id[UUID_STR_LEN],
			     json_t **job);
/* out->v[0] (JOBS_OK; free with jobs_set_free on every result). inline_cap: bytes of
 * stdout/stderr read inline (the rest via jobs_output). */
enum jobs_rc jobs_get(struct db *db, const struct identity *who, const char *id,
		      long long inline_cap, struct job_set *out);
/* Current state without scope checks (the caller already proved access). */
enum jobs_rc jobs_state(struct db *db, const char *id, enum job_state *state);
/* Items carry at most `preview` bytes of each stream; status -1: any state. */
enum jobs_rc jobs_list(struct db *db, const struct identity *who, int status,
		       long long limit, const char *cursor, long long preview,
		       struct job_set *out);
enum jobs_rc jobs_cancel(struct db *db, const struct identity *who, const char *id);
/* out->art[0 .. nart): the job's artifacts by path (free with jobs_set_free). */
enum jobs_rc jobs_artifacts(struct db *db, const struct identity *who, const char *id,
			    struct job_set *out);
/* An artifact of a visible job: its size (contents via jd_each_artifact_chunk). */
enum jobs_rc jobs_artifact(struct db *db, const struct identity *who, const char *id,
			   const char *path, long long *size);

struct jobs_slice {
	unsigned char *data; /* malloc'd, free it */
	size_t len;
	long long total;     /* the stream's stored size: so far while the job runs */
	int terminal;        /* the job ended and its result is stored: total is final */
};
/* Bytes [off, off + limit) of a visible job's stdout (1) or stderr (2), never past
 * `total` (a running job's stored length, read first; those bytes never change). */
enum jobs_rc jobs_output(struct db *db, const struct identity *who, const char *id, int stream,
			 long long off, long long limit, struct jobs_slice *out);

/* One item of POST /v1/jobs/batch for jobs_create_batch. */
struct jobs_batch_item {
	const struct job_req *req;  /* NULL: the item was refused before storage, skipped */
	const char *idem_key;       /* the item's idempotency_key, or NULL */
	unsigned char hash[32];     /* of the item's canonical request text */
	enum jobs_rc rc;            /* out: OK, REPLAY, CONFLICT, QUOTA, STORAGE, FORBIDDEN */
	char id[UUID_STR_LEN];      /* out, for OK and REPLAY */
};
/* Every item with a req, in order, in ONE transaction: each looked up by its
 * idempotency key, then admitted by the key's quotas as the jobs before it in the
 * batch leave them (quota_admit per item, seeing this transaction's own rows), then
 * inserted. JOBS_OK when the transaction committed (each item's own rc says what
 * became of it), JOBS_DB when nothing was stored. */
enum jobs_rc jobs_create_batch(struct db *db, const struct cfg *cfg, const struct identity *who,
			       struct jobs_batch_item *items, size_t n);
/* The visible jobs among ids[0 .. n) (n <= JOBS_IDS_MAX; ids that are not UUIDs, not
 * found or outside the caller's scope are simply absent), each with at most `preview`
 * bytes of each stream. Order: unspecified (the caller orders them). */
#define JOBS_IDS_MAX 100
enum jobs_rc jobs_get_ids(struct db *db, const struct identity *who, const char *const *ids,
			  size_t n, long long preview, struct job_set *out);

#endif
