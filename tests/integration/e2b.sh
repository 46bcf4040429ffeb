#!/usr/bin/env bash
# E2B compatibility (issue 23, docs/E2B.md) over HTTPS through nginx, against the
# stack's real runner, bubblewrap and MariaDB: the control plane (/sandboxes,
# /v2/sandboxes), envd (process.Process, filesystem.Filesystem, /files, /health) and
# the routing, with raw HTTP and with the real `e2b` SDK (tests/clients, pinned,
# installed by tests/deps.sh).
#
# This file sets up what the sections share, then sources every
# tests/integration/e2b/*.sh in sorted order (ctl.sh: the control plane; fs.sh: envd's
# filesystem; process.sh: envd's processes). Shared:
#   KEY               the stack's demo key (X-API-KEY), TOKEN for req (lib.sh)
#   RUN               a random tag (metadata, key subjects)
#   e2b_req KEY METHOD PATH [BODY] [curl args]   req (lib.sh: recorded for the OpenAPI
#                     check) with X-API-KEY: KEY instead of a bearer token
#   expect_e2b STATUS [MESSAGE_RE]   the last answer is STATUS with {"code":STATUS,
#                     "message":string} (matching MESSAGE_RE when given)
#   e2b_create KEY [BODY]   POST /v2/sandboxes: E2B_ID, E2B_TOK (empty on failure)
#   e2b_kill KEY ID   DELETE /sandboxes/ID, not checked (clean-up)
#   e2b_sdk_run SCRIPT NAME [VAR=VALUE...]   node SCRIPT (an .mjs of tests/clients)
#                     with E2B_API_URL, E2B_SANDBOX_URL, E2B_DOMAIN, E2B_API_KEY,
#                     NODE_EXTRA_CA_CERTS and SANDBOX_TIME_SCALE set: each "ok - " /
#                     "not ok - " line one check, its exit status and closing
#                     "all passed" checked too; without node or the SDK a failure in
#                     CI (CI=true), else a visible skip
#   E2B_SDK           1 when node and the e2b SDK are there

set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env --token E2B_API_URL E2B_SANDBOX_URL E2B_DOMAIN E2B_API_KEY
RUN="$RANDOM$RANDOM"
KEY=$SANDBOX_TOKEN

e2b_req() {
	local key=$1
	shift
	local method=$1 path=$2 body=${3-}
	shift $(($# >= 3 ? 3 : $#))
	TOKEN='' req "$method" "$path" "$body" ${key:+-H "X-API-KEY: $key"} "$@"
}

expect_e2b() {
	local want=$1 re=${2-} got
	got=$(jq -c '[.code, (.message | type)]' "$BODY" 2> /dev/null)
	if [ "$STATUS" = "$want" ] && [ "$got" = "[$want,\"string\"]" ] &&
		{ [ -z "$re" ] || jq -e --arg re "$re" '.message | test($re)' "$BODY" > /dev/null 2>&1; }; then
		_ok "$(_name "$want${re:+ /$re/}")"
	else
		_notok "$(_name "$want {code,message}")" "$want {\"code\":$want,\"message\"${re:+ ~ /$re/}}" "$STATUS $(head -c 300 "$BODY")" 0
	fi
}

E2B_BASE='{"templateID":"base"}'
e2b_create() {
	e2b_req "$1" POST /v2/sandboxes "${2:-$E2B_BASE}"
	E2B_ID=$(jq -r '.sandboxID // empty' "$BODY" 2> /dev/null)
	E2B_TOK=$(jq -r '.envdAccessToken // empty' "$BODY" 2> /dev/null)
}

e2b_kill() {
	curl -sS --cacert "$SANDBOX_CACERT" -o /dev/null -X DELETE -H "X-API-KEY: $1" \
		"$E2B_API_URL/sandboxes/$2" || true
}

. "$REPO/tests/clients/env.sh"
E2B_SDK=0
if command -v node > /dev/null 2>&1 &&
	(cd "$CLIENTS_DIR" && node --input-type=module -e 'await import("e2b")') > /dev/null 2>&1; then
	E2B_SDK=1
fi

e2b_sdk_run() {
	local script=$1 name=$2 out
	shift 2
	if [ "$E2B_SDK" != 1 ]; then
		ci_skip "$name" "node or the e2b SDK is not installed in $CLIENTS_DIR (bash tests/deps.sh installs it)"
		return 0
	fi
	out=$(cd "$CLIENTS_DIR" && env E2B_API_URL="$E2B_API_URL" E2B_SANDBOX_URL="$E2B_SANDBOX_URL" \
		E2B_DOMAIN="$E2B_DOMAIN" E2B_API_KEY="$KEY" NODE_EXTRA_CA_CERTS="$SANDBOX_CACERT" \
		SANDBOX_TIME_SCALE="$TSCALE" E2B_TEST_RUN="$RUN" "$@" node "$script" 2>&1)
	tap_relay "$name" "$script" $? "$out"
}

for section in "$(dirname "${BASH_SOURCE[0]}")"/e2b/*.sh; do
	[ -e "$section" ] || continue
	echo "# --- $(basename "$section")"
	# a section bash cannot parse would stop where the error is, silently
	if ! out=$(bash -n "$section" 2>&1); then
		_notok "$(basename "$section") parses" "no syntax error" "$out" 0
		continue
	fi
	# shellcheck disable=SC1090
	. "$section"
done

finish
