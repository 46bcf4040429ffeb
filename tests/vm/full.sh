#!/usr/bin/env bash
# tests/vm/full.sh: `make test-vm FULL=1`: every integration suite (or SANDBOX_SUITES)
# in the guest, on cgroup v2, through tests/run-integration.sh with its stack in the
# guest's tmpfs. The suites' few timing checks are not scaled for emulation (TCG runs
# guest code 10-20x slower): a failure there is reported as it is, not hidden.
set -u -o pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
[[ $(stat -f -c %T /sys/fs/cgroup) == cgroup2fs ]] || { echo "Bail out! not cgroup2 (run me in the VM)"; exit 2; }
T0=$SECONDS
SANDBOX_TEST_VAR=/var/tmp/vmtest SANDBOX_TEST_PORT=8444 bash "$REPO/tests/run-integration.sh"
rc=$?
echo "full_suites_s $((SECONDS - T0))" >> "${VM_TIMINGS:-/vmout/timings}"
exit "$rc"
