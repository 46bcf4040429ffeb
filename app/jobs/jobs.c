/* The job store's reads for the API, always scoped to the caller's identity: one job,
 * a page, a list of ids (with their artifacts and inline output), an artifact, a
 * stream's byte range; and a job's cancel. New jobs are app/jobs/submit.c's. */
#include "jobs.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobdata.h"
#include "jobsql.h"
#include "strbuf.h"

/* Scope fragments: fixed SQL text; the identity goes in as parameters. */
#define SCOPE_TENANT " AND j.identity_namespace = ? AND j.tenant_id = ?"
#define SCOPE_SUBJECT SCOPE_TENANT " AND j.subject_type = ? AND j.subject_id = ?"

/* The webhook attempts of a job with a callback_url (schema 009, at most
 * callback_max_attempts rows, by primary key) as one JSON array text, NULL for none. */
#define CB_ATTEMPTS_LOG                                                                   \
	"IF(j.callback_url IS NULL, NULL, (SELECT JSON_ARRAYAGG(JSON_OBJECT('attempt',"      \
	" a.attempt, 'at', " TS("a.started_at") ", 'status', a.http_status, 'error',"       \
	" a.error, 'duration_ms', a.duration_ms, 'outcome', a.outcome) ORDER BY a.attempt)" \
	" FROM job_callback_attempts a WHERE a.job_id = j.id))"

/* Read by column name (view_text below, limit_specs[].name for the limits). */
#define JOB_COLS                                                                          \
	"j.id, j.state, " TS("j.created_at") " AS created_at, " TS("j.started_at")          \
	" AS started_at, " TS("j.finished_at") " AS finished_at,"                           \
	" j.identity_namespace, j.tenant_id, j.subject_type, j.subject_id, j.actor_type,"  \
	" j.actor_id, j.command, j.argv_json, j.cwd, j.artifacts_dir, j.metadata_json,"    \
	" j.profile_digest, j.profile_name, j.wall_seconds, j.cpu_seconds, j.memory_mb, j.pids,"           \
	" j.output_bytes, j.disk_mb, j.network, j.cancel_requested,"                       \
	" r.job_id AS result_job_id, r.exit_code, r.term_signal, r.stdout_bytes,"          \
	" r.stderr_bytes, r.stdout_truncated, r.stderr_truncated, r.diagnostics_json,"     \
	" r.failure_json, r.wall_ms, r.cpu_ms, r.memory_peak_bytes, j.callback_url,"       \
	" c.state AS cb_state, c.attempts AS cb_attempts, c.last_status AS cb_last_status," \
	" c.last_error AS cb_last_error, " TS("c.delivered_at") " AS cb_delivered_at,"     \
	" j.compile_result_json, " CB_ATTEMPTS_LOG " AS cb_attempts_log"

#define JOB_FROM                                                                          \
	" FROM jobs j LEFT JOIN job_results r ON r.job_id = j.id"                         \
	" LEFT JOIN job_callbacks c ON c.job_id = j.id"

static const char *scope_sql(const struct identity *who)
{
	return who->tenant_admin ? SCOPE_TENANT : SCOPE_SUBJECT;
}

/* head + " WHERE j.id = ?" + the caller's scope + tail, for job id: the one way a
 * single job is read, so no read forgets the scope. NULL on an error. */
static struct db_res *query_scoped(struct db *db, const struct identity *who, const char *head,
				   const char *id, const char *tail)
{
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[8];
	size_t n = 0;
	struct db_res *res = NULL;

	sb_adds(&sql, head);
	sb_adds(&sql, " WHERE j.id = ?");
	sb_adds(&sql, scope_sql(who));
	sb_adds(&sql, tail);
	p[n++] = db_str(id);
	n = auth_scope_params(who, p, n);
	if (!sql.failed)
		res = db_querya(db, sql.buf, p, n);
	sb_release(&sql);
	return res;
}

/* Statements name a fixed number of ids (unused ones bind NULL, which matches
 * nothing), so one statement text serves every page, and a page (at most 100 jobs)
 * is one query. IN_IDS plus the other parameters stays within common/db.c's
 * DB_MAX_PARAMS (128). */
#define IN_IDS 100 /* = the largest page: one query per page */

/* " IN (?, ?, ...)" with IN_IDS placeholders. */
static void in_ids(struct strbuf *sql)
{
	sb_adds(sql, " IN (?");
	for (size_t i = 1; i < IN_IDS; i++)
		sb_adds(sql, ", ?");
	sb_adds(sql, ")");
}

static struct job_view *find_view(struct job_set *s, const char *id)
{
	for (size_t i = 0; id && i < s->n; i++)
		if (strcmp(s->v[i].id, id) == 0)
			return &s->v[i];
	return NULL;
}

/* Runs `select` (a SELECT ending in "WHERE <col>", its own parameters in pre) for
 * ids, IN_IDS at a time, and passes each result to fn. 0, or -1 on an error. */
static int query_ids(struct db *db, const char *select, const char *order,
		     const struct db_param *pre, size_t npre, const char *const *ids, size_t n,
		     int (*fn)(struct job_set *s, struct db_res *res), struct job_set *s)
{
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[IN_IDS + 4];
	int rc = 0;

	sb_adds(&sql, select);
	in_ids(&sql);
	sb_adds(&sql, order);
	if (sql.failed) {
		sb_release(&sql);
		return -1;
	}
	for (size_t at = 0; rc == 0 && at < n; at += IN_IDS) {
		struct db_res *res;
		size_t np;

		for (np = 0; np < npre; np++)
			p[np] = pre[np];
		for (size_t i = 0; i < IN_IDS; i++)
			p[np++] = db_str(at + i < n ? ids[at + i] : NULL);
		res = db_querya(db, sql.buf, p, np);
		rc = res == NULL ? -1 : fn(s, res);
	}
	sb_release(&sql);
	return rc;
}

/* Keeps res (the views point into it) in the set. */
static int keep_res(struct job_set *s, struct db_res *res)
{
	struct db_res **more = realloc(s->held, (s->nheld + 1) * sizeof *more);

	if (more == NULL) {
		db_res_free(res);
		return -1;
	}
	s->held = more;
	s->held[s->nheld++] = res;
	return 0;
}

/* Artifact rows (ordered by job, then path) into s->art, each job's run hung on its
 * view. */
static int take_artifacts(struct job_set *s, struct db_res *res)
{
	size_t rows = db_res_rows(res), base = s->nart;
	struct art_view *grown;

	if (keep_res(s, res) < 0)
		return -1;
	if (rows == 0)
		return 0;
	grown = realloc(s->art, (base + rows) * sizeof *grown);
	if (grown == NULL)
		return -1;
	s->art = grown;
	for (size_t i = 0; i < rows; i++) {
		struct art_view *a = &s->art[base + i];

		a->job_id = db_res_s(res, i, "job_id");
		a->path = db_res_s(res, i, "path");
		a->path_len = db_res_l(res, i, "path");
		a->size = db_res_i(res, i, "size", 0);
		a->sha256 = db_res_s(res, i, "sha256");
	}
	s->nart = base + rows;
	return 0;
}

/* Hangs each job's run of s->art on its view (rows of one job are adjacent). The
 * array may have moved while it grew, so this runs once it is complete. */
static void link_artifacts(struct job_set *s)
{
	for (size_t i = 0; i < s->nart;) {
		size_t j = i;
		struct job_view *v;

		while (j < s->nart && strcmp(s->art[j].job_id, s->art[i].job_id) == 0)
			j++;
		v = find_view(s, s->art[i].job_id);
		if (v != NULL) {
			v->arts = &s->art[i];
			v->narts = j - i;
		}
		i = j;
	}
}

#define ART_SELECT "SELECT job_id, path, size, sha256 FROM job_artifacts WHERE job_id"
#define ART_ORDER " ORDER BY job_id, path"

/* The artifacts of every finished job of the set: one query per IN_IDS jobs. */
static int load_artifacts(struct db *db, struct job_set *s)
{
	const char **ids = calloc(s->n ? s->n : 1, sizeof *ids);
	size_t n = 0;
	int rc;

	if (ids == NULL)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].has_result)
			ids[n++] = s->v[i].id;
	rc = n ? query_ids(db, ART_SELECT, ART_ORDER, NULL, 0, ids, n, take_artifacts, s) : 0;
	free(ids);
	if (rc == 0)
		link_artifacts(s);
	return rc;
}

/* Keeps buf (a view points into it) in the set; frees it on failure. */
static int keep_buf(struct job_set *s, unsigned char *buf)
{
	unsigned char **more = realloc(s->bufs, (s->nbufs + 1) * sizeof *more);

	if (more == NULL) {
		free(buf);
		return -1;
	}
	s->bufs = more;
	s->bufs[s->nbufs++] = buf;
	return 0;
}

/* One stream's prefix from rows [i, j) of res (its chunks below the cap, in order):
 * a single chunk is pointed at in the result, several (output stored live, as it
 * came) are joined in a buffer kept in the set. */
static int take_prefix(struct job_set *s, struct db_res *res, size_t i, size_t j)
{
	struct job_view *v = find_view(s, db_res_s(res, i, "job_id"));
	const unsigned char *data = (const unsigned char *)db_res_s(res, i, "data");
	size_t len = db_res_l(res, i, "data");

	if (v == NULL)
		return 0;
	if (j - i > 1) {
		unsigned char *buf;

		len = 0;
		for (size_t k = i; k < j; k++)
			len += db_res_l(res, k, "data");
		buf = malloc(len + 1);
		if (buf == NULL || keep_buf(s, buf) < 0)
			return -1;
		len = 0;
		for (size_t k = i; k < j; k++) {
			memcpy(buf + len, db_res_s(res, k, "data"), db_res_l(res, k, "data"));
			len += db_res_l(res, k, "data");
		}
		data = buf;
	}
	if (db_res_i(res, i, "stream", 0) == JD_STDOUT)
		v->out = data, v->out_len = len;
	else
		v->err = data, v->err_len = len;
	return 0;
}

/* Prefixes of both streams (rows ordered by job, stream, offset): the views point
 * into the result or into buffers of the set. */
static int take_prefixes(struct job_set *s, struct db_res *res)
{
	size_t rows = db_res_rows(res);

	if (keep_res(s, res) < 0)
		return -1;
	for (size_t i = 0, j; i < rows; i = j) {
		for (j = i + 1; j < rows &&
				strcmp(db_res_s(res, j, "job_id"), db_res_s(res, i, "job_id")) == 0 &&
				db_res_i(res, j, "stream", 0) == db_res_i(res, i, "stream", 0);
		     j++)
			;
		if (take_prefix(s, res, i, j) < 0)
			return -1;
	}
	return 0;
}

/* A prefix longer than a chunk: read chunk-wise, kept in s->bufs. */
static int read_prefix(struct db *db, struct job_set *s, struct job_view *v, int stream,
		       long long cap)
{
	unsigned char *buf;
	size_t len;

	if (jd_read_output(db, v->id, stream, 0, cap, &buf, &len) < 0 || keep_buf(s, buf) < 0)
		return -1;
	if (stream == JD_STDOUT)
		v->out = buf, v->out_len = len;
	else
		v->err = buf, v->err_len = len;
	return 0;
}

/* The first `cap` bytes of both streams of every finished job with output. */
static int load_outputs(struct db *db, struct job_set *s, long long cap)
{
	const char **ids;
	size_t n = 0;
	int rc = 0;

	if (cap <= 0)
		return 0;
	ids = calloc(s->n ? s->n : 1, sizeof *ids);
	if (ids == NULL)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].has_result && (s->v[i].out_total > 0 || s->v[i].err_total > 0))
			ids[n++] = s->v[i].id;
	if (n > 0 && cap <= JD_CHUNK_BYTES) {
		/* The chunks below the cap, only their part below it (a stream stored live
		 * has many small chunks; one stored at the end, one chunk of up to 1 MiB). */
		struct db_param pre[2] = { db_i64(cap), db_i64(cap) };
		rc = query_ids(db,
			       "SELECT job_id, stream, SUBSTRING(data, 1, ? - off) AS data"
			       " FROM job_output WHERE off < ? AND job_id",
			       " ORDER BY job_id, stream, off", pre, 2, ids, n, take_prefixes, s);
	} else {
		for (size_t i = 0; rc == 0 && i < n; i++) {
			struct job_view *v = find_view(s, ids[i]);
			rc = read_prefix(db, s, v, JD_STDOUT, cap) < 0 ||
					     read_prefix(db, s, v, JD_STDERR, cap) < 0
				     ? -1
				     : 0;
		}
	}
	free(ids);
	return rc;
}

void jobs_set_free(struct job_set *s)
{
	for (size_t i = 0; i < s->nheld; i++)
		db_res_free(s->held[i]);
	for (size_t i = 0; i < s->nbufs; i++)
		free(s->bufs[i]);
	free(s->held);
	free(s->bufs);
	free(s->art);
	free(s->v);
	memset(s, 0, sizeof *s);
}

/* Where each text column of JOB_COLS lands in a job_view (NULL for SQL NULL). */
#define VIEW_TEXT(col, field) { col, offsetof(struct job_view, field) }
static const struct {
	const char *col;
	size_t off;
} view_text[] = {
	VIEW_TEXT("id", id),
	VIEW_TEXT("created_at", created_at),
	VIEW_TEXT("started_at", started_at),
	VIEW_TEXT("finished_at", finished_at),
	VIEW_TEXT("identity_namespace", ns),
	VIEW_TEXT("tenant_id", tenant),
	VIEW_TEXT("subject_type", subject_type),
	VIEW_TEXT("subject_id", subject_id),
	VIEW_TEXT("actor_type", actor_type),
	VIEW_TEXT("actor_id", actor_id),
	VIEW_TEXT("command", command),
	VIEW_TEXT("argv_json", argv_json),
	VIEW_TEXT("cwd", cwd),
	VIEW_TEXT("artifacts_dir", artifacts_dir),
	VIEW_TEXT("metadata_json", metadata_json),
	VIEW_TEXT("profile_digest", profile),
	VIEW_TEXT("profile_name", profile_name),
	VIEW_TEXT("exit_code", exit_code),
	VIEW_TEXT("term_signal", signal),
	VIEW_TEXT("diagnostics_json", diagnostics_json),
	VIEW_TEXT("failure_json", failure_json),
	VIEW_TEXT("wall_ms", wall_ms),
	VIEW_TEXT("cpu_ms", cpu_ms),
	VIEW_TEXT("memory_peak_bytes", memory_peak_bytes),
	VIEW_TEXT("callback_url", cb_url),
	VIEW_TEXT("cb_state", cb_state),
	VIEW_TEXT("cb_attempts", cb_attempts),
	VIEW_TEXT("cb_last_status", cb_last_status),
	VIEW_TEXT("cb_last_error", cb_last_error),
	VIEW_TEXT("cb_delivered_at", cb_delivered_at),
	VIEW_TEXT("cb_attempts_log", cb_attempts_log),
	VIEW_TEXT("compile_result_json", compile_json),
};
#undef VIEW_TEXT

/* Row `row` of a JOB_COLS result into v (pointers into res); -1 for a state the
 * service does not know (a corrupt row). */
static int view_from_row(const struct db_res *res, size_t row, struct job_view *v)
{
	int state = js_parse(db_res_s(res, row, "state"));

	memset(v, 0, sizeof *v);
	if (state < 0)
		return -1;
	v->state = (enum job_state)state;
	for (size_t i = 0; i < sizeof view_text / sizeof view_text[0]; i++)
		*(const char **)((char *)v + view_text[i].off) = db_res_s(res, row, view_text[i].col);
	for (int i = 0; i < LIM_COUNT; i++)
		v->limits[i] = db_res_i(res, row, limit_specs[i].name, 0);
	v->network = db_res_i(res, row, "network", 0) != 0;
	v->cancel_requested = db_res_i(res, row, "cancel_requested", 0) != 0;
	v->has_result = db_res_s(res, row, "result_job_id") != NULL;
	v->out_total = db_res_i(res, row, "stdout_bytes", 0);
	v->err_total = db_res_i(res, row, "stderr_bytes", 0);
	v->out_trunc = db_res_i(res, row, "stdout_truncated", 0) != 0;
	v->err_trunc = db_res_i(res, row, "stderr_truncated", 0) != 0;
	return 0;
}

/* Up to `max` rows of a JOB_COLS result into s (which keeps res), with the
 * artifacts and the first `inline_cap` bytes of output of the finished ones. */
static enum jobs_rc fill_set(struct db *db, struct db_res *res, size_t max,
			     long long inline_cap, struct job_set *s)
{
	size_t rows = db_res_rows(res);

	s->n = rows < max ? rows : max;
	s->more = rows > max;
	s->v = calloc(s->n ? s->n : 1, sizeof *s->v);
	if (s->v == NULL || keep_res(s, res) < 0) {
		if (s->v == NULL)
			db_res_free(res);
		return JOBS_DB;
	}
	for (size_t i = 0; i < s->n; i++)
		if (view_from_row(res, i, &s->v[i]) < 0)
			return JOBS_DB;
	if (load_artifacts(db, s) < 0 || load_outputs(db, s, inline_cap) < 0)
		return JOBS_DB;
	return JOBS_OK;
}

enum jobs_rc jobs_get(struct db *db, const struct identity *who, const char *id,
		      long long inline_cap, struct job_set *out)
{
	struct db_res *res;
	enum jobs_rc rc;

	memset(out, 0, sizeof *out);
	if (!util_is_uuid(id))
		return JOBS_NOT_FOUND;
	res = query_scoped(db, who, "SELECT " JOB_COLS JOB_FROM, id, "");
	if (res == NULL)
		return JOBS_DB;
	if (db_res_rows(res) == 0) {
		db_res_free(res);
		return JOBS_NOT_FOUND;
	}
	rc = fill_set(db, res, 1, inline_cap, out);
	if (rc != JOBS_OK)
		jobs_set_free(out);
	return rc;
}

enum jobs_rc jobs_state(struct db *db, const char *id, enum job_state *state)
{
	int s;

	struct db_res *res = db_query_p(db, "SELECT state FROM jobs WHERE id = ?", db_str(id));

	if (res == NULL)
		return JOBS_DB;
	if (db_res_rows(res) == 0) {
		db_res_free(res);
		return JOBS_NOT_FOUND;
	}
	s = js_parse(db_res_s(res, 0, "state"));
	db_res_free(res);
	if (s < 0)
		return JOBS_DB;
	*state = (enum job_state)s;
	return JOBS_OK;
}

/* seq of a cursor job inside the caller's scope. */
static enum jobs_rc cursor_seq(struct db *db, const struct identity *who, const char *cursor,
			       long long *seq)
{
	struct db_res *res;

	if (!util_is_uuid(cursor))
		return JOBS_BAD_CURSOR;
	res = query_scoped(db, who, "SELECT j.seq FROM jobs j", cursor, "");
	if (res == NULL)
		return JOBS_DB;
	*seq = db_res_rows(res) ? db_res_i(res, 0, "seq", -1) : -1;
	db_res_free(res);
	return *seq < 0 ? JOBS_BAD_CURSOR : JOBS_OK;
}

enum jobs_rc jobs_list(struct db *db, const struct identity *who, int status,
		       long long limit, const char *cursor, long long preview,
		       struct job_set *out)
{
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[12];
	size_t n = 0;
	long long seq = 0;
	struct db_res *res = NULL;
	enum jobs_rc rc;

	memset(out, 0, sizeof *out);
	if (cursor != NULL && (rc = cursor_seq(db, who, cursor, &seq)) != JOBS_OK)
		return rc;
	sb_adds(&sql, "SELECT " JOB_COLS JOB_FROM " WHERE 1 = 1");
	sb_adds(&sql, scope_sql(who));
	n = auth_scope_params(who, p, n);
	if (status >= 0) {
		sb_adds(&sql, " AND j.state = ?");
		p[n++] = db_str(js_name((enum job_state)status));
	}
	if (cursor) {
		sb_adds(&sql, " AND j.seq < ?");
		p[n++] = db_i64(seq);
	}
	sb_adds(&sql, " ORDER BY j.seq DESC LIMIT ?");
	p[n++] = db_i64(limit + 1);
	if (!sql.failed)
		res = db_querya(db, sql.buf, p, n);
	sb_release(&sql);
	if (res == NULL)
		return JOBS_DB;
	rc = fill_set(db, res, (size_t)limit, preview, out);
	if (rc != JOBS_OK)
		jobs_set_free(out);
	return rc;
}

/* The job_events row (jobsql.h). */
int jobs_add_event(struct db *db, const char *id, int from, enum job_state to,
		   const struct identity *who, const char *detail)
{
	char actor[64];

	snprintf(actor, sizeof actor, "key:%s", who->key_id);
	return db_exec_p(db,
			 "INSERT INTO job_events (job_id, from_state, to_state, actor, detail)"
			 " VALUES (?, ?, ?, ?, ?)",
			 db_str(id), db_str(js_name((enum job_state)from)), db_str(js_name(to)),
			 db_str(actor), db_str(detail)) < 0
		       ? -1
		       : 0;
}

/* One cancel, the body of its transaction (db_tx): rc is its answer. */
struct cancel_tx {
	const struct identity *who;
	const char *id;
	enum jobs_rc rc;
};

static enum db_tx_end cancel_body(struct db *db, void *arg)
{
	struct cancel_tx *t = arg;
	const char *id = t->id;
	struct db_res *res;
	long long r = 0;
	int state;

	t->rc = JOBS_DB;
	res = query_scoped(db, t->who, "SELECT j.state FROM jobs j", id, " FOR UPDATE");
	if (res == NULL)
		return DB_TX_ERROR;
	if (db_res_rows(res) == 0) {
		db_res_free(res);
		t->rc = JOBS_NOT_FOUND;
		return DB_TX_ROLLBACK;
	}
	state = js_parse(db_res_s(res, 0, "state"));
	db_res_free(res);
	if (state == JS_QUEUED) {
		r = db_exec_p(db,
			      "UPDATE jobs SET state = 'cancelled', cancel_requested = 1,"
			      " finished_at = CURRENT_TIMESTAMP(3) WHERE id = ?",
			      db_str(id));
		if (r >= 0)
			r = db_exec_p(db,
				      "INSERT INTO job_results (job_id, diagnostics_json)"
				      " VALUES (?, ?)",
				      db_str(id), db_str("[\"cancelled before it started\"]"));
		if (r >= 0)
			r = jobs_add_event(db, id, JS_QUEUED, JS_CANCELLED, t->who,
					   "cancel requested");
		if (r >= 0)
			r = jd_settle(db, id, 0); /* the key's bytes last (jd_add_stored) */
	} else if (state == JS_RUNNING) {
		r = db_exec_p(db, "UPDATE jobs SET cancel_requested = 1 WHERE id = ?", db_str(id));
		if (r >= 0)
			r = jobs_add_event(db, id, JS_RUNNING, JS_RUNNING, t->who,
					   "cancel requested");
	}
	if (r < 0)
		return DB_TX_ERROR;
	t->rc = JOBS_OK;
	return DB_TX_COMMIT;
}

enum jobs_rc jobs_cancel(struct db *db, const struct identity *who, const char *id)
{
	struct cancel_tx t = { .who = who, .id = id, .rc = JOBS_DB };

	if (!util_is_uuid(id))
		return JOBS_NOT_FOUND;
	return db_tx(db, cancel_body, &t) < 0 ? JOBS_DB : t.rc;
}

static enum jobs_rc visible(struct db *db, const struct identity *who, const char *id)
{
	struct db_res *res;
	enum jobs_rc rc;

	if (!util_is_uuid(id))
		return JOBS_NOT_FOUND;
	res = query_scoped(db, who, "SELECT 1 FROM jobs j", id, "");
	if (res == NULL)
		return JOBS_DB;
	rc = db_res_rows(res) ? JOBS_OK : JOBS_NOT_FOUND;
	db_res_free(res);
	return rc;
}

enum jobs_rc jobs_artifacts(struct db *db, const struct identity *who, const char *id,
			    struct job_set *out)
{
	const char *ids[1] = { id };
	enum jobs_rc rc;

	memset(out, 0, sizeof *out);
	rc = visible(db, who, id);
	if (rc != JOBS_OK)
		return rc;
	if (query_ids(db, ART_SELECT, ART_ORDER, NULL, 0, ids, 1, take_artifacts, out) < 0) {
		jobs_set_free(out);
		return JOBS_DB;
	}
	return JOBS_OK;
}

enum jobs_rc jobs_artifact(struct db *db, const struct identity *who, const char *id,
			   const char *path, long long *size)
{
	enum jobs_rc rc = visible(db, who, id);
	struct db_res *res;

	if (rc != JOBS_OK)
		return rc;
	res = db_query_p(db, "SELECT size FROM job_artifacts WHERE job_id = ? AND path = ?",
			 db_str(id), db_str(path));
	if (res == NULL)
		return JOBS_DB;
	rc = db_res_rows(res) ? JOBS_OK : JOBS_NOT_FOUND;
	*size = db_res_rows(res) ? db_res_i(res, 0, "size", 0) : 0;
	db_res_free(res);
	return rc;
}

enum jobs_rc jobs_output(struct db *db, const struct identity *who, const char *id, int stream,
			 long long off, long long limit, struct jobs_slice *out)
{
	struct db_res *res;

	memset(out, 0, sizeof *out);
	if (!util_is_uuid(id))
		return JOBS_NOT_FOUND;
	res = query_scoped(db, who,
			   "SELECT j.state, j.stdout_live_bytes, j.stderr_live_bytes, r.stdout_bytes,"
			   " r.stderr_bytes FROM jobs j LEFT JOIN job_results r ON r.job_id = j.id",
			   id, "");
	if (res == NULL)
		return JOBS_DB;
	if (db_res_rows(res) == 0) {
		db_res_free(res);
		return JOBS_NOT_FOUND;
	}
	/* A running job's stored length counts only committed chunks (the runner updates
	 * it in the chunk's transaction); once the job ended its result has the totals. */
	out->terminal = js_is_terminal(js_parse(db_res_s(res, 0, "state"))) &&
			db_res_s(res, 0, "stdout_bytes") != NULL;
	out->total = db_res_i(res, 0,
			      out->terminal ? (stream == JD_STDOUT ? "stdout_bytes" : "stderr_bytes")
			      : stream == JD_STDOUT ? "stdout_live_bytes"
						    : "stderr_live_bytes",
			      0);
	db_res_free(res);
	/* Never past the length just read: a chunk committed since then is not counted
	 * in total_bytes, and would make the answer disagree with itself. */
	if (off >= out->total) {
		out->data = malloc(1);
		return out->data ? JOBS_OK : JOBS_DB;
	}
	if (limit > out->total - off)
		limit = out->total - off;
	if (jd_read_output(db, id, stream, off, limit, &out->data, &out->len) < 0)
		return JOBS_DB;
	return JOBS_OK;
}


enum jobs_rc jobs_get_ids(struct db *db, const struct identity *who, const char *const *ids,
			  size_t n, long long preview, struct job_set *out)
{
	struct strbuf sql = STRBUF_INIT;
	struct db_param p[IN_IDS + 8];
	size_t np = 0, nv = 0;
	struct db_res *res = NULL;
	enum jobs_rc rc;

	memset(out, 0, sizeof *out);
	if (n > IN_IDS)
		return JOBS_DB;
	sb_adds(&sql, "SELECT " JOB_COLS JOB_FROM " WHERE 1 = 1");
	sb_adds(&sql, scope_sql(who));
	np = auth_scope_params(who, p, np);
	sb_adds(&sql, " AND j.id");
	in_ids(&sql);
	/* Only UUIDs are bound: anything else cannot be a job id. */
	for (size_t i = 0; i < n; i++)
		if (util_is_uuid(ids[i]))
			p[np + nv++] = db_str(ids[i]);
	for (; nv < IN_IDS; nv++)
		p[np + nv] = db_str(NULL);
	np += nv;
	if (!sql.failed)
		res = db_querya(db, sql.buf, p, np);
	sb_release(&sql);
	if (res == NULL)
		return JOBS_DB;
	rc = fill_set(db, res, IN_IDS, preview, out);
	if (rc != JOBS_OK)
		jobs_set_free(out);
	return rc;
}
