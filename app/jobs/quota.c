/* A key's quotas at submit (see quota.h). */
#include "quota.h"

#include <stdio.h>
#include <string.h>

#include "jobdata.h"
#include "util.h"

/* Far below the quota, submissions of one key run in parallel (their commits share
 * fsyncs). Within QUOTA_LOCK_MARGIN of it they serialize on the key's row (written:
 * jd_key_lock, so that two Galera nodes conflict too) and count again, so the quota is
 * exact where it matters: overshooting would need more than
 * QUOTA_LOCK_MARGIN concurrent submits of one key all seeing the same stale count. */
#define QUOTA_LOCK_MARGIN 64

/* Counting a long queue on every submit costs more than the submit itself, so a
 * worker remembers its last count per key for QUOTA_CACHE_MS and skips the count
 * while that count plus QUOTA_CACHE_SLACK stays below the quota: to overshoot, more
 * than QUOTA_CACHE_SLACK jobs of one key would have to arrive within that time.
 * Near the quota the count (and then the lock) is always taken. */
#define QUOTA_CACHE_MS 500.0
#define QUOTA_CACHE_SLACK 2000
#define QUOTA_CACHE_KEYS 64

static struct {
	char key_id[40];
	long long count;
	double at; /* util_mono_ms() */
} cache[QUOTA_CACHE_KEYS];

static int cached_ok(const struct identity *who, long long max)
{
	double now = util_mono_ms();

	for (int i = 0; i < QUOTA_CACHE_KEYS; i++) {
		if (strcmp(cache[i].key_id, who->key_id) != 0)
			continue;
		if (now - cache[i].at < QUOTA_CACHE_MS && cache[i].count + QUOTA_CACHE_SLACK < max) {
			cache[i].count++;
			return 1;
		}
		return 0;
	}
	return 0;
}

static void remember(const struct identity *who, long long count)
{
	int slot = 0;

	for (int i = 0; i < QUOTA_CACHE_KEYS; i++) {
		if (strcmp(cache[i].key_id, who->key_id) == 0) {
			slot = i;
			break;
		}
		if (cache[i].at < cache[slot].at)
			slot = i;
	}
	snprintf(cache[slot].key_id, sizeof cache[slot].key_id, "%s", who->key_id);
	cache[slot].count = count + 1; /* this submit */
	cache[slot].at = util_mono_ms();
}

/* Jobs of this key that count against its quota, counted up to max. */
static long long count_active(struct db *db, const struct identity *who, long long max)
{
	/* Counting stops at the quota: a long queue does not make every submit slower. */
	struct db_res *res = db_query_p(db,
					"SELECT COUNT(*) AS n FROM (SELECT 1 FROM jobs"
					" WHERE key_id = ? AND state IN ('queued', 'running')"
					" LIMIT ?) active",
					db_str(who->key_id), db_i64(max));
	long long n = res ? db_res_i(res, 0, "n", 0) : -1;

	db_res_free(res);
	return n;
}

/* The same count as a locking read, for the recount under the key's lock: under
 * REPEATABLE READ a plain SELECT reads the transaction's snapshot, taken at its first
 * read (before the lock was granted), and would miss the jobs that the submits which
 * held the lock before this one committed; a locking read sees them. Only near the
 * quota, so it counts at most about max rows. */
static long long count_active_locked(struct db *db, const struct identity *who)
{
	struct db_res *res = db_query_p(db,
					"SELECT COUNT(*) AS n FROM jobs WHERE key_id = ?"
					" AND state IN ('queued', 'running') LOCK IN SHARE MODE",
					db_str(who->key_id));
	long long n = res ? db_res_i(res, 0, "n", 0) : -1;

	db_res_free(res);
	return n;
}

static enum quota_rc queued_check(struct db *db, const struct cfg *cfg,
				  const struct identity *who)
{
	long long max = who->max_queued >= 0 ? who->max_queued : cfg->default_max_queued;
	long long active;

	if (cached_ok(who, max))
		return QUOTA_OK;
	active = count_active(db, who, max);
	if (active < 0)
		return QUOTA_DB;
	remember(who, active);
	if (active >= max)
		return QUOTA_QUEUED;
	if (active + QUOTA_LOCK_MARGIN < max)
		return QUOTA_OK;
	/* near the cap: the key's row written (jd_key_lock), exact on a Galera cluster too */
	if (jd_key_lock(db, who->key_id) < 0)
		return QUOTA_DB;
	active = count_active_locked(db, who);
	if (active < 0)
		return QUOTA_DB;
	return active >= max ? QUOTA_QUEUED : QUOTA_OK;
}

/* The key's stored bytes (output, artifacts, inputs) plus this job's inputs must stay
 * within its quota. Not locked: concurrent submits may overshoot by their inputs. */
enum quota_rc quota_stored_admit(struct db *db, const struct cfg *cfg, const char *key_id,
				 long long max_mb, long long incoming)
{
	long long mb = max_mb >= 0 ? max_mb : cfg->default_max_stored_mb;
	long long have = jd_key_stored(db, key_id);

	if (have < 0)
		return QUOTA_DB;
	return have + incoming > mb * 1048576 ? QUOTA_STORED : QUOTA_OK;
}

static enum quota_rc stored_check(struct db *db, const struct cfg *cfg,
				  const struct identity *who, long long incoming)
{
	return quota_stored_admit(db, cfg, who->key_id, who->max_stored_mb, incoming);
}

/* The key's max_sessions (its own, else default_max_sessions) and its live
 * (starting or ready) sessions: 0 or -1. */
static int sessions_use(struct db *db, const struct cfg *cfg, const struct identity *who,
			long long *max, long long *live)
{
	struct db_res *res = db_query_p(db,
					"SELECT k.max_sessions, (SELECT COUNT(*) FROM sessions s"
					" WHERE s.key_id = k.id AND s.status IN ('starting', 'ready'))"
					" AS live FROM api_keys k WHERE k.id = ?",
					db_str(who->key_id));

	if (res == NULL)
		return -1;
	*max = db_res_rows(res) && db_res_s(res, 0, "max_sessions")
		       ? db_res_i(res, 0, "max_sessions", 0)
		       : cfg->default_max_sessions;
	*live = db_res_rows(res) ? db_res_i(res, 0, "live", 0) : 0;
	db_res_free(res);
	return 0;
}

enum quota_rc quota_admit(struct db *db, const struct cfg *cfg, const struct identity *who,
			  long long incoming)
{
	enum quota_rc rc = queued_check(db, cfg, who);

	return rc != QUOTA_OK ? rc : stored_check(db, cfg, who, incoming);
}

json_t *quota_report(struct db *db, const struct cfg *cfg, const struct identity *who)
{
	long long max_q = who->max_queued >= 0 ? who->max_queued : cfg->default_max_queued;
	long long mb = who->max_stored_mb >= 0 ? who->max_stored_mb : cfg->default_max_stored_mb;
	long long run = who->max_running >= 0 ? who->max_running : cfg->default_max_running;
	long long active = count_active(db, who, max_q), stored, max_s, live_s;

	if (active < 0 || (stored = jd_key_stored(db, who->key_id)) < 0 ||
	    sessions_use(db, cfg, who, &max_s, &live_s) < 0)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:I, s:o, s:I, s:I}", "max_queued", (json_int_t)max_q,
			 "active_jobs", (json_int_t)active, "max_stored_bytes",
			 (json_int_t)(mb * 1048576), "stored_bytes", (json_int_t)stored,
			 "max_running", run > 0 ? json_integer(run) : json_null(), "max_sessions",
			 (json_int_t)max_s, "live_sessions", (json_int_t)live_s);
}

long long quota_active_now(struct db *db, const struct cfg *cfg, const struct identity *who,
			   long long *max)
{
	double now = util_mono_ms();
	long long n;

	*max = who->max_queued >= 0 ? who->max_queued : cfg->default_max_queued;
	for (int i = 0; i < QUOTA_CACHE_KEYS; i++)
		if (strcmp(cache[i].key_id, who->key_id) == 0 && now - cache[i].at < QUOTA_CACHE_MS)
			return cache[i].count < *max ? cache[i].count : *max;
	n = count_active(db, who, *max);
	if (n >= 0)
		remember(who, n - 1); /* remember() counts a submit in: this is none */
	return n;
}
