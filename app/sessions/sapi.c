/* The session API's common ground (sapi.h): the scoped reads of sessions and
 * commands, their rows as views, the shared answers and a list's page. */
#include "sapi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_util.h"
#include "quota.h"
#include "routes.h"
#include "svalidate.h"
#include "util.h"

#define WAIT_MAX_SECONDS 30
#define LIST_DEFAULT 20
#define LIST_MAX 100

#define SCOPE_TENANT " AND s.identity_namespace = ? AND s.tenant_id = ?"
#define SCOPE_SUBJECT SCOPE_TENANT " AND s.subject_type = ? AND s.subject_id = ?"

/* ------------------------------------------------------------------ rows */

const char *sapi_scope_sql(const struct identity *who)
{
	return who->tenant_admin ? SCOPE_TENANT : SCOPE_SUBJECT;
}

void sapi_sess_row(const struct db_res *res, size_t i, struct sess_view *v)
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

void sapi_cmd_row(const struct db_res *res, size_t i, struct cmd_view *v)
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
int sapi_sess_load(struct db *db, const struct identity *who, const char *id, struct sess *s)
{
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[8];
	size_t n = 0;

	memset(s, 0, sizeof *s);
	if (!util_is_uuid(id))
		return 0;
	sb_adds(&sql, "SELECT " SESS_COLS " FROM sessions s WHERE s.id = ?");
	sb_adds(&sql, sapi_scope_sql(who));
	p[n++] = db_str(id);
	n = auth_scope_params(who, p, n);
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
	sapi_sess_row(s->res, 0, &s->v);
	return 1;
}

void sapi_sess_free(struct sess *s)
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
			 " " SESS_LIVE " AND last_activity_at < NOW(3) - INTERVAL 1 SECOND",
			 db_str(id)) < 0
		       ? -1
		       : 0;
}

/* Reads the caller's session id and marks the activity: 0, or -1 after answering
 * (404 for a session outside the scope, exactly as for an unknown one). */
int sapi_open_session(struct api_ctx *ctx, struct req *r, const struct identity *who,
		      const char *id, struct sess *s)
{
	int rc = sapi_sess_load(ctx->db, who, id, s);

	if (rc == 0) {
		sapi_no_session(r);
		return -1;
	}
	if (rc < 0 || sess_touch(ctx->db, id) < 0) {
		sapi_sess_free(s);
		route_db_error(ctx, r);
		return -1;
	}
	return 0;
}

/* The command cid of session sid (already proven visible): 1, 0 none, -1 error. */
int sapi_cmd_load(struct db *db, const char *sid, const char *cid, struct db_res **res,
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
	sapi_cmd_row(*res, 0, v);
	return 1;
}

int sapi_cmd_ended(const char *status)
{
	return status == NULL || sv_command_terminal(status);
}

/* {cid} of .../commands/{cid}[/...]: the segment a->rest starts with. */
void sapi_cid_of(const struct route_args *a, char *cid, size_t n)
{
	size_t len = a->rest ? strcspn(a->rest, "/") : 0;

	if (len >= n)
		len = 0; /* too long to be an id: matches nothing */
	memcpy(cid, a->rest ? a->rest : "", len);
	cid[len] = '\0';
}

long long sapi_count(struct db *db, const char *sql, const struct db_param *p, size_t n,
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

/* ------------------------------------------------------------------ answers */

/* The same body for an unknown session and another identity's. */
void sapi_no_session(struct req *r)
{
	http_send_error(r, 404, "not_found", "no such session", NULL, NULL);
}

void sapi_no_command(struct req *r)
{
	http_send_error(r, 404, "not_found", "no such command", NULL, NULL);
}

void sapi_send_val(struct req *r, const struct val_err *ve)
{
	http_send_error(r, ve->status, ve->code, ve->message, ve->field, NULL);
}

int sapi_wait_param(struct req *r, int present, const char *val, long long *wait)
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

int sapi_need_json(struct req *r)
{
	if (http_is_json_type(r->content_type))
		return 0;
	http_send_error(r, 415, "unsupported_media_type", "Content-Type must be application/json",
			NULL, NULL);
	return -1;
}

int sapi_open_query(struct api_ctx *ctx, struct req *r, const struct identity *who,
		    const char *id, const char *const *names, char (*vals)[128], int *present,
		    int wait_at, long long *wait)
{
	struct sess s;

	if (sapi_open_session(ctx, r, who, id, &s) < 0)
		return -1;
	sapi_sess_free(&s);
	if (http_parse_query(r, names, vals, present) < 0)
		return -1;
	return wait_at < 0 ? 0 : sapi_wait_param(r, present[wait_at], vals[wait_at], wait);
}

void sapi_send_no_room(struct req *r, const char *what)
{
	char msg[512];

	snprintf(msg, sizeof msg, QUOTA_STORED_MESSAGE " %s (delete files, close sessions or wait"
		 " for old ones to be purged)", what);
	http_send_error(r, 429, "quota_exceeded", msg, NULL, "Retry-After: 60\r\n");
}

/* ------------------------------------------------------------------ lists */

int sapi_limit_param(struct req *r, int present, const char *val, long long *limit)
{
	*limit = LIST_DEFAULT;
	if (present && util_parse_ll(val, 1, LIST_MAX, limit) < 0) {
		http_send_error(r, 400, "invalid_request", "limit must be an integer from 1 to 100",
				"limit", NULL);
		return -1;
	}
	return 0;
}

void sapi_bad_cursor(struct req *r)
{
	http_send_error(r, 400, "invalid_request", "cursor is not valid", "cursor", NULL);
}

void sapi_send_page(struct api_ctx *ctx, struct req *r, struct strbuf *sql, struct db_param *p,
		    size_t n, const char *order, long long limit, sapi_page_fn *render)
{
	struct db_res *res = NULL;
	const char *next;
	size_t rows;

	sb_adds(sql, order);
	p[n++] = db_i64(limit + 1);
	if (!sql->failed)
		res = db_querya(ctx->db, sql->buf, p, n);
	sb_release(sql);
	if (res == NULL) {
		route_db_error(ctx, r);
		return;
	}
	rows = db_res_rows(res) > (size_t)limit ? (size_t)limit : db_res_rows(res);
	next = db_res_rows(res) > rows ? db_res_s(res, rows - 1, "id") : NULL;
	http_send_json(r, 200, render(res, rows, next), NULL);
	db_res_free(res);
}
