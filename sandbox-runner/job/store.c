/* The runner's side of the job tables: claim, heartbeat, live output, result, lost leases
 * (see store.h). */
#include "store.h"

#include "jobdata.h"
#include "log.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* States travel as their names only here, at the database boundary. */
#define STATE(s) db_str(js_name(s))

static int add_event(struct db *db, const char *id, enum job_state from, enum job_state to,
		     const char *actor, const char *detail)
{
	return db_exec_p(db,
			 "INSERT INTO job_events (job_id, from_state, to_state, actor, detail)"
			 " VALUES (?, ?, ?, ?, ?)",
			 db_str(id), STATE(from), STATE(to), db_str(actor),
			 db_str(detail)) < 0 ? -1 : 0;
}

/* One claim, the body of its transaction (db_tx_step). Jobs over their key's running
 * cap are skipped; the count is exact on one server and on a Galera cluster: the claim
 * writes the key's row (jd_key_lock) before it counts, so two claims of one key serialize
 * on one server (the row lock) and, on two Galera nodes, conflict at certification
 * (a SELECT ... FOR UPDATE is not certified: both would commit, one over the cap): the
 * loser's retry counts the winner's job. rc: 1 claimed, 0 not (taken meanwhile), 2 the
 * key is at its cap. */
struct claim_tx {
	const char *runner_id, *digest, *cand, *key_id;
	long long lease_s, cap;
	int rc;
};

static enum db_tx_end claim_body(struct db *db, void *arg)
{
	struct claim_tx *t = arg;
	struct db_res *res;
	long long n;

	t->rc = 0;
	if (t->cap > 0) {
		if (jd_key_lock(db, t->key_id) < 0)
			return DB_TX_ERROR;
		res = db_query_p(db, "SELECT COUNT(*) FROM jobs WHERE key_id = ? AND state = ?",
				 db_str(t->key_id), STATE(JS_RUNNING));
		if (res == NULL)
			return DB_TX_ERROR;
		n = db_res_int(res, 0, 0, 0);
		db_res_free(res);
		if (n >= t->cap) {
			t->rc = 2;
			return DB_TX_ROLLBACK;
		}
	}
	n = db_exec_p(db,
		      "UPDATE jobs SET state = ?, runner_id = ?,"
		      " started_at = CURRENT_TIMESTAMP(3),"
		      " lease_expires_at = CURRENT_TIMESTAMP(3) + INTERVAL ? SECOND,"
		      " attempt = attempt + 1, profile_digest = ?"
		      " WHERE id = ? AND state = ?",
		      STATE(JS_RUNNING), db_str(t->runner_id), db_i64(t->lease_s),
		      db_str(t->digest), db_str(t->cand), STATE(JS_QUEUED));
	if (n < 0 || (n == 1 && add_event(db, t->cand, JS_QUEUED, JS_RUNNING, t->runner_id,
					  "claimed") < 0))
		return DB_TX_ERROR;
	t->rc = n == 1;
	return DB_TX_COMMIT;
}

/* A claim that kept losing conflicts is a candidate not taken (0), not an error. */
static int claim_one(struct db *db, const char *runner_id, long long lease_s, const char *digest,
		     const char *cand, const char *key_id, long long cap)
{
	struct claim_tx t = { .runner_id = runner_id, .digest = digest, .cand = cand,
			      .key_id = key_id, .lease_s = lease_s, .cap = cap };

	if (db_tx_step(db, "claim", claim_body, &t) < 0)
		return db_retryable(db) ? 0 : -1;
	return t.rc;
}

#define CLAIM_CANDIDATES 8
#define CLAIM_EXCLUDED 16

int store_claim(struct db *db, const char *runner_id, long long lease_s, const char *digest,
		long long default_max_running, char id[UUID_STR_LEN])
{
	char excluded[CLAIM_EXCLUDED][40];
	size_t nex = 0;

	/* Fair across tenants: candidates in (fair_tag, seq) order (see schema 003). Keys
	 * at their running cap are excluded and the candidates read again, a bounded
	 * number of times; ROWS EXAMINED bounds the scan past excluded keys' jobs. */
	for (int round = 0; round < 4; round++) {
		struct strbuf sql = STRBUF_INIT;
		struct db_param p[CLAIM_EXCLUDED + 2];
		size_t np = 0, before = nex;
		struct db_res *res;
		int rc = 0;

		sb_adds(&sql, "SELECT j.id, j.key_id, COALESCE(k.max_running, ?) AS max_running"
			      " FROM jobs j LEFT JOIN api_keys k ON k.id = j.key_id"
			      " WHERE j.state = ?");
		p[np++] = db_i64(default_max_running);
		p[np++] = STATE(JS_QUEUED);
		for (size_t i = 0; i < nex; i++) {
			sb_adds(&sql, i ? ", ?" : " AND j.key_id NOT IN (?");
			p[np++] = db_str(excluded[i]);
		}
		sb_adds(&sql, nex ? ")" : "");
		sb_adds(&sql, " ORDER BY j.fair_tag, j.seq LIMIT 8 ROWS EXAMINED 20000");
		res = sql.failed ? NULL : db_querya(db, sql.buf, p, np);
		sb_release(&sql);
		if (res == NULL)
			return -1;
		for (size_t i = 0; i < db_res_rows(res) && rc == 0; i++) {
			const char *cand = db_res_s(res, i, "id"), *key = db_res_s(res, i, "key_id");
			int skip = 0;

			for (size_t e = 0; e < nex; e++)
				skip |= strcmp(excluded[e], key) == 0;
			if (skip)
				continue;
			rc = claim_one(db, runner_id, lease_s, digest, cand, key,
				       db_res_i(res, i, "max_running", 0));
			if (rc == 1)
				snprintf(id, UUID_STR_LEN, "%s", cand);
			if (rc == 2) {
				if (nex < CLAIM_EXCLUDED)
					snprintf(excluded[nex++], sizeof excluded[0], "%s", key);
				rc = 0;
			}
		}
		db_res_free(res);
		if (rc != 0)
			return rc;
		if (nex == before || nex == CLAIM_EXCLUDED)
			return 0;
	}
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int load_files(struct db *db, struct job *j)
{
	struct db_res *res = db_query_p(db,
					"SELECT path, content, executable FROM job_files"
					" WHERE job_id = ? ORDER BY idx",
					db_str(j->id));

	if (res == NULL)
		return -1;
	j->nfiles = db_res_rows(res);
	j->files = calloc(j->nfiles + 1, sizeof *j->files);
	if (j->files == NULL) {
		db_res_free(res);
		return -1;
	}
	for (size_t i = 0; i < j->nfiles; i++) {
		size_t len = db_res_l(res, i, "content");
		const char *path = db_res_s(res, i, "path");

		j->files[i].path = path ? strdup(path) : NULL;
		j->files[i].data = malloc(len + 1);
		if (j->files[i].path == NULL || j->files[i].data == NULL) {
			db_res_free(res);
			return -1;
		}
		memcpy(j->files[i].data, db_res_s(res, i, "content"), len);
		j->files[i].len = len;
		j->files[i].executable = db_res_i(res, i, "executable", 0) != 0;
	}
	db_res_free(res);
	return 0;
}

int store_load(struct db *db, const char *id, struct job *j)
{
	struct db_res *res;
	const char *argv, *env, *in, *cwd;

	memset(j, 0, sizeof *j);
	snprintf(j->id, sizeof j->id, "%s", id);
	res = db_query_p(db,
			 "SELECT key_id, command, argv_json, env_json, stdin, cwd, artifacts_dir, network,"
			 " profile_name, wall_seconds, cpu_seconds, memory_mb, pids, output_bytes, disk_mb,"
			 " compile_argv_json FROM jobs WHERE id = ?",
			 db_str(id));
	if (res == NULL)
		return -1;
	if (db_res_rows(res) != 1) {
		db_res_free(res);
		return -1;
	}
	snprintf(j->key_id, sizeof j->key_id, "%s",
		 db_res_s(res, 0, "key_id") ? db_res_s(res, 0, "key_id") : "");
	j->command = dup_or_null(db_res_s(res, 0, "command"));
	argv = db_res_s(res, 0, "argv_json");
	env = db_res_s(res, 0, "env_json");
	j->argv = argv ? json_loads(argv, 0, NULL) : NULL;
	if (db_res_s(res, 0, "compile_argv_json") &&
	    (j->compile_argv = json_loads(db_res_s(res, 0, "compile_argv_json"), 0, NULL)) == NULL) {
		db_res_free(res);
		return -1;
	}
	j->env = env ? json_loads(env, 0, NULL) : json_object();
	in = db_res_s(res, 0, "stdin");
	j->stdin_len = db_res_l(res, 0, "stdin");
	j->stdin_buf = malloc(j->stdin_len + 1);
	if (j->stdin_buf)
		memcpy(j->stdin_buf, in ? in : "", j->stdin_len);
	cwd = db_res_s(res, 0, "cwd");
	j->cwd = strdup(cwd ? cwd : "");
	j->artifacts_dir = dup_or_null(db_res_s(res, 0, "artifacts_dir"));
	j->network = db_res_i(res, 0, "network", 0) != 0;
	j->profile = strdup(db_res_s(res, 0, "profile_name") ? db_res_s(res, 0, "profile_name")
							      : "default");
	/* each limit's column is named like the limit */
	for (int i = 0; i < LIM_COUNT; i++)
		j->limits[i] = db_res_i(res, 0, limit_specs[i].name, 0);
	/* the env values are secrets: wipe the copy in the result set */
	if (env)
		explicit_bzero((char *)env, strlen(env));
	db_res_free(res);
	if (j->env == NULL || j->stdin_buf == NULL || j->cwd == NULL || j->profile == NULL ||
	    (argv && j->argv == NULL) || (j->command == NULL && j->argv == NULL))
		return -1;
	return load_files(db, j);
}

void store_job_free(struct job *j)
{
	for (size_t i = 0; i < j->nfiles; i++) {
		free(j->files[i].path);
		free(j->files[i].data);
	}
	free(j->files);
	free(j->command);
	json_decref(j->argv);
	json_decref(j->compile_argv);
	json_decref(j->env);
	free(j->stdin_buf);
	free(j->cwd);
	free(j->artifacts_dir);
	free(j->profile);
	memset(j, 0, sizeof *j);
}

int store_set_profile(struct db *db, const char *id, const char *runner_id,
		      const char *digest)
{
	return db_tx_exec_p(db, "set_profile",
			    "UPDATE jobs SET profile_digest = ? WHERE id = ? AND state = ?"
			    " AND runner_id = ?",
			    db_str(digest), db_str(id), STATE(JS_RUNNING), db_str(runner_id)) < 0
		       ? -1
		       : 0;
}

int store_heartbeat(struct db *db, const char *id, const char *runner_id, long long lease_s,
		    int *cancel)
{
	struct db_res *res;
	long long n = db_exec_p(db,
				"UPDATE jobs SET lease_expires_at = CURRENT_TIMESTAMP(3) +"
				" INTERVAL ? SECOND WHERE id = ? AND state = ? AND runner_id = ?",
				db_i64(lease_s), db_str(id), STATE(JS_RUNNING), db_str(runner_id));
	const char *owner;

	if (n < 0)
		return -1;
	res = db_query_p(db, "SELECT cancel_requested, state, runner_id FROM jobs WHERE id = ?",
			 db_str(id));
	if (res == NULL)
		return -1;
	*cancel = db_res_rows(res) == 1 && db_res_i(res, 0, "cancel_requested", 0) != 0;
	owner = db_res_s(res, 0, "runner_id");
	n = db_res_rows(res) == 1 && js_parse(db_res_s(res, 0, "state")) == JS_RUNNING && owner &&
	    strcmp(owner, runner_id) == 0;
	db_res_free(res);
	return n ? 0 : 1;
}

/* The part of a stream the result transaction writes: bytes [at, at + n) at p, of a
 * stream of `total` bytes. */
struct tail {
	const unsigned char *p;
	size_t n;
	long long at, total;
};

/* Chunks of at most JD_CHUNK_BYTES from offset t->at. */
static int put_tail(struct db *db, const char *id, int stream, const struct tail *t)
{
	for (size_t done = 0; done < t->n; done += JD_CHUNK_BYTES) {
		size_t n = t->n - done < JD_CHUNK_BYTES ? t->n - done : JD_CHUNK_BYTES;
		if (jd_append_output(db, id, stream, t->at + (long long)done, t->p + done, n) < 0)
			return -1;
	}
	return 0;
}

static int insert_result(struct db *db, const char *id, const struct job_result *r,
			 const struct tail *out, const struct tail *err)
{
	char *diag = json_dumps(r->diagnostics, JSON_COMPACT);
	char *fail = r->failure ? json_dumps(r->failure, JSON_COMPACT) : NULL;
	long long n;

	n = db_exec_p(db,
		      "INSERT INTO job_results (job_id, exit_code, term_signal, stdout_bytes,"
		      " stderr_bytes, stdout_truncated, stderr_truncated, diagnostics_json, wall_ms,"
		      " cpu_ms, memory_peak_bytes, failure_json)"
		      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		      db_str(id), db_null_i64(r->exit_code, r->exit_code < 0),
		      db_null_i64(r->signal, r->signal == 0), db_i64(out->total),
		      db_i64(err->total), db_i64(r->out_trunc), db_i64(r->err_trunc),
		      db_str(diag ? diag : "[]"), db_null_i64(r->wall_ms, r->wall_ms < 0),
		      db_null_i64(r->cpu_ms, r->cpu_ms < 0),
		      db_null_i64(r->mem_peak, r->mem_peak < 0), db_str(fail));
	free(diag);
	free(fail);
	if (n >= 0)
		n = put_tail(db, id, JD_STDOUT, out);
	if (n >= 0)
		n = put_tail(db, id, JD_STDERR, err);
	for (size_t i = 0; n >= 0 && i < r->nartifacts; i++) {
		n = db_exec_p(db,
			      "INSERT INTO job_artifacts (job_id, path, size, sha256)"
			      " VALUES (?, ?, ?, ?)",
			      db_str(id), db_str(r->artifacts[i].path),
			      db_i64((long long)r->artifacts[i].size), db_str(r->artifacts[i].sha256));
		if (n >= 0)
			n = jd_put_artifact(db, id, r->artifacts[i].path, r->artifacts[i].data,
					    r->artifacts[i].size);
	}
	return n < 0 ? -1 : 0;
}

static long long result_bytes(const struct job_result *r, const struct tail *out,
			      const struct tail *err)
{
	long long n = out->total + err->total;

	for (size_t i = 0; i < r->nartifacts; i++)
		n += (long long)r->artifacts[i].size;
	return n;
}

static const char *db_cause(unsigned err)
{
	switch (err) {
	case 1153:
	case 1301: return "a value exceeds the server's max_allowed_packet";
	case 1406: return "a value is too long for its column";
	case 1118: return "the row is too large";
	case 1366: return "a value is not valid for its column";
	case 1264: return "a value is out of range";
	case 1114: return "the table is full";
	default: return "the database refused the result";
	}
}

/* running -> a terminal state, while the job is still this runner's, with the
 * streams' final lengths: rows changed. */
static long long set_terminal(struct db *db, const char *id, const char *runner_id,
			      enum job_state to, long long out_total, long long err_total)
{
	return db_exec_p(db,
			 "UPDATE jobs SET state = ?, finished_at = CURRENT_TIMESTAMP(3),"
			 " lease_expires_at = NULL, stdout_live_bytes = ?, stderr_live_bytes = ?"
			 " WHERE id = ? AND state = ? AND runner_id = ?",
			 STATE(to), db_i64(out_total), db_i64(err_total), db_str(id),
			 STATE(JS_RUNNING), db_str(runner_id));
}

/* The stored length of both streams of a job, its row locked (inside a
 * transaction): 0, 1 (no such job), -1. */
static int live_lengths(struct db *db, const char *id, long long *out, long long *err)
{
	struct db_res *res = db_query_p(db,
					"SELECT stdout_live_bytes, stderr_live_bytes FROM jobs"
					" WHERE id = ? FOR UPDATE",
					db_str(id));
	int rc;

	if (res == NULL)
		return -1;
	rc = db_res_rows(res) == 1 ? 0 : 1;
	*out = rc == 0 ? db_res_i(res, 0, "stdout_live_bytes", 0) : 0;
	*err = rc == 0 ? db_res_i(res, 0, "stderr_live_bytes", 0) : 0;
	db_res_free(res);
	return rc;
}

long long store_max_packet(struct db *db)
{
	struct db_res *res = db_querya(db, "SELECT @@max_allowed_packet", NULL, 0);
	long long v;

	if (res == NULL)
		return -1;
	v = db_res_int(res, 0, 0, 0);
	db_res_free(res);
	return v;
}

/* One chunk, the body of its transaction (db_tx_step): n is what the guarded UPDATE
 * changed (1: the chunk is written with it; 0: not ours, or the stored length moved). */
struct append_tx {
	const struct job *j;
	const char *runner_id;
	int stream;
	long long off;
	const void *data;
	size_t len;
	long long n;
};

static enum db_tx_end append_body(struct db *db, void *arg)
{
	/* Two fixed texts: the column is never built from a value. */
	static const char *const bump[] = {
		"UPDATE jobs SET stdout_live_bytes = stdout_live_bytes + ?,"
		" stored_bytes = stored_bytes + ? WHERE id = ? AND state = ? AND runner_id = ?"
		" AND stdout_live_bytes = ?",
		"UPDATE jobs SET stderr_live_bytes = stderr_live_bytes + ?,"
		" stored_bytes = stored_bytes + ? WHERE id = ? AND state = ? AND runner_id = ?"
		" AND stderr_live_bytes = ?",
	};
	struct append_tx *t = arg;

	t->n = db_exec_p(db, bump[t->stream - 1], db_i64((long long)t->len),
			 db_i64((long long)t->len), db_str(t->j->id), STATE(JS_RUNNING),
			 db_str(t->runner_id), db_i64(t->off));
	if (t->n < 0)
		return DB_TX_ERROR;
	if (t->n != 1)
		return DB_TX_ROLLBACK;
	if (jd_append_output(db, t->j->id, t->stream, t->off, t->data, t->len) < 0 ||
	    jd_add_stored(db, t->j->key_id, (long long)t->len) < 0)
		return DB_TX_ERROR;
	return DB_TX_COMMIT;
}

int store_append(struct db *db, const struct job *j, const char *runner_id, int stream,
		 long long off, const void *data, size_t len, long long *stored)
{
	struct append_tx t = { j, runner_id, stream, off, data, len, 0 };
	struct db_res *res;
	int mine;

	*stored = off;
	if (len == 0 || len > JD_CHUNK_BYTES || (stream != JD_STDOUT && stream != JD_STDERR))
		return -1;
	if (db_tx_step(db, "append", append_body, &t) < 0)
		return -1; /* a COMMIT without an answer, committed or not: the next call's UPDATE tells */
	if (t.n == 1) {
		*stored = off + (long long)len;
		return 0;
	}
	/* Not ours, or the stored length moved (a COMMIT we did not hear back from). */
	res = db_query_p(db,
			 "SELECT state, runner_id, stdout_live_bytes, stderr_live_bytes FROM jobs"
			 " WHERE id = ?",
			 db_str(j->id));
	if (res == NULL)
		return -1;
	mine = db_res_rows(res) == 1 && js_parse(db_res_s(res, 0, "state")) == JS_RUNNING &&
	       db_res_s(res, 0, "runner_id") && strcmp(db_res_s(res, 0, "runner_id"), runner_id) == 0;
	if (mine)
		*stored = db_res_i(res, 0, stream == JD_STDOUT ? "stdout_live_bytes"
							       : "stderr_live_bytes", 0);
	db_res_free(res);
	return mine ? 2 : 1;
}

/* The small result of a job the service failed: one diagnostic and failure (the
 * same fields as the supervisor's, launch_failure_json in launch/launch.c). */
static int insert_failure(struct db *db, const char *id, int exit_code, const char *diagnostic,
			  enum job_stage stage, const char *instance, const char *runtime,
			  const char *cleanup, const char *error, long long out_bytes,
			  long long err_bytes)
{
	json_t *d = json_pack("[s]", diagnostic);
	json_t *f = json_pack("{s:s, s:s, s:s?, s:s, s:n, s:s}", "stage", js_stage_name(stage),
			      "instance_status", instance, "runtime_id", runtime,
			      "cleanup_status", cleanup, "cleanup_error", "error", error);
	char *dj = d ? json_dumps(d, JSON_COMPACT) : NULL;
	char *fj = f ? json_dumps(f, JSON_COMPACT) : NULL;
	long long n = -1;

	if (dj && fj)
		n = db_exec_p(db,
			      "INSERT INTO job_results (job_id, exit_code, stdout_bytes, stderr_bytes,"
			      " diagnostics_json, failure_json) VALUES (?, ?, ?, ?, ?, ?)",
			      db_str(id), db_i64(exit_code), db_i64(out_bytes), db_i64(err_bytes),
			      db_str(dj), db_str(fj));
	free(dj);
	free(fj);
	json_decref(d);
	json_decref(f);
	return n < 0 ? -1 : 0;
}

/* The small error result, the body of its transaction (db_tx_step). rc: 0 stored, 1
 * not ours any more, -1 error. */
struct unstorable_tx {
	const char *id, *runner_id, *diag, *error;
	int rc;
};

static enum db_tx_end unstorable_body(struct db *db, void *arg)
{
	struct unstorable_tx *t = arg;
	const struct js_outcome_row *row = js_outcome(JO_UNSTORABLE);
	long long n, out = 0, errb = 0;

	t->rc = -1;
	n = live_lengths(db, t->id, &out, &errb);
	if (n == 0)
		n = set_terminal(db, t->id, t->runner_id, row->state, out, errb);
	else if (n == 1)
		n = 0;
	if (n == 0) {
		t->rc = 1;
		return DB_TX_ROLLBACK;
	}
	if (n < 0 ||
	    insert_failure(db, t->id, row->code, t->diag, STAGE_RESULT_STORE, JS_INSTANCE_EXITED,
			   t->runner_id, JS_CLEANUP_COMPLETED, t->error, out, errb) < 0 ||
	    jd_settle(db, t->id, out + errb) < 0 ||
	    add_event(db, t->id, JS_RUNNING, row->state, t->runner_id, "result not storable") < 0)
		return DB_TX_ERROR;
	t->rc = 0;
	return DB_TX_COMMIT;
}

/* A result the database refuses for what it is (not for the moment) would be refused
 * on every retry: the job ends `error` 125 with a small result naming the cause. The
 * output stored while it ran stays (as for a lost job): the result counts it. */
static int finish_unstorable(struct db *db, const char *id, const char *runner_id,
			     unsigned err)
{
	const struct js_outcome_row *row = js_outcome(JO_UNSTORABLE);
	char diag[256], error[160];
	struct unstorable_tx t = { id, runner_id, diag, error, -1 };

	snprintf(diag, sizeof diag, "%s: %s (database error %u)", row->diagnostic, db_cause(err),
		 err);
	snprintf(error, sizeof error, "%s (database error %u)", db_cause(err), err);
	return db_tx_step(db, "finish_unstorable", unstorable_body, &t) < 0 ? -1 : t.rc;
}

/* The largest value one statement of the result carries (a chunk at most). */
static long long largest_piece(const struct job_result *r)
{
	size_t m = r->out_len > r->err_len ? r->out_len : r->err_len;

	for (size_t i = 0; i < r->nartifacts; i++)
		if (r->artifacts[i].size > m)
			m = r->artifacts[i].size;
	return (long long)(m > JD_CHUNK_BYTES ? JD_CHUNK_BYTES : m);
}

/* A supervisor stores one result: the permanent error seen on an earlier attempt (the
 * connection may have died with it, as for a packet over max_allowed_packet) makes the
 * next attempt, on a new connection, store the small error result directly. */
static char unstorable_job[UUID_STR_LEN];
static unsigned unstorable_err;

/* What the result transaction writes of a stream the supervisor holds from `off`
 * (p, len), `stored` bytes of it being stored: the rest, no byte twice, no gap. 1 when
 * stored is outside [off, off + len] (log_mismatch says so, after the transaction). */
static int plan_tail(long long stored, const unsigned char *p, size_t len, long long off,
		     struct tail *t)
{
	if (stored >= off && stored <= off + (long long)len) {
		t->p = p + (stored - off);
		t->n = len - (size_t)(stored - off);
		t->at = stored;
		t->total = off + (long long)len;
		return 0;
	}
	/* Only this supervisor appends to its job's streams: this is a bug or a hand
	 * edit. What is stored stays consistent with its count. */
	t->p = p;
	t->n = 0;
	t->at = stored;
	t->total = stored;
	return 1;
}

static void log_mismatch(const char *id, const char *stream, long long stored, long long off)
{
	char a[24], b[24];

	snprintf(a, sizeof a, "%lld", stored);
	snprintf(b, sizeof b, "%lld", off);
	log_kv("error", "output_mismatch", "job", id, "stream", stream, "stored", a, "expected", b,
	       (char *)NULL);
}

/* result.compile beside the job's row (schema 008); nothing without a compile step. */
static int store_compile(struct db *db, const char *id, const struct job_result *r)
{
	char *c;
	long long rc;

	if (r->compile == NULL)
		return 0;
	if ((c = json_dumps(r->compile, JSON_COMPACT)) == NULL)
		return -1;
	rc = db_exec_p(db, "UPDATE jobs SET compile_result_json = ? WHERE id = ?", db_str(c),
		       db_str(id));
	free(c);
	return rc < 0 ? -1 : 0;
}

/* A result, the body of its transaction (db_tx_step). rc: 0 the body asked to commit,
 * 1 not ours any more, -1 a write failed (is the result storable?), -2 the read of the
 * stored lengths failed. so/se: what the last run read stored of
 * each stream; bad_out/bad_err: it was not what the supervisor holds (log_mismatch). */
struct finish_tx {
	const char *id, *runner_id;
	const struct job_result *r;
	long long so, se;
	int bad_out, bad_err, rc;
};

static enum db_tx_end finish_body(struct db *db, void *arg)
{
	struct finish_tx *t = arg;
	const struct job_result *r = t->r;
	struct tail out, errt;
	long long n;

	t->rc = -1;
	t->so = r->out_off, t->se = r->err_off;
	t->bad_out = t->bad_err = 0;
	/* After live flushes, what is stored is read under the row lock: a chunk whose
	 * COMMIT answer was lost is not written twice. A job that never flushed (most
	 * finish within 50 ms) skips the read. */
	n = r->live ? live_lengths(db, t->id, &t->so, &t->se) : 0;
	if (n != 0) {
		t->rc = n < 0 ? -2 : 1;
		return n < 0 ? DB_TX_ERROR : DB_TX_ROLLBACK;
	}
	t->bad_out = plan_tail(t->so, r->out, r->out_len, r->out_off, &out);
	t->bad_err = plan_tail(t->se, r->err, r->err_len, r->err_off, &errt);
	n = set_terminal(db, t->id, t->runner_id, r->state, out.total, errt.total);
	if (n == 0) {
		t->rc = 1;
		return DB_TX_ROLLBACK;
	}
	if (n < 0 || insert_result(db, t->id, r, &out, &errt) < 0 ||
	    jd_settle(db, t->id, result_bytes(r, &out, &errt)) < 0 ||
	    store_compile(db, t->id, r) < 0 ||
	    add_event(db, t->id, JS_RUNNING, r->state, t->runner_id, "finished") < 0)
		return DB_TX_ERROR;
	t->rc = 0;
	return DB_TX_COMMIT;
}

int store_finish(struct db *db, const char *id, const char *runner_id,
		 const struct job_result *r)
{
	struct finish_tx t = { .id = id, .runner_id = runner_id, .r = r, .rc = -1 };
	unsigned err;
	int done;

	if (strcmp(unstorable_job, id) == 0)
		return finish_unstorable(db, id, runner_id, unstorable_err);
	/* A statement over the server's max_allowed_packet makes the server drop the
	 * connection, which looks like an outage from here: check the size first. */
	if (largest_piece(r) > 32768) {
		long long have = store_max_packet(db), need = largest_piece(r) + JD_PACKET_OVERHEAD;
		if (have < 0)
			return -1;
		if (have < need) {
			snprintf(unstorable_job, sizeof unstorable_job, "%s", id);
			unstorable_err = 1153;
			log_kv("error", "result_unstorable", "job", id, "errno", "1153", "reason",
			       "a chunk exceeds the server's max_allowed_packet", "retry", "no",
			       (char *)NULL);
			return finish_unstorable(db, id, runner_id, 1153);
		}
	}
	done = db_tx_step(db, "finish", finish_body, &t) == 0;
	if (t.bad_out)
		log_mismatch(id, "stdout", t.so, r->out_off);
	if (t.bad_err)
		log_mismatch(id, "stderr", t.se, r->err_off);
	if (done)
		return t.rc;
	/* A COMMIT that failed (its outcome unknown) or the read: retry. */
	if (t.rc != -1)
		return -1;
	err = db_errno(db);
	if (!jd_permanent_error(err))
		return -1;
	{
		char code[16];
		snprintf(code, sizeof code, "%u", err);
		log_kv("error", "result_unstorable", "job", id, "errno", code, "retry", "no",
		       (char *)NULL);
	}
	snprintf(unstorable_job, sizeof unstorable_job, "%s", id);
	unstorable_err = err;
	return db_conn_lost(db) ? -1 : finish_unstorable(db, id, runner_id, err);
}

struct db_res *store_expired(struct db *db, long long live_s)
{
	return db_query_p(db,
			  "SELECT id, runner_id, SUBSTRING_INDEX(runner_id, '/', 1) AS host,"
			  " SUBSTRING_INDEX(runner_id, '/', 1) IN (SELECT host FROM runner_hosts"
			  " WHERE seen_at >= CURRENT_TIMESTAMP(3) - INTERVAL ? SECOND) AS host_live"
			  " FROM jobs WHERE state = ? AND lease_expires_at < CURRENT_TIMESTAMP(3)"
			  " LIMIT 50",
			  db_i64(live_s), STATE(JS_RUNNING));
}

/* A lost job, the body of its transaction (db_tx_step): rc 1 marked, 0 no longer so. */
struct lost_tx {
	const char *id, *runner_id;
	int rc;
};

static enum db_tx_end lost_body(struct db *db, void *arg)
{
	struct lost_tx *t = arg;
	const struct js_outcome_row *row = js_outcome(JO_LOST);
	long long n, out = 0, err = 0;

	t->rc = 0;
	n = db_exec_p(db,
		      "UPDATE jobs SET state = ?, finished_at = CURRENT_TIMESTAMP(3),"
		      " lease_expires_at = NULL WHERE id = ? AND state = ?"
		      " AND lease_expires_at < CURRENT_TIMESTAMP(3)",
		      STATE(row->state), db_str(t->id), STATE(JS_RUNNING));
	if (n == 0)
		return DB_TX_ROLLBACK;
	/* The row is locked now: no chunk can follow the lengths read. */
	if (n != 1 || live_lengths(db, t->id, &out, &err) != 0 ||
	    insert_failure(db, t->id, row->code, row->diagnostic, STAGE_EXECUTION,
			   JS_INSTANCE_UNKNOWN, t->runner_id, JS_CLEANUP_UNKNOWN, "lease expired",
			   out, err) < 0 ||
	    jd_settle(db, t->id, out + err) < 0 ||
	    add_event(db, t->id, JS_RUNNING, row->state, "lease-recovery", "lease expired") < 0)
		return DB_TX_ERROR;
	t->rc = 1;
	return DB_TX_COMMIT;
}

int store_mark_lost(struct db *db, const char *id, const char *runner_id)
{
	struct lost_tx t = { id, runner_id, 0 };

	return db_tx_step(db, "mark_lost", lost_body, &t) < 0 ? -1 : t.rc;
}

int store_state(struct db *db, const char *id, enum job_state *state)
{
	struct db_res *res = db_query_p(db, "SELECT state FROM jobs WHERE id = ?", db_str(id));
	int rc;

	if (res == NULL || db_res_rows(res) != 1) {
		db_res_free(res);
		return -1;
	}
	rc = js_parse(db_res_s(res, 0, "state"));
	db_res_free(res);
	if (rc < 0)
		return -1;
	*state = (enum job_state)rc;
	return 0;
}

/* A connection takes the server's max_allowed_packet when it is opened: one opened
 * before the operator lowered it would store what a fresh one is refused (the
 * result must meet the server's setting as it is when the job starts, as with a
 * launched supervisor). One round trip; 0 also when the connection is gone. */
int store_db_fresh(struct db *db)
{
	struct db_res *res = db_querya(db,
				       "SELECT @@GLOBAL.max_allowed_packet = @@SESSION.max_allowed_packet",
				       NULL, 0);
	int same;

	if (res == NULL)
		return 0;
	same = db_res_int(res, 0, 0, 0) == 1;
	db_res_free(res);
	return same;
}
