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
#   finish                              prints "N passed, M failed"; non-zero if M>0 or N==0
# Output is TAP-like: "ok - name" or "not ok - name: expected X, got Y" followed by the
# request and the response body as '#' comment lines.

: "${SANDBOX_VAR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/var}"
: "${SANDBOX_RESPONSES:=$SANDBOX_VAR/test/responses.jsonl}"
: "${TOKEN:=}"
mkdir -p "$(dirname "$SANDBOX_RESPONSES")"

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
		-w '%{http_code} %{time_total}' -X "$method" --max-time "${REQ_MAX_TIME:-60}")
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

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
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
