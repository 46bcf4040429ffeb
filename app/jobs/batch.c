/* POST /v1/jobs/batch: each item validated as POST /v1/jobs validates a body, the
 * valid ones stored in one transaction (jobs_create_batch), one entry per item; with
 * ?wait=S a long poll on every stored job that has not ended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_routes.h"
#include "http_util.h"
#include "jobroutes.h"
#include "log.h"
#include "render.h"
#include "rtlive.h"
#include "sha256.h"
#include "validate.h"
#include "waiter.h"

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
	if (key && (!json_is_string(key) || !jr_idem_key_ok(json_string_value(key)))) {
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

		if (id != NULL && n < JOBS_IDS_MAX && !(open_only && jr_job_terminal(job)))
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
		if (id != NULL && !jr_job_terminal(json_object_get(e, "job")))
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
void h_batch(struct api_ctx *ctx, struct req *r, const struct identity *who,
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
	if (jr_parse_wait(r, &wait) < 0)
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
