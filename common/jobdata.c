/* Job bytes at rest (see jobdata.h). */
#include "jobdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int put_chunks(struct db *db, const char *sql, const char *job_id, const char *name,
		      long long stream, const unsigned char *data, size_t len)
{
	for (size_t off = 0; off < len; off += JD_CHUNK_BYTES) {
		size_t n = len - off < JD_CHUNK_BYTES ? len - off : JD_CHUNK_BYTES;
		/* The second column is the artifact's path or the stream's number. */
		long long rc = db_exec_p(db, sql, db_str(job_id),
					 name ? db_str(name) : db_i64(stream),
					 db_i64((long long)off), db_blob(data + off, n));
		if (rc < 0)
			return -1;
	}
	return 0;
}

int jd_put_output(struct db *db, const char *job_id, int stream, const void *data, size_t len)
{
	return put_chunks(db,
			  "INSERT INTO job_output (job_id, stream, off, data) VALUES (?, ?, ?, ?)",
			  job_id, NULL, stream, data, len);
}

int jd_append_output(struct db *db, const char *id, int stream, long long off,
		     const void *data, size_t len)
{
	if (len == 0)
		return 0;
	if (len > JD_CHUNK_BYTES || off < 0)
		return -1;
	return db_exec_p(db, "INSERT INTO job_output (job_id, stream, off, data) VALUES (?, ?, ?, ?)",
			 db_str(id), db_i64(stream), db_i64(off), db_blob(data, len)) < 0 ? -1 : 0;
}

int jd_put_artifact(struct db *db, const char *job_id, const char *path, const void *data,
		    size_t len)
{
	return put_chunks(db,
			  "INSERT INTO job_artifact_chunks (job_id, path, off, data)"
			  " VALUES (?, ?, ?, ?)",
			  job_id, path, 0, data, len);
}

int jd_read_output(struct db *db, const char *job_id, int stream, long long off,
		   long long limit, unsigned char **buf, size_t *len)
{
	struct db_res *res;
	unsigned char *out;
	size_t n = 0;

	*buf = NULL;
	*len = 0;
	if (off < 0 || limit < 0)
		return -1;
	/* Only the overlapping part of each overlapping chunk leaves the server. */
	res = db_query_p(db,
			 "SELECT SUBSTRING(data, GREATEST(? - off, 0) + 1, ?) AS part"
			 " FROM job_output WHERE job_id = ? AND stream = ? AND off < ? + ?"
			 " AND off + LENGTH(data) > ? ORDER BY off",
			 db_i64(off), db_i64(limit), db_str(job_id), db_i64(stream), db_i64(off),
			 db_i64(limit), db_i64(off));
	if (res == NULL)
		return -1;
	out = malloc((size_t)limit + 1);
	if (out == NULL) {
		db_res_free(res);
		return -1;
	}
	for (size_t i = 0; i < db_res_rows(res) && n < (size_t)limit; i++) {
		size_t c = db_res_l(res, i, "part");
		if (c > (size_t)limit - n)
			c = (size_t)limit - n;
		memcpy(out + n, db_res_s(res, i, "part"), c);
		n += c;
	}
	db_res_free(res);
	*buf = out;
	*len = n;
	return 0;
}

int jd_each_artifact_chunk(struct db *db, const char *job_id, const char *path,
			   int (*fn)(void *arg, const void *data, size_t len), void *arg)
{
	long long off = 0;

	/* One chunk per query: memory stays at one chunk whatever the artifact's size. */
	for (;;) {
		struct db_res *res = db_query_p(db,
						"SELECT off, data FROM job_artifact_chunks"
						" WHERE job_id = ? AND path = ? AND off >= ?"
						" ORDER BY off LIMIT 1",
						db_str(job_id), db_str(path), db_i64(off));
		size_t len;
		int rc;

		if (res == NULL)
			return -1;
		if (db_res_rows(res) == 0) {
			db_res_free(res);
			return 0;
		}
		len = db_res_l(res, 0, "data");
		off = db_res_i(res, 0, "off", 0) + (long long)len;
		rc = len ? fn(arg, db_res_s(res, 0, "data"), len) : 0;
		db_res_free(res);
		if (rc != 0)
			return rc;
		if (len == 0)
			return 0;
	}
}

int jd_add_stored(struct db *db, const char *key_id, long long delta)
{
	if (delta == 0)
		return 0;
	/* The transaction's shard, not one per call: a transaction that charged several
	 * jobs to random shards locked them in random order, and two such (batches,
	 * revocations) deadlocked. */
	return db_exec_p(db,
			 "INSERT INTO key_storage (key_id, shard, bytes) VALUES (?, ?, ?)"
			 " ON DUPLICATE KEY UPDATE bytes = bytes + VALUES(bytes)",
			 db_str(key_id), db_i64(db_tx_salt(db) % JD_SHARDS), db_i64(delta)) < 0
		       ? -1
		       : 0;
}

long long jd_key_stored(struct db *db, const char *key_id)
{
	struct db_res *res = db_query_p(db,
					"SELECT COALESCE(SUM(bytes), 0) AS bytes FROM key_storage"
					" WHERE key_id = ?",
					db_str(key_id));
	long long n;

	if (res == NULL)
		return -1;
	n = db_res_i(res, 0, "bytes", 0);
	db_res_free(res);
	return n < 0 ? 0 : n;
}

/* Every terminal transition settles here, in its own transaction: a job that named a
 * callback_url gets its delivery row (schema 007) in the transaction that ends it, so
 * an ending is never without its webhook, nor a webhook without its ending. Once. */
static int add_callback(struct db *db, const char *job_id)
{
	char delivery[UUID_STR_LEN];

	if (util_uuid7(delivery) < 0)
		return -1;
	return db_exec_p(db,
			 "INSERT INTO job_callbacks (job_id, delivery_id)"
			 " SELECT id, ? FROM jobs WHERE id = ? AND callback_url IS NOT NULL"
			 " ON DUPLICATE KEY UPDATE job_id = job_id",
			 db_str(delivery), db_str(job_id)) < 0
		       ? -1
		       : 0;
}

/* The key and the stored bytes of the one row that `select` (its "SELECT key_id,
 * stored_bytes ... FOR UPDATE", one ? for id) reads, locked for the caller's
 * transaction: 1 found, 0 no such row, -1 error. */
static int owner_bytes(struct db *db, const char *select, const char *id, char key[40],
		       long long *bytes)
{
	struct db_res *res = db_query_p(db, select, db_str(id));

	if (res == NULL)
		return -1;
	if (db_res_rows(res) != 1) {
		db_res_free(res);
		return 0;
	}
	snprintf(key, 40, "%s", db_res_s(res, 0, "key_id"));
	*bytes = db_res_i(res, 0, "stored_bytes", 0);
	db_res_free(res);
	return 1;
}

int jd_settle(struct db *db, const char *job_id, long long kept)
{
	char key[40];
	long long old;

	if (owner_bytes(db, "SELECT key_id, stored_bytes FROM jobs WHERE id = ? FOR UPDATE",
			job_id, key, &old) <= 0)
		return -1;
	/* Sizes and digests are kept; the values go (MariaDB assigns left to right, so
	 * the digest is taken before the value is cleared). */
	if (db_exec_p(db,
		      "UPDATE job_files SET size = LENGTH(content), sha256 = SHA2(content, 256),"
		      " content = '' WHERE job_id = ? AND content <> ''",
		      db_str(job_id)) < 0 ||
	    db_exec_p(db,
		      "UPDATE jobs SET stdin_bytes = LENGTH(stdin),"
		      " stdin_sha256 = SHA2(stdin, 256), stdin = '', env_json = '{}',"
		      " inputs_erased = 1 WHERE id = ? AND inputs_erased = 0",
		      db_str(job_id)) < 0 ||
	    db_exec_p(db, "UPDATE jobs SET stored_bytes = ? WHERE id = ?", db_i64(kept),
		      db_str(job_id)) < 0 ||
	    add_callback(db, job_id) < 0)
		return -1;
	return jd_add_stored(db, key, kept - old);
}

int jd_delete_owned(struct db *db, const char *select, const char *id,
		    const char *const *del, size_t ndel)
{
	char key[40];
	long long bytes;
	int found = owner_bytes(db, select, id, key, &bytes);

	if (found <= 0)
		return found;
	for (size_t i = 0; i < ndel; i++)
		if (db_exec_p(db, del[i], db_str(id)) < 0)
			return -1;
	return jd_add_stored(db, key, -bytes) < 0 ? -1 : 1;
}

int jd_delete_job(struct db *db, const char *job_id)
{
	static const char *const del[] = {
		"DELETE FROM job_output WHERE job_id = ?",
		"DELETE FROM job_artifact_chunks WHERE job_id = ?",
		"DELETE FROM job_artifacts WHERE job_id = ?",
		"DELETE FROM job_results WHERE job_id = ?",
		"DELETE FROM job_files WHERE job_id = ?",
		"DELETE FROM job_events WHERE job_id = ?",
		"DELETE FROM job_callback_attempts WHERE job_id = ?",
		"DELETE FROM job_callbacks WHERE job_id = ?",
		"DELETE FROM jobs WHERE id = ?",
	};

	return jd_delete_owned(db, "SELECT key_id, stored_bytes FROM jobs WHERE id = ? FOR UPDATE",
			       job_id, del, sizeof del / sizeof del[0]);
}

int jd_permanent_error(unsigned err)
{
	switch (err) {
	case 1153: /* ER_NET_PACKET_TOO_LARGE */
	case 1301: /* ER_WARN_ALLOWED_PACKET_OVERFLOWED */
	case 1406: /* ER_DATA_TOO_LONG */
	case 1118: /* ER_TOO_BIG_ROWSIZE */
	case 1366: /* ER_TRUNCATED_WRONG_VALUE_FOR_FIELD */
	case 1264: /* ER_WARN_DATA_OUT_OF_RANGE */
	case 1048: /* ER_BAD_NULL_ERROR */
	case 1114: /* ER_RECORD_FILE_FULL */
	case 1062: /* ER_DUP_ENTRY */
		return 1;
	default:
		return 0;
	}
}

/* One number from a query that yields one row (or none: 0); -1 on error. */
static long long one_count(struct db_res *res, const char *col)
{
	long long n;

	if (res == NULL)
		return -1;
	n = db_res_rows(res) == 1 ? db_res_i(res, 0, col, 0) : 0;
	db_res_free(res);
	return n;
}

int jd_session_release(struct db *db, const char *session_id, long long bytes)
{
	char key[40];
	long long held;

	if (bytes <= 0)
		return bytes < 0 ? -1 : 0;
	if (owner_bytes(db, "SELECT key_id, stored_bytes FROM sessions WHERE id = ? FOR UPDATE",
			session_id, key, &held) <= 0)
		return -1;
	/* A session written before its inputs were counted holds less than them. */
	if (bytes > held)
		bytes = held > 0 ? held : 0;
	if (bytes == 0)
		return 0;
	if (db_exec_p(db, "UPDATE sessions SET stored_bytes = stored_bytes - ? WHERE id = ?",
		      db_i64(bytes), db_str(session_id)) < 0)
		return -1;
	return jd_add_stored(db, key, -bytes);
}

int jd_session_erase(struct db *db, const char *session_id, unsigned parts)
{
	long long env = 0, files = 0;

	if (parts & JD_SESS_ENV) {
		env = one_count(db_query_p(db,
					   "SELECT LENGTH(env_json) AS n FROM sessions WHERE id = ?"
					   " FOR UPDATE",
					   db_str(session_id)),
				"n");
		if (env < 0 || db_exec_p(db, "UPDATE sessions SET env_json = '{}' WHERE id = ?",
					 db_str(session_id)) < 0)
			return -1;
	}
	if (parts & JD_SESS_FILES) {
		files = one_count(db_query_p(db,
					     "SELECT COALESCE(SUM(LENGTH(content)), 0) AS n"
					     " FROM session_files WHERE session_id = ? FOR UPDATE",
					     db_str(session_id)),
				  "n");
		if (files < 0 || db_exec_p(db, "DELETE FROM session_files WHERE session_id = ?",
					   db_str(session_id)) < 0)
			return -1;
	}
	return jd_session_release(db, session_id, env + files);
}

/* The inputs of a session's commands in some statuses (the condition follows). */
#define CMDS_INPUTS                                                                     \
	"SELECT COALESCE(SUM(LENGTH(env_json) + LENGTH(stdin)), 0) AS n FROM session_commands" \
	" WHERE session_id = ? AND"

long long jd_cmd_inputs(struct db *db, const char *session_id, enum jd_cmds which,
			const char *cid)
{
	/* The statuses are the ones the callers' UPDATEs end (sstore.c end_commands and
	 * ss_cmd_finish, close_unclaimed in app/sessions/sessions.c and app/admin/keys.c). */
	switch (which) {
	case JD_CMDS_QUEUED:
	case JD_CMDS_LIVE:
		return one_count(db_query_p(db,
					    which == JD_CMDS_QUEUED
						    ? CMDS_INPUTS " status = 'queued' FOR UPDATE"
						    : CMDS_INPUTS " status IN ('queued', 'running')"
								  " FOR UPDATE",
					    db_str(session_id)),
				 "n");
	case JD_CMD_ONE:
		if (cid == NULL)
			return -1;
		return one_count(db_query_p(db,
					    "SELECT LENGTH(env_json) + LENGTH(stdin) AS n"
					    " FROM session_commands WHERE id = ? AND session_id = ? AND"
					    " status IN ('queued', 'running') FOR UPDATE",
					    db_str(cid), db_str(session_id)),
				 "n");
	}
	return -1;
}

int jd_key_lock(struct db *db, const char *key_id)
{
	long long n = db_exec_p(db, "UPDATE api_keys SET max_running = IF(max_running IS NULL,"
				" -1, -1 - max_running) WHERE id = ?", db_str(key_id));

	if (n <= 0)
		return (int)n; /* an error, or no such key (nothing to lock) */
	return db_exec_p(db, "UPDATE api_keys SET max_running = IF(max_running = -1, NULL,"
			     " -1 - max_running) WHERE id = ?", db_str(key_id)) != 1 ? -1 : 0;
}
