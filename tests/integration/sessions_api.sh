#!/usr/bin/env bash
# tests/integration/sessions_api.sh: the session HTTP API (issue 9) over HTTPS through
# nginx, with the runner stopped: the suite plays the runner's part itself, through the
# tables of schema/005_sessions.sql as docs/SESSIONS.md describes (a fresh runner_hosts
# row for capacity, sessions turned ready, session_requests answered, job_output chunks
# appended and stdout_bytes bumped, commands made terminal). The fake supervisor is
# `answer`: a background subshell that waits for the next pending request of a kind and
# writes its answer, as the real supervisor does.
#
# Needs a stack (tests/run-integration.sh stops the runner for this suite). On exit it
# ends the run's live sessions and removes its runner_hosts row, so that a runner
# started afterwards has nothing of this run to start, and deletes the output chunks
# it wrote for its fake commands (job_output rows keyed by command ids, which
# tenancy.sh would count as leaked job output).

set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env

RUN="$RANDOM$RANDOM"
NS="sess-$RUN"
HOST="itest-sess-$RUN"
SECRET="hunter2-secret-$RUN"
REQ_TIMEOUT_MS=$(conf_get session_request_timeout_ms 10000)
FILE_MAX=$(conf_get session_file_max_bytes 8388608)

if pgrep -f -- "sandbox-runner --config $SANDBOX_CONFIG" > /dev/null 2>&1; then
	echo "Bail out! a runner is running for this stack: stop it (tests/stack.sh stop-runner)"
	exit 2
fi

mkkey A "$NS" t1 user alice
mkkey B "$NS" t1 user bob           # another identity of the same tenant
mkkey Q "$NS" t2 user quinn --max-sessions 2
mkkey N "$NS" t3 user nora --allow-network
mkkey S "$NS" t4 user sam --max-stored-mb 1   # storage quota
for i in 1 2 3 4 5 6; do mkkey "C$i" "$NS" t5 user "cap$i"; done # concurrent creates
mkkey U "$NS" t6 user uma  # storage released by a close no host took
mkkey V "$NS" t6 user vic  # ... and by keys revoke

cleanup() {
	sql "UPDATE session_requests q JOIN sessions s ON s.id = q.session_id SET q.state = 'failed'
		WHERE s.identity_namespace = '$NS' AND q.state = 'pending';
		UPDATE sessions SET status = 'closed', ended_at = NOW(3), env_json = '{}'
		WHERE identity_namespace = '$NS' AND status IN ('starting', 'ready');
		DELETE FROM runner_hosts WHERE host = '$HOST';
		DELETE o FROM job_output o JOIN session_commands c ON c.id = o.job_id
		JOIN sessions s ON s.id = c.session_id WHERE s.identity_namespace = '$NS';" > /dev/null 2>&1
}
at_exit cleanup

host_fresh() { sql "REPLACE INTO runner_hosts (host, slots, max_sessions, seen_at) VALUES ('$HOST', 4, ${1:-100000}, NOW(3) + INTERVAL 1 HOUR)"; }
host_stale() { sql "UPDATE runner_hosts SET seen_at = NOW(3) - INTERVAL 1 HOUR WHERE seen_at > NOW(3) - INTERVAL 15 SECOND"; }
host_fresh

# as the dispatcher's claim and the supervisor's HELLO would leave it
make_ready() {
	sql "UPDATE sessions SET status = 'ready', ready_at = NOW(3), runner_host = '$HOST',
		runner_id = '$HOST/session-0/x$RUN', lease_expires_at = NOW(3) + INTERVAL 10 MINUTE
		WHERE id = '$1'"
}
sess_status() { sql "SELECT status FROM sessions WHERE id = '$1'"; }

# new_session VAR TOKEN [BODY]: creates one, VAR = its id ('' and a failing check if not 201)
new_session() {
	local -n out=$1
	local b=${3-}
	[ -n "$b" ] || b='{}'
	as "$2" req POST /v1/sessions "$b"
	out=$(jq -r '.id // empty' "$BODY" 2> /dev/null)
	if [ "$STATUS" != 201 ] || [ -z "$out" ]; then
		_notok "create a session ($b)" "201 with an id" "$STATUS"
		out=
	fi
}

# answer SESSION KIND STATE HTTP_STATUS RESULT_JSON [RESULT_HEX]: in the background, the
# next pending request of KIND for SESSION gets this answer (within 15 s); its id goes
# to $T_DIR/answered.KIND. As the supervisor does (common/sreq.h): it claims the row
# first (pending -> taken, checked by its affected rows), then answers it from taken.
# $LATE seconds between the two (0: at once; "never": claims it and never answers).
answer() {
	local sid=$1 kind=$2 state=$3 hs=$4 res=$5 rd=NULL late=${LATE:-0}
	[ -n "${6:-}" ] && rd="X'$6'"
	(
		for _ in $(seq 1 300); do
			id=$(sql "SELECT id FROM session_requests WHERE session_id = '$sid' AND kind = '$kind'
				AND state = 'pending' ORDER BY id LIMIT 1")
			if [ -n "$id" ] && [ "$(sql "UPDATE session_requests SET state = 'taken'
				WHERE id = $id AND state = 'pending'; SELECT ROW_COUNT()")" = 1 ]; then
				echo "$id" > "$T_DIR/answered.$kind"
				[ "$late" = never ] && exit 0
				sleep "$late"
				sql "UPDATE session_requests SET state = '$state', http_status = $hs,
					result_json = X'$(hexs "$res")', result_data = $rd,
					done_at = NOW(3) WHERE id = $id AND state = 'taken'"
				exit 0
			fi
			sleep 0.05
		done
	) &
}

# ---------------------------------------------------------------- create: validation
ctx "create validation"
TOKEN=$A_TOK
LMAX_MEM=$(conf_get memory_mb_max 4096)
LMAX_PIDS=$(conf_get pids_max 1024)
LMAX_DISK=$(conf_get disk_mb_max 1024)
CPU_MAX=$(conf_get session_cpu_seconds_max 86400)
IDLE_MAX=$(conf_get session_idle_seconds_max 3600)
LIFE_MAX=$(conf_get session_max_seconds_max 86400)
while IFS='|' read -r body status code field; do
	req POST /v1/sessions "$body"
	ctx "create $body"
	expect_error "$status" "$code" "$field"
done << EOF
{"foo":1}|400|invalid_request|foo
{"limits":[]}|400|invalid_request|limits
{"limits":{"memory_mb":$((LMAX_MEM + 1))}}|400|invalid_request|limits.memory_mb
{"limits":{"memory_mb":15}}|400|invalid_request|limits.memory_mb
{"limits":{"pids":$((LMAX_PIDS + 1))}}|400|invalid_request|limits.pids
{"limits":{"disk_mb":$((LMAX_DISK + 1))}}|400|invalid_request|limits.disk_mb
{"limits":{"cpu_seconds":$((CPU_MAX + 1))}}|400|invalid_request|limits.cpu_seconds
{"limits":{"cpu_seconds":"1"}}|400|invalid_request|limits.cpu_seconds
{"limits":{"wall_seconds":5}}|400|invalid_request|limits.wall_seconds
{"idle_seconds":0}|400|invalid_request|idle_seconds
{"idle_seconds":$((IDLE_MAX + 1))}|400|invalid_request|idle_seconds
{"max_seconds":$((LIFE_MAX + 1))}|400|invalid_request|max_seconds
{"max_seconds":1.5}|400|invalid_request|max_seconds
{"env":{"1BAD":"x"}}|400|invalid_request|env
{"env":{"A":1}}|400|invalid_request|env
{"env":[]}|400|invalid_request|env
{"files":{}}|400|invalid_request|files
{"files":[1]}|400|invalid_request|files[0]
{"files":[{"path":"../x","content":"a"}]}|400|invalid_request|files[0].path
{"files":[{"path":"/etc/x","content":"a"}]}|400|invalid_request|files[0].path
{"files":[{"path":"a"}]}|400|invalid_request|files[0].content
{"files":[{"path":"a","content":"x","content_base64":"eA=="}]}|400|invalid_request|files[0].content
{"files":[{"path":"a","content_base64":"!!"}]}|400|invalid_request|files[0].content_base64
{"files":[{"path":"a","content":"x","executable":"yes"}]}|400|invalid_request|files[0].executable
{"files":[{"path":"a","content":"x","mode":1}]}|400|invalid_request|files[0].mode
{"files":[{"path":"a","content":"x"},{"path":"a/b","content":"y"}]}|400|invalid_request|files[1].path
{"network":"yes"}|400|invalid_request|network
{"network":true}|403|forbidden|network
{"metadata":{"tenant_id":"x"}}|400|invalid_request|metadata.tenant_id
{"metadata":{"k":1}}|400|invalid_request|metadata
{"profile":"no-such-profile"}|400|invalid_request|profile
{"profile":"Bad Name"}|400|invalid_request|profile
[]|400|invalid_request|
{"a":|400|invalid_json|
EOF
ctx "create validation"
req POST /v1/sessions '{}' -H 'Content-Type: text/plain'
expect_error 415 unsupported_media_type
req POST '/v1/sessions?x=1' '{}'
expect_error 400 invalid_request
expect_eq "no session was stored by a refused create" 0 \
	"$(sql "SELECT COUNT(*) FROM sessions WHERE identity_namespace = '$NS'")"

# ---------------------------------------------------------------- create: defaults, maxima
ctx "create defaults"
req POST /v1/sessions "{\"env\":{\"API_KEY\":\"$SECRET\"},\"files\":[{\"path\":\"src/a.txt\",\"content\":\"hi\"},{\"path\":\"bin/t\",\"content_base64\":\"AAEC\",\"executable\":true}],\"metadata\":{\"ticket\":\"T-1\"}}"
expect_status 201
S1=$(jq -r .id "$BODY")
expect_json '.id | test("'"$UUID_RE"'")' true
expect_header Location "^/v1/sessions/$S1\$"
expect_json .status starting
expect_json '.created_at | test("'"$TS_RE"'")' true
expect_json '.expires_at | test("'"$TS_RE"'")' true
expect_json .ready_at null
expect_json .runtime_id null
expect_json .profile default
expect_json '.limits | tojson' "$(jq -cn --argjson m "$(conf_get memory_mb_default 256)" --argjson p "$(conf_get pids_default 64)" \
	--argjson c "$(conf_get session_cpu_seconds_default 600)" --argjson d "$(conf_get disk_mb_default 64)" \
	'{memory_mb:$m, pids:$p, cpu_seconds:$c, disk_mb:$d}')" "default limits"
expect_json .idle_seconds "$(conf_get session_idle_seconds_default 600)"
expect_json .max_seconds "$(conf_get session_max_seconds_default 3600)"
expect_json '.env_names | tojson' '["API_KEY"]'
expect_json '.metadata.ticket' T-1
expect_json '.identity | [.identity_namespace, .tenant_id, .subject_type, .subject_id] | join("/")' "$NS/t1/user/alice"
expect_json .failure null
expect_true "the env value is in no response body" fails grep -q "$SECRET" "$BODY"
expect_eq "expires_at = created_at + max_seconds" "$(conf_get session_max_seconds_default 3600)" \
	"$(sql "SELECT TIMESTAMPDIFF(SECOND, created_at, expires_at) FROM sessions WHERE id = '$S1'")"
expect_eq "session_files rows, bytes exact" "bin/t:000102:1 src/a.txt:6869:0" \
	"$(sql "SELECT CONCAT(path, ':', LOWER(HEX(content)), ':', executable) FROM session_files WHERE session_id = '$S1' ORDER BY path" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "env_meta_json keeps name, size and sha256" \
	"API_KEY $(printf '%s' "$SECRET" | wc -c) $(printf '%s' "$SECRET" | sha256sum | cut -d' ' -f1)" \
	"$(sql "SELECT env_meta_json FROM sessions WHERE id = '$S1'" | jq -r '.[0] | "\(.name) \(.size) \(.sha256)"')"
expect_eq "the row's identity and key" "$NS t1 user alice $A_ID" \
	"$(sql "SELECT CONCAT_WS(' ', identity_namespace, tenant_id, subject_type, subject_id, key_id) FROM sessions WHERE id = '$S1'")"

ctx "create maxima"
as "$N_TOK" req POST /v1/sessions "{\"limits\":{\"memory_mb\":$LMAX_MEM,\"pids\":$LMAX_PIDS,\"disk_mb\":$LMAX_DISK,\"cpu_seconds\":$CPU_MAX},\"idle_seconds\":$IDLE_MAX,\"max_seconds\":$LIFE_MAX,\"network\":true}"
expect_status 201
expect_json '[.limits.memory_mb, .limits.pids, .limits.disk_mb, .limits.cpu_seconds, .idle_seconds, .max_seconds, .network] | tojson' \
	"[$LMAX_MEM,$LMAX_PIDS,$LMAX_DISK,$CPU_MAX,$IDLE_MAX,$LIFE_MAX,true]"

# ---------------------------------------------------------------- GET, identity, list
ctx "get"
req GET "/v1/sessions/$S1"
expect_status 200
expect_json .id "$S1"
expect_true "GET shows no env value" fails grep -q "$SECRET" "$BODY"
req GET "/v1/sessions/$S1?wait=31"
expect_error 400 invalid_request wait
req GET "/v1/sessions/$S1?foo=1"
expect_error 400 invalid_request foo
req GET "/v1/sessions/$(cat /proc/sys/kernel/random/uuid)"
expect_error 404 not_found
cp "$BODY" "$T_DIR/unknown.json"
as "$B_TOK" req GET "/v1/sessions/$S1"
expect_error 404 not_found
expect_true "another identity's session: the same body as an unknown id" cmp -s "$BODY" "$T_DIR/unknown.json"
req GET "/v1/sessions/not-a-uuid"
expect_error 404 not_found

ctx "list"
new_session S2 "$A_TOK"
new_session S3 "$A_TOK"
req GET "/v1/sessions?limit=2"
expect_status 200
expect_json '[.sessions[].id] | join(" ")' "$S3 $S2"
CUR=$(jq -r .next_cursor "$BODY")
expect_eq "next_cursor is the last item" "$S2" "$CUR"
req GET "/v1/sessions?limit=2&cursor=$CUR"
expect_json '[.sessions[].id] | join(" ")' "$S1"
expect_json .next_cursor null
req GET "/v1/sessions?status=ready"
expect_json '.sessions | length' 0
req GET "/v1/sessions?status=bogus"
expect_error 400 invalid_request status
req GET "/v1/sessions?limit=0"
expect_error 400 invalid_request limit
req GET "/v1/sessions?cursor=$(cat /proc/sys/kernel/random/uuid)"
expect_error 400 invalid_request cursor
as "$B_TOK" req GET "/v1/sessions?cursor=$S1"
expect_error 400 invalid_request cursor
as "$B_TOK" req GET "/v1/sessions"
expect_json '.sessions | length' 0 "another identity lists none of them"

# ---------------------------------------------------------------- wait for ready
ctx "wait for ready"
# (3 s under emulation: the guest's curl took longer than 1 s to start, and its request
# found the session ready already)
(sleep "$(tscale 1 3)"; make_ready "$S2") &
req GET "/v1/sessions/$S2?wait=8"
expect_status 200
expect_json .status ready
expect_json '.ready_at | test("'"$TS_RE"'")' true
expect_json .runtime_id "$HOST/session-0/x$RUN"
expect_true "returned when it turned ready (${ELAPSED}s, between 0.8 and 5)" in_range "$ELAPSED" 0.8 "$(tscale 5)"
wait
req GET "/v1/sessions/$S2?wait=3"
expect_true "a ready session answers at once (${ELAPSED}s)" in_range "$ELAPSED" 0 "$(tscale 1)"

# ---------------------------------------------------------------- activity
ctx "activity"
sql "UPDATE sessions SET last_activity_at = NOW(3) - INTERVAL 1 HOUR WHERE id = '$S2'"
SNAP="SELECT CONCAT_WS('|', status, memory_mb, pids, env_json, metadata_json, expires_at, close_requested, next_pid, ready_at, runner_id) FROM sessions WHERE id = '$S2'"
before=$(sql "$SNAP")
req GET "/v1/sessions/$S2"
expect_eq "GET bumps last_activity_at" 1 \
	"$(sql "SELECT last_activity_at > NOW(3) - INTERVAL 5 SECOND FROM sessions WHERE id = '$S2'")"
expect_eq "GET changes nothing else" "$before" "$(sql "$SNAP")"
sql "UPDATE sessions SET last_activity_at = NOW(3) - INTERVAL 1 HOUR WHERE id = '$S2'"
as "$B_TOK" req GET "/v1/sessions/$S2/commands"
expect_eq "another identity's call bumps nothing" 1 \
	"$(sql "SELECT last_activity_at < NOW(3) - INTERVAL 30 MINUTE FROM sessions WHERE id = '$S2'")"
req GET "/v1/sessions/$S2/commands"
expect_eq "a command list bumps last_activity_at" 1 \
	"$(sql "SELECT last_activity_at > NOW(3) - INTERVAL 5 SECOND FROM sessions WHERE id = '$S2'")"

# ---------------------------------------------------------------- quota, capacity
ctx "quota"
new_session Q1 "$Q_TOK"
new_session Q2 "$Q_TOK"
as "$Q_TOK" req POST /v1/sessions '{}'
expect_error 429 quota_exceeded
as "$Q_TOK" req POST "/v1/sessions/$Q1/close"
expect_status 200 "closing a session no host took: 200 at once"
expect_json .status closed
expect_json .cleanup_status not_started
as "$Q_TOK" req POST /v1/sessions '{}'
expect_status 201 "a closed session frees its place"

ctx "identity"
as "$Q_TOK" req GET /v1/identity
expect_status 200
expect_json '[.quotas.max_sessions, .quotas.live_sessions] | tojson' '[2,2]'
as "$A_TOK" req GET /v1/identity
expect_json .quotas.max_sessions "$(conf_get default_max_sessions 8)"
expect_json .quotas.live_sessions "$(sql "SELECT COUNT(*) FROM sessions s JOIN api_keys k ON k.id = s.key_id
	WHERE k.subject_id = 'alice' AND s.identity_namespace = '$NS' AND s.status IN ('starting', 'ready')")"
expect_json '.session_limits | tojson' "$(jq -cn --argjson cd "$(conf_get session_cpu_seconds_default 600)" \
	--argjson cm "$CPU_MAX" --argjson id "$(conf_get session_idle_seconds_default 600)" --argjson im "$IDLE_MAX" \
	--argjson ld "$(conf_get session_max_seconds_default 3600)" --argjson lm "$LIFE_MAX" \
	'{cpu_seconds:{min:1,default:$cd,max:$cm},idle_seconds:{min:1,default:$id,max:$im},max_seconds:{min:1,default:$ld,max:$lm}}')"

ctx "capacity"
host_stale
req POST /v1/sessions '{}'
expect_error 503 no_capacity
expect_json '.error.message | test("no runner host is available")' true
expect_header Retry-After '^[0-9]+$'
LIVE=$(sql "SELECT COUNT(*) FROM sessions WHERE status IN ('starting', 'ready')")
host_fresh "$LIVE"
req POST /v1/sessions '{}'
expect_error 503 no_capacity
expect_header Retry-After '^[0-9]+$'
host_fresh $((LIVE + 1))
req POST /v1/sessions '{}'
expect_status 201 "one more place: created"
host_fresh

# ---------------------------------------------------------------- commands
ctx "commands"
for i in 1 2 3; do
	req POST "/v1/sessions/$S2/commands" "{\"command\":\"echo $i\",\"env\":{\"TOK\":\"$SECRET\"},\"tag\":\"t$i\"}"
	expect_status 202
	expect_json .pid "$i"
	eval "C$i=\$(jq -r .id \"\$BODY\")"
done
expect_json .status queued
expect_json .session_id "$S2"
expect_json .tag t3
expect_json .timeout_seconds "$(conf_get wall_seconds_default 10)"
expect_json .output_bytes "$(conf_get output_bytes_default 1048576)"
expect_json '[.exit_code, .signal, .started_at] | tojson' '[null,null,null]'
expect_header Location "^/v1/sessions/$S2/commands/$C3\$"
expect_true "no env value in the command object" fails grep -q "$SECRET" "$BODY"
expect_eq "one command request per command" "$C1 $C2 $C3" \
	"$(sql "SELECT command_id FROM session_requests WHERE session_id = '$S2' AND kind = 'command' ORDER BY id" | tr '\n' ' ' | sed 's/ $//')"
req POST "/v1/sessions/$S1/commands" '{"argv":["true"]}'
expect_status 202 "a starting session takes commands"
expect_json .pid 1 "pids count per session"
while IFS='|' read -r body field; do
	req POST "/v1/sessions/$S2/commands" "$body"
	ctx "command $body"
	expect_error 400 invalid_request "$field"
done << EOF
{}|command
{"command":"x","argv":["x"]}|command
{"argv":[]}|argv
{"argv":[1]}|argv
{"command":"x","timeout_seconds":$(($(sql "SELECT max_seconds FROM sessions WHERE id = '$S2'") + 1))}|timeout_seconds
{"command":"x","timeout_seconds":-1}|timeout_seconds
{"command":"x","output_bytes":$(($(conf_get output_bytes_max 16777216) + 1))}|output_bytes
{"command":"x","tag":"$(head -c 256 /dev/zero | tr '\0' t)"}|tag
{"command":"x","cwd":"../up"}|cwd
{"command":"x","stdin":"a","stdin_base64":"YQ=="}|stdin
{"command":"x","stdin_open":1}|stdin_open
{"command":"x","env":{"-":"x"}}|env
{"command":"x","bogus":1}|bogus
EOF
ctx "commands"
req POST "/v1/sessions/$S2/commands" '{"command":"sleep 100","timeout_seconds":0,"stdin_open":true}'
expect_status 202 "timeout_seconds 0: until the session ends"
expect_json '[.timeout_seconds, .stdin_open] | tojson' '[0,true]'
C4=$(jq -r .id "$BODY")
req GET "/v1/sessions/$S2/commands?status=queued&limit=2"
expect_json '[.commands[].pid] | tojson' '[4,3]' "newest first"
CUR=$(jq -r .next_cursor "$BODY")
req GET "/v1/sessions/$S2/commands?status=queued&limit=2&cursor=$CUR"
expect_json '[.commands[].pid] | tojson' '[2,1]'
req GET "/v1/sessions/$S2/commands?pid=2"
expect_json '[.commands[].id] | join(" ")' "$C2"
req GET "/v1/sessions/$S2/commands?status=running"
expect_json '.commands | length' 0
req GET "/v1/sessions/$S2/commands?pid=x"
expect_error 400 invalid_request pid
req GET "/v1/sessions/$S2/commands?status=bogus"
expect_error 400 invalid_request status
req GET "/v1/sessions/$S2/commands/$C2"
expect_status 200
expect_json .pid 2
req GET "/v1/sessions/$S2/commands/$C2?wait=1"
expect_true "?wait on a queued command waits (${ELAPSED}s)" in_range "$ELAPSED" 0.8 "$(tscale 3)"
req GET "/v1/sessions/$S1/commands/$C2"
expect_error 404 not_found
expect_json .error.message "no such command" "a command of another session is not found"

# ---------------------------------------------------------------- output
ctx "output"
sql "UPDATE session_commands SET status = 'running', started_at = NOW(3) WHERE id = '$C2';
	INSERT INTO job_output (job_id, stream, off, data) VALUES ('$C2', 1, 0, 'hello '), ('$C2', 1, 6, 'world\n'), ('$C2', 2, 0, X'00ff');
	UPDATE session_commands SET stdout_bytes = 12, stderr_bytes = 2 WHERE id = '$C2';"
req GET "/v1/sessions/$S2/commands/$C2/output"
expect_status 200
expect_json '[.data, .offset, .next_offset, .total_bytes, .eof] | tojson' '["hello world\n",0,12,12,false]'
req GET "/v1/sessions/$S2/commands/$C2/output?stream=stdout&offset=6"
expect_json '[.data, .next_offset] | tojson' '["world\n",12]' "replay from an offset"
req GET "/v1/sessions/$S2/commands/$C2/output?offset=3&limit=5&encoding=base64"
expect_json '[.data_base64, .next_offset, (.data == null)] | tojson' "[\"$(printf 'lo wo' | base64)\",8,true]"
req GET "/v1/sessions/$S2/commands/$C2/output?stream=stderr"
expect_json '[.data_base64, .total_bytes] | tojson' '["AP8=",2]' "bytes that are not text come as base64"
req GET "/v1/sessions/$S2/commands/$C2/output?stream=both"
expect_error 400 invalid_request stream
req GET "/v1/sessions/$S2/commands/$C2/output?limit=1048577"
expect_error 400 invalid_request limit
req GET "/v1/sessions/$S2/commands/$C2/output?offset=-1"
expect_error 400 invalid_request offset
# a character split between two chunks: the text stops before it, the next read has it
sql "INSERT INTO job_output (job_id, stream, off, data) VALUES ('$C2', 1, 12, X'41c3');
	UPDATE session_commands SET stdout_bytes = 14 WHERE id = '$C2';"
req GET "/v1/sessions/$S2/commands/$C2/output?offset=12"
expect_json '[.data, .next_offset] | tojson' '["A",13]' "text stops before a split character"
# (the bytes come 1 s after this line, 3 s under emulation: curl's own start there takes
# a good part of a second, and ELAPSED counts from it)
(sleep "$(tscale 1 3)"; sql "INSERT INTO job_output (job_id, stream, off, data) VALUES ('$C2', 1, 14, X'a90a');
	UPDATE session_commands SET stdout_bytes = 16 WHERE id = '$C2';") &
req GET "/v1/sessions/$S2/commands/$C2/output?offset=14&wait=8"
expect_json '[.data_base64, .next_offset] | tojson' '["qQo=",16]' "wait: the bytes that came"
expect_true "wait returned when bytes came (${ELAPSED}s)" in_range "$ELAPSED" 0.8 "$(tscale 5)"
wait
req GET "/v1/sessions/$S2/commands/$C2/output?offset=13"
expect_json '[.data, .next_offset] | tojson' '["é\n",16]' "the split character, whole"
req GET "/v1/sessions/$S2/commands/$C2/output?offset=16&wait=1"
expect_json '[.data, .eof] | tojson' '["",false]' "nothing new: empty after the wait"
expect_true "it waited (${ELAPSED}s)" in_range "$ELAPSED" 0.8 "$(tscale 3)"
(sleep 1; sql "UPDATE session_commands SET status = 'succeeded', exit_code = 0, finished_at = NOW(3) WHERE id = '$C2'") &
req GET "/v1/sessions/$S2/commands/$C2?wait=8"
expect_json '[.status, .exit_code] | tojson' '["succeeded",0]' "?wait returns when the command ends"
expect_true "... after about a second (${ELAPSED}s)" in_range "$ELAPSED" 0.8 "$(tscale 5)"
wait
req GET "/v1/sessions/$S2/commands/$C2/output?offset=16&wait=5"
expect_json '[.data, .eof, .total_bytes] | tojson' '["",true,16]' "eof at the end of an ended command"
expect_true "eof answers at once (${ELAPSED}s)" in_range "$ELAPSED" 0 "$(tscale 1)"
req GET "/v1/sessions/$S2/commands/$C2/output"
expect_json '.data | length' 15 "a full replay from 0 (16 bytes, 15 characters)"
expect_json .eof true

# ---------------------------------------------------------------- kill, stdin
ctx "kill"
sql "UPDATE session_commands SET status = 'running', started_at = NOW(3) WHERE id IN ('$C3', '$C4')"
answer "$S2" kill done 200 '{}'
req POST "/v1/sessions/$S2/commands/$C3/kill" '{"signal":"KILL"}'
expect_status 202
expect_json .id "$C3"
wait
expect_eq "kill request args" '{"signal":9}' \
	"$(sql "SELECT args_json FROM session_requests WHERE id = $(cat "$T_DIR/answered.kill")")"
expect_eq "kill request names the command" "$C3" \
	"$(sql "SELECT command_id FROM session_requests WHERE id = $(cat "$T_DIR/answered.kill")")"
answer "$S2" kill failed 409 '{"error":"not_running","message":"the command has exited"}'
req POST "/v1/sessions/$S2/commands/$C3/kill" '{"signal":2}'
expect_error 409 not_running
expect_json .error.message "the command has exited"
wait
answer "$S2" kill failed 200 '{"error":"<b>","message":"x"}'
req POST "/v1/sessions/$S2/commands/$C3/kill" ''
expect_error 502 bad_gateway
wait
for bad in '{"signal":"STOP"}' '{"signal":0}' '{"signal":65}' '{"signal":true}' '{"sig":9}'; do
	req POST "/v1/sessions/$S2/commands/$C3/kill" "$bad"
	expect_error 400 invalid_request "$(jq -r 'keys[0]' <<< "$bad")"
done
req POST "/v1/sessions/$S2/commands/$C2/kill" '{"signal":"TERM"}'
expect_error 409 not_running
expect_json '.error.message | test("succeeded")' true
ctx "kill, nobody answers"
WORKERS=$(conf_get api_workers 8)
SHARE=$(conf_get api_wait_slots_per_key 0)
[ "$SHARE" = 0 ] && SHARE=$(($(conf_get api_wait_capacity 1024) / 2))
KILLS0=$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$S2' AND kind = 'kill'")
if [ "$SHARE" -gt 32 ]; then
	skip "kill, nobody answers: the key's share of waits" "api_wait_slots_per_key is $SHARE (the test stack's is 4)"
	req POST "/v1/sessions/$S2/commands/$C3/kill" '{"signal":"TERM"}'
	expect_error 504 request_timeout
else
	new_session S6 "$A_TOK"
	make_ready "$S6"
	# The key's whole share of kills, each waiting on the waiter, none in a worker.
	kpids=()
	for i in $(seq 1 "$SHARE"); do
		curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $A_TOK" -H 'Content-Type: application/json' \
			-d '{"signal":"TERM"}' -o "$T_DIR/kill$i" -w '%{http_code} %{time_total}' \
			"$SANDBOX_URL/v1/sessions/$S2/commands/$C3/kill" > "$T_DIR/kill$i.status" &
		kpids+=($!)
	done
	kills_in() { [ "$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$S2' AND kind = 'kill'")" -ge "$1" ]; }
	poll 5 kills_in $((KILLS0 + SHARE))
	# More than the workers past the share, at once, and a close: each kill is refused
	# at once with nothing inserted, the close is answered at once (202, still live);
	# none of them holds a worker.
	opids=()
	for i in $(seq 1 $((WORKERS + 2))); do
		curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $A_TOK" -H 'Content-Type: application/json' \
			-d '{"signal":"TERM"}' -D "$T_DIR/over$i.h" -o "$T_DIR/over$i" -w '%{http_code} %{time_total}' \
			"$SANDBOX_URL/v1/sessions/$S2/commands/$C3/kill" > "$T_DIR/over$i.status" &
		opids+=($!)
	done
	curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $A_TOK" -X POST -o "$T_DIR/close6" \
		-w '%{http_code} %{time_total}' "$SANDBOX_URL/v1/sessions/$S6/close" > "$T_DIR/close6.status" &
	opids+=($!)
	req GET "/v1/sessions/$S2"
	expect_status 200 "a GET is served while the key's $SHARE kills wait for an answer"
	expect_true "at once (${ELAPSED}s)" in_range "$ELAPSED" 0 "$(tscale 1)"
	wait "${opids[@]}"
	n429=0 nfast=0
	for i in $(seq 1 $((WORKERS + 2))); do
		read -r code secs < "$T_DIR/over$i.status"
		if [ "$code" = 429 ] && [ "$(jq -r .error.code "$T_DIR/over$i")" = quota_exceeded ] &&
			jq -e '.error.message | test("api_wait_slots_per_key")' "$T_DIR/over$i" > /dev/null &&
			grep -qi '^Retry-After: 1' "$T_DIR/over$i.h"; then
			n429=$((n429 + 1))
		else
			note "kill past the share $i: $code $(head -c 300 "$T_DIR/over$i" 2> /dev/null)"
		fi
		in_range "$secs" 0 "$(tscale 2)" && nfast=$((nfast + 1))
	done
	expect_eq "$((WORKERS + 2)) kills past the key's share of $SHARE: 429 quota_exceeded, Retry-After: 1" $((WORKERS + 2)) "$n429"
	expect_eq "each answered at once" $((WORKERS + 2)) "$nfast"
	expect_eq "none of them inserted a request" "$((KILLS0 + SHARE))" \
		"$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$S2' AND kind = 'kill'")"
	read -r code secs < "$T_DIR/close6.status"
	expect_eq "a close while the key holds its share: 202, still live, close requested" "202 ready true" \
		"$code $(jq -r '"\(.status) \(.close_requested)"' "$T_DIR/close6")"
	expect_true "at once (${secs}s)" in_range "$secs" 0 "$(tscale 2)"
	wait "${kpids[@]}"
	n504=0
	for i in $(seq 1 "$SHARE"); do
		read -r code secs < "$T_DIR/kill$i.status"
		if [ "$code" = 504 ] && in_range "$secs" "$((REQ_TIMEOUT_MS / 1000 - 1))" "$(tscale $((REQ_TIMEOUT_MS / 1000 + 5)))"; then
			n504=$((n504 + 1))
		else
			note "kill $i: $code ${secs}s $(head -c 300 "$T_DIR/kill$i" 2> /dev/null)"
		fi
	done
	expect_eq "each of the $SHARE waiting kills got its 504 after session_request_timeout_ms" "$SHARE" "$n504"
	expect_eq "each of them marked failed so the supervisor skips it" "$((KILLS0 + SHARE)) 0" \
		"$(sql "SELECT CONCAT(COUNT(*), ' ', SUM(state = 'pending')) FROM session_requests WHERE session_id = '$S2' AND kind = 'kill'")"
	# Their places are free again.
	req POST "/v1/sessions/$S2/commands/$C3/kill" '{"signal":"TERM"}'
	expect_error 504 request_timeout
fi
expect_true "after session_request_timeout_ms (${ELAPSED}s)" in_range "$ELAPSED" "$((REQ_TIMEOUT_MS / 1000 - 1))" "$(tscale $((REQ_TIMEOUT_MS / 1000 + 5)))"
expect_eq "the request is marked failed so the supervisor skips it" "failed 504" \
	"$(sql "SELECT CONCAT(state, ' ', http_status) FROM session_requests WHERE session_id = '$S2' AND kind = 'kill' ORDER BY id DESC LIMIT 1")"

# Issue 25 item 2: the API's timeout fails a request only while nobody took it. One
# the supervisor took before the timeout is being carried out: its real answer reaches
# the client (here 3 s past the timeout), never a 504 that would hide an action done.
ctx "a request taken before the timeout"
TOUT=$(((REQ_TIMEOUT_MS + 999) / 1000))
GRACE=$((TOUT < 10 ? TOUT : 10))
LATE=$((TOUT + 3)) answer "$S2" file_delete done 200 '{}'
req DELETE "/v1/sessions/$S2/files/late.txt"
expect_status 204 "taken at once, answered $((TOUT + 3)) s later: the real answer, not 504"
expect_true "after the timeout and the answer (${ELAPSED}s)" in_range "$ELAPSED" "$((TOUT + 2))" "$(tscale $((TOUT + 8)))"
wait
expect_eq "the row is done" done "$(sql "SELECT state FROM session_requests WHERE id = $(cat "$T_DIR/answered.file_delete")")"
# One taken and never answered (its supervisor stalled mid-action): after the timeout
# and one grace of min(timeout, 10 s), 504 request_in_progress: the action may have
# happened, and the client is not told it did not.
LATE=never answer "$S2" file_delete done 200 '{}'
req DELETE "/v1/sessions/$S2/files/stuck.txt"
expect_error 504 request_in_progress
expect_true "after the timeout and its grace (${ELAPSED}s)" in_range "$ELAPSED" "$((TOUT + GRACE - 1))" "$(tscale $((TOUT + GRACE + 5)))"
wait
STUCK=$(cat "$T_DIR/answered.file_delete")
expect_eq "the row stays taken: the API does not fail what the supervisor owns" taken \
	"$(sql "SELECT state FROM session_requests WHERE id = $STUCK")"
sql "UPDATE session_requests SET state = 'failed', http_status = 500 WHERE id = $STUCK"

# Issue 25 item 7: a request's payload does not outlive it. Failed by the timeout
# here (the supervisor's answers erase it the same way: srunner.sh): the bytes gone,
# their size and sha256 kept, and given back to the session and the key.
ctx "a request's payload erased when it ends"
SSTORED0=$(sql "SELECT stored_bytes FROM sessions WHERE id = '$S2'")
req POST "/v1/sessions/$S2/commands/$C4/stdin" '{"data":"secret-stdin"}'
expect_error 504 request_timeout
expect_eq "stdin bytes erased, size and sha256 kept" "1 12 $(printf secret-stdin | sha256sum | cut -d' ' -f1)" \
	"$(sql "SELECT CONCAT(data IS NULL, ' ', data_bytes, ' ', data_sha256) FROM session_requests WHERE session_id = '$S2' AND kind = 'stdin' ORDER BY id DESC LIMIT 1")"
expect_eq "its 12 bytes given back to the session" "$SSTORED0" "$(sql "SELECT stored_bytes FROM sessions WHERE id = '$S2'")"

ctx "stdin"
answer "$S2" stdin done 200 '{}'
req POST "/v1/sessions/$S2/commands/$C4/stdin" '{"data":"line 1\n"}'
expect_status 200
expect_json .id "$C4"
wait
expect_eq "stdin bytes exact" "$(hexs $'line 1\n')" \
	"$(sql "SELECT LOWER(HEX(data)) FROM session_requests WHERE id = $(cat "$T_DIR/answered.stdin")")"
answer "$S2" stdin done 200 '{}'
req POST "/v1/sessions/$S2/commands/$C4/stdin" '{"data_base64":"AP8K","close":true}'
expect_status 200
wait
expect_eq "binary stdin and close" '00ff0a {"close":true}' \
	"$(sql "SELECT LOWER(HEX(data)) FROM session_requests WHERE id = $(cat "$T_DIR/answered.stdin")") $(sql "SELECT args_json FROM session_requests WHERE id = $(cat "$T_DIR/answered.stdin")" | jq -c .)"
answer "$S2" stdin failed 409 '{"error":"stdin_closed","message":"the command'\''s stdin is closed"}'
req POST "/v1/sessions/$S2/commands/$C4/stdin" '{"data":"x"}'
expect_error 409 stdin_closed
wait
req POST "/v1/sessions/$S2/commands/$C4/stdin" '{"data":"x","data_base64":"eA=="}'
expect_error 400 invalid_request data
req POST "/v1/sessions/$S2/commands/$C4/stdin" '{}'
expect_error 400 invalid_request data
req POST "/v1/sessions/$S2/commands/$C4/stdin" '{"close":"yes"}'
expect_error 400 invalid_request close

# ---------------------------------------------------------------- files
ctx "files"
answer "$S2" file_list done 200 '{"files":[{"path":"a.txt","size":2,"sha256":"8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4"},{"path":"d/b","size":0,"extra":"dropped"}],"truncated":false}'
req GET "/v1/sessions/$S2/files?root=src&recursive=false&sha256=true"
expect_status 200
expect_json '.files | tojson' '[{"path":"a.txt","size":2,"sha256":"8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4"},{"path":"d/b","size":0}]'
expect_json .truncated false
wait
expect_eq "file_list args" '{"root":"src","recursive":false,"sha256":true}' \
	"$(sql "SELECT args_json FROM session_requests WHERE id = $(cat "$T_DIR/answered.file_list")" | jq -c .)"
answer "$S2" file_list done 200 '{"files":"nope"}'
req GET "/v1/sessions/$S2/files"
expect_error 502 bad_gateway
wait
req GET "/v1/sessions/$S2/files?root=../x"
expect_error 400 invalid_request root
req GET "/v1/sessions/$S2/files?recursive=maybe"
expect_error 400 invalid_request recursive

printf 'bin\0ary\n\377' > "$T_DIR/put.bin"
answer "$S2" file_put done 200 '{"path":"dir/new.bin","size":9}'
req PUT "/v1/sessions/$S2/files/dir/new.bin?mode=0755" "@$T_DIR/put.bin" -H 'Content-Type: application/octet-stream'
expect_status 201
expect_json '[.path, .size] | tojson' '["dir/new.bin",9]'
wait
expect_eq "PUT: the request holds the bytes exactly" "$(hexf "$T_DIR/put.bin")" \
	"$(sql "SELECT LOWER(HEX(data)) FROM session_requests WHERE id = $(cat "$T_DIR/answered.file_put")")"
expect_eq "PUT: path and mode" '{"path":"dir/new.bin","mode":493}' \
	"$(sql "SELECT args_json FROM session_requests WHERE id = $(cat "$T_DIR/answered.file_put")" | jq -c .)"
answer "$S2" file_put done 200 '{"path":"dir/new.bin","size":9,"created":false}'
req PUT "/v1/sessions/$S2/files/dir/new.bin" "@$T_DIR/put.bin" -H 'Content-Type: application/octet-stream'
expect_status 200 "replacing a file: 200"
wait
answer "$S2" file_put failed 409 '{"error":"symlink","message":"the path is a symbolic link","field":"path"}'
req PUT "/v1/sessions/$S2/files/link" "@$T_DIR/put.bin" -H 'Content-Type: application/octet-stream'
expect_error 409 symlink path
wait
req PUT "/v1/sessions/$S2/files/x?mode=0999" "@$T_DIR/put.bin" -H 'Content-Type: application/octet-stream'
expect_error 400 invalid_request mode
req PUT "/v1/sessions/$S2/files/%2e%2e/x" "@$T_DIR/put.bin" -H 'Content-Type: application/octet-stream'
expect_error 400 invalid_request path
if [ "$FILE_MAX" -lt 9000000 ]; then
	head -c $((FILE_MAX + 1)) /dev/zero > "$T_DIR/big.bin"
	req PUT "/v1/sessions/$S2/files/big" "@$T_DIR/big.bin" -H 'Content-Type: application/octet-stream'
	expect_error 413 payload_too_large
fi

answer "$S2" file_get done 200 '{"size":9}' "$(hexf "$T_DIR/put.bin")"
req GET "/v1/sessions/$S2/files/dir/new.bin"
expect_status 200
expect_header Content-Type '^application/octet-stream$'
expect_header Content-Length '^9$'
expect_true "GET file: the bytes exactly" cmp -s "$BODY" "$T_DIR/put.bin"
wait
expect_eq "file_get args" '{"path":"dir/new.bin"}' \
	"$(sql "SELECT args_json FROM session_requests WHERE id = $(cat "$T_DIR/answered.file_get")" | jq -c .)"
answer "$S2" file_get failed 404 '{"error":"not_found","message":"no such file"}'
req GET "/v1/sessions/$S2/files/nope"
expect_error 404 not_found
wait
req GET "/v1/sessions/$S2/files/a%01b"
expect_error 400 invalid_request path
# Issue 25 item 5: a path that is not UTF-8 (any key could set off DB-error alerts
# with one) is a 400 naming the field, before anything is inserted or queried.
dberrs() { as "" req GET /metrics > /dev/null; sed -n 's/^sandbox_api_db_errors_total //p' "$BODY"; }
DBE0=$(dberrs)
NREQ8=$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$S2'")
for p in "files/%ff" "files/a/%c0%ae%c0%ae/b" "files/%ed%a0%80" "files/ok/%e2%82"; do
	req GET "/v1/sessions/$S2/$p"
	expect_error 400 invalid_request path
	expect_json '.error.message' "path must be valid UTF-8"
done
req PUT "/v1/sessions/$S2/files/%ff" "@$T_DIR/put.bin" -H 'Content-Type: application/octet-stream'
expect_error 400 invalid_request path
req DELETE "/v1/sessions/$S2/files/x%c0%ae"
expect_error 400 invalid_request path
req GET "/v1/sessions/$S2/files?root=%ff"
expect_error 400 invalid_request root
expect_json '.error.message' "root must be valid UTF-8"
expect_eq "no request row inserted for any of them" "$NREQ8" \
	"$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$S2'")"
expect_eq "no database error counted" "$DBE0" "$(dberrs)"

# Issue 25 item 6: every answer code of common/sreq.c reaches the client with its
# status (a request pending when its session ended was a 502); a code with another
# status than the table's, or one outside it, is the API's 502.
while IFS='|' read -r hs res code field; do
	answer "$S2" file_get failed "$hs" "$res"
	req GET "/v1/sessions/$S2/files/codes.txt"
	expect_error "$([ "$code" = bad_gateway ] && echo 502 || echo "$hs")" "$code" $field
	wait
done << 'EOF'
409|{"error":"session_ended","message":"the session has ended (lost)"}|session_ended|
400|{"error":"invalid_path","message":"path: must be relative","field":"path"}|invalid_path|path
409|{"error":"not_a_directory","message":"a parent of the path is not a directory"}|not_a_directory|
500|{"error":"internal_error","message":"listing failed"}|internal_error|
500|{"error":"session_ended","message":"x"}|bad_gateway|
409|{"error":"made_up","message":"x"}|bad_gateway|
EOF
answer "$S2" stdin failed 429 '{"error":"stdin_backlog_full","message":"the command has 4194304 bytes of stdin not yet read"}'
req POST "/v1/sessions/$S2/commands/$C4/stdin" '{"data":"x"}'
expect_error 429 stdin_backlog_full
expect_header Retry-After '^1$'
wait

answer "$S2" file_delete done 200 '{}'
req DELETE "/v1/sessions/$S2/files/dir/new.bin"
expect_status 204
expect_eq "204 has no body" 0 "$(wc -c < "$BODY")"
wait

ctx "files need a ready session"
req GET "/v1/sessions/$S1/files"
expect_error 409 session_not_ready
req GET "/v1/sessions/$S1/files/a.txt"
expect_error 409 session_not_ready

# ---------------------------------------------------------------- identity on every endpoint
ctx "another identity"
UNKNOWN=$(cat /proc/sys/kernel/random/uuid)
NREQ=$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$S2'")
for ep in "GET /v1/sessions/%s" "POST /v1/sessions/%s/close" "GET /v1/sessions/%s/commands" \
	"POST /v1/sessions/%s/commands" "GET /v1/sessions/%s/commands/$C4" \
	"POST /v1/sessions/%s/commands/$C4/kill" "POST /v1/sessions/%s/commands/$C4/stdin" \
	"GET /v1/sessions/%s/commands/$C4/output" "GET /v1/sessions/%s/files" \
	"GET /v1/sessions/%s/files/a.txt" "PUT /v1/sessions/%s/files/a.txt" \
	"DELETE /v1/sessions/%s/files/a.txt"; do
	m=${ep%% *}
	path=${ep#* }
	case $ep in
	*/commands/*/kill) body='{"signal":"KILL"}' ;;
	*/stdin) body='{"data":"x"}' ;;
	"POST "*/commands) body='{"command":"id"}' ;;
	PUT*) body='x' ;;
	*) body='' ;;
	esac
	as "$A_TOK" req "$m" "${path//%s/$UNKNOWN}" "$body"
	cp "$BODY" "$T_DIR/unk.json"
	as "$B_TOK" req "$m" "${path//%s/$S2}" "$body"
	expect_error 404 not_found
	expect_true "$ep: same body as an unknown id" cmp -s "$BODY" "$T_DIR/unk.json"
done
expect_eq "another identity's calls made no request" "$NREQ" \
	"$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$S2'")"

# ---------------------------------------------------------------- close
ctx "close"
(sleep 0.5; sql "UPDATE sessions SET status = 'closed', ended_at = NOW(3), end_reason = 'closed by request',
	cleanup_status = 'completed', env_json = '{}' WHERE id = '$S2' AND close_requested = 1") &
req POST "/v1/sessions/$S2/close"
expect_status 200
expect_json '[.status, .cleanup_status, .close_requested] | tojson' '["closed","completed",true]'
wait
expect_eq "one close request" 1 \
	"$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$S2' AND kind = 'close'")"
req POST "/v1/sessions/$S2/close"
expect_status 200 "closing a closed session: 200, unchanged"
expect_json .end_reason "closed by request"
req POST "/v1/sessions/$S2/commands" '{"command":"true"}'
expect_error 409 session_not_running
expect_json '.error.message | test("closed")' true
req GET "/v1/sessions/$S2/files"
expect_error 409 session_ended
req POST "/v1/sessions/$S2/commands/$C4/kill" '{}'
expect_error 409 session_ended

ctx "close, nobody answers"
new_session S5 "$A_TOK"
make_ready "$S5"
req POST "/v1/sessions/$S5/close"
expect_status 202
expect_json '[.status, .close_requested] | tojson' '["ready",true]'
expect_true "after session_request_timeout_ms (${ELAPSED}s)" in_range "$ELAPSED" "$((REQ_TIMEOUT_MS / 1000 - 1))" "$(tscale $((REQ_TIMEOUT_MS / 1000 + 5)))"

# ---------------------------------------------------------------- storage quota
ctx "storage quota"
stored_of() { sql "SELECT COALESCE(SUM(bytes), 0) FROM key_storage s JOIN api_keys k ON k.id = s.key_id
	WHERE k.identity_namespace = '$NS' AND k.subject_id = 'sam'"; }
ENV_TEXT='{"K":"v"}' # as stored: compact JSON, 9 bytes
new_session SQ "$S_TOK" "{\"env\":$ENV_TEXT,\"files\":[{\"path\":\"f\",\"content\":\"abc\"}]}"
make_ready "$SQ"
expect_eq "the session's inputs count on the key: env text and files" "$((${#ENV_TEXT} + 3))" "$(stored_of)"
head -c $((1048576 - 12 - 100)) /dev/zero > "$T_DIR/big.bin"
answer "$SQ" file_put done 200 '{"path":"big","size":1}'
as "$S_TOK" req PUT "/v1/sessions/$SQ/files/big" "@$T_DIR/big.bin" -H 'Content-Type: application/octet-stream'
expect_status 201
wait
expect_eq "an uploaded file counts on the key and the session" "1048476 1048476" \
	"$(stored_of) $(sql "SELECT stored_bytes FROM sessions WHERE id = '$SQ'")"
N_REQ=$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$SQ'")
head -c 101 /dev/zero > "$T_DIR/small.bin"
as "$S_TOK" req PUT "/v1/sessions/$SQ/files/small" "@$T_DIR/small.bin" -H 'Content-Type: application/octet-stream'
expect_error 429 quota_exceeded
expect_json '.error.message | test("stored-bytes quota exceeded")' true
as "$S_TOK" req POST "/v1/sessions/$SQ/commands" "{\"command\":\"cat\",\"stdin\":\"$(head -c 99 /dev/zero | tr '\0' x)\"}"
expect_error 429 quota_exceeded
as "$S_TOK" req POST "/v1/sessions/$SQ/commands" '{"command":"cat","stdin":"x"}'
expect_status 202 "a command whose inputs (env {} and stdin: 3 bytes) and one output byte fit"
expect_eq "nothing was written for the refused ones; the command's env and stdin count" \
	"$((N_REQ + 1)) 1048479" "$(sql "SELECT COUNT(*) FROM session_requests WHERE session_id = '$SQ'") $(stored_of)"
as "$S_TOK" req POST /v1/sessions '{}'
expect_status 201 "a session whose inputs ({}: 2 bytes) fit"
as "$S_TOK" req POST /v1/sessions "{\"env\":{\"A\":\"$(head -c 100 /dev/zero | tr '\0' x)\"}}"
expect_error 429 quota_exceeded
expect_json '.error.message | test("stored-bytes quota exceeded")' true
as "$S_TOK" req GET /v1/identity
expect_json .quotas.stored_bytes 1048481

ctx "storage released by a close before any host took it"
total_of() { sql "SELECT COALESCE(SUM(bytes), 0) FROM key_storage WHERE key_id = '$1'"; }
s_stored() { sql "SELECT stored_bytes FROM sessions WHERE id = '$1'"; }
# a queued command as the API writes one (env {} and stdin "xy": 4 bytes charged);
# the API only takes commands for ready sessions, so SQL writes it here
queued_cmd() {
	sql "START TRANSACTION;
	     INSERT INTO session_commands (id, session_id, pid, command, env_json, stdin,
	     timeout_seconds, output_bytes) VALUES (UUID(), '$1', 1, 'cat', '{}', 'xy', 0, 1000);
	     UPDATE sessions SET stored_bytes = stored_bytes + 4 WHERE id = '$1';
	     INSERT INTO key_storage (key_id, shard, bytes) VALUES ('$2', 5, 4)
	     ON DUPLICATE KEY UPDATE bytes = bytes + VALUES(bytes); COMMIT"
}
new_session SU "$U_TOK" "{\"env\":$ENV_TEXT,\"files\":[{\"path\":\"f\",\"content\":\"abc\"}]}"
queued_cmd "$SU" "$U_ID"
expect_eq "charged: env text 9, file 3, the command's 4" "16 16" "$(s_stored "$SU") $(total_of "$U_ID")"
as "$U_TOK" req POST "/v1/sessions/$SU/close"
expect_status 200 "closed at once"
expect_json '[.status, .cleanup_status] | tojson' '["closed","not_started"]'
expect_eq "env, files and the command's env and stdin erased" '{} 0 {}:0:cancelled' \
	"$(sql "SELECT env_json FROM sessions WHERE id = '$SU'") $(sql "SELECT COUNT(*) FROM session_files WHERE session_id = '$SU'") $(sql "SELECT CONCAT(env_json, ':', LENGTH(stdin), ':', status) FROM session_commands WHERE session_id = '$SU'")"
expect_eq "all 16 bytes released on the session and the key" "0 0" "$(s_stored "$SU") $(total_of "$U_ID")"
as "$U_TOK" req POST "/v1/sessions/$SU/close"
expect_status 200 "closing it again"
expect_eq "a second close releases nothing more" "0 0" "$(s_stored "$SU") $(total_of "$U_ID")"
new_session SU2 "$U_TOK" '{}'
expect_eq "an empty env is '{}': 2 bytes" "2 2" "$(s_stored "$SU2") $(total_of "$U_ID")"
as "$U_TOK" req POST "/v1/sessions/$SU2/close"
expect_eq "its close releases them" "0 0" "$(s_stored "$SU2") $(total_of "$U_ID")"

ctx "storage released by keys revoke"
new_session SV "$V_TOK" "{\"env\":$ENV_TEXT,\"files\":[{\"path\":\"f\",\"content\":\"abcd\"}]}"
queued_cmd "$SV" "$V_ID"
expect_eq "charged: 9 + 4 + 4" "17 17" "$(s_stored "$SV") $(total_of "$V_ID")"
ctl keys revoke "$V_ID" > /dev/null
expect_eq "revoked: closed, all 17 released" "closed 0 0" \
	"$(sess_status "$SV") $(s_stored "$SV") $(total_of "$V_ID")"

# ---------------------------------------------------------------- capacity, concurrently
ctx "capacity, concurrent creates"
sql "UPDATE sessions SET status = 'closed', ended_at = NOW(3), env_json = '{}'
	WHERE identity_namespace = '$NS' AND status IN ('starting', 'ready')"
LIVE=$(sql "SELECT COUNT(*) FROM sessions WHERE status IN ('starting', 'ready')")
host_fresh $((LIVE + 1)) # one place left (LIVE is 0 unless another run left live sessions)
cpids=()
for i in 1 2 3 4 5 6; do
	tok=C${i}_TOK
	curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer ${!tok}" -H 'Content-Type: application/json' \
		-d '{}' -o /dev/null -w '%{http_code}\n' "$SANDBOX_URL/v1/sessions" > "$T_DIR/cap$i" &
	cpids+=($!)
done
wait "${cpids[@]}"
expect_eq "six keys create at once for one place: one 201, five 503" "1 5" \
	"$(cat "$T_DIR"/cap[1-6] | grep -c '^201$') $(cat "$T_DIR"/cap[1-6] | grep -c '^503$')"
expect_eq "one live session of theirs" 1 "$(sql "SELECT COUNT(*) FROM sessions WHERE identity_namespace = '$NS'
	AND tenant_id = 't5' AND status IN ('starting', 'ready')")"
host_fresh

# ---------------------------------------------------------------- secrets
ctx "secrets"
expect_eq "the env value is in no recorded response" 0 "$(grep -c -F "$SECRET" "$SANDBOX_RESPONSES")"

finish
