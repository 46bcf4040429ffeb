/* `sandboxctl migrate`: applies schema/NNN_name.sql files in order, once each. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "util.h"

#define MAX_MIGRATIONS 512

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_migration(const char *n)
{
	size_t len = strlen(n);

	return len > 8 && n[0] >= '0' && n[0] <= '9' && n[1] >= '0' && n[1] <= '9' &&
	       n[2] >= '0' && n[2] <= '9' && n[3] == '_' && strcmp(n + len - 4, ".sql") == 0;
}

/* Splits on ';' at line ends (our migrations hold no procedures) and runs each. */
static int run_script(struct db *db, char *sql, const char *name)
{
	char *p = sql;

	while (*p) {
		char *end = strstr(p, ";\n"), *s = p;
		if (end == NULL)
			end = p + strlen(p);
		else
			*end++ = '\0';
		p = *end ? end + (*end == '\n') : end;
		while (*s == ' ' || *s == '\n' || *s == '\t')
			s++;
		/* skip comment-only chunks */
		char *q = s;
		while (*q == '-' && q[1] == '-') {
			q = strchr(q, '\n');
			if (q == NULL)
				break;
			while (*q == '\n' || *q == ' ')
				q++;
		}
		if (q == NULL || *q == '\0' || strspn(q, " \n\t;") == strlen(q))
			continue;
		if (db_run(db, s) < 0) {
			fprintf(stderr, "sandboxctl: migrate %s: %s\n", name, db_error(db));
			return -1;
		}
	}
	return 0;
}

static int applied(struct db *db, const char *version)
{
	struct db_res *r = db_query_p(db, "SELECT 1 FROM schema_migrations WHERE version = ?",
				      db_str(version));
	int yes = r && db_res_rows(r) > 0;

	db_res_free(r);
	return r == NULL ? -1 : yes;
}

static int apply_one(struct db *db, const struct cfg *cfg, const char *name)
{
	char path[CFG_PATH_MAX + 256];
	char *sql;
	int done = applied(db, name);

	if (done != 0)
		return done < 0 ? -1 : 0;
	snprintf(path, sizeof path, "%s/%s", cfg->schema_dir, name);
	sql = util_read_file(path, 1 << 20, NULL);
	if (sql == NULL) {
		perror(path);
		return -1;
	}
	/* MariaDB DDL commits implicitly, so a failed migration is reported, never
	 * recorded: fix it and rerun (statements use IF NOT EXISTS where it matters). */
	if (run_script(db, sql, name) < 0 ||
	    db_exec_p(db, "INSERT INTO schema_migrations (version) VALUES (?)", db_str(name)) < 0) {
		free(sql);
		return -1;
	}
	free(sql);
	printf("applied %s\n", name);
	return 1;
}

int ctl_migrate(struct db *db, const struct cfg *cfg)
{
	DIR *d;
	struct dirent *e;
	char *names[MAX_MIGRATIONS];
	size_t n = 0;
	int rc = 0, count = 0;

	if (db_run(db, "CREATE TABLE IF NOT EXISTS schema_migrations ("
		       " version VARCHAR(255) NOT NULL PRIMARY KEY,"
		       " applied_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))"
		       " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin") < 0) {
		fprintf(stderr, "sandboxctl: migrate: %s\n", db_error(db));
		return 1;
	}
	d = opendir(cfg->schema_dir);
	if (d == NULL) {
		perror(cfg->schema_dir);
		return 1;
	}
	while ((e = readdir(d)) != NULL && n < MAX_MIGRATIONS)
		if (is_migration(e->d_name))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof names[0], cmp);
	for (size_t i = 0; i < n; i++) {
		int r = rc == 0 && names[i] ? apply_one(db, cfg, names[i]) : 0;
		if (r < 0)
			rc = 1;
		count += r > 0;
		free(names[i]);
	}
	if (rc == 0)
		printf("schema up to date (%d applied now)\n", count);
	return rc;
}
