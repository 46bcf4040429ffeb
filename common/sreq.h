/* Session request rows (session_requests, schema 005 and 011): the parts the API and
 * the runner share, so that the two sides cannot drift apart.
 *
 * States. The API inserts a row `pending`. The owning supervisor claims it
 * (`pending` -> `taken`, one conditional UPDATE: sreq_claim) before it does anything,
 * and answers it (`taken` -> `done` | `failed`). The API gives up on a row only while
 * it is `pending` (`pending` -> `failed`, 504 request_timeout): either the supervisor
 * claimed it first and the action happens (the API waits for that answer), or the
 * API failed it first and the supervisor's claim finds nothing to do, so a client
 * told 504 knows the action never happens. A session that ends fails its `pending`
 * and `taken` rows (409 session_ended).
 *
 * Payloads. A stdin or upload request carries its bytes in `data`; they are erased
 * when the row leaves `pending`/`taken` (data_bytes and data_sha256 kept) and their
 * bytes given back to the session's and the key's stored bytes, as a job's inputs
 * are at its end (sreq_answer, sreq_fail_session).
 *
 * Answer codes. Every refusal a supervisor can give is a row of one table (code ->
 * HTTP status): the runner takes the status from it (sreq_code_status) and the API
 * passes on exactly the pairs in it (sreq_passthrough); anything else is a 502. */
#ifndef SANDBOX_SREQ_H
#define SANDBOX_SREQ_H

#include <stddef.h>

struct db;

struct sreq_code {
	const char *code;
	int http;
	const char *what; /* when a supervisor gives it (docs/SESSIONS.md says the same) */
};

/* The table, terminated by a NULL code. */
extern const struct sreq_code sreq_codes[];

/* The HTTP status of an answer code; 0 for a code not in the table. Pure. */
int sreq_code_status(const char *code);

/* 1 when a failed row's (status, code) may be passed on to the client as it is: the
 * code is in the table with exactly that status. Pure. */
int sreq_passthrough(int http, const char *code);

/* The supervisor's claim: pending -> taken. 1 claimed (act on it), 0 not pending any
 * more (the API failed it, or the session ended: do nothing), -1 database error. */
int sreq_claim(struct db *db, long long id);

/* Gives a claim back (taken -> pending) when the supervisor must try again later
 * without having acted. 0 or -1. */
int sreq_unclaim(struct db *db, long long id);

/* Answers row `id` if it is in state `from` ("pending" or "taken"): state `to`
 * ("done" or "failed"), http_status (0: NULL), result_json (NULL: NULL), result_data
 * (NULL: NULL), its payload erased and released. One transaction of its own.
 * 1 answered, 0 the row was not in state `from`, -1 database error. */
int sreq_answer(struct db *db, long long id, const char *from, const char *to, int http,
		const char *result_json, const void *rdata, size_t rlen);

/* Inside the caller's transaction: every row of session sid in state `pending` (and
 * `taken` when with_taken) fails with http and result_json, payloads erased and
 * released. 0 or -1. */
int sreq_fail_session(struct db *db, const char *sid, int with_taken, int http,
		      const char *result_json);

/* Inside the caller's transaction, after its guarded UPDATE closed session sid before
 * any runner took it (the API's close, a key's revocation): the session's env and
 * files erased, its queued commands cancelled ("the session ended before the command
 * started") and their inputs released, its requests failed 409 session_ended. 0 or
 * -1. */
int sreq_end_unstarted(struct db *db, const char *sid);

#endif
