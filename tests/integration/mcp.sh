#!/usr/bin/env bash
# The MCP endpoint (issue 12 point 6) over HTTPS through nginx, against the stack's
# real runner, bubblewrap and MariaDB: JSON-RPC 2.0 on POST /v1/mcp.
#
#   1. transport: 401 without a token, 405 on GET (Allow: POST, a JSON-RPC error body,
#      with or without a token), an Accept of JSON and SSE gets application/json, 415,
#      -32700, -32600 (batch), -32601
#   2. initialize (version negotiation), notifications/initialized (202), ping,
#      tools/list (every tool: name, description, inputSchema object)
#   3. run_command: echo -> text + structuredContent; a failing command -> isError
#      and its exit code; one that outlasts wait_seconds -> id + running, get_job later
#   4. invalid params name the field (-32602); another identity's job is "not found"
#      exactly as an unknown id
#   5. session tools end to end: create, exec, write_file + read_file (exact bytes,
#      text and base64), list_files, close; another identity's session is not found
#   5b. background commands: session_exec background -> pid at once;
#      session_command_status (pid, command_id, wait) and session_command_output
#      (offset, stream, wait, eof); unknown pid / another identity's session: the
#      same not-found as an unknown session
#   5c. runtimes: list_runtimes; run_command runtime python3 + source; c: the
#      program runs after the compile step; a compile error -> isError with gcc's
#      message as text and structuredContent.compile
#   6. tests/mcp_conformance.py (python3 stdlib); the real MCP client (node +
#      @modelcontextprotocol/sdk, pinned in tests/clients, installed by tests/deps.sh),
#      one check per line of tests/mcp_sdk_check.cjs; without it: a failure in CI
#      (CI=true), else a visible skip

set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env --token
RUN="$RANDOM$RANDOM"

mkkey A mcp-ns "t-$RUN" user "alice-$RUN"
mkkey B mcp-ns "t-$RUN" user "bob-$RUN"
TOKEN=$A_TOK

# rpc ID METHOD PARAMS: one JSON-RPC request from A.
rpc() { req POST /v1/mcp "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"$2\",\"params\":${3:-{\}}}"; }
# call ID TOOL ARGS
call() { rpc "$1" tools/call "{\"name\":\"$2\",\"arguments\":$3}"; }
# LIMITS: scaled (SANDBOX_TIME_SCALE), a ',"limits":{...}' member giving a python3 start
# or a gcc compile in a slow guest the time the defaults (10 s) give it on the host;
# empty at scale 1.
LIMITS=
[ "$TSCALE" = 1 ] || LIMITS=',"limits":{"wall_seconds":'"$(tscale 10 300)"',"cpu_seconds":'"$(tscale 10 300)"'}'

# ================================================== 1. transport

ctx "no token"
TOKEN='' req POST /v1/mcp '{"jsonrpc":"2.0","id":1,"method":"ping"}'
expect_error 401 unauthorized
expect_header WWW-Authenticate '^Bearer'
ctx "GET /v1/mcp (no server-initiated stream)"
req GET /v1/mcp '' -H 'Accept: text/event-stream'
expect_status 405
expect_header Allow '^POST$'
expect_header Content-Type '^application/json'
expect_json '[.jsonrpc, .id, .error.code, (.error.message | test("SSE"))] | @json' '["2.0",null,-32000,true]'
ctx "GET /v1/mcp without a token: the same 405"
TOKEN='' req GET /v1/mcp
expect_status 405
expect_header Allow '^POST$'
expect_json '.error.code' -32000
ctx "Accept: application/json, text/event-stream gets JSON"
req POST /v1/mcp '{"jsonrpc":"2.0","id":2,"method":"ping"}' -H 'Accept: application/json, text/event-stream'
expect_status 200
expect_header Content-Type '^application/json'
expect_json '[.id, .result] | @json' '[2,{}]'
ctx "not JSON"
req POST /v1/mcp 'x' -H 'Content-Type: text/plain'
expect_error 415 unsupported_media_type
ctx "malformed JSON"
req POST /v1/mcp '{"jsonrpc":"2.0","id":1,'
expect_json '.error.code' -32700
expect_json '.id' null
expect_json '.jsonrpc' 2.0
ctx "batch"
req POST /v1/mcp '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'
expect_json '.error.code' -32600
ctx "no jsonrpc member"
req POST /v1/mcp '{"id":3,"method":"ping"}'
expect_json '[.error.code, .id] | @json' '[-32600,3]'
ctx "unknown method"
rpc 4 'resources/list'
expect_status 200
expect_json '[.error.code, .id, (.error.message | test("resources/list"))] | @json' '[-32601,4,true]'

# ================================================== 2. lifecycle

ctx "initialize"
rpc 10 initialize '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}'
expect_status 200
expect_header Content-Type '^application/json'
expect_json '.result.protocolVersion' 2025-06-18
expect_json '.result.capabilities.tools | type' object
expect_json '.result.serverInfo.name | type' string
expect_json '.id' 10
ctx "initialize with an older supported version"
rpc '"s"' initialize '{"protocolVersion":"2025-03-26","capabilities":{}}'
expect_json '[.id, .result.protocolVersion] | @json' '["s","2025-03-26"]'
ctx "initialize with an unknown version: ours"
rpc 11 initialize '{"protocolVersion":"1999-01-01","capabilities":{}}'
expect_json '.result.protocolVersion' 2025-06-18
ctx "initialize without protocolVersion"
rpc 12 initialize '{}'
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"params.protocolVersion"]'
ctx "notifications/initialized"
req POST /v1/mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}'
expect_status 202
expect_eq "202 has no body" 0 "$(wc -c < "$BODY")"
ctx "ping"
rpc 13 ping
expect_json '.result | @json' '{}'
ctx "tools/list"
rpc 14 tools/list
expect_json '[.result.tools[].name] | sort | @json' \
	'["get_job","list_runtimes","run_command","session_close","session_command_output","session_command_status","session_create","session_exec","session_list_files","session_read_file","session_write_file"]'
expect_json '[.result.tools[] | select((.name|type) == "string" and (.description|type) == "string" and (.description|length) > 0 and (.inputSchema|type) == "object" and .inputSchema.type == "object")] | length' 11

# ================================================== 3. run_command

ctx "run_command echo"
call 20 run_command '{"command":"echo hello-mcp"}'
expect_json '.result.content[0] | @json' '{"type":"text","text":"hello-mcp\n"}'
expect_json '[.result.structuredContent.status, .result.structuredContent.exit_code, .result.structuredContent.stdout, .result.isError] | @json' \
	'["succeeded",0,"hello-mcp\n",false]'
expect_json '.result.structuredContent.stderr' ''
expect_json '.result.structuredContent.diagnostics | type' array
ctx "run_command argv, env, stdin, files"
call 21 run_command '{"argv":["sh","-c","cat in.txt; printf %s \"$V\"; cat"],"env":{"V":"-v-"},"stdin":"-stdin-","files":[{"path":"in.txt","content":"file"}]}'
expect_json '.result.structuredContent.stdout' 'file-v--stdin-'
ctx "run_command failing"
call 22 run_command '{"command":"echo oops >&2; exit 3"}'
expect_json '[.result.isError, .result.structuredContent.exit_code, .result.structuredContent.status, .result.structuredContent.stderr] | @json' \
	'[true,3,"failed","oops\n"]'
expect_json '.result.content[0].text | test("exit code 3")' true
ctx "run_command outlasting wait_seconds"
call 23 run_command '{"command":"sleep 3; echo late","wait_seconds":1}'
expect_json '[.result.isError, (.result.structuredContent.status | IN("queued","running")), .result.structuredContent.exit_code] | @json' '[false,true,null]'
LATE=$(jq -r '.result.structuredContent.id' "$BODY")
expect_true "a job id ($LATE)" test "${#LATE}" -eq 36
ctx "get_job waits for the end"
call 24 get_job "{\"id\":\"$LATE\",\"wait_seconds\":$(tscale 20 30)}"
expect_json '[.result.structuredContent.status, .result.structuredContent.exit_code, .result.structuredContent.stdout, .result.isError] | @json' \
	'["succeeded",0,"late\n",false]'
ctx "run_command timed out"
call 25 run_command '{"command":"sleep 5","limits":{"wall_seconds":1}}'
expect_json '[.result.isError, .result.structuredContent.status, .result.structuredContent.exit_code] | @json' '[true,"timed_out",124]'

# ================================================== 4. invalid params, identity

ctx "run_command bad limit"
call 30 run_command '{"command":"true","limits":{"memory_mb":-1}}'
expect_json '[.error.code, .error.data.field, (.error.message | test("arguments.limits.memory_mb"))] | @json' '[-32602,"arguments.limits.memory_mb",true]'
ctx "run_command unknown argument"
call 31 run_command '{"command":"true","shell":"bash"}'
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.shell"]'
ctx "run_command without a command"
call 32 run_command '{}'
expect_json '.error.code' -32602
expect_json '.error.message | test("command")' true
ctx "run_command wait_seconds out of range"
call 33 run_command '{"command":"true","wait_seconds":99}'
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.wait_seconds"]'
ctx "get_job without id"
call 34 get_job '{}'
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.id"]'
ctx "get_job id of the wrong type"
call 35 get_job '{"id":5}'
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.id"]'
ctx "unknown tool"
call 36 no_such_tool '{}'
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"params.name"]'
ctx "arguments not an object"
rpc 37 tools/call '{"name":"ping","arguments":[]}'
expect_json '.error.code' -32602
ctx "tools/call without params"
req POST /v1/mcp '{"jsonrpc":"2.0","id":38,"method":"tools/call"}'
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"params.name"]'

ctx "B reads A's job"
TOKEN=$B_TOK call 40 get_job "{\"id\":\"$LATE\"}"
FOREIGN=$(jq -c '.result' "$BODY")
expect_json '[.result.isError, .result.structuredContent.error.code] | @json' '[true,"not_found"]'
ctx "B reads an unknown job"
TOKEN=$B_TOK call 40 get_job '{"id":"01900000-0000-7000-8000-000000000000"}'
expect_eq "a foreign job answers exactly as an unknown one" "$FOREIGN" "$(jq -c '.result' "$BODY")"
expect_json '.result.structuredContent.stdout' null

# ================================================== 5. sessions

ctx "session_create"
call 50 session_create '{"env":{"GREETING":"hi"}}'
SID=$(jq -r '.result.structuredContent.id // empty' "$BODY")
expect_json '[.result.isError, .result.structuredContent.status] | @json' '[false,"ready"]'
if [ -z "$SID" ]; then
	echo "Bail out! session_create failed: $(head -c 500 "$BODY")"
	finish
	exit 1
fi
ctx "session_exec echo"
call 51 session_exec "{\"session_id\":\"$SID\",\"command\":\"echo \$GREETING from session\"}"
expect_json '[.result.isError, .result.structuredContent.status, .result.structuredContent.exit_code, .result.structuredContent.stdout] | @json' \
	'[false,"succeeded",0,"hi from session\n"]'
expect_json '.result.content[0].text' 'hi from session'
ctx "session_exec failing"
call 52 session_exec "{\"session_id\":\"$SID\",\"argv\":[\"sh\",\"-c\",\"echo e >&2; exit 7\"]}"
expect_json '[.result.isError, .result.structuredContent.exit_code, .result.structuredContent.stderr] | @json' '[true,7,"e\n"]'
ctx "session_write_file text"
TEXT=$'line one\nüñí "quoted" \\ end\n'
call 53 session_write_file "$(jq -cn --arg s "$SID" --arg c "$TEXT" '{session_id:$s, path:"dir/a.txt", content:$c}')"
expect_json '[.result.isError, .result.structuredContent.size] | @json' "[false,$(printf '%s' "$TEXT" | wc -c)]"
ctx "session_read_file text"
call 54 session_read_file "{\"session_id\":\"$SID\",\"path\":\"dir/a.txt\"}"
expect_eq "read back exactly" "$(hexs "$TEXT")" "$(jq -j '.result.structuredContent.content' "$BODY" | od -An -v -tx1 | tr -d ' \n')"
ctx "session_write_file base64 (binary)"
B64=$(printf '\x00\x01\xffbin' | base64)
call 55 session_write_file "{\"session_id\":\"$SID\",\"path\":\"b.bin\",\"content_base64\":\"$B64\",\"mode\":\"0755\"}"
expect_json '.result.isError' false
ctx "session_read_file binary -> base64"
call 56 session_read_file "{\"session_id\":\"$SID\",\"path\":\"b.bin\"}"
expect_json '.result.structuredContent.content_base64' "$B64"
ctx "the command sees the written file"
call 57 session_exec "{\"session_id\":\"$SID\",\"command\":\"cat dir/a.txt; test -x b.bin && echo x\"}"
expect_eq "stdout" "$(hexs "${TEXT}x"$'\n')" "$(jq -j '.result.structuredContent.stdout' "$BODY" | od -An -v -tx1 | tr -d ' \n')"
ctx "session_list_files"
call 58 session_list_files "{\"session_id\":\"$SID\"}"
expect_json '[.result.structuredContent.files[] | .path] | sort | @json' '["b.bin","dir/a.txt"]'
expect_json '[.result.structuredContent.files[] | select(.path == "b.bin") | .size] | @json' '[6]'
ctx "session_read_file missing"
call 59 session_read_file "{\"session_id\":\"$SID\",\"path\":\"nope\"}"
expect_json '[.result.isError, .result.structuredContent.error.code] | @json' '[true,"not_found"]'
ctx "session_read_file bad path"
call 60 session_read_file "{\"session_id\":\"$SID\",\"path\":\"../etc/passwd\"}"
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.path"]'
ctx "session_write_file unknown argument"
call 61 session_write_file "{\"session_id\":\"$SID\",\"path\":\"x\",\"content\":\"\",\"owner\":\"root\"}"
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.owner"]'
ctx "session_exec bad field"
call 62 session_exec "{\"session_id\":\"$SID\",\"command\":\"true\",\"timeout_seconds\":\"x\"}"
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.timeout_seconds"]'
ctx "B uses A's session"
TOKEN=$B_TOK call 63 session_exec "{\"session_id\":\"$SID\",\"command\":\"echo pwned\"}"
FOREIGN=$(jq -c '.result' "$BODY")
expect_json '[.result.isError, .result.structuredContent.error.code] | @json' '[true,"not_found"]'
TOKEN=$B_TOK call 64 session_exec '{"session_id":"01900000-0000-7000-8000-000000000000","command":"echo x"}'
expect_eq "a foreign session answers exactly as an unknown one" "$FOREIGN" "$(jq -c '.result' "$BODY")"
TOKEN=$B_TOK call 65 session_read_file "{\"session_id\":\"$SID\",\"path\":\"dir/a.txt\"}"
expect_json '[.result.isError, .result.structuredContent.error.code] | @json' '[true,"not_found"]'
expect_eq "B's call left no command in A's session" 3 "$(sql "SELECT COUNT(*) FROM session_commands WHERE session_id = '$SID'")"

# ================================================== 5b. background commands

ctx "session_exec background"
# Under emulation the sleep must outlast the status call below, and the command gets
# a timeout of its own over the server's 10 s default (at scale 1 as it always was).
BG_TIMEOUT=
[ "$TSCALE" = 1 ] || BG_TIMEOUT=",\"timeout_seconds\":$(tscale 10 60)"
call 70 session_exec "{\"session_id\":\"$SID\",\"argv\":[\"sh\",\"-c\",\"echo one; echo e1 >&2; sleep $(tscale 2 20); echo two; exit 4\"],\"background\":true$BG_TIMEOUT}"
expect_json '[.result.isError, (.result.structuredContent.status | IN("queued","running")), (.result.structuredContent.pid | type), .result.structuredContent.exit_code] | @json' '[false,true,"number",null]'
BPID=$(jq -r '.result.structuredContent.pid' "$BODY")
BCID=$(jq -r '.result.structuredContent.id' "$BODY")
expect_json '.result.content[0].text | test("session_command_status")' true
ctx "session_command_status without waiting: still running"
call 71 session_command_status "{\"session_id\":\"$SID\",\"pid\":$BPID}"
expect_json '[.result.isError, (.result.structuredContent.status | IN("queued","running")), .result.structuredContent.id] | @json' "[false,true,\"$BCID\"]"
ctx "session_command_output from offset 0, waiting for bytes"
call 72 session_command_output "{\"session_id\":\"$SID\",\"pid\":$BPID,\"wait_seconds\":$(tscale 10 30)}"
expect_json '[.result.isError, (.result.structuredContent.data | startswith("one\n")), .result.structuredContent.offset, .result.structuredContent.pid] | @json' "[false,true,0,$BPID]"
ctx "session_command_status waits for the end"
call 73 session_command_status "{\"session_id\":\"$SID\",\"pid\":$BPID,\"wait_seconds\":$(tscale 20 30)}"
expect_json '[.result.isError, .result.structuredContent.status, .result.structuredContent.exit_code, .result.structuredContent.stdout, .result.structuredContent.stderr] | @json' \
	'[true,"failed",4,"one\ntwo\n","e1\n"]'
ctx "session_command_output from an offset, by command_id"
call 74 session_command_output "{\"session_id\":\"$SID\",\"command_id\":\"$BCID\",\"offset\":4}"
expect_json '[.result.structuredContent.data, .result.structuredContent.next_offset, .result.structuredContent.total_bytes, .result.structuredContent.eof, .result.structuredContent.exit_code, .result.content[0].text] | @json' \
	'["two\n",8,8,true,4,"two\n"]'
ctx "session_command_output stderr"
call 75 session_command_output "{\"session_id\":\"$SID\",\"pid\":$BPID,\"stream\":\"stderr\"}"
expect_json '[.result.structuredContent.stream, .result.structuredContent.data] | @json' '["stderr","e1\n"]'
ctx "session_command_output at the end with a wait: eof at once"
call 76 session_command_output "{\"session_id\":\"$SID\",\"pid\":$BPID,\"offset\":8,\"wait_seconds\":30}"
expect_json '[.result.structuredContent.data, .result.structuredContent.eof] | @json' '["",true]'
ctx "session_command_* bad arguments"
call 77 session_command_status "{\"session_id\":\"$SID\"}"
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.pid"]'
call 78 session_command_output "{\"session_id\":\"$SID\",\"pid\":$BPID,\"offset\":-1}"
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.offset"]'
call 79 session_exec "{\"session_id\":\"$SID\",\"command\":\"true\",\"background\":\"yes\"}"
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.background"]'
call 80 run_command '{"command":"true","background":true}'
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.background"]'
ctx "unknown pid, unknown command id"
call 81 session_command_status "{\"session_id\":\"$SID\",\"pid\":999}"
expect_json '[.result.isError, .result.structuredContent.error.code, .result.structuredContent.error.http_status] | @json' '[true,"not_found",404]'
call 82 session_command_output "{\"session_id\":\"$SID\",\"command_id\":\"01900000-0000-7000-8000-000000000000\"}"
expect_json '[.result.isError, .result.structuredContent.error.code] | @json' '[true,"not_found"]'
ctx "B polls A's command"
TOKEN=$B_TOK call 83 session_command_status "{\"session_id\":\"$SID\",\"pid\":$BPID}"
FOREIGN=$(jq -c '.result' "$BODY")
expect_json '[.result.isError, .result.structuredContent.error.code] | @json' '[true,"not_found"]'
TOKEN=$B_TOK call 83 session_command_status "{\"session_id\":\"01900000-0000-7000-8000-000000000000\",\"pid\":$BPID}"
expect_eq "a foreign session's command answers exactly as an unknown session's" "$FOREIGN" "$(jq -c '.result' "$BODY")"
TOKEN=$B_TOK call 84 session_command_output "{\"session_id\":\"$SID\",\"command_id\":\"$BCID\"}"
expect_eq "output of a foreign command: the same not-found" "$FOREIGN" "$(jq -c '.result' "$BODY")"
TOKEN=$B_TOK call 85 session_command_output "{\"session_id\":\"$SID\",\"pid\":$BPID,\"wait_seconds\":5}"
expect_eq "with a wait: the same not-found" "$FOREIGN" "$(jq -c '.result' "$BODY")"

ctx "session_close"
call 66 session_close "{\"session_id\":\"$SID\"}"
expect_json '.result.isError' false
_closed() { [ "$(sql "SELECT status FROM sessions WHERE id = '$SID'")" = closed ]; }
expect_true "closed" poll 15 _closed
ctx "session_exec after close"
call 67 session_exec "{\"session_id\":\"$SID\",\"command\":\"true\"}"
expect_json '.result.isError' true


# ================================================== 5c. runtimes

ctx "list_runtimes"
call 90 list_runtimes '{}'
expect_json '[.result.isError, ([.result.structuredContent.runtimes[].name] | index("python3") != null), ([.result.structuredContent.runtimes[] | select(.name == "c") | .compiled] | .[0])] | @json' '[false,true,true]'
expect_json '.result.content[0].text | test("(^|\n)python3 \\(Python 3")' true
ctx "run_command runtime python3"
call 91 run_command '{"runtime":"python3","source":"import sys\nprint(6 * 7)\nsys.exit(2)\n"'"$LIMITS"'}'
expect_json '[.result.isError, .result.structuredContent.exit_code, .result.structuredContent.stdout, .result.structuredContent.compile] | @json' '[true,2,"42\n",null]'
ctx "run_command runtime c"
call 92 run_command '{"runtime":"c","source":"#include <stdio.h>\nint main(void) { puts(\"from c\"); return 0; }\n"'"$LIMITS"'}'
expect_json '[.result.isError, .result.structuredContent.exit_code, .result.structuredContent.stdout, .result.structuredContent.compile.exit_code, .result.content[0].text] | @json' '[false,0,"from c\n",0,"from c\n"]'
ctx "run_command runtime c, compile error"
call 93 run_command '{"runtime":"c","source":"int main(void) { return no_such_name; }\n"'"$LIMITS"'}'
expect_json '[.result.isError, (.result.structuredContent.compile.exit_code > 0), .result.structuredContent.stdout] | @json' '[true,true,""]'
expect_json '.result.content[0].text | test("^\\[compile step failed, exit code [1-9]")' true
expect_json '.result.content[0].text | test("no_such_name")' true
ctx "run_command unknown runtime"
call 94 run_command '{"runtime":"cobol-2099","source":"x"}'
expect_json '[.error.code, .error.data.field] | @json' '[-32602,"arguments.runtime"]'

# ================================================== 6. clients

ctx "conformance"
if out=$(SANDBOX_TIME_SCALE=$TSCALE python3 "$REPO/tests/mcp_conformance.py" "$SANDBOX_URL/v1/mcp" "$SANDBOX_CACERT" "$A_TOK" 2>&1); then
	_ok "tests/mcp_conformance.py: $(tail -1 <<< "$out")"
else
	_notok "tests/mcp_conformance.py" "exit 0" "$(tail -5 <<< "$out")" 0
fi
# The reference client (TypeScript SDK), pinned in tests/clients and installed there by
# tests/deps.sh (`npm ci`; never fetched here), or in the folder MCP_SDK_DIR names.
# Each "ok - " / "not ok - " line of tests/mcp_sdk_check.cjs is one check here; its exit
# status and closing "all passed" are checked too (a crash after the last line).
# Missing node or SDK: a failure in CI, else a visible skip (ci_skip).
. "$REPO/tests/clients/env.sh"
SDK_DIR=${MCP_SDK_DIR:-$CLIENTS_DIR}
if command -v node > /dev/null 2>&1 &&
   (cd "$SDK_DIR" 2> /dev/null && node -e 'require.resolve("@modelcontextprotocol/sdk/client/streamableHttp.js")') > /dev/null 2>&1; then
	ctx "MCP SDK client"
	out=$(NODE_EXTRA_CA_CERTS=$SANDBOX_CACERT MCP_SDK_DIR=$SDK_DIR SANDBOX_TOKEN=$A_TOK SANDBOX_TIME_SCALE=$TSCALE \
		node "$REPO/tests/mcp_sdk_check.cjs" "$SANDBOX_URL/v1/mcp" 2>&1)
	tap_relay "MCP SDK client" "$REPO/tests/mcp_sdk_check.cjs" $? "$out"
else
	ci_skip "MCP SDK client" "node or @modelcontextprotocol/sdk not installed in $SDK_DIR (bash tests/deps.sh installs it)"
fi

finish
