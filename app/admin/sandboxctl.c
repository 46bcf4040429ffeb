/* sandboxctl: the admin tool (migrations, API keys, queue overview). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "db.h"
#include "log.h"

int ctl_queue(struct db *db, int argc, char **argv)
{
	struct db_res *r;

	(void)argv;
	if (argc > 0) {
		fprintf(stderr, "usage: sandboxctl queue\n");
		return 2;
	}
	r = db_querya(db, "SELECT state, COUNT(*) AS n FROM jobs GROUP BY state ORDER BY state",
		      NULL, 0);
	if (r == NULL) {
		fprintf(stderr, "sandboxctl: queue: %s\n", db_error(db));
		return 1;
	}
	for (size_t i = 0; i < db_res_rows(r); i++)
		printf("%-15s %s\n", db_res_s(r, i, "state"), db_res_s(r, i, "n"));
	db_res_free(r);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sandboxctl --config FILE migrate\n"
		"       sandboxctl --config FILE keys create --namespace N --tenant T\n"
		"                  --subject-type S --subject-id I [--actor-type A --actor-id B]\n"
		"                  [--tenant-admin] [--allow-network] [--max-queued N]\n"
		"                  [--max-limit NAME=VALUE ...] [--json]\n"
		"                  [--max-stored-mb N] [--max-running N]\n"
		"                  [--profile NAME ...]   (sandbox profiles its jobs may name;\n"
		"                                          none given: only 'default')\n"
		"       sandboxctl --config FILE keys list [--json]\n"
		"       sandboxctl --config FILE keys revoke ID [--keep-jobs]\n"
		"       sandboxctl --config FILE keys webhook-secret ID [--json]\n"
		"                  (a new webhook secret for the key, shown once; later\n"
		"                   delivery attempts are signed with it, not the old one)\n"
		"       sandboxctl --config FILE purge [--older-than N[smhd]] [--dry-run]\n"
		"       sandboxctl --config FILE queue\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct cfg cfg;
	struct db *db;
	char err[512];
	const char *config = NULL;
	int i = 1, rc;

	log_init("sandboxctl");
	if (i + 1 < argc && strcmp(argv[i], "--config") == 0) {
		config = argv[i + 1];
		i += 2;
	} else if (i < argc && strncmp(argv[i], "--config=", 9) == 0) {
		config = argv[i] + 9;
		i++;
	}
	if (i >= argc)
		usage();
	if (config == NULL)
		config = "/etc/sandbox/sandbox.conf";
	if (cfg_load(&cfg, config, err, sizeof err) < 0) {
		fprintf(stderr, "sandboxctl: %s\n", err);
		return 1;
	}
	if (strcmp(argv[i], "migrate") != 0 && strcmp(argv[i], "keys") != 0 &&
	    strcmp(argv[i], "queue") != 0 && strcmp(argv[i], "purge") != 0)
		usage();
	db = db_open(&cfg, err, sizeof err);
	if (db == NULL) {
		fprintf(stderr, "sandboxctl: database: %s\n", err);
		return 1;
	}
	if (strcmp(argv[i], "migrate") == 0)
		rc = i + 1 == argc ? ctl_migrate(db, &cfg) : 2;
	else if (strcmp(argv[i], "keys") == 0)
		rc = ctl_keys(db, &cfg, argc - i - 1, argv + i + 1);
	else if (strcmp(argv[i], "purge") == 0)
		rc = ctl_purge(db, &cfg, argc - i - 1, argv + i + 1);
	else
		rc = ctl_queue(db, argc - i - 1, argv + i + 1);
	db_close(db);
	return rc;
}
