/* What every handler of the session API shares: the one scoped read of a session
 * (sapi_open_session: the caller's identity compared in SQL, another identity's
 * session a 404 exactly as an unknown one), the read of a command inside a session
 * proven visible, the rows as views (app/sessions/srender.h), the answers they all
 * give (404s, 415, a bad ?wait) and a list's page (?limit, ?cursor, ORDER BY seq and
 * the next cursor). */
#ifndef SANDBOX_SAPI_H
#define SANDBOX_SAPI_H

#include <jansson.h>
#include <stddef.h>

#include "auth.h"
#include "db.h"
#include "http.h"
#include "router.h"
#include "srender.h"
#include "strbuf.h"

/* The session statuses that are alive, as SQL. */
#define SESS_LIVE "('starting', 'ready')"
#define SESS_TS(col) "DATE_FORMAT(" col ", '%Y-%m-%dT%H:%i:%s.%fZ')"

/* The columns sapi_sess_row reads (sessions s). */
#define SESS_COLS                                                                        \
	"s.seq, s.id, s.status, " SESS_TS("s.created_at") " AS created_at, "              \
	SESS_TS("s.ready_at") " AS ready_at, " SESS_TS("s.expires_at") " AS expires_at, " \
	SESS_TS("s.last_activity_at") " AS last_activity_at, " SESS_TS("s.ended_at")      \
	" AS ended_at, s.identity_namespace,"                                             \
	" s.tenant_id, s.subject_type, s.subject_id, s.actor_type, s.actor_id, s.memory_mb," \
	" s.pids, s.cpu_seconds, s.disk_mb, s.idle_seconds, s.max_seconds, s.network,"    \
	" s.metadata_json, s.env_meta_json, s.profile_name, s.profile_digest, s.runner_id," \
	" s.failure_json, s.end_reason, s.cleanup_status, s.close_requested,"           \
	" s.host_read_bytes, s.host_cpu_ms"

/* The columns sapi_cmd_row reads (session_commands c). */
#define CMD_COLS                                                                         \
	"c.seq, c.id, c.session_id, c.pid, c.status, c.command, c.argv_json, c.cwd, c.tag," \
	" c.exit_code, c.`signal`, c.diagnostics_json, " SESS_TS("c.created_at")          \
	" AS created_at, " SESS_TS("c.started_at") " AS started_at, "                     \
	SESS_TS("c.finished_at") " AS finished_at,"                                       \
	" c.timeout_seconds, c.output_bytes, c.stdout_bytes, c.stderr_bytes,"              \
	" c.stdout_truncated, c.stderr_truncated, c.stdin_open"

/* A session proven visible to the caller: the row and its view (pointing into it). */
struct sess {
	struct db_res *res;
	struct sess_view v;
};

/* The caller's scope as SQL (" AND s.identity_namespace = ? ..."), whose parameters
 * auth_scope_params appends. */
const char *sapi_scope_sql(const struct identity *who);
/* Row i of a SESS_COLS / CMD_COLS result as a view (pointing into res). */
void sapi_sess_row(const struct db_res *res, size_t i, struct sess_view *v);
void sapi_cmd_row(const struct db_res *res, size_t i, struct cmd_view *v);
/* The one scoped read of a session: 1 found, 0 not visible, -1 error. */
int sapi_sess_load(struct db *db, const struct identity *who, const char *id, struct sess *s);
void sapi_sess_free(struct sess *s);
/* Reads the caller's session id and marks the activity: 0, or -1 after answering
 * (404 for a session outside the scope, exactly as for an unknown one). */
int sapi_open_session(struct api_ctx *ctx, struct req *r, const struct identity *who,
		      const char *id, struct sess *s);
/* The command cid of session sid (already proven visible): 1, 0 none, -1 error. */
int sapi_cmd_load(struct db *db, const char *sid, const char *cid, struct db_res **res,
		  struct cmd_view *v);
/* A command's status that means it has ended (NULL too: no row). */
int sapi_cmd_ended(const char *status);
/* {cid} of .../commands/{cid}[/...]: the segment a->rest starts with. */
void sapi_cid_of(const struct route_args *a, char *cid, size_t n);
/* Column col of the first row of a COUNT query (0 without rows), -1 on error. */
long long sapi_count(struct db *db, const char *sql, const struct db_param *p, size_t n,
		    const char *col);

void sapi_no_session(struct req *r);
void sapi_no_command(struct req *r);
/* A validation error (app/jobs/validate.h) as the answer. */
void sapi_send_val(struct req *r, const struct val_err *ve);
/* ?wait=S (0 when absent): 0, or -1 after a 400. */
int sapi_wait_param(struct req *r, int present, const char *val, long long *wait);
/* The 429 for a write the key's stored bytes leave no room for: what = "session",
 * "command" or "request" (app/jobs/quota.h's QUOTA_STORED_MESSAGE). */
void sapi_send_no_room(struct req *r, const char *what);
/* 0 when the body is JSON, or -1 after a 415. */
int sapi_need_json(struct req *r);
/* A read about session id's commands: the session opened (sapi_open_session, its
 * row released again), then the query parsed (http_parse_query) and, when wait_at >=
 * 0, vals[wait_at] checked as ?wait (sapi_wait_param). 0, or -1 after answering. */
int sapi_open_query(struct api_ctx *ctx, struct req *r, const struct identity *who,
		    const char *id, const char *const *names, char (*vals)[128], int *present,
		    int wait_at, long long *wait);

/* ?limit= of a list (20 when absent, 1 to 100): 0, or -1 after a 400. */
int sapi_limit_param(struct req *r, int present, const char *val, long long *limit);
/* The 400 for a ?cursor= that names no row of the list. */
void sapi_bad_cursor(struct req *r);
/* A page as its list answer: rows of res, next the cursor (or NULL: last page). */
typedef json_t *sapi_page_fn(const struct db_res *res, size_t rows, const char *next);
/* Ends a list query with `order` (" ORDER BY x.seq DESC LIMIT ?", bound to limit +
 * 1: one row more says there is a next page), runs it (p[0 .. n) bound, room for one
 * more) and answers 200 with render's page, whose cursor is its last row's id.
 * Releases sql. */
void sapi_send_page(struct api_ctx *ctx, struct req *r, struct strbuf *sql, struct db_param *p,
		    size_t n, const char *order, long long limit, sapi_page_fn *render);

#endif
