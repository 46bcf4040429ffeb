/* The runner's side of the session tables (see sstore.h). */
#include "sstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobdata.h"
#include "jobstate.h"
#include "log.h"
#include "sreq.h"

#define LIVE "status IN ('starting', 'ready')"
#define CANCELLED_CODE 137
#define LOST_CODE 125

/* ---- shared by the dispatcher's and the supervisor's endings */

static char *dumps(const json_t *j)
{
	return j ? json_dumps(j, JSON_COMPACT) : NULL;
}

/* The session's unfinished commands end with it: status, exit code, one diagnostic;
 * their env and stdin erased and released. After the session's own guarded UPDATE. */
static int end_commands(struct db *db, const char *id, const char *status, int code,
			const char *diagnostic)
{
	json_t *d = json_pack("[s]", diagnostic);
	char *dj = dumps(d);
	long long n = -1, held = jd_cmd_inputs(db, id, JD_CMDS_LIVE, NULL);

	if (dj && held >= 0)
		n = db_exec_p(db,
			      "UPDATE session_commands SET status = ?, exit_code = ?, stdin_open = 0,"
			      " diagnostics_json = ?, finished_at = CURRENT_TIMESTAMP(3),"
			      " env_json = '{}', stdin = ''"
			      " WHERE session_id = ? AND status IN ('queued', 'running')",
			      db_str(status), db_i64(code), db_str(dj), db_str(id));
	free(dj);
	json_decref(d);
	return n < 0 || jd_session_release(db, id, held) < 0 ? -1 : 0;
}

/* Nobody will answer the session's requests any more, taken or not: 409
 * session_ended, their payloads erased (sreq.h). */
static int end_requests(struct db *db, const char *id, const char *status)
{
	char msg[96];
	json_t *r;
	char *rj;
	int rc = -1;

	snprintf(msg, sizeof msg, "the session has ended (%s)", status);
	r = json_pack("{s:s, s:s}", "error", "session_ended", "message", msg);
	rj = dumps(r);
	if (rj)
		rc = sreq_fail_session(db, id, 1, 409, rj);
	free(rj);
	json_decref(r);
	return rc;
}

/* ---- dispatcher */

int ss_candidates(struct db *db, char ids[][UUID_STR_LEN], int max)
{
	struct db_res *res = db_query_p(db,
					"SELECT id FROM sessions WHERE status = 'starting' AND"
					" runner_id IS NULL ORDER BY seq LIMIT ?",
					db_i64(max));
	int n = 0;

	if (res == NULL)
		return -1;
	for (size_t i = 0; i < db_res_rows(res) && n < max; i++) {
		const char *id = db_res_str(res, i, 0);
		if (id && util_is_uuid(id))
			snprintf(ids[n++], UUID_STR_LEN, "%s", id);
	}
	db_res_free(res);
	return n;
}

int ss_claim(struct db *db, const char *id, const char *runner_id, const char *host,
	     long long lease_s)
{
	long long n = db_tx_exec_p(db, "session_claim",
				   "UPDATE sessions SET runner_id = ?, runner_host = ?,"
				   " lease_expires_at = CURRENT_TIMESTAMP(3) + INTERVAL ? SECOND"
				   " WHERE id = ? AND runner_id IS NULL AND status = 'starting'",
				   db_str(runner_id), db_str(host), db_i64(lease_s), db_str(id));

	return n < 0 ? -1 : n == 1;
}

/* A session's end: its guarded UPDATE (sql, p), then, when it changed the row, its
 * files and env erased (erase), its unfinished commands ended (cmd_status, code, diag)
 * and its requests failed (req_status). The body of its transaction (db_tx_step); n
 * is what the UPDATE changed (0: the session was not in the state it wants). */
struct end_tx {
	const char *id, *sql;
	const struct db_param *p;
	size_t np;
	unsigned erase;
	const char *cmd_status;
	int code;
	const char *diag, *req_status;
	long long n;
};

static enum db_tx_end end_body(struct db *db, void *arg)
{
	struct end_tx *t = arg;

	t->n = db_execa(db, t->sql, t->p, t->np);
	if (t->n == 0)
		return DB_TX_ROLLBACK;
	if (t->n != 1 || jd_session_erase(db, t->id, t->erase) < 0 ||
	    end_commands(db, t->id, t->cmd_status, t->code, t->diag) < 0 ||
	    end_requests(db, t->id, t->req_status) < 0)
		return DB_TX_ERROR;
	return DB_TX_COMMIT;
}

/* t's transaction (db_tx_step under step): what its UPDATE changed, or -1. */
static long long end_session(struct db *db, const char *step, struct end_tx *t)
{
	return db_tx_step(db, step, end_body, t) < 0 ? -1 : t->n;
}

int ss_mark_lost(struct db *db, const char *id, const char *runner_id, const char *error)
{
	json_t *f = json_pack("{s:s, s:s, s:s, s:s?, s:n, s:s}", "stage", "execution",
			      "instance_status", JS_INSTANCE_UNKNOWN, "cleanup_status",
			      JS_CLEANUP_UNKNOWN, "runtime_id", runner_id, "cleanup_error", "error",
			      error);
	char *fj = dumps(f);
	const struct db_param p[] = { db_str(fj), db_str(id), db_str(runner_id) };
	struct end_tx t = {
		.id = id, .p = p, .np = 3, .erase = JD_SESS_ENV, .cmd_status = "lost",
		.code = LOST_CODE, .diag = "the session's runner was lost", .req_status = "lost",
		.sql = "UPDATE sessions SET status = 'lost', end_reason = 'runner lost',"
		       " failure_json = ?, cleanup_status = 'unknown',"
		       " ended_at = CURRENT_TIMESTAMP(3), lease_expires_at = NULL"
		       " WHERE id = ? AND " LIVE " AND runner_id <=> ?",
	};
	long long n;

	json_decref(f);
	if (fj == NULL)
		return -1;
	n = end_session(db, "session_lost", &t);
	free(fj);
	return n < 0 ? -1 : (int)n;
}

struct db_res *ss_expired(struct db *db)
{
	return db_query_p(db,
			  "SELECT id, runner_id, runner_host, runner_host IN (SELECT host FROM"
			  " runner_hosts WHERE seen_at >= CURRENT_TIMESTAMP(3) - INTERVAL ? SECOND)"
			  " AS host_live FROM sessions WHERE " LIVE
			  " AND lease_expires_at < CURRENT_TIMESTAMP(3) LIMIT ?",
			  db_i64(SS_HOST_LIVE_SECONDS), db_i64(50));
}

int ss_fail_unclaimed(struct db *db, long long timeout_s)
{
	char err[120];
	json_t *f;
	char *fj;
	struct db_res *res;
	int count = 0;

	snprintf(err, sizeof err, "no runner host took the session within %lld s", timeout_s);
	f = json_pack("{s:s, s:s, s:s, s:n, s:n, s:s}", "stage", "create", "instance_status",
		      JS_INSTANCE_NOT_CREATED, "cleanup_status", JS_CLEANUP_NOT_STARTED,
		      "runtime_id", "cleanup_error", "error", err);
	fj = dumps(f);
	json_decref(f);
	res = db_query_p(db,
			 "SELECT id FROM sessions WHERE status = 'starting' AND runner_id IS NULL"
			 " AND created_at < CURRENT_TIMESTAMP(3) - INTERVAL ? SECOND LIMIT 50",
			 db_i64(timeout_s));
	if (res == NULL || fj == NULL) {
		db_res_free(res);
		free(fj);
		return -1;
	}
	for (size_t i = 0; i < db_res_rows(res); i++) {
		const char *id = db_res_str(res, i, 0);
		const struct db_param p[] = { db_str(err), db_str(fj), db_str(id) };
		struct end_tx t = {
			.id = id, .p = p, .np = 3, .erase = JD_SESS_ENV | JD_SESS_FILES,
			.cmd_status = "cancelled", .code = CANCELLED_CODE,
			.diag = "session ended: it never started", .req_status = "failed",
			.sql = "UPDATE sessions SET status = 'failed', end_reason = ?,"
			       " failure_json = ?, cleanup_status = 'not_started',"
			       " ended_at = CURRENT_TIMESTAMP(3)"
			       " WHERE id = ? AND status = 'starting' AND runner_id IS NULL",
		};
		long long n = end_session(db, "session_fail_unclaimed", &t);

		if (n < 0 && db_conn_lost(db))
			break;
		count += n == 1;
	}
	db_res_free(res);
	free(fj);
	return count;
}

int ss_host_beat(struct db *db, const char *host, long long slots, long long max_sessions)
{
	return db_exec_p(db,
			 "INSERT INTO runner_hosts (host, slots, max_sessions, seen_at)"
			 " VALUES (?, ?, ?, CURRENT_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE"
			 " slots = VALUES(slots), max_sessions = VALUES(max_sessions),"
			 " seen_at = VALUES(seen_at)",
			 db_str(host), db_i64(slots), db_i64(max_sessions)) < 0
		       ? -1
		       : 0;
}

struct db_res *ss_host_sessions(struct db *db, const char *host)
{
	return db_query_p(db,
			  "SELECT id, runner_id FROM sessions WHERE runner_host = ? AND " LIVE,
			  db_str(host));
}

/* ---- supervisor */

int ss_load(struct db *db, const char *id, const char *runner_id, struct ss_session *s)
{
	struct db_res *res = db_query_p(db,
					"SELECT id, key_id, status, memory_mb, pids, cpu_seconds,"
					" disk_mb, idle_seconds, max_seconds, network, env_json,"
					" profile_name FROM sessions WHERE id = ? AND runner_id = ?",
					db_str(id), db_str(runner_id));
	const char *env;

	memset(s, 0, sizeof *s);
	if (res == NULL)
		return -1;
	if (db_res_rows(res) != 1 || strcmp(db_res_s(res, 0, "status"), "starting") != 0) {
		db_res_free(res);
		return 1;
	}
	snprintf(s->id, sizeof s->id, "%s", db_res_s(res, 0, "id"));
	snprintf(s->key_id, sizeof s->key_id, "%s", db_res_s(res, 0, "key_id"));
	snprintf(s->status, sizeof s->status, "%s", db_res_s(res, 0, "status"));
	snprintf(s->profile, sizeof s->profile, "%s", db_res_s(res, 0, "profile_name"));
	s->memory_mb = db_res_i(res, 0, "memory_mb", 0);
	s->pids = db_res_i(res, 0, "pids", 0);
	s->cpu_seconds = db_res_i(res, 0, "cpu_seconds", 0);
	s->disk_mb = db_res_i(res, 0, "disk_mb", 0);
	s->idle_seconds = db_res_i(res, 0, "idle_seconds", 0);
	s->max_seconds = db_res_i(res, 0, "max_seconds", 0);
	s->network = db_res_i(res, 0, "network", 0) != 0;
	env = db_res_s(res, 0, "env_json");
	s->env = env ? json_loadb(env, db_res_l(res, 0, "env_json"), JSON_REJECT_DUPLICATES, NULL)
		     : json_object();
	db_res_free(res);
	return s->env == NULL ? -1 : 0;
}

void ss_session_free(struct ss_session *s)
{
	json_decref(s->env);
	s->env = NULL;
}

struct db_res *ss_files(struct db *db, const char *id)
{
	return db_query_p(db,
			  "SELECT path, content, executable FROM session_files WHERE session_id = ?"
			  " ORDER BY path",
			  db_str(id));
}

/* starting -> ready, the body of its transaction (db_tx_step): rc 0, 1 not ours. */
struct ready_tx {
	const char *id, *runner_id;
	int rc;
};

static enum db_tx_end ready_body(struct db *db, void *arg)
{
	struct ready_tx *t = arg;
	long long n = db_exec_p(db,
				"UPDATE sessions SET status = 'ready', ready_at = CURRENT_TIMESTAMP(3)"
				" WHERE id = ? AND runner_id = ? AND status = 'starting'",
				db_str(t->id), db_str(t->runner_id));

	t->rc = n == 0 ? 1 : 0;
	if (n == 0)
		return DB_TX_ROLLBACK;
	return n != 1 || jd_session_erase(db, t->id, JD_SESS_FILES) < 0 ? DB_TX_ERROR
									: DB_TX_COMMIT;
}

int ss_set_ready(struct db *db, const char *id, const char *runner_id)
{
	struct ready_tx t = { id, runner_id, -1 };

	return db_tx_step(db, "session_ready", ready_body, &t) < 0 ? -1 : t.rc;
}

int ss_heartbeat(struct db *db, const char *id, const char *runner_id, long long lease_s,
		 struct ss_beat *b)
{
	struct db_res *res;

	memset(b, 0, sizeof b[0]);
	if (db_exec_p(db,
		      "UPDATE sessions SET lease_expires_at = CURRENT_TIMESTAMP(3) + INTERVAL ? SECOND"
		      " WHERE id = ? AND runner_id = ? AND " LIVE,
		      db_i64(lease_s), db_str(id), db_str(runner_id)) < 0)
		return -1;
	res = db_query_p(db,
			 "SELECT close_requested,"
			 " TIMESTAMPDIFF(MICROSECOND, last_activity_at, CURRENT_TIMESTAMP(3)) DIV 1000"
			 " AS idle_ms,"
			 " TIMESTAMPDIFF(MICROSECOND, CURRENT_TIMESTAMP(3), expires_at) DIV 1000"
			 " AS expires_ms"
			 " FROM sessions WHERE id = ? AND runner_id = ? AND " LIVE,
			 db_str(id), db_str(runner_id));
	if (res == NULL)
		return -1;
	b->ours = db_res_rows(res) == 1;
	if (b->ours) {
		b->close_requested = db_res_i(res, 0, "close_requested", 0) != 0;
		b->idle_ms = db_res_i(res, 0, "idle_ms", 0);
		b->expires_in_ms = db_res_i(res, 0, "expires_ms", 0);
	}
	db_res_free(res);
	return 0;
}

int ss_host_work(struct db *db, const char *id, const char *runner_id, long long bytes,
		 long long cpu_ms)
{
	return db_exec_p(db,
			 "UPDATE sessions SET host_read_bytes = ?, host_cpu_ms = ?"
			 " WHERE id = ? AND runner_id = ?",
			 db_i64(bytes), db_i64(cpu_ms), db_str(id), db_str(runner_id)) < 0
		       ? -1
		       : 0;
}

struct db_res *ss_requests(struct db *db, const char *id, int max)
{
	return db_query_p(db,
			  "SELECT id, kind, command_id, args_json, data FROM session_requests"
			  " WHERE session_id = ? AND state = 'pending' ORDER BY id LIMIT ?",
			  db_str(id), db_i64(max));
}

int ss_req_done(struct db *db, long long req, const json_t *result, const void *data,
		size_t len)
{
	char *rj = dumps(result);
	int rc = sreq_answer(db, req, "taken", "done", 0, rj, data, len);

	free(rj);
	return rc < 0 ? -1 : 0;
}

int ss_req_fail(struct db *db, long long req, const char *code, const char *msg)
{
	int http = sreq_code_status(code);
	json_t *r;
	char *rj;
	int rc;

	if (http == 0) { /* a code outside the table is a bug here: never passed on */
		log_kv("error", "session_request_code", "code", code, (char *)NULL);
		code = "internal_error", http = 500;
	}
	r = json_pack("{s:s, s:s}", "error", code, "message", msg);
	rj = dumps(r);
	rc = sreq_answer(db, req, "taken", "failed", http, rj, NULL, 0);
	free(rj);
	json_decref(r);
	return rc < 0 ? -1 : 0;
}

int ss_cmd_stdin_closed(struct db *db, const char *session_id, const char *cid)
{
	return db_exec_p(db,
			 "UPDATE session_commands SET stdin_open = 0 WHERE id = ? AND session_id = ?",
			 db_str(cid), db_str(session_id)) < 0
		       ? -1
		       : 0;
}

static json_t *load_json(const struct db_res *res, const char *col)
{
	const char *s = db_res_s(res, 0, col);

	return s ? json_loadb(s, db_res_l(res, 0, col), JSON_REJECT_DUPLICATES, NULL) : NULL;
}

int ss_cmd_load(struct db *db, const char *session_id, const char *cid, struct ss_cmd *c)
{
	struct db_res *res = db_query_p(db,
					"SELECT id, pid, status, command, argv_json, env_json, cwd,"
					" stdin, stdin_open, timeout_seconds, output_bytes"
					" FROM session_commands WHERE id = ? AND session_id = ?",
					db_str(cid), db_str(session_id));
	const char *cmd;
	size_t n;

	memset(c, 0, sizeof *c);
	if (res == NULL)
		return -1;
	if (db_res_rows(res) != 1) {
		db_res_free(res);
		return 1;
	}
	snprintf(c->id, sizeof c->id, "%s", db_res_s(res, 0, "id"));
	snprintf(c->status, sizeof c->status, "%s", db_res_s(res, 0, "status"));
	c->pid = db_res_i(res, 0, "pid", 0);
	cmd = db_res_s(res, 0, "command");
	c->command = cmd ? strdup(cmd) : NULL;
	c->argv = load_json(res, "argv_json");
	c->env = load_json(res, "env_json");
	c->cwd = strdup(db_res_s(res, 0, "cwd") ? db_res_s(res, 0, "cwd") : "");
	n = db_res_l(res, 0, "stdin");
	c->stdin_buf = malloc(n + 1);
	if (c->stdin_buf && n)
		memcpy(c->stdin_buf, db_res_s(res, 0, "stdin"), n);
	c->stdin_len = n;
	c->stdin_open = db_res_i(res, 0, "stdin_open", 0) != 0;
	c->timeout_s = db_res_i(res, 0, "timeout_seconds", 0);
	c->output_bytes = db_res_i(res, 0, "output_bytes", 0);
	db_res_free(res);
	if (c->cwd == NULL || c->stdin_buf == NULL || (cmd && c->command == NULL)) {
		ss_cmd_free(c);
		return -1;
	}
	return 0;
}

void ss_cmd_free(struct ss_cmd *c)
{
	free(c->command);
	json_decref(c->argv);
	json_decref(c->env);
	free(c->cwd);
	if (c->stdin_buf)
		explicit_bzero(c->stdin_buf, c->stdin_len);
	free(c->stdin_buf);
	memset(c, 0, sizeof *c);
}

int ss_cmd_started(struct db *db, const char *cid)
{
	return db_exec_p(db,
			 "UPDATE session_commands SET status = 'running',"
			 " started_at = CURRENT_TIMESTAMP(3) WHERE id = ? AND status = 'queued'",
			 db_str(cid)) < 0
		       ? -1
		       : 0;
}

/* The session a command belongs to (never changes): 0, 1 no such command, -1. */
static int cmd_session(struct db *db, const char *cid, char sid[UUID_STR_LEN])
{
	struct db_res *res = db_query_p(db, "SELECT session_id FROM session_commands WHERE id = ?",
					db_str(cid));
	int rc;

	if (res == NULL)
		return -1;
	rc = db_res_rows(res) == 1 ? 0 : 1;
	if (rc == 0)
		snprintf(sid, UUID_STR_LEN, "%s", db_res_s(res, 0, "session_id"));
	db_res_free(res);
	return rc;
}

/* A command's end, the body of its transaction (db_tx_step). */
struct cmd_end_tx {
	const char *sid, *cid;
	const struct ss_end_cmd *e;
};

static enum db_tx_end cmd_end_body(struct db *db, void *arg)
{
	const struct cmd_end_tx *t = arg;
	const struct ss_end_cmd *e = t->e;
	long long n = -1, held = jd_cmd_inputs(db, t->sid, JD_CMD_ONE, t->cid);
	char *dj = held < 0 ? NULL : dumps(e->diagnostics);

	if (held >= 0)
		n = db_exec_p(db,
			      "UPDATE session_commands SET status = ?, exit_code = ?, `signal` = ?,"
			      " stdout_truncated = ?, stderr_truncated = ?, diagnostics_json = ?,"
			      " finished_at = CURRENT_TIMESTAMP(3), env_json = '{}', stdin = '',"
			      " stdin_open = 0 WHERE id = ? AND status IN ('queued', 'running')",
			      db_str(e->status), db_i64(e->exit_code),
			      db_null_i64(e->signal, e->signal == 0), db_i64(e->out_trunc),
			      db_i64(e->err_trunc), db_str(dj ? dj : "[]"), db_str(t->cid));
	free(dj);
	/* Released only by the UPDATE that ended it (the session's end may have won). */
	return n < 0 || (n == 1 && jd_session_release(db, t->sid, held) < 0) ? DB_TX_ERROR
									       : DB_TX_COMMIT;
}

int ss_cmd_finish(struct db *db, const char *cid, const struct ss_end_cmd *e)
{
	char sid[UUID_STR_LEN];
	struct cmd_end_tx t = { sid, cid, e };
	int rc = cmd_session(db, cid, sid);

	if (rc != 0)
		return rc < 0 ? -1 : 0;
	return db_tx_step(db, "command_finish", cmd_end_body, &t) < 0 ? -1 : 0;
}

/* A chunk of a command's output, the body of its transaction (db_tx_step). */
struct output_tx {
	const char *session_id, *key_id, *cid;
	int stream;
	long long off;
	const void *data;
	size_t len;
};

static enum db_tx_end output_body(struct db *db, void *arg)
{
	const struct output_tx *t = arg;
	long long n = (long long)t->len;

	if (jd_append_output(db, t->cid, t->stream, t->off, t->data, t->len) < 0 ||
	    db_exec_p(db,
		      t->stream == 1 ? "UPDATE session_commands SET stdout_bytes = stdout_bytes + ?"
				       " WHERE id = ?"
				     : "UPDATE session_commands SET stderr_bytes = stderr_bytes + ?"
				       " WHERE id = ?",
		      db_i64(n), db_str(t->cid)) < 0 ||
	    db_exec_p(db, "UPDATE sessions SET stored_bytes = stored_bytes + ? WHERE id = ?",
		      db_i64(n), db_str(t->session_id)) < 0 ||
	    jd_add_stored(db, t->key_id, n) < 0)
		return DB_TX_ERROR;
	return DB_TX_COMMIT;
}

int ss_output(struct db *db, const char *session_id, const char *key_id, const char *cid,
	      int stream, long long off, const void *data, size_t len)
{
	struct output_tx t = { session_id, key_id, cid, stream, off, data, len };

	if (len == 0)
		return 0;
	return db_tx_step(db, "session_output", output_body, &t) < 0 ? -1 : 0;
}

int ss_finish(struct db *db, const char *id, const char *runner_id, const struct ss_end *e)
{
	char *fj = dumps(e->failure), diag[600];
	const struct db_param p[] = { db_str(e->status), db_str(e->end_reason), db_str(fj),
				      db_str(e->cleanup_status), db_str(id), db_str(runner_id) };
	struct end_tx t = {
		.id = id, .p = p, .np = 6, .erase = JD_SESS_ENV | JD_SESS_FILES,
		.cmd_status = "cancelled", .code = CANCELLED_CODE, .diag = diag,
		.req_status = e->status,
		.sql = "UPDATE sessions SET status = ?, end_reason = ?, failure_json = ?,"
		       " cleanup_status = ?, ended_at = CURRENT_TIMESTAMP(3),"
		       " lease_expires_at = NULL WHERE id = ? AND runner_id = ? AND " LIVE,
	};
	long long n;

	snprintf(diag, sizeof diag, "session ended: %s", e->end_reason);
	n = end_session(db, "session_finish", &t);
	free(fj);
	return n < 0 ? -1 : n == 0;
}
