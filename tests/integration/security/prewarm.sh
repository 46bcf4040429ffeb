# tests/integration/security/prewarm.sh: security.sh's case 10: prewarmed sandboxes (a runner of the suite's own).
# Sourced by security.sh at this case's place in the run: its helpers, variables and
# checks are the suite's (the same counts, in the same order).
# Job commands are single-quoted on purpose: they expand inside the sandbox.
# shellcheck shell=bash disable=SC2016

# -------------------------------------------------------- 10. prewarmed sandboxes
# A runner of the suite's own (the stack's is stopped meanwhile) with one job slot and
# runner_warm_sandboxes = 1. Job A leaves what it can (/tmp, /dev/shm, the workspace,
# $HOME, a setsid background process, an exported variable); job B, prewarmed too,
# finds none of it, and what it sees (environment, ids, capabilities, no_new_privs,
# seccomp, hostname, limits, mounts, descriptors, processes, umask, cwd) is byte for
# byte what the same job sees cold, on the same config with runner_warm_sandboxes =
# 0 (mount ids and device numbers normalised: they differ between any two jobs). A
# job handed to a holder whose stub was killed while idle still runs (cold, in the
# same slot, saying why), and so does one right after an idle stub was killed.

CASE="prewarm"
ctx "$CASE"
W_CONF=$T_DIR/warm.conf
C_CONF=$T_DIR/cold.conf
{ cat "$SANDBOX_CONFIG"; echo "runner_slots = 1"; echo "runner_warm_sandboxes = 1"; } > "$W_CONF"
{ cat "$SANDBOX_CONFIG"; echo "runner_slots = 1"; echo "runner_warm_sandboxes = 0"; } > "$C_CONF"
OWN_RUNNER=
own_start() {
	(cd "$T_DIR" && exec setsid "$SANDBOX_BIN/sandbox-runner" --config "$1" < /dev/null \
		>> "$T_DIR/own-runner.log" 2>&1) &
	OWN_RUNNER=$!
}
own_stop() {
	[ -n "$OWN_RUNNER" ] || return 0
	kill -TERM "$OWN_RUNNER" 2> /dev/null
	poll 10 fails alive "$OWN_RUNNER"
	OWN_RUNNER=
}
at_exit 'own_stop; bash "$STACK" start-runner > /dev/null 2>&1'
holder_of() { pgrep -x -f -- "sandbox-runner --config $1 --warm --slot 0" | head -n 1; }
stub_pid() { pgrep -u "$UID_BASE" -x -f -- "/proc/self/fd/8 --exec-stub" | head -n 1; }
warm_up() { [ -n "$(holder_of "$W_CONF")" ] && [ -n "$(stub_pid)" ]; }
no_holder() { [ -z "$(holder_of "$W_CONF")" ]; }
launch_line() { jf '[.result.diagnostics[] | select(startswith("launch: "))] | join(";")'; }
# what a job sees; host-side, mount ids, parents, device numbers and peer groups go
VIEW='env | sort
echo "--- id"; id
echo "--- status"; grep -E "^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp|Seccomp_filters):" /proc/self/status
echo "--- hostname"; cat /proc/sys/kernel/hostname
echo "--- ulimit"; ulimit -a
echo "--- umask"; umask
echo "--- cwd"; pwd
echo "--- mountinfo"; cut -d" " -f4- /proc/self/mountinfo
echo "--- fds"; ls /proc/self/fd
echo "--- processes"; echo "pid1=$(cat /proc/1/comm) self=$$"; ls /proc | grep -cE "^[0-9]+$"
echo "--- left"; for f in /tmp /dev/shm /workspace; do echo "$f: $(ls -A "$f" | tr "\n" " ")"; done'
# (scaled: its cpu_seconds and a wall of its own, the same for the warm and the cold job)
VIEW_CPU=$(tscale 7 300)
VIEW_JOB=$(jq -cn --arg c "$VIEW" --argjson cpu "$VIEW_CPU" --argjson w "$(tscale 10 300)" '{command: $c, cwd: "sub/dir", env: {JOBVAR: "job value"},
	limits: {memory_mb: 128, pids: 32, disk_mb: 16, cpu_seconds: $cpu}} | if $w != 10 then .limits.wall_seconds = $w else . end')
# (the deleted files bwrap made for --ro-bind-data have a random name per sandbox)
normalise() { sed -E 's/(shared|master|propagate_from):[0-9]+/\1:N/g; s#/bindfile[A-Za-z0-9]{6}//deleted#/bindfileN//deleted#'; }

if stack stop-runner; then
	own_start "$W_CONF"
	expect_true "$CASE: the holder of slot 0 and its stub are up" poll 15 warm_up
	submit '{"command":"echo A > /tmp/a; echo A > /dev/shm/a; echo A > /workspace/a; echo A > \"$HOME/.a\"; setsid sh -c \"sleep 300\" < /dev/null > /dev/null 2>&1 & export LEAKED=1; echo done"}' &&
		wait_job "$JOB"
	expect_eq "$CASE: job A ran prewarmed" "succeeded done launch: prewarmed sandbox" \
		"$(jf .status) $(stdout) $(launch_line)"
	expect_true "$CASE: a new holder is up for the next job" poll 15 warm_up
	expect_eq "$CASE: job A's background sleep is gone" "" "$(pgrep -u "$UID_BASE" -x sleep)"
	submit "$VIEW_JOB" && wait_job "$JOB"
	W_VIEW=$(stdout | normalise)
	expect_eq "$CASE: job B ran prewarmed" "succeeded launch: prewarmed sandbox" \
		"$(jf .status) $(launch_line)"
	expect_eq "$CASE: job B finds nothing of job A" \
		"/tmp: "$'\n'"/dev/shm: "$'\n'"/workspace: sub " "$(sed -n '/^--- left$/,$p' <<< "$W_VIEW" | tail -n 3)"
	expect_nomatch "$CASE: job A's exported variable is not in B's environment" '^LEAKED=' "$W_VIEW"
	expect_match "$CASE: B's own variable is" '^JOBVAR=job value$' "$W_VIEW"
	expect_match "$CASE: B runs in its cwd" '^/workspace/sub/dir$' "$W_VIEW"
	expect_match "$CASE: B's workspace is a tmpfs of its disk_mb (16 MiB)" \
		' /workspace rw,.* - tmpfs sandbox-ws rw,size=16384k' "$W_VIEW"
	expect_match "$CASE: B's CPU rlimit is its cpu_seconds" '^time\(seconds\) +'"$VIEW_CPU"'$' "$W_VIEW"

	# an idle stub killed while its holder cannot notice: the job handed over runs cold
	# in the same slot, and says why
	expect_true "$CASE: a holder is up" poll 15 warm_up
	H=$(holder_of "$W_CONF")
	kill -STOP "$H"
	kill -KILL "$(stub_pid)" 2> /dev/null
	submit '{"command":"echo after the stub died"}'
	SJ=$JOB
	# the dispatcher waits 1 s for the holder's answer, then leaves it the job (scaled:
	# its claim comes later in a slow guest; capped well under the 30 s lease)
	sleep "$(tscale 1.5 10)"
	kill -CONT "$H"
	wait_job "$SJ"
	expect_eq "$CASE: handed to a holder whose stub died: it ran cold" \
		"succeeded after the stub died launch: cold (the prewarmed sandbox had ended)" \
		"$(jf .status) $(stdout) $(launch_line)"
	expect_eq "$CASE: in the holder's slot" 0 "$(sql "SELECT runner_id FROM jobs WHERE id = '$SJ'" | sed -n 's|.*/slot-\([0-9]*\)/.*|\1|p')"
	# an idle stub killed, the holder notices: it gives the slot back, nothing is lost
	expect_true "$CASE: a holder is up again" poll 15 warm_up
	H=$(holder_of "$W_CONF")
	kill -KILL "$(stub_pid)" 2> /dev/null
	submit '{"command":"echo after an idle death"}' && wait_job "$JOB"
	expect_eq "$CASE: the next job runs" "succeeded after an idle death" "$(jf .status) $(stdout)"
	expect_true "$CASE: the slot is prewarmed again, by a new holder" poll 15 warm_up
	expect_true "$CASE: the old holder ($H) is gone" poll 5 fails alive "$H"
	own_stop
	expect_true "$CASE: holders end with their dispatcher" poll 10 no_holder
	expect_true "$CASE: and so do their sandboxes" poll 10 fails stub_pid

	own_start "$C_CONF"
	sleep "$(tscale 0.5)" # a holder would have been started by now
	expect_eq "$CASE: runner_warm_sandboxes = 0 prewarms nothing" "" "$(holder_of "$C_CONF")$(stub_pid)"
	submit "$VIEW_JOB" && wait_job "$JOB"
	C_VIEW=$(stdout | normalise)
	expect_eq "$CASE: cold, no launch line (prewarming off)" "succeeded " "$(jf .status) $(launch_line)"
	if [ "$W_VIEW" = "$C_VIEW" ]; then
		_ok "$CASE: the prewarmed job sees exactly what the cold one sees"
	else
		_notok "$CASE: the prewarmed job sees exactly what the cold one sees" "$C_VIEW" \
			"$(diff <(printf '%s\n' "$C_VIEW") <(printf '%s\n' "$W_VIEW") | head -n 20)" 0
	fi
	own_stop
	stack start-runner || _notok "$CASE: the stack's runner restarted" 0 1 0
	# a starting runner probes its runtimes in a slot (rtprobe.h): let that end first
	slots_quiet() { [ -z "$(slot_procs | live_only)" ]; }
	poll 10 slots_quiet
	check_clean
else
	skip "$CASE" "the stack's runner could not be stopped"
fi
