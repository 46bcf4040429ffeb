/* Requests relayed to a session's supervisor (srelay.h): the session_requests row,
 * its data charged on the session and the key, the wait for its answer (the waiter,
 * or polling without a board), its settling at the deadline, and the answers a
 * request that did not end `done` gets. */
#include "srelay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "jobdata.h"
#include "log.h"
#include "quota.h"
#include "routes.h"
#include "sreq.h"
#include "svalidate.h"
#include "util.h"
#include "waiter.h"

#define REQ_POLL_MS 5
#define WAIT_POLL_MS 15

/* How long a request its supervisor has taken (and is carrying out) is waited for
 * past session_request_timeout_ms, at most: its work is bounded by the supervisor's
 * budgets, a small part of this. */
#define SREQ_GRACE_SECONDS 10

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

/* Waits up to ms while the session is starting or ready (close). */
int srelay_wait_session_end(struct api_ctx *ctx, const char *id, long long ms)
{
	struct status_probe p = { "SELECT status FROM sessions WHERE id = ?", id, not_live };

	return poll_until(ctx, (double)ms, WAIT_POLL_MS, probe_status, &p);
}

/* ------------------------------------------------------------------ requests */

void srelay_free(struct srelay_answer *a)
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

static enum srelay_rc sreq_read(struct db *db, long long id, struct srelay_answer *a)
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

enum srelay_rc srelay_read(struct db *db, long long id, struct srelay_answer *a)
{
	memset(a, 0, sizeof *a);
	return sreq_read(db, id, a);
}

/* The re-dispatch of a handler whose request (r->wait.aux, its id) waited. */
int srelay_resuming(const struct req *r)
{
	return r->wait.resumed && r->wait.aux > 0;
}

/* The waiter's deadline for an answer: session_request_timeout_ms rounded up to whole
 * seconds (config.c caps it at 30000, the waiter's WT_MAX_SECONDS: a request never
 * waits in a worker). */
long long srelay_answer_seconds(const struct cfg *cfg)
{
	long long s = (cfg->session_request_timeout_ms + 999) / 1000;

	return s > WT_MAX_SECONDS ? WT_MAX_SECONDS : s;
}

static long long grace_seconds(const struct cfg *cfg)
{
	long long s = srelay_answer_seconds(cfg);

	return s > SREQ_GRACE_SECONDS ? SREQ_GRACE_SECONDS : s;
}

/* Inside a transaction: room for `bytes` + `extra` more on the key of session sid (the
 * key that owns it: output and purge count there too), then `bytes` counted on the
 * session and the key. 0, 1 no room, -1 error. */
int srelay_charge(struct db *db, const struct cfg *cfg, const char *sid, long long bytes,
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
	enum srelay_rc rc; /* out */
};

/* db_tx body: the request row, its data charged on the session and the key. */
static enum db_tx_end sreq_insert_body(struct db *db, void *arg)
{
	struct sreq_tx *t = arg;
	struct db_res *res;
	int room = srelay_charge(db, t->cfg, t->sid, t->data ? (long long)t->len : 0, 0);

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
static enum srelay_rc sreq_insert(struct api_ctx *ctx, const char *sid, const char *kind,
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

enum srelay_rc srelay_insert(struct api_ctx *ctx, const char *sid, const char *kind,
			     json_t *args, long long *id)
{
	return sreq_insert(ctx, sid, kind, NULL, args, NULL, 0, id);
}

/* The wait is over. A request nobody took is failed (and its payload erased) while
 * still pending, so that the supervisor's claim finds nothing and it never happens:
 * SREQ_TIMEOUT. One the supervisor answered keeps its answer. One it has taken and
 * not yet answered is under way: SREQ_IN_PROGRESS (the caller waits for it once more,
 * srelay_call). */
static enum srelay_rc sreq_settle(struct api_ctx *ctx, const char *sid, const char *kind,
				   long long id, struct srelay_answer *a)
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
static enum srelay_rc sreq_resume(struct api_ctx *ctx, struct req *r,
				   const struct identity *who, const char *sid, const char *kind,
				   struct srelay_answer *a)
{
	long long id = r->wait.aux;
	enum srelay_rc rc = sreq_settle(ctx, sid, kind, id, a);
	char idtext[24];

	if (rc != SREQ_IN_PROGRESS)
		return rc;
	srelay_free(a);
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
enum srelay_rc srelay_call(struct api_ctx *ctx, struct req *r, const struct identity *who,
			   const char *sid, const char *kind, const char *cid, json_t *args,
			   const void *data, size_t len, struct srelay_answer *a)
{
	char idtext[24];
	long long id;
	enum srelay_rc rc;

	memset(a, 0, sizeof *a);
	if (srelay_resuming(r))
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
			      srelay_answer_seconds(ctx->cfg)))
		return SREQ_DEFERRED;
	r->wait.aux = 0;
	if (poll_until(ctx, (double)ctx->cfg->session_request_timeout_ms, REQ_POLL_MS,
		       probe_request, &id) < 0)
		return SREQ_DB;
	rc = sreq_settle(ctx, sid, kind, id, a);
	if (rc != SREQ_IN_PROGRESS)
		return rc;
	srelay_free(a);
	if (poll_until(ctx, 1000.0 * (double)grace_seconds(ctx->cfg), REQ_POLL_MS, probe_request,
		       &id) < 0)
		return SREQ_DB;
	return sreq_read(ctx->db, id, a);
}

/* The answers of a request that did not reach its supervisor, or not in time. */
static const struct {
	enum srelay_rc rc;
	int status;
	const char *code, *message, *extra;
} fixed_answers[] = {
	{ SREQ_KEY_SHARE, 429, "quota_exceeded",
	  "this key already has api_wait_slots_per_key requests waiting for an answer: retry"
	  " when one of them has been answered", "Retry-After: 1\r\n" },
	{ SREQ_NO_ROOM, 503, "service_unavailable",
	  "the API instance holds api_wait_capacity waiting requests: retry later",
	  "Retry-After: 1\r\n" },
	{ SREQ_TIMEOUT, 504, "request_timeout",
	  "the session's runner host did not take the request in time: it will not be carried"
	  " out", NULL },
	{ SREQ_IN_PROGRESS, 504, "request_in_progress",
	  "the session's runner host took the request and has not answered yet: it is being"
	  " carried out, look at its effect later", NULL },
};

/* Answers a request that did not end `done`. A supervisor's refusal carries its status
 * and {"error": code, "message": text, "field": f}: passed on when well formed. */
void srelay_send_error(struct api_ctx *ctx, struct req *r, enum srelay_rc rc,
		       const struct srelay_answer *a)
{
	const char *code, *msg, *field;
	int st;

	if (rc == SREQ_DB) {
		route_db_error(ctx, r);
		return;
	}
	if (rc == SREQ_QUOTA) {
		sapi_send_no_room(r, "request");
		return;
	}
	for (size_t i = 0; i < sizeof fixed_answers / sizeof fixed_answers[0]; i++) {
		if (fixed_answers[i].rc == rc) {
			http_send_error(r, fixed_answers[i].status, fixed_answers[i].code,
					fixed_answers[i].message, NULL, fixed_answers[i].extra);
			return;
		}
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
int srelay_need_ready(struct req *r, const struct sess *s)
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
