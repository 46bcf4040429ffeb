/* common/config: the `key = value` file, its errors, and the DB password file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "joblimits.h"
#include "tests.h"

/* Writes content to a temp file and cfg_loads it; returns cfg_load's value.
 * *pathp receives the path (caller frees) when non-NULL, else it is removed. */
static int load(const char *content, struct cfg *c, char *err, size_t errlen, char **pathp)
{
	char *path = t_tempfile(content);
	int rc;

	if (!CHECK(path != NULL, "cannot create a temporary file"))
		return -2;
	err[0] = '\0';
	rc = cfg_load(c, path, err, errlen);
	unlink(path);
	if (pathp != NULL)
		*pathp = path;
	else
		free(path);
	return rc;
}

static void test_defaults(void)
{
	struct cfg c;

	memset(&c, 0x5a, sizeof c);
	cfg_defaults(&c);
	CHECK_STR(c.db_socket, "");
	CHECK_STR(c.db_host, "127.0.0.1");
	CHECK_INT(c.db_port, 3306);
	CHECK_STR(c.db_name, "sandbox");
	CHECK_STR(c.db_user, "sandbox");
	CHECK_STR(c.db_password_file, "");
	CHECK_INT(c.db_connect_timeout, 2);
	CHECK_STR(c.fcgi_socket, "/run/sandbox/api.sock");
	CHECK_INT(c.api_workers, 8);
	CHECK_STR(c.schema_dir, "/usr/share/sandbox/schema");
	CHECK_INT(c.max_body_bytes, 10485760);
	CHECK_INT(c.max_files, 100);
	CHECK_INT(c.max_files_bytes, 8388608);
	CHECK_INT(c.max_path_bytes, 255);
	CHECK_INT(c.max_metadata_bytes, 4096);
	CHECK_INT(c.max_env, 64);
	CHECK_INT(c.max_batch_jobs, 20);
	CHECK_INT(c.default_max_queued, 100);
	/* ARCHITECTURE.md: min..max (default). */
	CHECK_INT(c.limit_default[LIM_WALL_SECONDS], 10);
	CHECK_INT(c.limit_max[LIM_WALL_SECONDS], 300);
	CHECK_INT(c.limit_default[LIM_CPU_SECONDS], 10);
	CHECK_INT(c.limit_max[LIM_CPU_SECONDS], 300);
	CHECK_INT(c.limit_default[LIM_MEMORY_MB], 256);
	CHECK_INT(c.limit_max[LIM_MEMORY_MB], 4096);
	CHECK_INT(c.limit_default[LIM_PIDS], 64);
	CHECK_INT(c.limit_max[LIM_PIDS], 1024);
	CHECK_INT(c.limit_default[LIM_OUTPUT_BYTES], 1048576);
	CHECK_INT(c.limit_max[LIM_OUTPUT_BYTES], 16777216);
	CHECK_INT(c.limit_default[LIM_DISK_MB], 64);
	CHECK_INT(c.limit_max[LIM_DISK_MB], 1024);
	CHECK_INT(c.runner_runtime_probe_seconds, 2);
}

static void test_load_file(void)
{
	struct cfg c;
	char err[512];
	int rc;

	memset(&c, 0x5a, sizeof c); /* cfg_load starts from the defaults */
	rc = load("# sandbox API configuration\n"
		  "\n"
		  "   # an indented comment\n"
		  "db_host = db.example.org\n"
		  "db_port=3307\n"
		  "  db_name   =   jobs  \n"
		  "\tdb_user\t=\tapi\t\n"
		  "db_password_file = /etc/sandbox/db.pw\r\n"
		  "\n"
		  "api_workers = 4\n"
		  "schema_dir = /opt/schema\n"
		  "max_files_bytes = 1024\n"
		  "memory_mb_max = 8192\n"
		  "wall_seconds_default = 20\n"
		  "output_bytes_default = 0\n"
		  "db_socket = /run/mysqld/mysqld.sock", /* no final newline */
		  &c, err, sizeof err, NULL);
	if (!CHECK(rc == 0, "cfg_load: expected 0, got %d (%s)", rc, err))
		return;
	CHECK_STR(c.db_host, "db.example.org");
	CHECK_INT(c.db_port, 3307);
	CHECK_STR(c.db_name, "jobs");
	CHECK_STR(c.db_user, "api");
	CHECK_STR(c.db_password_file, "/etc/sandbox/db.pw");
	CHECK_INT(c.api_workers, 4);
	CHECK_STR(c.schema_dir, "/opt/schema");
	CHECK_INT(c.max_files_bytes, 1024);
	CHECK_INT(c.limit_max[LIM_MEMORY_MB], 8192);
	CHECK_INT(c.limit_default[LIM_WALL_SECONDS], 20);
	CHECK_INT(c.limit_default[LIM_OUTPUT_BYTES], 0);
	CHECK_STR(c.db_socket, "/run/mysqld/mysqld.sock");
	/* Untouched keys keep their defaults. */
	CHECK_INT(c.limit_default[LIM_MEMORY_MB], 256);
	CHECK_INT(c.limit_max[LIM_WALL_SECONDS], 300);
	CHECK_STR(c.fcgi_socket, "/run/sandbox/api.sock");
	CHECK_INT(c.max_files, 100);
}

static void test_empty_file(void)
{
	struct cfg c, d;
	char err[256];

	CHECK_INT(load("", &c, err, sizeof err, NULL), 0);
	cfg_defaults(&d);
	/* runner_slots 0 (auto) is resolved on load: two per online CPU */
	CHECK_INT(d.runner_slots, 0);
	CHECK_INT(c.runner_slots, 2 * sysconf(_SC_NPROCESSORS_ONLN));
	d.runner_slots = c.runner_slots;
	/* so is api_wake_socket (beside fcgi_socket) */
	CHECK_STR(c.api_wake_socket, "/run/sandbox/api-wake.sock");
	memcpy(d.api_wake_socket, c.api_wake_socket, sizeof d.api_wake_socket);
	CHECK(memcmp(&c, &d, sizeof c) == 0, "an empty file must give the defaults");
}

static void test_errors(void)
{
	static const struct {
		const char *content;
		const char *want[3]; /* substrings of err */
	} rows[] = {
		{ "# ok\ndb_port = 3306\nbogus_key = 1\n", { "unknown key", ":3:", "bogus_key" } },
		{ "db_hots = x\n", { "unknown key", ":1:", "db_hots" } },
		{ "wall_seconds_min = 1\n", { "unknown key", ":1:", "wall_seconds_min" } },
		{ "wall_second_max = 1\n", { "unknown key", ":1:", "wall_second_max" } },
		{ "\n\ndb_port = abc\n", { "db_port", ":3:", NULL } },
		{ "db_port = 70000\n", { "db_port", ":1:", NULL } },
		{ "db_port = 0\n", { "db_port", ":1:", NULL } },
		{ "db_port = -1\n", { "db_port", ":1:", NULL } },
		{ "db_port = 12x\n", { "db_port", ":1:", NULL } },
		{ "db_port =\n", { "db_port", ":1:", NULL } },
		{ "api_workers = 99999999999999999999\n", { "api_workers", ":1:", NULL } },
		{ "max_path_bytes = 0\n", { "max_path_bytes", ":1:", NULL } },
		{ "memory_mb_max = 8\n", { "memory_mb_max", ":1:", NULL } },
		{ "memory_mb_max = 2000000\n", { "memory_mb_max", ":1:", NULL } },
		{ "pids_default = lots\n", { "pids_default", ":1:", NULL } },
		{ "db_port 3306\n", { ":1:", NULL } },
		{ "cpu_seconds_max = 100\ncpu_seconds_default = 200\n",
		  { "cpu_seconds_default", "cpu_seconds_max", NULL } },
		{ "cpu_seconds_default = 301\n", { "cpu_seconds_default", NULL } },
		{ "runner_runtime_probe_seconds = 0\n", { "runner_runtime_probe_seconds", ":1:", NULL } },
		{ "runner_runtime_probe_seconds = 61\n", { "runner_runtime_probe_seconds", ":1:", NULL } },
		/* a session request waits on the waiter only (WT_MAX_SECONDS), never in a worker */
		{ "session_request_timeout_ms = 30001\n", { "session_request_timeout_ms", ":1:", NULL } },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		struct cfg c;
		char err[512], ctx[160], show[120];
		char *path = NULL;

		t_show(rows[i].content, strlen(rows[i].content), show, sizeof show);
		snprintf(ctx, sizeof ctx, "cfg_load of \"%s\"", show);
		int rc = load(rows[i].content, &c, err, sizeof err, &path);
		if (path == NULL)
			continue;
		CHECK_INT_AT(ctx, rc, -1);
		for (size_t k = 0; k < NELEM(rows[i].want) && rows[i].want[k] != NULL; k++)
			CHECK_HAS_AT(ctx, err, rows[i].want[k]);
		CHECK_HAS_AT(ctx, err, path); /* "path:line: reason" */
		free(path);
	}
}

/* api_wake_socket: beside fcgi_socket unless set; empty = off; absolute only. */
static void test_api_wake_socket(void)
{
	struct cfg c;
	char err[512];

	CHECK_INT(load("", &c, err, sizeof err, NULL), 0);
	CHECK_STR(c.api_wake_socket, "/run/sandbox/api-wake.sock");
	CHECK_INT(load("fcgi_socket = /srv/x/api.sock\n", &c, err, sizeof err, NULL), 0);
	CHECK_STR(c.api_wake_socket, "/srv/x/api-wake.sock");
	CHECK_INT(load("fcgi_socket = /srv/x/api.sock\napi_wake_socket = /run/w/a.sock\n", &c,
		       err, sizeof err, NULL),
		  0);
	CHECK_STR(c.api_wake_socket, "/run/w/a.sock");
	CHECK_INT(load("api_wake_socket =\n", &c, err, sizeof err, NULL), 0);
	CHECK_STR(c.api_wake_socket, "");
	CHECK_INT(load("api_wake_socket = rel.sock\n", &c, err, sizeof err, NULL), -1);
	CHECK_HAS(err, "api_wake_socket must be an absolute path");
	CHECK_INT(load("api_wait_tick_ms = 60000\n", &c, err, sizeof err, NULL), 0);
	CHECK_INT(c.api_wait_tick_ms, 60000);
	CHECK_INT(load("api_wait_tick_ms = 60001\n", &c, err, sizeof err, NULL), -1);
}

/* The keys of several hosts on a Galera cluster: db_sync_wait, runner_host. */
static void test_cluster_keys(void)
{
	struct cfg c;
	char err[512];

	CHECK_INT(load("", &c, err, sizeof err, NULL), 0);
	CHECK_INT(c.db_sync_wait, 0);
	CHECK_STR(c.runner_host, "");
	CHECK_INT(load("db_sync_wait = 1\nrunner_host = g-1.example_2\n", &c, err, sizeof err,
		       NULL),
		  0);
	CHECK_INT(c.db_sync_wait, 1);
	CHECK_STR(c.runner_host, "g-1.example_2");
	CHECK_INT(load("db_sync_wait = 16\n", &c, err, sizeof err, NULL), -1);
	/* the first field of a runner id: never a '/' */
	CHECK_INT(load("runner_host = a/b\n", &c, err, sizeof err, NULL), -1);
	CHECK_HAS(err, "runner_host must be [A-Za-z0-9._-]+");
	CHECK_INT(load("runner_host = a b\n", &c, err, sizeof err, NULL), -1);
}

static void test_missing_file(void)
{
	struct cfg c;
	char err[256] = "";

	CHECK_INT(cfg_load(&c, "/nonexistent/sandbox.conf", err, sizeof err), -1);
	CHECK_HAS(err, "/nonexistent/sandbox.conf");
}

static void test_cfg_set(void)
{
	struct cfg c;
	char err[256] = "", longv[600];

	cfg_defaults(&c);
	CHECK_INT(cfg_set(&c, "max_env", "8", err, sizeof err), 0);
	CHECK_INT(c.max_env, 8);
	CHECK_INT(cfg_set(&c, "disk_mb_max", "2048", err, sizeof err), 0);
	CHECK_INT(c.limit_max[LIM_DISK_MB], 2048);
	CHECK_INT(cfg_set(&c, "pids_default", "1", err, sizeof err), 0);
	CHECK_INT(c.limit_default[LIM_PIDS], 1);
	memset(longv, 'x', sizeof longv - 1);
	longv[sizeof longv - 1] = '\0';
	CHECK_INT(cfg_set(&c, "db_socket", longv, err, sizeof err), -1);
	CHECK_HAS(err, "db_socket");
	CHECK_INT(cfg_set(&c, "nope", "1", err, sizeof err), -1);
	CHECK_HAS(err, "unknown key");
	CHECK_INT(cfg_set(&c, "max_batch_jobs", "100", err, sizeof err), 0);
	CHECK_INT(c.max_batch_jobs, 100);
	CHECK_INT(cfg_set(&c, "max_batch_jobs", "101", err, sizeof err), -1);
	CHECK_HAS(err, "max_batch_jobs");
	CHECK_INT(cfg_set(&c, "max_batch_jobs", "0", err, sizeof err), -1);
}

static void test_db_password(void)
{
	static const struct {
		const char *content;
		const char *want;
	} rows[] = {
		{ "s3cret pass\nsecond line\n", "s3cret pass" },
		{ "crlf\r\nx\n", "crlf" },
		{ "no-newline", "no-newline" },
		{ "", "" },
	};
	struct cfg c;
	char buf[64], err[256];

	for (size_t i = 0; i < NELEM(rows); i++) {
		char *path = t_tempfile(rows[i].content);

		if (!CHECK(path != NULL, "cannot create a temporary file"))
			return;
		cfg_defaults(&c);
		snprintf(c.db_password_file, sizeof c.db_password_file, "%s", path);
		memset(buf, 'x', sizeof buf);
		CHECK_INT_AT(rows[i].want, cfg_db_password(&c, buf, sizeof buf, err, sizeof err), 0);
		CHECK_STR_AT(rows[i].want, buf, rows[i].want);
		unlink(path);
		free(path);
	}
	/* No file configured: empty password. */
	cfg_defaults(&c);
	memset(buf, 'x', sizeof buf);
	CHECK_INT(cfg_db_password(&c, buf, sizeof buf, err, sizeof err), 0);
	CHECK_STR(buf, "");
	/* A configured file that is missing is an error naming it. */
	snprintf(c.db_password_file, sizeof c.db_password_file, "/nonexistent/db.pw");
	CHECK_INT(cfg_db_password(&c, buf, sizeof buf, err, sizeof err), -1);
	CHECK_HAS(err, "/nonexistent/db.pw");
	/* Too long for the buffer: an error, not a truncated password. */
	char *path = t_tempfile("0123456789abcdef\n");
	if (CHECK(path != NULL, "cannot create a temporary file")) {
		snprintf(c.db_password_file, sizeof c.db_password_file, "%s", path);
		CHECK_INT(cfg_db_password(&c, buf, 8, err, sizeof err), -1);
		CHECK_HAS(err, "too long");
		unlink(path);
		free(path);
	}
}

static const CU_TestInfo tests[] = {
	{ "defaults", test_defaults },
	{ "load_file", test_load_file },
	{ "empty_file", test_empty_file },
	{ "errors", test_errors },
	{ "api_wake_socket", test_api_wake_socket },
	{ "cluster_keys", test_cluster_keys },
	{ "missing_file", test_missing_file },
	{ "cfg_set", test_cfg_set },
	{ "db_password", test_db_password },
	CU_TEST_INFO_NULL,
};

void suite_config(void)
{
	t_register("config", tests);
}
