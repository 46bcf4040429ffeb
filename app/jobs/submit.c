/* New jobs: one submit (POST /v1/jobs, MCP run_command) or a batch (POST /v1/jobs/batch)
 * stored in one transaction each, under the key's quotas (app/jobs/quota.h) and its
 * idempotency keys, then the runner woken. Reads, cancel and the rest of the job
 * store are app/jobs/jobs.c's (jobs.h declares both). */
#include "jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobdata.h"
#include "jobsql.h"
#include "quota.h"
#include "wake.h"

/* Inside the transaction: an earlier job with this idempotency key? */
static enum jobs_rc idem_lookup(struct db *db, const struct identity *who, const char *key,
				const unsigned char hash[32], char id[UUID_STR_LEN])
{
	struct db_res *res = db_query_p(db,
					"SELECT id, request_sha256 FROM jobs"
					" WHERE identity_namespace = ? AND tenant_id = ?"
					" AND subject_type = ? AND subject_id = ?"
					" AND idempotency_key = ?",
					db_str(who->ns), db_str(who->tenant),
					db_str(who->subject_type), db_str(who->subject_id),
					db_str(key));
	enum jobs_rc rc = JOBS_OK;

	if (res == NULL)
		return JOBS_DB;
	if (db_res_rows(res) == 1) {
		snprintf(id, UUID_STR_LEN, "%s", db_res_s(res, 0, "id"));
		rc = db_res_l(res, 0, "request_sha256") == 32 &&
				     memcmp(db_res_s(res, 0, "request_sha256"), hash, 32) == 0
			     ? JOBS_REPLAY
			     : JOBS_CONFLICT;
	}
	db_res_free(res);
	return rc;
}

/* Bytes of input a queued job stores (stdin, env text, files). */
static long long input_bytes(const struct job_req *req, size_t env_len)
{
	long long n = (long long)req->stdin_len + (long long)env_len;

	for (size_t i = 0; i < req->nfiles; i++)
		n += (long long)req->files[i].len;
	return n;
}

/* Round robin across tenants, FIFO within one (schema 003): the tag is the smallest
 * still queued, or one past this tenant's last queued job if that is later. Two
 * submits of one tenant racing may get the same tag; seq orders them. */
/* The server's clock at a submit: as stored and as rendered (TS). */
struct created {
	char db[40];
	char ts[40];
};

/* The same round trip reads the server's clock: the job's created_at, stored
 * explicitly, so that the submit's answer needs no read back (struct created). */
static long long fair_tag(struct db *db, const struct identity *who, struct created *c)
{
	struct db_res *res = db_query_p(db,
					"SELECT GREATEST(COALESCE((SELECT MIN(fair_tag) FROM jobs"
					" WHERE state = 'queued'), 0), COALESCE((SELECT"
					" MAX(fair_tag) + 1 FROM jobs WHERE state = 'queued' AND"
					" identity_namespace = ? AND tenant_id = ?), 0)) AS tag,"
					" NOW(3) AS now_db, " TS("NOW(3)") " AS now_ts",
					db_str(who->ns), db_str(who->tenant));
	const char *db_now, *ts;
	long long t;

	if (res == NULL)
		return -1;
	t = db_res_i(res, 0, "tag", 0);
	db_now = db_res_s(res, 0, "now_db");
	ts = db_res_s(res, 0, "now_ts");
	if (db_now == NULL || ts == NULL || strlen(db_now) >= sizeof c->db ||
	    strlen(ts) >= sizeof c->ts)
		t = -1;
	else {
		memcpy(c->db, db_now, strlen(db_now) + 1);
		memcpy(c->ts, ts, strlen(ts) + 1);
	}
	db_res_free(res);
	return t;
}

/* A compiled runtime's compile step (schema 008), stored beside the job's argv. */
static long long insert_compile(struct db *db, const char *id, const struct job_req *req)
{
	char *c;
	long long rc;

	if (req->compile_argv == NULL)
		return 0;
	if ((c = json_dumps(req->compile_argv, JSON_COMPACT)) == NULL)
		return -1;
	rc = db_exec_p(db, "UPDATE jobs SET compile_argv_json = ? WHERE id = ?", db_str(c),
		       db_str(id));
	free(c);
	return rc;
}

static int insert_job(struct db *db, const struct identity *who, const struct job_req *req,
		      const char *idem_key, const unsigned char hash[32], const char *id,
		      long long stored, struct created *c)
{
	char *argv = req->argv ? json_dumps(req->argv, JSON_COMPACT) : NULL;
	char *env = json_dumps(req->env, JSON_COMPACT);
	char *meta = json_dumps(req->metadata, JSON_COMPACT);
	char *envmeta = val_env_meta(req->env);
	long long rc = -1, tag;

	if ((req->argv && argv == NULL) || env == NULL || meta == NULL || envmeta == NULL)
		goto out;
	tag = fair_tag(db, who, c);
	if (tag < 0)
		goto out;
	rc = db_exec_p(db,
		     "INSERT INTO jobs (id, key_id, identity_namespace, tenant_id, subject_type,"
		     " subject_id, actor_type, actor_id, state, command, argv_json, env_json,"
		     " stdin, cwd, network, artifacts_dir, metadata_json, wall_seconds,"
		     " cpu_seconds, memory_mb, pids, output_bytes, disk_mb, idempotency_key,"
		     " request_sha256, env_meta_json, stored_bytes, fair_tag, profile_name,"
		     " callback_url, created_at)"
		     " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?,"
		     " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		     db_str(id), db_str(who->key_id), db_str(who->ns), db_str(who->tenant),
		     db_str(who->subject_type), db_str(who->subject_id),
		     db_str(who->has_actor_type ? who->actor_type : NULL),
		     db_str(who->has_actor_id ? who->actor_id : NULL), db_str(req->command),
		     db_str(argv), db_str(env),
		     db_blob(req->stdin_buf ? (const void *)req->stdin_buf : "", req->stdin_len),
		     db_str(req->cwd), db_i64(req->network), db_str(req->artifacts), db_str(meta),
		     db_i64(req->limits[LIM_WALL_SECONDS]), db_i64(req->limits[LIM_CPU_SECONDS]),
		     db_i64(req->limits[LIM_MEMORY_MB]), db_i64(req->limits[LIM_PIDS]),
		     db_i64(req->limits[LIM_OUTPUT_BYTES]), db_i64(req->limits[LIM_DISK_MB]),
		     db_str(idem_key), db_blob(idem_key ? (const void *)hash : NULL, 32),
		     db_str(envmeta), db_i64(stored), db_i64(tag), db_str(req->profile),
		     db_str(req->callback_url), db_str(c->db));
	if (rc >= 0)
		rc = insert_compile(db, id, req);
	for (size_t i = 0; rc >= 0 && i < req->nfiles; i++)
		rc = db_exec_p(db,
			       "INSERT INTO job_files (job_id, idx, path, content, executable)"
			       " VALUES (?, ?, ?, ?, ?)",
			       db_str(id), db_i64((long long)i), db_str(req->files[i].path),
			       db_blob(req->files[i].data, req->files[i].len),
			       db_i64(req->files[i].executable));
out:
	free(argv);
	if (env)
		explicit_bzero(env, strlen(env)); /* env values are secrets */
	free(env);
	free(meta);
	free(envmeta);
	return rc < 0 ? -1 : 0;
}

/* A failed statement's end for db_tx: a concurrent insert of the same idempotency
 * key (1062) is retried whole, the next run then finds that job and replays it. */
static enum db_tx_end stmt_failed(struct db *db, int idem)
{
	return idem && db_errno(db) == 1062 ? DB_TX_RETRY : DB_TX_ERROR;
}

/* One submit, the body of its transaction (db_tx): rc is its answer. */
struct create_tx {
	const struct cfg *cfg;
	const struct identity *who;
	const struct job_req *req;
	const char *idem_key;
	const unsigned char *hash;
	long long stored; /* the job's input bytes */
	char *id;         /* UUID_STR_LEN */
	struct created *c;
	enum jobs_rc rc;
};

static enum db_tx_end create_body(struct db *db, void *arg)
{
	struct create_tx *t = arg;

	t->rc = JOBS_DB;
	if (t->idem_key &&
	    (t->rc = idem_lookup(db, t->who, t->idem_key, t->hash, t->id)) != JOBS_OK)
		return t->rc == JOBS_DB ? DB_TX_ERROR : DB_TX_ROLLBACK;
	switch (quota_admit(db, t->cfg, t->who, t->stored)) {
	case QUOTA_OK: break;
	case QUOTA_QUEUED: t->rc = JOBS_QUOTA; return DB_TX_ROLLBACK;
	case QUOTA_STORED: t->rc = JOBS_STORAGE; return DB_TX_ROLLBACK;
	default: t->rc = JOBS_DB; return DB_TX_ERROR;
	}
	t->rc = JOBS_DB;
	if (util_uuid7(t->id) < 0)
		return DB_TX_ERROR;
	/* The key's bytes last: its storage row is locked only until the COMMIT. */
	if (insert_job(db, t->who, t->req, t->idem_key, t->hash, t->id, t->stored, t->c) < 0 ||
	    jobs_add_event(db, t->id, -1, JS_QUEUED, t->who, "submitted") < 0 ||
	    jd_add_stored(db, t->who->key_id, t->stored) < 0)
		return stmt_failed(db, t->idem_key != NULL);
	t->rc = JOBS_OK;
	return DB_TX_COMMIT;
}

static enum jobs_rc create_tx(struct db *db, const struct cfg *cfg, const struct identity *who,
			      const struct job_req *req, const char *idem_key,
			      const unsigned char hash[32], char id[UUID_STR_LEN], struct created *c)
{
	char *env = json_dumps(req->env, JSON_COMPACT);
	struct create_tx t = { .cfg = cfg, .who = who, .req = req, .idem_key = idem_key,
			       .hash = hash, .id = id, .c = c, .rc = JOBS_DB };

	if (env == NULL)
		return JOBS_DB;
	t.stored = input_bytes(req, strlen(env));
	explicit_bzero(env, strlen(env));
	free(env);
	return db_tx(db, create_body, &t) < 0 ? JOBS_DB : t.rc;
}

/* A job just created, as GET would read it back at that moment: queued, no result,
 * the effective values the INSERT stored. */
static json_t *created_job(const struct identity *who, const struct job_req *req,
			   const char *id, const struct created *c)
{
	char *argv = req->argv ? json_dumps(req->argv, JSON_COMPACT) : NULL;
	char *meta = json_dumps(req->metadata, JSON_COMPACT);
	struct job_view v = {
		.id = id,
		.state = JS_QUEUED,
		.created_at = c->ts,
		.ns = who->ns,
		.tenant = who->tenant,
		.subject_type = who->subject_type,
		.subject_id = who->subject_id,
		.actor_type = who->has_actor_type ? who->actor_type : NULL,
		.actor_id = who->has_actor_id ? who->actor_id : NULL,
		.command = req->command,
		.argv_json = argv,
		.cwd = req->cwd,
		.artifacts_dir = req->artifacts,
		.metadata_json = meta,
		.profile_name = req->profile,
		.network = req->network,
		.cb_url = req->callback_url,
	};
	json_t *job = NULL;

	memcpy(v.limits, req->limits, sizeof v.limits);
	if ((req->argv == NULL || argv != NULL) && meta != NULL)
		job = render_job(&v);
	free(argv);
	free(meta);
	return job;
}

enum jobs_rc jobs_create(struct db *db, const struct cfg *cfg, const struct identity *who,
			 const struct job_req *req, const char *idem_key,
			 const unsigned char req_hash[32], char id[UUID_STR_LEN])
{
	return jobs_create_job(db, cfg, who, req, idem_key, req_hash, id, NULL);
}

enum jobs_rc jobs_create_job(struct db *db, const struct cfg *cfg, const struct identity *who,
			     const struct job_req *req, const char *idem_key,
			     const unsigned char req_hash[32], char id[UUID_STR_LEN],
			     json_t **job)
{
	enum jobs_rc rc = JOBS_DB;
	struct created c = { "", "" };
	struct val_err e;

	if (job)
		*job = NULL;

	/* The API checks the key's profiles when it validates the request; this one
	 * fails closed should a caller not have. */
	if (val_job_profile(req, who->profiles, who->nprofiles, &e) < 0)
		return JOBS_FORBIDDEN;
	rc = create_tx(db, cfg, who, req, idem_key, req_hash, id, &c);
	if (rc == JOBS_OK)
		wake_send(cfg->runner_wake_socket); /* committed: a local runner claims it now */
	if (rc == JOBS_OK && job)
		*job = created_job(who, req, id, &c); /* NULL: the caller reads it back */
	return rc;
}

/* A batch, the body of its transaction (db_tx). Every decision is made before an
 * item's insert, so an item that is refused needs no savepoint. */
struct batch_tx {
	const struct cfg *cfg;
	const struct identity *who;
	struct jobs_batch_item *items;
	size_t n;
	int any_idem;
};

/* Admits and inserts item it; *added: the bytes this batch stored so far (not yet on
 * the key's total, which takes them once at the end). 0, or -1 on a database error. */
static int batch_item(struct db *db, const struct batch_tx *t, struct jobs_batch_item *it,
		      long long *added)
{
	char *env;
	long long stored;
	enum quota_rc q;

	it->rc = JOBS_OK;
	if (it->idem_key &&
	    (it->rc = idem_lookup(db, t->who, it->idem_key, it->hash, it->id)) != JOBS_OK)
		return it->rc == JOBS_DB ? -1 : 0;
	if ((env = json_dumps(it->req->env, JSON_COMPACT)) == NULL)
		return -1;
	stored = input_bytes(it->req, strlen(env));
	explicit_bzero(env, strlen(env));
	free(env);
	/* The quota sees the items before this one as if they were on the key's total. */
	q = quota_admit(db, t->cfg, t->who, *added + stored);
	if (q == QUOTA_DB)
		return -1;
	if (q != QUOTA_OK) {
		it->rc = q == QUOTA_QUEUED ? JOBS_QUOTA : JOBS_STORAGE;
		return 0;
	}
	if (util_uuid7(it->id) < 0 ||
	    insert_job(db, t->who, it->req, it->idem_key, it->hash, it->id, stored,
		       &(struct created){ "", "" }) < 0 ||
	    jobs_add_event(db, it->id, -1, JS_QUEUED, t->who, "submitted (batch)") < 0)
		return -1;
	*added += stored;
	return 0;
}

static enum db_tx_end batch_body(struct db *db, void *arg)
{
	struct batch_tx *t = arg;
	long long added = 0;

	for (size_t i = 0; i < t->n; i++)
		if (t->items[i].req != NULL && batch_item(db, t, &t->items[i], &added) < 0)
			return stmt_failed(db, t->any_idem);
	/* Once, last: the batch locks one storage row of the key, only until COMMIT. */
	if (jd_add_stored(db, t->who->key_id, added) < 0)
		return DB_TX_ERROR;
	return DB_TX_COMMIT;
}

enum jobs_rc jobs_create_batch(struct db *db, const struct cfg *cfg, const struct identity *who,
			       struct jobs_batch_item *items, size_t n)
{
	struct batch_tx t = { .cfg = cfg, .who = who, .items = items, .n = n };
	struct val_err e;

	for (size_t i = 0; i < n; i++) {
		if (items[i].req == NULL)
			continue;
		t.any_idem |= items[i].idem_key != NULL;
		/* Fails closed, as jobs_create does, should a caller not have checked. */
		if (val_job_profile(items[i].req, who->profiles, who->nprofiles, &e) < 0) {
			items[i].rc = JOBS_FORBIDDEN;
			items[i].req = NULL;
		}
	}
	if (db_tx(db, batch_body, &t) < 0)
		return JOBS_DB;
	wake_send(cfg->runner_wake_socket); /* committed: a local runner claims it now */
	return JOBS_OK;
}
