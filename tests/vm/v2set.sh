#!/usr/bin/env bash
# tests/vm/v2set.sh: the runner's cgroup v2 set, run inside the test VM
# (tests/vm/run.sh, `make test-vm`) on a kernel booted with the unified hierarchy only.
# Never on the host: it rearranges /sys/fs/cgroup.
#
# One stack (tests/stack.sh up: MariaDB, API, nginx) in the guest's tmpfs; its runner
# is stopped and a runner of this script's own is started in each layout in turn:
#   a. bare v2: started in the root cgroup, whose subtree_control is empty at boot;
#   (systemd's Delegate=yes layout: systemd itself as PID 1 with the installed unit,
#      tests/vm/guide.sh and sdset.sh, the second boot of make test-vm;)
#   b. bare v2 again, its processes moved into /elsewhere while it runs: they move
#      back into the leaf (logged) and a job succeeds in its slot;
#   c. a container-like cgroup namespace: moved into /ctr, `unshare -C` with its own
#      cgroup2 mount, so the namespace's root holds the runner's process at start.
# In each: where the runner and the slots are, then jobs (hello with usage, memory
# limit -> OOM -> resource_limit with memory.peak, pids limit, cpu limit from
# cpu.stat, wall timeout, cancel through cgroup.kill, a network job) and the cleanup (no slot cgroup
# or slot process left). Then the refusals: a namespace root that holds another
# process (EBUSY) and a cgroup the controllers are not delegated to: --check fails
# naming the item, the runner exits 2 without claiming the queued job.
# TAP-like output (lib.sh); exit 0 when every check passed.
set -u -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
export SANDBOX_VAR=${SANDBOX_VAR:-/var/tmp/vmstack} SANDBOX_PORT=${SANDBOX_PORT:-8443}
CG=/sys/fs/cgroup
TIMINGS=${VM_TIMINGS:-/vmout/timings}
[[ $(stat -f -c %T $CG) == cgroup2fs ]] || { echo "Bail out! $CG is not cgroup2 (run me in the VM)"; exit 2; }

ROOT_SUBTREE_AT_BOOT=$(cat $CG/cgroup.subtree_control)
T0=$SECONDS
if ! bash "$REPO/tests/stack.sh" up; then
	echo "Bail out! tests/stack.sh up failed in the guest"
	tail -n 30 "$SANDBOX_VAR"/log/*.log 2> /dev/null
	exit 2
fi
echo "stack_up_s $((SECONDS - T0))" >> "$TIMINGS"
bash "$REPO/tests/stack.sh" stop-runner > /dev/null
# The launch benchmark on v2 (sandbox.bench=1 on the kernel command line, VM_BENCH=1):
# samples in /vmout/bench-launch.jsonl, its summary in /vmout/bench-launch.txt.
if grep -qw 'sandbox.bench=1' /proc/cmdline; then
	"${SANDBOX_BIN:-$REPO/build}/bench-launch" --config "$SANDBOX_VAR/sandbox.conf" \
		--iterations "${VM_BENCH_N:-30}" --warmup 3 > /vmout/bench-launch.jsonl 2> /vmout/bench-launch.txt ||
		echo "# bench-launch failed: $(tail -n 3 /vmout/bench-launch.txt)"
fi

. "$REPO/tests/integration/env.sh"
load_stack_env SANDBOX_URL SANDBOX_CACERT SANDBOX_TOKEN SANDBOX_CONFIG SANDBOX_DB_SOCKET
. "$REPO/tests/integration/lib.sh"
# shellcheck disable=SC2034 # lib.sh's req sends it
TOKEN=$SANDBOX_TOKEN
RUNNER=$SANDBOX_BIN/sandbox-runner
CG_NAME=$(conf_get runner_cgroup_name sandbox)
UID_BASE=$(conf_get runner_uid_base 200000)
SLOTS=$(conf_get runner_slots 2)
LOGDIR=$SANDBOX_VAR/log
RPID=
mkkey NET vm "vm-net-$$" user vm-net --allow-network

expect_eq "bare v2: the root's cgroup.subtree_control is empty at boot" "" "$ROOT_SUBTREE_AT_BOOT"

# ---------------------------------------------------------------- helpers
# every context change notes the guest's clock (where the minutes go under TCG)
ctx() {
	CTX=$1
	echo "# t=$((SECONDS - T0))s $1"
}
cg_of() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2> /dev/null; }
alive_pid() { [ -n "$1" ] && kill -0 "$1" 2> /dev/null; }
slot_dirs() { find "$1" -mindepth 1 -maxdepth 1 -type d -name 'slot-*' 2> /dev/null | wc -l; }
slot_procs() {
	local n=0 i
	for ((i = 0; i < SLOTS; i++)); do n=$((n + $(pgrep -u $((UID_BASE + i)) 2> /dev/null | wc -l))); done
	echo "$n"
}
_in_leaf() { [ "$(cg_of "$1")" = "$2" ]; }
_has_slot() { [ "$(slot_dirs "$1")" -gt 0 ]; }
_no_slot_left() { [ "$(slot_dirs "$1")" = 0 ] && [ "$(slot_procs)" = 0 ]; }
stop_runner() {
	alive_pid "$RPID" || return 0
	kill -TERM "$RPID"
	poll 20 fails alive_pid "$RPID"
	wait "$RPID" 2> /dev/null
	RPID=
}
at_exit stop_runner
expect_diag() {
	expect_json "[.result.diagnostics[] | select(. == \"$1\")] | length" 1 "diagnostic \"$1\""
}
expect_v2_common() {
	expect_json 'any(.result.diagnostics[]; startswith("limits: cgroup v2"))' true \
		'a diagnostic starts with "limits: cgroup v2"'
	expect_json 'any(.result.diagnostics[]; startswith("limits: cgroup placement clone3 "))' true \
		'the job was born in its slot cgroup (diagnostic "limits: cgroup placement clone3")'
	expect_json '.result.usage | [.wall_ms, .cpu_ms, .memory_peak_bytes] | map(type == "number" and . == floor) | all' \
		true 'usage fields are integers'
}

# run_layout NAME LEAF BASE [all]: the runner (RPID) must sit in LEAF; the slots go
# under BASE. Every job with "all", else hello (memory.peak: the memory controller is
# on in the slot) and cancel (cgroup.kill), what depends on where the cgroups are, to
# keep the set within CI's time (TCG: a job costs seconds).
run_layout() {
	local name=$1 leaf=$2 base=$3 all=${4:-} t0=$SECONDS k
	declare -A J=()
	ctx "$name: runner started"
	if ! poll 120 grep -q 'event=runner_started' "$LOGDIR/runner-$name.log"; then
		_notok "$name: runner started" "event=runner_started" "$(tail -n 5 "$LOGDIR/runner-$name.log")" 0
		stop_runner
		return
	fi
	poll 30 _in_leaf "$RPID" "$leaf"
	expect_eq "$name: the dispatcher moved itself into its leaf" "$leaf" "$(cg_of "$RPID")"
	expect_true "$name: the start-up log names the layout" \
		grep -q "event=cgroup_v2_layout .*leaf=$CG$([ "$name" = cgns ] && echo /runner || echo "$leaf") " \
		"$LOGDIR/runner-$name.log"
	ctx "$name: jobs"
	submit '{"command":"echo hello; cat /proc/self/cgroup","limits":{"wall_seconds":120}}' && J[hello]=$JOB
	if [ -n "$all" ]; then
		submit '{"command":"python3 -c '"'"'x=bytearray(300*1024*1024)'"'"'","limits":{"memory_mb":64,"wall_seconds":300}}' && J[mem]=$JOB
		submit '{"command":"f(){ f|f & }; f; exec sleep 3","limits":{"pids":16,"wall_seconds":200}}' && J[fork]=$JOB
		submit '{"command":"while :; do :; done","limits":{"cpu_seconds":1,"wall_seconds":300}}' && J[cpu]=$JOB
		submit '{"command":"sleep 60","limits":{"wall_seconds":2}}' && J[wall]=$JOB
	fi
	submit '{"command":"sleep 280","limits":{"wall_seconds":300}}' && J[cancel]=$JOB
	# a network job (after the one to cancel, which must reach running first):
	# slirp4netns, the slot uid's, started by the supervisor, beside a sandbox whose
	# cgroups are v2 (the guest's kernel has tun: run.sh loads it)
	[ -z "$all" ] || { TOKEN=$NET_TOK submit '{"command":"tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d \" \" | paste -sd \" \"","network":true,"limits":{"wall_seconds":300}}' &&
		J[net]=$JOB; }

	ctx "$name: cancel"
	if wait_state "${J[cancel]:-}" running 240; then
		# the job's slot cgroup, under the runner's own subtree
		poll 30 _has_slot "$base"
		expect_true "$name: a slot cgroup exists under $base while jobs run" test "$(slot_dirs "$base")" -gt 0
		[ "$base" = "$CG/$CG_NAME" ] ||
			expect_true "$name: nothing made at the top of the hierarchy ($CG/$CG_NAME)" test ! -e "$CG/$CG_NAME"
		sleep 1
		req POST "/v1/jobs/${J[cancel]:-}/cancel"
		expect_status 200 "cancel answers 200"
		await "${J[cancel]:-}" 240
		expect_json '.status' cancelled
		expect_json '.result.exit_code' 137
		expect_v2_common
	else
		_notok "$name: the job to cancel reached running" running "$(state_of "${J[cancel]:-}")" 0
	fi

	ctx "$name: echo hello"
	await "${J[hello]:-}" 300
	expect_json '.status' succeeded
	expect_json '.result.stdout | split("\n")[0]' hello
	expect_json '.result.usage.memory_peak_bytes > 0' true 'memory_peak_bytes > 0 (memory.peak)'
	expect_v2_common

	[ -n "$all" ] || { layout_end "$name" "$base" "$t0"; return; }

	ctx "$name: memory bomb 300 MiB, memory_mb 64"
	await "${J[mem]:-}" 300
	expect_json '.status' resource_limit
	expect_diag "command exceeded memory resource limit"
	expect_json '.result.usage.memory_peak_bytes > 32*1024*1024 and .result.usage.memory_peak_bytes <= 80*1024*1024' \
		true 'memory_peak_bytes (memory.peak) near the 64 MiB limit'
	expect_v2_common

	ctx "$name: fork bomb, pids 16"
	await "${J[fork]:-}" 300
	expect_json '.status' resource_limit
	expect_diag "command exceeded pids resource limit"
	expect_v2_common

	ctx "$name: cpu spin, cpu_seconds 1"
	await "${J[cpu]:-}" 300
	expect_json '.status' resource_limit
	expect_diag "command exceeded cpu resource limit"
	expect_json '.result.usage.cpu_ms >= 900' true 'cpu_ms >= 900 (cpu.stat usage_usec)'
	expect_v2_common

	ctx "$name: sleep 60, wall_seconds 2"
	await "${J[wall]:-}" 300
	expect_json '.status' timed_out
	expect_json '.result.exit_code' 124
	expect_v2_common

	ctx "$name: a network job"
	TOKEN=$NET_TOK await "${J[net]:-}" 300
	expect_json '.status' succeeded
	expect_json '.result.stdout | rtrimstr("\n")' 'lo tap0' 'the sandbox has lo and tap0 (slirp4netns)'
	expect_v2_common
	layout_end "$name" "$base" "$t0"
}

layout_end() {
	local name=$1 base=$2 t0=$3
	ctx "$name: cleanup"
	# the dispatcher first: it starts no more runtime probes (a probe runs as a job in
	# a free slot at start and every 3 minutes, and under TCG one takes seconds)
	stop_runner
	poll 120 _no_slot_left "$base" || {
		note "left: $(find "$base" -mindepth 1 -maxdepth 1 -type d | tr '\n' ' ')"
		note "slot uid processes: $(ps -eo uid=,pid=,args= | awk -v lo="$UID_BASE" -v hi=$((UID_BASE + SLOTS)) '$1 >= lo && $1 < hi' | head -5 | tr '\n' '|')"
		note "cgroup.procs: $(cat "$base"/slot-*/cgroup.procs 2> /dev/null | tr '\n' ' ')"
	}
	expect_eq "$name: no slot cgroup left under $base" 0 "$(slot_dirs "$base")"
	expect_eq "$name: no process of a slot uid left" 0 "$(slot_procs)"
	expect_true "$name: no write failure logged" fails grep -q 'cgroup_write_failed' "$LOGDIR/runner-$name.log"
	echo "layout_${name}_s $((SECONDS - t0))" >> "$TIMINGS"
}

# ---------------------------------------------------------------- a. bare v2
: > "$LOGDIR/runner-bare.log"
"$RUNNER" --config "$SANDBOX_CONFIG" >> "$LOGDIR/runner-bare.log" 2>&1 &
RPID=$!
run_layout bare /runner "$CG/$CG_NAME" all
ctx "bare: after"
expect_true "bare: memory and pids on in the root's subtree_control" grep -q 'memory.*pids\|pids.*memory' $CG/cgroup.subtree_control
expect_true "bare: cpu not asked for (no cpu control file is used)" fails grep -qw cpu $CG/cgroup.subtree_control

# ---------------------------------------------------------------- b. moved while it runs
# An operator or a container manager moves the running runner's processes (the
# dispatcher, its spare supervisors) into another cgroup (issue 25): each moves back
# into its leaf before it claims or makes a slot (logged), and a job then runs in a
# slot under the runner's own subtree. Before, every job failed 125 naming the
# no-internal-processes rule (EBUSY on /elsewhere's subtree_control) until a restart.
ctx "moved: runner started"
: > "$LOGDIR/runner-moved.log"
"$RUNNER" --config "$SANDBOX_CONFIG" >> "$LOGDIR/runner-moved.log" 2>&1 &
RPID=$!
poll 120 grep -q 'event=runner_started' "$LOGDIR/runner-moved.log"
poll 30 _in_leaf "$RPID" /runner
sleep 2 # its spare supervisors are up
mkdir -p $CG/elsewhere
MOVED=$(cat $CG/runner/cgroup.procs | tr '\n' ' ')
RMOVED=no
for p in $MOVED; do
	echo "$p" 2> /dev/null > $CG/elsewhere/cgroup.procs && [ "$p" = "$RPID" ] && RMOVED=yes
done
# (not its /proc/PID/cgroup: the dispatcher may be back already, its next pass is ms away)
expect_eq "moved: the kernel moved the dispatcher into /elsewhere (with $(wc -w <<< "$MOVED") processes)" \
	yes "$RMOVED"
submit '{"command":"echo moved","limits":{"wall_seconds":120}}'
ctx "moved: a job"
await "$JOB" 300
expect_json '.status' succeeded
expect_json '.result.stdout | split("\n")[0]' moved
expect_json '.failure' null
expect_v2_common
expect_eq "moved: the dispatcher is back in its leaf" /runner "$(cg_of "$RPID")"
expect_true "moved: the move back is logged (from, to)" \
	grep -q "event=cgroup_moved_back from=/elsewhere to=$CG/runner" "$LOGDIR/runner-moved.log"
expect_true "moved: nothing made under /elsewhere" test ! -e "$CG/elsewhere/$CG_NAME" -a ! -e "$CG/elsewhere/runner"
layout_end moved "$CG/$CG_NAME" "$SECONDS"
note "moved: /elsewhere holds $(wc -l < $CG/elsewhere/cgroup.procs) processes at the end"
rmdir "$CG/$CG_NAME" "$CG/runner" "$CG/elsewhere" 2> /dev/null

# systemd's Delegate=yes layout is tested under systemd itself (tests/vm/guide.sh and
# sdset.sh, the second boot of make test-vm); the copy made by hand here was dropped
# to keep the CI's time.

# ---------------------------------------------------------------- c. cgroup namespace
# The namespace's root (/ctr) holds the runner's process at start: enabling a
# controller for its children fails with EBUSY until the runner moved into its leaf.
mkdir -p $CG/ctr
: > "$LOGDIR/runner-cgns.log"
NSRUN='umount -l /sys/fs/cgroup && mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup && exec "$0" "$@"'
(echo "$BASHPID" > $CG/ctr/cgroup.procs &&
	exec unshare -C -m --propagation private sh -c "$NSRUN" "$RUNNER" --config "$SANDBOX_CONFIG") \
	>> "$LOGDIR/runner-cgns.log" 2>&1 &
RPID=$!
run_layout cgns /ctr/runner "$CG/ctr/$CG_NAME"

# ---------------------------------------------------------------- refusals
ctx "refusals"
submit '{"command":"echo never","limits":{"wall_seconds":30}}'
QJ=$JOB
# EBUSY: the namespace's root holds another process the runner cannot move.
mkdir -p $CG/busy
sleep 600 &
SPID=$!
echo "$SPID" > $CG/busy/cgroup.procs
in_ns() { # in_ns CGDIR CMD...: CMD in a cgroup namespace rooted at CGDIR
	local d=$1
	shift
	(echo "$BASHPID" > "$d/cgroup.procs" && exec unshare -C -m --propagation private sh -c "$NSRUN" "$@")
}
OUT=$(in_ns $CG/busy "$RUNNER" --config "$SANDBOX_CONFIG" --check 2>&1)
RC=$?
expect_eq "EBUSY: --check exits 1" 1 "$RC"
expect_true "EBUSY: the cgroup item fails naming the write and EBUSY" \
	grep -Eq '^fail +cgroup .*cgroup.subtree_control: \+memory: Device or resource busy' <<< "$OUT"
expect_true "EBUSY: the fix is printed" grep -q 'fix: start the runner in a cgroup of its own' <<< "$OUT"
OUT=$(in_ns $CG/busy "$RUNNER" --config "$SANDBOX_CONFIG" 2>&1)
RC=$?
expect_eq "EBUSY: the runner exits 2" 2 "$RC"
expect_true "EBUSY: the runner logs the failed item" grep -q 'event=preflight item=cgroup status=fail' <<< "$OUT"
expect_true "EBUSY: the runner logs runner_refused" grep -q 'event=runner_refused' <<< "$OUT"
kill "$SPID"
wait "$SPID" 2> /dev/null
# not delegated: memory and pids are offered to /deleg but not turned on for its children
mkdir -p $CG/deleg/ctr
OUT=$(in_ns $CG/deleg/ctr "$RUNNER" --config "$SANDBOX_CONFIG" --check 2>&1)
RC=$?
expect_eq "not delegated: --check exits 1" 1 "$RC"
expect_true "not delegated: the cgroup item names the missing controller" \
	grep -Eq '^fail +cgroup .*memory and pids are not delegated to it' <<< "$OUT"
OUT=$(in_ns $CG/deleg/ctr "$RUNNER" --config "$SANDBOX_CONFIG" --once 2>&1)
RC=$?
expect_eq "not delegated: the runner (--once) exits 2" 2 "$RC"
expect_eq "the queued job was not claimed by a refusing runner" queued "$(db_state "$QJ")"
note "last --check output: $(tr '\n' '|' <<< "$OUT" | head -c 600)"

bash "$REPO/tests/stack.sh" down > /dev/null 2>&1
finish
