/* `sandboxctl purge [--older-than DURATION] [--dry-run]`: retention. Deletes finished
 * jobs (and their files, output, artifacts, events, webhook delivery and its attempts)
 * and ended sessions (and their commands, command output, requests, E2B tokens) that ended
 * before the cutoff, in small transactions so that no table stays locked for long,
 * and takes their bytes off their keys' stored totals. Without --older-than the
 * config's retention_days. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "jobdata.h"
#include "util.h"

#define PURGE_BATCH 200

#define PURGE_WHERE \
	" WHERE finished_at < CURRENT_TIMESTAMP(3) - INTERVAL ? SECOND" \
	" AND state NOT IN ('queued', 'running')"

#define PURGE_SESSIONS_WHERE \
	" WHERE ended_at < CURRENT_TIMESTAMP(3) - INTERVAL ? SECOND" \
	" AND status NOT IN ('starting', 'ready')"

/* Deletes one ended session and everything hanging off it, inside the caller's
 * transaction: 1 deleted, 0 not there (or not ended), -1 error. */
static int delete_session(struct db *db, const char *id)
{
	static const char *const del[] = {
		"DELETE o FROM job_output o JOIN session_commands c ON c.id = o.job_id"
		" WHERE c.session_id = ?",
		"DELETE FROM session_commands WHERE session_id = ?",
		"DELETE FROM session_requests WHERE session_id = ?",
		"DELETE FROM session_files WHERE session_id = ?",
		"DELETE FROM e2b_tokens WHERE session_id = ?",
		"DELETE FROM session_traffic_tokens WHERE session_id = ?",
		"DELETE FROM sessions WHERE id = ?",
	};

	return jd_delete_owned(db,
			       "SELECT key_id, stored_bytes FROM sessions WHERE id = ?"
			       " AND status NOT IN ('starting', 'ready') FOR UPDATE",
			       id, del, sizeof del / sizeof del[0]);
}

/* One item per transaction (db_tx: retried whole when it loses a conflict). */
struct purge_tx {
	int (*del)(struct db *, const char *);
	const char *id;
	int rc; /* del's: 1 deleted, 0 not there */
};

static enum db_tx_end purge_body(struct db *db, void *arg)
{
	struct purge_tx *t = arg;

	t->rc = t->del(db, t->id);
	return t->rc < 0 ? DB_TX_ERROR : DB_TX_COMMIT;
}

/* rc of del, or -1 on a database error. */
static int purge_one(struct db *db, int (*del)(struct db *, const char *), const char *id)
{
	struct purge_tx t = { del, id, -1 };

	return db_tx(db, purge_body, &t) < 0 ? -1 : t.rc;
}

/* The rows `select` names (id, stored_bytes; bound to secs and PURGE_BATCH), each
 * deleted by del in its own transaction, batch after batch until none is left: the
 * count and bytes added to *n_out and *bytes_out as they go. 0, -1 when a batch
 * could not be read, -2 when a delete failed (message printed). */
static int purge_rows(struct db *db, const char *select, int (*del)(struct db *, const char *),
		      long long secs, long long *n_out, long long *bytes_out)
{
	for (;;) {
		struct db_res *r = db_query_p(db, select, db_i64(secs), db_i64(PURGE_BATCH));
		size_t n;

		if (r == NULL) {
			fprintf(stderr, "sandboxctl: purge: %s\n", db_error(db));
			return -1;
		}
		n = db_res_rows(r);
		for (size_t i = 0; i < n; i++) {
			int rc = purge_one(db, del, db_res_s(r, i, "id"));
			if (rc < 0) {
				fprintf(stderr, "sandboxctl: purge: %s\n", db_error(db));
				db_res_free(r);
				return -2;
			}
			*n_out += rc;
			*bytes_out += rc ? db_res_i(r, i, "stored_bytes", 0) : 0;
		}
		db_res_free(r);
		if (n < PURGE_BATCH)
			return 0;
	}
}

/* --dry-run for one table: what `count` (n, bytes; bound to secs) finds. 0, or -1
 * (message printed). */
static int would_purge(struct db *db, const char *count, long long secs, const char *what,
		       const char *ended)
{
	struct db_res *r = db_query_p(db, count, db_i64(secs));

	if (r == NULL) {
		fprintf(stderr, "sandboxctl: purge: %s\n", db_error(db));
		return -1;
	}
	printf("would purge %lld %s (%lld bytes stored), %s more than %lld s ago\n",
	       db_res_i(r, 0, "n", 0), what, db_res_i(r, 0, "bytes", 0), ended, secs);
	db_res_free(r);
	return 0;
}

int ctl_purge(struct db *db, const struct cfg *cfg, int argc, char **argv)
{
	long long sessions = 0, sbytes = 0;
	long long secs = cfg->retention_days * 86400, jobs = 0, bytes = 0;
	int dry = 0, rc;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0) {
			dry = 1;
		} else if (strcmp(argv[i], "--older-than") == 0 && i + 1 < argc) {
			secs = util_parse_duration(argv[++i]);
			if (secs < 0) {
				fprintf(stderr, "sandboxctl: purge: --older-than takes N[smhd] (e.g."
						" 30d, 12h), got '%s'\n",
					argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: sandboxctl purge [--older-than N[smhd]] [--dry-run]\n");
			return 2;
		}
	}
	if (dry) {
		if (would_purge(db,
				"SELECT COUNT(*) AS n, COALESCE(SUM(stored_bytes), 0)"
				" AS bytes FROM jobs" PURGE_WHERE,
				secs, "jobs", "finished") < 0 ||
		    would_purge(db,
				"SELECT COUNT(*) AS n, COALESCE(SUM(stored_bytes), 0) AS bytes"
				" FROM sessions" PURGE_SESSIONS_WHERE,
				secs, "sessions", "ended") < 0)
			return 1;
		return 0;
	}
	/* One job per transaction: locks last one job's deletes. */
	rc = purge_rows(db,
			"SELECT id, stored_bytes FROM jobs" PURGE_WHERE " ORDER BY finished_at LIMIT ?",
			jd_delete_job, secs, &jobs, &bytes);
	if (rc == -2)
		printf("purged %lld jobs (%lld bytes) before the error\n", jobs, bytes);
	if (rc < 0)
		return 1;
	printf("purged %lld jobs (%lld bytes), finished more than %lld s ago\n", jobs, bytes, secs);
	if (purge_rows(db,
		       "SELECT id, stored_bytes FROM sessions" PURGE_SESSIONS_WHERE
		       " ORDER BY ended_at LIMIT ?",
		       delete_session, secs, &sessions, &sbytes) < 0)
		return 1;
	printf("purged %lld sessions (%lld bytes), ended more than %lld s ago\n", sessions, sbytes,
	       secs);
	return 0;
}
