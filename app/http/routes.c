#include "routes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_routes.h"
#include "auth.h"
#include "http_util.h"
#include "jobcache.h"
#include "jobdata.h"
#include "jobs.h"
#include "jobstate.h"
#include "log.h"
#include "metrics.h"
#include "quota.h"
#include "render.h"
#include "router.h"
#include "rtlive.h"
#include "sha256.h"
#include "validate.h"
#include "waiter.h"

#define WAIT_MAX_SECONDS 30
#define LIST_DEFAULT 20
#define LIST_MAX 100
#define RETRY_AFTER "Retry-After: 1\r\n"
/* The stored-bytes quota frees only as jobs are purged: a re-check interval, not a
 * promise. */
#define RETRY_AFTER_STORED "Retry-After: 60\r\n"

/* A connection idle for a while may have died with a MariaDB restart: check it
 * first, so that the request reconnects instead of answering 503. */
static struct db *get_db(struct api_ctx *ctx)
{
	char err[512];
	double now = util_mono_ms();

	if (ctx->db != NULL && now - ctx->db_used > 1000.0 && db_ping(ctx->db) < 0) {
		db_close(ctx->db);
		ctx->db = NULL;
	}
	ctx->db_used = now;
	if (ctx->db == NULL) {
		ctx->db = db_open(ctx->cfg, err, sizeof err);
		if (ctx->db == NULL)
			log_kv("error", "db_connect", "error", err, (char *)NULL);
	}
	return ctx->db;
}

static void send_unavailable(struct req *r)
{
	http_send_error(r, 503, "service_unavailable", "the database is unavailable; retry later",
			NULL, RETRY_AFTER);
}

/* Answers a storage failure; drops the connection when it is gone (routes.h). */
void route_db_error(struct api_ctx *ctx, struct req *r)
{
	char code[16];

	if (ctx->mx)
		mx_db_error(&ctx->mx->w[ctx->slot]);

	snprintf(code, sizeof code, "%u", db_errno(ctx->db));
	log_kv("error", "db_error", "errno", code, "error", db_error(ctx->db), "lost_conflict",
	       db_tx_lost(ctx->db) || db_retryable(ctx->db) ? "1" : "0", (char *)NULL);
	if (db_gone(ctx->db)) {
		db_close(ctx->db);
		ctx->db = NULL;
		send_unavailable(r);
		return;
	}
	/* A transaction that kept losing to concurrent ones (db_tx's bound): the request
	 * is fine, the moment was not. */
	if (db_tx_lost(ctx->db) || db_retryable(ctx->db)) {
		http_send_error(r, 503, "service_unavailable", "the request kept conflicting"
				" with concurrent ones and was not carried out; retry", NULL,
				RETRY_AFTER);
		return;
	}
	http_send_error(r, 500, "internal_error", "internal error", NULL, NULL);
}

static void send_not_found(struct req *r)
{
	http_send_error(r, 404, "not_found", "no such job", NULL, NULL);
}

/* Answers a storage result other than JOBS_OK (404 for a job outside the caller's
 * scope, exactly as for an unknown one); 1 when it answered. */
static int send_failed(struct api_ctx *ctx, struct req *r, enum jobs_rc rc)
{
	if (rc == JOBS_OK)
		return 0;
	if (rc == JOBS_NOT_FOUND)
		send_not_found(r);
	else
		route_db_error(ctx, r);
	return 1;
}

static int authenticate(struct api_ctx *ctx, struct req *r, struct identity *who)
{
	struct db *db = get_db(ctx);

	if (db == NULL) {
		send_unavailable(r);
		return -1;
	}
	switch (auth_identify(db, r->authorization, who)) {
	case AUTH_OK:
		return 0;
	case AUTH_MISSING:
		http_send_error(r, 401, "unauthorized", "missing bearer token", NULL,
				"WWW-Authenticate: Bearer realm=\"sandbox\"\r\n");
		return -1;
	case AUTH_INVALID:
		http_send_error(r, 401, "unauthorized", "invalid or revoked token", NULL,
				"WWW-Authenticate: Bearer realm=\"sandbox\", "
				"error=\"invalid_token\"\r\n");
		return -1;
	case AUTH_DB_ERROR:
	default:
		route_db_error(ctx, r);
		return -1;
	}
}

static void h_health(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     const struct route_args *a)
{
	struct db *db = get_db(ctx);
	struct db_res *res;

	if (db == NULL) {
		send_unavailable(r);
		return;
	}
	(void)who;
	(void)a;
	res = db_querya(db, "SELECT 1", NULL, 0);
	if (res == NULL) {
		route_db_error(ctx, r);
		return;
	}
	db_res_free(res);
	http_send_json(r, 200, json_pack("{s:s, s:s}", "status", "ok", "database", "ok"), NULL);
}

static int idem_key_ok(const char *k)
{
	size_t n = strlen(k);

	if (n == 0 || n > 255)
		return 0;
	for (; *k; k++)
		if (*k < 0x21 || *k > 0x7e)
			return 0;
	return 1;
}

/* A job as the API shows it, read and rendered now. */
static enum jobs_rc load_job(struct api_ctx *ctx, const struct identity *who, const char *id,
			     json_t **job)
{
	struct job_set s;
	enum jobs_rc rc = jobs_get(ctx->db, who, id, ctx->cfg->inline_output_bytes, &s);

	*job = NULL;
	if (rc == JOBS_OK && (*job = render_job(&s.v[0])) == NULL)
		rc = JOBS_DB;
	jobs_set_free(&s);
	return rc;
}

static json_t *str_or_null(const char *s, int present)
{
	return present ? json_string(s) : json_null();
}

/* A session's own limits (POST /v1/sessions): {name: {min, default, max}}. */
static json_t *session_limits(const struct cfg *c)
{
	return json_pack("{s:{s:i, s:I, s:I}, s:{s:i, s:I, s:I}, s:{s:i, s:I, s:I}}",
			 "cpu_seconds", "min", 1, "default",
			 (json_int_t)c->session_cpu_seconds_default, "max",
			 (json_int_t)c->session_cpu_seconds_max, "idle_seconds", "min", 1,
			 "default", (json_int_t)c->session_idle_seconds_default, "max",
			 (json_int_t)c->session_idle_seconds_max, "max_seconds", "min", 1,
			 "default", (json_int_t)c->session_max_seconds_default, "max",
			 (json_int_t)c->session_max_seconds_max);
}

/* GET /v1/identity: who the key is, exactly as stored (never trimmed or folded),
 * what it may do and what it uses, so a client can check before it submits. */
static void h_identity(struct api_ctx *ctx, struct req *r, const struct identity *who,
		       const struct route_args *a)
{
	struct cfg eff = *ctx->cfg;
	json_t *limits = json_object(), *quotas, *o;

	(void)a;
	if (*r->query != '\0') {
		http_send_error(r, 400, "invalid_request", "GET /v1/identity takes no query parameters",
				NULL, NULL);
		json_decref(limits);
		return;
	}
	quotas = quota_report(ctx->db, ctx->cfg, who);
	if (quotas == NULL) {
		json_decref(limits);
		route_db_error(ctx, r);
		return;
	}
	val_key_limits(&eff, who->max_limits);
	for (int i = 0; i < LIM_COUNT; i++)
		json_object_set_new(limits, limit_specs[i].name,
				    json_pack("{s:I, s:I, s:I}", "min", (json_int_t)limit_specs[i].min,
					      "default", (json_int_t)eff.limit_default[i], "max",
					      (json_int_t)eff.limit_max[i]));
	o = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:o, s:o}, s:b, s:{s:b, s:b}, s:o, s:o, s:o}",
		      "key_id", who->key_id, "identity", "identity_namespace", who->ns, "tenant_id",
		      who->tenant, "subject_type", who->subject_type, "subject_id",
		      who->subject_id, "actor_type",
		      str_or_null(who->actor_type, who->has_actor_type), "actor_id",
		      str_or_null(who->actor_id, who->has_actor_id), "complete",
		      who->ns[0] && who->tenant[0] && who->subject_type[0] && who->subject_id[0],
		      "permissions", "network", who->allow_network, "tenant_admin",
		      who->tenant_admin, "limits", limits, "quotas", quotas, "session_limits",
		      session_limits(&eff));
	http_send_json(r, 200, o, NULL);
}

static int parse_wait(struct req *r, long long *wait);
static enum jobs_rc poll_job(struct api_ctx *ctx, struct req *r, const struct identity *who,
			     const char *id, long long wait, json_t **job, int *deferred);
static void submit_answer(struct api_ctx *ctx, struct req *r, const struct identity *who,
			  const char *id, enum jobs_rc rc, long long wait, json_t *job);
static int job_terminal(const json_t *job);

/* POST /v1/jobs's answer for the job it created or replayed (rc): with ?wait=S the
 * finished job (200) or, after S seconds, as without it (202); S may be spent in
 * the waiter, which then runs h_submit again (resumed). */
static void submit_answer(struct api_ctx *ctx, struct req *r, const struct identity *who,
			  const char *id, enum jobs_rc rc, long long wait, json_t *job)
{
	char loc[128];
	int deferred = 0;

	r->wait.aux = rc;
	/* job: the new job as created (jobs_create_job), else read it */
	if (job == NULL && (wait > 0 ? poll_job(ctx, r, who, id, wait, &job, &deferred)
				     : load_job(ctx, who, id, &job)) != JOBS_OK) {
		json_decref(job);
		route_db_error(ctx, r);
		return;
	}
	if (!r->wait.resumed)
		log_kv("info", "job_submitted", "job", id, "key", who->key_id, "replay",
		       rc == JOBS_REPLAY ? "true" : "false", (char *)NULL);
	if (deferred)
		return;
	snprintf(loc, sizeof loc, "Location: /v1/jobs/%s\r\n%s", id,
		 rc == JOBS_REPLAY ? "Idempotent-Replayed: true\r\n" : "");
	http_send_json(r, wait > 0 && job_terminal(job) ? 200 : 202, job, loc);
}

static void h_submit(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     const struct route_args *a)
{
	json_t *created = NULL;
	struct job_req jr;
	struct val_err ve;
	unsigned char hash[32];
	char id[UUID_STR_LEN];
	long long wait;
	enum jobs_rc rc;

	(void)a;
	if (parse_wait(r, &wait) < 0)
		return;
	if (r->wait.resumed) {
		/* The re-dispatch after ?wait=S: the job exists, answer for it. */
		submit_answer(ctx, r, who, r->wait.id, (enum jobs_rc)r->wait.aux, wait, NULL);
		return;
	}
	if (!http_is_json_type(r->content_type)) {
		http_send_error(r, 415, "unsupported_media_type",
				"Content-Type must be application/json", NULL, NULL);
		return;
	}
	if (r->idempotency_key && !idem_key_ok(r->idempotency_key)) {
		http_send_error(r, 400, "invalid_request",
				"Idempotency-Key must be 1 to 255 printable ASCII characters",
				"Idempotency-Key", NULL);
		return;
	}
	struct cfg eff = *ctx->cfg;
	int live = 0;
	val_key_limits(&eff, who->max_limits);
	if (val_job_request(r->body, r->body_len, &eff, who->allow_network, &jr, &ve) < 0 ||
	    val_job_profile(&jr, who->profiles, who->nprofiles, &ve) < 0 ||
	    (live = rtl_check(ctx->db, &jr, &ve)) == -1) {
		http_send_error(r, ve.status, ve.code, ve.message, ve.field, NULL);
		val_job_free(&jr);
		return;
	}
	if (live < 0) {
		val_job_free(&jr);
		route_db_error(ctx, r);
		return;
	}
	sha256_buf(r->body, r->body_len, hash);
	/* without ?wait the answer is the job as created: no read back */
	rc = jobs_create_job(ctx->db, ctx->cfg, who, &jr, r->idempotency_key, hash, id,
			     wait > 0 ? NULL : &created);
	val_job_free(&jr);
	switch (rc) {
	case JOBS_OK:
	case JOBS_REPLAY:
		submit_answer(ctx, r, who, id, rc, wait, created);
		return;
	case JOBS_CONFLICT:
		http_send_error(r, 409, "conflict",
				"this Idempotency-Key was used with a different request",
				"Idempotency-Key", NULL);
		return;
	case JOBS_QUOTA:
		http_send_error(r, 429, "quota_exceeded",
				"too many queued or running jobs for this key", NULL,
				RETRY_AFTER);
		return;
	case JOBS_STORAGE:
		http_send_error(r, 429, "quota_exceeded",
				"stored-bytes quota exceeded for this key: its jobs' output,"
				" artifacts and inputs leave no room for this job (delete or wait"
				" for old jobs to be purged)",
				NULL, RETRY_AFTER_STORED);
		return;
	default:
		route_db_error(ctx, r);
	}
}

/* ---- POST /v1/jobs/batch */

/* A refused item's entry: {index, status, error: {code, message, field}}. */
static json_t *batch_error(size_t i, int status, const char *code, const char *message,
			   const char *field)
{
	json_t *b = http_error_body(code, message, field);
	json_t *e = b ? json_incref(json_object_get(b, "error")) : NULL;

	json_decref(b);
	return e ? json_pack("{s:I, s:i, s:o}", "index", (json_int_t)i, "status", status, "error", e)
		 : NULL;
}

/* field of item i: "jobs[i]" or "jobs[i].<sub>". */
static void item_field(char *out, size_t n, size_t i, const char *sub)
{
	if (sub && *sub)
		snprintf(out, n, "jobs[%zu].%s", i, sub);
	else
		snprintf(out, n, "jobs[%zu]", i);
}

/* Validates item i exactly as POST /v1/jobs validates a body (its idempotency_key
 * taken out first: the header's part): 0 and jr, it filled, or 1 and *err, the
 * item's error entry (NULL when out of memory). */
static int batch_prepare(struct api_ctx *ctx, const struct cfg *eff, const struct identity *who,
			 size_t i, json_t *item, struct job_req *jr, struct jobs_batch_item *it,
			 json_t **err)
{
	char field[200];
	struct val_err ve;
	json_t *copy, *key;
	char *text;
	int rc;

	*err = NULL;
	if (!json_is_object(item)) {
		item_field(field, sizeof field, i, NULL);
		*err = batch_error(i, 400, "invalid_request", "each job must be a JSON object",
				   field);
		return 1;
	}
	key = json_object_get(item, "idempotency_key");
	if (key && (!json_is_string(key) || !idem_key_ok(json_string_value(key)))) {
		item_field(field, sizeof field, i, "idempotency_key");
		*err = batch_error(i, 400, "invalid_request",
				   "idempotency_key must be 1 to 255 printable ASCII characters", field);
		return 1;
	}
	it->idem_key = key ? json_string_value(key) : NULL; /* the body's tree outlives it */
	if ((copy = json_copy(item)) == NULL)
		return 1;
	json_object_del(copy, "idempotency_key");
	/* Canonical text (sorted keys): an item's replay matches however it is spaced. */
	text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(copy);
	if (text == NULL)
		return 1;
	sha256_buf(text, strlen(text), it->hash);
	rc = val_job_request(text, strlen(text), eff, who->allow_network, jr, &ve) < 0 ||
	     val_job_profile(jr, who->profiles, who->nprofiles, &ve) < 0;
	explicit_bzero(text, strlen(text)); /* env values are secrets */
	free(text);
	if (!rc && (rc = rtl_check(ctx->db, jr, &ve)) == -2)
		return 1; /* a database error: *err NULL */
	if (rc) {
		item_field(field, sizeof field, i, ve.field);
		*err = batch_error(i, ve.status, ve.code, ve.message, field);
		return 1;
	}
	it->req = jr;
	return 0;
}

/* The stored item's entry: {index, status: 202, replayed, job}. */
static json_t *batch_accepted(size_t i, const struct jobs_batch_item *it,
			      const struct job_set *s)
{
	for (size_t k = 0; k < s->n; k++)
		if (strcmp(s->v[k].id, it->id) == 0) {
			json_t *job = render_job(&s->v[k]);
			return job ? json_pack("{s:I, s:i, s:b, s:o}", "index", (json_int_t)i,
					       "status", 202, "replayed", it->rc == JOBS_REPLAY,
					       "job", job)
				   : NULL;
		}
	return NULL; /* committed a moment ago: gone only if the database lost it */
}

/* The entry of a stored or refused-at-storage item. */
static json_t *batch_outcome(const struct identity *who, size_t i,
			     const struct jobs_batch_item *it, const struct job_set *s)
{
	char field[200];

	switch (it->rc) {
	case JOBS_OK:
	case JOBS_REPLAY:
		log_kv("info", "job_submitted", "job", it->id, "key", who->key_id, "replay",
		       it->rc == JOBS_REPLAY ? "true" : "false", "batch", "true", (char *)NULL);
		return batch_accepted(i, it, s);
	case JOBS_CONFLICT:
		item_field(field, sizeof field, i, "idempotency_key");
		return batch_error(i, 409, "conflict",
				   "this idempotency_key was used with a different request", field);
	case JOBS_QUOTA:
		item_field(field, sizeof field, i, NULL);
		return batch_error(i, 429, "quota_exceeded",
				   "too many queued or running jobs for this key", field);
	case JOBS_STORAGE:
		item_field(field, sizeof field, i, NULL);
		return batch_error(i, 429, "quota_exceeded",
				   "stored-bytes quota exceeded for this key: its jobs' output,"
				   " artifacts and inputs leave no room for this job", field);
	case JOBS_FORBIDDEN:
	default:
		item_field(field, sizeof field, i, "profile");
		return batch_error(i, 403, "forbidden", "this key may not use this profile", field);
	}
}

/* The envelope {"jobs": [...]}: the array, or NULL after answering the error. */
static json_t *batch_jobs(struct api_ctx *ctx, struct req *r, json_t *root)
{
	const char *k;
	json_t *v, *jobs;
	char msg[160];

	if (!json_is_object(root)) {
		http_send_error(r, 400, "invalid_request", "the body must be a JSON object", NULL,
				NULL);
		return NULL;
	}
	json_object_foreach(root, k, v) {
		if (strcmp(k, "jobs") != 0) {
			snprintf(msg, sizeof msg, "unknown field '%.60s'", k);
			http_send_error(r, 400, "invalid_request", msg, k, NULL);
			return NULL;
		}
	}
	jobs = json_object_get(root, "jobs");
	if (!json_is_array(jobs) || json_array_size(jobs) == 0 ||
	    (long long)json_array_size(jobs) > ctx->cfg->max_batch_jobs) {
		snprintf(msg, sizeof msg, "jobs must be an array of 1 to %lld jobs",
			 ctx->cfg->max_batch_jobs);
		http_send_error(r, 400, "invalid_request", msg, "jobs", NULL);
		return NULL;
	}
	return jobs;
}

/* The entries of all items in order, once the stored ones are stored. */
static json_t *batch_results(struct api_ctx *ctx, const struct identity *who,
			     struct jobs_batch_item *items, json_t **refused, size_t n,
			     enum jobs_rc *rc)
{
	const char *ids[JOBS_IDS_MAX];
	size_t nid = 0;
	struct job_set s;
	json_t *res = json_array();

	for (size_t i = 0; i < n; i++)
		if (refused[i] == NULL && (items[i].rc == JOBS_OK || items[i].rc == JOBS_REPLAY))
			ids[nid++] = items[i].id;
	*rc = jobs_get_ids(ctx->db, who, ids, nid, ctx->cfg->list_preview_bytes, &s);
	for (size_t i = 0; *rc == JOBS_OK && res && i < n; i++) {
		json_t *e = refused[i] ? json_incref(refused[i]) : batch_outcome(who, i, &items[i], &s);
		if (e == NULL || json_array_append_new(res, e) < 0)
			*rc = JOBS_DB;
	}
	jobs_set_free(&s);
	if (*rc != JOBS_OK || res == NULL) {
		json_decref(res);
		return NULL;
	}
	return json_pack("{s:o}", "results", res);
}

/* The ids of the stored items' jobs in a batch answer (the entries with a job):
 * all of them, or only those that have not ended. Their count (at most the batch
 * cap, itself at most JOBS_IDS_MAX). */
static size_t batch_ids(json_t *results, const char **ids, int open_only)
{
	size_t n = 0, i;
	json_t *e;

	json_array_foreach(results, i, e) {
		json_t *job = json_object_get(e, "job");
		const char *id = json_string_value(json_object_get(job, "id"));

		if (id != NULL && n < JOBS_IDS_MAX && !(open_only && job_terminal(job)))
			ids[n++] = id;
	}
	return n;
}

/* The re-dispatch of POST /v1/jobs/batch?wait=S: r->body holds the answer as it
 * was (batch_wait); every stored item's job is read again. 200 when all ended, else
 * 202, with the same entries. */
static void batch_resume(struct api_ctx *ctx, struct req *r, const struct identity *who)
{
	const char *ids[JOBS_IDS_MAX];
	json_t *out = json_loadb(r->body, r->body_len, 0, NULL), *res, *e;
	size_t n, n_open = 0, i;
	struct job_set s;
	enum jobs_rc rc;

	res = json_object_get(out, "results");
	if (!json_is_array(res)) {
		json_decref(out);
		http_send_error(r, 500, "internal_error", "internal error", NULL, NULL);
		return;
	}
	n = batch_ids(res, ids, 0);
	rc = jobs_get_ids(ctx->db, who, ids, n, ctx->cfg->list_preview_bytes, &s);
	if (rc != JOBS_OK) {
		json_decref(out);
		route_db_error(ctx, r);
		return;
	}
	json_array_foreach(res, i, e) {
		const char *id = json_string_value(json_object_get(json_object_get(e, "job"), "id"));
		json_t *job = NULL;

		for (size_t k = 0; id && k < s.n && job == NULL; k++)
			if (strcmp(s.v[k].id, id) == 0)
				job = render_job(&s.v[k]);
		if (job != NULL)
			json_object_set_new(e, "job", job);
		if (id != NULL && !job_terminal(json_object_get(e, "job")))
			n_open++;
	}
	jobs_set_free(&s);
	http_send_json(r, n_open ? 202 : 200, out, NULL);
}

/* ?wait=S on a batch: 1 when the request now waits (deferred) for every stored
 * job that has not ended; the answer as it stands replaces the request body, which
 * the re-dispatch (batch_resume) reads, and which the request frees with itself
 * (also when the client hangs up). 0: answer now (all ended, or no room on the
 * wait board for them all within the key's share). */
static int batch_wait(struct req *r, const struct identity *who, json_t *out, long long wait,
		      size_t *n_open)
{
	const char *ids[JOBS_IDS_MAX];
	char *text;

	*n_open = batch_ids(json_object_get(out, "results"), ids, 1);
	if (wait <= 0 || *n_open == 0 || *n_open > WT_GROUP_MAX)
		return 0;
	if ((text = json_dumps(out, JSON_COMPACT)) == NULL)
		return 0;
	if (!wt_defer_all(r, who->key_id, WT_JOB_DONE, ids, *n_open, wait)) {
		free(text);
		return 0;
	}
	explicit_bzero(r->body, r->body_len); /* env values are secrets */
	free(r->body);
	r->body = text;
	r->body_len = strlen(text);
	return 1;
}

/* POST /v1/jobs/batch: each item validated as POST /v1/jobs validates a body, the
 * valid ones stored in one transaction under the key's quotas, 200 with one entry
 * per item in item order. With ?wait=S: 200 once every stored job ended within S
 * seconds (their final state), else 202 with the entries as they stand. */
static void h_batch(struct api_ctx *ctx, struct req *r, const struct identity *who,
		    const struct route_args *a)
{
	struct cfg eff = *ctx->cfg;
	long long wait;
	size_t n_open = 0;
	struct jobs_batch_item *items = NULL;
	struct job_req *jrs = NULL;
	json_t *root, *jobs, **refused = NULL, *out = NULL;
	json_error_t jerr;
	size_t n = 0;
	enum jobs_rc rc = JOBS_DB;

	(void)a;
	if (parse_wait(r, &wait) < 0)
		return;
	if (r->wait.resumed) {
		batch_resume(ctx, r, who);
		return;
	}
	if (!http_is_json_type(r->content_type)) {
		http_send_error(r, 415, "unsupported_media_type",
				"Content-Type must be application/json", NULL, NULL);
		return;
	}
	if (r->idempotency_key) {
		http_send_error(r, 400, "invalid_request",
				"a batch takes an idempotency_key in each job, not the"
				" Idempotency-Key header", "Idempotency-Key", NULL);
		return;
	}
	root = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		char msg[256];
		snprintf(msg, sizeof msg, "body is not valid JSON: %.180s", jerr.text);
		http_send_error(r, 400, "invalid_json", msg, NULL, NULL);
		return;
	}
	if ((jobs = batch_jobs(ctx, r, root)) == NULL)
		goto out;
	n = json_array_size(jobs);
	val_key_limits(&eff, who->max_limits);
	items = calloc(n, sizeof *items);
	jrs = calloc(n, sizeof *jrs);
	refused = calloc(n, sizeof *refused);
	if (items == NULL || jrs == NULL || refused == NULL)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (batch_prepare(ctx, &eff, who, i, json_array_get(jobs, i), &jrs[i], &items[i],
				  &refused[i]) &&
		    refused[i] == NULL)
			goto fail;
	rc = jobs_create_batch(ctx->db, ctx->cfg, who, items, n);
	if (rc == JOBS_OK)
		out = batch_results(ctx, who, items, refused, n, &rc);
	if (rc != JOBS_OK)
		goto fail;
	if (batch_wait(r, who, out, wait, &n_open))
		json_decref(out);
	else
		http_send_json(r, wait > 0 && n_open > 0 ? 202 : 200, out, NULL);
	goto out;
fail:
	if (rc == JOBS_DB && ctx->db && db_errno(ctx->db))
		route_db_error(ctx, r);
	else
		http_send_error(r, 500, "internal_error", "internal error", NULL, NULL);
out:
	for (size_t i = 0; i < n && jrs && refused; i++) {
		val_job_free(&jrs[i]); /* a zeroed or half-filled one too */
		json_decref(refused[i]);
	}
	free(items);
	free(jrs);
	free(refused);
	json_decref(root);
}

/* Hands the request to the waiter (app/http/waiter.h) until the job ends or `wait`
 * seconds pass: 1 when it did (answer nothing now). A re-dispatch after the wait, a
 * full board or a key that holds its share (api_wait_slots_per_key) gives 0: answer
 * at once with the current state, so one key cannot take every slot. */
static int wait_slot_take(struct req *r, const struct identity *who, const char *id,
			  long long wait)
{
	return wait > 0 && wt_defer(r, who->key_id, &(struct wt_cond){ WT_JOB_DONE, id, 0, 0 }, wait);
}

/* A finished job from this worker's cache, else from the database. */
static enum jobs_rc get_job(struct api_ctx *ctx, const struct identity *who, const char *id,
			    json_t **job)
{
	enum jobs_rc rc;

	*job = jc_get(id, who);
	if (*job != NULL)
		return JOBS_OK;
	rc = load_job(ctx, who, id, job);
	if (rc == JOBS_OK)
		jc_put(id, *job);
	return rc;
}

static int job_terminal(const json_t *job)
{
	return js_is_terminal(js_parse(json_string_value(json_object_get(job, "status"))));
}

/* The job now, unless it has not ended and the request waits for that: then
 * *deferred is 1, *job NULL and the waiter runs the handler again later. */
static enum jobs_rc poll_job(struct api_ctx *ctx, struct req *r, const struct identity *who,
			     const char *id, long long wait, json_t **job, int *deferred)
{
	enum jobs_rc rc = get_job(ctx, who, id, job);

	*deferred = 0;
	if (rc == JOBS_OK && !job_terminal(*job) && wait_slot_take(r, who, id, wait)) {
		json_decref(*job);
		*job = NULL;
		*deferred = 1;
	}
	return rc;
}

/* ?wait=S (0..30) of GET /v1/jobs/{id} and POST /v1/jobs: 0 and *wait set, or -1
 * after answering the error. */
static int parse_wait(struct req *r, long long *wait)
{
	static const char *const names[] = { "wait", NULL };
	char vals[1][128] = { "" };
	int present[1] = { 0 };

	*wait = 0;
	if (http_parse_query(r, names, vals, present) < 0)
		return -1;
	if (present[0] && util_parse_ll(vals[0], 0, WAIT_MAX_SECONDS, wait) < 0) {
		http_send_error(r, 400, "invalid_request",
				"wait must be an integer number of seconds from 0 to 30", "wait",
				NULL);
		return -1;
	}
	return 0;
}

static void h_get(struct api_ctx *ctx, struct req *r, const struct identity *who,
		  const struct route_args *a)
{
	const char *id = a->id;
	long long wait;
	json_t *job = NULL;
	enum jobs_rc rc;

	int deferred;

	if (parse_wait(r, &wait) < 0)
		return;
	rc = poll_job(ctx, r, who, id, wait, &job, &deferred);
	if (!deferred && !send_failed(ctx, r, rc))
		http_send_json(r, 200, job, NULL);
}

/* ?ids=a,b,c of GET /v1/jobs: at most JOBS_IDS_MAX ids, each once, in the order given. */
#define IDS_QUERY_MAX (JOBS_IDS_MAX * 40 + 64)

/* The list's query: status, limit, cursor (as parse_query) and ids, whose value is
 * longer than parse_query's. 0, or -1 after answering the error. */
static int list_query(struct req *r, char (*vals)[128], int *present, char *ids)
{
	static const char *const names[] = { "status", "limit", "cursor", "ids" };
	static char val[IDS_QUERY_MAX];
	const char *q = r->query;
	char key[64], msg[160];
	int rc;

	while ((rc = http_query_next(&q, key, sizeof key, val, sizeof val)) == 1) {
		int i;
		for (i = 0; i < 4; i++)
			if (strcmp(key, names[i]) == 0)
				break;
		if (i == 4) {
			snprintf(msg, sizeof msg, "unknown query parameter '%.60s'", key);
			http_send_error(r, 400, "invalid_request", msg, key, NULL);
			return -1;
		}
		if (i == 3 && present[3]) {
			http_send_error(r, 400, "invalid_request", "ids is given more than once",
					"ids", NULL);
			return -1;
		}
		present[i] = 1;
		if (i == 3)
			memcpy(ids, val, strlen(val) + 1);
		else if (snprintf(vals[i], 128, "%s", val) >= 128) {
			snprintf(msg, sizeof msg, "%s is too long", key);
			http_send_error(r, 400, "invalid_request", msg, key, NULL);
			return -1;
		}
	}
	if (rc < 0) {
		http_send_error(r, 400, "invalid_request", "malformed or oversized query string",
				NULL, NULL);
		return -1;
	}
	return 0;
}

/* Splits ids (comma-separated) in place into out, without repeats. The count, or -1
 * after answering the error. */
static int split_ids(struct req *r, char *ids, const char **out)
{
	size_t n = 0;

	for (char *p = ids, *next; p != NULL; p = next) {
		next = strchr(p, ',');
		if (next)
			*next++ = '\0';
		if (*p == '\0' || strlen(p) > 64) {
			http_send_error(r, 400, "invalid_request",
					"ids must be a comma-separated list of job ids", "ids", NULL);
			return -1;
		}
		size_t k;
		for (k = 0; k < n && strcmp(out[k], p) != 0; k++)
			;
		if (k < n)
			continue;
		if (n == JOBS_IDS_MAX) {
			http_send_error(r, 400, "invalid_request", "ids names at most 100 jobs",
					"ids", NULL);
			return -1;
		}
		out[n++] = p;
	}
	return (int)n;
}

/* GET /v1/jobs?ids=a,b,c: the caller's jobs among them in the order asked, the rest
 * (unknown, another identity's, not an id at all) only listed in "missing", alike. */
static void list_ids(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     char *idtext)
{
	const char *ids[JOBS_IDS_MAX];
	struct job_view v[JOBS_IDS_MAX];
	struct job_set s;
	size_t nv = 0;
	json_t *missing = json_array(), *out = NULL;
	int n = split_ids(r, idtext, ids);
	enum jobs_rc rc;

	if (n < 0) {
		json_decref(missing);
		return;
	}
	rc = jobs_get_ids(ctx->db, who, ids, (size_t)n, ctx->cfg->list_preview_bytes, &s);
	for (int i = 0; rc == JOBS_OK && i < n; i++) {
		size_t k;
		for (k = 0; k < s.n && strcmp(s.v[k].id, ids[i]) != 0; k++)
			;
		if (k < s.n)
			v[nv++] = s.v[k];
		else if (json_array_append_new(missing, json_string(ids[i])) < 0)
			rc = JOBS_DB;
	}
	if (rc == JOBS_OK && (out = render_job_list(v, nv, NULL)) != NULL &&
	    json_object_set(out, "missing", missing) < 0) {
		json_decref(out);
		out = NULL;
	}
	jobs_set_free(&s);
	json_decref(missing);
	if (rc != JOBS_OK)
		route_db_error(ctx, r);
	else
		http_send_json(r, 200, out, NULL);
}

static void h_list(struct api_ctx *ctx, struct req *r, const struct identity *who,
		   const struct route_args *a)
{
	char vals[3][128] = { "", "", "" };
	static char ids[IDS_QUERY_MAX];
	int present[4] = { 0, 0, 0, 0 };
	long long limit = LIST_DEFAULT;
	int status = -1;
	struct job_set s;
	json_t *out = NULL;
	enum jobs_rc rc;

	(void)a;
	ids[0] = '\0';
	if (list_query(r, vals, present, ids) < 0)
		return;
	if (present[3]) {
		if (present[0] || present[1] || present[2]) {
			http_send_error(r, 400, "invalid_request",
					"ids cannot be combined with status, limit or cursor", "ids",
					NULL);
			return;
		}
		list_ids(ctx, r, who, ids);
		return;
	}
	if (present[0] && (status = js_parse(vals[0])) < 0) {
		http_send_error(r, 400, "invalid_request", "status is not a job state", "status",
				NULL);
		return;
	}
	if (present[1] && util_parse_ll(vals[1], 1, LIST_MAX, &limit) < 0) {
		http_send_error(r, 400, "invalid_request", "limit must be an integer from 1 to 100",
				"limit", NULL);
		return;
	}
	rc = jobs_list(ctx->db, who, status, limit,
		       present[2] ? vals[2] : NULL, ctx->cfg->list_preview_bytes, &s);
	if (rc == JOBS_OK &&
	    (out = render_job_list(s.v, s.n, s.more ? s.v[s.n - 1].id : NULL)) == NULL)
		rc = JOBS_DB;
	jobs_set_free(&s);
	if (rc == JOBS_BAD_CURSOR)
		http_send_error(r, 400, "invalid_request", "cursor is not valid", "cursor", NULL);
	else if (rc != JOBS_OK)
		route_db_error(ctx, r);
	else
		http_send_json(r, 200, out, NULL);
}

static void h_cancel(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     const struct route_args *a)
{
	const char *id = a->id;
	enum jobs_rc rc = jobs_cancel(ctx->db, who, id);
	json_t *job = NULL;

	if (rc == JOBS_OK)
		rc = load_job(ctx, who, id, &job);
	if (send_failed(ctx, r, rc))
		return;
	log_kv("info", "job_cancel", "job", id, "key", who->key_id, (char *)NULL);
	http_send_json(r, 200, job, NULL);
}

static void h_artifacts(struct api_ctx *ctx, struct req *r, const struct identity *who,
			const struct route_args *a)
{
	struct job_set s;
	enum jobs_rc rc = jobs_artifacts(ctx->db, who, a->id, &s);

	if (!send_failed(ctx, r, rc))
		http_send_json(r, 200, render_artifacts(s.art, s.nart), NULL);
	jobs_set_free(&s);
}

static int put_chunk(void *arg, const void *data, size_t len)
{
	struct req *r = arg;

	return FCGX_PutStr(data, (int)len, r->fcgi->out) < 0 ? 1 : 0;
}

/* Streams the artifact chunk by chunk: a worker holds one chunk, whatever its size. */
static void h_artifact(struct api_ctx *ctx, struct req *r, const struct identity *who,
		       const struct route_args *a)
{
	const char *id = a->id, *raw_path = a->rest;
	char path[1100], head[256];
	long long size;
	enum jobs_rc rc;
	int n, sent;

	if (http_pct_decode(raw_path, strlen(raw_path), path, sizeof path) < 0 ||
	    val_rel_path(path, 1024) != NULL) {
		http_send_error(r, 404, "not_found", "no such artifact", NULL, NULL);
		return;
	}
	rc = jobs_artifact(ctx->db, who, id, path, &size);
	/* Same body whether the job or only the artifact is unknown: no leak. */
	if (send_failed(ctx, r, rc))
		return;
	n = snprintf(head, sizeof head,
		     "Status: 200 OK\r\nContent-Type: application/octet-stream\r\n"
		     "Content-Length: %lld\r\nCache-Control: no-store\r\n"
		     "X-Content-Type-Options: nosniff\r\n\r\n",
		     size);
	FCGX_PutStr(head, n, r->fcgi->out);
	r->status = 200;
	r->sent_bytes = size;
	sent = jd_each_artifact_chunk(ctx->db, id, path, put_chunk, r);
	if (sent < 0) {
		/* Headers are out: the short body tells the client; the log tells us. */
		log_kv("error", "artifact_stream", "job", id, "error", db_error(ctx->db),
		       (char *)NULL);
		FCGX_SetExitStatus(1, r->fcgi->out);
	}
}

#define OUTPUT_LIMIT_DEFAULT 65536
#define OUTPUT_LIMIT_MAX 1048576

/* The slice of a stream at off; when it has no bytes there and the job has not
 * ended, and the request waits (secs > 0) and the waiter takes it, *deferred = 1 and
 * nothing is answered now: the waiter runs the handler again once the stream has
 * more than off bytes, the job ended, or secs passed (app/http/waiter.h). */
static enum jobs_rc wait_output(struct api_ctx *ctx, struct req *r, const struct identity *who,
				const char *id, int sid, long long off, long long limit,
				long long secs, struct jobs_slice *sl, int *deferred)
{
	enum jobs_rc rc = jobs_output(ctx->db, who, id, sid, off, limit, sl);

	*deferred = 0;
	if (rc != JOBS_OK || secs <= 0 || sl->len > 0 || sl->terminal)
		return rc;
	if (wt_defer(r, who->key_id, &(struct wt_cond){ WT_JOB_OUTPUT, id, sid, off }, secs)) {
		free(sl->data);
		sl->data = NULL;
		*deferred = 1;
	}
	return rc;
}

/* GET /v1/jobs/{id}/output/{stdout|stderr}?offset=N&limit=M[&encoding=base64][&wait=S]:
 * a bounded byte range of one stream as JSON; of a running job, what is stored so far
 * (eof false until the job has ended and the range reaches its total). */
static void h_output(struct api_ctx *ctx, struct req *r, const struct identity *who,
		     const struct route_args *a)
{
	const char *id = a->id, *stream = a->rest;
	static const char *const names[] = { "offset", "limit", "encoding", "wait", NULL };
	char vals[4][128] = { "", "", "", "" };
	int present[4] = { 0, 0, 0, 0 }, sid, b64, deferred;
	long long off = 0, limit = OUTPUT_LIMIT_DEFAULT, wait = 0;
	struct jobs_slice sl;
	enum jobs_rc rc;
	json_t *o;

	if (strcmp(stream, "stdout") == 0)
		sid = JD_STDOUT;
	else if (strcmp(stream, "stderr") == 0)
		sid = JD_STDERR;
	else {
		http_send_error(r, 404, "not_found", "no such endpoint", NULL, NULL);
		return;
	}
	if (http_parse_query(r, names, vals, present) < 0)
		return;
	if (present[0] && util_parse_ll(vals[0], 0, (1LL << 50), &off) < 0) {
		http_send_error(r, 400, "invalid_request",
				"offset must be a non-negative integer byte offset", "offset", NULL);
		return;
	}
	if (present[1] && util_parse_ll(vals[1], 1, OUTPUT_LIMIT_MAX, &limit) < 0) {
		http_send_error(r, 400, "invalid_request",
				"limit must be an integer from 1 to 1048576", "limit", NULL);
		return;
	}
	if (present[2] && strcmp(vals[2], "base64") != 0 && strcmp(vals[2], "text") != 0) {
		http_send_error(r, 400, "invalid_request", "encoding must be 'text' or 'base64'",
				"encoding", NULL);
		return;
	}
	if (present[3] && util_parse_ll(vals[3], 0, WAIT_MAX_SECONDS, &wait) < 0) {
		http_send_error(r, 400, "invalid_request",
				"wait must be an integer number of seconds from 0 to 30", "wait", NULL);
		return;
	}
	rc = wait_output(ctx, r, who, id, sid, off, limit, wait, &sl, &deferred);
	if (deferred || send_failed(ctx, r, rc))
		return;
	b64 = (present[2] && strcmp(vals[2], "base64") == 0) ||
	      !util_utf8_valid(sl.data, sl.len) || memchr(sl.data, '\0', sl.len) != NULL;
	o = json_pack("{s:s, s:I, s:I, s:I, s:b}", "stream", stream, "offset", (json_int_t)off,
		      "next_offset", (json_int_t)(off + (long long)sl.len), "total_bytes",
		      (json_int_t)sl.total, "eof",
		      sl.terminal && off + (long long)sl.len >= sl.total);
	if (o != NULL && b64) {
		char *enc = util_b64_encode(sl.data, sl.len);
		if (enc == NULL || json_object_set_new(o, "data_base64", json_string(enc)) < 0) {
			json_decref(o);
			o = NULL;
		}
		free(enc);
	} else if (o != NULL &&
		   json_object_set_new(o, "data", json_stringn((const char *)sl.data, sl.len)) <
			   0) {
		json_decref(o);
		o = NULL;
	}
	free(sl.data);
	http_send_json(r, 200, o, NULL);
}

static route_fn h_metrics;

static const struct route routes[] = {
#define ROUTE(method, pattern, handler, is_public) \
	{ method, pattern, handler, #handler, is_public },
	API_ROUTES(ROUTE)
#undef ROUTE
};

#define NROUTES (sizeof routes / sizeof routes[0])

/* A runner host's name as a label value: it is the runner's (gethostname), never a
 * tenant's; still, only characters that need no escaping are kept. */
static void host_label(char *out, size_t n, const char *host)
{
	snprintf(out, n, "%s", host ? host : "");
	for (char *c = out; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '.' || *c == '_'))
			*c = '_';
}

/* Capacity per live runner host (runner_hosts, refreshed every 5 s by each
 * dispatcher; hosts silent for a minute are left out), sessions by status, and the
 * long-polls this API instance holds. */
static int host_metrics(struct db *db, struct strbuf *o)
{
	static const char *const sst[] = { "starting", "ready", "closed", "expired", "failed",
					   "lost" };
	struct db_res *res = db_querya(db,
				       "SELECT host, slots, max_sessions FROM runner_hosts WHERE"
				       " seen_at >= CURRENT_TIMESTAMP(3) - INTERVAL 60 SECOND"
				       " ORDER BY host",
				       NULL, 0);
	long long waiting = 0;
	unsigned long long polls, queries;

	if (res == NULL)
		return -1;
	sb_adds(o, "# HELP sandbox_runner_slots Job slots per live runner host.\n"
		   "# TYPE sandbox_runner_slots gauge\n");
	for (size_t i = 0; i < db_res_rows(res); i++) {
		char host[130];
		host_label(host, sizeof host, db_res_s(res, i, "host"));
		sb_addf(o, "sandbox_runner_slots{runner_host=\"%s\"} %lld\n", host,
			db_res_i(res, i, "slots", 0));
	}
	sb_adds(o, "# HELP sandbox_runner_max_sessions Session places per live runner host.\n"
		   "# TYPE sandbox_runner_max_sessions gauge\n");
	for (size_t i = 0; i < db_res_rows(res); i++) {
		char host[130];
		host_label(host, sizeof host, db_res_s(res, i, "host"));
		sb_addf(o, "sandbox_runner_max_sessions{runner_host=\"%s\"} %lld\n", host,
			db_res_i(res, i, "max_sessions", 0));
	}
	db_res_free(res);
	res = db_querya(db, "SELECT status, COUNT(*) AS n FROM sessions GROUP BY status", NULL, 0);
	if (res == NULL)
		return -1;
	sb_adds(o, "# HELP sandbox_sessions Sessions in the database, by status.\n"
		   "# TYPE sandbox_sessions gauge\n");
	for (size_t k = 0; k < sizeof sst / sizeof sst[0]; k++) {
		long long n = 0;
		for (size_t i = 0; i < db_res_rows(res); i++)
			if (db_res_s(res, i, "status") && strcmp(db_res_s(res, i, "status"), sst[k]) == 0)
				n = db_res_i(res, i, "n", 0);
		sb_addf(o, "sandbox_sessions{status=\"%s\"} %lld\n", sst[k], n);
	}
	db_res_free(res);
	wt_stats(&polls, &queries, &waiting);
	sb_addf(o, "# HELP sandbox_api_waiting_requests Long-polls this API instance holds now.\n"
		   "# TYPE sandbox_api_waiting_requests gauge\nsandbox_api_waiting_requests %lld\n",
		waiting);
	return 0;
}

/* Webhook deliveries by state (a GROUP BY over the job_callbacks_due index of a table
 * purge keeps bounded: 15 ms for 100k rows) and attempts by outcome class (the sums of
 * webhook_attempt_counts, at most 128 rows); app/http/metrics.c renders them. */
static int webhook_metrics(struct db *db, struct strbuf *o)
{
	struct mx_hooks h = { { 0 }, { 0 } };
	struct db_res *res = db_querya(db, "SELECT state, COUNT(*) AS n FROM job_callbacks"
					   " GROUP BY state", NULL, 0);

	if (res == NULL)
		return -1;
	for (size_t i = 0; i < db_res_rows(res); i++)
		mx_hooks_add_state(&h, db_res_s(res, i, "state"), db_res_i(res, i, "n", 0));
	db_res_free(res);
	res = db_querya(db, "SELECT outcome, SUM(n) AS n FROM webhook_attempt_counts"
			    " GROUP BY outcome", NULL, 0);
	if (res == NULL)
		return -1;
	for (size_t i = 0; i < db_res_rows(res); i++)
		mx_hooks_add_outcome(&h, db_res_s(res, i, "outcome"), db_res_i(res, i, "n", 0));
	db_res_free(res);
	mx_render_webhooks(o, &h);
	return 0;
}

/* Queue wait and run time of the jobs that finished in the last 5 minutes, as two
 * histograms (app/http/metrics.c): whole microseconds in SQL (a DOUBLE sum came back
 * through the prepared-statement protocol rounded to "0"), seconds in the text. */
static int recent_metrics(struct db *db, struct strbuf *o)
{
	static const double le[] = { 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 300 };
	static const char *const what[2][3] = {
		{ "sandbox_recent_job_queue_wait_seconds", "Queue wait", "w" },
		{ "sandbox_recent_job_run_seconds", "Run time", "r" },
	};
	struct strbuf q = STRBUF_INIT;
	struct db_res *res;

	sb_adds(&q, "SELECT COUNT(*) AS n, COALESCE(SUM(w), 0) AS ws, COALESCE(SUM(r), 0) AS rs");
	for (size_t k = 0; k < sizeof le / sizeof le[0]; k++)
		sb_addf(&q, ", COALESCE(SUM(w <= %lld), 0) AS w%zu, COALESCE(SUM(r <= %lld), 0)"
			    " AS r%zu", (long long)(le[k] * 1e6), k, (long long)(le[k] * 1e6), k);
	sb_adds(&q, " FROM (SELECT TIMESTAMPDIFF(MICROSECOND, created_at, started_at) AS w,"
		    " TIMESTAMPDIFF(MICROSECOND, started_at, finished_at) AS r"
		    " FROM jobs WHERE finished_at >= CURRENT_TIMESTAMP(3) - INTERVAL 300 SECOND"
		    " AND started_at IS NOT NULL) recent");
	res = q.failed ? NULL : db_querya(db, q.buf, NULL, 0);
	sb_release(&q);
	if (res == NULL)
		return -1;
	for (int i = 0; i < 2; i++) {
		long long cum[sizeof le / sizeof le[0]];
		char col[8], help[128];
		struct mx_window w = { what[i][0], help, le, cum, sizeof le / sizeof le[0],
				       db_res_i(res, 0, "n", 0), 0 };

		snprintf(col, sizeof col, "%ss", what[i][2]);
		w.sum_us = db_res_i(res, 0, col, 0);
		for (size_t k = 0; k < w.n; k++) {
			snprintf(col, sizeof col, "%s%zu", what[i][2], k);
			cum[k] = db_res_i(res, 0, col, 0);
		}
		snprintf(help, sizeof help, "%s of the jobs finished in the last 5 minutes (a"
			 " window, not a running total).", what[i][1]);
		mx_render_window(o, &w);
	}
	db_res_free(res);
	return 0;
}

/* The job figures of GET /metrics, from the database at scrape time. Costs: one
 * GROUP BY over the jobs table's state index (grows with the table: purge keeps it
 * bounded), the rest through indexes. */
static int job_metrics(struct db *db, struct strbuf *o)
{
	struct db_res *res;

	res = db_querya(db, "SELECT state, COUNT(*) AS n FROM jobs GROUP BY state", NULL, 0);
	if (res == NULL)
		return -1;
	sb_adds(o, "# HELP sandbox_jobs Jobs in the database, by state.\n"
		   "# TYPE sandbox_jobs gauge\n");
	for (int st = 0; st < JS_COUNT; st++) {
		long long n = 0;
		for (size_t i = 0; i < db_res_rows(res); i++)
			if (js_parse(db_res_s(res, i, "state")) == st)
				n = db_res_i(res, i, "n", 0);
		sb_addf(o, "sandbox_jobs{state=\"%s\"} %lld\n", js_name(st), n);
	}
	db_res_free(res);
	/* The job at the head of the claim order: how long the next job to run waited. */
	res = db_querya(db,
			"SELECT TIMESTAMPDIFF(MICROSECOND, created_at, CURRENT_TIMESTAMP(3)) AS us"
			" FROM jobs WHERE state = 'queued' ORDER BY fair_tag, seq LIMIT 1",
			NULL, 0);
	if (res == NULL)
		return -1;
	sb_addf(o, "# HELP sandbox_queue_head_age_seconds How long the next job to be claimed"
		   " has waited (0: queue empty).\n# TYPE sandbox_queue_head_age_seconds gauge\n"
		   "sandbox_queue_head_age_seconds %.3f\n",
		db_res_rows(res) ? (double)db_res_i(res, 0, "us", 0) / 1e6 : 0.0);
	db_res_free(res);
	res = db_querya(db,
			"SELECT SUBSTRING_INDEX(runner_id, '/', 1) AS host, COUNT(*) AS n FROM jobs"
			" WHERE state = 'running' GROUP BY host ORDER BY host",
			NULL, 0);
	if (res == NULL)
		return -1;
	sb_adds(o, "# HELP sandbox_runner_busy_slots Running jobs per runner host.\n"
		   "# TYPE sandbox_runner_busy_slots gauge\n");
	for (size_t i = 0; i < db_res_rows(res); i++) {
		char host[130];
		host_label(host, sizeof host, db_res_s(res, i, "host"));
		sb_addf(o, "sandbox_runner_busy_slots{runner_host=\"%s\"} %lld\n", host,
			db_res_i(res, i, "n", 0));
	}
	db_res_free(res);
	if (host_metrics(db, o) < 0 || webhook_metrics(db, o) < 0)
		return -1;
	return recent_metrics(db, o);
}

/* GET /metrics: Prometheus text. Public in the route table (scrapers hold no API
 * key); nginx allows it from configured addresses only and the API checks
 * REMOTE_ADDR against metrics_allow as well. */
static void h_metrics(struct api_ctx *ctx, struct req *r, const struct identity *who,
		      const struct route_args *a)
{
	static const char *names[NROUTES + 1];
	static char labels[NROUTES + 1][96];
	struct strbuf o = STRBUF_INIT;
	struct db *db;

	(void)who;
	(void)a;
	if (!mx_addr_allowed(ctx->cfg->metrics_allow, r->remote_addr)) {
		http_send_error(r, 403, "forbidden", "metrics are not served to this address",
				NULL, NULL);
		return;
	}
	if ((db = get_db(ctx)) == NULL) {
		send_unavailable(r);
		return;
	}
	if (job_metrics(db, &o) < 0) {
		sb_release(&o);
		route_db_error(ctx, r);
		return;
	}
	for (size_t i = 0; i < NROUTES; i++) {
		snprintf(labels[i + 1], sizeof labels[i + 1], "%s %s", routes[i].method,
			 routes[i].pattern);
		names[i + 1] = labels[i + 1];
	}
	names[0] = "none";
	if (ctx->mx)
		mx_render_requests(&o, ctx->mx, (size_t)ctx->cfg->api_workers, names, NROUTES);
	if (o.failed) {
		sb_release(&o);
		http_send_error(r, 500, "internal_error", "internal error", NULL, NULL);
		return;
	}
	http_send_bytes(r, 200, "text/plain; version=0.0.4; charset=utf-8", o.buf, o.len, NULL);
	sb_release(&o);
}

/* RateLimit-Policy and RateLimit (the IETF httpapi RateLimit header fields) for the
 * key's queue quota: q = max_queued, r = what is left of it when the request arrived
 * (quota_active_now: this worker's cached count if under 500 ms old, else one bounded
 * count). Written ahead of the handler's own header lines (a CGI header block takes
 * them in any order), once: a long-poll's re-dispatch finds them in its buffer. */
static void send_ratelimit(struct api_ctx *ctx, struct req *r, const struct identity *who)
{
	long long max, active;
	char h[160];
	int n;

	if (r->wait.resumed || ctx->db == NULL)
		return;
	active = quota_active_now(ctx->db, ctx->cfg, who, &max);
	if (active < 0)
		return; /* the handler meets the database error itself */
	n = snprintf(h, sizeof h, "RateLimit-Policy: \"queue\";q=%lld\r\nRateLimit: \"queue\";r=%lld\r\n",
		     max, active < max ? max - active : 0);
	if (n > 0 && (size_t)n < sizeof h)
		FCGX_PutStr(h, n, r->fcgi->out);
}

/* One key's ids (ids[0 .. k), k >= 2) read in one scoped query; the finished ones go
 * to this worker's job cache (jc_put keeps only those). Errors are the handler's. */
static int prefetch_flush(struct api_ctx *ctx, const struct identity *who, const char **ids,
			  size_t k)
{
	struct job_set s;

	if (k < 2)
		return 0;
	if (jobs_get_ids(ctx->db, who, ids, k, ctx->cfg->inline_output_bytes, &s) != JOBS_OK)
		return -1;
	for (size_t i = 0; i < s.n; i++) {
		json_t *job = render_job(&s.v[i]);

		if (job != NULL)
			jc_put(s.v[i].id, job);
		json_decref(job);
	}
	jobs_set_free(&s);
	return 0;
}

/* Adds r's id to ids unless it is not a job id, already there or cached. */
static void prefetch_add(const struct identity *who, const struct req *r, const char **ids,
			 size_t *k)
{
	json_t *hit;

	/* jobs only: GET /v1/jobs/{id}, POST /v1/jobs and /v1/jobs/batch with ?wait */
	if (strncmp(r->path, "/v1/jobs", 8) != 0 || !util_is_uuid(r->wait.id))
		return;
	for (size_t i = 0; i < *k; i++)
		if (strcmp(ids[i], r->wait.id) == 0)
			return;
	if ((hit = jc_get(r->wait.id, who)) != NULL) {
		json_decref(hit);
		return;
	}
	ids[(*k)++] = r->wait.id;
}

void routes_prefetch(struct api_ctx *ctx, struct req *const *rs, size_t n)
{
	unsigned char *taken;
	struct identity who;
	const char *ids[JOBS_IDS_MAX];

	if (n < 2 || get_db(ctx) == NULL || (taken = calloc(n, 1)) == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		int rc = 0;

		/* the same token is the same key, so the same scope: one identity each */
		if (taken[i] || rs[i]->authorization == NULL ||
		    auth_identify(ctx->db, rs[i]->authorization, &who) != AUTH_OK)
			continue;
		for (size_t j = i; j < n; j++) {
			if (taken[j] || rs[j]->authorization == NULL ||
			    strcmp(rs[j]->authorization, rs[i]->authorization) != 0)
				continue;
			taken[j] = 1;
			if (rc < 0)
				continue; /* marked, nothing more read for this key */
			prefetch_add(&who, rs[j], ids, &k);
			if (k == JOBS_IDS_MAX) {
				rc = prefetch_flush(ctx, &who, ids, k);
				k = 0;
			}
		}
		if (rc < 0 || prefetch_flush(ctx, &who, ids, k) < 0)
			break; /* a database error: each handler meets it and answers it */
	}
	free(taken);
}

void routes_handle(struct api_ctx *ctx, struct req *r)
{
	char allow[64], hdr[96];
	struct route_args a;
	struct identity who;
	const struct route *rt = router_match(routes, sizeof routes / sizeof routes[0], r->method,
					      r->path, &a, allow, sizeof allow);

	if (rt == NULL && allow[0] == '\0') {
		http_send_error(r, 404, "not_found", "no such endpoint", NULL, NULL);
		return;
	}
	if (rt == NULL) {
		snprintf(hdr, sizeof hdr, "Allow: %s\r\n", allow);
		http_send_error(r, 405, "method_not_allowed", "method not allowed", NULL, hdr);
		return;
	}
	r->route = (int)(rt - routes) + 1;
	if (rt->is_public) {
		rt->handler(ctx, r, NULL, &a);
		return;
	}
	if (authenticate(ctx, r, &who) < 0)
		return;
	send_ratelimit(ctx, r, &who);
	rt->handler(ctx, r, &who, &a);
}
