/* app/mcp/mcp.c: JSON-RPC message parsing and errors, version negotiation, the tool
 * table and its schemas, argument checks (the field named), tool results. */
#include <string.h>

#include "mcp.h"
#include "tests.h"

static void test_parse(void)
{
	static const struct {
		const char *body;
		int code;          /* 0: parsed */
		const char *field; /* the error's field */
		int has_id;
	} rows[] = {
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", 0, "", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x\",\"params\":{}}", 0, "", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 0, "", 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", 0, "", 1 },
		{ "{\"jsonrpc\":\"2.0\",", MCP_PARSE_ERROR, "", 0 },
		{ "", MCP_PARSE_ERROR, "", 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", MCP_PARSE_ERROR, "", 0 },
		{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_INVALID_REQUEST, "", 0 },
		{ "3", MCP_INVALID_REQUEST, "", 0 },
		{ "{\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "jsonrpc", 1 },
		{ "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "jsonrpc", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "id", 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "id", 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1}", MCP_INVALID_REQUEST, "method", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", MCP_INVALID_REQUEST, "method", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", MCP_INVALID_REQUEST, "method", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}", MCP_INVALID_PARAMS,
		  "params", 1 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct mcp_msg m;
		struct mcp_err e = { 0, "", "" };
		int rc = mcp_parse(rows[i].body, strlen(rows[i].body), &m, &e);
		CHECK_INT_AT(rows[i].body, rows[i].code ? -1 : 0, rc);
		if (rows[i].code) {
			CHECK_INT_AT(rows[i].body, rows[i].code, e.code);
			CHECK_STR_AT(rows[i].body, rows[i].field, e.field);
		}
		CHECK_INT_AT(rows[i].body, rows[i].has_id, m.id != NULL);
		mcp_msg_free(&m);
	}
}

static void test_error_shape(void)
{
	struct mcp_err e;
	json_t *id = json_integer(4), *m;

	mcp_fail(&e, MCP_INVALID_PARAMS, "arguments.x", "invalid params: %s", "arguments.x");
	m = mcp_error(id, &e);
	CHECK_INT_AT("code", -32602, (int)json_integer_value(json_object_get(json_object_get(m, "error"), "code")));
	CHECK_STR_AT("field", "arguments.x", json_string_value(json_object_get(json_object_get(
		json_object_get(m, "error"), "data"), "field")));
	CHECK_INT_AT("id", 4, (int)json_integer_value(json_object_get(m, "id")));
	CHECK_STR_AT("jsonrpc", "2.0", json_string_value(json_object_get(m, "jsonrpc")));
	json_decref(m);
	mcp_fail(&e, MCP_PARSE_ERROR, NULL, "parse error");
	m = mcp_error(NULL, &e);
	CHECK_INT_AT("null id", 1, json_is_null(json_object_get(m, "id")));
	CHECK_INT_AT("no data without a field", 1,
		     json_object_get(json_object_get(m, "error"), "data") == NULL);
	json_decref(m);
	json_decref(id);
}

static void test_version(void)
{
	struct mcp_err e;
	json_t *p, *r;

	CHECK_STR_AT("latest", "2025-06-18", mcp_version("2025-06-18"));
	CHECK_STR_AT("older supported", "2025-03-26", mcp_version("2025-03-26"));
	CHECK_STR_AT("unknown: ours", "2025-06-18", mcp_version("2024-11-05"));
	CHECK_STR_AT("none: ours", "2025-06-18", mcp_version(NULL));
	p = json_pack("{s:s}", "protocolVersion", "2025-03-26");
	r = mcp_initialize(p, &e);
	CHECK_STR_AT("initialize", "2025-03-26", json_string_value(json_object_get(r, "protocolVersion")));
	CHECK_INT_AT("tools capability", 1, json_is_object(json_object_get(json_object_get(r, "capabilities"), "tools")));
	json_decref(r);
	json_decref(p);
	p = json_pack("{s:i}", "protocolVersion", 1);
	CHECK_INT_AT("bad version type", 1, mcp_initialize(p, &e) == NULL);
	CHECK_STR_AT("field", "params.protocolVersion", e.field);
	json_decref(p);
	CHECK_INT_AT("no params", 1, mcp_initialize(NULL, &e) == NULL);
}

static void test_tools(void)
{
	json_t *l = mcp_tools_list(), *t;
	size_t i;

	CHECK_INT_AT("eleven tools", 11, (int)json_array_size(json_object_get(l, "tools")));
	json_array_foreach(json_object_get(l, "tools"), i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		json_t *s = json_object_get(t, "inputSchema"), *req;
		size_t j;
		CHECK_INT_AT("name", 1, name != NULL && mcp_tool_known(name));
		CHECK_INT_AT(name, 1, json_string_length(json_object_get(t, "description")) > 10);
		CHECK_STR_AT(name, "object", json_string_value(json_object_get(s, "type")));
		CHECK_INT_AT(name, 1, json_is_object(json_object_get(s, "properties")));
		json_array_foreach(json_object_get(s, "required"), j, req)
			CHECK_INT_AT(json_string_value(req), 1,
				     json_object_get(json_object_get(s, "properties"),
						     json_string_value(req)) != NULL);
	}
	json_decref(l);
	CHECK_INT_AT("unknown", 0, mcp_tool_known("shell"));
}

static void test_args(void)
{
	static const struct {
		const char *tool, *args;
		const char *field; /* NULL: accepted */
	} rows[] = {
		{ "run_command", "{\"command\":\"x\"}", NULL },
		{ "run_command", "{\"command\":\"x\",\"whatever\":1}", NULL }, /* REST names it */
		{ "run_command", "{\"wait_seconds\":0}", "arguments.wait_seconds" },
		{ "run_command", "{\"wait_seconds\":31}", "arguments.wait_seconds" },
		{ "run_command", "{\"wait_seconds\":\"5\"}", "arguments.wait_seconds" },
		{ "get_job", "{\"id\":\"a\"}", NULL },
		{ "get_job", "{\"id\":\"a\",\"wait_seconds\":0}", NULL },
		{ "get_job", "{}", "arguments.id" },
		{ "get_job", "{\"id\":1}", "arguments.id" },
		{ "get_job", "{\"id\":\"a\",\"x\":1}", "arguments.x" },
		{ "session_exec", "{\"command\":\"x\"}", "arguments.session_id" },
		{ "session_exec", "{\"session_id\":\"s\",\"command\":\"x\"}", NULL },
		{ "session_read_file", "{\"session_id\":\"s\"}", "arguments.path" },
		{ "session_read_file", "{\"session_id\":\"s\",\"path\":\"a\",\"encoding\":\"hex\"}",
		  "arguments.encoding" },
		{ "session_write_file", "{\"session_id\":\"s\",\"path\":\"a\"}", "arguments.content" },
		{ "session_write_file",
		  "{\"session_id\":\"s\",\"path\":\"a\",\"content\":\"\",\"content_base64\":\"\"}",
		  "arguments.content" },
		{ "session_write_file", "{\"session_id\":\"s\",\"path\":\"a\",\"content\":\"\"}", NULL },
		{ "session_list_files", "{\"session_id\":\"s\",\"recursive\":\"yes\"}",
		  "arguments.recursive" },
		{ "session_exec", "{\"session_id\":\"s\",\"command\":\"x\",\"background\":true}", NULL },
		{ "session_exec", "{\"session_id\":\"s\",\"command\":\"x\",\"background\":1}",
		  "arguments.background" },
		{ "session_command_status", "{\"session_id\":\"s\",\"pid\":1}", NULL },
		{ "session_command_status", "{\"session_id\":\"s\",\"command_id\":\"c\",\"wait_seconds\":30}",
		  NULL },
		{ "session_command_status", "{\"session_id\":\"s\"}", "arguments.pid" },
		{ "session_command_status", "{\"session_id\":\"s\",\"pid\":1,\"command_id\":\"c\"}",
		  "arguments.pid" },
		{ "session_command_status", "{\"session_id\":\"s\",\"pid\":0}", "arguments.pid" },
		{ "session_command_status", "{\"session_id\":\"s\",\"pid\":1,\"offset\":0}",
		  "arguments.offset" },
		{ "session_command_output", "{\"session_id\":\"s\",\"pid\":1,\"offset\":5,\"stream\":\"stderr\"}",
		  NULL },
		{ "session_command_output", "{\"session_id\":\"s\",\"pid\":1,\"offset\":-1}",
		  "arguments.offset" },
		{ "session_command_output", "{\"session_id\":\"s\",\"pid\":1,\"stream\":\"both\"}",
		  "arguments.stream" },
		{ "session_command_output", "{\"session_id\":\"s\",\"pid\":1,\"limit\":0}",
		  "arguments.limit" },
		{ "session_command_output", "{\"session_id\":\"s\",\"pid\":1,\"wait_seconds\":31}",
		  "arguments.wait_seconds" },
		{ "list_runtimes", "{}", NULL },
		{ "list_runtimes", "{\"all\":true}", "arguments.all" },
		{ "session_close", "{\"session_id\":\"s\"}", NULL },
		{ "session_close", "{\"session_id\":[]}", "arguments.session_id" },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct mcp_err e = { 0, "", "" };
		json_t *a = json_loads(rows[i].args, 0, NULL);
		int rc = mcp_check_args(rows[i].tool, a, &e);
		CHECK_INT_AT(rows[i].args, rows[i].field ? -1 : 0, rc);
		if (rows[i].field) {
			CHECK_INT_AT(rows[i].args, MCP_INVALID_PARAMS, e.code);
			CHECK_STR_AT(rows[i].args, rows[i].field, e.field);
			CHECK_INT_AT("message names the field", 1, strstr(e.message, rows[i].field) != NULL);
		}
		json_decref(a);
	}
	{
		/* The REST body keeps only what the tool does not take itself. */
		json_t *a = json_loads("{\"session_id\":\"s\",\"command\":\"x\",\"background\":true,"
				       "\"wait_seconds\":3}", 0, NULL);
		json_t *b = mcp_tool_body("session_exec", a);
		char *t = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
		CHECK_STR_AT("session_exec body", "{\"command\":\"x\"}", t);
		free(t);
		json_decref(b);
		b = mcp_tool_body("run_command", a); /* run_command does not take these two */
		t = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
		CHECK_STR_AT("run_command body", "{\"background\":true,\"command\":\"x\",\"session_id\":\"s\"}", t);
		free(t);
		json_decref(b);
		json_decref(a);
	}
}

static void test_call_params(void)
{
	struct mcp_err e;
	const char *name;
	const json_t *args;
	json_t *p = json_pack("{s:s}", "name", "ping");

	CHECK_INT_AT("unknown tool", -1, mcp_call_params(p, &name, &args, &e));
	CHECK_STR_AT("field", "params.name", e.field);
	json_decref(p);
	CHECK_INT_AT("no params", -1, mcp_call_params(NULL, &name, &args, &e));
	p = json_pack("{s:s, s:[]}", "name", "get_job", "arguments");
	CHECK_INT_AT("arguments array", -1, mcp_call_params(p, &name, &args, &e));
	CHECK_STR_AT("field", "params.arguments", e.field);
	json_decref(p);
	p = json_pack("{s:s}", "name", "session_close");
	CHECK_INT_AT("no arguments: {}", 0, mcp_call_params(p, &name, &args, &e));
	CHECK_INT_AT("empty object", 1, json_is_object(args) && json_object_size(args) == 0);
	json_decref(p);
}

static void test_results(void)
{
	json_t *job = json_loads("{\"id\":\"j\",\"status\":\"failed\",\"result\":{\"exit_code\":3,"
				 "\"signal\":null,\"stdout\":\"o\",\"stderr\":\"e\\n\","
				 "\"diagnostics\":[]},\"failure\":null}", 0, NULL);
	json_t *r = mcp_job_result(job), *s = json_object_get(r, "structuredContent");
	const char *text = json_string_value(json_object_get(json_array_get(json_object_get(r,
				"content"), 0), "text"));

	CHECK_INT_AT("isError", 1, json_is_true(json_object_get(r, "isError")));
	CHECK_INT_AT("exit_code", 3, (int)json_integer_value(json_object_get(s, "exit_code")));
	CHECK_STR_AT("stderr", "e\n", json_string_value(json_object_get(s, "stderr")));
	CHECK_STR_AT("text", "o\n[status failed, exit code 3]\ne\n", text);
	json_decref(r);
	json_decref(job);

	job = json_loads("{\"id\":\"j\",\"status\":\"running\",\"result\":null}", 0, NULL);
	r = mcp_job_result(job);
	s = json_object_get(r, "structuredContent");
	CHECK_INT_AT("running: not an error", 1, json_is_false(json_object_get(r, "isError")));
	CHECK_STR_AT("running: id", "j", json_string_value(json_object_get(s, "id")));
	CHECK_INT_AT("running: no exit_code", 1, json_object_get(s, "exit_code") == NULL);
	json_decref(r);
	json_decref(job);

	job = json_loads("{\"id\":\"j\",\"status\":\"succeeded\",\"result\":{\"exit_code\":0,"
			 "\"stdout_base64\":\"AAE=\",\"stderr\":\"\"}}", 0, NULL);
	r = mcp_job_result(job);
	s = json_object_get(r, "structuredContent");
	CHECK_STR_AT("base64 kept", "AAE=", json_string_value(json_object_get(s, "stdout_base64")));
	CHECK_INT_AT("succeeded", 1, json_is_false(json_object_get(r, "isError")));
	json_decref(r);
	json_decref(job);

	json_t *cmd = json_loads("{\"id\":\"c\",\"session_id\":\"s\",\"status\":\"succeeded\","
				 "\"exit_code\":0}", 0, NULL);
	json_t *out = json_loads("{\"data\":\"hi\\n\"}", 0, NULL);
	r = mcp_command_result(cmd, out, NULL);
	s = json_object_get(r, "structuredContent");
	CHECK_STR_AT("command stdout", "hi\n", json_string_value(json_object_get(s, "stdout")));
	CHECK_STR_AT("command stderr", "", json_string_value(json_object_get(s, "stderr")));
	CHECK_INT_AT("command ok", 1, json_is_false(json_object_get(r, "isError")));
	json_decref(r);
	json_decref(out);
	json_decref(cmd);
}

void suite_mcp(void)
{
	static const CU_TestInfo tests[] = {
		{ "parse", test_parse },
		{ "error shape", test_error_shape },
		{ "version", test_version },
		{ "tools", test_tools },
		{ "arguments", test_args },
		{ "call params", test_call_params },
		{ "results", test_results },
		CU_TEST_INFO_NULL,
	};
	t_register("mcp", tests);
}
