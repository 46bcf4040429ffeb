# shellcheck shell=bash
# Sourced by tests/integration/e2b.sh: envd's process service (app/e2b/eprocess.c).
#   1. the Connect protocol raw (curl): a Start stream's envelopes, in order, ending
#      with the end-of-stream envelope; errors of a stream inside it (200); unary
#      errors as {"code","message"}; token-only calls (the Python SDK after connect);
#      another sandbox's token refused; Connect's replay header (ours)
#   2. the real SDK (tests/clients/e2b-process.mjs): run, CommandExitError, background
#      + connect + wait, kill, stdin, envs and cwd, list, timeoutMs, large output

# ---- helpers: envelopes and raw envd calls (never recorded for the OpenAPI check:
# envd is not part of the documented REST API)

# pr_frame JSON FILE: one Connect envelope (flags 0) holding JSON, into FILE.
pr_frame() {
	python3 -c 'import sys,struct; m=sys.argv[1].encode(); sys.stdout.buffer.write(b"\0"+struct.pack(">I",len(m))+m)' "$1" > "$2"
}

# pr_unframe FILE: one line per envelope, "flags json".
pr_unframe() {
	python3 - "$1" << 'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
i = 0
while i + 5 <= len(b):
    f, n = b[i], struct.unpack(">I", b[i + 1:i + 5])[0]
    print(f, b[i + 5:i + 5 + n].decode("utf-8", "replace"))
    i += 5 + n
if i != len(b):
    print("TRAILING", len(b) - i)
EOF
}

# pr_envd METHOD PATH BODYFILE CTYPE [curl args]: $PR_STATUS, $PR_OUT (body file).
PR_OUT=$T_DIR/envd.out
pr_envd() {
	local method=$1 path=$2 body=$3 ctype=$4
	shift 4
	PR_STATUS=$(curl -sS --cacert "$SANDBOX_CACERT" -o "$PR_OUT" -w '%{http_code}' -X "$method" \
		--max-time "$((60 * TSCALE))" -H "Content-Type: $ctype" -H 'Connect-Protocol-Version: 1' \
		--data-binary "@$body" "$@" "$E2B_SANDBOX_URL$path" 2> "$PR_OUT.err") || PR_STATUS=000
}

ctx "envd process (raw)"
pr_sbx=$(curl -sS --cacert "$SANDBOX_CACERT" -X POST -H "X-API-KEY: $SANDBOX_TOKEN" \
	-H 'Content-Type: application/json' --data '{"templateID":"base"}' "$E2B_API_URL/v2/sandboxes")
PR_ID=$(jq -r '.sandboxID // empty' <<< "$pr_sbx")
PR_TOK=$(jq -r '.envdAccessToken // empty' <<< "$pr_sbx")
expect_true "a sandbox for the raw checks" test -n "$PR_ID" -a -n "$PR_TOK"
pr_hdr=(-H "E2b-Sandbox-Id: $PR_ID" -H "X-Access-Token: $PR_TOK")

# 1. Start: start{pid}, data, end, end-of-stream {} (flags 2), nothing after
pr_frame '{"process":{"cmd":"/bin/bash","args":["-l","-c","echo hi; echo oops >&2"]},"stdin":false}' "$T_DIR/start.req"
pr_envd POST /process.Process/Start "$T_DIR/start.req" application/connect+json "${pr_hdr[@]}" \
	-H 'Connect-Timeout-Ms: 60000' -H 'Keepalive-Ping-Interval: 50'
expect_eq "Start: 200" 200 "$PR_STATUS"
pr_unframe "$PR_OUT" > "$T_DIR/start.ev"
pr_pid=$(head -1 "$T_DIR/start.ev" | cut -d' ' -f2- | jq -r '.event.start.pid')
expect_true "Start: the first message is start{pid}" test "$(head -1 "$T_DIR/start.ev" | cut -d' ' -f1)" = 0 -a "$pr_pid" -gt 0
expect_eq "Start: stdout as base64" "hi" \
	"$(grep '"stdout"' "$T_DIR/start.ev" | cut -d' ' -f2- | jq -r '.event.data.stdout' | base64 -d | tr -d '\n')"
expect_eq "Start: stderr as base64" "oops" \
	"$(grep '"stderr"' "$T_DIR/start.ev" | cut -d' ' -f2- | jq -r '.event.data.stderr' | base64 -d | tr -d '\n')"
expect_eq "Start: end (exit status 0, exited, no exitCode)" '{"exited":true,"status":"exit status 0"}' \
	"$(grep '"end"' "$T_DIR/start.ev" | cut -d' ' -f2- | jq -c '.event.end')"
expect_eq "Start: the stream ends with the end-of-stream envelope" "2 {}" "$(tail -1 "$T_DIR/start.ev")"
expect_eq "Start: one end-of-stream envelope, nothing trailing" 1 "$(grep -c '^2 \|TRAILING' "$T_DIR/start.ev")"

# 2. Connect to the finished command: start, end (no replay, as envd); with our replay
#    header: the output again from the offsets given
pr_frame "{\"process\":{\"pid\":$pr_pid}}" "$T_DIR/connect.req"
pr_envd POST /process.Process/Connect "$T_DIR/connect.req" application/connect+json "${pr_hdr[@]}"
pr_unframe "$PR_OUT" > "$T_DIR/connect.ev"
expect_eq "Connect to a finished command: start, end, end-of-stream" \
	"0 {\"event\":{\"start\":{\"pid\":$pr_pid}}}|0 {\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status 0\"}}}|2 {}" \
	"$(paste -sd'|' "$T_DIR/connect.ev")"
pr_envd POST /process.Process/Connect "$T_DIR/connect.req" application/connect+json "${pr_hdr[@]}" \
	-H 'Sandbox-Output-Offset: 1,0'
expect_eq "Connect with Sandbox-Output-Offset: the output from there" "i" \
	"$(pr_unframe "$PR_OUT" | grep '"stdout"' | cut -d' ' -f2- | jq -r '.event.data.stdout' | base64 -d | tr -d '\n')"
pr_envd POST /process.Process/Connect "$T_DIR/connect.req" application/connect+json "${pr_hdr[@]}" \
	-H 'Sandbox-Output-Offset: x'
expect_eq "Connect with a malformed Sandbox-Output-Offset: invalid_argument in the end envelope" \
	"200 invalid_argument" "$PR_STATUS $(pr_unframe "$PR_OUT" | grep '^2 ' | cut -d' ' -f2- | jq -r '.error.code')"

# keepalives at the client's interval while nothing else comes
pr_frame '{"process":{"cmd":"/bin/bash","args":["-l","-c","sleep 3; echo late"]}}' "$T_DIR/slow.req"
pr_envd POST /process.Process/Start "$T_DIR/slow.req" application/connect+json "${pr_hdr[@]}" \
	-H 'Keepalive-Ping-Interval: 1'
pr_unframe "$PR_OUT" > "$T_DIR/slow.ev"
expect_true "Keepalive-Ping-Interval: 1 -> keepalive events while the command is quiet ($(grep -c keepalive "$T_DIR/slow.ev"))" \
	test "$(grep -c '^0 {"event":{"keepalive":{}}}$' "$T_DIR/slow.ev")" -ge 1
expect_eq "... then its output and end" "late|2 {}" \
	"$(grep '"stdout"' "$T_DIR/slow.ev" | cut -d' ' -f2- | jq -r '.event.data.stdout' | base64 -d)|$(tail -1 "$T_DIR/slow.ev")"

# 3. a stream's errors: 200 and the error in the end-of-stream envelope
printf '\x01\x00\x00\x00\x02{}' > "$T_DIR/compressed.req"
pr_envd POST /process.Process/Start "$T_DIR/compressed.req" application/connect+json "${pr_hdr[@]}"
expect_eq "compressed request: 200 + invalid_argument in the end envelope" \
	'200 2 {"error":{"code":"invalid_argument","message":"compressed messages are not accepted"}}' \
	"$PR_STATUS $(pr_unframe "$PR_OUT")"
pr_frame '{"process":{"cmd":"/bin/bash"},"pty":{"size":{"rows":24,"cols":80}}}' "$T_DIR/pty.req"
pr_envd POST /process.Process/Start "$T_DIR/pty.req" application/connect+json "${pr_hdr[@]}"
expect_eq "a pty: invalid_argument naming it" "200 invalid_argument" \
	"$PR_STATUS $(pr_unframe "$PR_OUT" | cut -d' ' -f2- | jq -r '.error.code')"
pr_frame '{"process":{"pid":999999}}' "$T_DIR/nopid.req"
pr_envd POST /process.Process/Connect "$T_DIR/nopid.req" application/connect+json "${pr_hdr[@]}"
expect_eq "Connect to an unknown pid: not_found in the end envelope" \
	'200 2 {"error":{"code":"not_found","message":"process with pid 999999 not found"}}' \
	"$PR_STATUS $(pr_unframe "$PR_OUT")"
pr_envd POST /process.Process/Start "$T_DIR/start.req" application/connect+json -H "E2b-Sandbox-Id: $PR_ID"
expect_eq "Start without the access token: refused in the end envelope, nothing run" "200 yes" \
	"$PR_STATUS $(pr_unframe "$PR_OUT" | grep -q '^2 {"error":{"code":"\(unauthenticated\|not_found\)"' && ! pr_unframe "$PR_OUT" | grep -q '"start"' && echo yes)"

# 4. unary calls: JSON errors with Connect codes; token-only routing
printf '%s' '{"process":{"pid":999999},"signal":"SIGNAL_SIGKILL"}' > "$T_DIR/sig.req"
pr_envd POST /process.Process/SendSignal "$T_DIR/sig.req" application/json "${pr_hdr[@]}"
expect_eq "SendSignal to an unknown pid: 404 not_found" "404 not_found" "$PR_STATUS $(jq -r .code "$PR_OUT")"
printf '%s' "{\"process\":{\"pid\":$pr_pid},\"signal\":\"SIGNAL_NOPE\"}" > "$T_DIR/sig2.req"
pr_envd POST /process.Process/SendSignal "$T_DIR/sig2.req" application/json "${pr_hdr[@]}"
expect_eq "SendSignal with an unknown signal: 400 invalid_argument" "400 invalid_argument" \
	"$PR_STATUS $(jq -r .code "$PR_OUT")"
printf '{}' > "$T_DIR/empty.req"
pr_envd POST /process.Process/Update "$T_DIR/empty.req" application/json "${pr_hdr[@]}"
expect_eq "Update (pty resize): 501 unimplemented" "501 unimplemented" "$PR_STATUS $(jq -r .code "$PR_OUT")"
pr_envd POST /process.Process/List "$T_DIR/empty.req" application/json -H "X-Access-Token: $PR_TOK"
expect_eq "List by the access token alone (Python SDK after connect): 200, a list" "200 array" \
	"$PR_STATUS $(jq -r '.processes | type' "$PR_OUT")"
pr_envd POST /process.Process/Start "$T_DIR/start.req" application/connect+json -H "X-Access-Token: $PR_TOK"
expect_eq "Start by the access token alone: hi" "hi" \
	"$(pr_unframe "$PR_OUT" | grep '"stdout"' | cut -d' ' -f2- | jq -r '.event.data.stdout' | base64 -d | tr -d '\n')"

# another sandbox's token does not open this one
pr_sbx2=$(curl -sS --cacert "$SANDBOX_CACERT" -X POST -H "X-API-KEY: $SANDBOX_TOKEN" \
	-H 'Content-Type: application/json' --data '{"templateID":"base"}' "$E2B_API_URL/v2/sandboxes")
PR_ID2=$(jq -r '.sandboxID // empty' <<< "$pr_sbx2")
PR_TOK2=$(jq -r '.envdAccessToken // empty' <<< "$pr_sbx2")
pr_envd POST /process.Process/List "$T_DIR/empty.req" application/json -H "E2b-Sandbox-Id: $PR_ID" \
	-H "X-Access-Token: $PR_TOK2"
expect_true "another sandbox's token: refused ($PR_STATUS)" test "$PR_STATUS" = 401 -o "$PR_STATUS" = 404
curl -sS --cacert "$SANDBOX_CACERT" -o /dev/null -X DELETE -H "X-API-KEY: $SANDBOX_TOKEN" "$E2B_API_URL/sandboxes/$PR_ID2"
curl -sS --cacert "$SANDBOX_CACERT" -o /dev/null -X DELETE -H "X-API-KEY: $SANDBOX_TOKEN" "$E2B_API_URL/sandboxes/$PR_ID"

# ---- 2. the real SDK
ctx "envd process (e2b SDK)"
e2b_sdk_run "$REPO/tests/clients/e2b-process.mjs" "e2b SDK process"
