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
# Cases 6 and 7 are in tests/integration/faults/fastcgi.sh, sourced in their place.
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

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env
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
# stop_comp COMP: tests/stack.sh stop-COMP, in STOPPED first (a stop cut short must be
# undone too); start_comp COMP: start-COMP, out of STOPPED. When it fails: a failing
# check and status 1.
stop_comp() {
	STOPPED="$STOPPED $1"
	stack "stop-$1" && return 0
	expect_true "tests/stack.sh stop-$1 succeeds" false
	return 1
}
start_comp() {
	if stack "start-$1"; then
		STOPPED=${STOPPED/ $1/}
		return 0
	fi
	expect_true "tests/stack.sh start-$1 succeeds" false
	return 1
}
# api_back: tests/stack.sh start-api, then health 200 within 10 s (a check each).
api_back() {
	start_comp api && expect_true "tests/stack.sh start-api succeeds" true
	health_poll 10
	expect_true "health 200 after start-api" test "$STATUS" = 200
}

# An established connection on the API's FastCGI socket (a request inside a worker).
# (No `| grep -q` anywhere: grep quitting early SIGPIPEs the writer and, under pipefail,
# fails the pipeline at random.)
api_conn_busy() { ss -xHp state established 2> /dev/null | grep -F -- "$API_SOCK " > /dev/null; }

# all_200 WHEN: 2 x api_workers GET /v1/jobs, each answered 200 (one check; a note per
# other answer).
all_200() {
	local bad=0 i
	for ((i = 0; i < 2 * NWORKERS; i++)); do
		req GET /v1/jobs
		[ "$STATUS" = 200 ] || { bad=$((bad + 1)); note "$LAST_REQ -> $STATUS"; }
	done
	expect_eq "$((2 * NWORKERS)) requests $1: all 200 (failures)" 0 "$bad"
}

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
if stop_comp db; then
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

	if start_comp db; then
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
if stop_comp db && start_comp db; then
	pool_recovers 0
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
	all_200 "after the crash"
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

	api_back
	expect_true "a new API master runs" eval '[ -n "$(api_master)" ] && [ "$(api_master)" != "$MASTER" ]'
	req POST "/v1/jobs/$LP_JOB/cancel"
	expect_status 200 "cancel the sleeping job: 200"
fi

# ========================================================= 5. nginx's own errors

ctx "api down"
if stop_comp api; then
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
	api_back
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

. "$(dirname "${BASH_SOURCE[0]}")/faults/fastcgi.sh"

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
