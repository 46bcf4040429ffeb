#!/usr/bin/env bash
# tests/vm/full.sh: `make test-vm FULL=1`: every integration suite (or SANDBOX_SUITES)
# in the guest, on cgroup v2, through tests/run-integration.sh with its stack in the
# guest's tmpfs. TCG runs guest code 10-20x slower: the suites' time limits (waits,
# deadlines, "within N" windows) are multiplied by SANDBOX_TIME_SCALE, from the kernel
# command line's sandbox.timescale= (run.sh: VM_TIME_SCALE, default 20); on the host it
# is 1, the values as written. sandbox.suites= (run.sh: SANDBOX_SUITES) picks suites.
set -u -o pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
[[ $(stat -f -c %T /sys/fs/cgroup) == cgroup2fs ]] || { echo "Bail out! not cgroup2 (run me in the VM)"; exit 2; }
T0=$SECONDS
SANDBOX_TIME_SCALE=20
for w in $(cat /proc/cmdline); do
	case $w in
	sandbox.timescale=*) SANDBOX_TIME_SCALE=${w#sandbox.timescale=} ;;
	sandbox.suites=*) SANDBOX_SUITES=${w#sandbox.suites=} && export SANDBOX_SUITES=${SANDBOX_SUITES//,/ } ;;
	esac
done
export SANDBOX_TIME_SCALE
echo "# full: SANDBOX_TIME_SCALE=$SANDBOX_TIME_SCALE, suites: ${SANDBOX_SUITES:-all}"
SANDBOX_TEST_VAR=/var/tmp/vmtest SANDBOX_TEST_PORT=8444 bash "$REPO/tests/run-integration.sh"
rc=$?
printf "full_time_scale %s\nfull_suites %s\nfull_suites_s %s\n" "$SANDBOX_TIME_SCALE" "${SANDBOX_SUITES:-all}" "$((SECONDS - T0))" >> "${VM_TIMINGS:-/vmout/timings}"
exit "$rc"
