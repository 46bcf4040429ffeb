#!/usr/bin/env bash
# tests/vm/sdset.sh: the installed sandbox-runner.service under systemd as PID 1, run
# inside the test VM (`bash tests/vm/run.sh systemd`; tests/vm/guest.sh boots
# /lib/systemd/systemd with a minimal target and runs this as sandbox-vm.service).
# Never on the host: it installs into /usr/local and /etc and starts units.
#
# The stack's MariaDB, API and nginx (tests/stack.sh up, started from the root cgroup:
# test infrastructure, not what is tested; its own runner is stopped at once), then
# `make install`, the config as /etc/sandbox/sandbox.conf, systemd/sandbox-runner.service
# as shipped plus one drop-in (DefaultDependencies=no: the VM has no sysinit.target),
# `systemctl start`: where systemd put the unit and where the runner moved itself
# (systemd 252 ignores DelegateSubgroup=), jobs (hello: clone3 into the slot, usage;
# cancel: cgroup.kill), `systemctl restart` (the unit's cgroup has controllers on for
# its children: can systemd 252 start the new dispatcher in it?), `systemctl stop`
# (no slot cgroup or slot process left). TAP-like output (lib.sh).
set -u -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
export SANDBOX_VAR=${SANDBOX_VAR:-/var/tmp/vmstack} SANDBOX_PORT=${SANDBOX_PORT:-8443}
CG=/sys/fs/cgroup
TIMINGS=${VM_TIMINGS:-/vmout/timings}
UNIT=sandbox-runner.service
[[ $(stat -f -c %T $CG) == cgroup2fs ]] || { echo "Bail out! $CG is not cgroup2 (run me in the VM)"; exit 2; }
[[ $(cat /proc/1/comm) == systemd ]] || { echo "Bail out! PID 1 is $(cat /proc/1/comm), not systemd"; exit 2; }

SELF_CG=$(sed -n 's/^0:://p' /proc/self/cgroup)
T0=$SECONDS
# The stack from the root cgroup (exempt from the no-internal-processes rule), so that
# the runner stack.sh starts can turn its controllers on; this shell goes back after.
echo "$BASHPID" > $CG/cgroup.procs
if ! bash "$REPO/tests/stack.sh" up; then
	echo "Bail out! tests/stack.sh up failed in the guest"
	tail -n 30 "$SANDBOX_VAR"/log/*.log 2> /dev/null
	exit 2
fi
bash "$REPO/tests/stack.sh" stop-runner > /dev/null
echo "$BASHPID" > "$CG$SELF_CG/cgroup.procs"
echo "stack_up_s $((SECONDS - T0))" >> "$TIMINGS"

. "$REPO/tests/integration/env.sh"
load_stack_env SANDBOX_URL SANDBOX_CACERT SANDBOX_TOKEN SANDBOX_CONFIG SANDBOX_DB_SOCKET
. "$REPO/tests/integration/lib.sh"
# shellcheck disable=SC2034 # lib.sh's req sends it
TOKEN=$SANDBOX_TOKEN
CG_NAME=$(conf_get runner_cgroup_name sandbox)
UID_BASE=$(conf_get runner_uid_base 200000)
SLOTS=$(conf_get runner_slots 2)
# the stack runner's cgroups at the top (it started in the root)
rmdir "$CG/$CG_NAME" "$CG/runner" 2> /dev/null
SVC=$CG/system.slice/$UNIT

ctx() {
	CTX=$1
	echo "# t=$((SECONDS - T0))s $1"
}
cg_of() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2> /dev/null; }
main_pid() { systemctl show -p MainPID --value "$UNIT"; }
slot_dirs() { find "$1" -mindepth 1 -maxdepth 1 -type d -name 'slot-*' 2> /dev/null | wc -l; }
slot_procs() {
	local n=0 i
	for ((i = 0; i < SLOTS; i++)); do n=$((n + $(pgrep -u $((UID_BASE + i)) 2> /dev/null | wc -l))); done
	echo "$n"
}
journal() { journalctl -q --no-pager -o cat -u "$UNIT"; }
_in_leaf() { [ "$(cg_of "$(main_pid)")" = "$1" ]; }
_has_slot() { [ "$(slot_dirs "$SVC/$CG_NAME")" -gt 0 ]; }
_no_slot_left() { [ "$(slot_dirs "$SVC/$CG_NAME")" = 0 ] && [ "$(slot_procs)" = 0 ]; }
_started_n() { [ "$(journal | grep -c 'event=runner_started')" -ge "$1" ]; }
_active() { [ "$(systemctl is-active "$UNIT")" = active ]; }

ctx "systemd"
note "$(systemctl --version | head -n 1)"
expect_eq "PID 1 is systemd" systemd "$(cat /proc/1/comm)"

ctx "make install"
if make -C "$REPO" install PREFIX=/usr/local > /tmp/make-install.log 2>&1; then
	expect_true "make install put the runner in /usr/local/bin" test -x /usr/local/bin/sandbox-runner
else
	_notok "make install" "exit 0" "$(tail -n 5 /tmp/make-install.log | tr '\n' '|')" 0
fi
install -D -m 0600 "$SANDBOX_CONFIG" /etc/sandbox/sandbox.conf
install -m 0644 "$REPO/systemd/$UNIT" /etc/systemd/system/
mkdir -p "/etc/systemd/system/$UNIT.d"
# the VM boots sandbox-vm.target only: no sysinit.target/basic.target to order after
printf '[Unit]\nDefaultDependencies=no\n' > "/etc/systemd/system/$UNIT.d/vm.conf"
systemctl daemon-reload

ctx "systemctl start"
systemctl start "$UNIT"
expect_eq "systemctl start: the unit is active" active "$(systemctl is-active "$UNIT")"
poll 120 _started_n 1
expect_true "the runner logged event=runner_started" _started_n 1
LEAF=/system.slice/$UNIT/runner
poll 30 _in_leaf "$LEAF"
expect_eq "the dispatcher (MainPID) moved itself into <unit>/runner" "$LEAF" "$(cg_of "$(main_pid)")"
expect_eq "systemd's ControlGroup of the unit" "/system.slice/$UNIT" "$(systemctl show -p ControlGroup --value "$UNIT")"
expect_true "the start-up log names the layout" grep -q "event=cgroup_v2_layout .*leaf=$CG$LEAF " <<< "$(journal)"
expect_true "memory and pids on in system.slice's subtree_control (systemd, Delegate=yes)" \
	grep -q 'memory.*pids\|pids.*memory' $CG/system.slice/cgroup.subtree_control
expect_true "memory and pids on in the unit's subtree_control (the runner)" \
	grep -q 'memory.*pids\|pids.*memory' "$SVC/cgroup.subtree_control"

run_jobs() { # run_jobs WHEN: hello and cancel through the service
	local when=$1 hello cancel
	ctx "$when: jobs"
	submit '{"command":"echo hello; cat /proc/self/cgroup","limits":{"wall_seconds":120}}' && hello=$JOB
	submit '{"command":"sleep 280","limits":{"wall_seconds":300}}' && cancel=$JOB
	if wait_state "${cancel:-}" running 240; then
		poll 30 _has_slot
		expect_true "$when: a slot cgroup under $SVC/$CG_NAME while jobs run" _has_slot
		expect_true "$when: nothing made at the top of the hierarchy" test ! -e "$CG/$CG_NAME"
		sleep 1
		req POST "/v1/jobs/${cancel:-}/cancel"
		expect_status 200 "$when: cancel answers 200"
		await "${cancel:-}" 240
		expect_json '.status' cancelled
		expect_json '.result.exit_code' 137
	else
		_notok "$when: the job to cancel reached running" running "$(state_of "${cancel:-}")" 0
	fi
	await "${hello:-}" 300
	expect_json '.status' succeeded
	expect_json '.result.stdout | split("\n")[0]' hello
	expect_json '.result.usage.memory_peak_bytes > 0' true "$when: memory_peak_bytes > 0 (memory.peak)"
	expect_json 'any(.result.diagnostics[]; startswith("limits: cgroup v2"))' true "$when: limits: cgroup v2"
	expect_json 'any(.result.diagnostics[]; startswith("limits: cgroup placement clone3 "))' true \
		"$when: the job was born in its slot cgroup (limits: cgroup placement clone3)"
}
run_jobs "first start"

# systemd 252 starts the new main process in the unit's own cgroup, which has
# controllers on for its children (the runner turned them on): the no-internal-processes
# rule. systemd >= 254 with DelegateSubgroup=runner starts it in <unit>/runner instead.
# restart DESC: `systemctl restart`, then where the new
# dispatcher is, and jobs through it.
restart() {
	local when=$1 old
	ctx "systemctl restart ($when)"
	old=$(main_pid)
	STARTED=$(journal | grep -c 'event=runner_started')
	systemctl restart "$UNIT"
	note "restart ($when): systemctl exit $?, is-active $(systemctl is-active "$UNIT"), MainPID $(main_pid) (was $old) in $(cg_of "$(main_pid)")"
	if poll 60 _active && poll 120 _started_n $((STARTED + 1)); then
		note "restart ($when): $(journal | grep 'event=cgroup_v2_layout' | tail -n 1)"
		note "restart ($when): systemd: $(journalctl -q --no-pager -o cat -b -u "$UNIT" | grep -v 'prog=sandbox-runner' | tail -n 4 | tr '\n' '|')"
		expect_eq "restart ($when): the new dispatcher is in <unit>/runner" "$LEAF" "$(cg_of "$(main_pid)")"
		expect_true "restart ($when): nothing made at the top of the hierarchy" test ! -e "$CG/$CG_NAME" -a ! -e "$CG/runner"
	else
		_notok "restart ($when): the unit is active again and its runner started" "active, runner_started" \
			"$(systemctl is-active "$UNIT"); $(journalctl -q --no-pager -b -n 8 -u "$UNIT" | tr '\n' '|')" 0
	fi
}
restart "idle"
run_jobs "after an idle restart"

# a job running across the restart: its supervisor and slot cgroup stay (KillMode=process).
# systemd < 254 cannot start the new dispatcher in the unit's cgroup while the slot is
# there (EBUSY, 219/CGROUP) and retries (StartLimitIntervalSec=0): the job finishes
# without a dispatcher, and the unit comes back by itself once its slot is gone.
SDVER=$(systemctl --version | awk 'NR == 1 { print $2 }')
submit '{"command":"sleep 280","limits":{"wall_seconds":300}}' && LONG=$JOB
if wait_state "${LONG:-}" running 240; then
	ctx "systemctl restart (a job running, systemd $SDVER)"
	STARTED=$(journal | grep -c 'event=runner_started')
	systemctl restart "$UNIT"
	if ((SDVER < 254)); then
		poll 30 test "$(systemctl show -p ExecMainStatus --value "$UNIT")" = 219
		expect_eq "restart (a job running, systemd $SDVER): the new dispatcher cannot start (219/CGROUP: EBUSY)" \
			219 "$(systemctl show -p ExecMainStatus --value "$UNIT")"
		expect_true "restart (a job running): the unit is not active while the slot is busy" \
			fails _active
		expect_true "restart (a job running): the unit retries (not failed by a start limit)" \
			test "$(systemctl show -p ActiveState --value "$UNIT")" != failed
	fi
	expect_eq "restart (a job running): the job is still running" running "$(db_state "${LONG:-}")"
	req POST "/v1/jobs/${LONG:-}/cancel"
	expect_status 200 "cancel of the job that ran across the restart answers 200"
	await "${LONG:-}" 240
	expect_json '.status' cancelled
	expect_json '.result.exit_code' 137
	poll 120 _active && poll 120 _started_n $((STARTED + 1))
	expect_eq "restart (a job running): the unit is active again once the job ended" active "$(systemctl is-active "$UNIT")"
	expect_eq "restart (a job running): the new dispatcher is in <unit>/runner" "$LEAF" "$(cg_of "$(main_pid)")"
	note "restart (a job running): NRestarts $(systemctl show -p NRestarts --value "$UNIT")"
	run_jobs "after a busy restart"
else
	_notok "the long job reached running" running "$(state_of "${LONG:-}")" 0
fi

ctx "systemctl stop"
systemctl stop "$UNIT"
poll 120 _no_slot_left
expect_eq "stop: no slot cgroup left under the unit" 0 "$(slot_dirs "$SVC/$CG_NAME")"
expect_eq "stop: no process of a slot uid left" 0 "$(slot_procs)"
expect_true "no cgroup write failure logged" fails grep -q 'cgroup_write_failed' <<< "$(journal)"
echo "layout_systemd_pid1_s $((SECONDS - T0))" >> "$TIMINGS"

bash "$REPO/tests/stack.sh" down > /dev/null 2>&1
finish
