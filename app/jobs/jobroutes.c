/* The single-job routes: POST /v1/jobs (?wait=S), GET /v1/jobs/{id} (?wait=S, a long
 * poll through the waiter), POST /v1/jobs/{id}/cancel; what the other job routes share
 * with them (jobroutes.h); and this worker's cache of finished jobs around them
 * (app/jobs/jobcache.h): filled by reads and by the prefetch of held long-polls,
 * answered from its serialized bytes. */
#include "jobroutes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_routes.h"
#include "http_util.h"
#include "jobcache.h"
#include "log.h"
#include "render.h"
#include "rtlive.h"
#include "sha256.h"
#include "validate.h"
#include "waiter.h"

#define RETRY_AFTER "Retry-After: 1\r\n"
/* The stored-bytes quota frees only as jobs are purged: a re-check interval, not a
 * promise. */
#define RETRY_AFTER_STORED "Retry-After: 60\r\n"

static void send_not_found(struct req *r)
{
	http_send_error(r, 404, "not_found", "no such job", NULL, NULL);
}

int jr_send_failed(struct api_ctx *ctx, struct req *r, enum jobs_rc rc)
{
	if (rc == JOBS_OK)
		return 0;
	if (rc == JOBS_NOT_FOUND)
		send_not_found(r);
	else
		route_db_error(ctx, r);
	return 1;
}

int jr_idem_key_ok(const char *k)
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

static enum jobs_rc poll_job(struct api_ctx *ctx, struct req *r, const struct identity *who,
			     const char *id, long long wait, json_t **job, int *deferred);
static void submit_answer(struct api_ctx *ctx, struct req *r, const struct identity *who,
			  const char *id, enum jobs_rc rc, long long wait, json_t *job);

/* http_send_json for a job that may be this worker's cached object (get_job): a
 * cached job was serialized once, when it was cached (jc_text), and goes out as those
 * bytes. */
static void send_job(struct req *r, int status, json_t *job, const char *extra)
{
	const char *cached;
	size_t len;

	if ((cached = jc_text(job, &len)) != NULL) {
		http_send_bytes(r, status, "application/json", cached, len, extra);
		json_decref(job);
		return;
	}
	http_send_json(r, status, job, extra);
}

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
	send_job(r, wait > 0 && jr_job_terminal(job) ? 200 : 202, job, loc);
}

void h_submit(struct api_ctx *ctx, struct req *r, const struct identity *who,
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
	if (jr_parse_wait(r, &wait) < 0)
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
	if (r->idempotency_key && !jr_idem_key_ok(r->idempotency_key)) {
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

int jr_job_terminal(const json_t *job)
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
	if (rc == JOBS_OK && !jr_job_terminal(*job) && wait_slot_take(r, who, id, wait)) {
		json_decref(*job);
		*job = NULL;
		*deferred = 1;
	}
	return rc;
}

int jr_parse_wait(struct req *r, long long *wait)
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

void h_get(struct api_ctx *ctx, struct req *r, const struct identity *who,
	   const struct route_args *a)
{
	const char *id = a->id;
	long long wait;
	json_t *job = NULL;
	enum jobs_rc rc;

	int deferred;

	if (jr_parse_wait(r, &wait) < 0)
		return;
	rc = poll_job(ctx, r, who, id, wait, &job, &deferred);
	if (!deferred && !jr_send_failed(ctx, r, rc))
		send_job(r, 200, job, NULL);
}

void h_cancel(struct api_ctx *ctx, struct req *r, const struct identity *who,
	      const struct route_args *a)
{
	const char *id = a->id;
	enum jobs_rc rc = jobs_cancel(ctx->db, who, id);
	json_t *job = NULL;

	if (rc == JOBS_OK)
		rc = load_job(ctx, who, id, &job);
	if (jr_send_failed(ctx, r, rc))
		return;
	log_kv("info", "job_cancel", "job", id, "key", who->key_id, (char *)NULL);
	http_send_json(r, 200, job, NULL);
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

	if (n < 2 || route_db(ctx) == NULL || (taken = calloc(n, 1)) == NULL)
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

void routes_release(void)
{
	jc_clear();
}
