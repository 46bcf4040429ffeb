/* app/sessions/svalidate: the session-create and command-create bodies (every field's error
 * names the field), defaults and maxima, kill signals, stdin bodies, file modes. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "svalidate.h"
#include "tests.h"

static struct cfg cfg_for_tests(void)
{
	struct cfg c;

	cfg_defaults(&c);
	return c;
}

static void test_session_errors(void)
{
	static const struct {
		const char *body;
		int status;
		const char *field;
	} rows[] = {
		{ "{\"foo\":1}", 400, "foo" },
		{ "[]", 400, "" },
		{ "{\"a\":", 400, "" },
		{ "{\"limits\":1}", 400, "limits" },
		{ "{\"limits\":{\"memory_mb\":4097}}", 400, "limits.memory_mb" },
		{ "{\"limits\":{\"memory_mb\":15}}", 400, "limits.memory_mb" },
		{ "{\"limits\":{\"pids\":0}}", 400, "limits.pids" },
		{ "{\"limits\":{\"disk_mb\":1025}}", 400, "limits.disk_mb" },
		{ "{\"limits\":{\"cpu_seconds\":86401}}", 400, "limits.cpu_seconds" },
		{ "{\"limits\":{\"wall_seconds\":1}}", 400, "limits.wall_seconds" },
		{ "{\"idle_seconds\":0}", 400, "idle_seconds" },
		{ "{\"idle_seconds\":3601}", 400, "idle_seconds" },
		{ "{\"max_seconds\":86401}", 400, "max_seconds" },
		{ "{\"max_seconds\":\"10\"}", 400, "max_seconds" },
		{ "{\"env\":{\"A B\":\"x\"}}", 400, "env" },
		{ "{\"env\":{\"A\":null}}", 400, "env" },
		{ "{\"files\":[{\"path\":\"a/../b\",\"content\":\"\"}]}", 400, "files[0].path" },
		{ "{\"files\":[{\"path\":\"a\"}]}", 400, "files[0].content" },
		{ "{\"files\":[{\"path\":\"a\",\"content\":\"\",\"x\":1}]}", 400, "files[0].x" },
		{ "{\"files\":[{\"path\":\"a\",\"content\":\"\"},{\"path\":\"a\",\"content\":\"\"}]}", 400,
		  "files[1].path" },
		{ "{\"network\":true}", 403, "network" },
		{ "{\"network\":1}", 400, "network" },
		{ "{\"metadata\":{\"subject_id\":\"x\"}}", 400, "metadata.subject_id" },
		{ "{\"metadata\":[]}", 400, "metadata" },
		{ "{\"profile\":\"nope\"}", 400, "profile" },
	};
	struct cfg c = cfg_for_tests();

	for (size_t i = 0; i < NELEM(rows); i++) {
		struct sess_req q;
		struct val_err e;
		int rc = sv_session(rows[i].body, strlen(rows[i].body), &c, 0, &q, &e);

		CHECK_INT_AT(rows[i].body, rc, -1);
		CHECK_INT_AT(rows[i].body, e.status, rows[i].status);
		CHECK_STR_AT(rows[i].body, e.field, rows[i].field);
		sv_session_free(&q);
	}
}

static void test_session_defaults(void)
{
	struct cfg c = cfg_for_tests();
	struct sess_req q;
	struct val_err e;
	const char *body = "{\"env\":{\"K\":\"secret\"},\"files\":[{\"path\":\"bin/t\","
			   "\"content_base64\":\"AAE=\",\"executable\":true}],\"network\":true}";

	if (!CHECK(sv_session(body, strlen(body), &c, 1, &q, &e) == 0, "valid body: %s", e.message))
		return;
	CHECK_INT(q.limits[SV_MEMORY_MB], c.limit_default[LIM_MEMORY_MB]);
	CHECK_INT(q.limits[SV_PIDS], c.limit_default[LIM_PIDS]);
	CHECK_INT(q.limits[SV_DISK_MB], c.limit_default[LIM_DISK_MB]);
	CHECK_INT(q.limits[SV_CPU_SECONDS], c.session_cpu_seconds_default);
	CHECK_INT(q.idle_seconds, c.session_idle_seconds_default);
	CHECK_INT(q.max_seconds, c.session_max_seconds_default);
	CHECK_STR(q.profile, "default");
	CHECK_INT(q.network, 1);
	CHECK_INT(q.nfiles, 1);
	CHECK_MEM(q.files[0].data, q.files[0].len, "\0\1", 2);
	CHECK_INT(q.files[0].executable, 1);
	sv_session_free(&q);

	/* the maxima themselves are accepted; a key's lower maximum wins */
	body = "{\"limits\":{\"memory_mb\":4096,\"cpu_seconds\":86400},\"idle_seconds\":3600,"
	       "\"max_seconds\":86400}";
	CHECK_INT(sv_session(body, strlen(body), &c, 0, &q, &e), 0);
	sv_session_free(&q);
	c.limit_max[LIM_MEMORY_MB] = 128;
	CHECK_INT(sv_session(body, strlen(body), &c, 0, &q, &e), -1);
	CHECK_STR(e.field, "limits.memory_mb");
	sv_session_free(&q);
}

static void test_command(void)
{
	static const struct {
		const char *body;
		const char *field; /* NULL: valid */
	} rows[] = {
		{ "{\"command\":\"ls\"}", NULL },
		{ "{\"argv\":[\"ls\",\"-l\"],\"timeout_seconds\":0,\"stdin_open\":true,\"tag\":\"t\"}", NULL },
		{ "{\"command\":\"ls\",\"timeout_seconds\":100}", NULL },
		{ "{\"command\":\"ls\",\"timeout_seconds\":101}", "timeout_seconds" },
		{ "{}", "command" },
		{ "{\"command\":\"\"}", "command" },
		{ "{\"command\":\"a\",\"argv\":[\"a\"]}", "command" },
		{ "{\"argv\":[\"\"]}", "argv" },
		{ "{\"argv\":\"ls\"}", "argv" },
		{ "{\"command\":\"a\",\"cwd\":\"/abs\"}", "cwd" },
		{ "{\"command\":\"a\",\"stdin_base64\":\"***\"}", "stdin_base64" },
		{ "{\"command\":\"a\",\"stdin_open\":\"yes\"}", "stdin_open" },
		{ "{\"command\":\"a\",\"output_bytes\":16777217}", "output_bytes" },
		{ "{\"command\":\"a\",\"tag\":\"a\\nb\"}", "tag" },
		{ "{\"command\":\"a\",\"tag\":7}", "tag" },
		{ "{\"command\":\"a\",\"limits\":{}}", "limits" },
		{ "{\"command\":\"a\",\"env\":{\"1\":\"x\"}}", "env" },
	};
	struct cfg c = cfg_for_tests();

	for (size_t i = 0; i < NELEM(rows); i++) {
		struct cmd_req q;
		struct val_err e;
		int rc = sv_command(rows[i].body, strlen(rows[i].body), &c, 100, &q, &e);

		CHECK_INT_AT(rows[i].body, rc, rows[i].field ? -1 : 0);
		if (rows[i].field)
			CHECK_STR_AT(rows[i].body, e.field, rows[i].field);
		sv_command_free(&q);
	}
}

static void test_command_defaults(void)
{
	struct cfg c = cfg_for_tests();
	struct cmd_req q;
	struct val_err e;
	const char *body = "{\"command\":\"x\",\"stdin\":\"in\"}";

	if (!CHECK(sv_command(body, strlen(body), &c, 3600, &q, &e) == 0, "valid: %s", e.message))
		return;
	CHECK_INT(q.timeout_seconds, c.limit_default[LIM_WALL_SECONDS]);
	CHECK_INT(q.output_bytes, c.limit_default[LIM_OUTPUT_BYTES]);
	CHECK_MEM(q.stdin_buf, q.stdin_len, "in", 2);
	CHECK_STR(q.cwd, "");
	CHECK(q.tag == NULL, "no tag");
	sv_command_free(&q);
	/* a session shorter than the default timeout: the default comes down to it */
	CHECK_INT(sv_command(body, strlen(body), &c, 5, &q, &e), 0);
	CHECK_INT(q.timeout_seconds, 5);
	sv_command_free(&q);
}

static void test_kill(void)
{
	static const struct {
		const char *body;
		int signo; /* -1: refused */
	} rows[] = {
		{ "", 15 },          { "{}", 15 },         { "{\"signal\":\"KILL\"}", 9 },
		{ "{\"signal\":\"SIGINT\"}", 2 }, { "{\"signal\":\"HUP\"}", 1 },
		{ "{\"signal\":\"QUIT\"}", 3 }, { "{\"signal\":\"USR1\"}", 10 },
		{ "{\"signal\":\"USR2\"}", 12 }, { "{\"signal\":64}", 64 },
		{ "{\"signal\":0}", -1 }, { "{\"signal\":65}", -1 }, { "{\"signal\":\"STOP\"}", -1 },
		{ "{\"signal\":\"term\"}", -1 }, { "{\"signal\":[]}", -1 }, { "{\"sig\":9}", -1 },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		struct val_err e;
		int signo = 0, rc = sv_kill(rows[i].body, strlen(rows[i].body), &signo, &e);

		CHECK_INT_AT(rows[i].body, rc, rows[i].signo < 0 ? -1 : 0);
		if (rows[i].signo >= 0)
			CHECK_INT_AT(rows[i].body, signo, rows[i].signo);
		else
			CHECK(strcmp(e.field, "signal") == 0 || strcmp(e.field, "sig") == 0,
			      "%s: field %s", rows[i].body, e.field);
	}
}

static int stdin_of(const char *body, long long max, unsigned char **d, size_t *n, int *c,
		    struct val_err *e)
{
	return sv_stdin(body, strlen(body), max, d, n, c, e);
}

static void test_stdin(void)
{
	unsigned char *d;
	size_t n;
	int close_after;
	struct val_err e;

	CHECK_INT(stdin_of("{\"data_base64\":\"AP8=\",\"close\":true}", 100, &d, &n, &close_after, &e), 0);
	CHECK_MEM(d, n, "\0\377", 2);
	CHECK_INT(close_after, 1);
	free(d);
	CHECK_INT(stdin_of("{\"close\":true}", 100, &d, &n, &close_after, &e), 0);
	CHECK_INT(n, 0);
	free(d);
	CHECK_INT(stdin_of("{}", 100, &d, &n, &close_after, &e), -1);
	CHECK_STR(e.field, "data");
	CHECK_INT(stdin_of("{\"data\":\"abcd\"}", 3, &d, &n, &close_after, &e), -1);
	CHECK_STR(e.field, "data");
	CHECK_INT(stdin_of("{\"data\":\"a\",\"data_base64\":\"YQ==\"}", 3, &d, &n, &close_after, &e), -1);
	CHECK_STR(e.field, "data");
	CHECK(d == NULL, "nothing to free after an error");
}

static void test_small_rules(void)
{
	struct cfg c = cfg_for_tests();
	int m = -1, b = -1;

	CHECK_INT(sv_file_mode("0644", &m), 0);
	CHECK_INT(m, 0644);
	CHECK_INT(sv_file_mode("755", &m), 0);
	CHECK_INT(m, 0755);
	CHECK_INT(sv_file_mode("1777", &m), -1);
	CHECK_INT(sv_file_mode("0999", &m), -1);
	CHECK_INT(sv_file_mode("", &m), -1);
	CHECK_INT(sv_file_mode("00644", &m), -1);
	CHECK_INT(sv_bool("true", &b), 0);
	CHECK_INT(b, 1);
	CHECK_INT(sv_bool("false", &b), 0);
	CHECK_INT(b, 0);
	CHECK_INT(sv_bool("yes", &b), -1);
	CHECK(sv_file_path(&c, "a/b.txt") == NULL, "a/b.txt is fine");
	CHECK(sv_file_path(&c, "../x") != NULL, "../x refused");
	CHECK(sv_file_path(&c, "/etc/passwd") != NULL, "absolute refused");
	CHECK(sv_file_path(&c, "a//b") != NULL, "empty component refused");
	CHECK(sv_file_path(&c, "") != NULL, "empty refused");
	CHECK_INT(sv_session_status("ready"), 1);
	CHECK_INT(sv_session_status("running"), 0);
	CHECK_INT(sv_session_live("starting"), 1);
	CHECK_INT(sv_session_live("closed"), 0);
	CHECK_INT(sv_command_terminal("killed"), 1);
	CHECK_INT(sv_command_terminal("running"), 0);
	CHECK_INT(sv_command_terminal("bogus"), 0);
	CHECK_INT(sv_command_terminal(NULL), 0);
}

void suite_svalidate(void)
{
	static const CU_TestInfo tests[] = {
		{ "session_errors", test_session_errors },
		{ "session_defaults", test_session_defaults },
		{ "command", test_command },
		{ "command_defaults", test_command_defaults },
		{ "kill", test_kill },
		{ "stdin", test_stdin },
		{ "small_rules", test_small_rules },
		CU_TEST_INFO_NULL,
	};
	t_register("svalidate", tests);
}
