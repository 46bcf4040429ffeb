# tests/integration/env.sh: the stack a suite runs against. Source it with the names
# of the variables the suite needs; it loads $SANDBOX_VAR/env (written by
# `tests/stack.sh up`) and bails out, TAP-style, when one of them is missing.
#
# Sourcing it sets REPO (the checkout) and exports SANDBOX_VAR (default <repo>/var) and
# SANDBOX_BIN (default <repo>/build), for the suite and for tests/stack.sh.
#   load_stack_env NAME...   the stack's variables; exports SANDBOX_PORT when known
#   need_root WHY            bails out unless the suite runs as root
# shellcheck shell=bash
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${SANDBOX_VAR:=$REPO/var}"
: "${SANDBOX_BIN:=$REPO/build}"
export SANDBOX_VAR SANDBOX_BIN

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "Bail out! $(basename "$0") must run as root ($1)"
		exit 2
	fi
}

load_stack_env() {
	local v
	if [ -r "$SANDBOX_VAR/env" ]; then
		set -a
		# shellcheck disable=SC1091
		. "$SANDBOX_VAR/env"
		set +a
	fi
	for v in "$@"; do
		if [ -z "${!v:-}" ]; then
			echo "Bail out! $v is not set (is the stack up? see tests/stack.sh)"
			exit 2
		fi
	done
	SANDBOX_URL=${SANDBOX_URL%/}
	if [ -n "${SANDBOX_PORT:-}" ]; then export SANDBOX_PORT; fi
}
