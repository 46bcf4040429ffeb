/* The command-line client's pure parts (cli/cliargs.c): --limit and --env forms,
 * -f FILE[:PATH], path and id checks, ID:PATH specs, the exit-code rule. */
#include <stdio.h>
#include <string.h>

#include "cliargs.h"
#include "tests.h"

static const struct limit_row {
	const char *arg;
	int ok;
	const char *name;
	long long value;
} limits[] = {
	{ "wall_seconds=1", 1, "wall_seconds", 1 },
	{ "output_bytes=0", 1, "output_bytes", 0 },
	{ "memory_mb=9007199254740992", 1, "memory_mb", 9007199254740992LL },
	{ "memory_mb=9007199254740993", 0, NULL, 0 },
	{ "memory_mb=99999999999999999999", 0, NULL, 0 },
	{ "memory_mb=-1", 0, NULL, 0 },
	{ "memory_mb=+1", 0, NULL, 0 },
	{ "memory_mb=1k", 0, NULL, 0 },
	{ "memory_mb= 1", 0, NULL, 0 },
	{ "memory_mb=", 0, NULL, 0 },
	{ "memory_mb", 0, NULL, 0 },
	{ "=5", 0, NULL, 0 },
	{ "Memory=5", 0, NULL, 0 },
	{ "1pids=5", 0, NULL, 0 },
	{ "pi-ds=5", 0, NULL, 0 },
	{ "a.b=5", 0, NULL, 0 },
	{ "pids=5=6", 0, NULL, 0 },
};

static void test_limits(void)
{
	for (size_t i = 0; i < NELEM(limits); i++) {
		char name[64] = "", ctx[96];
		long long v = -1;
		const char *why = NULL;
		int rc = cli_parse_limit(limits[i].arg, name, &v, &why);

		snprintf(ctx, sizeof ctx, "cli_parse_limit(%s)", limits[i].arg);
		CHECK_INT_AT(ctx, rc, limits[i].ok ? 0 : -1);
		if (limits[i].ok) {
			CHECK_STR_AT(ctx, name, limits[i].name);
			CHECK_INT_AT(ctx, v, limits[i].value);
		} else {
			CHECK_INT_AT(ctx, why != NULL, 1);
		}
	}
}

static void test_env(void)
{
	static const struct { const char *arg; int ok; size_t n; } rows[] = {
		{ "A=1", 1, 1 }, { "_x9=", 1, 3 }, { "LANG=C.UTF-8=x", 1, 4 },
		{ "9A=1", 0, 0 }, { "=1", 0, 0 }, { "A-B=1", 0, 0 }, { "NOEQ", 0, 0 },
		{ "A B=1", 0, 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		size_t n = 0;
		const char *why = NULL;
		char ctx[64];

		snprintf(ctx, sizeof ctx, "cli_parse_env(%s)", rows[i].arg);
		CHECK_INT_AT(ctx, cli_parse_env(rows[i].arg, &n, &why), rows[i].ok ? 0 : -1);
		if (rows[i].ok)
			CHECK_INT_AT(ctx, n, rows[i].n);
	}
}

static void test_split_file(void)
{
	static const struct { const char *arg; int ok; size_t flen; const char *path; } rows[] = {
		{ "main.py", 1, 7, "main.py" },
		{ "/tmp/x/main.py", 1, 14, "main.py" },
		{ "a.txt:in/b.txt", 1, 5, "in/b.txt" },
		{ "a:b:c", 1, 1, "b:c" },
		{ "a.txt:/etc/passwd", 0, 0, NULL },
		{ "a.txt:../x", 0, 0, NULL },
		{ "a.txt:x/../y", 0, 0, NULL },
		{ "a.txt:", 0, 0, NULL },
		{ ":b", 0, 0, NULL },
		{ "dir/", 0, 0, NULL },
		{ "..", 0, 0, NULL },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		size_t flen = 0;
		const char *path = NULL, *why = NULL;
		char ctx[64];

		snprintf(ctx, sizeof ctx, "cli_split_file(%s)", rows[i].arg);
		CHECK_INT_AT(ctx, cli_split_file(rows[i].arg, &flen, &path, &why),
			     rows[i].ok ? 0 : -1);
		if (rows[i].ok) {
			CHECK_INT_AT(ctx, flen, rows[i].flen);
			CHECK_STR_AT(ctx, path, rows[i].path);
		}
	}
}

static void test_rel_path(void)
{
	static const struct { const char *p; int ok; } rows[] = {
		{ "out/a.txt", 1 }, { "a", 1 }, { "a..b", 1 }, { "..a", 1 },
		{ "/etc/passwd", 0 }, { "..", 0 }, { "out/../../x", 0 }, { "a/./b", 0 },
		{ "a//b", 0 }, { "a/", 0 }, { "", 0 }, { "a\\b", 0 }, { "a\nb", 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		char ctx[64];

		snprintf(ctx, sizeof ctx, "cli_rel_path(#%zu)", i);
		CHECK_INT_AT(ctx, cli_rel_path(rows[i].p) == NULL, rows[i].ok);
	}
}

static void test_ids(void)
{
	char id[37];
	const char *path = NULL;

	CHECK_INT(cli_is_id("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"), 1);
	CHECK_INT(cli_is_id("0190A1B2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"), 0);
	CHECK_INT(cli_is_id("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5"), 0);
	CHECK_INT(cli_is_id("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5bb"), 0);
	CHECK_INT(cli_is_id("../../v1/jobs?x=1/aaaaaaaaaaaaaaaaaaaaa"), 0);
	CHECK_INT(cli_is_id("0190a1b2xc3d4-7e5f-8a9b-0c1d2e3f4a5b"), 0);
	CHECK_INT(cli_remote_spec("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b:in/x.bin", id, &path), 1);
	CHECK_STR(id, "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
	CHECK_STR(path, "in/x.bin");
	CHECK_INT(cli_remote_spec("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b:", id, &path), 0);
	CHECK_INT(cli_remote_spec("local:file", id, &path), 0);
	CHECK_INT(cli_remote_spec("./0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b:x", id, &path), 0);
}

static void test_exit_for(void)
{
	CHECK_INT(cli_exit_for(1, 0), 0);
	CHECK_INT(cli_exit_for(1, 3), 3);
	CHECK_INT(cli_exit_for(1, 124), 124);
	CHECK_INT(cli_exit_for(1, 137), 137);
	CHECK_INT(cli_exit_for(1, 255), 255);
	CHECK_INT(cli_exit_for(0, 0), 125);
	CHECK_INT(cli_exit_for(1, 256), 125);
	CHECK_INT(cli_exit_for(1, -1), 125);
}

void suite_cli(void)
{
	static const CU_TestInfo tests[] = {
		{ "--limit NAME=VALUE", test_limits },
		{ "--env NAME=VALUE", test_env },
		{ "-f FILE[:PATH]", test_split_file },
		{ "artifact and sandbox paths", test_rel_path },
		{ "ids and ID:PATH", test_ids },
		{ "exit code of a finished job", test_exit_for },
		CU_TEST_INFO_NULL,
	};

	t_register("cli", tests);
}
