/* The MCP endpoint (issue 12 point 6): JSON-RPC 2.0 over POST /v1/mcp, MCP's Streamable
 * HTTP transport with single JSON responses (no SSE stream: GET is a 405). Stateless:
 * no Mcp-Session-Id; every call is authenticated by the bearer key and scoped to its
 * identity exactly as the REST endpoints are, because the tools run through them.
 *
 * app/mcp/mcp.c is the protocol (pure, unit-tested): message parsing, JSON-RPC errors, the
 * version, the tool table and its schemas, tool results from job and command objects.
 * app/mcp/mcp_tools.c is the handler: each tool is the REST API's own code path (job
 * validation and insert of POST /v1/jobs; the session handlers, called with a
 * sub-request whose answer is captured), and a tool that waits hands the request to
 * the waiter (app/http/waiter.h) like POST /v1/jobs?wait=S. */
#ifndef SANDBOX_MCP_H
#define SANDBOX_MCP_H

#include <jansson.h>
#include <stddef.h>

#include "router.h"

#define MCP_PROTOCOL_LATEST "2025-06-18"
#define MCP_WAIT_DEFAULT 30 /* seconds a waiting tool waits unless told less */

enum mcp_code {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_INTERNAL_ERROR = -32603,
	MCP_SERVER_ERROR = -32000 /* implementation-defined: a transport refusal (405) */
};

struct mcp_msg {
	json_t *root;       /* owns the rest */
	json_t *id;         /* NULL: a notification (or a response, ignored) */
	const char *method; /* NULL: a client's response to us (none expected) */
	json_t *params;     /* object, or NULL */
};

/* An error: its code, message and the field it is about ("" none). */
struct mcp_err {
	int code;
	char message[300];
	char field[200];
};

/* Parses one JSON-RPC message. 0, or -1 with e filled (m->id is set when the message
 * had a usable id, for the error response). Batches (arrays) are an invalid request. */
int mcp_parse(const char *body, size_t len, struct mcp_msg *m, struct mcp_err *e);
void mcp_msg_free(struct mcp_msg *m);

/* {"jsonrpc":"2.0","id":id,"error":{code,message[,data:{field}]}}; id NULL: null. */
json_t *mcp_error(json_t *id, const struct mcp_err *e);
/* {"jsonrpc":"2.0","id":id,"result":result} (result stolen). */
json_t *mcp_response(json_t *id, json_t *result);
/* Fills e; returns -1 (for `return mcp_fail(...)`). */
int mcp_fail(struct mcp_err *e, int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The version answered to a client asking for `requested` (NULL: none). */
const char *mcp_version(const char *requested);
/* initialize's result. params: the request's (may be NULL). -1 with e on bad params. */
json_t *mcp_initialize(const json_t *params, struct mcp_err *e);
/* {"tools":[{name, title, description, inputSchema}, ...]} */
json_t *mcp_tools_list(void);
/* 1 when name is a tool. */
int mcp_tool_known(const char *name);

/* tools/call's params: *name and *args (an object; {} when absent). 0 or -1 with e. */
int mcp_call_params(const json_t *params, const char **name, const json_t **args,
		    struct mcp_err *e);
/* Checks args against the tool's own (non pass-through) arguments: types, required,
 * ranges. Pass-through tools (run_command, session_create, session_exec) let the REST
 * validation name unknown fields; the others reject them here. 0 or -1 with e. */
int mcp_check_args(const char *tool, const json_t *args, struct mcp_err *e);
/* args less the tool's own keys (wait_seconds, session_id): the REST body. New ref. */
json_t *mcp_rest_body(const json_t *args);
/* args less every argument the tool itself takes (wait_seconds, session_id,
 * background, ...): the REST body, which names any other unknown key. New ref. */
json_t *mcp_tool_body(const char *tool, const json_t *args);
/* args.wait_seconds, or def. */
long long mcp_wait_seconds(const json_t *args, long long def);

/* A tool result: content [{type:text,text}], structuredContent (stolen), isError. */
json_t *mcp_tool_result(const char *text, json_t *structured, int is_error);
/* run_command / get_job result from a job object (GET /v1/jobs/{id}'s JSON). */
json_t *mcp_job_result(const json_t *job);
/* session_exec / session_command_status result from a command object and its output
 * slices (NULL: none); structuredContent carries the command's pid. */
json_t *mcp_command_result(const json_t *cmd, const json_t *out, const json_t *err);
/* A REST error body {"error":{code,message,field}} as a tool error result. */
json_t *mcp_rest_error_result(int http_status, const json_t *body);

/* The handler (app/mcp/mcp_tools.c). */
route_fn h_mcp;

#endif
