/* `sandboxctl purge [--older-than DURATION] [--dry-run]`: retention. Deletes finished
 * jobs (and their files, output, artifacts, events) that ended before the cutoff, in
 * small transactions so that no table stays locked for long, and takes their bytes
 * off their keys' stored totals. Without --older-than the config's retention_days. */
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

int ctl_purge(struct db *db, const struct cfg *cfg, int argc, char **argv)
{
	long long secs = cfg->retention_days * 86400, jobs = 0, bytes = 0;
	int dry = 0;

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
		struct db_res *r = db_query_p(db,
					      "SELECT COUNT(*) AS n, COALESCE(SUM(stored_bytes), 0)"
					      " AS bytes FROM jobs" PURGE_WHERE,
					      db_i64(secs));
		if (r == NULL) {
			fprintf(stderr, "sandboxctl: purge: %s\n", db_error(db));
			return 1;
		}
		printf("would purge %lld jobs (%lld bytes stored), finished more than %lld s ago\n",
		       db_res_i(r, 0, "n", 0), db_res_i(r, 0, "bytes", 0), secs);
		db_res_free(r);
		return 0;
	}
	for (;;) {
		struct db_res *r = db_query_p(db,
					      "SELECT id, stored_bytes FROM jobs" PURGE_WHERE
					      " ORDER BY finished_at LIMIT ?",
					      db_i64(secs), db_i64(PURGE_BATCH));
		size_t n;

		if (r == NULL) {
			fprintf(stderr, "sandboxctl: purge: %s\n", db_error(db));
			return 1;
		}
		n = db_res_rows(r);
		for (size_t i = 0; i < n; i++) {
			int rc = -1;
			/* One job per transaction: locks last one job's deletes. */
			for (int attempt = 0; attempt < 4 && rc < 0; attempt++) {
				if (db_begin(db) == 0 &&
				    (rc = jd_delete_job(db, db_res_s(r, i, "id"))) >= 0 &&
				    db_commit(db) < 0)
					rc = -1;
				if (rc < 0) {
					db_rollback(db);
					if (!db_retryable(db))
						break;
				}
			}
			if (rc < 0) {
				fprintf(stderr, "sandboxctl: purge: %s\n", db_error(db));
				db_res_free(r);
				printf("purged %lld jobs (%lld bytes) before the error\n", jobs, bytes);
				return 1;
			}
			jobs += rc;
			bytes += rc ? db_res_i(r, i, "stored_bytes", 0) : 0;
		}
		db_res_free(r);
		if (n < PURGE_BATCH)
			break;
	}
	printf("purged %lld jobs (%lld bytes), finished more than %lld s ago\n", jobs, bytes, secs);
	return 0;
}
