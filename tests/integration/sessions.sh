#!/usr/bin/env bash
# End-to-end sessions (issue 9) over HTTPS through nginx, against the stack's real
# runner, bubblewrap and MariaDB: a sandbox an agent lives in.
#
#   1. create -> ready -> close; the session object; nothing left after close
#   2. a command, its output; two concurrent commands (an HTTP server on loopback
#      inside the sandbox and a client of it from the same session); kill by pid
#   3. reattach: output replayed from 0 and from the last offset gives the same bytes
#   4. stdin relay; per-command timeout (124) and output cap (122)
#   5. files: put/get/list/delete; links, fifos and paths outside the root never
#      listed; a planted symlink never followed by PUT, GET or DELETE
#   6. session limits: memory and pids end the session `failed`, naming the limit
#   7. idle expiry and max lifetime
#   8. identity scoping on every endpoint
#   9. isolation between two sessions
#  10. runner restart with a live session; supervisor SIGKILL -> lost
#  11. retention: purge removes ended sessions and their output
#  12. host work bounded: sha256 over 300 sparse 64 MiB files answers within its
#      budget, the cut stated, the session ready and answering, its lease renewed,
#      the host's work recorded
#  13. a stalled supervisor (SIGSTOP): killed with its slot's processes and the slot
#      cleaned before the session is lost; the key's max_sessions holds
#
# Environment, from $SANDBOX_VAR/env: SANDBOX_URL, SANDBOX_CACERT, SANDBOX_TOKEN,
# SANDBOX_CONFIG, SANDBOX_DB_SOCKET. Must run as root (it inspects processes, mounts
# and cgroups, and restarts the stack's runner).

set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env --root "the runner itself needs root" --token
runner_conf
RUN="$RANDOM$RANDOM"

# ---------------------------------------------------------------- helpers

# Scaled (SANDBOX_TIME_SCALE): lib.sh's sready, sawait and sexec deadlines are given
# here as $(tscale N); a command that must not hit its timeout_seconds (10 s by default)
# gets a scaled one. Both leave every request as it is at scale 1.
# tmo N: ',"timeout_seconds":N x scale' when scaled, else nothing (a JSON member)
tmo() { [ "$TSCALE" = 1 ] || printf ',"timeout_seconds":%s' "$(tscale "$1")"; }
# sexec_scaled SID COMMAND SECONDS: sexec, its command's timeout scaled too
sexec_scaled() {
	if [ "$TSCALE" = 1 ]; then
		sexec "$@"
	else
		sexec "$1" "$2" "$3" "$(tscale 10)"
	fi
}

keep_runner
# Sessions this suite opened are closed at the end, whatever happened.
OPEN=()
close_all() {
	local s
	for s in "${OPEN[@]}"; do
		[ -n "$s" ] && as "$SANDBOX_TOKEN" req POST "/v1/sessions/$s/close" '{}' > /dev/null 2>&1
	done
}
at_exit close_all

mkkey A "it-$RUN" "tenant-a" user alice
mkkey B "it-$RUN" "tenant-b" user bob

# ================================================== 1. create -> ready -> close

ctx "create"
# (S1 lives through the whole suite: its idle time and lifetime scaled with it)
as "$A_TOK" screate '{"limits":{"memory_mb":256,"pids":64},"metadata":{"purpose":"it"},"idle_seconds":'"$(tscale 300 3600)"',"max_seconds":'"$(tscale 600 86400)"'}'
S1=$SID
OPEN+=("$S1")
expect_json .status starting
expect_header Location "^/v1/sessions/$S1\$"
expect_json .identity.tenant_id tenant-a
expect_json .limits.memory_mb 256
expect_json .metadata.purpose it
t0=$(now_ms)
if as "$A_TOK" sready "$S1" "$(tscale 30)"; then
	note "create -> ready in $(($(now_ms) - t0)) ms"
	expect_json .status ready
	expect_true "ready_at is set" jq -e '.ready_at | type == "string"' "$BODY"
	expect_true "runtime_id names this host's slot" jq -e '.runtime_id | test("/")' "$BODY"
	expect_true "expires_at is set" jq -e '.expires_at | type == "string"' "$BODY"
else
	_notok "create: session becomes ready" ready "$(sstatus "$S1") $(cat "$BODY")" 0
fi
S1_SLOT=$(sslot "$S1")
S1_UID=$((UID_BASE + ${S1_SLOT:-0}))
expect_true "the session runs as its own uid ($S1_UID), never root" test "$(uid_procs "$S1_UID")" -ge 1

ctx "metrics"
as "" req GET /metrics
expect_status 200
HOSTLBL=$(hostname | tr -c 'A-Za-z0-9._\n-' '_')
expect_true "this runner host's job slots ($(conf_get runner_slots x))" \
	grep -qx "sandbox_runner_slots{runner_host=\"$HOSTLBL\"} $(conf_get runner_slots x)" "$BODY"
expect_true "this runner host's session places ($(conf_get runner_max_sessions 32))" \
	grep -qx "sandbox_runner_max_sessions{runner_host=\"$HOSTLBL\"} $(conf_get runner_max_sessions 32)" "$BODY"
expect_true "ready sessions as the database counts them" \
	grep -qx "sandbox_sessions{status=\"ready\"} $(sql "SELECT COUNT(*) FROM sessions WHERE status = 'ready'")" "$BODY"
expect_true "the API's held long-polls" grep -Eq '^sandbox_api_waiting_requests [0-9]+$' "$BODY"

# ================================================== 2. commands

ctx "command"
as "$A_TOK" sexec_scaled "$S1" 'echo hi; echo err >&2; exit 3' "$(tscale 30)"
expect_json .status failed
expect_json .exit_code 3
expect_eq "stdout replayed" hi "$OUT"
expect_eq "stderr separate" err "$(as "$A_TOK" sall "$S1" "$CID" stderr)"
as "$A_TOK" sexec_scaled "$S1" 'id -u; pwd; echo $HOME' "$(tscale 30)"
expect_json .status succeeded
expect_json .exit_code 0
expect_true "runs in /workspace as a non-root uid ($OUT)" grep -qx /workspace <<< "$(sed -n 2p <<< "$OUT")"
expect_true "uid inside is not 0 ($OUT)" test "$(head -n 1 <<< "$OUT")" != 0
as "$A_TOK" srun "$S1" '{"argv":["/bin/echo","a b","c"]}'
as "$A_TOK" sawait "$S1" "$CID" "$(tscale 60)"
expect_eq "argv without a shell" "a b c" "$(as "$A_TOK" sall "$S1" "$CID" stdout)"
as "$A_TOK" srun "$S1" '{"command":"printf %s \"$GREETING\"","env":{"GREETING":"hello env"}}'
as "$A_TOK" sawait "$S1" "$CID" "$(tscale 60)"
expect_eq "command env" "hello env" "$(as "$A_TOK" sall "$S1" "$CID" stdout)"
as "$A_TOK" req GET "/v1/sessions/$S1/commands/$CID"
expect_true "env values never come back" fails grep -q "hello env" "$BODY"

ctx "concurrent commands: a server and its client"
as "$A_TOK" req PUT "/v1/sessions/$S1/files/www/hello.txt" "served-$RUN" -H 'Content-Type: application/octet-stream'
expect_true "PUT a file: 200 or 201 ($STATUS)" test "$STATUS" = 201 -o "$STATUS" = 200
as "$A_TOK" srun "$S1" '{"argv":["python3","-m","http.server","8765","--bind","127.0.0.1","--directory","www"],"timeout_seconds":0}'
SERVER=$CID
SERVER_PID=$CPID
expect_true "the server has a positive pid ($SERVER_PID)" test "${SERVER_PID:-0}" -ge 1
as "$A_TOK" sexec_scaled "$S1" 'for i in $(seq 100); do python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen(\"http://127.0.0.1:8765/hello.txt\").read().decode())" 2>/dev/null && exit 0; sleep 0.1; done; exit 1' "$(tscale 60)"
expect_json .status succeeded
expect_eq "the client got the server's file" "served-$RUN" "$OUT"
expect_eq "the server is still running" running "$(cstatus "$SERVER")"
as "$A_TOK" req GET "/v1/sessions/$S1/commands?status=running"
expect_status 200
expect_true "list ?status=running has the server" jq -e --arg c "$SERVER" '[.commands[].id] | index($c) != null' "$BODY"
as "$A_TOK" req GET "/v1/sessions/$S1/commands?pid=$SERVER_PID"
expect_json '.commands[0].id' "$SERVER"
ctx "kill by pid"
as "$A_TOK" req POST "/v1/sessions/$S1/commands/$SERVER/kill" '{"signal":"TERM"}'
expect_true "kill accepted ($STATUS)" test "$STATUS" = 202 -o "$STATUS" = 200
as "$A_TOK" sawait "$S1" "$SERVER" "$(tscale 15)"
expect_json .status killed
expect_json .exit_code 143
expect_json .signal 15
as "$A_TOK" req POST "/v1/sessions/$S1/commands/$SERVER/kill" '{"signal":"KILL"}'
expect_error 409 not_running
as "$A_TOK" req POST "/v1/sessions/$S1/commands/$SERVER/kill" '{"signal":"NOPE"}'
expect_error 400 invalid_request signal

# ================================================== 3. reattach

ctx "reattach"
# (its sleep scaled: it must still run when the slower reads below have seen three lines)
as "$A_TOK" srun "$S1" '{"command":"for i in $(seq 1 20); do echo line-$i; sleep '"$(tscale 0.1 1)"'; done"'"$(tmo 10)"'}'
TAIL=$CID
FIRST_PART=$T_DIR/first
: > "$FIRST_PART"
off=0
end=$((SECONDS + $(tscale 20)))
# bytes only (no command substitution: it would eat the newlines)
while [ "$(wc -l < "$FIRST_PART")" -lt 3 ] && [ "$SECONDS" -lt "$end" ]; do
	as "$A_TOK" sout "$S1" "$TAIL" stdout "$off" "wait=5"
	cat "$OUTF" >> "$FIRST_PART"
	off=$(jq -r .next_offset "$BODY")
done
expect_true "three lines read while it runs ($(tr '\n' ' ' < "$FIRST_PART"))" grep -qx line-3 "$FIRST_PART"
expect_eq "it was still running then" running "$(cstatus "$TAIL")"
expect_eq "what was read ends at the offset the API gave" "$off" "$(wc -c < "$FIRST_PART")"
# the client drops here; a new one reconnects from 0 and from where it was
as "$A_TOK" sawait "$S1" "$TAIL" "$(tscale 30)"
expect_json .status succeeded
EXPECTED=$T_DIR/expected
for i in $(seq 1 20); do echo "line-$i"; done > "$EXPECTED"
as "$A_TOK" sall "$S1" "$TAIL" stdout > "$T_DIR/replay0"
expect_true "replay from 0 gives every byte" cmp -s "$EXPECTED" "$T_DIR/replay0"
as "$A_TOK" sout "$S1" "$TAIL" stdout "$off"
cat "$FIRST_PART" "$OUTF" > "$T_DIR/joined"
expect_true "the bytes read before + replay from the last offset = the whole output" cmp -s "$EXPECTED" "$T_DIR/joined"
expect_json .eof true
expect_json .total_bytes "$(wc -c < "$EXPECTED")"
as "$A_TOK" sout "$S1" "$TAIL" stdout 7 "limit=5"
expect_eq "a range in the middle" "$(tail -c +8 "$EXPECTED" | head -c 5)" "$(cat "$OUTF")"
expect_json .next_offset 12
as "$A_TOK" req GET "/v1/sessions/$S1/commands/$TAIL/output?stream=stdout&offset=0"
expect_status 200
expect_true "text mode: data is the text" jq -e '.data | startswith("line-1\n")' "$BODY"

# ================================================== 4. stdin, timeout, output cap

ctx "stdin"
as "$A_TOK" srun "$S1" '{"command":"cat; echo done","stdin_open":true'"$(tmo 10)"'}'
CAT=$CID
as "$A_TOK" req POST "/v1/sessions/$S1/commands/$CAT/stdin" '{"data":"abc\n"}'
expect_status 200
as "$A_TOK" req POST "/v1/sessions/$S1/commands/$CAT/stdin" "{\"data_base64\":\"$(printf 'x\0y' | base64)\",\"close\":true}"
expect_status 200
as "$A_TOK" req GET "/v1/sessions/$S1/commands/$CAT"
expect_json .stdin_open false "stdin_open is false once a write closed it"
as "$A_TOK" sawait "$S1" "$CAT" "$(tscale 15)"
expect_json .status succeeded
as "$A_TOK" sall "$S1" "$CAT" stdout > "$T_DIR/cat.out"
expect_eq "stdin relayed byte for byte" "$(printf 'abc\nx\0ydone\n' | od -An -tx1 | tr -d ' \n')" "$(od -An -tx1 < "$T_DIR/cat.out" | tr -d ' \n')"
as "$A_TOK" req POST "/v1/sessions/$S1/commands/$CAT/stdin" '{"data":"late"}'
expect_error 409 not_running
as "$A_TOK" srun "$S1" '{"command":"cat","stdin":"given up front"}'
as "$A_TOK" sawait "$S1" "$CID" "$(tscale 60)"
expect_eq "initial stdin" "given up front" "$(as "$A_TOK" sall "$S1" "$CID" stdout)"

# Issue 25 item 3: stdin a client was told was taken always reaches the command. A
# command that does not read holds at most the agent's window (4 MiB) of it; a write
# past that is refused (429 stdin_backlog_full, Retry-After, nothing taken) and taken
# once the command has read some. Before, every write was answered 200 and past 4 MiB
# the agent closed the command's stdin and dropped the rest.
ctx "stdin: back-pressure, nothing acknowledged is dropped"
head -c 1048576 /dev/zero | tr '\0' a | jq -Rs '{data: .}' > "$T_DIR/mb.json"
as "$A_TOK" srun "$S1" '{"command":"sleep '"$(tscale 8)"'; wc -c","stdin_open":true,"timeout_seconds":'"$(tscale 120)"'}'
WC=$CID
as "$A_TOK" req GET "/v1/sessions/$S1/commands/$WC?wait=0"
taken=0 refused=0 retry=0
for i in 1 2 3 4 5 6; do
	as "$A_TOK" req POST "/v1/sessions/$S1/commands/$WC/stdin" "@$T_DIR/mb.json"
	case "$STATUS $(jq -r '.error.code // empty' "$BODY" 2> /dev/null)" in
	"200 ") taken=$((taken + 1)) ;;
	"429 stdin_backlog_full")
		refused=$((refused + 1))
		grep -qi '^Retry-After: 1' "$HDRS" && retry=$((retry + 1))
		;;
	*) note "write $i: $STATUS $(head -c 200 "$BODY")" ;;
	esac
done
expect_eq "while the command sleeps: 4 MiB taken, then 429 stdin_backlog_full with Retry-After: 1" \
	"4 2 2" "$taken $refused $retry"
expect_eq "the refused writes took nothing: stdin still open" true \
	"$(as "$A_TOK" req GET "/v1/sessions/$S1/commands/$WC" > /dev/null; jq -r .stdin_open "$BODY")"
# once it reads, the refused megabytes are taken (the client retries, as told)
for i in 1 2; do
	end=$((SECONDS + $(tscale 60)))
	while :; do
		as "$A_TOK" req POST "/v1/sessions/$S1/commands/$WC/stdin" "@$T_DIR/mb.json"
		[ "$STATUS" = 200 ] && { taken=$((taken + 1)); break; }
		[ "$STATUS" = 429 ] && [ "$SECONDS" -lt "$end" ] || break
		sleep 0.5
	done
done
as "$A_TOK" req POST "/v1/sessions/$S1/commands/$WC/stdin" '{"close":true}'
expect_status 200 "close"
expect_eq "all 6 MiB taken in the end" 6 "$taken"
as "$A_TOK" sawait "$S1" "$WC" "$(tscale 120)"
expect_json .status succeeded
expect_eq "the command read every byte it was acknowledged" "$((taken * 1048576))" \
	"$(as "$A_TOK" sall "$S1" "$WC" stdout | tr -d ' \n')"

# A command that closes its own stdin: stdin_open turns false (the truth), a write
# after that is refused, and the bytes that could not reach it are named.
ctx "stdin: closed by the command"
as "$A_TOK" srun "$S1" '{"command":"exec 0<&-; sleep '"$(tscale 6)"'; echo bye","stdin_open":true}'
CLO=$CID
sleep "$(tscale 1)"
as "$A_TOK" req POST "/v1/sessions/$S1/commands/$CLO/stdin" '{"data":"unread"}'
expect_status 200 "the write before the supervisor knows"
stdin_shut() { as "$A_TOK" req GET "/v1/sessions/$S1/commands/$CLO" > /dev/null; [ "$(jq -r .stdin_open "$BODY")" = false ]; }
expect_true "stdin_open turns false" poll "$(tscale 5)" stdin_shut
as "$A_TOK" req POST "/v1/sessions/$S1/commands/$CLO/stdin" '{"data":"more"}'
expect_error 409 stdin_closed
as "$A_TOK" sawait "$S1" "$CLO" "$(tscale 30)"
expect_json .status succeeded
expect_json '.diagnostics | map(select(test("stdin: 6 bytes were never written"))) | length' 1

ctx "timeout and output cap"
as "$A_TOK" srun "$S1" '{"command":"echo start; sleep 30","timeout_seconds":1}'
as "$A_TOK" sawait "$S1" "$CID" "$(tscale 15)"
expect_json .status timed_out
expect_json .exit_code 124
expect_eq "output before the timeout kept" start "$(as "$A_TOK" sall "$S1" "$CID" stdout)"
as "$A_TOK" srun "$S1" '{"command":"head -c 200000 /dev/zero; sleep 10","output_bytes":1000}'
as "$A_TOK" sawait "$S1" "$CID" "$(tscale 15)"
expect_json .status output_limit
expect_json .exit_code 122
expect_json .stdout_bytes 1000
expect_json .stdout_truncated true
expect_eq "exactly output_bytes stored" 1000 "$(as "$A_TOK" sall "$S1" "$CID" stdout | wc -c)"
as "$A_TOK" req GET "/v1/sessions/$S1"
expect_json .status ready

# ================================================== 5. files

ctx "files"
PAYLOAD=$T_DIR/payload
head -c 300000 /dev/urandom > "$PAYLOAD"
as "$A_TOK" req PUT "/v1/sessions/$S1/files/data/blob.bin" "@$PAYLOAD" -H 'Content-Type: application/octet-stream'
expect_true "PUT binary ($STATUS)" test "$STATUS" = 201 -o "$STATUS" = 200
as "$A_TOK" req GET "/v1/sessions/$S1/files/data/blob.bin"
expect_status 200
expect_true "GET returns the bytes put" cmp -s "$PAYLOAD" "$BODY"
as "$A_TOK" sexec_scaled "$S1" 'sha256sum data/blob.bin | cut -d" " -f1' "$(tscale 30)"
expect_eq "the command sees the same bytes" "$(sha256sum "$PAYLOAD" | cut -d' ' -f1)" "$OUT"
HOST_PASSWD_SUM=$(sha256sum /etc/passwd | cut -d' ' -f1)
as "$A_TOK" sexec_scaled "$S1" 'mkdir -p tree/sub && echo one > tree/a.txt && echo two > tree/sub/b.txt && ln -s /etc/passwd tree/link && ln -s sub tree/dirlink && mkfifo tree/fifo && ln -s /etc tree/etc && echo ok' "$(tscale 30)"
expect_eq "planted links and a fifo" ok "$OUT"
as "$A_TOK" req GET "/v1/sessions/$S1/files?root=tree&recursive=true"
expect_status 200
expect_eq "recursive list: regular files only, relative to root, sorted" '["a.txt","sub/b.txt"]' "$(jq -c '[.files[].path]' "$BODY")"
expect_json '.files[0].size' 4
as "$A_TOK" req GET "/v1/sessions/$S1/files?root=tree&recursive=false"
expect_eq "non-recursive list" '["a.txt"]' "$(jq -c '[.files[].path]' "$BODY")"
as "$A_TOK" req GET "/v1/sessions/$S1/files?root=tree&recursive=true&sha256=true"
expect_json '.files[0].sha256' "$(printf 'one\n' | sha256sum | cut -d' ' -f1)"
as "$A_TOK" req GET "/v1/sessions/$S1/files?root=../"
expect_error 400 invalid_request root
as "$A_TOK" req GET "/v1/sessions/$S1/files?root=tree/link"
expect_true "a symlink as root is refused ($STATUS)" test "$STATUS" = 409 -o "$STATUS" = 404
as "$A_TOK" req GET "/v1/sessions/$S1/files/tree/link"
expect_true "GET through a planted symlink refused ($STATUS)" test "$STATUS" = 409 -o "$STATUS" = 404
expect_true "nothing of /etc/passwd came back" fails grep -q "root:" "$BODY"
as "$A_TOK" req GET "/v1/sessions/$S1/files/tree/etc/passwd"
expect_true "GET through a symlinked directory refused ($STATUS)" test "$STATUS" = 409 -o "$STATUS" = 404
as "$A_TOK" req PUT "/v1/sessions/$S1/files/tree/link" "pwned" -H 'Content-Type: application/octet-stream'
expect_error 409 symlink
as "$A_TOK" req PUT "/v1/sessions/$S1/files/tree/dirlink/x.txt" "x" -H 'Content-Type: application/octet-stream'
expect_error 409 symlink
expect_eq "the host's /etc/passwd unchanged" "$HOST_PASSWD_SUM" "$(sha256sum /etc/passwd | cut -d' ' -f1)"
as "$A_TOK" req DELETE "/v1/sessions/$S1/files/tree/link"
expect_error 409 symlink
as "$A_TOK" sexec_scaled "$S1" 'test -L tree/link && echo still-a-link' "$(tscale 30)"
expect_eq "the link is still there" still-a-link "$OUT"
t0=$(now_ms)
as "$A_TOK" req GET "/v1/sessions/$S1/files/tree/fifo"
expect_error 409 not_regular_file
expect_true "GET of a fifo does not block ($(($(now_ms) - t0)) ms)" test $(($(now_ms) - t0)) -lt "$(tscale 5000)"
as "$A_TOK" req GET "/v1/sessions/$S1/files/tree/nope.txt"
expect_error 404 not_found
as "$A_TOK" req DELETE "/v1/sessions/$S1/files/tree/a.txt"
expect_status 204
as "$A_TOK" sexec_scaled "$S1" 'test -e tree/a.txt && echo there || echo gone' "$(tscale 30)"
expect_eq "DELETE removed it" gone "$OUT"
as "$A_TOK" req PUT "/v1/sessions/$S1/files/run.sh?mode=0755" $'#!/bin/sh\necho script-ran' -H 'Content-Type: application/octet-stream'
as "$A_TOK" sexec_scaled "$S1" './run.sh; stat -c %a run.sh' "$(tscale 30)"
expect_eq "mode from the query" $'script-ran\n755' "$OUT"

# ================================================== 8. identity scoping

ctx "identity"
as "$B_TOK" req GET "/v1/sessions/$S1"
expect_error 404 not_found
NOTFOUND=$(jq -cS . "$BODY")
as "$B_TOK" req GET "/v1/sessions/00000000-0000-4000-8000-000000000000"
expect_eq "another identity's session reads like an unknown one" "$NOTFOUND" "$(jq -cS . "$BODY")"
for ep in "GET /v1/sessions/$S1?wait=1" "POST /v1/sessions/$S1/commands" "GET /v1/sessions/$S1/commands" \
	"GET /v1/sessions/$S1/commands/$TAIL" "GET /v1/sessions/$S1/commands/$TAIL/output?stream=stdout" \
	"POST /v1/sessions/$S1/commands/$TAIL/kill" "POST /v1/sessions/$S1/commands/$TAIL/stdin" \
	"GET /v1/sessions/$S1/files" "GET /v1/sessions/$S1/files/data/blob.bin" \
	"PUT /v1/sessions/$S1/files/evil.txt" "DELETE /v1/sessions/$S1/files/data/blob.bin" \
	"POST /v1/sessions/$S1/close"; do
	m=${ep%% *}
	p=${ep#* }
	# a valid body for each (an invalid one is refused before any lookup, for every id)
	case $p in
		*/kill) body='{"signal":"KILL"}' ;;
		*/stdin) body='{"data":"x"}' ;;
		*/close) body='{}' ;;
		*) body='{"command":"true"}' ;;
	esac
	case $m in
		POST) as "$B_TOK" req POST "$p" "$body" ;;
		PUT) as "$B_TOK" req PUT "$p" 'x' -H 'Content-Type: application/octet-stream' ;;
		*) as "$B_TOK" req "$m" "$p" ;;
	esac
	expect_eq "$m $p with another identity's key: 404" 404 "$STATUS"
done
as "$B_TOK" req GET /v1/sessions
expect_true "another identity's list does not show it" jq -e --arg s "$S1" '[.sessions[].id] | index($s) == null' "$BODY"
as "$A_TOK" req GET /v1/sessions
expect_true "the owner's list shows it" jq -e --arg s "$S1" '[.sessions[].id] | index($s) != null' "$BODY"
as "$A_TOK" req GET "/v1/sessions/$S1/files/data/blob.bin"
expect_true "nothing was deleted by the other key" cmp -s "$PAYLOAD" "$BODY"
expect_eq "nothing was written by the other key" 0 "$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$S1' AND args_json LIKE '%evil%'")"

# ================================================== 6. session limits

ctx "memory limit"
as "$A_TOK" screate '{"limits":{"memory_mb":64}}'
S3=$SID
OPEN+=("$S3")
as "$A_TOK" sready "$S3" "$(tscale 30)"
as "$A_TOK" srun "$S3" '{"command":"python3 -c \"b = bytearray(512 * 1024 * 1024); print(len(b))\""'"$(tmo 10)"'}'
poll 20 _sstatus_ended "$S3"
as "$A_TOK" req GET "/v1/sessions/$S3"
expect_json .status failed
expect_true "end_reason names the memory limit ($(jq -r .end_reason "$BODY"))" jq -e '.end_reason | test("memory")' "$BODY"
expect_true "its command ended" test -n "$(cstatus "$CID" | grep -E "$CMD_TERMINAL_RE")"

ctx "pids limit"
as "$A_TOK" screate '{"limits":{"pids":16}}'
S4=$SID
OPEN+=("$S4")
as "$A_TOK" sready "$S4" "$(tscale 30)"
as "$A_TOK" srun "$S4" '{"command":"for i in $(seq 64); do sleep '"$(tscale 20)"' & done; wait"'"$(tmo 10)"'}'
poll 20 _sstatus_ended "$S4"
as "$A_TOK" req GET "/v1/sessions/$S4"
expect_json .status failed
expect_true "end_reason names the pids limit ($(jq -r .end_reason "$BODY"))" jq -e '.end_reason | test("pids")' "$BODY"

# ================================================== 7. idle expiry, max lifetime

ctx "idle expiry"
as "$A_TOK" screate '{"idle_seconds":2}'
S5=$SID
OPEN+=("$S5")
as "$A_TOK" sready "$S5" "$(tscale 30)"
# watched through SQL only: an API call is activity
expect_true "idle for 2 s: expired within 10 s" poll 10 _sstatus_is "$S5" expired
expect_true "end_reason says idle" grep -q idle <<< "$(sql "SELECT end_reason FROM sessions WHERE id = '$S5'")"

ctx "max lifetime"
# (the lifetime counts from the create: scaled, so that a slower start is ready before
# it, and the command and the idle time outlive it; twice that under emulation: with
# other guests beside it, 60 s went by before the guest had the session ready and its
# command sent)
LIFE=3
[ "$TSCALE" != 1 ] && LIFE=$(tscale 6)
as "$A_TOK" screate '{"max_seconds":'"$LIFE"',"idle_seconds":'"$(tscale 60 3600)"'}'
S6=$SID
OPEN+=("$S6")
as "$A_TOK" sready "$S6" "$(tscale 30)"
as "$A_TOK" srun "$S6" '{"command":"sleep '"$(tscale 60)"'","timeout_seconds":0}'
LONG=$CID
expect_true "max_seconds $LIFE: expired within 12 s" poll 12 _sstatus_is "$S6" expired
expect_true "end_reason says lifetime" grep -qi lifetime <<< "$(sql "SELECT end_reason FROM sessions WHERE id = '$S6'")"
expect_true "its running command was cancelled" poll 5 _cstatus_is "$LONG" cancelled

# ================================================== 10. runner restart, lost

ctx "runner restart"
RPID=$(runner_pid)
if bash "$STACK" stop-runner > /dev/null 2>&1; then RUNNER_STOPPED=1; fi
expect_true "the dispatcher stopped" fails runner_pid
as "$A_TOK" sexec_scaled "$S1" 'echo alive-without-dispatcher' "$(tscale 30)"
expect_eq "a live session keeps working while the dispatcher is down" alive-without-dispatcher "$OUT"
if bash "$STACK" start-runner > /dev/null 2>&1; then RUNNER_STOPPED=0; fi
expect_true "a new dispatcher runs" test -n "$(runner_pid)" -a "$(runner_pid)" != "${RPID:-x}"
as "$A_TOK" sexec_scaled "$S1" 'cat data/blob.bin | wc -c' "$(tscale 30)"
expect_eq "after the restart: same session, same workspace" 300000 "$OUT"

ctx "lost"
if bash "$STACK" stop-runner > /dev/null 2>&1; then RUNNER_STOPPED=1; fi
own_runner lease "runner_lease_seconds = 5"
LEASE_RUNNER=$OWN_PID
as "$A_TOK" screate '{}'
S7=$SID
OPEN+=("$S7")
if as "$A_TOK" sready "$S7" "$(tscale 30)"; then
	as "$A_TOK" srun "$S7" '{"command":"sleep 120","timeout_seconds":0}'
	LOSTCMD=$CID
	poll 5 _cstatus_is "$LOSTCMD" running
	SUP=$(sup_pid "$S7")
	expect_true "one supervisor for the session" test -n "$SUP"
	S7_UID=$((UID_BASE + $(sslot "$S7")))
	[ -n "$SUP" ] && kill -9 "$SUP"
	expect_true "no process of its uid left (the sandbox dies with its supervisor)" poll 10 _uid_idle "$S7_UID"
	expect_true "lost within lease + 10 s" poll 20 _sstatus_is "$S7" lost
	as "$A_TOK" req GET "/v1/sessions/$S7"
	expect_json .status lost
	expect_json .failure.stage execution
	expect_json .failure.cleanup_status unknown
	expect_true "its command is lost too" poll 5 _cstatus_is "$LOSTCMD" lost
else
	_notok "lost: session ready under the lease runner" ready "$(sstatus "$S7")" 0
	sed 's/^/#   /' "$T_DIR/lease-runner.log" | tail -n 8
fi
kill -TERM "$LEASE_RUNNER" 2> /dev/null
poll 10 none_alive "$LEASE_RUNNER"
if bash "$STACK" start-runner > /dev/null 2>&1; then RUNNER_STOPPED=0; fi

ctx "host reboot"
# What a reboot leaves: a session row `ready` on this host, no supervisor, no sandbox.
# The next dispatcher start ends it at once (lost), not a lease later, and removes
# its slot's leftovers.
as "$A_TOK" screate '{}'
S8=$SID
OPEN+=("$S8")
if as "$A_TOK" sready "$S8" "$(tscale 30)"; then
	S8_SLOT=$(sslot "$S8")
	if bash "$STACK" stop-runner > /dev/null 2>&1; then RUNNER_STOPPED=1; fi
	SUP=$(sup_pid "$S8")
	[ -n "$SUP" ] && kill -9 "$SUP"
	expect_true "its sandbox died with its supervisor" poll 10 _uid_idle $((UID_BASE + ${S8_SLOT:-0}))
	expect_eq "still ready in the database (nobody noticed yet)" ready "$(sstatus "$S8")"
	# poll_unscaled SECONDS COMMAND...: poll with SECONDS as given (already scaled here)
	poll_unscaled() { local TSCALE=1; poll "$@"; }
	# Scaled, the window is the scaled 10 s but never past what is left of the lease
	# (less a second): a dispatcher that did not end it at start would still have it
	# end by the lease inside a longer window.
	win=10
	if [ "$TSCALE" != 1 ]; then
		win=$(tscale 10)
		left=$(sql "SELECT GREATEST(0, FLOOR(TIMESTAMPDIFF(MICROSECOND, NOW(3), lease_expires_at) / 1000000) - 1)
			FROM sessions WHERE id = '$S8'")
		[[ $left =~ ^[0-9]+$ ]] && [ "$left" -lt "$win" ] && win=$left
		note "window: $win s (the lease has $left s left)"
	fi
	t0=$(now_ms)
	if bash "$STACK" start-runner > /dev/null 2>&1; then RUNNER_STOPPED=0; fi
	expect_true "the new dispatcher ends it as lost well before the 30 s lease" poll_unscaled "$win" _sstatus_is "$S8" lost
	note "lost $(($(now_ms) - t0)) ms after the dispatcher started"
	expect_true "its workspace is removed" poll 5 test ! -e "$STATE_DIR/work/slot-${S8_SLOT:-x}"
else
	_notok "host reboot: session ready" ready "$(sstatus "$S8")" 0
fi

# ================================================== 12. host work bounded (issue 25)

ctx "host budget"
# A few hundred sparse 64 MiB files cost no disk and would cost the session's
# supervisor (root, outside the session's cgroup) minutes of hashing: the listing
# answers within its budget (session_host_bytes, session_host_ms) with the cut
# stated, the session keeps answering a command meanwhile, its lease is renewed, and
# the host's work is recorded on the session (host_read_bytes, host_cpu_ms).
mkkey C "it-$RUN" "tenant-c" user carol --max-sessions 1
as "$C_TOK" screate '{}'
S9=$SID
OPEN+=("$S9")
HOST_BYTES=$(conf_get session_host_bytes 268435456)
if as "$C_TOK" sready "$S9" "$(tscale 30)"; then
	as "$C_TOK" sexec_scaled "$S9" 'mkdir sp && for i in $(seq 100 399); do truncate -s 64M sp/f$i || exit 1; done; ls sp | wc -l' "$(tscale 30)"
	expect_eq "300 sparse 64 MiB files made inside the session" 300 "$OUT"
	t0=$(now_ms)
	curl -s --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $C_TOK" -o "$T_DIR/hlist.json" \
		-w '%{http_code}' "$SANDBOX_URL/v1/sessions/$S9/files?root=sp&sha256=true" > "$T_DIR/hlist.status" &
	LISTER=$!
	sleep 0.5
	as "$C_TOK" sexec "$S9" 'echo during' "$(tscale 8)"
	expect_eq "a command runs while the listing is served (within 8 s)" during "$OUT"
	note "the command answered $(($(now_ms) - t0)) ms after the listing was sent"
	wait "$LISTER"
	dt=$(($(now_ms) - t0))
	note "the listing answered $(cat "$T_DIR/hlist.status") in $dt ms"
	expect_eq "the listing answers 200" 200 "$(cat "$T_DIR/hlist.status")"
	expect_true "... within 8 s (took $dt ms)" test "$dt" -le "$(tscale 8000)"
	expect_eq "... every entry listed" 300 "$(jq '.files | length' "$T_DIR/hlist.json" 2> /dev/null)"
	nh=$(jq '[.files[] | select(.sha256 != null)] | length' "$T_DIR/hlist.json" 2> /dev/null)
	expect_true "... digests only within session_host_bytes ($nh hashed)" \
		test "${nh:-999}" -ge 1 -a "${nh:-999}" -le $((HOST_BYTES / 67108864))
	res=$(sql "SELECT result_json FROM session_requests WHERE session_id = '$S9' AND kind = 'file_list' ORDER BY id DESC LIMIT 1")
	cut=$(jq -r .cut <<< "$res" 2> /dev/null)
	expect_true "the supervisor's answer names the limit that cut it (${cut:-none})" \
		grep -Eqx 'session_host_(bytes|ms)' <<< "$cut"
	expect_eq "... and gives the unhashed entries sha256 null" $((300 - ${nh:-0})) \
		"$(jq '[.files[] | select(.sha256 == null)] | length' <<< "$res" 2> /dev/null)"
	expect_eq "the client is told too: the same cut, sha256 null on the unhashed entries" \
		"$cut $((300 - ${nh:-0}))" \
		"$(jq -r '"\(.cut) \([.files[] | select(has("sha256") and .sha256 == null)] | length)"' "$T_DIR/hlist.json" 2> /dev/null)"
	left=$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), lease_expires_at) DIV 1000000 FROM sessions WHERE id = '$S9'")
	lease=$(conf_get runner_lease_seconds 30)
	expect_true "the lease was renewed meanwhile (${left:-?} s of $lease left)" test "${left:--1}" -ge $((lease - 8))
	expect_eq "the session is still ready" ready "$(sstatus "$S9")"
	as "$C_TOK" sexec_scaled "$S9" 'echo after' "$(tscale 10)"
	expect_eq "... and answers a command after" after "$OUT"
	_host_work() { [ "$(sql "SELECT host_read_bytes > 0 AND host_cpu_ms >= 0 FROM sessions WHERE id = '$1'")" = 1 ]; }
	expect_true "the host's work is recorded on the session" poll 6 _host_work "$S9"
	hw=$(sql "SELECT host_read_bytes, host_cpu_ms FROM sessions WHERE id = '$S9'" | tr '\t' ' ')
	note "host work: ${hw:-?} (bytes, cpu ms)"
	expect_true "... at most session_host_bytes for the one listing (${hw%% *})" test "${hw%% *}" -le "$HOST_BYTES"
	as "$C_TOK" req GET "/v1/sessions/$S9"
	expect_eq "... and shown on the session object (host_work)" "$hw" \
		"$(jq -r '"\(.host_work.read_bytes) \(.host_work.cpu_ms)"' "$BODY")"
else
	_notok "host budget: session ready" ready "$(sstatus "$S9")" 0
fi

# ================================================== 13. a stalled supervisor

ctx "stalled supervisor"
# A supervisor alive but stalled (SIGSTOP) stops renewing its lease. Before the
# session is marked lost, every process of its slot is killed and the slot cleaned,
# so the key (max_sessions 1) never gets a second session while the first sandbox
# runs.
if [ "$(sstatus "$S9")" = ready ]; then
	S9_SLOT=$(sslot "$S9")
	S9_UID=$((UID_BASE + ${S9_SLOT:-0}))
	as "$C_TOK" srun "$S9" '{"command":"sleep 600","timeout_seconds":0}'
	poll 5 _cstatus_is "$CID" running
	as "$C_TOK" req POST /v1/sessions '{}'
	expect_status 429
	SUP=$(sup_pid "$S9")
	expect_true "its supervisor runs" test -n "$SUP"
	[ -n "$SUP" ] && kill -STOP "$SUP"
	# the lease lapses (the stack's is 30 s: expired by SQL here)
	sql "UPDATE sessions SET lease_expires_at = NOW(3) - INTERVAL 1 SECOND WHERE id = '$S9'"
	if poll 15 _sstatus_is "$S9" lost; then
		# at the moment it is lost, nothing of it may run any more
		# (zombies, dead and waiting for the host's init to reap them, do not count)
		np=$(ps -eo uid=,stat= | awk -v u="$S9_UID" '$1 == u && $2 !~ /^Z/' | wc -l)
		expect_eq "when it is lost, no process of its slot uid $S9_UID runs" 0 "$np"
		expect_true "... its stalled supervisor is gone" fails alive "${SUP:-0}"
		expect_true "... its workspace is removed" test ! -e "$STATE_DIR/work/slot-${S9_SLOT:-x}"
		expect_true "the dispatcher says it killed the supervisor" \
			grep -q "lease_expired_supervisor_killed.*$S9" "$SANDBOX_VAR/log/runner.log"
		as "$C_TOK" req POST /v1/sessions '{}'
		expect_status 201
		S10=$(jq -r .id "$BODY")
		as "$C_TOK" req POST "/v1/sessions/$S10/close" '{}'
		expect_true "... closed again" poll 15 _sstatus_ended "$S10"
	else
		_notok "stalled: the session ends lost" lost "$(sstatus "$S9")" 0
	fi
	[ -n "$SUP" ] && alive "$SUP" && kill -CONT "$SUP"
else
	skip "stalled supervisor" "S9 is not ready"
fi

# ================================================== 1c. close S1, retention

ctx "close and purge"
as "$A_TOK" req POST "/v1/sessions/$S1/close" '{}'
poll 15 _sstatus_is "$S1" closed
expect_true "no process of $S1_UID left" poll 5 _uid_idle "$S1_UID"
expect_true "no workspace left" test ! -e "$STATE_DIR/work/slot-${S1_SLOT:-x}"
ended_cmds=$(sql "SELECT COUNT(*) FROM session_commands WHERE session_id = '$S1'")
expect_true "S1 had commands ($ended_cmds)" test "$ended_cmds" -gt 5
expect_eq "ended commands keep no env or stdin" 0 "$(sql "SELECT COUNT(*) FROM session_commands WHERE session_id = '$S1' AND (env_json NOT IN ('', '{}') OR LENGTH(stdin) > 0)")"
out=$(ctl purge --older-than 0s)
expect_true "purge reports sessions ($out)" grep -Eq '^purged [1-9][0-9]* sessions' <<< "$out"
expect_eq "S1, its commands, output and requests are gone" "0 0 0 0" \
	"$(sql "SELECT (SELECT COUNT(*) FROM sessions WHERE id = '$S1'), (SELECT COUNT(*) FROM session_commands WHERE session_id = '$S1'), (SELECT COUNT(*) FROM job_output WHERE job_id = '$TAIL'), (SELECT COUNT(*) FROM session_requests WHERE session_id = '$S1')" | tr '\t' ' ')"
as "$A_TOK" req GET "/v1/sessions/$S1"
expect_error 404 not_found

finish
