/* The session API: handlers and their SQL (docs/SESSIONS.md is the contract).
 *
 * Theory of operation. A session row is created `starting`; a runner host's
 * dispatcher claims it and its supervisor makes it `ready`. Everything the API asks
 * of a session after that is a session_requests row (command, kill, stdin, file_*,
 * close) that the owning supervisor answers in the same row. A handler whose client
 * waits for that answer (kill, stdin, file_*) hands the request to the waiter
 * (WT_REQUEST_DONE on the request's id, up to session_request_timeout_ms rounded up to
 * seconds) and answers on the re-dispatch from r->wait.aux, the request's id: the row
 * is inserted once, by the first run. Only when the wait board has no room for it
 * (board full, or the key holds its share) does the worker poll the row itself
 * (every 5 ms, same bound), so the answer never depends on the board's capacity.
 * Command output is read from job_output (keyed by the command's id) as it grows.
 *
 * Scope: every handler starts with open_session(), the one scoped read of a session
 * (identity compared byte for byte in SQL, utf8mb4_nopad_bin columns); a command is
 * only ever looked up inside a session that read proved visible. Env values and stdin
 * are written, never read back.
 *
 * Waits (?wait=S: session ready, command end, output growth) go to the waiter
 * (app/http/waiter.h): the worker is free while they wait, and the handler runs again
 * with the state as it is then. Close waits for the end the same way
 * (WT_SESSION_ENDED), with the same polling fallback.
 *
 * Storage. What the API writes for a session counts on the session's stored_bytes
 * and on its key's total (key_storage): env and files at create, a command's env and
 * stdin, stdin requests, uploaded files. The runner adds command output itself
 * (sstore.c ss_output). Inputs are released when they are erased (files at ready, a
 * command's env and stdin at its end, the session's env at the end: jd_session_erase,
 * jd_cmd_inputs), exactly once; purge takes off what is left. Writes are refused with
 * 429 when the key has no room left (app/jobs/quota.c). */
#include "sessions.h"
#include "waiter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_routes.h"
#include "auth.h"
#include "http_util.h"
#include "jobdata.h"
#include "log.h"
#include "metrics.h"
#include "quota.h"
#include "routes.h"
#include "sha256.h"
#include "sreq.h"
#include "srender.h"
#include "strbuf.h"
#include "svalidate.h"
#include "util.h"
#include "wake.h"

#define WAIT_MAX_SECONDS 30
#define LIST_DEFAULT 20
#define LIST_MAX 100
#define OUTPUT_LIMIT_DEFAULT 65536
#define OUTPUT_LIMIT_MAX 1048576
#define REQ_POLL_MS 5
#define WAIT_POLL_MS 15

#define TS(col) "DATE_FORMAT(" col ", '%Y-%m-%dT%H:%i:%s.%fZ')"
#define SCOPE_TENANT " AND s.identity_namespace = ? AND s.tenant_id = ?"
#define SCOPE_SUBJECT SCOPE_TENANT " AND s.subject_type = ? AND s.subject_id = ?"
#define LIVE "('starting', 'ready')"

#define SESS_COLS                                                                          \
	"s.seq, s.id, s.status, " TS("s.created_at") " AS created_at, " TS("s.ready_at")    \
	" AS ready_at, " TS("s.expires_at") " AS expires_at, " TS("s.last_activity_at")     \
	" AS last_activity_at, " TS("s.ended_at") " AS ended_at, s.identity_namespace,"     \
	" s.tenant_id, s.subject_type, s.subject_id, s.actor_type, s.actor_id, s.memory_mb," \
	" s.pids, s.cpu_seconds, s.disk_mb, s.idle_seconds, s.max_seconds, s.network,"      \
	" s.metadata_json, s.env_meta_json, s.profile_name, s.profile_digest, s.runner_id," \
	" s.failure_json, s.end_reason, s.cleanup_status, s.close_requested,"             \
	" s.host_read_bytes, s.host_cpu_ms"

#define CMD_COLS                                                                           \
	"c.seq, c.id, c.session_id, c.pid, c.status, c.command, c.argv_json, c.cwd, c.tag,"  \
	" c.exit_code, c.`signal`, c.diagnostics_json, " TS("c.created_at") " AS created_at," \
	" " TS("c.started_at") " AS started_at, " TS("c.finished_at") " AS finished_at,"     \
	" c.timeout_seconds, c.output_bytes, c.stdout_bytes, c.stderr_bytes,"                \
	" c.stdout_truncated, c.stderr_truncated, c.stdin_open"

/* A session proven visible to the caller: the row and its view (pointing into it). */
struct sess {
	struct db_res *res;
	struct sess_view v;
};

/* ------------------------------------------------------------------ answers */

/* The same body for an unknown session and another identity's. */
static void send_no_session(struct req *r)
{
	http_send_error(r, 404, "not_found", "no such session", NULL, NULL);
}

static void send_no_command(struct req *r)
{
	http_send_error(r, 404, "not_found", "no such command", NULL, NULL);
}

static void send_val(struct req *r, const struct val_err *ve)
{
	http_send_error(r, ve->status, ve->code, ve->message, ve->field, NULL);
}

static int parse_wait_value(struct req *r, int present, const char *val, long long *wait)
{
	*wait = 0;
	if (present && util_parse_ll(val, 0, WAIT_MAX_SECONDS, wait) < 0) {
		http_send_error(r, 400, "invalid_request",
				"wait must be an integer number of seconds from 0 to 30", "wait",
				NULL);
		return -1;
	}
	return 0;
}

static int need_json(struct req *r)
{
	if (http_is_json_type(r->content_type))
		return 0;
	http_send_error(r, 415, "unsupported_media_type", "Content-Type must be application/json",
			NULL, NULL);
	return -1;
}

/* ------------------------------------------------------------------ rows */

static size_t scope_params(const struct identity *who, struct db_param *p, size_t n)
{
	p[n++] = db_str(who->ns);
	p[n++] = db_str(who->tenant);
	if (!who->tenant_admin) {
		p[n++] = db_str(who->subject_type);
		p[n++] = db_str(who->subject_id);
	}
	return n;
}

static const char *scope_sql(const struct identity *who)
{
	return who->tenant_admin ? SCOPE_TENANT : SCOPE_SUBJECT;
}

static void sess_from_row(const struct db_res *res, size_t i, struct sess_view *v)
{
	memset(v, 0, sizeof *v);
	v->id = db_res_s(res, i, "id");
	v->status = db_res_s(res, i, "status");
	v->created_at = db_res_s(res, i, "created_at");
	v->ready_at = db_res_s(res, i, "ready_at");
	v->expires_at = db_res_s(res, i, "expires_at");
	v->last_activity_at = db_res_s(res, i, "last_activity_at");
	v->ended_at = db_res_s(res, i, "ended_at");
	v->ns = db_res_s(res, i, "identity_namespace");
	v->tenant = db_res_s(res, i, "tenant_id");
	v->subject_type = db_res_s(res, i, "subject_type");
	v->subject_id = db_res_s(res, i, "subject_id");
	v->actor_type = db_res_s(res, i, "actor_type");
	v->actor_id = db_res_s(res, i, "actor_id");
	v->runner_id = db_res_s(res, i, "runner_id");
	v->profile_name = db_res_s(res, i, "profile_name");
	v->profile_digest = db_res_s(res, i, "profile_digest");
	v->metadata_json = db_res_s(res, i, "metadata_json");
	v->env_meta_json = db_res_s(res, i, "env_meta_json");
	v->failure_json = db_res_s(res, i, "failure_json");
	v->end_reason = db_res_s(res, i, "end_reason");
	v->cleanup_status = db_res_s(res, i, "cleanup_status");
	for (int l = 0; l < SV_LIMIT_COUNT; l++)
		v->limits[l] = db_res_i(res, i, sv_limit_names[l], 0);
	v->idle_seconds = db_res_i(res, i, "idle_seconds", 0);
	v->max_seconds = db_res_i(res, i, "max_seconds", 0);
	v->network = db_res_i(res, i, "network", 0) != 0;
	v->close_requested = db_res_i(res, i, "close_requested", 0) != 0;
	v->host_read_bytes = db_res_i(res, i, "host_read_bytes", 0);
	v->host_cpu_ms = db_res_i(res, i, "host_cpu_ms", 0);
}

static void cmd_from_row(const struct db_res *res, size_t i, struct cmd_view *v)
{
	memset(v, 0, sizeof *v);
	v->id = db_res_s(res, i, "id");
	v->session_id = db_res_s(res, i, "session_id");
	v->status = db_res_s(res, i, "status");
	v->tag = db_res_s(res, i, "tag");
	v->command = db_res_s(res, i, "command");
	v->argv_json = db_res_s(res, i, "argv_json");
	v->cwd = db_res_s(res, i, "cwd");
	v->exit_code = db_res_s(res, i, "exit_code");
	v->signal = db_res_s(res, i, "signal");
	v->diagnostics_json = db_res_s(res, i, "diagnostics_json");
	v->created_at = db_res_s(res, i, "created_at");
	v->started_at = db_res_s(res, i, "started_at");
	v->finished_at = db_res_s(res, i, "finished_at");
	v->pid = db_res_i(res, i, "pid", 0);
	v->timeout_seconds = db_res_i(res, i, "timeout_seconds", 0);
	v->output_bytes = db_res_i(res, i, "output_bytes", 0);
	v->stdout_bytes = db_res_i(res, i, "stdout_bytes", 0);
	v->stderr_bytes = db_res_i(res, i, "stderr_bytes", 0);
	v->stdout_truncated = db_res_i(res, i, "stdout_truncated", 0) != 0;
	v->stderr_truncated = db_res_i(res, i, "stderr_truncated", 0) != 0;
	v->stdin_open = db_res_i(res, i, "stdin_open", 0) != 0;
}

/* The one scoped read of a session: 1 found, 0 not visible, -1 error. */
static int sess_load(struct db *db, const struct identity *who, const char *id, struct sess *s)
{
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[8];
	size_t n = 0;

	memset(s, 0, sizeof *s);
	if (!util_is_uuid(id))
		return 0;
	sb_adds(&sql, "SELECT " SESS_COLS " FROM sessions s WHERE s.id = ?");
	sb_adds(&sql, scope_sql(who));
	p[n++] = db_str(id);
	n = scope_params(who, p, n);
	if (!sql.failed)
		s->res = db_querya(db, sql.buf, p, n);
	sb_release(&sql);
	if (s->res == NULL)
		return -1;
	if (db_res_rows(s->res) == 0) {
		db_res_free(s->res);
		s->res = NULL;
		return 0;
	}
	sess_from_row(s->res, 0, &s->v);
	return 1;
}

static void sess_free(struct sess *s)
{
	db_res_free(s->res);
	memset(s, 0, sizeof *s);
}

/* Every API call on a live session counts as activity (idle expiry), at most one
 * write a second. */
static int sess_touch(struct db *db, const char *id)
{
	return db_exec_p(db,
			 "UPDATE sessions SET last_activity_at = NOW(3) WHERE id = ? AND status IN"
			 " " LIVE " AND last_activity_at < NOW(3) - INTERVAL 1 SECOND",
			 db_str(id)) < 0
		       ? -1
		       : 0;
}

/* Reads the caller's session a->id and marks the activity: 0, or -1 after answering
 * (404 for a session outside the scope, exactly as for an unknown one). */
static int open_session(struct api_ctx *ctx, struct req *r, const struct identity *who,
			const char *id, struct sess *s)
{
	int rc = sess_load(ctx->db, who, id, s);

	if (rc == 0) {
		send_no_session(r);
		return -1;
	}
	if (rc < 0 || sess_touch(ctx->db, id) < 0) {
		sess_free(s);
		route_db_error(ctx, r);
		return -1;
	}
	return 0;
}

/* The command cid of session sid (already proven visible): 1, 0 none, -1 error. */
static int cmd_load(struct db *db, const char *sid, const char *cid, struct db_res **res,
		    struct cmd_view *v)
{
	*res = NULL;
	if (!util_is_uuid(cid))
		return 0;
	*res = db_query_p(db, "SELECT " CMD_COLS " FROM session_commands c"
			      " WHERE c.id = ? AND c.session_id = ?",
			  db_str(cid), db_str(sid));
	if (*res == NULL)
		return -1;
	if (db_res_rows(*res) == 0) {
		db_res_free(*res);
		*res = NULL;
		return 0;
	}
	cmd_from_row(*res, 0, v);
	return 1;
}

/* {cid} of .../commands/{cid}[/...]: the segment a->rest starts with. */
static void cid_of(const struct route_args *a, char *cid, size_t n)
{
	size_t len = a->rest ? strcspn(a->rest, "/") : 0;

	if (len >= n)
		len = 0; /* too long to be an id: matches nothing */
	memcpy(cid, a->rest ? a->rest : "", len);
	cid[len] = '\0';
}

/* ------------------------------------------------------------------ waits */

/* Calls done(ctx, arg) every `every` ms until it says 1 (or -1: error), the deadline
 * passes or the worker is told to stop. */
static int poll_until(struct api_ctx *ctx, double ms, long every,
		      int (*done)(struct api_ctx *ctx, void *arg), void *arg)
{
	double deadline = util_mono_ms() + ms;
	int rc = 0;

	while (!*ctx->stop && util_mono_ms() < deadline) {
		util_sleep_ms(every);
		if ((rc = done(ctx, arg)) != 0)
			break;
	}
	return rc < 0 ? -1 : 0;
}

struct status_probe {
	const char *sql;   /* SELECT status ... WHERE id = ? */
	const char *id;
	int (*stop_when)(const char *status);
};

static int probe_status(struct api_ctx *ctx, void *arg)
{
	struct status_probe *p = arg;
	struct db_res *res = db_query_p(ctx->db, p->sql, db_str(p->id));
	int rc;

	if (res == NULL)
		return -1;
	rc = db_res_rows(res) == 0 || p->stop_when(db_res_s(res, 0, "status"));
	db_res_free(res);
	return rc;
}

static int not_live(const char *st)
{
	return !sv_session_live(st);
}

static int cmd_ended(const char *st)
{
	return st == NULL || sv_command_terminal(st);
}

/* Waits up to ms while the session is starting or ready (close). */
static int wait_session_end(struct api_ctx *ctx, const char *id, long long ms)
{
	struct status_probe p = { "SELECT status FROM sessions WHERE id = ?", id, not_live };

	return poll_until(ctx, (double)ms, WAIT_POLL_MS, probe_status, &p);
}

/* ------------------------------------------------------------------ requests */

enum sreq_rc { SREQ_DONE, SREQ_FAILED, SREQ_TIMEOUT, SREQ_DB, SREQ_QUOTA, SREQ_DEFERRED,
	       SREQ_KEY_SHARE, SREQ_NO_ROOM, SREQ_IN_PROGRESS };

/* How long a request its supervisor has taken (and is carrying out) is waited for
 * past session_request_timeout_ms, at most: its work is bounded by the supervisor's
 * budgets, a small part of this. */
#define SREQ_GRACE_SECONDS 10

struct sreq_answer {
	struct db_res *res;          /* the answered row */
	int http_status;             /* SREQ_FAILED */
	json_t *result;              /* result_json parsed, or NULL */
	const unsigned char *data;   /* result_data, or NULL */
	size_t len;
};

static void sreq_free(struct sreq_answer *a)
{
	db_res_free(a->res);
	json_decref(a->result);
	memset(a, 0, sizeof *a);
}

static int probe_request(struct api_ctx *ctx, void *arg)
{
	const long long *id = arg;
	struct db_res *res = db_query_p(ctx->db, "SELECT state FROM session_requests WHERE id = ?",
					db_i64(*id));
	int rc;

	if (res == NULL)
		return -1;
	rc = db_res_rows(res) == 0 || (strcmp(db_res_s(res, 0, "state"), "pending") != 0 &&
					strcmp(db_res_s(res, 0, "state"), "taken") != 0);
	db_res_free(res);
	return rc;
}

static enum sreq_rc sreq_read(struct db *db, long long id, struct sreq_answer *a)
{
	const char *state, *text;

	a->res = db_query_p(db,
			    "SELECT state, http_status, result_json, result_data FROM"
			    " session_requests WHERE id = ?",
			    db_i64(id));
	if (a->res == NULL || db_res_rows(a->res) == 0)
		return SREQ_DB;
	state = db_res_s(a->res, 0, "state");
	if (strcmp(state, "pending") == 0)
		return SREQ_TIMEOUT;
	if (strcmp(state, "taken") == 0)
		return SREQ_IN_PROGRESS;
	text = db_res_s(a->res, 0, "result_json");
	a->result = text ? json_loads(text, 0, NULL) : NULL;
	a->data = (const unsigned char *)db_res_s(a->res, 0, "result_data");
	a->len = db_res_l(a->res, 0, "result_data");
	a->http_status = (int)db_res_i(a->res, 0, "http_status", 0);
	return strcmp(state, "done") == 0 ? SREQ_DONE : SREQ_FAILED;
}

/* The re-dispatch of a handler whose request (r->wait.aux, its id) waited. */
static int resuming(const struct req *r)
{
	return r->wait.resumed && r->wait.aux > 0;
}

/* The waiter's deadline for an answer: session_request_timeout_ms rounded up to whole
 * seconds (config.c caps it at 30000, the waiter's WT_MAX_SECONDS: a request never
 * waits in a worker). */
static long long answer_seconds(const struct cfg *cfg)
{
	long long s = (cfg->session_request_timeout_ms + 999) / 1000;

	return s > WT_MAX_SECONDS ? WT_MAX_SECONDS : s;
}

static long long grace_seconds(const struct cfg *cfg)
{
	long long s = answer_seconds(cfg);

	return s > SREQ_GRACE_SECONDS ? SREQ_GRACE_SECONDS : s;
}

/* Inside a transaction: room for `bytes` + `extra` more on the key of session sid (the
 * key that owns it: output and purge count there too), then `bytes` counted on the
 * session and the key. 0, 1 no room, -1 error. */
static int charge(struct db *db, const struct cfg *cfg, const char *sid, long long bytes,
		  long long extra)
{
	struct db_res *res = db_query_p(db,
					"SELECT s.key_id, k.max_stored_mb FROM sessions s JOIN"
					" api_keys k ON k.id = s.key_id WHERE s.id = ?",
					db_str(sid));
	char key[64];
	long long mb;
	enum quota_rc q;

	if (res == NULL || db_res_rows(res) != 1) {
		db_res_free(res);
		return -1;
	}
	snprintf(key, sizeof key, "%s", db_res_s(res, 0, "key_id"));
	mb = db_res_s(res, 0, "max_stored_mb") ? db_res_i(res, 0, "max_stored_mb", 0) : -1;
	db_res_free(res);
	q = quota_stored_admit(db, cfg, key, mb, bytes + extra);
	if (q != QUOTA_OK)
		return q == QUOTA_STORED ? 1 : -1;
	if (bytes == 0)
		return 0;
	if (db_exec_p(db, "UPDATE sessions SET stored_bytes = stored_bytes + ? WHERE id = ?",
		      db_i64(bytes), db_str(sid)) < 0 ||
	    jd_add_stored(db, key, bytes) < 0)
		return -1;
	return 0;
}

struct sreq_tx {
	const struct cfg *cfg;
	const char *sid, *kind, *cid, *args;
	const void *data;
	size_t len;
	long long id;    /* out */
	enum sreq_rc rc; /* out */
};

/* db_tx body: the request row, its data charged on the session and the key. */
static enum db_tx_end sreq_insert_body(struct db *db, void *arg)
{
	struct sreq_tx *t = arg;
	struct db_res *res;
	int room = charge(db, t->cfg, t->sid, t->data ? (long long)t->len : 0, 0);

	t->rc = room == 1 ? SREQ_QUOTA : SREQ_DB;
	if (room == 1)
		return DB_TX_ROLLBACK;
	if (room != 0 ||
	    db_exec_p(db,
		      "INSERT INTO session_requests (session_id, kind, command_id, args_json, data)"
		      " VALUES (?, ?, ?, ?, ?)",
		      db_str(t->sid), db_str(t->kind), db_str(t->cid), db_str(t->args),
		      db_blob(t->data, t->data ? t->len : 0)) < 0 ||
	    (res = db_querya(db, "SELECT LAST_INSERT_ID() AS id", NULL, 0)) == NULL)
		return DB_TX_ERROR;
	t->id = db_res_i(res, 0, "id", -1);
	db_res_free(res);
	if (t->id < 1)
		return DB_TX_ERROR;
	t->rc = SREQ_DONE;
	return DB_TX_COMMIT;
}

/* Inserts one request (its data counted against the key's storage), retried whole
 * on a conflict: SREQ_DONE with *id, SREQ_QUOTA or SREQ_DB. */
static enum sreq_rc sreq_insert(struct api_ctx *ctx, const char *sid, const char *kind,
				const char *cid, json_t *args, const void *data, size_t len,
				long long *id)
{
	char *text = json_dumps(args, JSON_COMPACT);
	struct sreq_tx t = { ctx->cfg, sid, kind, cid, text, data, len, 0, SREQ_DB };

	if (text == NULL || db_tx(ctx->db, sreq_insert_body, &t) < 0)
		t.rc = SREQ_DB;
	free(text);
	*id = t.id;
	return t.rc;
}

/* The wait is over. A request nobody took is failed (and its payload erased) while
 * still pending, so that the supervisor's claim finds nothing and it never happens:
 * SREQ_TIMEOUT. One the supervisor answered keeps its answer. One it has taken and
 * not yet answered is under way: SREQ_IN_PROGRESS (the caller waits for it once more,
 * sreq_call). */
static enum sreq_rc sreq_settle(struct api_ctx *ctx, const char *sid, const char *kind,
				long long id, struct sreq_answer *a)
{
	int n = sreq_answer(ctx->db, id, "pending", "failed", 504,
			    "{\"error\":\"request_timeout\"}", NULL, 0);

	if (n < 0)
		return SREQ_DB;
	if (n == 1) {
		log_kv("warning", "session_request_timeout", "session", sid, "kind", kind,
		       (char *)NULL);
		return SREQ_TIMEOUT;
	}
	return sreq_read(ctx->db, id, a);
}

/* The request r->wait.aux waited its time: settled, or (taken by the supervisor, not
 * yet answered) waited for once more, up to SREQ_GRACE_SECONDS. */
static enum sreq_rc sreq_resume(struct api_ctx *ctx, struct req *r, const struct identity *who,
				const char *sid, const char *kind, struct sreq_answer *a)
{
	long long id = r->wait.aux;
	enum sreq_rc rc = sreq_settle(ctx, sid, kind, id, a);
	char idtext[24];

	if (rc != SREQ_IN_PROGRESS)
		return rc;
	sreq_free(a);
	snprintf(idtext, sizeof idtext, "%lld", id);
	if (wt_extend(r, who->key_id, &(struct wt_cond){ WT_REQUEST_DONE, idtext, 0, 0 },
		      grace_seconds(ctx->cfg)))
		return SREQ_DEFERRED;
	return sreq_read(ctx->db, id, a);
}

/* A request for the session's supervisor and its answer within
 * session_request_timeout_ms. First run: reserves its place on the wait board, inserts
 * it and hands the wait to the waiter (SREQ_DEFERRED: answer nothing now); the
 * re-dispatch (resuming) reads the answer of the request r->wait.aux and inserts
 * nothing. Without room on the board (the key holds its share, or the board is full)
 * nothing is inserted: SREQ_KEY_SHARE / SREQ_NO_ROOM, so that no key can hold
 * workers by sending requests nobody answers. Only without a board at all
 * (api_wait_capacity 0) does the worker poll the row itself, bounded the same. */
static enum sreq_rc sreq_call(struct api_ctx *ctx, struct req *r, const struct identity *who,
			      const char *sid, const char *kind, const char *cid, json_t *args,
			      const void *data, size_t len, struct sreq_answer *a)
{
	char idtext[24];
	long long id;
	enum sreq_rc rc;

	memset(a, 0, sizeof *a);
	if (resuming(r))
		return sreq_resume(ctx, r, who, sid, kind, a);
	switch (wt_reserve(r, who->key_id)) {
	case WT_KEY_SHARE:
		return SREQ_KEY_SHARE;
	case WT_NO_ROOM:
		return SREQ_NO_ROOM;
	default:
		break;
	}
	rc = sreq_insert(ctx, sid, kind, cid, args, data, len, &id);
	if (rc != SREQ_DONE) {
		wt_unreserve(r);
		return rc;
	}
	snprintf(idtext, sizeof idtext, "%lld", id);
	r->wait.aux = id;
	if (wt_defer_reserved(r, &(struct wt_cond){ WT_REQUEST_DONE, idtext, 0, 0 },
			      answer_seconds(ctx->cfg)))
		return SREQ_DEFERRED;
	r->wait.aux = 0;
	if (poll_until(ctx, (double)ctx->cfg->session_request_timeout_ms, REQ_POLL_MS,
		       probe_request, &id) < 0)
		return SREQ_DB;
	rc = sreq_settle(ctx, sid, kind, id, a);
	if (rc != SREQ_IN_PROGRESS)
		return rc;
	sreq_free(a);
	if (poll_until(ctx, 1000.0 * (double)grace_seconds(ctx->cfg), REQ_POLL_MS, probe_request,
		       &id) < 0)
		return SREQ_DB;
	return sreq_read(ctx->db, id, a);
}

/* Answers a request that did not end `done`. A supervisor's refusal carries its status
 * and {"error": code, "message": text, "field": f}: passed on when well formed. */
static void send_sreq_error(struct api_ctx *ctx, struct req *r, enum sreq_rc rc,
			    const struct sreq_answer *a)
{
	const char *code, *msg, *field;
	int st;

	if (rc == SREQ_DB) {
		route_db_error(ctx, r);
		return;
	}
	if (rc == SREQ_QUOTA) {
		http_send_error(r, 429, "quota_exceeded", QUOTA_STORED_MESSAGE " request (delete"
				" files, close sessions or wait for old ones to be purged)", NULL,
				"Retry-After: 60\r\n");
		return;
	}
	if (rc == SREQ_KEY_SHARE) {
		http_send_error(r, 429, "quota_exceeded",
				"this key already has api_wait_slots_per_key requests waiting for"
				" an answer: retry when one of them has been answered", NULL,
				"Retry-After: 1\r\n");
		return;
	}
	if (rc == SREQ_NO_ROOM) {
		http_send_error(r, 503, "service_unavailable",
				"the API instance holds api_wait_capacity waiting requests: retry"
				" later", NULL, "Retry-After: 1\r\n");
		return;
	}
	if (rc == SREQ_TIMEOUT) {
		http_send_error(r, 504, "request_timeout",
				"the session's runner host did not take the request in time: it"
				" will not be carried out", NULL, NULL);
		return;
	}
	if (rc == SREQ_IN_PROGRESS) {
		http_send_error(r, 504, "request_in_progress",
				"the session's runner host took the request and has not answered"
				" yet: it is being carried out, look at its effect later", NULL,
				NULL);
		return;
	}
	st = a->http_status;
	code = json_string_value(json_object_get(a->result, "error"));
	msg = json_string_value(json_object_get(a->result, "message"));
	field = json_string_value(json_object_get(a->result, "field"));
	if (!sreq_passthrough(st, code)) { /* only the answer codes of common/sreq.c */
		http_send_error(r, 502, "bad_gateway",
				"the session's runner host gave no usable answer", NULL, NULL);
		return;
	}
	if (msg == NULL || strlen(msg) > 512 || !util_utf8_valid((const unsigned char *)msg, strlen(msg)))
		msg = "the session's runner host refused the request";
	if (field != NULL && (strlen(field) > 160 || field[0] == '\0'))
		field = NULL;
	/* 429 stdin_backlog_full: nothing was taken, the command reads on: retry soon */
	http_send_error(r, st, code, msg, field, st == 429 ? "Retry-After: 1\r\n" : NULL);
}

/* Kinds answered by a supervisor need a ready session: 0, or -1 after a 409. */
static int need_ready(struct req *r, const struct sess *s)
{
	char msg[160];

	if (strcmp(s->v.status, "ready") == 0)
		return 0;
	if (strcmp(s->v.status, "starting") == 0) {
		http_send_error(r, 409, "session_not_ready",
				"the session is starting: retry when its status is ready (GET"
				" /v1/sessions/{id}?wait=S)", NULL, NULL);
		return -1;
	}
	snprintf(msg, sizeof msg, "the session has ended (status %s)", s->v.status);
	http_send_error(r, 409, "session_ended", msg, NULL, NULL);
	return -1;
}

/* ------------------------------------------------------------------ sessions */

enum create_rc { CR_OK, CR_QUOTA, CR_STORAGE, CR_NO_HOST, CR_NO_CAPACITY, CR_DB };

/* What a session keeps of its env: names, sizes and digests, never values. */
static char *env_meta(const json_t *env)
{
	json_t *arr = json_array(), *v;
	const char *k;
	char *text;

	json_object_foreach((json_t *)env, k, v) {
		unsigned char d[32];
		char hex[65];

		sha256_buf(json_string_value(v), json_string_length(v), d);
		util_hex(d, sizeof d, hex);
		json_array_append_new(arr, json_pack("{s:s, s:I, s:s}", "name", k, "size",
						     (json_int_t)json_string_length(v), "sha256",
						     hex));
	}
	text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return text;
}

static long long count1(struct db *db, const char *sql, const struct db_param *p, size_t n,
			const char *col)
{
	struct db_res *res = db_querya(db, sql, p, n);
	long long v;

	if (res == NULL)
		return -1;
	v = db_res_rows(res) ? db_res_i(res, 0, col, 0) : 0;
	db_res_free(res);
	return v;
}

/* Inside the transaction, its first statement: the live runner hosts' rows locked
 * (FOR UPDATE), so that creates count and insert one after another on one MariaDB
 * server and two of them cannot take the last slot (a transactional lock, released
 * by COMMIT or ROLLBACK on every path, also when the connection drops; GET_LOCK
 * would need its own release). Taken before any plain read, so the counts below
 * read a snapshot that includes every create committed before this one. Then the
 * key's live sessions against its max_sessions, its stored bytes against its quota
 * (the session's inputs: `incoming`), and the hosts' capacity against every live
 * session. Lock order: runner_hosts, then api_keys (a runner's heartbeat waits for
 * a create at most its few statements). */
static enum create_rc admit(struct db *db, const struct cfg *cfg, const struct identity *who,
			    long long incoming)
{
	struct db_res *res = db_querya(db, "SELECT max_sessions FROM runner_hosts WHERE seen_at"
				       " >= NOW(3) - INTERVAL 15 SECOND FOR UPDATE", NULL, 0);
	long long cap, n, hosts, host_cap = 0;
	enum quota_rc q;

	if (res == NULL)
		return CR_DB;
	hosts = (long long)db_res_rows(res);
	for (size_t i = 0; i < db_res_rows(res); i++)
		host_cap += db_res_i(res, i, "max_sessions", 0);
	db_res_free(res);
	res = db_query_p(db, "SELECT max_sessions FROM api_keys WHERE id = ? FOR UPDATE",
			 db_str(who->key_id));
	if (res == NULL)
		return CR_DB;
	cap = db_res_rows(res) && db_res_s(res, 0, "max_sessions")
		      ? db_res_i(res, 0, "max_sessions", 0)
		      : cfg->default_max_sessions;
	db_res_free(res);
	if (cap > 0) {
		n = count1(db, "SELECT COUNT(*) AS n FROM sessions WHERE key_id = ? AND status IN "
			       LIVE, DB_PARAMS(db_str(who->key_id)), "n");
		if (n < 0)
			return CR_DB;
		if (n >= cap)
			return CR_QUOTA;
	}
	q = quota_stored_admit(db, cfg, who->key_id, who->max_stored_mb, incoming);
	if (q != QUOTA_OK)
		return q == QUOTA_STORED ? CR_STORAGE : CR_DB;
	if (hosts == 0)
		return CR_NO_HOST;
	n = count1(db, "SELECT COUNT(*) AS n FROM sessions WHERE status IN " LIVE, NULL, 0, "n");
	if (n < 0)
		return CR_DB;
	return n >= host_cap ? CR_NO_CAPACITY : CR_OK;
}

/* The bytes a new session holds in the database: its env text and its files. */
static long long input_bytes(const struct sess_req *q)
{
	char *env = json_dumps(q->env, JSON_COMPACT);
	long long n = env ? (long long)strlen(env) : 0;

	if (env)
		explicit_bzero(env, strlen(env));
	free(env);
	for (size_t i = 0; i < q->nfiles; i++)
		n += (long long)q->files[i].len;
	return n;
}

static int insert_session(struct db *db, const struct identity *who, const struct sess_req *q,
			  const char *id)
{
	char *env = json_dumps(q->env, JSON_COMPACT);
	char *meta = json_dumps(q->metadata, JSON_COMPACT);
	char *envmeta = env_meta(q->env);
	long long rc = -1, stored = 0;

	if (env == NULL || meta == NULL || envmeta == NULL)
		goto out;
	stored = (long long)strlen(env);
	for (size_t i = 0; i < q->nfiles; i++)
		stored += (long long)q->files[i].len;
	rc = db_exec_p(db,
		       "INSERT INTO sessions (id, key_id, identity_namespace, tenant_id,"
		       " subject_type, subject_id, actor_type, actor_id, status, memory_mb, pids,"
		       " cpu_seconds, disk_mb, idle_seconds, max_seconds, network, env_json,"
		       " env_meta_json, metadata_json, profile_name, expires_at, stored_bytes)"
		       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'starting', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
		       " ?, NOW(3) + INTERVAL ? SECOND, ?)",
		       db_str(id), db_str(who->key_id), db_str(who->ns), db_str(who->tenant),
		       db_str(who->subject_type), db_str(who->subject_id),
		       db_str(who->has_actor_type ? who->actor_type : NULL),
		       db_str(who->has_actor_id ? who->actor_id : NULL),
		       db_i64(q->limits[SV_MEMORY_MB]), db_i64(q->limits[SV_PIDS]),
		       db_i64(q->limits[SV_CPU_SECONDS]), db_i64(q->limits[SV_DISK_MB]),
		       db_i64(q->idle_seconds), db_i64(q->max_seconds), db_i64(q->network),
		       db_str(env), db_str(envmeta), db_str(meta), db_str(q->profile),
		       db_i64(q->max_seconds), db_i64(stored));
	for (size_t i = 0; rc >= 0 && i < q->nfiles; i++)
		rc = db_exec_p(db,
			       "INSERT INTO session_files (session_id, path, content, executable)"
			       " VALUES (?, ?, ?, ?)",
			       db_str(id), db_str(q->files[i].path),
			       db_blob(q->files[i].data, q->files[i].len),
			       db_i64(q->files[i].executable));
	if (rc >= 0)
		rc = jd_add_stored(db, who->key_id, stored); /* purge takes it off again */
out:
	if (env)
		explicit_bzero(env, strlen(env)); /* env values are secrets */
	free(env);
	free(meta);
	free(envmeta);
	return rc < 0 ? -1 : 0;
}

struct create_tx {
	const struct cfg *cfg;
	const struct identity *who;
	const struct sess_req *q;
	char *id;          /* out: UUID_STR_LEN */
	enum create_rc rc; /* out */
};

/* db_tx body: admission and the session's rows. */
static enum db_tx_end create_body(struct db *db, void *arg)
{
	struct create_tx *t = arg;

	t->rc = admit(db, t->cfg, t->who, input_bytes(t->q));
	if (t->rc == CR_OK && (util_uuid7(t->id) < 0 || insert_session(db, t->who, t->q, t->id) < 0))
		t->rc = CR_DB;
	return t->rc == CR_OK ? DB_TX_COMMIT : t->rc == CR_DB ? DB_TX_ERROR : DB_TX_ROLLBACK;
}

static void send_session(struct api_ctx *ctx, struct req *r, const struct identity *who,
			 const char *id, int status, const char *extra)
{
	struct sess s;
	int rc = sess_load(ctx->db, who, id, &s);

	if (rc < 0)
		route_db_error(ctx, r);
	else if (rc == 0)
		send_no_session(r);
	else
		http_send_json(r, status, srender_session(&s.v), extra);
	sess_free(&s);
}

void h_sess_create(struct api_ctx *ctx, struct req *r, const struct identity *who,
		   const struct route_args *a)
{
	struct cfg eff = *ctx->cfg;
	struct sess_req q;
	struct val_err ve;
	char id[UUID_STR_LEN], loc[96];
	enum create_rc rc = CR_DB;

	(void)a;
	if (*r->query != '\0') {
		http_send_error(r, 400, "invalid_request", "POST /v1/sessions takes no query"
				" parameters", NULL, NULL);
		return;
	}
	if (need_json(r) < 0)
		return;
	val_key_limits(&eff, who->max_limits);
	if (sv_session(r->body, r->body_len, &eff, who->allow_network, &q, &ve) < 0 ||
	    sv_session_profile(&q, who->profiles, who->nprofiles, &ve) < 0) {
		send_val(r, &ve);
		sv_session_free(&q);
		return;
	}
	{
		struct create_tx t = { ctx->cfg, who, &q, id, CR_DB };
		rc = db_tx(ctx->db, create_body, &t) < 0 ? CR_DB : t.rc;
	}
	sv_session_free(&q);
	switch (rc) {
	case CR_OK:
		wake_send(ctx->cfg->runner_wake_socket); /* a local runner claims it now */
		log_kv("info", "session_created", "session", id, "key", who->key_id, (char *)NULL);
		snprintf(loc, sizeof loc, "Location: /v1/sessions/%s\r\n", id);
		send_session(ctx, r, who, id, 201, loc);
		return;
	case CR_QUOTA:
		http_send_error(r, 429, "quota_exceeded",
				"this key holds its maximum number of live sessions (max_sessions):"
				" close one first", NULL, "Retry-After: 5\r\n");
		return;
	case CR_STORAGE:
		http_send_error(r, 429, "quota_exceeded", QUOTA_STORED_MESSAGE " session (delete"
				" files, close sessions or wait for old ones to be purged)", NULL,
				"Retry-After: 60\r\n");
		return;
	case CR_NO_HOST:
		http_send_error(r, 503, "no_capacity",
				"no runner host is available to run a session; retry later", NULL,
				"Retry-After: 5\r\n");
		return;
	case CR_NO_CAPACITY:
		http_send_error(r, 503, "no_capacity",
				"every runner host holds its maximum number of sessions; retry later",
				NULL, "Retry-After: 5\r\n");
		return;
	default:
		route_db_error(ctx, r);
	}
}

void h_sess_get(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	static const char *const names[] = { "wait", NULL };
	char vals[1][128] = { "" };
	int present[1] = { 0 };
	long long wait;
	struct sess s;

	if (http_parse_query(r, names, vals, present) < 0 ||
	    parse_wait_value(r, present[0], vals[0], &wait) < 0)
		return;
	if (open_session(ctx, r, who, a->id, &s) < 0)
		return;
	/* the waiter runs this again when it is no longer starting (app/http/waiter.h) */
	if (wait > 0 && strcmp(s.v.status, "starting") == 0 &&
	    wt_defer(r, who->key_id, &(struct wt_cond){ WT_SESSION_READY, a->id, 0, 0 }, wait)) {
		sess_free(&s);
		return;
	}
	http_send_json(r, 200, srender_session(&s.v), NULL);
	sess_free(&s);
}

/* seq of a cursor session inside the caller's scope; -1 none, -2 error. */
static long long sess_cursor(struct db *db, const struct identity *who, const char *cursor)
{
	struct sess s;
	int rc = sess_load(db, who, cursor, &s);
	long long seq = rc > 0 ? db_res_i(s.res, 0, "seq", -1) : rc < 0 ? -2 : -1;

	sess_free(&s);
	return seq;
}

void h_sess_list(struct api_ctx *ctx, struct req *r, const struct identity *who,
		 const struct route_args *a)
{
	static const char *const names[] = { "status", "limit", "cursor", NULL };
	char vals[3][128] = { "", "", "" };
	int present[3] = { 0, 0, 0 };
	long long limit = LIST_DEFAULT, seq = 0;
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[12];
	struct db_res *res = NULL;
	struct sess_view *v = NULL;
	size_t n = 0, rows;

	(void)a;
	if (http_parse_query(r, names, vals, present) < 0)
		return;
	if (present[0] && !sv_session_status(vals[0])) {
		http_send_error(r, 400, "invalid_request", "status must be one of starting, ready,"
				" closed, expired, failed, lost", "status", NULL);
		return;
	}
	if (present[1] && util_parse_ll(vals[1], 1, LIST_MAX, &limit) < 0) {
		http_send_error(r, 400, "invalid_request", "limit must be an integer from 1 to 100",
				"limit", NULL);
		return;
	}
	if (present[2] && (seq = sess_cursor(ctx->db, who, vals[2])) < 0) {
		if (seq == -2)
			route_db_error(ctx, r);
		else
			http_send_error(r, 400, "invalid_request", "cursor is not valid", "cursor",
					NULL);
		return;
	}
	sb_adds(&sql, "SELECT " SESS_COLS " FROM sessions s WHERE 1 = 1");
	sb_adds(&sql, scope_sql(who));
	n = scope_params(who, p, n);
	if (present[0]) {
		sb_adds(&sql, " AND s.status = ?");
		p[n++] = db_str(vals[0]);
	}
	if (present[2]) {
		sb_adds(&sql, " AND s.seq < ?");
		p[n++] = db_i64(seq);
	}
	sb_adds(&sql, " ORDER BY s.seq DESC LIMIT ?");
	p[n++] = db_i64(limit + 1);
	if (!sql.failed)
		res = db_querya(ctx->db, sql.buf, p, n);
	sb_release(&sql);
	if (res == NULL) {
		route_db_error(ctx, r);
		return;
	}
	rows = db_res_rows(res) > (size_t)limit ? (size_t)limit : db_res_rows(res);
	v = calloc(rows ? rows : 1, sizeof *v);
	for (size_t i = 0; v && i < rows; i++)
		sess_from_row(res, i, &v[i]);
	http_send_json(r, 200,
		       v ? srender_session_list(v, rows,
						db_res_rows(res) > rows ? v[rows - 1].id : NULL)
			 : NULL,
		       NULL);
	free(v);
	db_res_free(res);
}

/* A session no host has taken yet is closed here (the dispatcher's claim is
 * conditional on runner_id IS NULL, so exactly one of the two wins); its queued
 * commands and pending requests end with it. 1 closed, 0 not such a session, -1. */
struct close_tx {
	const char *id;
	long long n; /* out: sessions closed (0, 1) */
};

static enum db_tx_end close_unclaimed_body(struct db *db, void *arg)
{
	struct close_tx *t = arg;
	const char *id = t->id;
	long long n, held = 0;

	n = db_exec_p(db,
		      "UPDATE sessions SET status = 'closed', close_requested = 1, ended_at = NOW(3),"
		      " end_reason = 'closed before a runner host started it', cleanup_status ="
		      " 'not_started' WHERE id = ? AND status = 'starting' AND"
		      " runner_id IS NULL AND runner_host IS NULL",
		      db_str(id));
	/* its inputs are erased and released only by the UPDATE that closed it */
	if (n == 1 && (jd_session_erase(db, id, JD_SESS_ENV | JD_SESS_FILES) < 0 ||
		       (held = jd_cmd_inputs(db, id, JD_CMDS_QUEUED, NULL)) < 0 ||
		       db_exec_p(db,
				 "UPDATE session_commands SET status = 'cancelled', exit_code = 137, stdin_open = 0,"
				 " finished_at = NOW(3), env_json = '{}', stdin = '', diagnostics_json"
				 " = '[\"the session ended before the command started\"]' WHERE"
				 " session_id = ? AND status = 'queued'",
				 db_str(id)) < 0 ||
		       jd_session_release(db, id, held) < 0 ||
		       sreq_fail_session(db, id, 0, 409,
					 "{\"error\":\"session_ended\",\"message\":\"the session"
					 " has ended (closed)\"}") < 0))
		n = -1;
	t->n = n;
	return n < 0 ? DB_TX_ERROR : DB_TX_COMMIT;
}

static int close_unclaimed(struct db *db, const char *id)
{
	struct close_tx t = { id, 0 };

	return db_tx(db, close_unclaimed_body, &t) < 0 ? -1 : (int)t.n;
}

/* close_requested = 1 and one `close` request, once. */
static enum db_tx_end request_close_body(struct db *db, void *arg)
{
	const char *id = arg;
	long long n = db_exec_p(db,
				"UPDATE sessions SET close_requested = 1 WHERE id = ? AND"
				" close_requested = 0 AND status IN " LIVE,
				db_str(id));

	if (n < 0 || (n == 1 && db_exec_p(db,
					  "INSERT INTO session_requests (session_id, kind, args_json)"
					  " VALUES (?, 'close', '{}')",
					  db_str(id)) < 0))
		return DB_TX_ERROR;
	return DB_TX_COMMIT;
}

static int request_close(struct db *db, const char *id)
{
	return db_tx(db, request_close_body, (void *)id);
}

void h_sess_close(struct api_ctx *ctx, struct req *r, const struct identity *who,
		  const struct route_args *a)
{
	struct sess s;
	int rc, live;

	if (open_session(ctx, r, who, a->id, &s) < 0)
		return;
	live = sv_session_live(s.v.status);
	sess_free(&s);
	if (!live) {
		send_session(ctx, r, who, a->id, 200, NULL); /* unchanged (or ended meanwhile) */
		return;
	}
	if (r->wait.resumed) {
		rc = 0; /* the re-dispatch: asked already, answered with the state as it is */
	} else {
		rc = close_unclaimed(ctx->db, a->id);
		if (rc == 0)
			rc = request_close(ctx->db, a->id);
		if (rc >= 0)
			log_kv("info", "session_close", "session", a->id, "key", who->key_id,
			       (char *)NULL);
		if (rc == 0 &&
		    wt_defer(r, who->key_id, &(struct wt_cond){ WT_SESSION_ENDED, a->id, 0, 0 },
			     answer_seconds(ctx->cfg)))
			return; /* answered on the re-dispatch, when it ended or at the deadline */
		/* No room on the wait board: answered at once (202 while it is live), as
		 * a long-poll is; only without a board at all does the worker wait. */
		if (rc == 0 && !wt_enabled())
			rc = wait_session_end(ctx, a->id, ctx->cfg->session_request_timeout_ms);
	}
	if (rc < 0) {
		route_db_error(ctx, r);
		return;
	}
	rc = sess_load(ctx->db, who, a->id, &s);
	if (rc <= 0) {
		sess_free(&s);
		if (rc < 0)
			route_db_error(ctx, r);
		else
			send_no_session(r);
		return;
	}
	http_send_json(r, sv_session_live(s.v.status) ? 202 : 200, srender_session(&s.v), NULL);
	sess_free(&s);
}

/* ------------------------------------------------------------------ commands */

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
		      " AND status IN " LIVE,
		      db_str(sid));
	if (n == 0) {
		t->rc = CM_NOT_RUNNING;
		return DB_TX_ROLLBACK;
	}
	if (n != 1 || (res = db_querya(db, "SELECT LAST_INSERT_ID() AS pid", NULL, 0)) == NULL)
		return DB_TX_ERROR;
	pid = db_res_i(res, 0, "pid", -1);
	db_res_free(res);
	n = count1(db, "SELECT COUNT(*) AS n FROM session_commands WHERE session_id = ? AND"
		       " status IN ('queued', 'running')", DB_PARAMS(db_str(sid)), "n");
	if (n < 0 || pid < 1)
		return DB_TX_ERROR;
	if (n >= SV_MAX_LIVE_COMMANDS) {
		t->rc = CM_TOO_MANY;
		return DB_TX_ROLLBACK;
	}
	/* its env and stdin, as a job's inputs; and a command needs room for at least
	 * one byte of output: a key with none left starts nothing */
	room = charge(db, t->cfg, sid, (long long)strlen(t->env) + (long long)q->stdin_len, 1);
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
	int rc = cmd_load(ctx->db, sid, cid, &res, &v);

	if (rc < 0)
		route_db_error(ctx, r);
	else if (rc == 0)
		send_no_command(r);
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

	if (open_session(ctx, r, who, a->id, &s) < 0)
		return;
	if (!sv_session_live(s.v.status)) {
		send_not_running(r, "session", s.v.status);
		sess_free(&s);
		return;
	}
	if (*r->query != '\0') {
		http_send_error(r, 400, "invalid_request", "this endpoint takes no query parameters",
				NULL, NULL);
		sess_free(&s);
		return;
	}
	if (need_json(r) < 0) {
		sess_free(&s);
		return;
	}
	val_key_limits(&eff, who->max_limits);
	if (sv_command(r->body, r->body_len, &eff, s.v.max_seconds, &q, &ve) < 0) {
		send_val(r, &ve);
		sv_command_free(&q);
		sess_free(&s);
		return;
	}
	rc = insert_command(ctx->db, ctx->cfg, a->id, &q, cid);
	sv_command_free(&q);
	sess_free(&s);
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
		http_send_error(r, 429, "quota_exceeded", QUOTA_STORED_MESSAGE " command (delete"
				" files, close sessions or wait for old ones to be purged)", NULL,
				"Retry-After: 60\r\n");
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

void h_cmd_list(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	static const char *const names[] = { "status", "pid", "limit", "cursor", NULL };
	char vals[4][128] = { "", "", "", "" };
	int present[4] = { 0, 0, 0, 0 };
	long long limit = LIST_DEFAULT, pid = 0, seq = 0;
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[8];
	struct db_res *res = NULL;
	struct cmd_view *v;
	struct sess s;
	size_t n = 0, rows;

	if (open_session(ctx, r, who, a->id, &s) < 0)
		return;
	sess_free(&s);
	if (http_parse_query(r, names, vals, present) < 0)
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
	if (present[2] && util_parse_ll(vals[2], 1, LIST_MAX, &limit) < 0) {
		http_send_error(r, 400, "invalid_request", "limit must be an integer from 1 to 100",
				"limit", NULL);
		return;
	}
	if (present[3]) {
		struct cmd_view cv;
		int rc = cmd_load(ctx->db, a->id, vals[3], &res, &cv);
		if (rc < 0) {
			route_db_error(ctx, r);
			return;
		}
		seq = rc ? db_res_i(res, 0, "seq", 0) : 0;
		db_res_free(res);
		res = NULL;
		if (rc == 0) {
			http_send_error(r, 400, "invalid_request", "cursor is not valid", "cursor",
					NULL);
			return;
		}
	}
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
	sb_adds(&sql, " ORDER BY c.seq DESC LIMIT ?");
	p[n++] = db_i64(limit + 1);
	if (!sql.failed)
		res = db_querya(ctx->db, sql.buf, p, n);
	sb_release(&sql);
	if (res == NULL) {
		route_db_error(ctx, r);
		return;
	}
	rows = db_res_rows(res) > (size_t)limit ? (size_t)limit : db_res_rows(res);
	v = calloc(rows ? rows : 1, sizeof *v);
	for (size_t i = 0; v && i < rows; i++)
		cmd_from_row(res, i, &v[i]);
	http_send_json(r, 200,
		       v ? srender_command_list(v, rows,
						db_res_rows(res) > rows ? v[rows - 1].id : NULL)
			 : NULL,
		       NULL);
	free(v);
	db_res_free(res);
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
	struct sess s;

	if (open_session(ctx, r, who, a->id, &s) < 0)
		return;
	sess_free(&s);
	if (http_parse_query(r, names, vals, present) < 0 ||
	    parse_wait_value(r, present[0], vals[0], &wait) < 0)
		return;
	cid_of(a, cid, sizeof cid);
	rc = cmd_load(ctx->db, a->id, cid, &res, &v);
	if (rc == 1 && wait > 0 && !cmd_ended(v.status) &&
	    wt_defer(r, who->key_id, &(struct wt_cond){ WT_COMMAND_DONE, cid, 0, 0 }, wait)) {
		db_res_free(res);
		return;
	}
	if (rc < 0)
		route_db_error(ctx, r);
	else if (rc == 0)
		send_no_command(r);
	else
		http_send_json(r, 200, srender_command(&v), NULL);
	db_res_free(res);
}

/* The session (ready) and its command cid for a request about it: 0, or -1 after
 * answering. */
static int open_command(struct api_ctx *ctx, struct req *r, const struct identity *who,
			const struct route_args *a, char *cid, size_t cidn, struct cmd_view *v,
			struct db_res **res)
{
	struct sess s;
	int rc;

	*res = NULL;
	if (open_session(ctx, r, who, a->id, &s) < 0)
		return -1;
	cid_of(a, cid, cidn);
	rc = cmd_load(ctx->db, a->id, cid, res, v);
	if (rc <= 0) {
		if (rc < 0)
			route_db_error(ctx, r);
		else
			send_no_command(r);
		sess_free(&s);
		return -1;
	}
	rc = need_ready(r, &s);
	sess_free(&s);
	if (rc == 0 && cmd_ended(v->status)) {
		send_not_running(r, "command", v->status);
		rc = -1;
	}
	if (rc < 0) {
		db_res_free(*res);
		*res = NULL;
	}
	return rc;
}

void h_cmd_kill(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	char cid[UUID_STR_LEN + 1];
	struct sreq_answer ans;
	struct val_err ve;
	struct db_res *res;
	struct cmd_view v;
	enum sreq_rc rc;
	int signo;
	json_t *args;

	if (r->body_len > 0 && need_json(r) < 0)
		return;
	if (sv_kill(r->body, r->body_len, &signo, &ve) < 0) {
		send_val(r, &ve);
		return;
	}
	if (resuming(r))
		cid_of(a, cid, sizeof cid); /* the first run checked it: answer for it */
	else if (open_command(ctx, r, who, a, cid, sizeof cid, &v, &res) < 0)
		return;
	else
		db_res_free(res);
	args = json_pack("{s:i}", "signal", signo);
	rc = sreq_call(ctx, r, who, a->id, "kill", cid, args, NULL, 0, &ans);
	json_decref(args);
	if (rc == SREQ_DEFERRED)
		; /* answered on the re-dispatch */
	else if (rc == SREQ_DONE)
		send_command(ctx, r, a->id, cid, 202, NULL);
	else
		send_sreq_error(ctx, r, rc, &ans);
	sreq_free(&ans);
}

void h_cmd_stdin(struct api_ctx *ctx, struct req *r, const struct identity *who,
		 const struct route_args *a)
{
	char cid[UUID_STR_LEN + 1];
	struct sreq_answer ans;
	struct val_err ve;
	struct db_res *res;
	struct cmd_view v;
	unsigned char *data;
	size_t len;
	int close_after;
	enum sreq_rc rc;
	json_t *args;

	if (need_json(r) < 0)
		return;
	if (sv_stdin(r->body, r->body_len, ctx->cfg->max_files_bytes, &data, &len, &close_after,
		     &ve) < 0) {
		send_val(r, &ve);
		return;
	}
	if (resuming(r)) {
		cid_of(a, cid, sizeof cid);
	} else if (open_command(ctx, r, who, a, cid, sizeof cid, &v, &res) < 0) {
		free(data);
		return;
	} else {
		db_res_free(res);
	}
	args = json_pack("{s:b}", "close", close_after);
	rc = sreq_call(ctx, r, who, a->id, "stdin", cid, args, data, len, &ans);
	json_decref(args);
	if (data)
		explicit_bzero(data, len);
	free(data);
	if (rc == SREQ_DEFERRED)
		;
	else if (rc == SREQ_DONE)
		send_command(ctx, r, a->id, cid, 200, NULL);
	else
		send_sreq_error(ctx, r, rc, &ans);
	sreq_free(&ans);
}

void h_cmd_output(struct api_ctx *ctx, struct req *r, const struct identity *who,
		  const struct route_args *a)
{
	static const char *const names[] = { "stream", "offset", "limit", "encoding", "wait",
					     NULL };
	char vals[5][128] = { "", "", "", "", "" }, cid[UUID_STR_LEN + 1];
	int present[5] = { 0, 0, 0, 0, 0 }, stream = JD_STDOUT, rc;
	long long off = 0, limit = OUTPUT_LIMIT_DEFAULT, wait, total;
	unsigned char *data = NULL;
	size_t len = 0;
	struct db_res *res = NULL;
	struct cmd_view v;
	struct sess s;

	if (open_session(ctx, r, who, a->id, &s) < 0)
		return;
	sess_free(&s);
	if (http_parse_query(r, names, vals, present) < 0 ||
	    parse_wait_value(r, present[4], vals[4], &wait) < 0)
		return;
	if (present[0] && strcmp(vals[0], "stdout") != 0 && strcmp(vals[0], "stderr") != 0) {
		http_send_error(r, 400, "invalid_request", "stream must be stdout or stderr",
				"stream", NULL);
		return;
	}
	stream = present[0] && strcmp(vals[0], "stderr") == 0 ? JD_STDERR : JD_STDOUT;
	if (present[1] && util_parse_ll(vals[1], 0, (1LL << 50), &off) < 0) {
		http_send_error(r, 400, "invalid_request",
				"offset must be a non-negative integer byte offset", "offset", NULL);
		return;
	}
	if (present[2] && util_parse_ll(vals[2], 1, OUTPUT_LIMIT_MAX, &limit) < 0) {
		http_send_error(r, 400, "invalid_request", "limit must be an integer from 1 to 1048576",
				"limit", NULL);
		return;
	}
	if (present[3] && strcmp(vals[3], "base64") != 0 && strcmp(vals[3], "text") != 0) {
		http_send_error(r, 400, "invalid_request", "encoding must be 'text' or 'base64'",
				"encoding", NULL);
		return;
	}
	cid_of(a, cid, sizeof cid);
	for (;;) {
		long long lim;

		rc = cmd_load(ctx->db, a->id, cid, &res, &v);
		if (rc <= 0)
			break;
		total = stream == JD_STDOUT ? v.stdout_bytes : v.stderr_bytes;
		/* Never past what the row counts: a chunk is counted once it is whole. */
		lim = total - off < limit ? total - off : limit;
		len = 0;
		if (lim > 0 && jd_read_output(ctx->db, cid, stream, off, lim, &data, &len) < 0) {
			rc = -1;
			break;
		}
		if (len > 0 || cmd_ended(v.status) || wait == 0 ||
		    !wt_defer(r, who->key_id,
			      &(struct wt_cond){ WT_COMMAND_OUTPUT, cid, stream, off }, wait))
			break;
		free(data);
		db_res_free(res);
		return; /* the waiter runs this again when there is more (app/http/waiter.h) */
	}
	if (rc < 0)
		route_db_error(ctx, r);
	else if (rc == 0)
		send_no_command(r);
	else
		http_send_json(r, 200,
			       srender_output(stream == JD_STDOUT ? "stdout" : "stderr", off,
					      data ? data : (const unsigned char *)"", len,
					      stream == JD_STDOUT ? v.stdout_bytes : v.stderr_bytes,
					      cmd_ended(v.status),
					      present[3] && strcmp(vals[3], "base64") == 0),
			       NULL);
	free(data);
	db_res_free(res);
}

/* ------------------------------------------------------------------ files */

/* The decoded, checked {path*} of .../files/{path*}: 0, or -1 after a 400. */
static int file_path(struct api_ctx *ctx, struct req *r, const struct route_args *a, char *path,
		     size_t n)
{
	const char *why = NULL;

	if (http_pct_decode(a->rest, strlen(a->rest), path, n) < 0 ||
	    (why = sv_file_path(ctx->cfg, path)) != NULL) {
		char msg[200];
		snprintf(msg, sizeof msg, "path %s", why ? why : "is not a valid percent-encoded path");
		http_send_error(r, 400, "invalid_request", msg, "path", NULL);
		return -1;
	}
	return 0;
}

/* A supervisor's file listing, checked and rebuilt: only {path, size, sha256?} of
 * well-formed entries (sha256 null: not hashed, the host's budget ran out), at most
 * session_list_max_files, and `cut` when it names one of the two budgets. NULL if
 * malformed. */
static json_t *listing(const json_t *res, long long max)
{
	json_t *files = json_object_get(res, "files"), *out, *e, *o;
	int truncated = json_is_true(json_object_get(res, "truncated"));
	const char *cut = json_string_value(json_object_get(res, "cut"));
	size_t i;

	if (!json_is_array(files) || (out = json_array()) == NULL)
		return NULL;
	json_array_foreach(files, i, e) {
		json_t *p = json_object_get(e, "path"), *sz = json_object_get(e, "size"),
		       *h = json_object_get(e, "sha256"), *item;

		if ((long long)i >= max) {
			truncated = 1;
			break;
		}
		if (!json_is_string(p) || !json_is_integer(sz) || json_integer_value(sz) < 0 ||
		    (h != NULL && !json_is_null(h) &&
		     (!json_is_string(h) || json_string_length(h) != 64))) {
			json_decref(out);
			return NULL;
		}
		item = json_pack("{s:O, s:O}", "path", p, "size", sz);
		if (item != NULL && h != NULL)
			json_object_set(item, "sha256", h); /* a digest, or null: not hashed */
		json_array_append_new(out, item);
	}
	o = json_pack("{s:o, s:b}", "files", out, "truncated", truncated);
	if (o != NULL && cut != NULL &&
	    (strcmp(cut, "session_host_bytes") == 0 || strcmp(cut, "session_host_ms") == 0))
		json_object_set_new(o, "cut", json_string(cut));
	return o;
}

void h_files_list(struct api_ctx *ctx, struct req *r, const struct identity *who,
		  const struct route_args *a)
{
	static const char *const names[] = { "root", "recursive", "sha256", NULL };
	char vals[3][128] = { "", "", "" };
	int present[3] = { 0, 0, 0 }, recursive = 1, digests = 0;
	struct sreq_answer ans;
	enum sreq_rc rc;
	struct sess s;
	json_t *args, *out;
	const char *why;

	if (resuming(r)) {
		memset(&s, 0, sizeof s);
		s.v.status = "ready"; /* the first run saw it so and sent the request */
	} else if (open_session(ctx, r, who, a->id, &s) < 0) {
		return;
	}
	if (http_parse_query(r, names, vals, present) < 0) {
		sess_free(&s);
		return;
	}
	if (present[0] && vals[0][0] != '\0' && (why = sv_file_path(ctx->cfg, vals[0])) != NULL) {
		char msg[200];
		snprintf(msg, sizeof msg, "root %s", why);
		http_send_error(r, 400, "invalid_request", msg, "root", NULL);
	} else if (present[1] && sv_bool(vals[1], &recursive) < 0) {
		http_send_error(r, 400, "invalid_request", "recursive must be true or false",
				"recursive", NULL);
	} else if (present[2] && sv_bool(vals[2], &digests) < 0) {
		http_send_error(r, 400, "invalid_request", "sha256 must be true or false", "sha256",
				NULL);
	} else if (need_ready(r, &s) == 0) {
		sess_free(&s);
		args = json_pack("{s:s, s:b, s:b}", "root", vals[0], "recursive", recursive,
				 "sha256", digests);
		rc = sreq_call(ctx, r, who, a->id, "file_list", NULL, args, NULL, 0, &ans);
		json_decref(args);
		if (rc == SREQ_DEFERRED) {
			; /* answered on the re-dispatch */
		} else if (rc == SREQ_DONE) {
			out = listing(ans.result, ctx->cfg->session_list_max_files);
			if (out == NULL)
				http_send_error(r, 502, "bad_gateway", "the session's runner host"
						" gave a malformed file list", NULL, NULL);
			else
				http_send_json(r, 200, out, NULL);
		} else {
			send_sreq_error(ctx, r, rc, &ans);
		}
		sreq_free(&ans);
		return;
	}
	sess_free(&s);
}

/* The session of a file request, ready, and the checked path: 0 or -1 (answered). */
static int open_file(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     const struct route_args *a, char *path, size_t n)
{
	struct sess s;
	int rc;

	if (resuming(r))
		return file_path(ctx, r, a, path, n); /* the first run checked the rest */
	if (open_session(ctx, r, who, a->id, &s) < 0)
		return -1;
	rc = file_path(ctx, r, a, path, n);
	if (rc == 0)
		rc = need_ready(r, &s);
	sess_free(&s);
	return rc;
}

void h_file_get(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	char path[1100];
	struct sreq_answer ans;
	enum sreq_rc rc;
	json_t *args;

	if (*r->query != '\0') {
		http_send_error(r, 400, "invalid_request", "this endpoint takes no query parameters",
				NULL, NULL);
		return;
	}
	if (open_file(ctx, r, who, a, path, sizeof path) < 0)
		return;
	args = json_pack("{s:s}", "path", path);
	rc = sreq_call(ctx, r, who, a->id, "file_get", NULL, args, NULL, 0, &ans);
	json_decref(args);
	if (rc == SREQ_DEFERRED)
		; /* answered on the re-dispatch */
	else if (rc != SREQ_DONE)
		send_sreq_error(ctx, r, rc, &ans);
	else if ((long long)ans.len > ctx->cfg->session_file_max_bytes)
		http_send_error(r, 502, "bad_gateway", "the session's runner host sent more than"
				" session_file_max_bytes", NULL, NULL);
	else
		http_send_bytes(r, 200, "application/octet-stream", ans.data ? (const void *)ans.data : "",
				ans.len, NULL);
	sreq_free(&ans);
}

void h_file_put(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	static const char *const names[] = { "mode", NULL };
	char vals[1][128] = { "" }, path[1100];
	int present[1] = { 0 }, mode = 0644, status;
	struct sreq_answer ans;
	enum sreq_rc rc;
	json_t *args;

	if (http_parse_query(r, names, vals, present) < 0)
		return;
	if (present[0] && sv_file_mode(vals[0], &mode) < 0) {
		http_send_error(r, 400, "invalid_request", "mode must be octal permissions from 0 to"
				" 0777 (e.g. 0644)", "mode", NULL);
		return;
	}
	if ((long long)r->body_len > ctx->cfg->session_file_max_bytes) {
		http_send_error(r, 413, "payload_too_large", "the file exceeds session_file_max_bytes",
				NULL, NULL);
		return;
	}
	if (open_file(ctx, r, who, a, path, sizeof path) < 0)
		return;
	args = json_pack("{s:s, s:i}", "path", path, "mode", mode);
	rc = sreq_call(ctx, r, who, a->id, "file_put", NULL, args, r->body ? r->body : "",
		       r->body_len, &ans);
	json_decref(args);
	if (rc == SREQ_DEFERRED) {
		; /* answered on the re-dispatch */
	} else if (rc == SREQ_DONE) {
		/* 200 when the supervisor says it replaced a file, else 201. */
		status = json_is_false(json_object_get(ans.result, "created")) ? 200 : 201;
		http_send_json(r, status, json_pack("{s:s, s:I}", "path", path, "size",
						    (json_int_t)r->body_len), NULL);
	} else {
		send_sreq_error(ctx, r, rc, &ans);
	}
	sreq_free(&ans);
}

void h_file_delete(struct api_ctx *ctx, struct req *r, const struct identity *who,
		   const struct route_args *a)
{
	static const char head[] = "Status: 204 No Content\r\nCache-Control: no-store\r\n\r\n";
	char path[1100];
	struct sreq_answer ans;
	enum sreq_rc rc;
	json_t *args;

	if (*r->query != '\0') {
		http_send_error(r, 400, "invalid_request", "this endpoint takes no query parameters",
				NULL, NULL);
		return;
	}
	if (open_file(ctx, r, who, a, path, sizeof path) < 0)
		return;
	args = json_pack("{s:s}", "path", path);
	rc = sreq_call(ctx, r, who, a->id, "file_delete", NULL, args, NULL, 0, &ans);
	json_decref(args);
	if (rc == SREQ_DEFERRED) {
		; /* answered on the re-dispatch */
	} else if (rc == SREQ_DONE) {
		FCGX_PutStr(head, (int)sizeof head - 1, r->fcgi->out);
		r->status = 204;
		r->sent_bytes = 0;
	} else {
		send_sreq_error(ctx, r, rc, &ans);
	}
	sreq_free(&ans);
}
