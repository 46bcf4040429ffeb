/* Requests relayed to a session's supervisor: kill, stdin and the file operations are
 * session_requests rows that the owning supervisor answers in the same row; the API
 * never talks to a runner host. A handler hands the wait for the answer to the waiter
 * (WT_REQUEST_DONE on the request's id, up to session_request_timeout_ms rounded up
 * to seconds) and answers on the re-dispatch from r->wait.aux, the request's id: the
 * row is inserted once, by the first run. Only without a wait board at all does the
 * worker poll the row itself (every 5 ms, same bound). Close waits for the session's
 * end the same way (srelay_wait_session_end). */
#ifndef SANDBOX_SRELAY_H
#define SANDBOX_SRELAY_H

#include <jansson.h>
#include <stddef.h>

#include "sapi.h"

enum srelay_rc { SREQ_DONE, SREQ_FAILED, SREQ_TIMEOUT, SREQ_DB, SREQ_QUOTA, SREQ_DEFERRED,
		 SREQ_KEY_SHARE, SREQ_NO_ROOM, SREQ_IN_PROGRESS };

struct srelay_answer {
	struct db_res *res;          /* the answered row */
	int http_status;             /* SREQ_FAILED */
	json_t *result;              /* result_json parsed, or NULL */
	const unsigned char *data;   /* result_data, or NULL */
	size_t len;
};

/* A request of `kind` (about command cid, or NULL) with args and data for the
 * supervisor of session sid, and its answer within session_request_timeout_ms. First
 * run: reserves its place on the wait board, inserts it and hands the wait to the
 * waiter (SREQ_DEFERRED: answer nothing now); the re-dispatch (srelay_resuming) reads
 * the answer of the request r->wait.aux and inserts nothing. Without room on the board
 * nothing is inserted: SREQ_KEY_SHARE / SREQ_NO_ROOM. Release a with srelay_free. */
enum srelay_rc srelay_call(struct api_ctx *ctx, struct req *r, const struct identity *who,
			   const char *sid, const char *kind, const char *cid, json_t *args,
			   const void *data, size_t len, struct srelay_answer *a);
void srelay_free(struct srelay_answer *a);
/* Answers a request that did not end `done` (SREQ_DONE and SREQ_DEFERRED excepted). */
void srelay_send_error(struct api_ctx *ctx, struct req *r, enum srelay_rc rc,
		       const struct srelay_answer *a);
/* For a caller that runs its own waits (a stream, app/e2b/ewatch.c): a request row of
 * kind with args for session sid's supervisor, charged as srelay_call's are (*id), and
 * its state later: SREQ_DONE / SREQ_FAILED (a filled; srelay_free it), SREQ_TIMEOUT
 * (still pending), SREQ_IN_PROGRESS (taken), SREQ_DB. */
enum srelay_rc srelay_insert(struct api_ctx *ctx, const char *sid, const char *kind,
			     json_t *args, long long *id);
enum srelay_rc srelay_read(struct db *db, long long id, struct srelay_answer *a);
/* The re-dispatch of a handler whose request (r->wait.aux, its id) waited. */
int srelay_resuming(const struct req *r);
/* Kinds answered by a supervisor need a ready session: 0, or -1 after a 409. */
int srelay_need_ready(struct req *r, const struct sess *s);
/* The waiter's deadline for an answer, in seconds. */
long long srelay_answer_seconds(const struct cfg *cfg);
/* Waits (polling) up to ms while the session is starting or ready: 0, -1 error. */
int srelay_wait_session_end(struct api_ctx *ctx, const char *id, long long ms);
/* Inside a transaction: room for `bytes` + `extra` more on the key of session sid,
 * then `bytes` counted on the session and the key. 0, 1 no room, -1 error. */
int srelay_charge(struct db *db, const struct cfg *cfg, const char *sid, long long bytes,
		  long long extra);

#endif
