/* app/jobs/validate: every rule of the validation table in docs/ARCHITECTURE.md, with the
 * exact status, code and field of each rejection, and the decoded result of each
 * accepted request. Every request is released with val_job_free (ASan checks leaks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "joblimits.h"
#include "tests.h"
#include "validate.h"

struct rej {
	const char *body;
	const char *field; /* "" = about the whole body */
	int status;        /* 0 = 400 */
	const char *code;  /* NULL = invalid_request */
};

/* Runs one request that must be refused and checks status, code and field. */
static void expect_reject(const struct cfg *c, int allow_net, const char *body, size_t len,
			  int status, const char *code, const char *field, const char *file,
			  unsigned line)
{
	struct job_req r;
	struct val_err e;
	char show[200], ctx[260];
	int rc;

	t_show(body, len, show, sizeof show);
	snprintf(ctx, sizeof ctx, "body %s", show);
	rc = val_job_request(body, len, c, allow_net, &r, &e);
	if (t_check(rc == -1, file, line, "%s: expected rejection (-1), got %d", ctx, rc)) {
		t_check_ll(ctx, e.status, status, file, line);
		t_check_str(ctx, e.code, code, file, line);
		t_check_str(ctx, e.field, field, file, line);
		t_check(e.message[0] != '\0', file, line, "%s: empty error message", ctx);
	}
	val_job_free(&r);
}

#define REJECT_AT(c, net, body, status, code, field) \
	expect_reject((c), (net), (body), strlen(body), (status), (code), (field), __FILE__, \
		      __LINE__)
#define REJECT(c, body, field) REJECT_AT((c), 0, (body), 400, "invalid_request", (field))

static void run_rejects(const struct cfg *c, const struct rej *rows, size_t n, const char *file,
			unsigned line)
{
	for (size_t i = 0; i < n; i++)
		expect_reject(c, 0, rows[i].body, strlen(rows[i].body),
			      rows[i].status ? rows[i].status : 400,
			      rows[i].code ? rows[i].code : "invalid_request", rows[i].field, file,
			      line);
}

#define RUN_REJECTS(c, rows) run_rejects((c), (rows), NELEM(rows), __FILE__, __LINE__)

/* Runs one request that must be accepted; on success the caller frees r. */
static int accept_at(const struct cfg *c, int allow_net, const char *body, struct job_req *r,
		     const char *file, unsigned line)
{
	struct val_err e;
	int rc = val_job_request(body, strlen(body), c, allow_net, r, &e);

	if (!t_check(rc == 0, file, line, "body %s: expected acceptance, got %d (%d %s field '%s': %s)",
		     body, rc, e.status, e.code ? e.code : "-", e.field, e.message)) {
		val_job_free(r);
		return 0;
	}
	return 1;
}

#define ACCEPT(c, body, r) accept_at((c), 0, (body), (r), __FILE__, __LINE__)
#define ACCEPT_NET(c, net, body, r) accept_at((c), (net), (body), (r), __FILE__, __LINE__)

/* ------------------------------------------------------------------ accepted */

static void test_minimal(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	if (!ACCEPT(&c, "{\"command\":\"echo hi\"}", &r))
		return;
	CHECK_STR(r.command, "echo hi");
	CHECK(r.argv == NULL, "argv must be NULL when command is used");
	CHECK(r.env != NULL && json_is_object(r.env) && json_object_size(r.env) == 0,
	      "env must be an empty object");
	CHECK_STR(r.cwd, "");
	for (int i = 0; i < LIM_COUNT; i++)
		CHECK_INT_AT(limit_specs[i].name, r.limits[i], limit_specs[i].def);
	CHECK_INT(r.network, 0);
	CHECK(r.artifacts == NULL, "artifacts must be NULL when absent");
	CHECK(r.metadata != NULL && json_is_object(r.metadata) &&
		      json_object_size(r.metadata) == 0,
	      "metadata must be an empty object");
	CHECK_INT(r.nfiles, 0);
	CHECK_INT(r.stdin_len, 0);
	CHECK_STR(r.profile, "default");
	val_job_free(&r);
}

/* "runtime" (val_job_runtime) against a runtimes file of the test's own. */
static void test_runtime(void)
{
	char dir[] = "/tmp/val-rt.XXXXXX", *dump;
	struct cfg c;
	struct job_req r;
	FILE *f;

	cfg_defaults(&c);
	if (!CHECK(mkdtemp(dir) != NULL && chmod(dir, 0755) == 0, "mkdtemp"))
		return;
	snprintf(c.runner_runtimes_file, sizeof c.runner_runtimes_file, "%s/rt.conf", dir);
	f = fopen(c.runner_runtimes_file, "w");
	if (!CHECK(f != NULL, "fopen"))
		return;
	fputs("runtime python3 aliases=py file=main.py run=python3,{file}\n"
	      "runtime c file=src/main.c compile=gcc,-o,prog,{file} run=./prog\n", f);
	fclose(f);
	if (getuid() == 0 && ACCEPT(&c, "{\"runtime\":\"py\",\"source\":\"print($(id))\"}", &r)) {
		dump = json_dumps(r.argv, JSON_COMPACT);
		CHECK_STR(dump, "[\"python3\",\"/workspace/main.py\"]");
		free(dump);
		CHECK_STR(r.runtime, "python3");
		CHECK_INT(r.nfiles, 1);
		CHECK_STR(r.files[0].path, "main.py");
		CHECK_MEM(r.files[0].data, r.files[0].len, "print($(id))", 12);
		CHECK(r.compile_argv == NULL, "interpreted");
		val_job_free(&r);
	}
	if (getuid() == 0 &&
	    ACCEPT(&c, "{\"runtime\":\"c\",\"files\":[{\"path\":\"a.c\",\"content\":\"\"}],"
		       "\"entrypoint\":\"a.c\"}", &r)) {
		dump = json_dumps(r.compile_argv, JSON_COMPACT);
		CHECK_STR(dump, "[\"gcc\",\"-o\",\"prog\",\"/workspace/a.c\"]");
		free(dump);
		CHECK_INT(r.nfiles, 1);
		val_job_free(&r);
	}
	REJECT(&c, "{\"runtime\":\"ruby\",\"source\":\"\"}", "runtime");
	REJECT(&c, "{\"runtime\":\"py\",\"source\":\"\",\"command\":\"x\"}", "runtime");
	REJECT(&c, "{\"runtime\":\"py\"}", "source");
	REJECT(&c, "{\"source\":\"x\",\"argv\":[\"a\"]}", "source");
	REJECT(&c, "{\"entrypoint\":\"x\",\"argv\":[\"a\"]}", "entrypoint");
	if (getuid() == 0) {
		REJECT(&c, "{\"runtime\":\"py\",\"entrypoint\":\"b.py\"}", "entrypoint");
		REJECT(&c, "{\"runtime\":\"py\",\"source\":\"\",\"files\":[{\"path\":\"main.py\","
			   "\"content\":\"\"}]}", "source");
	}
	unlink(c.runner_runtimes_file);
	rmdir(dir);
}

static void test_argv_form(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	if (!ACCEPT(&c, "{\"argv\":[\"ls\",\"-l\",\"\"],\"command\":null}", &r))
		return;
	CHECK(r.command == NULL, "command must be NULL when argv is used");
	if (CHECK(r.argv != NULL && json_is_array(r.argv), "argv must be an array")) {
		CHECK_INT(json_array_size(r.argv), 3);
		CHECK_STR(json_string_value(json_array_get(r.argv, 0)), "ls");
		CHECK_STR(json_string_value(json_array_get(r.argv, 1)), "-l");
		CHECK_STR(json_string_value(json_array_get(r.argv, 2)), "");
	}
	val_job_free(&r);
}

static void test_full_request(void)
{
	struct cfg c;
	struct job_req r;
	const char *body =
		"{\"command\":\"python3 main.py\",\"argv\":null,"
		"\"files\":[{\"path\":\"main.py\",\"content\":\"print(1)\"},"
		"{\"path\":\"bin/run\",\"content_base64\":\"IyEvYmluL3NoCg==\",\"executable\":true},"
		"{\"path\":\"data/x.bin\",\"content\":\"\",\"executable\":false}],"
		"\"stdin\":\"in\\n\",\"env\":{\"LANG\":\"C.UTF-8\",\"_X1\":\"\"},"
		"\"cwd\":\"bin\",\"limits\":{\"wall_seconds\":5,\"memory_mb\":512},"
		"\"network\":false,\"artifacts\":\"out\",\"metadata\":{\"ticket\":\"T-1\"}}";

	cfg_defaults(&c);
	if (!ACCEPT(&c, body, &r))
		return;
	CHECK_STR(r.command, "python3 main.py");
	CHECK(r.argv == NULL, "argv null must count as absent");
	if (CHECK_INT(r.nfiles, 3)) {
		CHECK_STR(r.files[0].path, "main.py");
		CHECK_MEM(r.files[0].data, r.files[0].len, "print(1)", 8);
		CHECK_INT(r.files[0].executable, 0);
		CHECK_STR(r.files[1].path, "bin/run");
		CHECK_MEM(r.files[1].data, r.files[1].len, "#!/bin/sh\n", 10);
		CHECK_INT(r.files[1].executable, 1);
		CHECK_STR(r.files[2].path, "data/x.bin");
		CHECK_INT(r.files[2].len, 0);
		CHECK_INT(r.files[2].executable, 0);
	}
	CHECK_MEM(r.stdin_buf, r.stdin_len, "in\n", 3);
	CHECK_INT(json_object_size(r.env), 2);
	CHECK_STR(json_string_value(json_object_get(r.env, "LANG")), "C.UTF-8");
	CHECK_STR(json_string_value(json_object_get(r.env, "_X1")), "");
	CHECK_STR(r.cwd, "bin");
	CHECK_INT(r.limits[LIM_WALL_SECONDS], 5);
	CHECK_INT(r.limits[LIM_MEMORY_MB], 512);
	CHECK_INT(r.limits[LIM_CPU_SECONDS], 10); /* defaults for the others */
	CHECK_INT(r.limits[LIM_PIDS], 64);
	CHECK_INT(r.limits[LIM_OUTPUT_BYTES], 1048576);
	CHECK_INT(r.limits[LIM_DISK_MB], 64);
	CHECK_INT(r.network, 0);
	CHECK_STR(r.artifacts, "out");
	CHECK_STR(json_string_value(json_object_get(r.metadata, "ticket")), "T-1");
	val_job_free(&r);
}

/* Absent and null mean the same for the optional fields that allow null. */
static void test_nulls(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	if (!ACCEPT(&c,
		    "{\"command\":\"x\",\"argv\":null,\"files\":null,\"env\":null,\"cwd\":null,"
		    "\"limits\":null,\"network\":null,\"artifacts\":null,\"metadata\":null}",
		    &r))
		return;
	CHECK_INT(r.nfiles, 0);
	CHECK_STR(r.cwd, "");
	CHECK(r.artifacts == NULL, "artifacts null must stay NULL");
	CHECK_INT(r.network, 0);
	CHECK(json_is_object(r.env) && json_is_object(r.metadata), "env/metadata objects");
	val_job_free(&r);
}

static void test_stdin_base64(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	if (ACCEPT(&c, "{\"command\":\"x\",\"stdin_base64\":\"AP8ACg==\"}", &r)) {
		CHECK_MEM(r.stdin_buf, r.stdin_len, "\x00\xff\x00\n", 4);
		val_job_free(&r);
	}
	if (ACCEPT(&c, "{\"command\":\"x\",\"stdin_base64\":\"\"}", &r)) {
		CHECK_INT(r.stdin_len, 0);
		val_job_free(&r);
	}
	if (ACCEPT(&c, "{\"command\":\"x\",\"stdin\":\"h\\u00e9\"}", &r)) {
		CHECK_MEM(r.stdin_buf, r.stdin_len, "h\xc3\xa9", 3);
		val_job_free(&r);
	}
}

static void test_content_base64_bytes(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	/* "a\0b\xff" with a NUL in the middle, and an executable flag. */
	if (!ACCEPT(&c,
		    "{\"command\":\"x\",\"files\":[{\"path\":\"bin/tool\",\"content_base64\":"
		    "\"YQBi/w==\",\"executable\":true},{\"path\":\"empty\",\"content_base64\":\"\"}]}",
		    &r))
		return;
	if (CHECK_INT(r.nfiles, 2)) {
		CHECK_MEM(r.files[0].data, r.files[0].len, "a\0b\xff", 4);
		CHECK_INT(r.files[0].executable, 1);
		CHECK_STR(r.files[0].path, "bin/tool");
		CHECK_INT(r.files[1].len, 0);
		CHECK_INT(r.files[1].executable, 0);
	}
	val_job_free(&r);
}

/* ------------------------------------------------------------------ rejected */

static void test_invalid_json(void)
{
	static const char *const rows[] = {
		"",
		"not json",
		"{",
		"{\"command\":\"x\",}",
		"{\"command\":\"x\"} trailing",
		"{\"command\":'x'}",
		"{\"command\":\"\xff\"}",             /* invalid UTF-8 */
		"{\"command\":\"\xc0\x80\"}",         /* overlong NUL */
		"{\"command\":\"\xed\xa0\x80\"}",     /* surrogate */
		"{\"command\":\"x\",\"command\":\"y\"}", /* duplicate keys */
		"{\"command\":\"x\",\"env\":{\"A\":\"1\",\"A\":\"2\"}}",
		"{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"path\":\"b\",\"content\":\"\"}]}",
		"{\"command\":\"a\\u0000b\"}",         /* \u0000 */
		"{\"command\":\"x\",\"env\":{\"A\":\"\\u0000\"}}",
		"{\"command\":\"x\",\"stdin\":\"\\ud800\"}", /* lone surrogate escape */
	};
	struct cfg c;

	cfg_defaults(&c);
	for (size_t i = 0; i < NELEM(rows); i++)
		REJECT_AT(&c, 0, rows[i], 400, "invalid_json", "");
	/* A raw NUL byte inside the body. */
	expect_reject(&c, 0, "{\"command\":\"a\0b\"}", 17, 400, "invalid_json", "", __FILE__,
		      __LINE__);
}

static void test_not_object(void)
{
	struct cfg c;
	static const char *const scalars[] = { "\"x\"", "1", "null", "true" };

	cfg_defaults(&c);
	REJECT(&c, "[]", "");
	REJECT(&c, "[{\"command\":\"x\"}]", "");
	/* Jansson refuses bare scalars at the top level: still a 400 with no field. */
	for (size_t i = 0; i < NELEM(scalars); i++) {
		struct job_req r;
		struct val_err e;
		int rc = val_job_request(scalars[i], strlen(scalars[i]), &c, 0, &r, &e);
		CHECK_INT_AT(scalars[i], rc, -1);
		CHECK_INT_AT(scalars[i], e.status, 400);
		CHECK_STR_AT(scalars[i], e.field, "");
		val_job_free(&r);
	}
}

static void test_top_level_fields(void)
{
	static const struct rej rows[] = {
		/* unknown keys */
		{ "{\"command\":\"x\",\"foo\":1}", "foo", 0, NULL },
		{ "{\"command\":\"x\",\"Command\":\"y\"}", "Command", 0, NULL },
		{ "{\"command\":\"x\",\"identity\":{}}", "identity", 0, NULL },
		/* command / argv: exactly one */
		{ "{}", "command", 0, NULL },
		{ "{\"command\":null,\"argv\":null}", "command", 0, NULL },
		{ "{\"command\":\"x\",\"argv\":[\"y\"]}", "command", 0, NULL },
		{ "{\"command\":\"\"}", "command", 0, NULL },
		{ "{\"command\":5}", "command", 0, NULL },
		{ "{\"command\":[\"x\"]}", "command", 0, NULL },
		{ "{\"command\":true}", "command", 0, NULL },
		{ "{\"argv\":\"ls\"}", "argv", 0, NULL },
		{ "{\"argv\":[]}", "argv", 0, NULL },
		{ "{\"argv\":{}}", "argv", 0, NULL },
		{ "{\"argv\":[1]}", "argv", 0, NULL },
		{ "{\"argv\":[\"ls\",null]}", "argv", 0, NULL },
		{ "{\"argv\":[\"ls\",[\"-l\"]]}", "argv", 0, NULL },
		{ "{\"argv\":[\"\"]}", "argv", 0, NULL },
		/* stdin */
		{ "{\"command\":\"x\",\"stdin\":\"a\",\"stdin_base64\":\"YQ==\"}", "stdin", 0, NULL },
		{ "{\"command\":\"x\",\"stdin\":5}", "stdin", 0, NULL },
		{ "{\"command\":\"x\",\"stdin\":null}", "stdin", 0, NULL },
		{ "{\"command\":\"x\",\"stdin\":[\"a\"]}", "stdin", 0, NULL },
		{ "{\"command\":\"x\",\"stdin_base64\":\"@@@@\"}", "stdin_base64", 0, NULL },
		{ "{\"command\":\"x\",\"stdin_base64\":\"YQ=\"}", "stdin_base64", 0, NULL },
		{ "{\"command\":\"x\",\"stdin_base64\":\"YQ== \"}", "stdin_base64", 0, NULL },
		{ "{\"command\":\"x\",\"stdin_base64\":5}", "stdin_base64", 0, NULL },
		/* env */
		{ "{\"command\":\"x\",\"env\":[]}", "env", 0, NULL },
		{ "{\"command\":\"x\",\"env\":\"A=1\"}", "env", 0, NULL },
		{ "{\"command\":\"x\",\"env\":{\"1A\":\"x\"}}", "env", 0, NULL },
		{ "{\"command\":\"x\",\"env\":{\"A-B\":\"x\"}}", "env", 0, NULL },
		{ "{\"command\":\"x\",\"env\":{\"A=B\":\"x\"}}", "env", 0, NULL },
		{ "{\"command\":\"x\",\"env\":{\"\":\"x\"}}", "env", 0, NULL },
		{ "{\"command\":\"x\",\"env\":{\"A\":1}}", "env", 0, NULL },
		{ "{\"command\":\"x\",\"env\":{\"A\":null}}", "env", 0, NULL },
		{ "{\"command\":\"x\",\"env\":{\"A\":[\"1\"]}}", "env", 0, NULL },
		/* cwd */
		{ "{\"command\":\"x\",\"cwd\":\"/tmp\"}", "cwd", 0, NULL },
		{ "{\"command\":\"x\",\"cwd\":\"../x\"}", "cwd", 0, NULL },
		{ "{\"command\":\"x\",\"cwd\":\"a/./b\"}", "cwd", 0, NULL },
		{ "{\"command\":\"x\",\"cwd\":\"a/\"}", "cwd", 0, NULL },
		{ "{\"command\":\"x\",\"cwd\":\".\"}", "cwd", 0, NULL },
		{ "{\"command\":\"x\",\"cwd\":5}", "cwd", 0, NULL },
		/* network */
		{ "{\"command\":\"x\",\"network\":\"yes\"}", "network", 0, NULL },
		{ "{\"command\":\"x\",\"network\":1}", "network", 0, NULL },
		{ "{\"command\":\"x\",\"network\":true}", "network", 403, "forbidden" },
		/* artifacts */
		{ "{\"command\":\"x\",\"artifacts\":5}", "artifacts", 0, NULL },
		{ "{\"command\":\"x\",\"artifacts\":\"\"}", "artifacts", 0, NULL },
		{ "{\"command\":\"x\",\"artifacts\":\"/out\"}", "artifacts", 0, NULL },
		{ "{\"command\":\"x\",\"artifacts\":\"out/../..\"}", "artifacts", 0, NULL },
		{ "{\"command\":\"x\",\"artifacts\":[\"out\"]}", "artifacts", 0, NULL },
		/* limits */
		{ "{\"command\":\"x\",\"limits\":[]}", "limits", 0, NULL },
		{ "{\"command\":\"x\",\"limits\":5}", "limits", 0, NULL },
		{ "{\"command\":\"x\",\"limits\":{\"foo\":1}}", "limits.foo", 0, NULL },
		{ "{\"command\":\"x\",\"limits\":{\"Memory_mb\":256}}", "limits.Memory_mb", 0, NULL },
		/* metadata */
		{ "{\"command\":\"x\",\"metadata\":[]}", "metadata", 0, NULL },
		{ "{\"command\":\"x\",\"metadata\":\"x\"}", "metadata", 0, NULL },
		{ "{\"command\":\"x\",\"metadata\":{\"a\":1}}", "metadata", 0, NULL },
		{ "{\"command\":\"x\",\"metadata\":{\"a\":null}}", "metadata", 0, NULL },
		{ "{\"command\":\"x\",\"metadata\":{\"a\":{}}}", "metadata", 0, NULL },
		{ "{\"command\":\"x\",\"metadata\":{\"a b\":\"x\"}}", "metadata", 0, NULL },
		{ "{\"command\":\"x\",\"metadata\":{\"\":\"x\"}}", "metadata", 0, NULL },
		{ "{\"command\":\"x\",\"metadata\":{\"identity\":\"x\"}}", "metadata.identity", 0,
		  NULL },
		{ "{\"command\":\"x\",\"metadata\":{\"Tenant_ID\":\"x\"}}", "metadata.Tenant_ID", 0,
		  NULL },
		{ "{\"command\":\"x\",\"metadata\":{\"actor_id\":\"x\"}}", "metadata.actor_id", 0,
		  NULL },
		{ "{\"command\":\"x\",\"metadata\":{\"sandbox.job\":\"x\"}}", "metadata.sandbox.job", 0,
		  NULL },
		{ "{\"command\":\"x\",\"metadata\":{\"ok\":\"1\",\"X-Sandbox-Id\":\"x\"}}",
		  "metadata.X-Sandbox-Id", 0, NULL },
	};
	struct cfg c;

	cfg_defaults(&c);
	RUN_REJECTS(&c, rows);
}

static void test_files_fields(void)
{
	static const struct rej rows[] = {
		{ "{\"command\":\"x\",\"files\":{}}", "files", 0, NULL },
		{ "{\"command\":\"x\",\"files\":\"a\"}", "files", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[5]}", "files[0]", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\"},\"b\"]}", "files[1]", 0,
		  NULL },
		{ "{\"command\":\"x\",\"files\":[null]}", "files[0]", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\",\"mode\":\"0755\"}]}",
		  "files[0].mode", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a/../b\",\"content\":\"\"}]}",
		  "files[0].path", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"/etc/passwd\",\"content\":\"\"}]}",
		  "files[0].path", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"./a\",\"content\":\"\"}]}", "files[0].path",
		  0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a//b\",\"content\":\"\"}]}",
		  "files[0].path", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"\",\"content\":\"\"}]}", "files[0].path", 0,
		  NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\\u0001b\",\"content\":\"\"}]}",
		  "files[0].path", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\\\\b\",\"content\":\"\"}]}",
		  "files[0].path", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"content\":\"\"}]}", "files[0].path", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":5,\"content\":\"\"}]}", "files[0].path", 0,
		  NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"ok\",\"content\":\"\"},"
		  "{\"path\":\"..\",\"content\":\"\"}]}",
		  "files[1].path", 0, NULL },
		/* duplicates and clashes */
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\"},"
		  "{\"path\":\"a\",\"content\":\"\"}]}",
		  "files[1].path", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\"},"
		  "{\"path\":\"a/b\",\"content\":\"\"}]}",
		  "files[1].path", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a/b/c\",\"content\":\"\"},"
		  "{\"path\":\"z\",\"content\":\"\"},{\"path\":\"a/b\",\"content\":\"\"}]}",
		  "files[2].path", 0, NULL },
		/* content / content_base64 */
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\"}]}", "files[0].content", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\",\"content_base64\":\"\"}]}",
		  "files[0].content", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":5}]}", "files[0].content", 0,
		  NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":null}]}", "files[0].content",
		  0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content_base64\":\"!!!!\"}]}",
		  "files[0].content_base64", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content_base64\":\"YQ\"}]}",
		  "files[0].content_base64", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\"},"
		  "{\"path\":\"b\",\"content_base64\":\"Zh==\"}]}",
		  "files[1].content_base64", 0, NULL },
		/* executable */
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\",\"executable\":\"yes\"}]}",
		  "files[0].executable", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\",\"executable\":1}]}",
		  "files[0].executable", 0, NULL },
		{ "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\",\"executable\":null}]}",
		  "files[0].executable", 0, NULL },
	};
	struct cfg c;

	cfg_defaults(&c);
	RUN_REJECTS(&c, rows);
}

/* Paths that share a prefix without being nested do not clash. */
static void test_paths_no_false_clash(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	if (ACCEPT(&c,
		   "{\"command\":\"x\",\"files\":[{\"path\":\"ab\",\"content\":\"\"},"
		   "{\"path\":\"a\",\"content\":\"\"},{\"path\":\"a.d/b\",\"content\":\"\"},"
		   "{\"path\":\"abc/d\",\"content\":\"\"}]}",
		   &r)) {
		CHECK_INT(r.nfiles, 4);
		val_job_free(&r);
	}
}

/* ------------------------------------------------------------------ limits */

static void limit_body(char *buf, size_t n, const char *name, const char *value)
{
	snprintf(buf, n, "{\"command\":\"x\",\"limits\":{\"%s\":%s}}", name, value);
}

static void test_limits_defaults(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	if (ACCEPT(&c, "{\"command\":\"x\",\"limits\":{}}", &r)) {
		CHECK_INT(r.limits[LIM_WALL_SECONDS], 10);
		CHECK_INT(r.limits[LIM_CPU_SECONDS], 10);
		CHECK_INT(r.limits[LIM_MEMORY_MB], 256);
		CHECK_INT(r.limits[LIM_PIDS], 64);
		CHECK_INT(r.limits[LIM_OUTPUT_BYTES], 1048576);
		CHECK_INT(r.limits[LIM_DISK_MB], 64);
		val_job_free(&r);
	}
	/* The operator's defaults are what an absent limit gets. */
	c.limit_default[LIM_WALL_SECONDS] = 42;
	c.limit_default[LIM_OUTPUT_BYTES] = 0;
	if (ACCEPT(&c, "{\"command\":\"x\"}", &r)) {
		CHECK_INT(r.limits[LIM_WALL_SECONDS], 42);
		CHECK_INT(r.limits[LIM_OUTPUT_BYTES], 0);
		val_job_free(&r);
	}
}

static void test_limits_ranges(void)
{
	static const struct {
		const char *name;
		enum limit_id id;
		long long min, max;
	} rows[] = {
		{ "wall_seconds", LIM_WALL_SECONDS, 1, 300 },
		{ "cpu_seconds", LIM_CPU_SECONDS, 1, 300 },
		{ "memory_mb", LIM_MEMORY_MB, 16, 4096 },
		{ "pids", LIM_PIDS, 1, 1024 },
		{ "output_bytes", LIM_OUTPUT_BYTES, 0, 16777216 },
		{ "disk_mb", LIM_DISK_MB, 1, 1024 },
	};
	struct cfg c;

	cfg_defaults(&c);
	for (size_t i = 0; i < NELEM(rows); i++) {
		char body[160], v[32], field[64];
		struct job_req r;

		snprintf(field, sizeof field, "limits.%s", rows[i].name);
		/* min and max accepted, stored as given */
		const long long ok[] = { rows[i].min, rows[i].max };
		for (size_t k = 0; k < 2; k++) {
			snprintf(v, sizeof v, "%lld", ok[k]);
			limit_body(body, sizeof body, rows[i].name, v);
			if (ACCEPT(&c, body, &r)) {
				CHECK_INT_AT(body, r.limits[rows[i].id], ok[k]);
				val_job_free(&r);
			}
		}
		/* min-1, max+1 and wrong types rejected, naming limits.<name> */
		char lo[32], hi[32];
		snprintf(lo, sizeof lo, "%lld", rows[i].min - 1);
		snprintf(hi, sizeof hi, "%lld", rows[i].max + 1);
		const char *bad[] = { lo, hi, "1.5", "16.0", "\"10\"", "true", "null", "[]", "{}",
				      "4294967297", "-4294967297", "9223372036854775807",
				      "1e3" };
		for (size_t k = 0; k < NELEM(bad); k++) {
			limit_body(body, sizeof body, rows[i].name, bad[k]);
			REJECT(&c, body, field);
		}
	}
}

/* The maximum is the operator's (config <limit>_max), not the compiled-in one. */
static void test_limits_operator_max(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	c.limit_max[LIM_MEMORY_MB] = 8192;
	if (ACCEPT(&c, "{\"command\":\"x\",\"limits\":{\"memory_mb\":8192}}", &r)) {
		CHECK_INT(r.limits[LIM_MEMORY_MB], 8192);
		val_job_free(&r);
	}
	REJECT(&c, "{\"command\":\"x\",\"limits\":{\"memory_mb\":8193}}", "limits.memory_mb");
	c.limit_max[LIM_WALL_SECONDS] = 30;
	REJECT(&c, "{\"command\":\"x\",\"limits\":{\"wall_seconds\":31}}", "limits.wall_seconds");
	if (ACCEPT(&c, "{\"command\":\"x\",\"limits\":{\"wall_seconds\":30}}", &r))
		val_job_free(&r);
}

/* ------------------------------------------------------------------ network */

static void test_network(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	REJECT_AT(&c, 0, "{\"command\":\"x\",\"network\":true}", 403, "forbidden", "network");
	if (ACCEPT_NET(&c, 1, "{\"command\":\"x\",\"network\":true}", &r)) {
		CHECK_INT(r.network, 1);
		val_job_free(&r);
	}
	if (ACCEPT_NET(&c, 0, "{\"command\":\"x\",\"network\":false}", &r)) {
		CHECK_INT(r.network, 0);
		val_job_free(&r);
	}
	if (ACCEPT_NET(&c, 1, "{\"command\":\"x\"}", &r)) {
		CHECK_INT(r.network, 0); /* permission alone does not turn it on */
		val_job_free(&r);
	}
	/* A wrong type is a 400 even for a key that may use the network. */
	REJECT_AT(&c, 1, "{\"command\":\"x\",\"network\":\"true\"}", 400, "invalid_request",
		  "network");
}

/* ------------------------------------------------------------------ operator caps */

static void test_caps(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	c.max_files_bytes = 4;
	/* exactly at the cap, counted after decoding */
	if (ACCEPT(&c,
		   "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"ab\"},"
		   "{\"path\":\"b\",\"content_base64\":\"Y2Q=\"}]}",
		   &r))
		val_job_free(&r);
	if (ACCEPT(&c, "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content_base64\":\"YWJjZA==\"}]}",
		   &r))
		val_job_free(&r);
	REJECT(&c,
	       "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"ab\"},"
	       "{\"path\":\"b\",\"content\":\"cde\"}]}",
	       "files");
	/* stdin counts toward the same total */
	REJECT(&c, "{\"command\":\"x\",\"stdin\":\"ab\",\"files\":[{\"path\":\"a\",\"content\":\"abc\"}]}",
	       "files");
	REJECT(&c, "{\"command\":\"x\",\"stdin\":\"abcde\"}", "stdin");

	cfg_defaults(&c);
	c.max_files = 2;
	if (ACCEPT(&c,
		   "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\"},"
		   "{\"path\":\"b\",\"content\":\"\"}]}",
		   &r))
		val_job_free(&r);
	REJECT(&c,
	       "{\"command\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\"},"
	       "{\"path\":\"b\",\"content\":\"\"},{\"path\":\"c\",\"content\":\"\"}]}",
	       "files");

	cfg_defaults(&c);
	c.max_env = 2;
	if (ACCEPT(&c, "{\"command\":\"x\",\"env\":{\"A\":\"1\",\"B\":\"2\"}}", &r))
		val_job_free(&r);
	REJECT(&c, "{\"command\":\"x\",\"env\":{\"A\":\"1\",\"B\":\"2\",\"C\":\"3\"}}", "env");

	cfg_defaults(&c);
	c.max_metadata_bytes = 20; /* {"a":"0123456789ab"} is 20 bytes serialized */
	if (ACCEPT(&c, "{\"command\":\"x\",\"metadata\":{\"a\":\"0123456789ab\"}}", &r))
		val_job_free(&r);
	REJECT(&c, "{\"command\":\"x\",\"metadata\":{\"a\":\"0123456789abc\"}}", "metadata");

	/* max_path_bytes applies to file paths, cwd and artifacts */
	cfg_defaults(&c);
	c.max_path_bytes = 3;
	if (ACCEPT(&c,
		   "{\"command\":\"x\",\"cwd\":\"a/b\",\"artifacts\":\"out\","
		   "\"files\":[{\"path\":\"abc\",\"content\":\"\"}]}",
		   &r))
		val_job_free(&r);
	REJECT(&c, "{\"command\":\"x\",\"files\":[{\"path\":\"abcd\",\"content\":\"\"}]}",
	       "files[0].path");
	REJECT(&c, "{\"command\":\"x\",\"cwd\":\"abcd\"}", "cwd");
	REJECT(&c, "{\"command\":\"x\",\"artifacts\":\"abcd\"}", "artifacts");
}

static void test_path_length_in_request(void)
{
	struct cfg c;
	struct job_req r;
	char p255[256], p256[257], body[400];

	cfg_defaults(&c); /* max_path_bytes 255 */
	memset(p255, 'a', 255);
	p255[255] = '\0';
	memset(p256, 'a', 256);
	p256[256] = '\0';
	snprintf(body, sizeof body, "{\"command\":\"x\",\"files\":[{\"path\":\"%s\",\"content\":\"\"}]}",
		 p255);
	if (ACCEPT(&c, body, &r))
		val_job_free(&r);
	snprintf(body, sizeof body, "{\"command\":\"x\",\"files\":[{\"path\":\"%s\",\"content\":\"\"}]}",
		 p256);
	REJECT(&c, body, "files[0].path");
}

static void test_metadata_limits(void)
{
	struct cfg c;
	struct job_req r;
	char body[8192], key[80];
	size_t o;

	cfg_defaults(&c);
	/* 64 keys are fine, 65 are not */
	for (int n = 64; n <= 65; n++) {
		o = (size_t)snprintf(body, sizeof body, "{\"command\":\"x\",\"metadata\":{");
		for (int i = 0; i < n; i++)
			o += (size_t)snprintf(body + o, sizeof body - o, "%s\"k%d\":\"v\"",
					      i ? "," : "", i);
		snprintf(body + o, sizeof body - o, "}}");
		if (n == 64) {
			if (ACCEPT(&c, body, &r)) {
				CHECK_INT(json_object_size(r.metadata), 64);
				val_job_free(&r);
			}
		} else {
			REJECT(&c, body, "metadata");
		}
	}
	/* a 64-byte key is fine, 65 bytes is not */
	memset(key, 'k', 64);
	key[64] = '\0';
	snprintf(body, sizeof body, "{\"command\":\"x\",\"metadata\":{\"%s\":\"v\"}}", key);
	if (ACCEPT(&c, body, &r))
		val_job_free(&r);
	memset(key, 'k', 65);
	key[65] = '\0';
	snprintf(body, sizeof body, "{\"command\":\"x\",\"metadata\":{\"%s\":\"v\"}}", key);
	REJECT(&c, body, "metadata");
	/* ordinary label keys with the allowed punctuation */
	if (ACCEPT(&c, "{\"command\":\"x\",\"metadata\":{\"team.name\":\"a\",\"ci:run-id_2\":\"b\","
		       "\"my-sandbox\":\"c\",\"identityx\":\"d\"}}",
		   &r)) {
		CHECK_INT(json_object_size(r.metadata), 4);
		val_job_free(&r);
	}
}

/* ------------------------------------------------------------------ helpers */

static void test_rel_path(void)
{
	static const struct {
		const char *p;
		int ok;
	} rows[] = {
		{ "a", 1 },
		{ "main.py", 1 },
		{ "a/b/c.txt", 1 },
		{ ".hidden", 1 },
		{ "a/.b", 1 },
		{ "...", 1 },
		{ "a..b", 1 },
		{ "..a", 1 },
		{ "a b/c d", 1 },
		{ "caf\xc3\xa9/\xe2\x82\xac", 1 },
		{ "", 0 },
		{ "/", 0 },
		{ "/a", 0 },
		{ "//a", 0 },
		{ ".", 0 },
		{ "..", 0 },
		{ "./a", 0 },
		{ "../a", 0 },
		{ "a/.", 0 },
		{ "a/..", 0 },
		{ "a/./b", 0 },
		{ "a/../b", 0 },
		{ "a//b", 0 },
		{ "a/", 0 },
		{ "a/b/", 0 },
		{ "a\\b", 0 },
		{ "..\\a", 0 },
		{ "a\nb", 0 },
		{ "a\tb", 0 },
		{ "a\x01", 0 },
		{ "\x1f", 0 },
		{ "a\x7f", 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		const char *why = val_rel_path(rows[i].p, 255);
		char show[64];

		t_show(rows[i].p, strlen(rows[i].p), show, sizeof show);
		if (rows[i].ok)
			CHECK(why == NULL, "val_rel_path(\"%s\"): expected ok, got \"%s\"", show, why);
		else
			CHECK(why != NULL && *why != '\0',
			      "val_rel_path(\"%s\"): expected a reason, got NULL", show);
	}
}

static void test_rel_path_length(void)
{
	char p[300];

	memset(p, 'a', sizeof p);
	p[255] = '\0';
	CHECK(val_rel_path(p, 255) == NULL, "a 255-byte path must be ok with max 255");
	p[255] = 'a';
	p[256] = '\0';
	CHECK(val_rel_path(p, 255) != NULL, "a 256-byte path must be refused with max 255");
	/* multi-byte characters count as bytes */
	CHECK(val_rel_path("\xc3\xa9\xc3\xa9", 3) != NULL, "4 bytes with max 3 must be refused");
	CHECK(val_rel_path("\xc3\xa9\xc3\xa9", 4) == NULL, "4 bytes with max 4 must be ok");
	/* components: 127 + '/' + 127 = 255 */
	memset(p, 'b', 255);
	p[127] = '/';
	p[255] = '\0';
	CHECK(val_rel_path(p, 255) == NULL, "a nested 255-byte path must be ok");
}

static void test_env_name(void)
{
	static const struct {
		const char *s;
		int ok;
	} rows[] = {
		{ "A", 1 },      { "_", 1 },        { "PATH", 1 },   { "_X1", 1 },
		{ "a_b_C9", 1 }, { "LD_PRELOAD", 1 },
		{ "", 0 },       { "1A", 0 },       { "9", 0 },      { "A-B", 0 },
		{ "A=B", 0 },    { "A B", 0 },      { "A.B", 0 },    { "\xc3\xa9", 0 },
		{ "A\n", 0 },    { "$A", 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		char show[32];
		CHECK_INT_AT(t_show(rows[i].s, strlen(rows[i].s), show, sizeof show),
			     val_env_name(rows[i].s), rows[i].ok);
	}
}

static void test_reserved_meta_key(void)
{
	static const struct {
		const char *k;
		int reserved;
	} rows[] = {
		{ "identity", 1 },          { "IDENTITY", 1 },        { "identity_namespace", 1 },
		{ "Identity_Namespace", 1 }, { "tenant_id", 1 },      { "TENANT_ID", 1 },
		{ "subject_type", 1 },      { "subject_id", 1 },      { "actor_type", 1 },
		{ "Actor_Id", 1 },          { "sandbox", 1 },         { "sandbox_job", 1 },
		{ "SandBox.x", 1 },         { "x-sandbox", 1 },       { "X-SANDBOX-ID", 1 },
		{ "identityx", 0 },         { "my_identity", 0 },     { "tenant", 0 },
		{ "subject", 0 },           { "actor", 0 },           { "mysandbox", 0 },
		{ "x-sandbo", 0 },          { "sandbo", 0 },          { "x_sandbox", 0 },
		{ "ticket", 0 },            { "", 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_INT_AT(rows[i].k, val_reserved_meta_key(rows[i].k), rows[i].reserved);
}

/* A key's maxima lower the operator's; a default above the result comes down. */
static void test_key_limits(void)
{
	struct cfg c;
	long long key[LIM_COUNT];

	cfg_defaults(&c);
	for (int i = 0; i < LIM_COUNT; i++)
		key[i] = -1;
	key[LIM_MEMORY_MB] = 128;   /* below the default 256 and the max 4096 */
	key[LIM_WALL_SECONDS] = 100000; /* above the operator's max: no effect */
	val_key_limits(&c, key);
	CHECK_INT(c.limit_max[LIM_MEMORY_MB], 128);
	CHECK_INT(c.limit_default[LIM_MEMORY_MB], 128);
	CHECK_INT(c.limit_max[LIM_WALL_SECONDS], limit_specs[LIM_WALL_SECONDS].max);
	CHECK_INT(c.limit_default[LIM_WALL_SECONDS], limit_specs[LIM_WALL_SECONDS].def);
	CHECK_INT(c.limit_max[LIM_PIDS], limit_specs[LIM_PIDS].max);
}

/* ------------------------------------------------------------------ profiles */

/* `profile`: a name of [a-z0-9_-]; "default" always exists, another one when the
 * runners' runner_profiles_dir holds NAME.profile; the key must list it (403). */
static void test_profile(void)
{
	static const struct rej rows[] = {
		{ "{\"command\":\"x\",\"profile\":5}", "profile", 0, NULL },
		{ "{\"command\":\"x\",\"profile\":[\"default\"]}", "profile", 0, NULL },
		{ "{\"command\":\"x\",\"profile\":\"\"}", "profile", 0, NULL },
		{ "{\"command\":\"x\",\"profile\":\"Python\"}", "profile", 0, NULL },
		{ "{\"command\":\"x\",\"profile\":\"../etc/passwd\"}", "profile", 0, NULL },
		{ "{\"command\":\"x\",\"profile\":\"-x\"}", "profile", 0, NULL },
		{ "{\"command\":\"x\",\"profile\":\"a b\"}", "profile", 0, NULL },
		{ "{\"command\":\"x\",\"profile\":\"nope\"}", "profile", 0, NULL },
		{ "{\"command\":\"x\",\"profile\":\"linked\"}", "profile", 0, NULL },
		{ "{\"command\":\"x\",\"profile\":\"a-directory\"}", "profile", 0, NULL },
		{ "{\"command\":\"x\",\"profile\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
		  "profile", 0, NULL },
	};
	const char allowed[][AUTH_PROFILE_NAME_MAX + 1] = { "default", "python-data" };
	char dir[] = "/tmp/sbx-val-XXXXXX", path[128], link[128], sub[128];
	struct cfg c;
	struct job_req r;
	struct val_err e;

	cfg_defaults(&c);
	if (ACCEPT(&c, "{\"command\":\"x\",\"profile\":\"default\"}", &r)) {
		CHECK_STR(r.profile, "default");
		val_job_free(&r);
	}
	if (ACCEPT(&c, "{\"command\":\"x\",\"profile\":null}", &r)) {
		CHECK_STR(r.profile, "default");
		val_job_free(&r);
	}
	/* no runner_profiles_dir: only "default" exists */
	REJECT(&c, "{\"command\":\"x\",\"profile\":\"python-data\"}", "profile");
	if (!CHECK(mkdtemp(dir) != NULL, "mkdtemp"))
		return;
	snprintf(c.runner_profiles_dir, sizeof c.runner_profiles_dir, "%s", dir);
	snprintf(path, sizeof path, "%s/python-data.profile", dir);
	snprintf(link, sizeof link, "%s/linked.profile", dir);
	snprintf(sub, sizeof sub, "%s/a-directory.profile", dir);
	FILE *f = fopen(path, "w");
	if (f != NULL)
		fclose(f);
	CHECK(f != NULL && symlink(path, link) == 0 && mkdir(sub, 0755) == 0,
	      "profile file, symlink, directory");
	RUN_REJECTS(&c, rows);
	if (ACCEPT(&c, "{\"command\":\"x\",\"profile\":\"python-data\"}", &r)) {
		CHECK_STR(r.profile, "python-data");
		CHECK_INT(val_job_profile(&r, allowed, 2, &e), 0);
		CHECK_INT(val_job_profile(&r, allowed, 1, &e), -1);
		CHECK_INT(e.status, 403);
		CHECK_STR(e.code, "forbidden");
		CHECK_STR(e.field, "profile");
		CHECK_HAS(e.message, "this key may not use profile 'python-data'");
		val_job_free(&r);
	}
	CHECK_INT(val_profile_exists(&c, "default"), 1);
	CHECK_INT(val_profile_exists(&c, "python-data"), 1);
	CHECK_INT(val_profile_exists(&c, "linked"), 0);
	CHECK_INT(val_profile_exists(&c, "python-data.profile"), 0);
	unlink(link);
	unlink(path);
	rmdir(sub);
	rmdir(dir);
}

/* runner_env_passthrough names belong to the operator: a job's env may not set one
 * (400 naming env.NAME) unless runner_env_passthrough_override = 1. */
static void test_env_passthrough(void)
{
	struct cfg c;
	struct job_req r;

	cfg_defaults(&c);
	snprintf(c.runner_env_passthrough, sizeof c.runner_env_passthrough, "LANG, TZ ,LC_ALL");
	CHECK_INT(val_env_passthrough(&c, "LANG"), 1);
	CHECK_INT(val_env_passthrough(&c, "TZ"), 1);
	CHECK_INT(val_env_passthrough(&c, "LC_ALL"), 1);
	CHECK_INT(val_env_passthrough(&c, "LAN"), 0);
	CHECK_INT(val_env_passthrough(&c, "LANGUAGE"), 0);
	CHECK_INT(val_env_passthrough(&c, "LC"), 0);
	REJECT(&c, "{\"command\":\"x\",\"env\":{\"A\":\"1\",\"TZ\":\"UTC\"}}", "env.TZ");
	REJECT(&c, "{\"command\":\"x\",\"env\":{\"LANG\":\"C\"}}", "env.LANG");
	if (ACCEPT(&c, "{\"command\":\"x\",\"env\":{\"LANGUAGE\":\"de\",\"tz\":\"x\"}}", &r))
		val_job_free(&r);
	c.runner_env_passthrough_override = 1;
	if (ACCEPT(&c, "{\"command\":\"x\",\"env\":{\"LANG\":\"C\"}}", &r))
		val_job_free(&r);
	c.runner_env_passthrough_override = 0;
	c.runner_env_passthrough[0] = '\0';
	if (ACCEPT(&c, "{\"command\":\"x\",\"env\":{\"LANG\":\"C\"}}", &r))
		val_job_free(&r);
	CHECK_INT(val_env_passthrough(&c, ""), 0);
}

static const CU_TestInfo tests[] = {
	{ "minimal", test_minimal },
	{ "key_limits", test_key_limits },
	{ "argv_form", test_argv_form },
	{ "full_request", test_full_request },
	{ "nulls", test_nulls },
	{ "stdin_base64", test_stdin_base64 },
	{ "content_base64_bytes", test_content_base64_bytes },
	{ "invalid_json", test_invalid_json },
	{ "not_object", test_not_object },
	{ "top_level_fields", test_top_level_fields },
	{ "files_fields", test_files_fields },
	{ "paths_no_false_clash", test_paths_no_false_clash },
	{ "limits_defaults", test_limits_defaults },
	{ "limits_ranges", test_limits_ranges },
	{ "limits_operator_max", test_limits_operator_max },
	{ "network", test_network },
	{ "operator_caps", test_caps },
	{ "path_length_in_request", test_path_length_in_request },
	{ "metadata_limits", test_metadata_limits },
	{ "rel_path", test_rel_path },
	{ "rel_path_length", test_rel_path_length },
	{ "env_name", test_env_name },
	{ "reserved_meta_key", test_reserved_meta_key },
	{ "profile", test_profile },
	{ "env_passthrough", test_env_passthrough },
	{ "runtime", test_runtime },
	CU_TEST_INFO_NULL,
};

void suite_validate(void)
{
	t_register("validate", tests);
}
