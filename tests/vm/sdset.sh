#!/usr/bin/env bash
# tests/vm/sdset.sh: the installed sandbox-runner.service under systemd as PID 1, run
# inside the test VM (`bash tests/vm/run.sh systemd`; tests/vm/guest.sh boots
# /lib/systemd/systemd with a minimal target and runs this as sandbox-vm.service).
# Never on the host: it changes /etc/sandbox and starts and stops units.
#
# The service tests/vm/guide.sh installed by following systemd/README.md (MariaDB,
# sandbox-api, nginx with the guide's site, the shipped sandbox-runner.service; the
# guide's key): where systemd put the unit and where the runner moved itself
# (systemd 252 ignores DelegateSubgroup=), jobs (hello: clone3 into the slot, usage;
# cancel: cgroup.kill), `systemctl restart` (the unit's cgroup has controllers on for
# its children: can systemd 252 start the new dispatcher in it?), a delivery pass that
# hangs at `systemctl stop` (killed and reaped by the dispatcher), `systemctl stop`
# (no slot cgroup or slot process left). TAP-like output (lib.sh).
set -u -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
export SANDBOX_VAR=/var/tmp/vmsdset
CG=/sys/fs/cgroup
TIMINGS=${VM_TIMINGS:-/vmout/timings}
UNIT=sandbox-runner.service
[[ $(stat -f -c %T $CG) == cgroup2fs ]] || { echo "Bail out! $CG is not cgroup2 (run me in the VM)"; exit 2; }
[[ $(cat /proc/1/comm) == systemd ]] || { echo "Bail out! PID 1 is $(cat /proc/1/comm), not systemd"; exit 2; }
T0=$SECONDS

# The service tests/vm/guide.sh installed by following systemd/README.md: MariaDB,
# sandbox-api and nginx under systemd, the key the guide made, the shipped
# sandbox-runner.service (started and restarted by the guide).
SANDBOX_URL=https://$(cat /var/tmp/vmguide-api-host 2> /dev/null || echo api.example.com)
export SANDBOX_URL
export SANDBOX_CACERT=/etc/sandbox/tls/fullchain.pem
export SANDBOX_CONFIG=/etc/sandbox/sandbox.conf SANDBOX_DB_SOCKET=/run/mysqld/mysqld.sock
export SANDBOX_RESPONSES=$SANDBOX_VAR/responses.jsonl
[[ -r /root/sandbox-key-alice.json && -r $SANDBOX_CONFIG ]] ||
	{ echo "Bail out! no installed service (tests/vm/guide.sh runs first)"; exit 2; }
# shellcheck disable=SC1091
. "$REPO/tests/integration/lib.sh"
# shellcheck disable=SC2034 # lib.sh's req sends it
TOKEN=$(jq -r .token /root/sandbox-key-alice.json)
CG_NAME=$(conf_get runner_cgroup_name sandbox)
UID_BASE=$(conf_get runner_uid_base 200000)
SLOTS=$(conf_get runner_slots "$(($(nproc) * 2))")
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

run_jobs() { # run_jobs WHEN: a job through the service (the cancel: the busy restart's job)
	local when=$1 hello
	ctx "$when: jobs"
	submit '{"command":"echo hello; cat /proc/self/cgroup","limits":{"wall_seconds":120}}' && hello=$JOB
	await "${hello:-}" 300
	expect_json '.status' succeeded
	expect_json '.result.stdout | split("\n")[0]' hello
	expect_json '.result.usage.memory_peak_bytes > 0' true "$when: memory_peak_bytes > 0 (memory.peak)"
	expect_json 'any(.result.diagnostics[]; startswith("limits: cgroup v2"))' true "$when: limits: cgroup v2"
	expect_json 'any(.result.diagnostics[]; startswith("limits: cgroup placement clone3 "))' true \
		"$when: the job was born in its slot cgroup (limits: cgroup placement clone3)"
}
# (the first start's jobs: tests/vm/guide.sh ran one through this unit and nginx)

# The idle restart: the guide's upgrade step (11) restarted the unit with no job running.
# systemd < 254 may fail to start the new dispatcher in the unit's cgroup (the runner
# turned controllers on for its children): a 219/CGROUP attempt, then RestartSec later
# the pruned cgroup takes it (checked above: the dispatcher in <unit>/runner).
ctx "the guide's idle restart"
SDVER=$(systemctl --version | awk 'NR == 1 { print $2 }')
# (whether systemd 252 needed a second attempt, 219/CGROUP, depends on when it prunes
# the stopped dispatcher's cgroup: noted, not asserted)
note "systemd $SDVER, the guide's restart: $(journalctl -q --no-pager -o cat -b -u "$UNIT" | grep -cE 'status=219') attempt(s) with 219/CGROUP"
expect_true "the guide's start and restart each started a dispatcher (runner_started >= 2)" _started_n 2

# A delivery pass (runner_deliver_path, forked by the dispatcher every 500 ms) that
# hangs and ignores TERM (a receiver that never answers): from the busy restart below on,
# the dispatcher's passes are this script, still running at `systemctl stop`.
STUB=/usr/local/lib/sandbox-vm/slow-deliver
install -d -m 0755 "${STUB%/*}"
printf '#!/bin/sh\n# a delivery pass that hangs and ignores TERM\ntrap "" TERM\nsleep 600\n' > "$STUB"
chmod 0755 "$STUB"
cp "$SANDBOX_CONFIG" "$SANDBOX_VAR/sandbox.conf.orig"
echo "runner_deliver_path = $STUB" >> "$SANDBOX_CONFIG"
_stub_pid() { pgrep -f "^/bin/sh $STUB" | head -n 1; }
_stub_running() { [ -n "$(_stub_pid)" ]; }

# a job running across the restart: its supervisor and slot cgroup stay (KillMode=process).
# systemd < 254 cannot start the new dispatcher in the unit's cgroup while the slot is
# there (EBUSY, 219/CGROUP) and retries (StartLimitIntervalSec=0): the job finishes
# without a dispatcher, and the unit comes back by itself once its slot is gone.
submit '{"command":"sleep 280","limits":{"wall_seconds":300}}' && LONG=$JOB
if wait_state "${LONG:-}" running 240; then
	ctx "a job running (systemd $SDVER)"
	poll 30 _has_slot
	expect_true "a slot cgroup under $SVC/$CG_NAME while the job runs" _has_slot
	expect_true "nothing made at the top of the hierarchy" test ! -e "$CG/$CG_NAME"
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

# A delivery pass (runner_deliver_path, forked by the dispatcher every 500 ms) running
# when the unit stops: KillMode=process signals the dispatcher alone, so the pass used to
# outlive the stop ("Unit process ... (sandbox-deliver) remains running after unit
# stopped"). A pass that hangs and ignores TERM (a receiver that never answers): the
# dispatcher must TERM it, KILL it after 3 s, and reap it before it exits.
ctx "a delivery pass running at stop"
poll 60 _stub_running
expect_true "the hanging delivery pass runs" _stub_running
expect_eq "it runs in the dispatcher's leaf (<unit>/runner)" "$LEAF" "$(cg_of "$(_stub_pid)")"
expect_eq "in a process group of its own" "$(_stub_pid)" "$(ps -o pgid= -p "$(_stub_pid)" 2> /dev/null | tr -d ' ')"

ctx "systemctl stop"
systemctl stop "$UNIT"
expect_true "stop: no delivery pass left (TERM ignored: killed)" fails _stub_running
expect_eq "stop: nothing of the pass's group left (its sleep)" 0 "$(pgrep -c -f '^sleep 600$')"
expect_true "stop: the runner logged the pass it killed (event=callback_pass_killed)" \
	grep -q 'event=callback_pass_killed' <<< "$(journal)"
expect_true "stop: systemd saw no process of the unit remain (sandbox-deliver)" \
	fails grep -qE '\((sandbox-deliver|slow-deliver|sleep)\) remains running after unit stopped' <<< "$(journal)"
expect_eq "stop: the unit's cgroup is gone" 0 "$(find "$SVC" -name cgroup.procs -exec cat {} + 2> /dev/null | wc -l)"
cp "$SANDBOX_VAR/sandbox.conf.orig" "$SANDBOX_CONFIG"
poll 120 _no_slot_left
expect_eq "stop: no slot cgroup left under the unit" 0 "$(slot_dirs "$SVC/$CG_NAME")"
expect_eq "stop: no process of a slot uid left" 0 "$(slot_procs)"
expect_true "no cgroup write failure logged" fails grep -q 'cgroup_write_failed' <<< "$(journal)"
echo "layout_systemd_pid1_s $((SECONDS - T0))" >> "$TIMINGS"

finish
