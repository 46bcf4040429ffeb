#!/usr/bin/env bash
# Brings up a private test stack (its own MariaDB, API pool and nginx, under
# var/test on port 8444, so a `make up` stack on 8443 is left alone), runs every
# end-to-end suite against it through HTTPS, checks the recorded responses against
# docs/openapi.yaml, and tears the stack down again.
set -uo pipefail

# Every suite, in the order they run (SANDBOX_SUITES picks some); `--list` prints them
# (tests/vm/run.sh splits them between its guests).
ALL_SUITES="api batch sessions_api faults waits runner hooks security tenancy preflight contract profiles leaks srunner live sessions cli mcp e2b runtimes"
if [[ ${1:-} == --list ]]; then
  echo "$ALL_SUITES"
  exit 0
fi

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
export SANDBOX_VAR=${SANDBOX_TEST_VAR:-$REPO/var/test}
export SANDBOX_PORT=${SANDBOX_TEST_PORT:-8444}
export SANDBOX_BIN=${SANDBOX_BIN:-$REPO/build}
export SANDBOX_RESPONSES=$SANDBOX_VAR/test/responses.jsonl

cleanup() { bash "$REPO/tests/stack.sh" down >/dev/null 2>&1 || true; }
trap cleanup EXIT

bash "$REPO/tests/stack.sh" up || { echo "integration: the test stack did not come up" >&2; exit 1; }
mkdir -p "$SANDBOX_VAR/test"
: >"$SANDBOX_RESPONSES"
set -a
# shellcheck disable=SC1091
. "$SANDBOX_VAR/env"
set +a

failed=()
# The typed DB layer against this stack's MariaDB (tests/dbunit, CUnit).
echo "=== db layer tests (build/db-tests)"
if ! "$SANDBOX_BIN/db-tests" --config "$SANDBOX_CONFIG"; then
  failed+=(db)
fi
# The API suite needs a frozen queue (it plays the runner's part itself, to test
# queued, cancelled and finished jobs deterministically): the runner is stopped for
# it and started again for the suites that run real jobs.
for suite in ${SANDBOX_SUITES:-$ALL_SUITES}; do
  echo "=== integration suite: $suite"
  case $suite in
    api|batch|sessions_api|faults|waits) bash "$REPO/tests/stack.sh" stop-runner >/dev/null ;;
    *) bash "$REPO/tests/stack.sh" start-runner >/dev/null ;;
  esac
  if ! bash "$REPO/tests/integration/$suite.sh"; then
    failed+=("$suite")
  fi
done

echo "=== openapi conformance of the recorded responses"
if ! python3 "$REPO/tests/openapi_check.py" "$REPO/docs/openapi.yaml" "$SANDBOX_RESPONSES"; then
  failed+=(openapi)
fi
if ! python3 "$REPO/tests/openapi_check.py" --self-test "$REPO/docs/openapi.yaml" >/dev/null; then
  echo "openapi checker self-test failed" >&2
  failed+=(openapi-self-test)
fi

if ((${#failed[@]})); then
  echo "integration: FAILED suites: ${failed[*]}"
  exit 1
fi
echo "integration: all suites passed"
