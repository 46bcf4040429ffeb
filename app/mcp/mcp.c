/* MCP's JSON-RPC layer and tool table (pure: unit-tested). See app/mcp/mcp.h. */
#include "mcp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const versions[] = { MCP_PROTOCOL_LATEST, "2025-03-26" };

int mcp_fail(struct mcp_err *e, int code, const char *field, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	snprintf(e->field, sizeof e->field, "%s", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof e->message, fmt, ap);
	va_end(ap);
	return -1;
}

void mcp_msg_free(struct mcp_msg *m)
{
	json_decref(m->root);
	memset(m, 0, sizeof *m);
}

static int id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

int mcp_parse(const char *body, size_t len, struct mcp_msg *m, struct mcp_err *e)
{
	json_error_t je;
	json_t *v;

	memset(m, 0, sizeof *m);
	m->root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (m->root == NULL)
		return mcp_fail(e, MCP_PARSE_ERROR, NULL, "parse error: %s", je.text);
	if (json_is_array(m->root))
		return mcp_fail(e, MCP_INVALID_REQUEST, NULL,
				"invalid request: batches are not supported; send one message");
	if (!json_is_object(m->root))
		return mcp_fail(e, MCP_INVALID_REQUEST, NULL,
				"invalid request: a JSON-RPC message is an object");
	v = json_object_get(m->root, "id");
	if (v != NULL && id_ok(v))
		m->id = v;
	v = json_object_get(m->root, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
		return mcp_fail(e, MCP_INVALID_REQUEST, "jsonrpc",
				"invalid request: jsonrpc must be \"2.0\"");
	v = json_object_get(m->root, "id");
	if (v != NULL && !id_ok(v))
		return mcp_fail(e, MCP_INVALID_REQUEST, "id",
				"invalid request: id must be a string or an integer");
	v = json_object_get(m->root, "method");
	if (v == NULL) {
		if (json_object_get(m->root, "result") || json_object_get(m->root, "error"))
			return 0; /* a response: we sent no request, nothing to answer */
		return mcp_fail(e, MCP_INVALID_REQUEST, "method",
				"invalid request: method is required");
	}
	if (!json_is_string(v) || json_string_length(v) == 0)
		return mcp_fail(e, MCP_INVALID_REQUEST, "method",
				"invalid request: method must be a non-empty string");
	m->method = json_string_value(v);
	v = json_object_get(m->root, "params");
	if (v != NULL && !json_is_object(v))
		return mcp_fail(e, MCP_INVALID_PARAMS, "params",
				"invalid params: params must be an object");
	m->params = v;
	return 0;
}

json_t *mcp_error(json_t *id, const struct mcp_err *e)
{
	json_t *err = json_pack("{s:i, s:s}", "code", e->code, "message", e->message);

	if (err != NULL && e->field[0] != '\0')
		json_object_set_new(err, "data", json_pack("{s:s}", "field", e->field));
	return json_pack("{s:s, s:O?, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			 "error", err);
}

json_t *mcp_response(json_t *id, json_t *result)
{
	if (result == NULL)
		return NULL;
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

const char *mcp_version(const char *requested)
{
	for (size_t i = 0; requested != NULL && i < sizeof versions / sizeof versions[0]; i++)
		if (strcmp(requested, versions[i]) == 0)
			return versions[i];
	return MCP_PROTOCOL_LATEST;
}

json_t *mcp_initialize(const json_t *params, struct mcp_err *e)
{
	const json_t *pv = params ? json_object_get(params, "protocolVersion") : NULL;

	if (params == NULL || pv == NULL) {
		mcp_fail(e, MCP_INVALID_PARAMS, "params.protocolVersion",
			 "invalid params: params.protocolVersion is required");
		return NULL;
	}
	if (!json_is_string(pv)) {
		mcp_fail(e, MCP_INVALID_PARAMS, "params.protocolVersion",
			 "invalid params: params.protocolVersion must be a string");
		return NULL;
	}
	return json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion",
			 mcp_version(json_string_value(pv)), "capabilities", "tools",
			 "listChanged", 0, "serverInfo", "name", "sandbox-api", "title",
			 "Sandboxed job execution", "version", "1", "instructions",
			 "run_command runs a command in a fresh sandbox and waits for it (up to"
			 " wait_seconds); a job still running is returned with its id: poll"
			 " get_job. session_* tools keep a workspace across commands; a session"
			 " command that outlasts its wait is polled with session_command_status"
			 " or session_command_output. list_runtimes names what run_command's"
			 " runtime + source can run.");
}

/* ------------------------------------------------------------------ tools */

enum arg_type { A_STRING, A_INT, A_BOOL, A_ANY };

struct arg_spec {
	const char *name;
	enum arg_type type;
	int required;
	long long min, max; /* A_INT */
};

struct tool {
	const char *name, *title, *description;
	int passthrough;           /* other keys go to the REST body, which names unknowns */
	struct arg_spec args[10];  /* the tool's own keys (terminated by name NULL) */
	const char *schema;        /* inputSchema, JSON text */
};

#define WAIT_ARG(lo)                                                                       \
	{ "wait_seconds", A_INT, 0, lo, 30 }
#define S_WAIT(lo, def)                                                                    \
	"\"wait_seconds\":{\"type\":\"integer\",\"minimum\":" #lo ",\"maximum\":30,"       \
	"\"default\":" #def ",\"description\":\"How long to wait for the end (the job or"  \
	" command keeps running after it).\"}"
#define S_SID "\"session_id\":{\"type\":\"string\",\"description\":\"A session id from session_create.\"}"
#define S_CMD                                                                              \
	"\"command\":{\"type\":\"string\",\"description\":\"Run by /bin/sh -c inside the"  \
	" sandbox (never on the host). Give command or argv.\"},"                          \
	"\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1},"    \
	"\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"    \
	"\"cwd\":{\"type\":\"string\"},"                                                   \
	"\"stdin\":{\"type\":\"string\"},\"stdin_base64\":{\"type\":\"string\"}"
#define S_CMDREF_ARGS                                                                      \
	{ "pid", A_INT, 0, 1, 2147483647 }, { "command_id", A_STRING, 0, 0, 0 }
#define S_CMDREF                                                                           \
	"\"pid\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"The command's pid in"  \
	" the session (session_exec returns it).\"},\"command_id\":{\"type\":\"string\","      \
	"\"description\":\"The command's id (instead of pid).\"}"
#define S_FILES                                                                            \
	"\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"    \
	"\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"},"                \
	"\"content_base64\":{\"type\":\"string\"},\"executable\":{\"type\":\"boolean\"}}," \
	"\"required\":[\"path\"]}}"

static const struct tool tools[] = {
	{ "run_command", "Run a command",
	  "Runs a command in a fresh sandbox (a job, as POST /v1/jobs) and waits up to"
	  " wait_seconds for it. Instead of command or argv, runtime (see list_runtimes) and"
	  " source run a program: a compiled runtime's compile step is in structured content"
	  " (compile) and its output in the text when it failed. Returns stdout as text and"
	  " {id, status, exit_code, stdout, stderr, diagnostics} as structured content; isError"
	  " when the command failed. A job still running returns its id and status: call"
	  " get_job.",
	  1,
	  { WAIT_ARG(1), { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{" S_CMD "," S_FILES ","
	  "\"runtime\":{\"type\":\"string\",\"description\":\"A runtime of list_runtimes"
	  " (name or alias), instead of command or argv.\"},"
	  "\"source\":{\"type\":\"string\",\"description\":\"The program's text for"
	  " runtime.\"},"
	  "\"entrypoint\":{\"type\":\"string\",\"description\":\"For runtime: a file of"
	  " files to run instead of source.\"},"
	  "\"limits\":{\"type\":\"object\",\"properties\":{"
	  "\"wall_seconds\":{\"type\":\"integer\"},\"cpu_seconds\":{\"type\":\"integer\"},"
	  "\"memory_mb\":{\"type\":\"integer\"},\"pids\":{\"type\":\"integer\"},"
	  "\"output_bytes\":{\"type\":\"integer\"},\"disk_mb\":{\"type\":\"integer\"}},"
	  "\"additionalProperties\":false},"
	  "\"network\":{\"type\":\"boolean\"}," S_WAIT(1, 30) "}}" },
	{ "get_job", "Get a job",
	  "A job's status and, once it has ended, its result (as run_command returns it);"
	  " optionally waits up to wait_seconds for the end.",
	  0,
	  { { "id", A_STRING, 1, 0, 0 }, WAIT_ARG(0), { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\",\"description\":"
	  "\"The job id.\"}," S_WAIT(0, 0) "},\"required\":[\"id\"],\"additionalProperties\":false}" },
	{ "session_create", "Create a session",
	  "Creates a persistent sandbox workspace for several commands and waits up to"
	  " wait_seconds for it to be ready. Returns the session (id, status).",
	  1,
	  { WAIT_ARG(0), { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{"
	  "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}," S_FILES ","
	  "\"limits\":{\"type\":\"object\",\"properties\":{\"memory_mb\":{\"type\":\"integer\"},"
	  "\"pids\":{\"type\":\"integer\"},\"cpu_seconds\":{\"type\":\"integer\"},"
	  "\"disk_mb\":{\"type\":\"integer\"}},\"additionalProperties\":false},"
	  "\"idle_seconds\":{\"type\":\"integer\"},\"max_seconds\":{\"type\":\"integer\"},"
	  "\"network\":{\"type\":\"boolean\"},\"metadata\":{\"type\":\"object\"},"
	  "\"profile\":{\"type\":\"string\"}," S_WAIT(0, 30) "}}" },
	{ "session_exec", "Run a command in a session",
	  "Runs a command in the session's workspace and waits up to wait_seconds; the result"
	  " is as run_command's (a command still running returns its id, pid and status: poll"
	  " it with session_command_status or session_command_output). With background: true"
	  " it returns at once with the command's pid.",
	  1,
	  { { "session_id", A_STRING, 1, 0, 0 }, WAIT_ARG(1), { "background", A_BOOL, 0, 0, 0 },
	    { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{" S_SID "," S_CMD ","
	  "\"timeout_seconds\":{\"type\":\"integer\"},\"output_bytes\":{\"type\":\"integer\"},"
	  "\"tag\":{\"type\":\"string\"},\"background\":{\"type\":\"boolean\",\"default\":false,"
	  "\"description\":\"Return at once (the command's id and pid) without waiting.\"},"
	  S_WAIT(1, 30) "},\"required\":[\"session_id\"]}" },
	{ "session_command_status", "A session command's status",
	  "A session command (by pid or command_id) and, once it has ended, its exit code and"
	  " output (as session_exec returns it); waits up to wait_seconds for the end.",
	  0,
	  { { "session_id", A_STRING, 1, 0, 0 }, S_CMDREF_ARGS, WAIT_ARG(0),
	    { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{" S_SID "," S_CMDREF "," S_WAIT(0, 0) "},"
	  "\"required\":[\"session_id\"],\"additionalProperties\":false}" },
	{ "session_command_output", "Read a session command's output",
	  "The output of a session command (by pid or command_id) from a byte offset: data"
	  " (or data_base64 when not UTF-8 text), next_offset (pass it as offset to read on),"
	  " total_bytes, eof, and the command's status and exit_code. With wait_seconds, a"
	  " read that would bring no bytes waits up to that long for bytes or the end.",
	  0,
	  { { "session_id", A_STRING, 1, 0, 0 }, S_CMDREF_ARGS, WAIT_ARG(0),
	    { "stream", A_STRING, 0, 0, 0 }, { "offset", A_INT, 0, 0, 1LL << 50 },
	    { "limit", A_INT, 0, 1, 1048576 }, { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{" S_SID "," S_CMDREF ","
	  "\"stream\":{\"type\":\"string\",\"enum\":[\"stdout\",\"stderr\"],\"default\":\"stdout\"},"
	  "\"offset\":{\"type\":\"integer\",\"minimum\":0,\"default\":0},"
	  "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1048576},"
	  S_WAIT(0, 0) "},\"required\":[\"session_id\"],\"additionalProperties\":false}" },
	{ "session_read_file", "Read a session file",
	  "A file of the session's workspace: text, or base64 when it is not UTF-8 text (or"
	  " encoding is base64).",
	  0,
	  { { "session_id", A_STRING, 1, 0, 0 }, { "path", A_STRING, 1, 0, 0 },
	    { "encoding", A_STRING, 0, 0, 0 }, { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{" S_SID ",\"path\":{\"type\":\"string\"},"
	  "\"encoding\":{\"type\":\"string\",\"enum\":[\"text\",\"base64\"]}},"
	  "\"required\":[\"session_id\",\"path\"],\"additionalProperties\":false}" },
	{ "session_write_file", "Write a session file",
	  "Creates or replaces a file of the session's workspace from content (text) or"
	  " content_base64.",
	  0,
	  { { "session_id", A_STRING, 1, 0, 0 }, { "path", A_STRING, 1, 0, 0 },
	    { "content", A_STRING, 0, 0, 0 }, { "content_base64", A_STRING, 0, 0, 0 },
	    { "mode", A_STRING, 0, 0, 0 }, { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{" S_SID ",\"path\":{\"type\":\"string\"},"
	  "\"content\":{\"type\":\"string\"},\"content_base64\":{\"type\":\"string\"},"
	  "\"mode\":{\"type\":\"string\",\"description\":\"Octal permissions, e.g. 0644.\"}},"
	  "\"required\":[\"session_id\",\"path\"],\"additionalProperties\":false}" },
	{ "session_list_files", "List session files",
	  "Regular files of the session's workspace (links are skipped): path and size.",
	  0,
	  { { "session_id", A_STRING, 1, 0, 0 }, { "root", A_STRING, 0, 0, 0 },
	    { "recursive", A_BOOL, 0, 0, 0 }, { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{" S_SID ",\"root\":{\"type\":\"string\"},"
	  "\"recursive\":{\"type\":\"boolean\"}},\"required\":[\"session_id\"],"
	  "\"additionalProperties\":false}" },
	{ "list_runtimes", "List runtimes",
	  "The runtimes run_command may name (runtime + source): name, version, aliases, the"
	  " file the source is written to, compiled.",
	  0,
	  { { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}" },
	{ "session_close", "Close a session",
	  "Ends the session: its commands are killed and its workspace removed.",
	  0,
	  { { "session_id", A_STRING, 1, 0, 0 }, { NULL, A_ANY, 0, 0, 0 } },
	  "{\"type\":\"object\",\"properties\":{" S_SID "},\"required\":[\"session_id\"],"
	  "\"additionalProperties\":false}" },
};

#define NTOOLS (sizeof tools / sizeof tools[0])

static const struct tool *tool_find(const char *name)
{
	for (size_t i = 0; name != NULL && i < NTOOLS; i++)
		if (strcmp(tools[i].name, name) == 0)
			return &tools[i];
	return NULL;
}

int mcp_tool_known(const char *name)
{
	return tool_find(name) != NULL;
}

json_t *mcp_tools_list(void)
{
	json_t *list = json_array(), *schema;

	for (size_t i = 0; list != NULL && i < NTOOLS; i++) {
		schema = json_loads(tools[i].schema, 0, NULL);
		if (schema == NULL ||
		    json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:o}", "name",
							  tools[i].name, "title", tools[i].title,
							  "description", tools[i].description,
							  "inputSchema", schema)) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	return json_pack("{s:o}", "tools", list);
}

int mcp_call_params(const json_t *params, const char **name, const json_t **args,
		    struct mcp_err *e)
{
	static json_t *empty;
	const json_t *n = params ? json_object_get(params, "name") : NULL;
	const json_t *a = params ? json_object_get(params, "arguments") : NULL;

	if (n == NULL)
		return mcp_fail(e, MCP_INVALID_PARAMS, "params.name",
				"invalid params: params.name is required");
	if (!json_is_string(n))
		return mcp_fail(e, MCP_INVALID_PARAMS, "params.name",
				"invalid params: params.name must be a string");
	if (!mcp_tool_known(json_string_value(n)))
		return mcp_fail(e, MCP_INVALID_PARAMS, "params.name",
				"invalid params: params.name: unknown tool '%.60s'",
				json_string_value(n));
	if (a != NULL && !json_is_object(a))
		return mcp_fail(e, MCP_INVALID_PARAMS, "params.arguments",
				"invalid params: params.arguments must be an object");
	if (a == NULL) {
		if (empty == NULL)
			empty = json_object();
		a = empty;
	}
	*name = json_string_value(n);
	*args = a;
	return 0;
}

static const struct arg_spec *spec_find(const struct tool *t, const char *key)
{
	for (const struct arg_spec *s = t->args; s->name != NULL; s++)
		if (strcmp(s->name, key) == 0)
			return s;
	return NULL;
}

static int check_one(const struct arg_spec *s, const json_t *v, struct mcp_err *e)
{
	char field[80];

	snprintf(field, sizeof field, "arguments.%s", s->name);
	switch (s->type) {
	case A_STRING:
		if (!json_is_string(v))
			return mcp_fail(e, MCP_INVALID_PARAMS, field,
					"invalid params: %s must be a string", field);
		break;
	case A_BOOL:
		if (!json_is_boolean(v))
			return mcp_fail(e, MCP_INVALID_PARAMS, field,
					"invalid params: %s must be true or false", field);
		break;
	case A_INT:
		if (!json_is_integer(v) || json_integer_value(v) < s->min ||
		    json_integer_value(v) > s->max)
			return mcp_fail(e, MCP_INVALID_PARAMS, field,
					"invalid params: %s must be an integer from %lld to %lld",
					field, s->min, s->max);
		break;
	case A_ANY:
		break;
	}
	return 0;
}

int mcp_check_args(const char *name, const json_t *args, struct mcp_err *e)
{
	const struct tool *t = tool_find(name);
	const char *key;
	json_t *v;

	if (t == NULL)
		return mcp_fail(e, MCP_INVALID_PARAMS, "params.name",
				"invalid params: params.name: unknown tool");
	for (const struct arg_spec *s = t->args; s->name != NULL; s++) {
		v = json_object_get(args, s->name);
		if (v == NULL && s->required) {
			char field[80];
			snprintf(field, sizeof field, "arguments.%s", s->name);
			return mcp_fail(e, MCP_INVALID_PARAMS, field,
					"invalid params: %s is required", field);
		}
		if (v != NULL && check_one(s, v, e) < 0)
			return -1;
	}
	if (t->passthrough)
		return 0;
	json_object_foreach((json_t *)args, key, v) {
		if (spec_find(t, key) == NULL) {
			char field[80];
			snprintf(field, sizeof field, "arguments.%.60s", key);
			return mcp_fail(e, MCP_INVALID_PARAMS, field,
					"invalid params: %s is not an argument of %s", field,
					t->name);
		}
	}
	if (strcmp(name, "session_write_file") == 0 &&
	    (json_object_get(args, "content") != NULL) ==
		    (json_object_get(args, "content_base64") != NULL))
		return mcp_fail(e, MCP_INVALID_PARAMS, "arguments.content",
				"invalid params: arguments.content: give exactly one of content"
				" and content_base64");
	if (strncmp(name, "session_command_", 16) == 0 &&
	    (json_object_get(args, "pid") != NULL) == (json_object_get(args, "command_id") != NULL))
		return mcp_fail(e, MCP_INVALID_PARAMS, "arguments.pid",
				"invalid params: arguments.pid: give exactly one of pid and"
				" command_id");
	if (json_object_get(args, "stream") &&
	    strcmp(json_string_value(json_object_get(args, "stream")), "stdout") != 0 &&
	    strcmp(json_string_value(json_object_get(args, "stream")), "stderr") != 0)
		return mcp_fail(e, MCP_INVALID_PARAMS, "arguments.stream",
				"invalid params: arguments.stream must be stdout or stderr");
	if (strcmp(name, "session_read_file") == 0 && json_object_get(args, "encoding") &&
	    strcmp(json_string_value(json_object_get(args, "encoding")), "text") != 0 &&
	    strcmp(json_string_value(json_object_get(args, "encoding")), "base64") != 0)
		return mcp_fail(e, MCP_INVALID_PARAMS, "arguments.encoding",
				"invalid params: arguments.encoding must be text or base64");
	return 0;
}

json_t *mcp_rest_body(const json_t *args)
{
	json_t *b = json_deep_copy(args);

	if (b != NULL) {
		json_object_del(b, "wait_seconds");
		json_object_del(b, "session_id");
	}
	return b;
}

json_t *mcp_tool_body(const char *tool, const json_t *args)
{
	const struct tool *t = tool_find(tool);
	json_t *b = json_deep_copy(args);

	for (const struct arg_spec *s = t ? t->args : NULL; b != NULL && s && s->name; s++)
		json_object_del(b, s->name);
	return b;
}

long long mcp_wait_seconds(const json_t *args, long long def)
{
	const json_t *v = json_object_get(args, "wait_seconds");

	return json_is_integer(v) ? (long long)json_integer_value(v) : def;
}

/* ------------------------------------------------------------------ results */

json_t *mcp_tool_result(const char *text, json_t *structured, int is_error)
{
	json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
			      text ? text : "", "isError", is_error);

	if (r == NULL) {
		json_decref(structured);
		return NULL;
	}
	if (structured != NULL)
		json_object_set_new(r, "structuredContent", structured);
	return r;
}

static json_t *copy_or_null(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return v ? json_incref(v) : json_null();
}

/* Copies the stream of a result ("stdout" / "stdout_base64") into s; its text. */
static const char *copy_stream(json_t *s, const json_t *from, const char *name)
{
	char b64[32];
	json_t *v = json_object_get(from, name);

	snprintf(b64, sizeof b64, "%s_base64", name);
	if (json_is_string(v)) {
		json_object_set(s, name, v);
		return json_string_value(v);
	}
	v = json_object_get(from, b64);
	json_object_set_new(s, name, json_string(""));
	if (json_is_string(v))
		json_object_set(s, b64, v);
	return "";
}

/* A runtime's compile step that failed (s.compile.exit_code != 0): its status line and
 * its text output (base64 output is left to structuredContent). 1 when it failed. */
static int compile_failed(const json_t *s, char *line, size_t n, const char **out,
			  const char **err)
{
	const json_t *c = json_object_get(s, "compile");
	const json_t *code = json_object_get(c, "exit_code");

	if (!json_is_integer(code) || json_integer_value(code) == 0)
		return 0;
	snprintf(line, n, "[compile step failed, exit code %lld]\n",
		 (long long)json_integer_value(code));
	*out = json_string_value(json_object_get(c, "stdout")) ?
	       json_string_value(json_object_get(c, "stdout")) : "";
	*err = json_string_value(json_object_get(c, "stderr")) ?
	       json_string_value(json_object_get(c, "stderr")) : "";
	return 1;
}

/* The text content: stdout, then (on failure or stderr) a status line and stderr; for
 * something still running, a line saying how to get the result. */
static json_t *text_result(json_t *s, const char *what, int ended, int failed)
{
	const char *id = json_string_value(json_object_get(s, "id"));
	const char *status = json_string_value(json_object_get(s, "status"));
	const char *out = json_string_value(json_object_get(s, "stdout"));
	const char *err = json_string_value(json_object_get(s, "stderr"));
	const json_t *code = json_object_get(s, "exit_code");
	char line[300], cline[80] = "", *text;
	const char *cout = "", *cerr = "";
	size_t n;
	json_t *r;

	if (!ended) {
		snprintf(line, sizeof line, "%s %s is %s: it has not ended yet; call %s later"
			 " for its result", what, id ? id : "?", status ? status : "?",
			 strcmp(what, "job") == 0 ? "get_job with this id" :
			 "session_command_status (or session_command_output) with its pid");
		return mcp_tool_result(line, s, 0);
	}
	out = out ? out : "";
	err = err ? err : "";
	snprintf(line, sizeof line, "[status %s, exit code %s%lld]\n", status ? status : "?",
		 json_is_integer(code) ? "" : "none", json_is_integer(code) ?
		 (long long)json_integer_value(code) : 0LL);
	if (!json_is_integer(code))
		snprintf(line, sizeof line, "[status %s, no exit code]\n", status ? status : "?");
	n = strlen(out) + strlen(line) + strlen(err) + 2;
	if (compile_failed(s, cline, sizeof cline, &cout, &cerr))
		n += strlen(cline) + strlen(cout) + strlen(cerr) + 2;
	text = malloc(n);
	if (text == NULL) {
		json_decref(s);
		return NULL;
	}
	if (cline[0] != '\0') /* the compiler's messages are what the caller needs */
		snprintf(text, n, "%s%s%s%s", cline, cout,
			 *cout && cout[strlen(cout) - 1] != '\n' ? "\n" : "", cerr);
	else if (failed || *err != '\0')
		snprintf(text, n, "%s%s%s%s", out, *out && out[strlen(out) - 1] != '\n' ? "\n" : "",
			 line, err);
	else
		snprintf(text, n, "%s", out);
	r = mcp_tool_result(text, s, failed);
	free(text);
	return r;
}

json_t *mcp_job_result(const json_t *job)
{
	const json_t *res = json_object_get(job, "result");
	const char *status = json_string_value(json_object_get(job, "status"));
	int ended = json_is_object(res), failed;
	json_t *s = json_pack("{s:O?, s:O?}", "id", json_object_get(job, "id"), "status",
			      json_object_get(job, "status"));

	if (s == NULL)
		return NULL;
	if (ended) {
		json_object_set_new(s, "exit_code", copy_or_null(res, "exit_code"));
		json_object_set_new(s, "signal", copy_or_null(res, "signal"));
		copy_stream(s, res, "stdout");
		copy_stream(s, res, "stderr");
		json_object_set_new(s, "stdout_truncated", copy_or_null(res, "stdout_truncated"));
		json_object_set_new(s, "stderr_truncated", copy_or_null(res, "stderr_truncated"));
		json_object_set_new(s, "diagnostics", copy_or_null(res, "diagnostics"));
		json_object_set_new(s, "usage", copy_or_null(res, "usage"));
		if (json_is_object(json_object_get(res, "compile")))
			json_object_set(s, "compile", json_object_get(res, "compile"));
	}
	json_object_set_new(s, "failure", copy_or_null(job, "failure"));
	failed = ended && (status == NULL || strcmp(status, "succeeded") != 0);
	if (!ended && status != NULL && strcmp(status, "cancelled") == 0)
		ended = failed = 1; /* cancelled before it ran: no result will come */
	return text_result(s, "job", ended, failed);
}

/* The command ended: every status but queued and running. */
static int cmd_ended(const char *st)
{
	return st != NULL && strcmp(st, "queued") != 0 && strcmp(st, "running") != 0;
}

json_t *mcp_command_result(const json_t *cmd, const json_t *out, const json_t *err)
{
	const char *status = json_string_value(json_object_get(cmd, "status"));
	int ended = cmd_ended(status);
	json_t *s = json_pack("{s:O?, s:O?, s:O?, s:O?}", "id", json_object_get(cmd, "id"),
			      "pid", json_object_get(cmd, "pid"),
			      "session_id", json_object_get(cmd, "session_id"), "status",
			      json_object_get(cmd, "status"));

	if (s == NULL)
		return NULL;
	if (ended) {
		json_object_set_new(s, "exit_code", copy_or_null(cmd, "exit_code"));
		json_object_set_new(s, "signal", copy_or_null(cmd, "signal"));
		copy_stream(s, out, "data");
		json_object_set(s, "stdout", json_object_get(s, "data"));
		json_object_del(s, "data");
		if (json_object_get(s, "data_base64")) {
			json_object_set(s, "stdout_base64", json_object_get(s, "data_base64"));
			json_object_del(s, "data_base64");
		}
		copy_stream(s, err, "data");
		json_object_set(s, "stderr", json_object_get(s, "data"));
		json_object_del(s, "data");
		if (json_object_get(s, "data_base64")) {
			json_object_set(s, "stderr_base64", json_object_get(s, "data_base64"));
			json_object_del(s, "data_base64");
		}
		json_object_set_new(s, "stdout_truncated", copy_or_null(cmd, "stdout_truncated"));
		json_object_set_new(s, "stderr_truncated", copy_or_null(cmd, "stderr_truncated"));
		json_object_set_new(s, "diagnostics", copy_or_null(cmd, "diagnostics"));
	}
	return text_result(s, "command", ended,
			   ended && strcmp(status, "succeeded") != 0);
}

json_t *mcp_rest_error_result(int http_status, const json_t *body)
{
	const json_t *e = json_object_get(body, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *msg = json_string_value(json_object_get(e, "message"));
	char text[400];

	snprintf(text, sizeof text, "%s: %s", code ? code : "error",
		 msg ? msg : "the request failed");
	return mcp_tool_result(text, json_pack("{s:{s:s, s:s, s:i}}", "error", "code",
					       code ? code : "error", "message",
					       msg ? msg : "the request failed", "http_status",
					       http_status), 1);
}
