#!/usr/bin/env bash
# tests/integration/faults.sh: fault-injection suite. Stops and starts parts of a running
# local stack (tests/stack.sh) and checks what clients see through nginx:
#
#   1. MariaDB down: health and authenticated requests answer 503 service_unavailable +
#      Retry-After at once (never hang); after `start-db` the pool recovers by itself.
#   2. A worker killed with SIGKILL is replaced by the master (and logged).
#   3. SIGTERM to the API master: the long-poll in flight still gets its 200 job body,
#      then master and workers exit; `start-api` brings the API back.
#   4. Secrets never reach a log: tokens (real, revoked, bogus, token-shaped canaries in
#      the URL), job env values and the DB password are grepped for in every file of
#      $SANDBOX_VAR/log/ after all the other cases have run.
#   5. nginx's own errors are JSON: 502 bad_gateway with the API stopped, 413
#      payload_too_large for an 11 MiB body.
#   6. The FastCGI socket is mode 0660 with the configured group (fcgi_socket_group,
#      or the API's own): uid 65534 without groups gets EACCES, the same uid with the
#      socket's group connects, nginx's workers have the group, HTTPS works; an unknown
#      group or a chown the API may not do stops its start with a message naming the key.
#   7. Read timeout (api_read_timeout_seconds): api_workers+2 raw connections that send
#      nothing, then api_workers+2 that send half a record header, fill the pool; the
#      server closes every one of them, an HTTPS request queued behind them gets its
#      200 after the first drop, the workers are the same processes and all serve
#      again. A raw client that pauses less than the timeout between pieces gets its
#      answer; one that stalls inside the body is dropped; a long-poll through nginx
#      that outlasts the timeout still gets its 200. Every drop is logged.
#
# Needs a running stack; it is left running and healthy at the end, also on failure or
# Ctrl-C (an EXIT trap restarts whatever the suite stopped). By hand:
#   SANDBOX_VAR=/tmp/x SANDBOX_PORT=8743 bash tests/stack.sh up
#   SANDBOX_VAR=/tmp/x bash tests/integration/faults.sh
# Environment, from $SANDBOX_VAR/env: SANDBOX_URL, SANDBOX_CACERT, SANDBOX_TOKEN,
# SANDBOX_CONFIG, SANDBOX_DB_SOCKET; SANDBOX_BIN defaults to <repo>/build.
#
# Not for a stack that others use at the same time: it stops the database and the API.

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/env.sh"
load_stack_env SANDBOX_URL SANDBOX_CACERT SANDBOX_CONFIG SANDBOX_DB_SOCKET

. "$HERE/lib.sh"

STACK="$REPO/tests/stack.sh"
LOG_DIR=$SANDBOX_VAR/log
API_LOG=$LOG_DIR/api.log
API_PID_FILE=$SANDBOX_VAR/run/api.pid
API_SOCK=$(conf_get fcgi_socket "$SANDBOX_VAR/run/api.sock")
NWORKERS=$(conf_get api_workers 8)
READ_TIMEOUT=$(conf_get api_read_timeout_seconds 10)
SOCK_GROUP=$(conf_get fcgi_socket_group)
# The system python: a setpriv'd uid must be able to run it (not a per-user install).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

RUN="$RANDOM$RANDOM"
ECHO_JOB='{"command":"echo hi"}'
UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'

# ---------------------------------------------------------------- helpers

hex() { od -An -v -N "$1" -tx1 /dev/urandom | tr -d ' \n'; }

# The API master's pid (from the pid file, if alive), or nothing and status 1.
api_master() {
	local pid
	{ read -r pid < "$API_PID_FILE"; } 2> /dev/null || return 1
	alive "$pid" || return 1
	printf '%s' "$pid"
}

# Live children of PID, one per line, sorted.
children() {
	local p
	for p in $(pgrep -P "$1" 2> /dev/null); do
		alive "$p" && echo "$p"
	done | sort -n
}

# health_ok: one GET /v1/health that answered 200 (the nginx health zone allows 5 r/s:
# pollers call this at most every 0.5 s; lib.sh retries an nginx 429 anyway).
health_ok() {
	as '' req GET /v1/health '' --max-time 5
	[ "$STATUS" = 200 ]
}
health_poll() { POLL_EVERY=0.5 poll "$1" health_ok; } # health_poll SECONDS

# An established connection on the API's FastCGI socket (a request inside a worker).
# (No `| grep -q` anywhere: grep quitting early SIGPIPEs the writer and, under pipefail,
# fails the pipeline at random.)
api_conn_busy() { ss -xHp state established 2> /dev/null | grep -F -- "$API_SOCK " > /dev/null; }

# pool_recovers STALE: after the DB came back, 3 rounds of GET /v1/jobs over the pool
# (STALE: 503s already seen since). A worker whose connection died with the old server
# may answer 503 (+ Retry-After) once; the last round must be all 200.
pool_recovers() {
	local stale=$1 last_bad=0 other=0 i
	for ((i = 0; i < 3 * NWORKERS; i++)); do
		req GET /v1/jobs
		[ "$STATUS" = 200 ] && continue
		if [ "$STATUS" = 503 ] && [ -n "$(hdr Retry-After)" ] &&
			[ "$(jq -r '.error.code?' "$BODY" 2> /dev/null)" = service_unavailable ]; then
			stale=$((stale + 1))
		else
			other=$((other + 1))
		fi
		[ "$i" -ge $((2 * NWORKERS)) ] && last_bad=$((last_bad + 1))
		note "after start-db, request $i: $LAST_REQ -> $STATUS $(head -c 200 "$BODY")"
	done
	note "503s from workers with a stale DB connection after start-db: $stale (pool of $NWORKERS)"
	expect_true "at most one 503 per worker after the DB is back ($stale <= $NWORKERS)" \
		test "$stale" -le "$NWORKERS"
	expect_eq "answers other than 200 or 503 service_unavailable after the DB is back" 0 "$other"
	expect_eq "the last $NWORKERS requests after recovery: all 200 (failures)" 0 "$last_bad"
}

# ---------------------------------------------------------------- restore on exit

LP_PID=
STOPPED=  # components this suite stopped and has not restarted yet ("db api")

# Components `tests/stack.sh status` reports running (mariadb api runner nginx ...). The
# suite needs mariadb, api and nginx; a runner, when the stack has one, is left alone
# but must still run at the end.
running_comps() {
	bash "$STACK" status 2>&1 | sed -n 's/^stack: \([a-z-]*\): running.*/\1/p' | tr '\n' ' '
}
has_comp() { [[ " $1 " == *" $2 "* ]]; }
core_up() {
	local r
	r=$(running_comps)
	has_comp "$r" mariadb && has_comp "$r" api && has_comp "$r" nginx
}
AT_START=$(running_comps)
runner_back() { ! has_comp "$AT_START" runner || has_comp "$(running_comps)" runner; }

restore_stack() {
	[ -n "$LP_PID" ] && kill "$LP_PID" 2> /dev/null
	if [ -n "${STOPPED// /}" ] || ! core_up || ! runner_back; then
		echo "# restoring the stack (stopped: ${STOPPED:-none}; running: $(running_comps))"
		bash "$STACK" start-db 2>&1 | sed 's/^/#   /'
		bash "$STACK" start-api 2>&1 | sed 's/^/#   /'
		if ! runner_back; then
			bash "$STACK" start-runner 2>&1 | sed 's/^/#   /'
		fi
		STOPPED=
		if health_poll 20; then
			echo "# stack restored: /v1/health 200"
		else
			echo "# WARNING: stack not healthy after restore: /v1/health $STATUS"
		fi
	fi
}
at_exit restore_stack
# A signal can land while stdout is redirected for one command (lib.sh's `_record`
# appends to responses.jsonl): restore the suite's own stdout/stderr before exiting.
exec {OUT_FD}>&1 {ERR_FD}>&2
trap 'exec 1>&"$OUT_FD" 2>&"$ERR_FD"; exit 130' INT TERM HUP

# ---------------------------------------------------------------- preconditions

if ! core_up || ! health_ok; then
	bash "$STACK" status 2>&1 | sed 's/^/# /'
	echo "Bail out! the stack is not running and healthy (running: $AT_START; health: $STATUS)"
	exit 2
fi
has_comp "$AT_START" runner && note "a runner runs: jobs will leave 'queued'"

# The suite's own key: its token is one of the secrets looked for in the logs.
mkkey KEY "faults-$RUN" "t-$RUN" user "u-$RUN"
TOKEN=$KEY_TOK

# Canaries: values that must never show up in any log.
FAKE_TOK="sbx_$(hex 32)"          # bearer token that is no key
URL_TOK="sbx_$(hex 32)"           # token-shaped, sent in a URL path and query
ENV_CANARY="CANARY_ENV_$(hex 12)" # a job env value (a secret by contract)
DB_PW=
{ read -r DB_PW < "$SANDBOX_VAR/db_password"; } 2> /dev/null || DB_PW=
IDEM_KEY="faults-idem-$RUN"

# ========================================================= 4a. secrets: the traffic
# (the logs are grepped at the end, after every other case has written its lines)

ctx "secrets traffic"
ENV_JOB=$(jq -cn --arg c "$ENV_CANARY" '{command:"echo hi", env:{CANARY:$c, OTHER:("x" + $c)}}')
req POST /v1/jobs "$ENV_JOB"
expect_status 202 "job with an env canary: 202"
expect_true "env is not echoed in the job object" fails grep -qF -- "$ENV_CANARY" "$BODY"
ENV_JOB_ID=$(jq -r '.id // empty' "$BODY")
req GET "/v1/jobs/$ENV_JOB_ID"
expect_status 200 "GET the env job: 200"
expect_true "GET does not echo env either" fails grep -qF -- "$ENV_CANARY" "$BODY"

req POST /v1/jobs "$ENV_JOB" -H "Idempotency-Key: $IDEM_KEY"
expect_status 202 "idempotent submit: 202"
IDEM_ID=$(jq -r '.id // empty' "$BODY")
req POST /v1/jobs "$ENV_JOB" -H "Idempotency-Key: $IDEM_KEY"
expect_status 202 "idempotent replay: 202"
expect_json .id "$IDEM_ID" "idempotent replay: same id"
expect_header Idempotent-Replayed '^true$'
req POST /v1/jobs "$(jq -cn --arg c "$ENV_CANARY" '{command:"echo other", env:{CANARY:$c}}')" \
	-H "Idempotency-Key: $IDEM_KEY"
expect_error 409 conflict

# Invalid bodies that carry the canary: a parser error, a validation error.
req POST /v1/jobs "{\"command\":\"echo hi\",\"env\":{\"CANARY\":\"$ENV_CANARY\""
expect_error 400 invalid_json
expect_true "invalid_json answer does not echo the env canary" fails grep -qF -- "$ENV_CANARY" "$BODY"
req POST /v1/jobs "{\"command\":\"echo hi\",\"env\":{\"1BAD\":\"$ENV_CANARY\"}}"
expect_error 400 invalid_request env
expect_true "invalid env answer does not echo the env canary" fails grep -qF -- "$ENV_CANARY" "$BODY"
req POST /v1/jobs "{\"command\":\"echo hi\",\"env\":{\"CANARY\":[\"$ENV_CANARY\"]}}"
expect_error 400 invalid_request env

# A bogus bearer token, and tokens in other shapes of Authorization header.
as "$FAKE_TOK" req GET /v1/jobs
expect_error 401 unauthorized
expect_header WWW-Authenticate 'invalid_token'
as "$FAKE_TOK" req POST /v1/jobs "$ENV_JOB"
expect_error 401 unauthorized
req GET /v1/jobs '' -H "Authorization: Token $FAKE_TOK"
expect_error 401 unauthorized
req GET /v1/jobs '' -H "Authorization: Bearer $FAKE_TOK $FAKE_TOK"
expect_error 401 unauthorized

# A token-shaped canary in the URL path and query (clients must never do this; the logs
# still must not keep it).
req GET "/v1/jobs/$URL_TOK?cursor=$URL_TOK"
expect_true "token in path and an unknown query parameter: 400 or 404 JSON error ($STATUS)" \
	eval '[[ $STATUS == 400 || $STATUS == 404 ]] && jq -e ".error.code | type == \"string\"" "$BODY"'
expect_true "token-in-URL answer does not echo the token" fails grep -qF -- "$URL_TOK" "$BODY"
req GET "/v1/jobs?cursor=$URL_TOK"
expect_true "bad cursor: 400" test "$STATUS" = 400
expect_true "bad cursor answer does not echo the token" fails grep -qF -- "$URL_TOK" "$BODY"
req GET "/v1/jobs/$URL_TOK/artifacts/$URL_TOK"
# nginx refuses token-shaped URLs itself, before proxying or rate limiting (both of
# which would copy the request line into the error log).
expect_error 400 invalid_request
expect_json '.error.message | test("must not be sent in URLs")' true

# ========================================================= 1. MariaDB down

ctx "db down"
STOPPED="$STOPPED db" # before: a stop cut short must be undone too
if ! stack stop-db; then
	expect_true "tests/stack.sh stop-db succeeds" false
else
	# shellcheck disable=SC2034 # read by req (lib.sh): bound every request to 10 s
	REQ_MAX_TIME=10
	as '' req GET /v1/health
	expect_error 503 service_unavailable
	expect_header Retry-After '^[0-9]+$'
	expect_true "health answered within 10 s (took ${ELAPSED}s)" test "$STATUS" != 000

	req GET /v1/jobs
	expect_error 503 service_unavailable
	expect_header Retry-After '^[0-9]+$'
	expect_true "GET /v1/jobs answered within 10 s (took ${ELAPSED}s)" test "$STATUS" != 000

	# Every worker: the ones whose connection died with the server and the ones that
	# must connect afresh. Secrets ride along (they must not be logged on error paths).
	bad=0
	for ((i = 0; i < NWORKERS + 2; i++)); do
		case $((i % 3)) in
		0) req GET /v1/jobs ;;
		1) req POST /v1/jobs "$ENV_JOB" ;;
		2) as "$FAKE_TOK" req GET "/v1/jobs/$(cat /proc/sys/kernel/random/uuid)?wait=2" ;;
		esac
		if [ "$STATUS" != 503 ] || [ "$(jq -r '.error.code?' "$BODY" 2> /dev/null)" != service_unavailable ] ||
			[ -z "$(hdr Retry-After)" ]; then
			bad=$((bad + 1))
			note "request $i: $LAST_REQ -> $STATUS $(head -c 200 "$BODY")"
		fi
	done
	expect_eq "$((NWORKERS + 2)) more requests (GET, POST with env, bogus token + wait): all 503 + Retry-After" 0 "$bad"
	unset REQ_MAX_TIME

	if ! stack start-db; then
		expect_true "tests/stack.sh start-db succeeds" false
	else
		STOPPED=${STOPPED/ db/}
		ctx "db back"
		t0=$(now_ms)
		# Health within ~10 s without touching the API.
		health_poll 10
		expect_true "health 200 within 10 s of start-db, API not restarted ($(($(now_ms) - t0)) ms)" \
			test "$STATUS" = 200
		expect_json .status ok
		expect_json .database ok
		# A submit within the same 10 s. A worker whose connection died with the old
		# server answers 503 once (docs/ARCHITECTURE.md): counted, then retried.
		stale=0
		while :; do
			req POST /v1/jobs "$ECHO_JOB"
			[ "$STATUS" = 202 ] && break
			[ "$STATUS" = 503 ] && stale=$((stale + 1))
			[ "$(now_ms)" -ge $((t0 + 10000)) ] && break
			sleep 0.2
		done
		expect_status 202 "submit 202 within 10 s of start-db"
		expect_json '.id | test("'"$UUID_RE"'")' true "submit returns a job id"
		pool_recovers "$stale"
	fi
fi

# The usual outage: the DB restarts while the pool is idle, so every worker still holds
# a connection to the old server. Each may answer one 503 (docs/ARCHITECTURE.md: it
# drops the connection, the next request reconnects); none may stay broken.
ctx "db restart, idle pool"
for ((i = 0; i < 2 * NWORKERS; i++)); do req GET /v1/jobs; done
expect_status 200 "warm-up: every worker has a connection"
STOPPED="$STOPPED db"
if stack stop-db; then
	if stack start-db; then
		STOPPED=${STOPPED/ db/}
		pool_recovers 0
	else
		expect_true "tests/stack.sh start-db succeeds" false
	fi
else
	expect_true "tests/stack.sh stop-db succeeds" false
fi

# ========================================================= 2. a worker crashes

ctx "worker crash"
MASTER=$(api_master)
mapfile -t BEFORE < <(children "${MASTER:-0}")
expect_true "API master runs (pid ${MASTER:-none})" test -n "$MASTER"
expect_eq "worker count is api_workers" "$NWORKERS" "${#BEFORE[@]}"
if [ -n "$MASTER" ] && [ "${#BEFORE[@]}" -gt 0 ]; then
	VICTIM=${BEFORE[$((RANDOM % ${#BEFORE[@]}))]}
	kill -KILL "$VICTIM"
	replaced() {
		local -a now
		alive "$VICTIM" && return 1
		mapfile -t now < <(children "$MASTER")
		[ "${#now[@]}" = "${#BEFORE[@]}" ] || return 1
		[[ " ${now[*]} " != *" $VICTIM "* ]]
	}
	poll 5 replaced
	mapfile -t AFTER < <(children "$MASTER")
	NEW=
	for p in "${AFTER[@]}"; do
		[[ " ${BEFORE[*]} " == *" $p "* ]] || NEW+="${NEW:+ }$p"
	done
	expect_true "master $MASTER still runs" alive "$MASTER"
	expect_true "victim $VICTIM is gone" fails alive "$VICTIM"
	expect_eq "worker count back to ${#BEFORE[@]} within 5 s" "${#BEFORE[@]}" "${#AFTER[@]}"
	expect_true "a new worker pid (${NEW:-none}) replaced $VICTIM" test -n "$NEW"
	expect_true "the pid file still names the master" test "$(api_master)" = "$MASTER"
	died_logged() { grep 'event=worker_died' "$API_LOG" 2> /dev/null | grep -E "pid=$VICTIM( |$)" > /dev/null; }
	poll 3 died_logged
	expect_true "api.log has event=worker_died for pid $VICTIM" died_logged
	grep 'event=worker_died' "$API_LOG" | grep -E "pid=$VICTIM( |$)" | tail -n 1 | sed 's/^/#   /'
	bad=0
	for ((i = 0; i < 2 * NWORKERS; i++)); do
		req GET /v1/jobs
		[ "$STATUS" = 200 ] || { bad=$((bad + 1)); note "$LAST_REQ -> $STATUS"; }
	done
	expect_eq "$((2 * NWORKERS)) requests after the crash: all 200 (failures)" 0 "$bad"
	req POST /v1/jobs "$ECHO_JOB"
	expect_status 202 "submit after the crash: 202"
fi

# ========================================================= 3. SIGTERM, request in flight

ctx "sigterm"
# A job that stays non-terminal for the whole case, with or without a runner: the
# long-poll cannot end by itself before the signal.
req POST /v1/jobs '{"command":"sleep 30","limits":{"wall_seconds":40}}'
expect_status 202 "submit a job to wait on"
LP_JOB=$(jq -r '.id // empty' "$BODY")
MASTER=$(api_master)
expect_true "API master runs (pid ${MASTER:-none})" test -n "$MASTER"
if [ -n "$LP_JOB" ] && [ -n "$MASTER" ]; then
	mapfile -t WORKERS < <(children "$MASTER")
	curl -sS --cacert "$SANDBOX_CACERT" --max-time 20 -H "Authorization: Bearer $TOKEN" \
		-o "$T_DIR/lp.body" -D "$T_DIR/lp.hdrs" -w '%{http_code} %{time_total}' \
		"$SANDBOX_URL/v1/jobs/$LP_JOB?wait=3" > "$T_DIR/lp.out" 2> "$T_DIR/lp.err" &
	LP_PID=$!
	sleep 0.5
	# Make sure the request has reached a worker before the signal (bounded).
	poll 2 api_conn_busy
	expect_true "the long-poll is in flight in a worker when SIGTERM is sent" \
		eval 'alive "$LP_PID" && api_conn_busy'
	t0=$(now_ms)
	STOPPED="$STOPPED api"
	kill -TERM "$MASTER"
	wait "$LP_PID"
	lp_rc=$?
	LP_PID=
	lp_code=000 lp_time=
	read -r lp_code lp_time < "$T_DIR/lp.out" || : # -w output has no newline
	[[ $lp_code =~ ^[0-9]{3}$ ]] || lp_code=000
	note "long-poll: curl exit $lp_rc, HTTP $lp_code after ${lp_time:-?}s, $(($(now_ms) - t0)) ms after SIGTERM"
	[ -s "$T_DIR/lp.err" ] && note "curl: $(head -c 300 "$T_DIR/lp.err")"
	expect_eq "in-flight long-poll completes with HTTP 200 (not 502)" 200 "$lp_code"
	expect_true "its body is the job (JSON, .id = $LP_JOB, .status queued|running: $(jq -r .status? "$T_DIR/lp.body" 2> /dev/null))" \
		jq -e --arg id "$LP_JOB" '.id == $id and (.status == "queued" or .status == "running")' "$T_DIR/lp.body"
	expect_true "its Content-Type is application/json" grep -qi '^content-type: *application/json' "$T_DIR/lp.hdrs"
	[ "$lp_code" = 200 ] || note "body: $(head -c 300 "$T_DIR/lp.body")"

	gone() { none_alive "$MASTER" "${WORKERS[@]}"; }
	poll 15 gone
	expect_true "master $MASTER and its ${#WORKERS[@]} workers exit within 15 s" gone
	if ! gone; then
		for p in "$MASTER" "${WORKERS[@]}"; do
			alive "$p" && note "still running: $p $(tr '\0' ' ' < "/proc/$p/cmdline" 2> /dev/null)"
		done
	fi
	expect_true "api.log has event=stopped from the master" \
		eval 'grep "event=stopped" "$API_LOG" | grep "pid=$MASTER " > /dev/null'
	expect_true "the API removed its pid file" test ! -e "$API_PID_FILE"

	if stack start-api; then
		STOPPED=${STOPPED/ api/}
		expect_true "tests/stack.sh start-api succeeds" true
	else
		expect_true "tests/stack.sh start-api succeeds" false
	fi
	health_poll 10
	expect_true "health 200 after start-api" test "$STATUS" = 200
	expect_true "a new API master runs" eval '[ -n "$(api_master)" ] && [ "$(api_master)" != "$MASTER" ]'
	req POST "/v1/jobs/$LP_JOB/cancel"
	expect_status 200 "cancel the sleeping job: 200"
fi

# ========================================================= 5. nginx's own errors

ctx "api down"
STOPPED="$STOPPED api" # before: a stop cut short must be undone too
if ! stack stop-api; then
	expect_true "tests/stack.sh stop-api succeeds" false
else
	# shellcheck disable=SC2034 # read by req (lib.sh): bound every request to 10 s
	REQ_MAX_TIME=10
	req GET /v1/jobs
	expect_error 502 bad_gateway
	expect_header Content-Type '^application/json'
	req POST /v1/jobs "$ENV_JOB"
	expect_error 502 bad_gateway
	as '' req GET /v1/health
	expect_error 502 bad_gateway
	# nginx's error log quotes the request line of a failed upstream connect: a
	# token-shaped URL must be refused before nginx tries the upstream.
	req GET "/v1/jobs/$URL_TOK?cursor=$URL_TOK"
	expect_error 400 invalid_request
	unset REQ_MAX_TIME
	if stack start-api; then
		STOPPED=${STOPPED/ api/}
		expect_true "tests/stack.sh start-api succeeds" true
	else
		expect_true "tests/stack.sh start-api succeeds" false
	fi
	health_poll 10
	expect_true "health 200 after start-api" test "$STATUS" = 200
fi

ctx "too large"
# 11 MiB of JSON (the env canary inside): nginx refuses it before the API sees it.
{
	printf '{"command":"echo hi","env":{"CANARY":"%s"},"stdin":"' "$ENV_CANARY"
	head -c $((11 * 1024 * 1024)) /dev/zero | tr '\0' 'a'
	printf '"}'
} > "$T_DIR/big.json"
req POST /v1/jobs "@$T_DIR/big.json"
expect_error 413 payload_too_large
ctx "too large, chunked (no Content-Length)"
req POST /v1/jobs "@$T_DIR/big.json" -H 'Transfer-Encoding: chunked'
expect_error 413 payload_too_large
ctx "too large"
rm -f "$T_DIR/big.json"
req GET /v1/jobs
expect_status 200 "the API still answers after the 413s"

# ========================================================= 6. FastCGI socket permissions

# Raw FastCGI clients (sections 6 and 7). Fed on stdin: a setpriv'd uid cannot read $T_DIR.
cat > "$T_DIR/fcgi.py" << 'PYEOF'
# Raw FastCGI clients for the faults suite (sections 6 and 7). Usage:
#   connect PATH                      one connect(): prints connected, or the errno name
#                                     (after an lstat that proves the path is reachable)
#   idle PATH COUNT MODE GIVEUP_S     COUNT connections that send nothing (MODE idle) or
#                                     4 bytes of a record header (MODE partial); prints
#                                     "ready", then one line per connection when the
#                                     server closes it: "closed EPOCH_MS", and "open" for
#                                     those still open after GIVEUP_S
#   slow PATH PAUSE_S                 GET /v1/health with a 10-byte body, sent in four
#                                     pieces PAUSE_S apart; prints the response's Status
#                                     line and body, or "closed without a response"
#   stall PATH GIVEUP_S               the same request's params and 3 of its 10 body bytes,
#                                     then nothing; prints "closed without a response",
#                                     "response: ...", or "open" after GIVEUP_S
#   behind PATH PAUSE_S               two connections B, A; A sends the slow request (as
#                                     slow), B its whole request while the worker reads
#                                     A; prints "a: " and "b: " with each one's answer
import errno, os, select, socket, struct, sys, time


def now_ms():
    return int(time.time() * 1000)


def record(rtype, content, rid=1):
    return struct.pack(">BBHHBB", 1, rtype, rid, len(content), 0, 0) + content


def nv(name, value):
    out = b""
    for s in (name, value):
        n = len(s)
        out += bytes([n]) if n < 128 else struct.pack(">I", n | 0x80000000)
    return out + name + value


def request_parts(body_len):
    params = b"".join(nv(k.encode(), v.encode()) for k, v in (
        ("REQUEST_METHOD", "GET"), ("REQUEST_URI", "/v1/health"),
        ("CONTENT_LENGTH", str(body_len)), ("SERVER_PROTOCOL", "HTTP/1.1")))
    begin = record(1, struct.pack(">HB5x", 1, 0))
    return begin + record(4, params), record(4, b""), b"x" * body_len


def read_response(s, giveup):
    """(stdout bytes, closed?) reading records until END_REQUEST or EOF."""
    s.settimeout(giveup)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        return None, False
    except ConnectionResetError:
        pass
    out, i = b"", 0
    while i + 8 <= len(data):
        _, rtype, _, clen, plen, _ = struct.unpack(">BBHHBB", data[i:i + 8])
        if rtype == 6:
            out += data[i + 8:i + 8 + clen]
        i += 8 + clen + plen
    return out, True


def describe(out):
    if not out:
        return "closed without a response"
    head, _, body = out.partition(b"\r\n\r\n")
    status = [l for l in head.split(b"\r\n") if l.lower().startswith(b"status:")]
    return "response: %s %s" % ((status[0] if status else b"(no status)").decode(),
                               body.decode(errors="replace").strip())


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "connect":
        try:
            os.lstat(path)
        except OSError as e:
            print("lstat " + errno.errorcode.get(e.errno, str(e.errno)))
            return
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            print("connected")
        except OSError as e:
            print(errno.errorcode.get(e.errno, str(e.errno)))
    elif cmd == "idle":
        count, mode, giveup = int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
        socks = []
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            if mode == "partial":
                s.sendall(b"\x01\x01\x00\x01")  # half of a BEGIN_REQUEST header
            socks.append(s)
        print("ready", flush=True)
        deadline, left = time.time() + giveup, list(socks)
        while left and time.time() < deadline:
            r, _, _ = select.select(left, [], [], max(0.0, deadline - time.time()))
            for s in r:
                try:
                    data = s.recv(4096)
                except ConnectionResetError:
                    data = b""
                if not data:
                    print("closed %d" % now_ms(), flush=True)
                    left.remove(s)
        for _ in left:
            print("open", flush=True)
    elif cmd == "slow":
        pause = float(sys.argv[3])
        head, end_params, body = request_parts(10)
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        pieces = [head[:5], head[5:], end_params + record(5, body[:4]),
                  record(5, body[4:]) + record(5, b"")]
        for i, p in enumerate(pieces):
            if i:
                time.sleep(pause)
            s.sendall(p)
        out, _ = read_response(s, 60)
        print(describe(out))
    elif cmd == "stall":
        giveup = float(sys.argv[3])
        head, end_params, body = request_parts(10)
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        s.sendall(head + end_params + record(5, body[:3]))
        out, closed = read_response(s, giveup)
        print(describe(out) if closed else "open")
    elif cmd == "behind":
        pause = float(sys.argv[3])
        head, end_params, body = request_parts(10)
        b = socket.socket(socket.AF_UNIX)
        b.connect(path)
        a = socket.socket(socket.AF_UNIX)
        a.connect(path)
        time.sleep(0.5)  # both accepted into the one worker's pool
        pieces = [head[:5], head[5:], end_params + record(5, body[:4]),
                  record(5, body[4:]) + record(5, b"")]
        a.sendall(pieces[0])
        time.sleep(0.2)  # the worker is reading A now
        b.sendall(head + end_params + record(5, body) + record(5, b""))
        for p in pieces[1:]:
            time.sleep(pause)
            a.sendall(p)
        out, _ = read_response(a, 60)
        print("a: " + describe(out))
        out, _ = read_response(b, 60)
        print("b: " + describe(out))


main()
PYEOF
fcgi() { "$PY" - "$@" < "$T_DIR/fcgi.py"; }
# fcgi_as_nobody GID ARGS...: the helper as uid 65534 with primary group GID and no others.
fcgi_as_nobody() {
	local gid=$1
	shift
	setpriv --reuid=65534 --regid="$gid" --clear-groups "$PY" - "$@" < "$T_DIR/fcgi.py"
}

ctx "socket permissions"
MASTER=$(api_master)
if [ -n "$SOCK_GROUP" ]; then
	WANT_GID=$(getent group "$SOCK_GROUP" | cut -d: -f3)
	WANT_WHAT="fcgi_socket_group $SOCK_GROUP"
else
	WANT_GID=$(awk '/^Gid:/ { print $3 }' "/proc/${MASTER:-0}/status" 2> /dev/null)
	WANT_WHAT="the API's own group"
fi
expect_eq "socket $API_SOCK mode" 660 "$(stat -c %a "$API_SOCK" 2> /dev/null)"
expect_eq "socket group is $WANT_WHAT (gid)" "${WANT_GID:-?}" "$(stat -c %g "$API_SOCK" 2> /dev/null)"
# A configured group shared by every "nobody" process would be as good as world.
[ -n "$SOCK_GROUP" ] && expect_true "fcgi_socket_group is not nogroup ($SOCK_GROUP)" \
	test "$(stat -c %g "$API_SOCK" 2> /dev/null)" != 65534
if [ "$(id -u)" != 0 ]; then
	skip "uid 65534 cannot connect" "not root: cannot switch to uid 65534"
	skip "uid 65534 with the socket's group connects" "not root"
elif ! command -v setpriv > /dev/null; then
	skip "uid 65534 cannot connect" "setpriv (util-linux) is missing"
	skip "uid 65534 with the socket's group connects" "setpriv is missing"
else
	# lstat succeeds first: the EACCES comes from the socket's mode, not a directory.
	expect_eq "uid 65534, gid 65534, no groups: connect() to the socket" EACCES \
		"$(fcgi_as_nobody 65534 connect "$API_SOCK" 2>&1)"
	expect_eq "uid 65534 with the socket's group ($(stat -c %G "$API_SOCK")) only: connect()" connected \
		"$(fcgi_as_nobody "$(stat -c %g "$API_SOCK")" connect "$API_SOCK" 2>&1)"
fi
# nginx's workers hold the socket's group (as root they are another user) or are the
# socket's owner (a stack run by an ordinary user).
NGX_MASTER=$(cat "$SANDBOX_VAR/run/nginx.pid" 2> /dev/null)
ngx_ok=0 ngx_n=0
for p in $(pgrep -P "${NGX_MASTER:-0}" 2> /dev/null); do
	ngx_n=$((ngx_n + 1))
	uid=$(awk '/^Uid:/ { print $3 }' "/proc/$p/status")
	gids=" $(awk '/^Gid:/ { print $3 } /^Groups:/ { $1 = ""; print }' "/proc/$p/status" | tr '\n' ' ') "
	if [ "$uid" = "$(stat -c %u "$API_SOCK")" ] || [[ $gids == *" $(stat -c %g "$API_SOCK") "* ]]; then
		ngx_ok=$((ngx_ok + 1))
	else
		note "nginx worker $p: uid $uid, gids$gids"
	fi
done
expect_true "nginx has workers ($ngx_n)" test "$ngx_n" -gt 0
expect_eq "nginx workers that own the socket or have its group" "$ngx_n" "$ngx_ok"
as '' req GET /v1/health
expect_status 200 "health through nginx with the 0660 socket"
req GET /v1/jobs
expect_status 200 "GET /v1/jobs through nginx with the 0660 socket"

ctx "socket group errors"
# A private config: another socket, one worker, a group that does not exist.
BAD_CONF=$T_DIR/badgroup.conf
BAD_SOCK=$T_DIR/badgroup.sock
{
	grep -Ev '^[[:space:]]*(fcgi_socket|fcgi_socket_group|api_workers)[[:space:]]*=' "$SANDBOX_CONFIG"
	printf 'fcgi_socket = %s\napi_workers = 1\nfcgi_socket_group = sbx-no-such-group-%s\n' "$BAD_SOCK" "$RUN"
} > "$BAD_CONF"
timeout 20 "$SANDBOX_BIN/sandbox-api" --config "$BAD_CONF" > "$T_DIR/badgroup.out" 2>&1
rc=$?
expect_eq "sandbox-api with an unknown fcgi_socket_group: exit status" 1 "$rc"
expect_true "its message names fcgi_socket_group and the group ($(head -c 300 "$T_DIR/badgroup.out"))" \
	grep -E "fcgi_socket_group: no group named 'sbx-no-such-group-$RUN'" "$T_DIR/badgroup.out"
expect_true "no socket is left behind" test ! -e "$BAD_SOCK"
# An API not in group root may not give its socket the group root: EPERM. As root,
# that API runs as uid 65534 without groups; otherwise as the invoking user.
NB_RUN=()
if [ "$(id -u)" = 0 ]; then
	command -v setpriv > /dev/null && NB_RUN=(setpriv --reuid=65534 --regid=65534 --clear-groups)
elif [[ " $(id -G) " != *" 0 "* ]]; then
	NB_RUN=(env)
fi
if [ "${#NB_RUN[@]}" = 0 ]; then
	skip "an API that may not chown its socket to the group refuses to start" \
		"root without setpriv, or a user in group root"
else
	NB_DIR=$(mktemp -d /tmp/sandbox-faults.XXXXXX)
	[ "$(id -u)" = 0 ] && chown 65534:65534 "$NB_DIR"
	printf 'fcgi_socket = %s/api.sock\napi_workers = 1\nfcgi_socket_group = root\n' "$NB_DIR" > "$NB_DIR/c.conf"
	chmod 0644 "$NB_DIR/c.conf"
	timeout 20 "${NB_RUN[@]}" "$SANDBOX_BIN/sandbox-api" --config "$NB_DIR/c.conf" > "$T_DIR/chown.out" 2>&1
	rc=$?
	expect_eq "sandbox-api not in group root, fcgi_socket_group = root: exit status" 1 "$rc"
	expect_true "its message names fcgi_socket_group and the chown error ($(head -c 300 "$T_DIR/chown.out"))" \
		grep -E "fcgi_socket_group: cannot give .* the group 'root'.*Operation not permitted" "$T_DIR/chown.out"
	expect_true "no socket is left behind" test ! -e "$NB_DIR/api.sock"
	rm -rf "$NB_DIR"
fi

# ========================================================= 7. read timeout

drops_with() { grep 'event=connection_dropped' "$API_LOG" 2> /dev/null | grep -c "reason=$1"; }

# pin_pool MODE: api_workers+2 raw connections (MODE idle: silent, they wait in the
# workers' connection pools and the HTTPS request after them is served at once;
# partial: half a record header, then silent, every worker blocks reading one and the
# request waits until the server drops them), all of them get closed by the server,
# and the same workers serve again.
pin_pool() {
	local mode=$1 reason=$2 n=$((NWORKERS + 2)) giveup=$((4 * READ_TIMEOUT + 30))
	local before_reason first closed open curl_end code i bad
	local -a workers_before workers_after
	ctx "read timeout: $n $mode connections"
	MASTER=$(api_master)
	mapfile -t workers_before < <(children "${MASTER:-0}")
	before_reason=$(drops_with "$reason")
	: > "$T_DIR/pin.out"
	fcgi idle "$API_SOCK" "$n" "$mode" "$giveup" > "$T_DIR/pin.out" 2>&1 &
	local pin_pid=$!
	poll 10 grep -q '^ready' "$T_DIR/pin.out"
	expect_true "$n raw connections are open ($(head -c 200 "$T_DIR/pin.out"))" grep -q '^ready' "$T_DIR/pin.out"
	# Queued behind all of them (the socket's backlog is FIFO).
	curl -sS --cacert "$SANDBOX_CACERT" --max-time $((giveup + 30)) -H "Authorization: Bearer $TOKEN" \
		-o "$T_DIR/pin.body" -w '%{http_code}' "$SANDBOX_URL/v1/jobs?limit=1" > "$T_DIR/pin.curl" 2>&1
	curl_end=$(now_ms)
	wait "$pin_pid"
	code=$(cat "$T_DIR/pin.curl")
	closed=$(grep -c '^closed' "$T_DIR/pin.out")
	open=$(grep -c '^open' "$T_DIR/pin.out")
	first=$(sed -n 's/^closed //p' "$T_DIR/pin.out" | sort -n | head -n 1)
	expect_eq "the HTTPS request behind them gets its answer (HTTP status)" 200 "$code"
	if [ "$mode" = idle ]; then
		# Silent connections wait in the workers' connection pools (app/http/api_main.c):
		# they hold no worker, so the request is served at once.
		expect_true "it was answered before the server dropped any of them (silent connections hold no worker: first drop ${first:-none}, answer $curl_end)" \
			test -n "$first" -a "$curl_end" -lt "${first:-0}"
	else
		expect_true "it was answered only after the server dropped the first of them (every worker reading a partial header: first drop ${first:-none}, answer $curl_end)" \
			test -n "$first" -a "$curl_end" -ge "${first:-0}"
	fi
	expect_eq "connections the server closed" "$n" "$closed"
	expect_eq "connections still open when the helper gave up" 0 "$open"
	expect_true "api.log: $n more event=connection_dropped reason=$reason lines ($(($(drops_with "$reason") - before_reason)))" \
		test $(($(drops_with "$reason") - before_reason)) -ge "$n"
	grep 'event=connection_dropped' "$API_LOG" | tail -n 1 | sed 's/^/#   /'
	mapfile -t workers_after < <(children "${MASTER:-0}")
	expect_eq "the same workers afterwards (no worker died or was replaced)" \
		"${workers_before[*]}" "${workers_after[*]}"
	bad=0
	for ((i = 0; i < 2 * NWORKERS; i++)); do
		req GET /v1/jobs
		[ "$STATUS" = 200 ] || { bad=$((bad + 1)); note "$LAST_REQ -> $STATUS"; }
	done
	expect_eq "$((2 * NWORKERS)) requests afterwards: all 200 (failures)" 0 "$bad"
}

if [ "$(id -u)" != 0 ] && [ "$(stat -c %u "$API_SOCK")" != "$(id -u)" ]; then
	skip "read timeout" "cannot connect to the 0660 socket as uid $(id -u)"
else
	note "api_read_timeout_seconds = $READ_TIMEOUT, api_workers = $NWORKERS"
	pin_pool idle idle
	pin_pool partial read_timeout

	ctx "read timeout: slow but active"
	# Four pieces, each pause shorter than the timeout, together longer than it.
	pause=$(awk -v t="$READ_TIMEOUT" 'BEGIN { printf "%.2f", t * 0.6 }')
	out=$(fcgi slow "$API_SOCK" "$pause" 2>&1)
	expect_true "a raw client pausing ${pause}s between pieces gets its answer ($out)" \
		eval '[[ $out == "response: Status: 200 "* && $out == *"\"status\":\"ok\""* ]]'

	ctx "read timeout: stalled body"
	n0=$(drops_with body_timeout)
	out=$(fcgi stall "$API_SOCK" $((4 * READ_TIMEOUT + 30)) 2>&1)
	expect_eq "a client that stops inside its body is dropped without an answer" \
		"closed without a response" "$out"
	expect_true "api.log: event=connection_dropped reason=body_timeout" \
		test $(($(drops_with body_timeout) - n0)) -ge 1

	ctx "read timeout: a request that came while the worker served another"
	# One worker: while it reads A's slow request (longer than the timeout in all), B's
	# whole request arrives on a connection it accepted before. B was not idle: it gets
	# its answer (it used to be closed as idle right after A: nginx's 502).
	BH_DIR=$(mktemp -d /tmp/sandbox-faults.XXXXXX)
	{
		grep -Ev '^[[:space:]]*(fcgi_socket|api_workers|api_wake_socket)[[:space:]]*=' "$SANDBOX_CONFIG"
		printf 'fcgi_socket = %s/api.sock\napi_workers = 1\n' "$BH_DIR"
	} > "$BH_DIR/c.conf"
	"$SANDBOX_BIN/sandbox-api" --config "$BH_DIR/c.conf" > "$BH_DIR/api.log" 2>&1 &
	BH_PID=$!
	poll 10 test -S "$BH_DIR/api.sock"
	expect_true "a one-worker API on its own socket ($(head -c 300 "$BH_DIR/api.log"))" test -S "$BH_DIR/api.sock"
	if [ -S "$BH_DIR/api.sock" ]; then
		pause=$(awk -v t="$READ_TIMEOUT" 'BEGIN { printf "%.2f", t * 0.6 }')
		fcgi behind "$BH_DIR/api.sock" "$pause" > "$T_DIR/behind.out" 2>&1
		expect_true "A, slow (3 pauses of ${pause}s), gets its answer ($(head -n 1 "$T_DIR/behind.out"))" \
			grep -q '^a: response: Status: 200 .*"status":"ok"' "$T_DIR/behind.out"
		expect_true "B, sent while the worker read A, gets its answer ($(sed -n 2p "$T_DIR/behind.out"))" \
			grep -q '^b: response: Status: 200 .*"status":"ok"' "$T_DIR/behind.out"
		expect_eq "no connection dropped as idle" 0 "$(grep -c 'event=connection_dropped' "$BH_DIR/api.log")"
	fi
	kill "$BH_PID" 2> /dev/null
	wait "$BH_PID" 2> /dev/null
	rm -rf "$BH_DIR"

	ctx "read timeout: long-poll through nginx"
	# A request the worker holds longer than the timeout without reading anything is
	# not a silent client: it must get its answer.
	req POST /v1/jobs '{"command":"sleep 30","limits":{"wall_seconds":40}}'
	expect_status 202 "submit a job to wait on"
	LPT_JOB=$(jq -r '.id // empty' "$BODY")
	if [ -n "$LPT_JOB" ]; then
		req GET "/v1/jobs/$LPT_JOB?wait=$((READ_TIMEOUT + 2))"
		expect_status 200 "GET ?wait=$((READ_TIMEOUT + 2)) (longer than the read timeout): 200"
		expect_json .id "$LPT_JOB"
		held=$(grep 'event=request' "$API_LOG" | grep -F "path=/v1/jobs/$LPT_JOB" | grep 'status=200' |
			tail -n 1 | sed -n 's/.* ms=\([0-9]*\).*/\1/p')
		expect_true "the API held it longer than the read timeout without dropping it (${held:-?} ms)" \
			test "${held:-0}" -ge $((READ_TIMEOUT * 1000))
		req POST "/v1/jobs/$LPT_JOB/cancel"
		expect_status 200 "cancel the sleeping job"
	fi
fi

# ========================================================= 4b. secrets: the logs

ctx "secrets in logs"
# A revoked key's token is sent once more (the auth failure path for a known key).
if ctl keys revoke "$KEY_ID" > "$T_DIR/revoke.out" 2>&1; then
	req GET /v1/jobs
	expect_error 401 unauthorized
else
	expect_true "sandboxctl keys revoke $KEY_ID" false
	sed 's/^/# /' "$T_DIR/revoke.out"
fi
# A last request, and wait until nginx has logged it (it logs after the response).
LAST_MARK="/v1/jobs?limit=1&faults=$RUN"
as "${SANDBOX_TOKEN:-}" req GET "$LAST_MARK"
logged_last() { grep -qF -- "$LAST_MARK" "$LOG_DIR/nginx-access.log" 2> /dev/null; }
poll 3 logged_last || note "nginx-access.log does not show $LAST_MARK"

# Look for the secret part: a logger that kept the hex after scrubbing "sbx_" still leaks.
secret_part() { printf '%s' "${1#sbx_}"; }
declare -A SECRETS=(
	["suite key token"]=$(secret_part "$KEY_TOK")
	["bogus bearer token"]=$(secret_part "$FAKE_TOK")
	["token-shaped canary in a URL"]=$(secret_part "$URL_TOK")
	["job env canary"]=$ENV_CANARY
)
[ -n "${SANDBOX_TOKEN:-}" ] && SECRETS["demo key token"]=$(secret_part "$SANDBOX_TOKEN")
if [ -n "$DB_PW" ]; then
	SECRETS["DB password"]=$DB_PW
else
	expect_true "$SANDBOX_VAR/db_password is readable" false
fi

shopt -s nullglob
LOGS=("$LOG_DIR"/*)
shopt -u nullglob
expect_true "there are log files in $LOG_DIR" test "${#LOGS[@]}" -gt 0
for f in "${LOGS[@]}"; do
	[ -f "$f" ] || continue
	for label in "${!SECRETS[@]}"; do
		s=${SECRETS[$label]}
		n=$(grep -cF -- "$s" "$f")
		expect_eq "no $label in $(basename "$f") (lines)" 0 "$n"
		if [ "$n" != 0 ]; then
			# Shown with the secret masked (the suite's output is a log too).
			grep -nF -- "$s" "$f" | tail -n 3 | sed "s/$s/<$label>/g; s/^/#   /" | cut -c 1-500
		fi
	done
done

# ========================================================= the stack is left healthy

ctx "end"
# Checked before restore_stack, which would start whatever is missing.
expect_true "mariadb, api and nginx run at the end ($(running_comps))" core_up
if has_comp "$AT_START" runner; then
	expect_true "the runner that ran at the start still runs (DB outage survived)" runner_back
fi
restore_stack
health_ok
expect_true "health 200 at the end" test "$STATUS" = 200
MASTER=$(api_master)
expect_eq "API workers at the end" "$NWORKERS" "$(children "${MASTER:-0}" | wc -l)"

finish
