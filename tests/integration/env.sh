# tests/integration/env.sh: the stack a suite runs against. Source it with the names
# of the variables the suite needs; it loads $SANDBOX_VAR/env (written by
# `tests/stack.sh up`) and bails out, TAP-style, when one of them is missing.
# shellcheck shell=bash
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
}
