# tests/integration/lib.sh: a small test harness for the HTTP API (bash + curl + jq).
# shellcheck shell=bash disable=SC2034  # STATUS, ELAPSED, BODY, HDRS are for the suites
#
# Source it from a suite. Needs SANDBOX_URL (https://host:port, no trailing slash) and
# SANDBOX_CACERT. Every response is appended as one JSON line to $SANDBOX_RESPONSES
# (default $SANDBOX_VAR/test/responses.jsonl; the file is appended to, never truncated:
# whoever runs the suites decides when to start afresh), for tests/openapi_check.py:
#   {"method":"GET","path":"/v1/jobs?limit=2","status":200,
#    "content_type":"application/json","body":{...} | null,"raw_len":123}
#
#   req METHOD PATH [BODY] [curl args...]  -> $STATUS (000: no response, not recorded),
#                                           $ELAPSED (s), $BODY (file), $HDRS (file)
#       BODY '' sends no body (give it when curl args follow); '@file' sends the file's
#       bytes; anything else is sent as is.
#       Sends "Authorization: Bearer $TOKEN" when $TOKEN is non-empty and
#       "Content-Type: application/json" with a body, unless the curl args carry their own
#       Authorization / Content-Type header ('-H Content-Type:' sends none at all).
#       An nginx 429 rate_limited answer is retried (REQ_RETRY_429=0 turns that off).
#   as TOKEN command...                 run a command (usually req) with $TOKEN set
#   ctx "label"                         prefix for the names of the following checks
#   hdr NAME                            last value of a response header ('' if absent)
#   expect_status N [name]
#   expect_json JQ_EXPR VALUE [name]    compares `jq -r JQ_EXPR $BODY` with VALUE
#   expect_header NAME REGEX [name]     extended regex against the header's value
#   expect_error STATUS CODE [FIELD]    status, .error.code (CODE may list alternatives
#                                       a|b), .error.field (FIELD '' = no field), JSON type
#   expect_eq name EXPECTED GOT
#   expect_true name command...         ok when the command exits 0
#   skip NAME REASON                    a visible skip ("ok - NAME # SKIP REASON"), never
#                                       counted as passed; finish says how many
#   ci_skip NAME REASON                 skip, but a failing check when CI=true (where the
#                                       stack is expected to run everything)
#   tap_relay NAME SCRIPT RC OUTPUT      a client script's "ok - X" / "not ok - X" lines as
#                                       checks "NAME: X"; its exit status RC and closing
#                                       "all passed" line checked too
#   finish                              prints "N passed, M failed"; non-zero if M>0 or N==0
# Output is TAP-like: "ok - name" or "not ok - name: expected X, got Y" followed by the
# request and the response body as '#' comment lines.

: "${SANDBOX_VAR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/var}"
: "${SANDBOX_RESPONSES:=$SANDBOX_VAR/test/responses.jsonl}"
: "${TOKEN:=}"
mkdir -p "$(dirname "$SANDBOX_RESPONSES")"

# SANDBOX_TIME_SCALE: one whole number by which the suites' time limits are multiplied
# (poll, await and wait_state deadlines, curl's --max-time, and every "within N" window
# written as $(tscale N)); 1 (the default, the host) = exactly the values written. The
# test VM's full run sets it (tests/vm/full.sh: TCG runs guest code 10-20x slower).
# Lower bounds ("it waited at least 0.8 s") are never scaled.
#   tscale N [MAX]   N x SANDBOX_TIME_SCALE (N may have decimals), at most MAX: a
#                    window that must stay below a server-side deadline names it
: "${SANDBOX_TIME_SCALE:=1}"
[[ $SANDBOX_TIME_SCALE =~ ^[1-9][0-9]{0,2}$ ]] || {
	echo "Bail out! SANDBOX_TIME_SCALE must be a whole number from 1 to 999, not '$SANDBOX_TIME_SCALE'"
	exit 2
}
TSCALE=$SANDBOX_TIME_SCALE
tscale() {
	if [ "$TSCALE" = 1 ]; then
		printf '%s' "$1"
	else
		awk -v n="$1" -v s="$TSCALE" -v m="${2-}" 'BEGIN { v = n * s; if (m != "" && v > m + 0) v = m + 0; printf "%.10g", v }'
	fi
}

T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/sandbox-it.XXXXXX")
BODY=$T_DIR/body
HDRS=$T_DIR/headers
STATUS=000
ELAPSED=0
LAST_REQ=
CTX=
PASSED=0
FAILED=0
_AT_EXIT=()

# at_exit COMMAND: run COMMAND (a string, eval'd) when the shell exits, before cleanup.
at_exit() { _AT_EXIT+=("$1"); }
_lib_exit() {
	local c
	for c in "${_AT_EXIT[@]}"; do eval "$c"; done
	rm -rf "$T_DIR"
}
trap _lib_exit EXIT

ctx() { CTX=$1; }
as() { local TOKEN=$1; shift; "$@"; }

# hdr NAME [FILE]: value of the last NAME header (case-insensitive), CR and padding stripped.
hdr() {
	awk -v n="$(printf '%s' "$1" | tr 'A-Z' 'a-z')" '
		{ sub(/\r$/, "") }
		{ i = index($0, ":"); if (i == 0) next
		  k = tolower(substr($0, 1, i - 1))
		  if (k == n) { v = substr($0, i + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); last = v; found = 1 } }
		END { if (found) print last }' "${2:-$HDRS}"
}

# Keep only the last header block (drops "100 Continue" and the like).
_last_block() {
	awk '/^HTTP\// { n++; buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' \
		"$HDRS.raw" > "$HDRS" 2>/dev/null || : > "$HDRS"
}

# _record METHOD PATH: one JSON line describing the last response.
_record() {
	local ct len
	ct=$(hdr Content-Type)
	len=$(wc -c < "$BODY")
	if [[ "${ct,,}" != application/octet-stream* ]] &&
		jq -e -s 'length == 1' "$BODY" > /dev/null 2>&1; then
		jq -cn --arg m "$1" --arg p "$2" --argjson s "$((10#$STATUS))" --arg ct "$ct" \
			--argjson len "$len" --slurpfile b "$BODY" \
			'{method:$m, path:$p, status:$s, content_type:(if $ct == "" then null else $ct end),
			  body:$b[0], raw_len:$len}'
	else
		jq -cn --arg m "$1" --arg p "$2" --argjson s "$((10#$STATUS))" --arg ct "$ct" \
			--argjson len "$len" \
			'{method:$m, path:$p, status:$s, content_type:(if $ct == "" then null else $ct end),
			  body:null, raw_len:$len}'
	fi >> "$SANDBOX_RESPONSES"
}

req() {
	local method=$1 path=$2 body=${3-} a out rc tries=0 has_ct=0 has_auth=0
	shift $(($# >= 3 ? 3 : $#))
	for a in "$@"; do
		case "${a,,}" in
		content-type:*) has_ct=1 ;;
		authorization:*) has_auth=1 ;;
		esac
	done
	local -a args=(-sS --cacert "$SANDBOX_CACERT" -o "$BODY" -D "$HDRS.raw"
		-w '%{http_code} %{time_total}' -X "$method" --max-time "$((${REQ_MAX_TIME:-60} * TSCALE))")
	if [ -n "$TOKEN" ] && [ "$has_auth" = 0 ]; then
		args+=(-H "Authorization: Bearer $TOKEN")
	fi
	if [ -n "$body" ]; then
		if [ "${body:0:1}" = @ ]; then
			args+=(--data-binary "$body")
		else
			printf '%s' "$body" > "$BODY.req"
			args+=(--data-binary "@$BODY.req")
		fi
		[ "$has_ct" = 0 ] && args+=(-H 'Content-Type: application/json')
	fi
	LAST_REQ="$method $path"
	while :; do
		: > "$BODY"
		: > "$HDRS.raw"
		out=$(curl "${args[@]}" "$@" "$SANDBOX_URL$path" 2> "$BODY.err")
		rc=$?
		STATUS=${out%% *}
		ELAPSED=${out#* }
		[[ "$STATUS" =~ ^[0-9]{3}$ ]] || STATUS=000
		_last_block
		if [ "$rc" != 0 ]; then
			echo "# curl exit $rc on $LAST_REQ: $(head -c 300 "$BODY.err")"
		fi
		if [ "$STATUS" = 429 ] && [ "${REQ_RETRY_429:-1}" = 1 ] && [ "$tries" -lt 20 ] &&
			[ "$(jq -r '.error.code?' "$BODY" 2> /dev/null)" = rate_limited ]; then
			tries=$((tries + 1))
			sleep 0.5
			continue
		fi
		break
	done
	[ "$tries" -gt 0 ] && echo "# $LAST_REQ: retried $tries time(s) after nginx 429"
	[ "$STATUS" = 000 ] || _record "$method" "$path"
	return 0
}

tap_relay() {
	local name=$1 script=$2 rc=$3 out=$4 line
	while IFS= read -r line; do
		case $line in
		"ok - "*) _ok "$name: ${line#ok - }" ;;
		"not ok - "*) _notok "$name: ${line#not ok - }" "ok" "not ok" 0 ;;
		esac
	done <<< "$out"
	if [ "$rc" != 0 ] || [ "$(tail -1 <<< "$out")" != "all passed" ]; then
		_notok "$name: $(basename "$script")" "exit 0 and \"all passed\"" \
			"exit $rc: $(grep -v '^ok - ' <<< "$out" | head -8)" 0
	fi
}

_name() { printf '%s' "${CTX:-$LAST_REQ}: $1"; }
_ok() {
	PASSED=$((PASSED + 1))
	echo "ok - $1"
}
# _notok NAME EXPECTED GOT [dump]
_notok() {
	FAILED=$((FAILED + 1))
	echo "not ok - $1: expected ${2//$'\n'/\\n}, got ${3//$'\n'/\\n}"
	if [ "${4:-1}" = 1 ]; then
		echo "#   request: $LAST_REQ -> $STATUS"
		echo "#   body: $(head -c 1500 "$BODY" | cat -v | tr '\n' ' ')"
	fi
}

expect_eq() {
	if [ "$2" = "$3" ]; then _ok "$1"; else _notok "$1" "$2" "$3" 0; fi
}

expect_true() {
	local name=$1
	shift
	if "$@" > /dev/null 2>&1; then _ok "$name"; else _notok "$name" "success" "failure of: $*" 0; fi
}

expect_status() {
	local name
	name=$(_name "${2:-status $1}")
	if [ "$STATUS" = "$1" ]; then _ok "$name"; else _notok "$name" "$1" "$STATUS"; fi
}

expect_json() {
	local got name
	name=$(_name "${3:-$1 == ${2//$'\n'/, }}")
	got=$(jq -r "$1" "$BODY" 2>&1 | head -c 2000)
	if [ "$got" = "$2" ]; then _ok "$name"; else _notok "$name" "$2" "$got"; fi
}

expect_header() {
	local v name
	name=$(_name "${3:-header $1 ~ /$2/}")
	v=$(hdr "$1")
	if grep -qi "^$1:" "$HDRS" && printf '%s' "$v" | grep -Eq -- "$2"; then
		_ok "$name"
	else
		_notok "$name" "$1 matching /$2/" "$(grep -qi "^$1:" "$HDRS" && printf '%s' "'$v'" || echo "no $1 header")"
	fi
}

expect_error() {
	local want_status=$1 want_code=$2 check_field=0 want_field='' code field ct got want name
	if [ $# -ge 3 ]; then
		check_field=1
		want_field=$3
	fi
	code=$(jq -r '.error.code? // "(none)"' "$BODY" 2> /dev/null || echo "(not json)")
	field=$(jq -r '.error.field? // ""' "$BODY" 2> /dev/null)
	ct=$(hdr Content-Type)
	want="$want_status $want_code"
	got="$STATUS $code"
	if [ "$check_field" = 1 ]; then
		want+=" field=${want_field:-(none)}"
		got+=" field=${field:-(none)}"
	fi
	want+=" application/json"
	got+=" ${ct:-(no content-type)}"
	name=$(_name "$want")
	if [ "$STATUS" = "$want_status" ] && [[ "|$want_code|" == *"|$code|"* ]] &&
		{ [ "$check_field" = 0 ] || [ "$field" = "$want_field" ]; } &&
		[[ "${ct,,}" =~ ^application/json([[:space:]]*\;.*)?$ ]] &&
		jq -e '.error.message | type == "string"' "$BODY" > /dev/null 2>&1; then
		_ok "$name"
	else
		_notok "$name" "$want (and a string .error.message)" "$got"
	fi
}

# skip NAME REASON: a check that cannot run here: visible, never counted as passed.
SKIPPED=0
skip() {
	SKIPPED=$((SKIPPED + 1))
	echo "ok - $1 # SKIP $2"
}
# ci_skip NAME REASON: in CI (CI=true) the stack is expected to run every check, so what
# would be a skip is a failure there.
ci_skip() {
	if [ "${CI:-}" = true ]; then
		_notok "$1" "the check to run (CI=true)" "skipped: $2" 0
	else
		skip "$1" "$2"
	fi
}

# A suite that calls a function that does not exist (a typo, a lost definition)
# must fail, not skip its checks in silence. bash runs this handler in a subshell:
# it leaves a mark that finish turns into a failed check.
command_not_found_handle() {
	printf '%s\n' "$1" >> "$T_DIR/not-found"
	echo "# command not found: $1" >&2
	return 127
}

finish() {
	if [ -s "$T_DIR/not-found" ]; then
		_notok "every command the suite called exists" "none missing" \
			"$(sort -u "$T_DIR/not-found" | tr '\n' ' ')"
	fi
	[ "$SKIPPED" -gt 0 ] && echo "# $SKIPPED check(s) skipped (see # SKIP above)"
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
}

# ---- the stack a suite runs against (every suite's preamble)
#
#   stack_env [--root WHY] [--token] [NAME...]
#       env.sh's load_stack_env: the stack's SANDBOX_URL, SANDBOX_CACERT, SANDBOX_CONFIG,
#       SANDBOX_DB_SOCKET and NAME... (Bail out! when one is missing); REPO, SANDBOX_VAR
#       and SANDBOX_BIN as env.sh sets them. --root: Bail out! unless root (WHY says why
#       it must be). --token: TOKEN (what req sends) is the stack's own key,
#       SANDBOX_TOKEN. Sets STACK (tests/stack.sh) and RUNNER (the runner binary).
#   need_no_runner               Bail out! when the stack's runner runs (a suite that needs
#                                a frozen queue: tests/run-integration.sh stops it)
#   runner_conf                  UID_BASE, SLOTS, CG_NAME, STATE_DIR: the runner's slot
#                                uids, slot count, cgroup name and state directory
#   runner_pid                   the stack's runner's pid (its pid file names a live
#                                sandbox-runner), or status 1
#   keep_runner                  at exit, SIGTERM to EXTRA_PIDS (runners of the suite's
#                                own) and the stack's runner started again when the suite
#                                stopped it (RUNNER_STOPPED=1) or it is not running
#   own_runner NAME LINE         a runner of the suite's own, in the background (setsid):
#                                its config $T_DIR/NAME.conf is the stack's plus LINE, its
#                                log $T_DIR/NAME-runner.log; its pid OWN_PID, in EXTRA_PIDS
_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
TS_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z$'

stack_env() {
	local root= token=0 names=(SANDBOX_URL SANDBOX_CACERT)
	while :; do
		case ${1-} in
		--root) root=$2 && shift 2 ;;
		--token) token=1 && shift ;;
		*) break ;;
		esac
	done
	[ "$token" = 1 ] && names+=(SANDBOX_TOKEN)
	names+=(SANDBOX_CONFIG SANDBOX_DB_SOCKET "$@")
	# shellcheck source=tests/integration/env.sh
	. "$_LIB_DIR/env.sh"
	load_stack_env "${names[@]}"
	[ -z "$root" ] || need_root "$root"
	[ "$token" = 0 ] || TOKEN=$SANDBOX_TOKEN
	STACK="$REPO/tests/stack.sh"
	RUNNER="$SANDBOX_BIN/sandbox-runner"
}

need_no_runner() {
	if [ -r "$SANDBOX_VAR/run/runner.pid" ] &&
		[ "$(ps -o comm= -p "$(cat "$SANDBOX_VAR/run/runner.pid")" 2> /dev/null)" = sandbox-runner ]; then
		echo "Bail out! a runner is running for $SANDBOX_VAR: stop it first (tests/stack.sh stop-runner)"
		exit 2
	fi
}

runner_conf() {
	UID_BASE=$(conf_get runner_uid_base 200000)
	SLOTS=$(conf_get runner_slots 2)
	CG_NAME=$(conf_get runner_cgroup_name sandbox)
	STATE_DIR=$(conf_get runner_state_dir /var/lib/sandbox-runner)
}

runner_pid() {
	local pid
	{ read -r pid < "$SANDBOX_VAR/run/runner.pid"; } 2> /dev/null || return 1
	alive "$pid" && [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = sandbox-runner ] || return 1
	echo "$pid"
}

_restore_runner() {
	local p
	for p in "${EXTRA_PIDS[@]}"; do alive "$p" && kill -TERM "$p" 2> /dev/null; done
	if [ "$RUNNER_STOPPED" = 1 ] || ! runner_pid > /dev/null; then
		bash "$STACK" start-runner > /dev/null 2>&1 || echo "# could not restart the stack's runner"
	fi
}
keep_runner() {
	RUNNER_STOPPED=0
	EXTRA_PIDS=()
	at_exit _restore_runner
}

own_runner() {
	local conf=$T_DIR/$1.conf
	cp "$SANDBOX_CONFIG" "$conf"
	echo "$2" >> "$conf"
	(cd "$T_DIR" && exec setsid "$RUNNER" --config "$conf" < /dev/null >> "$T_DIR/$1-runner.log" 2>&1) &
	OWN_PID=$!
	EXTRA_PIDS+=("$OWN_PID")
}

# ---- helpers shared by the suites that drive the stack itself

# stack CMD: tests/stack.sh CMD for this $SANDBOX_VAR, its output as '#' comments.
stack() {
	local rc
	bash "${STACK:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/stack.sh}" "$1" \
		> "$T_DIR/stack.out" 2>&1
	rc=$?
	sed 's/^/#   /' "$T_DIR/stack.out"
	return "$rc"
}

# alive PID: exists and is not a zombie.
alive() {
	local stat
	[[ ${1:-} =~ ^[0-9]+$ ]] || return 1
	{ read -r stat < "/proc/$1/stat"; } 2> /dev/null || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}
# none_alive PID...: none of them is alive.
none_alive() {
	local p
	for p in "$@"; do alive "$p" && return 1; done
	return 0
}

# ---- helpers shared by the suites (one definition each; the suites source this file)
#
#   note TEXT...                 a '#' comment line in the output
#   now_ms                       milliseconds since the epoch
#   fails COMMAND...             true when COMMAND fails (for expect_true)
#   poll SECONDS COMMAND...      runs COMMAND every $POLL_EVERY s (0.1) until it succeeds
#                                (0) or the time (x SANDBOX_TIME_SCALE) is up (1)
#   conf_get KEY [DEFAULT]       last value of KEY in $SANDBOX_CONFIG (comments and edge
#                                white space stripped), else DEFAULT
#   ctl ARGS...                  $SANDBOX_BIN/sandboxctl --config $SANDBOX_CONFIG ARGS
#   mkkey VAR NAMESPACE TENANT SUBJECT_TYPE SUBJECT_ID [keys create options...]
#                                a new API key: VAR_ID, VAR_TOK (Bail out! if it fails)
#   sql STATEMENTS               as root over $SANDBOX_DB_SOCKET, database sandbox,
#                                tab-separated rows without column names
#   submit BODY [curl args...]   POST /v1/jobs as $TOKEN; $JOB is the new id. Anything but
#                                202 with an id is a failing check ("submit BODY...") and
#                                leaves JOB='' and status 1; a 202 records no check.
#   TERMINAL_RE                  the terminal job states
#   await ID [SECONDS]           long-polls (wait=30) until the job is terminal, at most
#                                SECONDS (90, x SANDBOX_TIME_SCALE); $BODY holds the last answer; status 1 if never
#   state_of ID / db_state ID    the job's status through the API / its jobs.state in SQL
#   wait_state ID STATE SECONDS  polls state_of until it is STATE; wait_db_state likewise
#                                with db_state (for a job whose key no longer answers)
#   hexs STRING / hexf FILE      the bytes as lowercase hex (for SQL X'...' literals)
#   uuid                         a fresh random UUID
#   in_range X LO HI             LO <= X <= HI (numbers, decimals too)
#   UUID_RE, TS_RE               an id, a timestamp as the API writes them (above)

note() { echo "# $*"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
fails() { ! "$@"; }

poll() {
	local deadline=$(($(now_ms) + $1 * 1000 * TSCALE))
	shift
	while :; do
		"$@" && return 0
		[ "$(now_ms)" -ge "$deadline" ] && return 1
		sleep "${POLL_EVERY:-0.1}"
	done
}

conf_get() {
	local v
	v=$(awk -v k="$1" '{ sub(/#.*/, ""); i = index($0, "="); if (!i) next
		kk = substr($0, 1, i - 1); gsub(/[ \t]/, "", kk)
		if (kk == k) { vv = substr($0, i + 1); gsub(/^[ \t]+|[ \t]+$/, "", vv); print vv } }' \
		"$SANDBOX_CONFIG" 2> /dev/null | tail -n 1)
	printf '%s' "${v:-${2-}}"
}

ctl() { "${SANDBOX_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}/sandboxctl" --config "$SANDBOX_CONFIG" "$@"; }
# mkkey VAR NAMESPACE TENANT SUBJECT_TYPE SUBJECT_ID [sandboxctl options...]
# sets VAR_ID and VAR_TOK; a suite cannot go on without its keys (Bail out!).
mkkey() {
	local var=$1 out
	shift
	if ! out=$(ctl keys create --namespace "$1" --tenant "$2" --subject-type "$3" \
		--subject-id "$4" "${@:5}" --json) ||
		! jq -e '(.id | type == "string") and (.token | type == "string")' <<< "$out" > /dev/null 2>&1; then
		echo "Bail out! sandboxctl keys create $* --json failed: $out"
		finish
		exit 2
	fi
	printf -v "${var}_ID" '%s' "$(jq -r .id <<< "$out")"
	printf -v "${var}_TOK" '%s' "$(jq -r .token <<< "$out")"
}

# expect_promtool NAME FILE: `promtool check metrics` (Debian's prometheus package,
# tests/deps.sh) finds nothing wrong in FILE, a GET /metrics body: its own output
# (each refused series and why) is what the failure shows.
expect_promtool() {
	local out
	if ! command -v promtool > /dev/null; then
		_notok "$1" "promtool installed" "no promtool: bash tests/deps.sh (prometheus)" 0
		return
	fi
	out=$(promtool check metrics < "$2" 2>&1)
	expect_eq "$1" "rc=0" "rc=$?${out:+ $out}"
}

# SQL_DB names another database of the stack's server (default: the service's).
sql() { mariadb --no-defaults -S "$SANDBOX_DB_SOCKET" -u root -N -B "${SQL_DB:-sandbox}" -e "$1"; }
hexs() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
hexf() { od -An -v -tx1 < "$1" | tr -d ' \n'; }
uuid() { cat /proc/sys/kernel/random/uuid; }
in_range() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

submit() {
	req POST /v1/jobs "$1" "${@:2}"
	JOB=$(jq -r '.id // empty' "$BODY" 2> /dev/null)
	if [ "$STATUS" != 202 ] || [ -z "$JOB" ]; then
		_notok "$(_name "submit $(head -c 80 <<< "$1")")" "202 with an id" "$STATUS"
		JOB=
		return 1
	fi
}

TERMINAL_RE='^(succeeded|failed|timed_out|output_limit|resource_limit|blocked|error|cancelled|lost)$'

# _await_status PATH SECONDS OK_RE FAIL_RE PAUSE: GETs PATH (a long-poll) until its
# .status matches OK_RE (0), or FAIL_RE ('': none) or SECONDS passed (1); PAUSE s
# between answers other than 200. $BODY holds the last answer.
_await_status() {
	local end=$((SECONDS + $2)) st
	while :; do
		req GET "$1"
		st=$(jq -r '.status // empty' "$BODY" 2> /dev/null)
		[[ $st =~ $3 ]] && return 0
		[ -n "$4" ] && [[ $st =~ $4 ]] && return 1
		[ "$SECONDS" -ge "$end" ] && return 1
		[ "$STATUS" = 200 ] || sleep "$5"
	done
}

await() {
	[ -n "$1" ] || { echo '{}' > "$BODY"; return 1; }
	_await_status "/v1/jobs/$1?wait=30" $((${2:-90} * TSCALE)) "$TERMINAL_RE" '' 0.5
}

state_of() {
	req GET "/v1/jobs/$1"
	jq -r '.status // empty' "$BODY" 2> /dev/null
}
db_state() { sql "SELECT state FROM jobs WHERE id = '$1'"; }
_state_is() { [ "$("$1" "$2")" = "$3" ]; }
wait_state() { poll "$3" _state_is state_of "$1" "$2"; }
wait_db_state() { poll "$3" _state_is db_state "$1" "$2"; }

# ---- playing the runner (api.sh)
#
# The API suite needs a frozen queue (no runner), yet running and finished jobs: it
# writes what the runner's claim and result transactions write (docs/ARCHITECTURE.md,
# "Claim contract"), as root over the socket, with runner_id 'itest-runner'. These are
# deliberate stand-ins for sandbox-runner/job/store.c: when its transactions change, change
# these with them.
#
#   db_run ID                    the claim: queued -> running, lease 10 min, attempt 1,
#                                and its job_events row
#   db_finish ID STATE EXIT_CODE SIGNAL STDOUT_HEX STDERR_HEX DIAGNOSTICS_JSON [FAILURE_JSON]
#                                the result transaction: terminal state, job_results,
#                                job_output (one chunk per stream), job_events; SIGNAL and
#                                EXIT_CODE are SQL (NULL for none)
#   db_artifact ID PATH FILE     one artifact of FILE's bytes (job_artifacts, one chunk)

db_run() {
	sql "UPDATE jobs SET state='running', started_at=NOW(3), runner_id='itest-runner',
		lease_expires_at=NOW(3) + INTERVAL 10 MINUTE, attempt=1 WHERE id='$1' AND state='queued';
		INSERT INTO job_events (job_id, from_state, to_state, actor)
		VALUES ('$1', 'queued', 'running', 'runner:itest-runner');"
}
db_finish() {
	local fail=NULL
	[ -n "${8:-}" ] && fail="X'$(hexs "$8")'"
	sql "START TRANSACTION;
		UPDATE jobs SET state='$2', started_at=COALESCE(started_at, NOW(3) - INTERVAL 2 SECOND),
			finished_at=NOW(3), runner_id='itest-runner', lease_expires_at=NULL, attempt=1
			WHERE id='$1';
		INSERT INTO job_results (job_id, exit_code, term_signal, stdout_bytes, stderr_bytes,
			stdout_truncated, stderr_truncated, diagnostics_json, wall_ms, cpu_ms,
			memory_peak_bytes, failure_json)
		VALUES ('$1', $3, $4, LENGTH(X'$5'), LENGTH(X'$6'), 0, 0, X'$(hexs "$7")', 12, 9,
			2097152, $fail);
		INSERT INTO job_output (job_id, stream, off, data)
			SELECT '$1', 1, 0, X'$5' FROM DUAL WHERE LENGTH(X'$5') > 0;
		INSERT INTO job_output (job_id, stream, off, data)
			SELECT '$1', 2, 0, X'$6' FROM DUAL WHERE LENGTH(X'$6') > 0;
		INSERT INTO job_events (job_id, from_state, to_state, actor)
		VALUES ('$1', 'running', '$2', 'runner:itest-runner');
		COMMIT;"
}
db_artifact() {
	sql "INSERT INTO job_artifacts (job_id, path, size, sha256)
		VALUES ('$1', X'$(hexs "$2")', $(wc -c < "$3"), '$(sha256sum "$3" | cut -d' ' -f1)');
		INSERT INTO job_artifact_chunks (job_id, path, off, data)
		VALUES ('$1', X'$(hexs "$2")', 0, X'$(hexf "$3")');"
}

# ---- sessions (sessions.sh, security.sh)
#
#   screate BODY -> $SID (201)       sready SID [S]: GET ?wait until ready ($BODY)
#   srun SID BODY -> $CID, $CPID     sawait SID CID [S]: GET ?wait until it ended
#   sout SID CID STREAM OFF [QUERY]: one slice (base64) into $OUTF
#   sall SID CID STREAM: the whole stream on stdout   sexec SID CMD [S]: run, wait, $OUT
#   sstatus / cstatus ID: the row's status (SQL)      sslot SID: its slot
#   uid_procs UID, sup_pid SID

SESSION_TERMINAL_RE='^(closed|expired|failed|lost)$'
CMD_TERMINAL_RE='^(succeeded|failed|timed_out|output_limit|killed|cancelled|error|lost)$'

# screate BODY: POST /v1/sessions -> $SID (201), else fails a check.
screate() {
	req POST /v1/sessions "$1"
	SID=$(jq -r '.id // empty' "$BODY" 2> /dev/null)
	if [ "$STATUS" != 201 ] || [ -z "$SID" ]; then
		_notok "$(_name "create session $(head -c 80 <<< "$1")")" "201 with an id" "$STATUS"
		SID=
		return 1
	fi
}
sstatus() { sql "SELECT status FROM sessions WHERE id = '$1'"; }
_sstatus_is() { [ "$(sstatus "$1")" = "$2" ]; }
_sstatus_ended() { [[ $(sstatus "$1") =~ $SESSION_TERMINAL_RE ]]; }
# sready SID [SECONDS]: GET ?wait until ready; $BODY holds the session.
sready() {
	[ -n "$1" ] || return 1
	_await_status "/v1/sessions/$1?wait=10" "${2:-30}" '^ready$' "$SESSION_TERMINAL_RE" 0.2
}
# srun SID BODY: POST a command -> $CID, $CPID (202).
srun() {
	req POST "/v1/sessions/$1/commands" "$2"
	CID=$(jq -r '.id // empty' "$BODY" 2> /dev/null)
	CPID=$(jq -r '.pid // empty' "$BODY" 2> /dev/null)
	if [ "$STATUS" != 202 ] || [ -z "$CID" ]; then
		_notok "$(_name "command $(head -c 80 <<< "$2")")" "202 with an id" "$STATUS"
		CID=
		return 1
	fi
}
# sawait SID CID [SECONDS]: GET the command with ?wait until it ended; $BODY holds it.
sawait() {
	[ -n "$2" ] || return 1
	_await_status "/v1/sessions/$1/commands/$2?wait=10" "${3:-60}" "$CMD_TERMINAL_RE" '' 0.2
}
cstatus() { sql "SELECT status FROM session_commands WHERE id = '$1'"; }
_cstatus_is() { [ "$(cstatus "$1")" = "$2" ]; }
# sout SID CID STREAM OFFSET [extra query]: one output slice (base64) into $BODY;
# its bytes go to the file $OUTF.
OUTF=$T_DIR/out.bin
sout() {
	req GET "/v1/sessions/$1/commands/$2/output?stream=$3&offset=$4&encoding=base64${5:+&$5}"
	jq -r '.data_base64 // empty' "$BODY" | base64 -d > "$OUTF"
}
# sall SID CID STREAM: the whole stream (all slices) on stdout.
sall() {
	local off=0 eof=false
	while :; do
		sout "$1" "$2" "$3" "$off" > /dev/null
		[ "$STATUS" = 200 ] || return 1
		cat "$OUTF"
		off=$(jq -r .next_offset "$BODY")
		eof=$(jq -r .eof "$BODY")
		[ "$(wc -c < "$OUTF")" = 0 ] && break
	done
	[ "$eof" = true ]
}
# sexec SID COMMAND [SECONDS [TIMEOUT]]: runs a shell command in the session (with its
# timeout_seconds TIMEOUT, if given), waits; stdout in $OUT.
sexec() {
	OUT=
	srun "$1" "$(jq -cn --arg c "$2" --argjson t "${4:-null}" \
		'{command: $c} + if $t == null then {} else {timeout_seconds: $t} end')" || return 1
	sawait "$1" "$CID" "${3:-30}" || return 1
	cp "$BODY" "$T_DIR/cmd.json"
	OUT=$(sall "$1" "$CID" stdout)
	cp "$T_DIR/cmd.json" "$BODY" # the command, for the checks that follow
}
# The session's slot (runner_id ".../slot-S/..." or ".../session-N/...").
sslot() {
	local r
	r=$(sql "SELECT runner_id FROM sessions WHERE id = '$1'")
	if [[ $r =~ /slot-([0-9]+)/ ]]; then echo "${BASH_REMATCH[1]}"
	elif [[ $r =~ /session-([0-9]+)/ ]]; then echo $((1000 + BASH_REMATCH[1]))
	fi
}
uid_procs() { ps -eo uid= | awk -v u="$1" '$1 == u' | wc -l; }
_uid_idle() { [ "$(uid_procs "$1")" = 0 ]; }
sup_pid() { pgrep -f -- "--supervise-session $1" 2> /dev/null | head -n 1; }

# ---- host listeners (security.sh, srunner.sh): what a sandbox must not reach
#
#   host_listeners PORTS LOG HOST_IP SECONDS [ABSTRACT]
#       TCP listeners on 127.0.0.1 and on HOST_IP (none when empty), and a unix socket
#       @ABSTRACT (abstract namespace) when given, for SECONDS, in the background
#       ($LISTENER, killed at exit). Each connection accepted is a line in LOG. Their
#       ports: P_LO and P_HOST (0: none), also written to the file PORTS.
host_listeners() {
	python3 - "$1" "$2" "$3" "${5:-}" "$4" << 'EOF' > /dev/null 2>&1 &
import os, select, socket, sys, time
ports_file, log_file, host_ip, abstract, life = sys.argv[1:6]
socks = []
def tcp(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((addr, 0))
    s.listen(16)
    socks.append(s)
    return s.getsockname()[1]
p_lo = tcp("127.0.0.1")
p_host = tcp(host_ip) if host_ip else 0
if abstract:
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.bind("\0" + abstract)
    u.listen(16)
    socks.append(u)
with open(ports_file + ".tmp", "w") as f:
    f.write("%d %d\n" % (p_lo, p_host))
os.rename(ports_file + ".tmp", ports_file)
end = time.time() + float(life)
while time.time() < end:
    r, _, _ = select.select(socks, [], [], 1)
    for s in r:
        c, a = s.accept()
        with open(log_file, "a") as f:
            f.write("accepted on %r from %r\n" % (s.getsockname(), a))
        c.close()
EOF
	LISTENER=$!
	at_exit "kill $LISTENER 2> /dev/null"
	for _ in $(seq $((50 * TSCALE))); do [ -s "$1" ] && break; sleep 0.1; done
	read -r P_LO P_HOST < "$1" 2> /dev/null || { P_LO=0; P_HOST=0; }
}
