/* Job bytes at rest: output and artifact chunks, storage accounting per key, and the
 * erasure of a finished job's secrets. Shared by the API, the runner and sandboxctl so
 * that every terminal transition settles storage the same way.
 *
 * Output and artifact contents are stored in chunks of at most JD_CHUNK_BYTES
 * (tables job_output and job_artifact_chunks, keyed by the byte offset of the chunk):
 * no row or packet grows with a job's output, and a range read touches only the
 * chunks it needs. Storage per key is kept in key_storage, spread over JD_SHARDS rows
 * so that concurrent submits of one key seldom wait on one row lock; a transaction
 * uses one of them (db_tx_salt), so it holds one row lock per key. */
#ifndef SANDBOX_JOBDATA_H
#define SANDBOX_JOBDATA_H

#include <stddef.h>

#include "db.h"

#define JD_CHUNK_BYTES (1024 * 1024)
#define JD_SHARDS 16
/* max_allowed_packet must hold one chunk plus the statement around it, and the API's
 * largest insert (a job's stdin or one input file, up to max_files_bytes). */
#define JD_PACKET_OVERHEAD (64 * 1024)

enum jd_stream { JD_STDOUT = 1, JD_STDERR = 2 };

/* Inside the caller's transaction: stores data as chunks from offset 0. 0 or -1. */
int jd_put_output(struct db *db, const char *job_id, int stream, const void *data, size_t len);
/* Appends one chunk (at most JD_CHUNK_BYTES) of a stream that is still growing: a
 * running job's or a session command's output (id is the job's or the command's).
 * off is the stream's length before it. The row is the unit a reader sees: a chunk
 * is there whole or not at all. 0 or -1. */
int jd_append_output(struct db *db, const char *id, int stream, long long off,
		     const void *data, size_t len);
int jd_put_artifact(struct db *db, const char *job_id, const char *path, const void *data,
		    size_t len);

/* Bytes [off, off + limit) of a stream (fewer at its end): *buf is malloc'd (never
 * NULL on success, free it), *len its length. 0 or -1. */
int jd_read_output(struct db *db, const char *job_id, int stream, long long off,
		   long long limit, unsigned char **buf, size_t *len);

/* Calls fn for each chunk of an artifact, in order; stops at fn's non-zero return.
 * 0, -1 on a database error, or fn's non-zero value. */
int jd_each_artifact_chunk(struct db *db, const char *job_id, const char *path,
			   int (*fn)(void *arg, const void *data, size_t len), void *arg);

/* Adds delta (may be negative) to a key's stored bytes, on the transaction's shard
 * (db_tx_salt): every call of one transaction locks the same row. Inside a
 * transaction; best as its last statement, so the row is held only until COMMIT. */
int jd_add_stored(struct db *db, const char *key_id, long long delta);
/* Locks key key_id's row with a write a Galera cluster certifies (a SELECT ... FOR
 * UPDATE is not certified across nodes: two nodes would each admit one more):
 * api_keys.max_running flipped to a value it never holds (x -> -1 - x, NULL -> -1) and
 * back in the caller's transaction, so the row is written by each statement (an
 * UPDATE that changes nothing writes nothing) and ends as it was; no other transaction
 * sees the flipped value. One server: the row lock of FOR UPDATE. Checks of a per-key
 * cap take it before they count (the runner's claim: max_running; the API: max_queued
 * near its limit, max_sessions). 0 (also when the key is gone: nothing to lock) or -1. */
int jd_key_lock(struct db *db, const char *key_id);
/* A key's stored bytes, or -1 on a database error. */
long long jd_key_stored(struct db *db, const char *key_id);

/* A job reaching a terminal state, inside the caller's transaction: erases its env
 * values, stdin and input file contents (keeping names, sizes and sha256), sets its
 * stored bytes to `kept` (output + artifacts) and moves the difference to its key's
 * total. Idempotent. 0 or -1. */
int jd_settle(struct db *db, const char *job_id, long long kept);

/* Session inputs at rest (schema 005). The API counts them on sessions.stored_bytes and
 * on the key's total when it writes them (app/sessions/sessions.c): the session's env_json text
 * (an empty env is '{}', 2 bytes) and its session_files at create, each command's
 * env_json text and stdin. When one is erased its bytes are released, in the
 * transaction that erases it and only in the one whose guarded UPDATE moved the row
 * out of its live status: an end path that runs twice, or two racing ones, release
 * once. The '{}' left in place of an erased env counts nothing, as a settled job's. */
#define JD_SESS_ENV 1u   /* sessions.env_json, set to '{}' */
#define JD_SESS_FILES 2u /* session_files rows, deleted */
/* Inside the transaction, after the caller's guarded status UPDATE changed the session
 * row: erases those parts of the session and releases their bytes. 0 or -1. */
int jd_session_erase(struct db *db, const char *session_id, unsigned parts);
/* Which commands an ending erases: the session's queued ones (a session no runner
 * took), its queued and running ones, or one command if it is queued or running. */
enum jd_cmds { JD_CMDS_QUEUED, JD_CMDS_LIVE, JD_CMD_ONE };
/* Inside the transaction, before the guarded UPDATE that ends those commands and erases
 * their env and stdin: the bytes it will erase, the rows locked until the end of the
 * transaction. cid only with JD_CMD_ONE. -1 on error. */
long long jd_cmd_inputs(struct db *db, const char *session_id, enum jd_cmds which,
			const char *cid);
/* Takes bytes off the session's stored_bytes and its key's total (the same amount on
 * both, never more than the session holds: its stored_bytes stays >= 0). Inside the
 * caller's transaction. 0 or -1. */
int jd_session_release(struct db *db, const char *session_id, long long bytes);

/* Deletes a job and everything hanging off it, and takes its bytes off its key's
 * total. Inside the caller's transaction. 1 deleted, 0 not there, -1 error. */
int jd_delete_job(struct db *db, const char *job_id);
/* The one delete-with-accounting behind jd_delete_job and purge's sessions: the row
 * that `select` ("SELECT key_id, stored_bytes ... FOR UPDATE", one ? for id) finds is
 * locked, the statements del[0 .. ndel) run with id as their one parameter, and the
 * row's stored bytes come off its key's total. Inside the caller's transaction. 1
 * deleted, 0 not there (nothing run), -1 error. */
int jd_delete_owned(struct db *db, const char *select, const char *id,
		    const char *const *del, size_t ndel);

/* The error is a property of the data, not of the moment (packet or value too large,
 * bad value): retrying the same statement cannot succeed. */
int jd_permanent_error(unsigned err);

#endif
