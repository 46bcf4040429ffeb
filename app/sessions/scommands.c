/* The session API's commands (docs/SESSIONS.md): create (the command's row and its
 * `command` request, charged on the session and the key, at most
 * SV_MAX_LIVE_COMMANDS queued or running), list, get (?wait for its end), kill and
 * stdin (requests relayed to the supervisor, app/sessions/srelay.h); its output is
 * app/sessions/soutput.c. Every one is about a command of a session the caller's
 * scoped read proved visible (app/sessions/sapi.h). */
#include "sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "jobdata.h"
#include "log.h"
#include "routes.h"
#include "sapi.h"
#include "srelay.h"
#include "srender.h"
#include "strbuf.h"
#include "svalidate.h"
#include "util.h"
#include "waiter.h"

enum cmd_rc { CM_OK, CM_NOT_RUNNING, CM_TOO_MANY, CM_STORAGE, CM_DB };

struct cmd_tx {
	const struct cfg *cfg;
	const char *sid, *cid, *argv, *env;
	const struct cmd_req *q;
	enum cmd_rc rc; /* out */
};

/* db_tx body: the command's row and its `command` request. */
static enum db_tx_end insert_command_body(struct db *db, void *arg)
{
	struct cmd_tx *t = arg;
	const struct cmd_req *q = t->q;
	const char *sid = t->sid, *cid = t->cid;
	struct db_res *res;
	long long n, pid;
	int room;

	t->rc = CM_DB;
	/* The session row's lock orders this session's creates: pid and the count. */
	n = db_exec_p(db,
		      "UPDATE sessions SET next_pid = LAST_INSERT_ID(next_pid + 1) WHERE id = ?"
		      " AND status IN " SESS_LIVE,
		      db_str(sid));
	if (n == 0) {
		t->rc = CM_NOT_RUNNING;
		return DB_TX_ROLLBACK;
	}
	if (n != 1 || (res = db_querya(db, "SELECT LAST_INSERT_ID() AS pid", NULL, 0)) == NULL)
		return DB_TX_ERROR;
	pid = db_res_i(res, 0, "pid", -1);
	db_res_free(res);
	n = sapi_count(db, "SELECT COUNT(*) AS n FROM session_commands WHERE session_id = ? AND"
			   " status IN ('queued', 'running')", DB_PARAMS(db_str(sid)), "n");
	if (n < 0 || pid < 1)
		return DB_TX_ERROR;
	if (n >= SV_MAX_LIVE_COMMANDS) {
		t->rc = CM_TOO_MANY;
		return DB_TX_ROLLBACK;
	}
	/* its env and stdin, as a job's inputs; and a command needs room for at least
	 * one byte of output: a key with none left starts nothing */
	room = srelay_charge(db, t->cfg, sid, (long long)strlen(t->env) + (long long)q->stdin_len,
			     1);
	if (room == 1) {
		t->rc = CM_STORAGE;
		return DB_TX_ROLLBACK;
	}
	if (room != 0)
		return DB_TX_ERROR;
	if (db_exec_p(db,
		      "INSERT INTO session_commands (id, session_id, pid, status, command, argv_json,"
		      " env_json, cwd, stdin, stdin_open, timeout_seconds, output_bytes, tag)"
		      " VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		      db_str(cid), db_str(sid), db_i64(pid), db_str(q->command), db_str(t->argv),
		      db_str(t->env), db_str(q->cwd),
		      db_blob(q->stdin_buf ? (const void *)q->stdin_buf : "", q->stdin_len),
		      db_i64(q->stdin_open), db_i64(q->timeout_seconds), db_i64(q->output_bytes),
		      db_str(q->tag)) < 0 ||
	    db_exec_p(db,
		      "INSERT INTO session_requests (session_id, kind, command_id, args_json)"
		      " VALUES (?, 'command', ?, '{}')",
		      db_str(sid), db_str(cid)) < 0)
		return DB_TX_ERROR;
	t->rc = CM_OK;
	return DB_TX_COMMIT;
}

/* The command's rows, retried whole on a conflict. */
static enum cmd_rc insert_command(struct db *db, const struct cfg *cfg, const char *sid,
				  const struct cmd_req *q, char cid[UUID_STR_LEN])
{
	char *argv = q->argv ? json_dumps(q->argv, JSON_COMPACT) : NULL;
	char *env = json_dumps(q->env, JSON_COMPACT);
	struct cmd_tx t = { cfg, sid, cid, argv, env, q, CM_DB };

	if ((q->argv && argv == NULL) || env == NULL || util_uuid7(cid) < 0 ||
	    db_tx(db, insert_command_body, &t) < 0)
		t.rc = CM_DB;
	free(argv);
	if (env)
		explicit_bzero(env, strlen(env));
	free(env);
	return t.rc;
}

static void send_command(struct api_ctx *ctx, struct req *r, const char *sid, const char *cid,
			 int status, const char *extra)
{
	struct db_res *res;
	struct cmd_view v;
	int rc = sapi_cmd_load(ctx->db, sid, cid, &res, &v);

	if (rc < 0)
		route_db_error(ctx, r);
	else if (rc == 0)
		sapi_no_command(r);
	else
		http_send_json(r, status, srender_command(&v), extra);
	db_res_free(res);
}

static void send_not_running(struct req *r, const char *what, const char *status)
{
	char msg[160];

	snprintf(msg, sizeof msg, "the %s is not running (status %s)", what, status);
	http_send_error(r, 409, strcmp(what, "session") == 0 ? "session_not_running" : "not_running",
			msg, NULL, NULL);
}

void h_cmd_create(struct api_ctx *ctx, struct req *r, const struct identity *who,
		  const struct route_args *a)
{
	struct cfg eff = *ctx->cfg;
	struct cmd_req q;
	struct val_err ve;
	struct sess s;
	char cid[UUID_STR_LEN], loc[160];
	enum cmd_rc rc = CM_DB;

	if (sapi_open_session(ctx, r, who, a->id, &s) < 0)
		return;
	if (!sv_session_live(s.v.status)) {
		send_not_running(r, "session", s.v.status);
		sapi_sess_free(&s);
		return;
	}
	if (*r->query != '\0') {
		http_send_error(r, 400, "invalid_request", "this endpoint takes no query parameters",
				NULL, NULL);
		sapi_sess_free(&s);
		return;
	}
	if (sapi_need_json(r) < 0) {
		sapi_sess_free(&s);
		return;
	}
	val_key_limits(&eff, who->max_limits);
	if (sv_command(r->body, r->body_len, &eff, s.v.max_seconds, &q, &ve) < 0) {
		sapi_send_val(r, &ve);
		sv_command_free(&q);
		sapi_sess_free(&s);
		return;
	}
	rc = insert_command(ctx->db, ctx->cfg, a->id, &q, cid);
	sv_command_free(&q);
	sapi_sess_free(&s);
	switch (rc) {
	case CM_OK:
		log_kv("info", "session_command", "session", a->id, "command", cid, "key",
		       who->key_id, (char *)NULL);
		snprintf(loc, sizeof loc, "Location: /v1/sessions/%s/commands/%s\r\n", a->id, cid);
		send_command(ctx, r, a->id, cid, 202, loc);
		return;
	case CM_NOT_RUNNING:
		http_send_error(r, 409, "session_not_running", "the session has ended", NULL, NULL);
		return;
	case CM_STORAGE:
		sapi_send_no_room(r, "command");
		return;
	case CM_TOO_MANY:
		http_send_error(r, 409, "too_many_commands",
				"the session has 256 queued or running commands: wait for some to"
				" end", NULL, NULL);
		return;
	default:
		route_db_error(ctx, r);
	}
}

/* One page of commands as the list answer. */
static json_t *command_page(const struct db_res *res, size_t rows, const char *next)
{
	struct cmd_view *v = calloc(rows ? rows : 1, sizeof *v);
	json_t *o;

	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < rows; i++)
		sapi_cmd_row(res, i, &v[i]);
	o = srender_command_list(v, rows, next);
	free(v);
	return o;
}

/* seq of the cursor command in session sid: 0, or -1 after answering (400, error). */
static int cmd_cursor(struct api_ctx *ctx, struct req *r, const char *sid, const char *cursor,
		      long long *seq)
{
	struct db_res *res;
	struct cmd_view cv;
	int rc = sapi_cmd_load(ctx->db, sid, cursor, &res, &cv);

	*seq = rc > 0 ? db_res_i(res, 0, "seq", 0) : 0;
	db_res_free(res);
	if (rc < 0)
		route_db_error(ctx, r);
	else if (rc == 0)
		sapi_bad_cursor(r);
	return rc > 0 ? 0 : -1;
}

void h_cmd_list(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	static const char *const names[] = { "status", "pid", "limit", "cursor", NULL };
	char vals[4][128] = { "", "", "", "" };
	int present[4] = { 0, 0, 0, 0 };
	long long limit, pid = 0, seq = 0;
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[8];
	size_t n = 0;

	if (sapi_open_query(ctx, r, who, a->id, names, vals, present, -1, NULL) < 0)
		return;
	if (present[0] && !sv_command_status(vals[0])) {
		http_send_error(r, 400, "invalid_request", "status must be a command status (queued,"
				" running, succeeded, failed, timed_out, output_limit, killed,"
				" cancelled, error, lost)", "status", NULL);
		return;
	}
	if (present[1] && util_parse_ll(vals[1], 1, 2147483647, &pid) < 0) {
		http_send_error(r, 400, "invalid_request", "pid must be a positive integer", "pid",
				NULL);
		return;
	}
	if (sapi_limit_param(r, present[2], vals[2], &limit) < 0)
		return;
	if (present[3] && cmd_cursor(ctx, r, a->id, vals[3], &seq) < 0)
		return;
	sb_adds(&sql, "SELECT " CMD_COLS " FROM session_commands c WHERE c.session_id = ?");
	p[n++] = db_str(a->id);
	if (present[0]) {
		sb_adds(&sql, " AND c.status = ?");
		p[n++] = db_str(vals[0]);
	}
	if (present[1]) {
		sb_adds(&sql, " AND c.pid = ?");
		p[n++] = db_i64(pid);
	}
	if (present[3]) {
		sb_adds(&sql, " AND c.seq < ?");
		p[n++] = db_i64(seq);
	}
	sapi_send_page(ctx, r, &sql, p, n, " ORDER BY c.seq DESC LIMIT ?", limit, command_page);
}

void h_cmd_get(struct api_ctx *ctx, struct req *r, const struct identity *who,
	       const struct route_args *a)
{
	static const char *const names[] = { "wait", NULL };
	char vals[1][128] = { "" }, cid[UUID_STR_LEN + 1];
	int present[1] = { 0 }, rc;
	long long wait;
	struct db_res *res;
	struct cmd_view v;

	if (sapi_open_query(ctx, r, who, a->id, names, vals, present, 0, &wait) < 0)
		return;
	sapi_cid_of(a, cid, sizeof cid);
	rc = sapi_cmd_load(ctx->db, a->id, cid, &res, &v);
	if (rc == 1 && wait > 0 && !sapi_cmd_ended(v.status) &&
	    wt_defer(r, who->key_id, &(struct wt_cond){ WT_COMMAND_DONE, cid, 0, 0 }, wait)) {
		db_res_free(res);
		return;
	}
	if (rc < 0)
		route_db_error(ctx, r);
	else if (rc == 0)
		sapi_no_command(r);
	else
		http_send_json(r, 200, srender_command(&v), NULL);
	db_res_free(res);
}

/* The command cid a kill or stdin request is about: its session ready, the command
 * not ended. On the re-dispatch (srelay_resuming) the first run checked it: only the
 * cid. 0, or -1 after answering. */
static int request_command(struct api_ctx *ctx, struct req *r, const struct identity *who,
			   const struct route_args *a, char *cid, size_t cidn)
{
	struct db_res *res;
	struct cmd_view v;
	struct sess s;
	int rc;

	if (srelay_resuming(r)) {
		sapi_cid_of(a, cid, cidn); /* the first run checked it: answer for it */
		return 0;
	}
	if (sapi_open_session(ctx, r, who, a->id, &s) < 0)
		return -1;
	sapi_cid_of(a, cid, cidn);
	rc = sapi_cmd_load(ctx->db, a->id, cid, &res, &v);
	if (rc <= 0) {
		if (rc < 0)
			route_db_error(ctx, r);
		else
			sapi_no_command(r);
		sapi_sess_free(&s);
		return -1;
	}
	rc = srelay_need_ready(r, &s);
	sapi_sess_free(&s);
	if (rc == 0 && sapi_cmd_ended(v.status)) {
		send_not_running(r, "command", v.status);
		rc = -1;
	}
	db_res_free(res);
	return rc;
}

/* The answer to a kill or stdin request: the command as it is now (with status), or
 * why the request failed; nothing yet when it waits (SREQ_DEFERRED: answered on the
 * re-dispatch). */
static void send_relayed(struct api_ctx *ctx, struct req *r, const char *sid, const char *cid,
			 enum srelay_rc rc, struct srelay_answer *ans, int status)
{
	if (rc == SREQ_DONE)
		send_command(ctx, r, sid, cid, status, NULL);
	else if (rc != SREQ_DEFERRED)
		srelay_send_error(ctx, r, rc, ans);
	srelay_free(ans);
}

void h_cmd_kill(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	char cid[UUID_STR_LEN + 1];
	struct srelay_answer ans;
	struct val_err ve;
	enum srelay_rc rc;
	int signo;
	json_t *args;

	if (r->body_len > 0 && sapi_need_json(r) < 0)
		return;
	if (sv_kill(r->body, r->body_len, &signo, &ve) < 0) {
		sapi_send_val(r, &ve);
		return;
	}
	if (request_command(ctx, r, who, a, cid, sizeof cid) < 0)
		return;
	args = json_pack("{s:i}", "signal", signo);
	rc = srelay_call(ctx, r, who, a->id, "kill", cid, args, NULL, 0, &ans);
	json_decref(args);
	send_relayed(ctx, r, a->id, cid, rc, &ans, 202);
}

void h_cmd_stdin(struct api_ctx *ctx, struct req *r, const struct identity *who,
		 const struct route_args *a)
{
	char cid[UUID_STR_LEN + 1];
	struct srelay_answer ans;
	struct val_err ve;
	unsigned char *data;
	size_t len;
	int close_after;
	enum srelay_rc rc;
	json_t *args;

	if (sapi_need_json(r) < 0)
		return;
	if (sv_stdin(r->body, r->body_len, ctx->cfg->max_files_bytes, &data, &len, &close_after,
		     &ve) < 0) {
		sapi_send_val(r, &ve);
		return;
	}
	if (request_command(ctx, r, who, a, cid, sizeof cid) < 0) {
		free(data);
		return;
	}
	args = json_pack("{s:b}", "close", close_after);
	rc = srelay_call(ctx, r, who, a->id, "stdin", cid, args, data, len, &ans);
	json_decref(args);
	if (data)
		explicit_bzero(data, len);
	free(data);
	send_relayed(ctx, r, a->id, cid, rc, &ans, 200);
}
