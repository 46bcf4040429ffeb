/* Session request rows shared by the API and the runner (sreq.h). */
#include "sreq.h"

#include <stdio.h>
#include <string.h>

#include "db.h"
#include "jobdata.h"

const struct sreq_code sreq_codes[] = {
	{ "not_found", 404, "no such command, or no such file" },
	{ "conflict", 409, "the command is not queued any more" },
	{ "invalid_signal", 400, "a kill's signal is not 1..64" },
	{ "not_running", 409, "kill or stdin for a command that is not running" },
	{ "stdin_closed", 409, "stdin for a command whose stdin is closed" },
	{ "stdin_backlog_full", 429, "the command has the most stdin not yet read" },
	{ "invalid_path", 400, "a file path breaks the path rule" },
	{ "invalid_mode", 400, "an upload's mode is not 0..0777" },
	{ "invalid_args", 400, "the request's arguments are not a JSON object" },
	{ "unknown_kind", 400, "the request's kind is unknown" },
	{ "too_large", 413, "a file over session_file_max_bytes" },
	{ "symlink", 409, "the path or a parent is a symbolic link" },
	{ "not_regular_file", 409, "the path is a directory, a device, a fifo or a mount" },
	{ "not_a_directory", 409, "a parent of the path is not a directory" },
	{ "disk_full", 507, "the session's workspace is full (disk_mb)" },
	{ "internal_error", 500, "the supervisor failed (its log says why)" },
	{ "session_ended", 409, "the session ended before the request was carried out" },
	{ "request_timeout", 504, "nobody took the request within session_request_timeout_ms" },
	{ NULL, 0, NULL },
};

int sreq_code_status(const char *code)
{
	for (size_t i = 0; code && sreq_codes[i].code; i++)
		if (strcmp(code, sreq_codes[i].code) == 0)
			return sreq_codes[i].http;
	return 0;
}

int sreq_passthrough(int http, const char *code)
{
	int st = sreq_code_status(code);

	return st != 0 && st == http;
}

int sreq_claim(struct db *db, long long id)
{
	long long n = db_exec_p(db,
				"UPDATE session_requests SET state = 'taken'"
				" WHERE id = ? AND state = 'pending'",
				db_i64(id));

	return n < 0 ? -1 : n == 1;
}

int sreq_unclaim(struct db *db, long long id)
{
	return db_exec_p(db,
			 "UPDATE session_requests SET state = 'pending'"
			 " WHERE id = ? AND state = 'taken'",
			 db_i64(id)) < 0
		       ? -1
		       : 0;
}

/* The payload columns of an UPDATE that ends rows: size and digest kept, bytes gone
 * (MariaDB assigns left to right, so both are taken before the value is cleared). */
#define ERASE_DATA                                                                 \
	" data_bytes = LENGTH(data), data_sha256 = SHA2(data, 256), data = NULL"

/* The UPDATE that answers row id (state from -> to). */
static long long answer_row(struct db *db, long long id, const char *from, const char *to,
			    int http, const char *result_json, const void *rdata, size_t rlen)
{
	return db_exec_p(db,
			 "UPDATE session_requests SET state = ?, http_status = ?, result_json = ?,"
			 " result_data = ?, done_at = CURRENT_TIMESTAMP(3)," ERASE_DATA
			 " WHERE id = ? AND state = ?",
			 db_str(to), db_null_i64(http, http == 0), db_str(result_json),
			 db_blob(rdata, rdata ? rlen : 0), db_i64(id), db_str(from));
}

struct answer_tx {
	long long id;
	const char *sid, *from, *to, *result_json;
	int http;
	const void *rdata;
	size_t rlen;
	int answered; /* out */
};

static enum db_tx_end answer_body(struct db *db, void *arg)
{
	struct answer_tx *t = arg;
	struct db_res *res = db_query_p(db, "SELECT id FROM sessions WHERE id = ? FOR UPDATE",
					db_str(t->sid));
	long long held;

	t->answered = 0;
	if (res == NULL)
		return DB_TX_ERROR;
	db_res_free(res);
	res = db_query_p(db,
			 "SELECT COALESCE(LENGTH(data), 0) AS n FROM session_requests"
			 " WHERE id = ? AND state = ? FOR UPDATE",
			 db_i64(t->id), db_str(t->from));
	if (res == NULL)
		return DB_TX_ERROR;
	if (db_res_rows(res) != 1) {
		db_res_free(res);
		return DB_TX_ROLLBACK;
	}
	held = db_res_i(res, 0, "n", 0);
	db_res_free(res);
	if (answer_row(db, t->id, t->from, t->to, t->http, t->result_json, t->rdata, t->rlen) != 1 ||
	    jd_session_release(db, t->sid, held) < 0)
		return DB_TX_ERROR;
	t->answered = 1;
	return DB_TX_COMMIT;
}

/* A row without a payload is answered by one statement. One with a payload gives its
 * bytes back in the same transaction (db_tx: retried whole on a conflict), its
 * session's row locked first (the order every session writer takes: the session,
 * then its requests), then the row. */
int sreq_answer(struct db *db, long long id, const char *from, const char *to, int http,
		const char *result_json, const void *rdata, size_t rlen)
{
	struct db_res *res = db_query_p(db,
					"SELECT session_id, data IS NOT NULL AS has FROM"
					" session_requests WHERE id = ?",
					db_i64(id));
	char sid[40];
	long long n;
	int has;

	if (res == NULL)
		return -1;
	if (db_res_rows(res) != 1) {
		db_res_free(res);
		return 0;
	}
	snprintf(sid, sizeof sid, "%s", db_res_s(res, 0, "session_id"));
	has = db_res_i(res, 0, "has", 0) != 0;
	db_res_free(res);
	if (!has) {
		n = answer_row(db, id, from, to, http, result_json, rdata, rlen);
		return n < 0 ? -1 : n == 1;
	}
	{
		struct answer_tx t = { id, sid, from, to, result_json, http, rdata, rlen, 0 };
		return db_tx(db, answer_body, &t) < 0 ? -1 : t.answered;
	}
}

/* The statements that end a session's open rows: `pending` ones, and `taken` too. */
#define OPEN_SUM(states)                                                             \
	"SELECT COALESCE(SUM(LENGTH(data)), 0) AS n FROM session_requests"          \
	" WHERE session_id = ? AND state IN (" states ") FOR UPDATE"
#define OPEN_FAIL(states)                                                            \
	"UPDATE session_requests SET state = 'failed', http_status = ?, result_json = ?," \
	" done_at = CURRENT_TIMESTAMP(3)," ERASE_DATA " WHERE session_id = ? AND state IN (" \
	states ")"

int sreq_fail_session(struct db *db, const char *sid, int with_taken, int http,
		      const char *result_json)
{
	const char *sum = with_taken ? OPEN_SUM("'pending', 'taken'") : OPEN_SUM("'pending'");
	const char *fail = with_taken ? OPEN_FAIL("'pending', 'taken'") : OPEN_FAIL("'pending'");
	struct db_res *res = db_query_p(db, sum, db_str(sid));
	long long held;

	if (res == NULL)
		return -1;
	held = db_res_rows(res) ? db_res_i(res, 0, "n", 0) : 0;
	db_res_free(res);
	if (db_exec_p(db, fail, db_i64(http), db_str(result_json), db_str(sid)) < 0)
		return -1;
	return jd_session_release(db, sid, held);
}

int sreq_end_unstarted(struct db *db, const char *sid)
{
	long long held;

	if (jd_session_erase(db, sid, JD_SESS_ENV | JD_SESS_FILES) < 0 ||
	    (held = jd_cmd_inputs(db, sid, JD_CMDS_QUEUED, NULL)) < 0 ||
	    db_exec_p(db,
		      "UPDATE session_commands SET status = 'cancelled', exit_code = 137, stdin_open = 0,"
		      " finished_at = NOW(3), env_json = '{}', stdin = '', diagnostics_json"
		      " = '[\"the session ended before the command started\"]' WHERE"
		      " session_id = ? AND status = 'queued'",
		      db_str(sid)) < 0 ||
	    jd_session_release(db, sid, held) < 0 ||
	    sreq_fail_session(db, sid, 0, 409,
			      "{\"error\":\"session_ended\",\"message\":\"the session"
			      " has ended (closed)\"}") < 0)
		return -1;
	return 0;
}
