/* The session API: handlers and their SQL (docs/SESSIONS.md is the contract). This
 * file owns a session's life as the API sees it: create (admission against the key's
 * and the hosts' capacity, the session's rows), list, get (?wait for ready) and close.
 * Commands are app/sessions/scommands.c, the file API app/sessions/sfileops.c; what
 * they share is app/sessions/sapi.c (scoped reads, common answers, list pages) and
 * app/sessions/srelay.c (requests to the supervisor and their waits).
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
 * Scope: every handler starts with sapi_open_session(), the one scoped read of a
 * session (identity compared byte for byte in SQL, utf8mb4_nopad_bin columns); a
 * command is only ever looked up inside a session that read proved visible. Env
 * values and stdin are written, never read back.
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "jobdata.h"
#include "log.h"
#include "quota.h"
#include "routes.h"
#include "sapi.h"
#include "srelay.h"
#include "srender.h"
#include "sreq.h"
#include "strbuf.h"
#include "svalidate.h"
#include "util.h"
#include "waiter.h"
#include "wake.h"

enum create_rc { CR_OK, CR_QUOTA, CR_STORAGE, CR_NO_HOST, CR_NO_CAPACITY, CR_DB };

/* Inside the transaction, its first statement: the live runner hosts' rows locked
 * (FOR UPDATE), so that creates count and insert one after another on one MariaDB
 * server and two of them cannot take the last slot (a transactional lock, released
 * by COMMIT or ROLLBACK on every path, also when the connection drops; GET_LOCK
 * would need its own release). Taken before any plain read, so the counts below
 * read a snapshot that includes every create committed before this one. Then the
 * key's live sessions against its max_sessions, its stored bytes against its quota
 * (the session's inputs: `incoming`), and the hosts' capacity against every live
 * session. Lock order: runner_hosts, then api_keys (a runner's heartbeat waits for
 * a create at most its few statements). The key's row is written (jd_key_lock), so
 * max_sessions is exact on a Galera cluster too; the hosts' capacity is exact on one
 * server and bounded on a cluster (each node may admit one more for the last slot:
 * such a session waits for a free slot, or fails at session_start_timeout_seconds). */
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
	/* the key's row written (jd_key_lock): max_sessions exact on a Galera cluster too */
	if (jd_key_lock(db, who->key_id) < 0)
		return CR_DB;
	res = db_query_p(db, "SELECT max_sessions FROM api_keys WHERE id = ?",
			 db_str(who->key_id));
	if (res == NULL)
		return CR_DB;
	cap = db_res_rows(res) && db_res_s(res, 0, "max_sessions")
		      ? db_res_i(res, 0, "max_sessions", 0)
		      : cfg->default_max_sessions;
	db_res_free(res);
	if (cap > 0) {
		n = sapi_count(db, "SELECT COUNT(*) AS n FROM sessions WHERE key_id = ? AND"
				   " status IN " SESS_LIVE, DB_PARAMS(db_str(who->key_id)), "n");
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
	n = sapi_count(db, "SELECT COUNT(*) AS n FROM sessions WHERE status IN " SESS_LIVE, NULL,
		       0, "n");
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
	char *envmeta = val_env_meta(q->env);
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
	const struct sess_hook *hook; /* or NULL */
	char *id;          /* out: UUID_STR_LEN */
	enum create_rc rc; /* out */
};

/* db_tx body: admission and the session's rows (and the hook's). */
static enum db_tx_end create_body(struct db *db, void *arg)
{
	struct create_tx *t = arg;

	t->rc = admit(db, t->cfg, t->who, input_bytes(t->q));
	if (t->rc == CR_OK && (util_uuid7(t->id) < 0 || insert_session(db, t->who, t->q, t->id) < 0 ||
			       (t->hook && t->hook->fn(db, t->id, t->hook->arg) < 0)))
		t->rc = CR_DB;
	return t->rc == CR_OK ? DB_TX_COMMIT : t->rc == CR_DB ? DB_TX_ERROR : DB_TX_ROLLBACK;
}

static void send_session(struct api_ctx *ctx, struct req *r, const struct identity *who,
			 const char *id, int status, const char *extra)
{
	struct sess s;
	int rc = sapi_sess_load(ctx->db, who, id, &s);

	if (rc < 0)
		route_db_error(ctx, r);
	else if (rc == 0)
		sapi_no_session(r);
	else
		http_send_json(r, status, srender_session(&s.v), extra);
	sapi_sess_free(&s);
}

void h_sess_create(struct api_ctx *ctx, struct req *r, const struct identity *who,
		   const struct route_args *a)
{
	(void)a;
	sess_create_hooked(ctx, r, who, NULL);
}

void sess_create_hooked(struct api_ctx *ctx, struct req *r, const struct identity *who,
			const struct sess_hook *hook)
{
	struct cfg eff = *ctx->cfg;
	struct sess_req q;
	struct val_err ve;
	char id[UUID_STR_LEN], loc[96];
	enum create_rc rc = CR_DB;

	if (*r->query != '\0') {
		http_send_error(r, 400, "invalid_request", "POST /v1/sessions takes no query"
				" parameters", NULL, NULL);
		return;
	}
	if (sapi_need_json(r) < 0)
		return;
	val_key_limits(&eff, who->max_limits);
	if (sv_session(r->body, r->body_len, &eff, who->allow_network, &q, &ve) < 0 ||
	    sv_session_profile(&q, who->profiles, who->nprofiles, &ve) < 0) {
		sapi_send_val(r, &ve);
		sv_session_free(&q);
		return;
	}
	{
		struct create_tx t = { ctx->cfg, who, &q, hook, id, CR_DB };
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
		sapi_send_no_room(r, "session");
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
	    sapi_wait_param(r, present[0], vals[0], &wait) < 0)
		return;
	if (sapi_open_session(ctx, r, who, a->id, &s) < 0)
		return;
	/* the waiter runs this again when it is no longer starting (app/http/waiter.h) */
	if (wait > 0 && strcmp(s.v.status, "starting") == 0 &&
	    wt_defer(r, who->key_id, &(struct wt_cond){ WT_SESSION_READY, a->id, 0, 0 }, wait)) {
		sapi_sess_free(&s);
		return;
	}
	http_send_json(r, 200, srender_session(&s.v), NULL);
	sapi_sess_free(&s);
}

/* seq of a cursor session inside the caller's scope; -1 none, -2 error. */
static long long sess_cursor(struct db *db, const struct identity *who, const char *cursor)
{
	struct sess s;
	int rc = sapi_sess_load(db, who, cursor, &s);
	long long seq = rc > 0 ? db_res_i(s.res, 0, "seq", -1) : rc < 0 ? -2 : -1;

	sapi_sess_free(&s);
	return seq;
}

/* One page of sessions as the list answer. */
static json_t *session_page(const struct db_res *res, size_t rows, const char *next)
{
	struct sess_view *v = calloc(rows ? rows : 1, sizeof *v);
	json_t *o;

	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < rows; i++)
		sapi_sess_row(res, i, &v[i]);
	o = srender_session_list(v, rows, next);
	free(v);
	return o;
}

void h_sess_list(struct api_ctx *ctx, struct req *r, const struct identity *who,
		 const struct route_args *a)
{
	static const char *const names[] = { "status", "limit", "cursor", NULL };
	char vals[3][128] = { "", "", "" };
	int present[3] = { 0, 0, 0 };
	long long limit, seq = 0;
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[12];
	size_t n = 0;

	(void)a;
	if (http_parse_query(r, names, vals, present) < 0)
		return;
	if (present[0] && !sv_session_status(vals[0])) {
		http_send_error(r, 400, "invalid_request", "status must be one of starting, ready,"
				" closed, expired, failed, lost", "status", NULL);
		return;
	}
	if (sapi_limit_param(r, present[1], vals[1], &limit) < 0)
		return;
	if (present[2] && (seq = sess_cursor(ctx->db, who, vals[2])) < 0) {
		if (seq == -2)
			route_db_error(ctx, r);
		else
			sapi_bad_cursor(r);
		return;
	}
	sb_adds(&sql, "SELECT " SESS_COLS " FROM sessions s WHERE 1 = 1");
	sb_adds(&sql, sapi_scope_sql(who));
	n = auth_scope_params(who, p, n);
	if (present[0]) {
		sb_adds(&sql, " AND s.status = ?");
		p[n++] = db_str(vals[0]);
	}
	if (present[2]) {
		sb_adds(&sql, " AND s.seq < ?");
		p[n++] = db_i64(seq);
	}
	sapi_send_page(ctx, r, &sql, p, n, " ORDER BY s.seq DESC LIMIT ?", limit, session_page);
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
	long long n;

	n = db_exec_p(db,
		      "UPDATE sessions SET status = 'closed', close_requested = 1, ended_at = NOW(3),"
		      " end_reason = 'closed before a runner host started it', cleanup_status ="
		      " 'not_started' WHERE id = ? AND status = 'starting' AND"
		      " runner_id IS NULL AND runner_host IS NULL",
		      db_str(id));
	/* its inputs are erased and released only by the UPDATE that closed it */
	if (n == 1 && sreq_end_unstarted(db, id) < 0)
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
				" close_requested = 0 AND status IN " SESS_LIVE,
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

	if (sapi_open_session(ctx, r, who, a->id, &s) < 0)
		return;
	live = sv_session_live(s.v.status);
	sapi_sess_free(&s);
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
			     srelay_answer_seconds(ctx->cfg)))
			return; /* answered on the re-dispatch, when it ended or at the deadline */
		/* No room on the wait board: answered at once (202 while it is live), as
		 * a long-poll is; only without a board at all does the worker wait. */
		if (rc == 0 && !wt_enabled())
			rc = srelay_wait_session_end(ctx, a->id,
						     ctx->cfg->session_request_timeout_ms);
	}
	if (rc < 0) {
		route_db_error(ctx, r);
		return;
	}
	rc = sapi_sess_load(ctx->db, who, a->id, &s);
	if (rc <= 0) {
		sapi_sess_free(&s);
		if (rc < 0)
			route_db_error(ctx, r);
		else
			sapi_no_session(r);
		return;
	}
	http_send_json(r, sv_session_live(s.v.status) ? 202 : 200, srender_session(&s.v), NULL);
	sapi_sess_free(&s);
}
