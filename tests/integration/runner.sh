#!/usr/bin/env bash
# tests/integration/runner.sh: end-to-end suite of the runner (sandbox-runner) against a
# running local stack (tests/stack.sh, with its runner daemon). Jobs go in over HTTPS and
# their outcomes are checked concretely (status, exit_code, signal, diagnostics, bytes):
#
#   1. Outcomes per DESIGN.md section 5: exit codes, signals, wall / output / memory /
#      pids / cpu limits, stdin (text and binary), non-UTF-8 output, argv, cwd, input
#      files, env, usage fields, the "limits: cgroup" diagnostic, the profile digest.
#   2. Artifacts: regular files only (links and fifos skipped, with a diagnostic), sizes,
#      sha256, downloads; an artifacts directory that is a symlink yields nothing.
#   3. Cancelling a running job: cancelled within 2 s, exit 137, nothing left running.
#   4. Lifecycle in MariaDB: job_events queued -> running -> succeeded, timestamps.
#   5. Exactly once: 200 queued jobs drained by 3 `--once` runners at the same time,
#      every job with exactly one claim and one finish.
#   6. Supervisors outlive the dispatcher (kill -9 and SIGTERM of the daemon).
#   7. A killed supervisor ends as `lost` (125, "runner lost during execution") once its
#      lease (5 s here, via a config copy) expires.
#   8. `--once` on an empty queue exits 0 promptly.
#   9. The runner refuses to start when a profile host path is unsafe.
#  11. Claim wake-up: the socket's mode and owner, another user cannot send, a runner
#      polling every 10 s claims jobs on the API's wake-up, junk datagrams are ignored.
#  12. Pre-forked supervisors: the idle pool, a job run by a spare, spares killed
#      while idle lose no job, idle spares end with the dispatcher.
#  13. Prewarmed sandboxes (a runner of the suite's own with every slot prewarmed):
#      the same outcomes as cold jobs, each run prewarmed; a burst larger than the
#      pool all runs; --once beside held slots; holders end with their dispatcher.
#  10. Nothing is left over: no process of the stack's slot uids, no workspace tmpfs, no
#      process in the slot cgroups.
#
# By hand:
#   SANDBOX_VAR=/tmp/x SANDBOX_PORT=8743 bash tests/stack.sh up
#   SANDBOX_VAR=/tmp/x bash tests/integration/runner.sh
# Environment, from $SANDBOX_VAR/env: SANDBOX_URL, SANDBOX_CACERT, SANDBOX_TOKEN,
# SANDBOX_CONFIG, SANDBOX_DB_SOCKET; SANDBOX_BIN defaults to <repo>/build. Must run as
# root (it inspects the runner's processes, cgroups and mounts, and starts runners).
#
# Not for a stack that others use at the same time: it stops and restarts the stack's
# runner (cases 5-7); the runner is left running at the end, also on failure or Ctrl-C.

set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env --root "the runner itself needs root" --token
runner_conf
RUNNER_LOG=$SANDBOX_VAR/log/runner.log
RUNNER_PID_FILE=$SANDBOX_VAR/run/runner.pid
RUN="$RANDOM$RANDOM"
SUITE_T0=$SECONDS

# ---------------------------------------------------------------- helpers

# wait_gone SECONDS PID...: true when all are gone within the time.
wait_gone() { poll "$1" none_alive "${@:2}"; }

# The stack's runner must be running when the suite ends, whatever happened.
keep_runner

# The stack's slot uid of a job (from jobs.runner_id ".../slot-N/...").
slot_of() {
	sql "SELECT runner_id FROM jobs WHERE id = '$1'" | sed -n 's|.*/slot-\([0-9]*\)/.*|\1|p'
}

# slot_uids_none: no process of any of the stack's slot uids.
slot_uids_none() {
	local i n=0
	for ((i = 0; i < SLOTS; i++)); do n=$((n + $(uid_procs $((UID_BASE + i))))); done
	[ "$n" = 0 ]
}
# slot_uids_idle SECONDS: no process of any of the stack's slot uids within the time.
slot_uids_idle() { poll "$1" slot_uids_none; }

# supervisor_pids ID: the supervisor process(es) of a job.
supervisor_pids() { pgrep -f -- "--supervise $1" 2> /dev/null || true; }

# jstdout: the last job's stdout bytes (stdout or stdout_base64) on stdout.
jstdout() {
	if jq -e '.result | has("stdout_base64")' "$BODY" > /dev/null 2>&1; then
		jq -r '.result.stdout_base64' "$BODY" | base64 -d
	else
		jq -j '.result.stdout // empty' "$BODY"
	fi
}

runner_log_tail() {
	note "runner log (last lines of $RUNNER_LOG):"
	tail -n 8 "$RUNNER_LOG" 2> /dev/null | sed 's/^/#   /'
}

# expect_outcome STATUS EXIT SIGNAL: status, exit_code and signal (null for none).
expect_outcome() {
	expect_json '.status' "$1"
	expect_json '.result.exit_code' "$2"
	expect_json '.result.signal' "$3"
}
# expect_diag TEXT: the diagnostics hold exactly this line.
expect_diag() {
	expect_json "[.result.diagnostics[] | select(. == \"$1\")] | length" 1 "diagnostic \"$1\""
}
# Every result has a line "limits: cgroup ..." and integer usage fields.
expect_common() {
	expect_json 'any(.result.diagnostics[]; startswith("limits: cgroup"))' true \
		'a diagnostic starts with "limits: cgroup"'
	expect_json '.result.usage | [.wall_ms, .cpu_ms, .memory_peak_bytes] | map(type == "number" and . == floor) | all' \
		true 'usage fields are integers'
	expect_json '.result.usage | .wall_ms > 0 and .cpu_ms >= 0 and .memory_peak_bytes > 0' true \
		'wall_ms > 0, cpu_ms >= 0, memory_peak_bytes > 0'
}

if ! runner_pid > /dev/null; then
	echo "Bail out! the stack's runner is not running (tests/stack.sh start-runner)"
	exit 2
fi
# start-runner restarts a runner whose binary was rebuilt since it started: the suite
# tests $SANDBOX_BIN/sandbox-runner as it is now (and the profile digest matches it).
stack start-runner || { echo "Bail out! tests/stack.sh start-runner failed"; exit 2; }
note "stack $SANDBOX_VAR: slot uids $UID_BASE..$((UID_BASE + SLOTS - 1)), cgroup $CG_NAME, state $STATE_DIR"

# ================================================= 1. outcomes (submitted together)

declare -A J
# Under emulation (SANDBOX_TIME_SCALE > 1) a job that gives no wall_seconds or
# cpu_seconds gets the default's 10 s scaled (at most 300, the maximum): 17 jobs at
# once in a TCG guest outlast 10 s, and the memory bombs used their 10 s of CPU there
# before they reached 64 MiB.
submit_as() { # NAME BODY
	local body=$2
	if [ "$TSCALE" != 1 ]; then
		body=$(jq -c --argjson w "$(tscale 10 300)" '.limits = ({wall_seconds: $w, cpu_seconds: $w} + (.limits // {}))' <<< "$body")
	fi
	submit "$body"
	J[$1]=$JOB
}
submit_as echo '{"command":"echo hi"}'
submit_as exit3 '{"command":"exit 3"}'
submit_as kill9 '{"command":"kill -9 $$"}'
submit_as wall '{"command":"sleep 5","limits":{"wall_seconds":1}}'
submit_as flood '{"command":"head -c 100000 /dev/zero","limits":{"output_bytes":1000}}'
submit_as mem '{"command":"python3 -c '"'"'x=bytearray(300*1024*1024)'"'"'","limits":{"memory_mb":64}}'
submit_as mem2 '{"command":"head -c 300M /dev/zero | tail","limits":{"memory_mb":64}}'
# The classic bomb, with the first shell staying around: if it exits at once (and
# `wait` returns as soon as its own child pipeline is gone) the pid namespace ends
# with it, possibly before any fork was refused, and then the job honestly never
# exceeded its limit.
submit_as fork '{"command":"f(){ f|f & }; f; sleep 2","limits":{"pids":16}}'
submit_as fork_live '{"command":"f(){ f|f & }; f; exec sleep 3","limits":{"pids":16}}'
submit_as stdin '{"command":"cat","stdin":"abc"}'
submit_as stdin_b64 '{"command":"od -An -tx1","stdin_base64":"YQBi"}'
submit_as binout '{"command":"printf \"\\377\\376x\"; printf \"\\377\" >&2"}'
submit_as argv '{"argv":["/bin/echo","a b"]}'
submit_as cwd '{"command":"pwd","cwd":"sub/dir"}'
submit_as files '{"argv":["./bin/tool","x"],"files":[{"path":"data/in.txt","content":"file-content\n"},{"path":"bin/tool","content":"#!/bin/sh\necho \"tool:$1\"\ncat data/in.txt\n[ -x data/in.txt ] || echo in.txt-not-executable\n","executable":true}]}'
submit_as env '{"command":"echo \"$FOO\"","env":{"FOO":"bar baz"}}'

ctx "echo hi"
await "${J[echo]}"
expect_outcome succeeded 0 null
expect_json '.result.stdout|@json' '"hi\n"'
expect_json '.result.stderr|@json' '""'
expect_common
# cgroup v1 (this host): no CLONE_INTO_CGROUP, the child writes cgroup.procs itself;
# clone3 on v2 is asserted in the VM (tests/vm/v2set.sh)
if [ "$(jq -r 'any(.result.diagnostics[]; startswith("limits: cgroup v1"))' "$BODY")" = true ]; then
	expect_json 'any(.result.diagnostics[]; startswith("limits: cgroup placement procs "))' true \
		'cgroup v1: diagnostic "limits: cgroup placement procs"'
else
	skip 'cgroup placement procs' 'not a cgroup v1 host (v2 is checked in tests/vm)'
fi
expect_json '.profile | test("^sha256:[0-9a-f]{64}$")' true 'profile is sha256:<64 hex>'
PROFILE_LAST=$("$RUNNER" --config "$SANDBOX_CONFIG" --print-profile 2> /dev/null | tail -n 1)
expect_json '"digest " + .profile' "$PROFILE_LAST" 'profile == sandbox-runner --print-profile digest'
if [ "digest $(jq -r .profile "$BODY")" != "$PROFILE_LAST" ]; then
	note "runner_started lines: $(grep -o 'pid=[0-9]* event=runner_started.*' "$RUNNER_LOG" | tail -n 2 | tr '\n' ' ')"
	note "$RUNNER mtime: $(stat -c %y "$RUNNER") (was it rebuilt while the suite ran?)"
fi
ECHO_BODY=$T_DIR/echo.json
cp "$BODY" "$ECHO_BODY"

ctx "exit 3"
await "${J[exit3]}"
expect_outcome failed 3 null
expect_common

ctx 'kill -9 $$'
await "${J[kill9]}"
expect_outcome failed 137 9
expect_common

ctx "sleep 5, wall_seconds 1"
await "${J[wall]}"
expect_outcome timed_out 124 null
expect_diag "command timed out"
expect_common
expect_json ".result.usage.wall_ms >= 1000 and .result.usage.wall_ms < $(tscale 3000)" true \
	'stopped after about 1 s (1000 <= wall_ms < 3000)'

ctx "output flood, output_bytes 1000"
await "${J[flood]}"
expect_outcome output_limit 122 null
expect_diag "command output limit exceeded"
expect_json '.result.stdout_truncated' true
expect_json '.result | has("stdout_base64")' true 'stdout comes as stdout_base64'
expect_eq "output flood: exactly 1000 bytes kept" 1000 "$(jstdout | wc -c)"
expect_true "output flood: the kept bytes are the first 1000 bytes written (NULs)" \
	cmp <(jstdout) <(head -c 1000 /dev/zero)
expect_common

for k in mem mem2; do
	if [ "$k" = mem ]; then ctx "memory bomb (python3 bytearray 300 MiB), memory_mb 64"; else ctx "memory bomb (head -c 300M | tail), memory_mb 64"; fi
	await "${J[$k]}"
	expect_json '.status' resource_limit
	expect_diag "command exceeded memory resource limit"
	expect_json '.result.signal != null and .result.exit_code == 128 + .result.signal' true \
		'exit_code = 128 + signal'
	expect_common
done

ctx "fork bomb f(){ f|f & }; f; sleep 2, pids 16"
await "${J[fork]}"
expect_json '.status' resource_limit
expect_diag "command exceeded pids resource limit"
expect_json '.result.signal != null and .result.exit_code == 128 + .result.signal' true \
	'exit_code = 128 + signal'
expect_common
fork_note() {
	if [ "$(jq -r .status "$BODY")" != resource_limit ]; then
		note "result: $(jq -c '[.status, .result.exit_code, .result.signal, .result.usage]' "$BODY");" \
			"stderr has $(jq -r '.result.stderr // ""' "$BODY" | grep -c 'Cannot fork') 'Cannot fork' line(s)"
	fi
}
fork_note

ctx "fork bomb that stays alive (...; exec sleep 3), pids 16"
await "${J[fork_live]}"
expect_outcome resource_limit 137 9
expect_diag "command exceeded pids resource limit"
expect_common
fork_note

ctx "cpu spin, cpu_seconds 1"
# Alone, not next to the batch above: on a busy CPU the tick-sampled RLIMIT_CPU clock
# and the cgroup's exact cpuacct.usage can differ by more than 10 %.
submit '{"command":"while :; do :; done","limits":{"cpu_seconds":1,"wall_seconds":10}}'
await "$JOB"
expect_json '.status' resource_limit
expect_diag "command exceeded cpu resource limit"
expect_json '.result.signal != null and .result.exit_code == 128 + .result.signal' true \
	'exit_code = 128 + signal'
expect_json '.result.usage.cpu_ms >= 900' true 'cpu_ms >= 900'
expect_json ".result.usage.wall_ms < $(tscale 5000)" true 'stopped well before the wall limit (wall_ms < 5000)'
expect_common

ctx "stdin abc"
await "${J[stdin]}"
expect_outcome succeeded 0 null
expect_json '.result.stdout|@json' '"abc"'

ctx "stdin_base64 a NUL b"
await "${J[stdin_b64]}"
expect_outcome succeeded 0 null
expect_json '.result.stdout|@json' '" 61 00 62\n"' 'od shows the 3 bytes 61 00 62'

ctx "non-UTF-8 output"
await "${J[binout]}"
expect_outcome succeeded 0 null
expect_json '.result.stdout_base64' '//54'
expect_json '.result.stderr_base64' '/w=='
expect_json '.result | has("stdout") or has("stderr")' false 'no stdout/stderr text fields'

ctx 'argv ["/bin/echo","a b"]'
await "${J[argv]}"
expect_outcome succeeded 0 null
expect_json '.result.stdout|@json' '"a b\n"'
expect_json '.argv|@json' '["/bin/echo","a b"]'

ctx "cwd sub/dir"
await "${J[cwd]}"
expect_outcome succeeded 0 null
expect_json '.result.stdout|@json' '"/workspace/sub/dir\n"'

ctx "input files, executable script run by argv"
await "${J[files]}"
expect_outcome succeeded 0 null
expect_json '.result.stdout|@json' '"tool:x\nfile-content\nin.txt-not-executable\n"'

ctx "env FOO"
await "${J[env]}"
expect_outcome succeeded 0 null
expect_json '.result.stdout|@json' '"bar baz\n"'
expect_json 'has("env")' false 'env is not echoed in the job object'

# ================================================= 4. lifecycle in MariaDB

ctx "lifecycle"
EID=${J[echo]}
expect_eq "lifecycle: job_events of a succeeded job" \
	"-:queued queued:running running:succeeded" \
	"$(sql "SELECT CONCAT(IFNULL(from_state,'-'),':',to_state) FROM job_events WHERE job_id = '$EID' ORDER BY id" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "lifecycle: jobs row state, started_at and finished_at set, attempt 1" \
	"succeeded 1 1 1" \
	"$(sql "SELECT state, started_at IS NOT NULL, finished_at IS NOT NULL, attempt FROM jobs WHERE id = '$EID'" | tr '\t' ' ')"
cp "$ECHO_BODY" "$BODY"
expect_json '.started_at != null and .finished_at != null' true 'API: started_at and finished_at set'
expect_json '.created_at <= .started_at and .started_at <= .finished_at' true \
	'API: created_at <= started_at <= finished_at'

# ================================================= 2. artifacts

ctx "artifacts"
A_TXT=$'hello artifact\n'
submit '{"command":"mkdir -p out/sub && printf '"'"'hello artifact\\n'"'"' > out/a.txt && printf '"'"'\\000\\001\\002\\377bin'"'"' > out/sub/b.bin && ln -s /etc/passwd out/link && mkfifo out/fifo","artifacts":"out"}'
AJ=$JOB
await "$AJ"
expect_outcome succeeded 0 null
SHA_A=$(printf '%s' "$A_TXT" | sha256sum | cut -d' ' -f1)
SHA_B=$(printf '\000\001\002\377bin' | sha256sum | cut -d' ' -f1)
expect_json '[.result.artifacts[].path]|@json' '["out/a.txt","out/sub/b.bin"]' \
	'exactly out/a.txt and out/sub/b.bin, sorted'
expect_json '.result.artifacts[] | select(.path == "out/a.txt") | "\(.size) \(.sha256)"' \
	"${#A_TXT} $SHA_A" 'out/a.txt size and sha256'
expect_json '.result.artifacts[] | select(.path == "out/sub/b.bin") | "\(.size) \(.sha256)"' \
	"7 $SHA_B" 'out/sub/b.bin size and sha256'
expect_json 'any(.result.diagnostics[]; test("out/link skipped: symbolic link"))' true \
	'a diagnostic says "out/link skipped: symbolic link"'
expect_json 'any(.result.diagnostics[]; test("out/fifo skipped"))' true \
	'a diagnostic says out/fifo was skipped'
req GET "/v1/jobs/$AJ/artifacts"
expect_status 200
expect_json '[.[] | "\(.path) \(.size) \(.sha256)"] | join(",")' \
	"out/a.txt ${#A_TXT} $SHA_A,out/sub/b.bin 7 $SHA_B" 'artifact list endpoint'
req GET "/v1/jobs/$AJ/artifacts/out/a.txt"
expect_status 200
expect_eq "artifacts: download out/a.txt returns its bytes" "$SHA_A" "$(sha256sum < "$BODY" | cut -d' ' -f1)"
req GET "/v1/jobs/$AJ/artifacts/out/sub/b.bin"
expect_status 200
expect_eq "artifacts: download out/sub/b.bin returns its bytes" "$SHA_B" "$(sha256sum < "$BODY" | cut -d' ' -f1)"
req GET "/v1/jobs/$AJ/artifacts/out/link"
expect_error 404 not_found

ctx "artifacts dir is a symlink to /"
submit '{"command":"ln -s / out","artifacts":"out"}'
await "$JOB"
expect_outcome succeeded 0 null
expect_json '.result.artifacts|@json' '[]' 'no artifacts'
expect_json 'any(.result.diagnostics[]; test("artifacts directory out.*symbolic link"))' true \
	'a diagnostic says the artifacts directory out is a symbolic link'

# ================================================= 3. cancel a running job

ctx "cancel"
# (scaled: in the guest, beside other guests, 30 s went by before the cancel was sent)
CSLEEP="sleep $(tscale 30 290)"
submit '{"command":"'"$CSLEEP"'","limits":{"wall_seconds":'"$(tscale 60 300)"'}}'
CJ=$JOB
if wait_state "$CJ" running 15; then
	_ok "cancel: job reached running"
	sleep 0.3 # let the command start inside the sandbox
	CSLOT=$(slot_of "$CJ")
	CSUP=$(supervisor_pids "$CJ")
	t0=$(now_ms)
	req POST "/v1/jobs/$CJ/cancel"
	expect_status 200 "cancel answers 200"
	if wait_state "$CJ" cancelled 10; then
		dt=$(($(now_ms) - t0))
		note "cancelled after $dt ms"
		expect_true "cancel: cancelled within 2 s of the request (took $dt ms)" test "$dt" -lt "$(tscale 2000)"
	else
		_notok "cancel: reaches cancelled" cancelled "$(jq -r .status "$BODY")"
		runner_log_tail
	fi
	await "$CJ" 10
	expect_outcome cancelled 137 9
	expect_common
	expect_true "cancel: supervisor ${CSUP:-?} gone within 3 s" wait_gone 3 $CSUP
	if [ -n "$CSLOT" ]; then
		expect_true "cancel: no process of slot uid $((UID_BASE + CSLOT)) left" slot_uids_idle 3
	else
		_notok "cancel: slot of the job known" "runner_id .../slot-N/..." "$(sql "SELECT runner_id FROM jobs WHERE id = '$CJ'")" 0
	fi
	expect_eq "cancel: no $CSLEEP of the slot uid left" 0 \
		"$(pgrep -u $((UID_BASE + ${CSLOT:-0})) -f "$CSLEEP" | wc -l)"
else
	_notok "cancel: job reached running" running "$(state_of "$CJ")" 0
	runner_log_tail
fi

# ================================================= 6. supervisors outlive the dispatcher

for sig in KILL TERM; do
	ctx "dispatcher SIG$sig during a job"
	# (under emulation the job sleeps longer: the guest's polls took more than its 3 s to
	# see it running)
	submit '{"command":"sleep '"$(tscale 3 30)"'; echo done","limits":{"wall_seconds":'"$(tscale 30 120)"'}}'
	SJ=$JOB
	if ! wait_state "$SJ" running 15; then
		_notok "SIG$sig: job reached running" running "$(state_of "$SJ")" 0
		runner_log_tail
		continue
	fi
	DPID=$(runner_pid)
	if [ -z "$DPID" ]; then
		_notok "SIG$sig: the stack's runner is running" "a pid in $RUNNER_PID_FILE" none 0
		continue
	fi
	kill -"$sig" "$DPID"
	expect_true "SIG$sig: the dispatcher $DPID exits within 5 s" wait_gone 5 "$DPID"
	RUNNER_STOPPED=1
	expect_true "SIG$sig: the job's supervisor still runs" test -n "$(supervisor_pids "$SJ")"
	await "$SJ" 30
	expect_outcome succeeded 0 null
	expect_json '.result.stdout|@json' '"done\n"'
	expect_eq "SIG$sig: one claim, one finish" "queued:running running:succeeded" \
		"$(sql "SELECT CONCAT(from_state,':',to_state) FROM job_events WHERE job_id = '$SJ' AND from_state IS NOT NULL ORDER BY id" | tr '\n' ' ' | sed 's/ $//')"
	# Only after the job ended: start-runner stops leftovers of the runner (its
	# supervisors included) before starting a new one.
	if stack start-runner; then RUNNER_STOPPED=0; fi
	expect_true "SIG$sig: the stack's runner restarted" runner_pid
done

# ================================================= 6b. a DB outage during a run

ctx "database down while a job runs"
# (under emulation: a longer job, and a longer outage for it to end in; the guest's
# stop-db alone took longer than a 10 s job had left, which then stored its result
# before MariaDB went away)
submit '{"command":"sleep '"$(tscale 2 30)"'; echo survived","limits":{"wall_seconds":60}}'
DJ=$JOB
if wait_state "$DJ" running 15; then
	stack stop-db
	sleep "$(tscale 4 45)" # the job ends while MariaDB is away: its result has nowhere to go
	expect_true "db down: the supervisor still runs, holding the result" test -n "$(supervisor_pids "$DJ")"
	stack start-db
	# The API's connection comes back by itself; the supervisor retries the write.
	await "$DJ" 30
	expect_outcome succeeded 0 null
	expect_json '.result.stdout|@json' '"survived\n"'
	expect_true "db down: retries were logged with step, attempt and error type" \
		grep -Eq "event=retry step=store_result job=$DJ attempt=[0-9]+ .*error_type=db retry=yes" "$SANDBOX_VAR/log/runner.log"
else
	_notok "db down: job reached running" running "$(state_of "$DJ")" 0
	runner_log_tail
fi

ctx "after the restarts"
submit '{"command":"echo again"}'
await "$JOB"
expect_outcome succeeded 0 null
expect_json '.result.stdout|@json' '"again\n"'

# ================================================= 7. a killed supervisor ends as lost

ctx "lost"
if stack stop-runner; then RUNNER_STOPPED=1; fi
own_runner lease "runner_lease_seconds = 5"
LEASE_RUNNER=$OWN_PID
sleep 0.3
expect_true "lost: a runner with runner_lease_seconds = 5 runs" alive "$LEASE_RUNNER"
submit '{"command":"sleep 60","limits":{"wall_seconds":120}}'
LJ=$JOB
if wait_state "$LJ" running 15; then
	sleep 0.5
	LSLOT=$(slot_of "$LJ")
	LSUP=$(supervisor_pids "$LJ")
	expect_eq "lost: exactly one supervisor process" 1 "$(printf '%s\n' $LSUP | grep -c .)"
	if [ -n "$LSUP" ]; then
		kill -9 $LSUP
		t0=$(now_ms)
		expect_true "lost: no process of slot uid $((UID_BASE + ${LSLOT:-0})) left (--die-with-parent)" slot_uids_idle 5
		if wait_state "$LJ" lost 25; then
			dt=$(($(now_ms) - t0))
			note "lost after $dt ms"
			expect_true "lost: within 20 s of the kill (took $dt ms)" test "$dt" -le "$(tscale 20000)"
		else
			_notok "lost: job reaches lost" lost "$(state_of "$LJ")" 0
			sed 's/^/#   /' "$T_DIR/lease-runner.log" | tail -n 8
		fi
		await "$LJ" 5
		expect_outcome lost 125 null
		expect_json '.result.diagnostics|@json' '["runner lost during execution"]'
		expect_json '.failure.error' 'lease expired'
		expect_eq "lost: events queued->running->lost" "queued:running running:lost" \
			"$(sql "SELECT CONCAT(from_state,':',to_state) FROM job_events WHERE job_id = '$LJ' AND from_state IS NOT NULL ORDER BY id" | tr '\n' ' ' | sed 's/ $//')"
	fi
else
	_notok "lost: job reached running" running "$(state_of "$LJ")" 0
	sed 's/^/#   /' "$T_DIR/lease-runner.log" | tail -n 8
fi
kill -TERM "$LEASE_RUNNER" 2> /dev/null
expect_true "lost: the lease runner stops on SIGTERM" wait_gone 10 "$LEASE_RUNNER"
if stack start-runner; then RUNNER_STOPPED=0; fi
expect_true "lost: the stack's runner restarted" runner_pid
ctx "slot reuse after a lost job"
# Two jobs at once reuse both slots: a dead supervisor's leftovers (workspace mount,
# cgroup) are cleaned when its slot is next used.
submit '{"command":"sleep 0.5; echo a"}'
R1=$JOB
submit '{"command":"sleep 0.5; echo b"}'
R2=$JOB
await "$R1"
expect_outcome succeeded 0 null
await "$R2"
expect_outcome succeeded 0 null

# ================================================= 8. --once on an empty queue

ctx "--once, empty queue"
expect_eq "--once: no job queued before" 0 "$(sql "SELECT COUNT(*) FROM jobs WHERE state = 'queued'")"
t0=$(now_ms)
(cd "$T_DIR" && "$RUNNER" --config "$SANDBOX_CONFIG" --once > "$T_DIR/once.log" 2>&1)
rc=$?
dt=$(($(now_ms) - t0))
expect_eq "--once: exit status" 0 "$rc"
expect_true "--once: exits within 5 s (took $dt ms)" test "$dt" -lt "$(tscale 5000)"
expect_true "--once: logs runner_stopped" grep -q 'event=runner_stopped' "$T_DIR/once.log"

# ================================================= 5. exactly once, 3 runners

ctx "exactly once"
if stack stop-runner; then RUNNER_STOPPED=1; fi
fails runner_pid > /dev/null && _ok "exactly once: the stack's runner is stopped" ||
	_notok "exactly once: the stack's runner is stopped" stopped running 0
BULK_TENANT="rt-bulk-$RUN"
KEY_JSON=$(ctl keys create --namespace runner-it --tenant "$BULK_TENANT" --subject-type user \
	--subject-id bulk --max-queued 1000 --json)
BULK_TOKEN=$(jq -r '.token // empty' <<< "$KEY_JSON")
expect_true "exactly once: key with --max-queued 1000 created" test -n "$BULK_TOKEN"
t0=$(now_ms)
printf '%s\n' $(seq 200) | xargs -P 16 -I{} curl -sS -o /dev/null -w '%{http_code}\n' \
	--cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $BULK_TOKEN" \
	-H 'Content-Type: application/json' --data-binary '{"command":"true"}' \
	"$SANDBOX_URL/v1/jobs" > "$T_DIR/bulk-codes" 2> "$T_DIR/bulk-err"
note "200 submissions in $(($(now_ms) - t0)) ms"
expect_eq "exactly once: 200 submissions answered 202" "200 202" \
	"$(sort "$T_DIR/bulk-codes" | uniq -c | awk '{print $1, $2}' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "exactly once: 200 jobs queued" 200 \
	"$(sql "SELECT COUNT(*) FROM jobs WHERE tenant_id = '$BULK_TENANT' AND state = 'queued'")"
t0=$(now_ms)
BULK_PIDS=()
for i in 1 2 3; do
	# (--once ends when the queue is empty; --max-seconds is its cap: in the guest 3
	# runners took 125 s for 88 of the 200 jobs)
	(cd "$T_DIR" && exec "$RUNNER" --config "$SANDBOX_CONFIG" --once --max-seconds "$(tscale 120 900)" \
		< /dev/null > "$T_DIR/bulk-runner-$i.log" 2>&1) &
	BULK_PIDS+=($!)
done
EXTRA_PIDS+=("${BULK_PIDS[@]}")
for i in 0 1 2; do
	wait "${BULK_PIDS[$i]}"
	rc=$?
	expect_eq "exactly once: --once runner $((i + 1)) exits 0" 0 "$rc"
	if [ "$rc" != 0 ]; then
		grep -v 'event=job_' "$T_DIR/bulk-runner-$((i + 1)).log" | head -n 5 | sed 's/^/#   /'
	fi
done
note "3 runners drained the queue in $(($(now_ms) - t0)) ms; claims per runner:" \
	"$(for i in 1 2 3; do grep -c 'event=job_claimed' "$T_DIR/bulk-runner-$i.log"; done | tr '\n' ' ')"
expect_eq "exactly once: all 200 jobs succeeded" "succeeded 200" \
	"$(sql "SELECT state, COUNT(*) FROM jobs WHERE tenant_id = '$BULK_TENANT' GROUP BY state" | tr '\t' ' ' | tr '\n' ',' | sed 's/,$//')"
expect_eq "exactly once: every job has one queued->running and one running->succeeded event" 200 \
	"$(sql "SELECT COUNT(*) FROM (SELECT j.id,
	          SUM(e.from_state = 'queued' AND e.to_state = 'running') AS qr,
	          SUM(e.from_state = 'running' AND e.to_state = 'succeeded') AS rs,
	          SUM(e.from_state IS NOT NULL) AS n
	        FROM jobs j JOIN job_events e ON e.job_id = j.id
	        WHERE j.tenant_id = '$BULK_TENANT' GROUP BY j.id
	        HAVING qr = 1 AND rs = 1 AND n = 2) t")"
expect_eq "exactly once: 200 claims in all" 200 \
	"$(sql "SELECT COUNT(*) FROM job_events e JOIN jobs j ON j.id = e.job_id
	        WHERE j.tenant_id = '$BULK_TENANT' AND e.to_state = 'running'")"
expect_eq "exactly once: attempt = 1 for every job" "200 200" \
	"$(sql "SELECT COUNT(*), SUM(attempt = 1) FROM jobs WHERE tenant_id = '$BULK_TENANT'" | tr '\t' ' ')"
expect_eq "exactly once: 200 results stored" 200 \
	"$(sql "SELECT COUNT(*) FROM job_results r JOIN jobs j ON j.id = r.job_id WHERE j.tenant_id = '$BULK_TENANT'")"
expect_eq "exactly once: the runners' logs claim 200 distinct jobs, 200 claims" "200 200" \
	"$(cat "$T_DIR"/bulk-runner-*.log | sed -n 's/.*event=job_claimed job=\([^ ]*\).*/\1/p' | sort | uniq -c | awk '{n++; s += $1} END {print n + 0, s + 0}')"
if stack start-runner; then RUNNER_STOPPED=0; fi
expect_true "exactly once: the stack's runner restarted" runner_pid

# ================================================= 9. unsafe profile host paths

ctx "unsafe host paths"
UNSAFE=$T_DIR/unsafe
mkdir -p "$UNSAFE"
# A runner that must never reach the database: no jobs can be claimed by it.
unsafe_conf() { # FILE STATE_DIR
	cp "$SANDBOX_CONFIG" "$1"
	printf 'runner_state_dir = %s\ndb_socket = %s\n' "$2" "$UNSAFE/no-such.sock" >> "$1"
}
unsafe_run() { # CONF LOG: runs --once, exit status in $URC
	(cd "$T_DIR" && timeout 30 "$RUNNER" --config "$1" --once --max-seconds 1 < /dev/null > "$2" 2>&1)
	URC=$?
}
# Baseline: a fresh state dir is accepted (and gets its etc/).
SD1=$UNSAFE/state-link
unsafe_conf "$UNSAFE/link.conf" "$SD1"
unsafe_run "$UNSAFE/link.conf" "$UNSAFE/first.log"
expect_eq "unsafe: a fresh state dir is accepted (--once exit 0)" 0 "$URC"
expect_true "unsafe: the first run created etc/passwd" test -f "$SD1/etc/passwd"
# etc replaced by a symlink to another directory.
DECOY=$UNSAFE/decoy-etc
mkdir -p "$DECOY"
chmod 0700 "$DECOY"
rm -rf "${SD1:?}/etc"
ln -s "$DECOY" "$SD1/etc"
unsafe_run "$UNSAFE/link.conf" "$UNSAFE/link.log"
expect_true "unsafe: etc -> symlink: exit status non-zero (got $URC)" test "$URC" != 0
expect_true "unsafe: etc -> symlink: says refusing to start" grep -q 'refusing to start' "$UNSAFE/link.log"
expect_eq "unsafe: etc -> symlink: nothing written through the link" "0 700" \
	"$(find "$DECOY" -mindepth 1 | wc -l) $(stat -c %a "$DECOY")"
if [ -n "$(ls -A "$DECOY")" ] || [ "$(stat -c %a "$DECOY")" != 700 ]; then
	note "the runner chmod'ed/wrote through the planted link before refusing: $(stat -c %a "$DECOY"), $(ls "$DECOY" | tr '\n' ' ')"
fi
sed 's/^/#   /' "$UNSAFE/link.log" | head -n 3
# A world-writable state dir.
SD2=$UNSAFE/state-0777
unsafe_conf "$UNSAFE/mode.conf" "$SD2"
unsafe_run "$UNSAFE/mode.conf" "$UNSAFE/mode-first.log"
chmod 0777 "$SD2"
unsafe_run "$UNSAFE/mode.conf" "$UNSAFE/mode.log"
expect_true "unsafe: state dir 0777: exit status non-zero (got $URC)" test "$URC" != 0
expect_true "unsafe: state dir 0777: says refusing to start" grep -q 'refusing to start' "$UNSAFE/mode.log"
[ "$URC" = 0 ] && note "state dir mode after the run: $(stat -c %a "$SD2") (prof_prepare_etc chmods it to 0711 before prof_check_host looks)"
sed 's/^/#   /' "$UNSAFE/mode.log" | head -n 3
# A state dir not owned by root.
SD3=$UNSAFE/state-owner
unsafe_conf "$UNSAFE/owner.conf" "$SD3"
unsafe_run "$UNSAFE/owner.conf" "$UNSAFE/owner-first.log"
chown 65534:65534 "$SD3"
unsafe_run "$UNSAFE/owner.conf" "$UNSAFE/owner.log"
expect_true "unsafe: state dir owned by nobody: exit status non-zero (got $URC)" test "$URC" != 0
expect_true "unsafe: state dir owned by nobody: says refusing to start" grep -q 'refusing to start' "$UNSAFE/owner.log"
sed 's/^/#   /' "$UNSAFE/owner.log" | head -n 3
# Slot uids that belong to a real account (kill(-1) as that uid would hit its owner).
SD4=$UNSAFE/state-uid
unsafe_conf "$UNSAFE/uid.conf" "$SD4"
printf 'runner_uid_base = %s\n' "$(id -u nobody)" >> "$UNSAFE/uid.conf"
unsafe_run "$UNSAFE/uid.conf" "$UNSAFE/uid.log"
expect_true "unsafe: slot uid of a real account: exit status non-zero (got $URC)" test "$URC" != 0
expect_true "unsafe: slot uid of a real account: names the user" \
	grep -q "refusing to start: slot uid $(id -u nobody) belongs to user nobody" "$UNSAFE/uid.log"


ctx "submit and wait in one round trip (POST /v1/jobs?wait=S)"
req POST "/v1/jobs?wait=20" '{"command":"echo waited"}'
expect_status 200 "a job that ends within S answers 200"
expect_json '.status + " " + (.result.stdout | rtrimstr("\n"))' 'succeeded waited'
expect_header Location '^/v1/jobs/[0-9a-f-]{36}$'
req POST "/v1/jobs?wait=1" '{"command":"sleep 5","limits":{"wall_seconds":10}}'
expect_status 202 "a job still running after S answers 202, as without wait"
expect_json '.status' running
req POST "/v1/jobs/$(jq -r .id "$BODY")/cancel" ''

# ================================================= 11. claim wake-up (runner_wake_socket)

ctx "wake-up"
WAKE_SOCK=$(conf_get runner_wake_socket)
wake_dg() { # USER: sends one datagram to the wake socket as USER; prints "sent" or the errno name
	setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups /usr/bin/python3 -c '
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    s.sendto(sys.argv[2].encode() * int(sys.argv[3]), sys.argv[1]); print("sent")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))' "$WAKE_SOCK" "${2:-w}" "${3:-1}"
}
if [ -z "$WAKE_SOCK" ]; then
	skip "wake-up: runner_wake_socket is empty in this stack's config (the runner only polls)"
else
	WAKE_DIR_UID=$(stat -c %u "$(dirname "$WAKE_SOCK")")
	expect_eq "wake: the socket is write-only for its directory's owner" \
		"s-w------- $WAKE_DIR_UID" "$(stat -c '%A %u' "$WAKE_SOCK" 2>&1)"
	expect_eq "wake: another user (nobody) cannot send" EACCES "$(wake_dg nobody)"
	expect_eq "wake: the directory's owner can send" sent "$(wake_dg "$(id -un "$WAKE_DIR_UID")")"
	# A runner that polls only every 10 s (the maximum): three jobs in a row, each waited
	# for at most 4 s, all end. Polling alone claims at most one job in those 12 s (one
	# pass per 10 s): the others were claimed on the API's wake-up.
	if stack stop-runner; then RUNNER_STOPPED=1; fi
	expect_true "wake: the stopped runner removed its socket" test ! -e "$WAKE_SOCK"
	own_runner wake "runner_poll_ms = 10000"
	WAKE_RUNNER=$OWN_PID
	expect_true "wake: the runner binds the socket" poll 10 test -S "$WAKE_SOCK"
	sleep 1 # past its first pass: from here on it waits 10 s between passes
	for i in 1 2 3; do
		submit '{"argv":["/bin/true"]}'
		req GET "/v1/jobs/$JOB?wait=4"
		expect_json '.status' succeeded
	done
	# the content is never read: a full-size datagram of anything is just a wake-up
	expect_eq "wake: a 64 KiB datagram of junk is accepted" sent "$(wake_dg root x 65000)"
	submit '{"command":"echo after junk"}'
	req GET "/v1/jobs/$JOB?wait=4"
	expect_json '.status + " " + (.result.stdout | rtrimstr("\n"))' 'succeeded after junk'
	expect_true "wake: the runner is still running" alive "$WAKE_RUNNER"
	# the API's RuntimeDirectory is recreated when the API restarts: bound again at
	# the next pass (this runner makes one every 10 s when nothing wakes it)
	rm -f "$WAKE_SOCK"
	expect_true "wake: a removed socket is bound again" poll 15 test -S "$WAKE_SOCK"
	submit '{"argv":["/bin/true"]}'
	req GET "/v1/jobs/$JOB?wait=4"
	expect_json '.status' succeeded
	kill -TERM "$WAKE_RUNNER" 2> /dev/null
	expect_true "wake: the runner stops on SIGTERM" wait_gone 10 "$WAKE_RUNNER"
	expect_true "wake: and removes its socket" test ! -e "$WAKE_SOCK"
	# a --once runner never takes the socket (a daemon may be listening)
	(cd "$T_DIR" && "$RUNNER" --config "$SANDBOX_CONFIG" --once > "$T_DIR/wake-once.log" 2>&1)
	expect_true "wake: --once does not bind it" test ! -e "$WAKE_SOCK"
	if stack start-runner; then RUNNER_STOPPED=0; fi
	expect_true "wake: the stack's runner binds it again" poll 10 test -S "$WAKE_SOCK"
fi

# ================================================= 12. pre-forked supervisors (runner_spare_supervisors)

ctx "spares"
SPARES=$(conf_get runner_spare_supervisors 2)
[ "$SPARES" -gt "$SLOTS" ] && SPARES=$SLOTS
spare_pids() { pgrep -x -f -- "sandbox-runner --config $SANDBOX_CONFIG --spare" || true; }
spare_count_is() { [ "$(spare_pids | grep -c .)" = "$1" ]; }
if [ "$SPARES" = 0 ]; then
	skip "spares: runner_spare_supervisors = 0 in this stack's config (a fresh exec per job)"
else
	expect_true "spares: $SPARES idle spares wait beside the dispatcher" poll 10 spare_count_is "$SPARES"
	IDLE=" $(spare_pids | tr '\n' ' ')"
	# (3 s, scaled: with 1 s a loaded host saw it end before it looked for its supervisor)
	submit '{"command":"sleep '"$(tscale 3 30)"'; echo from a spare","limits":{"wall_seconds":'"$(tscale 10 300)"'}}'
	SPJ=$JOB
	if wait_state "$SPJ" running 15; then
		SUP=$(supervisor_pids "$SPJ")
		expect_eq "spares: exactly one supervisor, found by its --supervise command line" 1 \
			"$(printf '%s\n' $SUP | grep -c .)"
		expect_true "spares: the supervisor ($SUP) was an idle spare ($IDLE)" \
			test -n "$SUP" -a "${IDLE#* $SUP }" != "$IDLE"
	else
		_notok "spares: job reached running" running "$(state_of "$SPJ")" 0
	fi
	await "$SPJ"
	expect_outcome succeeded 0 null
	expect_json '.result.stdout|@json' '"from a spare\n"'
	expect_true "spares: the pool is refilled" poll 10 spare_count_is "$SPARES"
	# Spares that die while idle lose no job: the dispatcher finds them gone when it
	# hands a job over and launches a fresh supervisor instead.
	kill -KILL $(spare_pids) 2> /dev/null
	SJS=()
	for i in 1 2 3 4; do submit "{\"command\":\"echo after $i\"}" && SJS+=("$JOB"); done
	for i in 1 2 3 4; do
		await "${SJS[$((i - 1))]}"
		expect_json '.status + " " + (.result.stdout | rtrimstr("\n"))' "succeeded after $i"
	done
	expect_true "spares: refilled after they were killed" poll 10 spare_count_is "$SPARES"
	# Idle spares end with their dispatcher (they read the end of its socket).
	if stack stop-runner; then RUNNER_STOPPED=1; fi
	expect_true "spares: no idle spare outlives the dispatcher" poll 10 spare_count_is 0
	if stack start-runner; then RUNNER_STOPPED=0; fi
	expect_true "spares: the restarted runner has its spares" poll 10 spare_count_is "$SPARES"
fi

# ================================================= 13. prewarmed sandboxes (runner_warm_sandboxes)

# The same jobs on the stack's runner (cold) and on a runner of the suite's own with
# every slot prewarmed give the same status, exit code, signal, output and
# diagnostics (but the "launch:" line), each warm one run prewarmed: exit codes,
# signals, the wall clock, the output cap, cpu, memory and pids limits, stdin, cwd,
# argv, files, a command that is missing, not executable or a script without #!.
# Then the pool: one holder per slot, a burst of three jobs per slot all run (none
# waits for a held slot), a --once runner beside it ends at once on an empty queue,
# holders end with their dispatcher.
ctx "prewarm"
WARM_CONF=$T_DIR/warm.conf
{ cat "$SANDBOX_CONFIG"; echo "runner_warm_sandboxes = $SLOTS"; } > "$WARM_CONF"
holders() { pgrep -x -f -- "sandbox-runner --config $WARM_CONF --warm --slot [0-9]+" | grep -c .; }
holders_are() { [ "$(holders)" = "$1" ]; }
# the outcome as a client sees it, without the launch line
outcome_of() {
	jq -c '[.status, .result.exit_code, .result.signal, .result.stdout, .result.stdout_base64,
		.result.stderr, .result.stdout_truncated,
		[.result.diagnostics[] | select(startswith("launch: ") | not)], .failure]' "$BODY"
}
PW_JOBS=(
	'{"command":"echo out; echo err >&2; exit 3"}'
	'{"command":"kill -TERM $$"}'
	'{"command":"sleep 5","limits":{"wall_seconds":1}}'
	'{"command":"head -c 100000 /dev/zero","limits":{"output_bytes":1000}}'
	'{"command":"while :; do :; done","limits":{"cpu_seconds":1}}'
	'{"command":"a=$(head -c 200000000 /dev/zero | tr \"\\0\" x); echo ${#a}","limits":{"memory_mb":32}}'
	'{"command":"exec 2> /dev/null; f() { f | f & }; f; sleep 5","limits":{"pids":16,"wall_seconds":10}}'
	'{"command":"cat; pwd; ulimit -n; ulimit -f; ulimit -t; ls /proc/self/fd","stdin":"in\n","cwd":"a/b","limits":{"disk_mb":8,"cpu_seconds":3}}'
	'{"argv":["sh","-c","echo \"$0 $1 $X\"","x","y z"],"env":{"X":"ex"}}'
	'{"argv":["nosuchcmd"]}'
	'{"argv":["/nonexistent/x"]}'
	'{"argv":["./f.txt"],"files":[{"path":"f.txt","content":"F"}]}'
	'{"argv":["./noshebang"],"files":[{"path":"noshebang","content":"echo from a script without #!","executable":true}]}'
	'{"command":"cat f.txt; ./run.sh","files":[{"path":"f.txt","content":"F\n"},{"path":"run.sh","content":"#!/bin/sh\necho RUN","executable":true}]}'
)
PW_COLD=()
for b in "${PW_JOBS[@]}"; do submit "$b" && PW_COLD+=("$JOB") || PW_COLD+=(none); done
PW_COLD_OUT=()
for j in "${PW_COLD[@]}"; do
	if await "$j" 60; then PW_COLD_OUT+=("$(outcome_of)"); else PW_COLD_OUT+=("cold job $j did not end"); fi
done
if stack stop-runner; then RUNNER_STOPPED=1; fi
(cd "$T_DIR" && exec setsid "$RUNNER" --config "$WARM_CONF" < /dev/null >> "$T_DIR/warm-runner.log" 2>&1) &
WARM_RUNNER=$!
EXTRA_PIDS+=("$WARM_RUNNER")
expect_true "prewarm: one holder per slot ($SLOTS)" poll 15 holders_are "$SLOTS"
for i in "${!PW_JOBS[@]}"; do
	poll 15 holders_are "$SLOTS"
	submit "${PW_JOBS[$i]}" || continue
	if ! await "$JOB" 60; then
		_notok "prewarm: job $i ended" terminal "$(state_of "$JOB")" 0
		continue
	fi
	expect_eq "prewarm: ${PW_JOBS[$i]}: as cold" "${PW_COLD_OUT[$i]}" "$(outcome_of)"
	expect_json '[.result.diagnostics[] | select(startswith("launch: "))] | join(";")' \
		"launch: prewarmed sandbox" "prewarm: job $i ran prewarmed"
done
# a burst: more jobs than slots, prewarmed or not, all run
PW_BURST=()
for ((i = 0; i < 3 * SLOTS; i++)); do submit "{\"command\":\"echo burst $i\"}" && PW_BURST+=("$JOB"); done
PW_OK=0
for i in "${!PW_BURST[@]}"; do
	await "${PW_BURST[$i]}" 60 && [ "$(jq -r '.status + " " + .result.stdout' "$BODY")" = "succeeded burst $i" ] &&
		PW_OK=$((PW_OK + 1))
done
expect_eq "prewarm: a burst of $((3 * SLOTS)) jobs all succeed" "$((3 * SLOTS))" "$PW_OK"
expect_true "prewarm: the pool is full again" poll 15 holders_are "$SLOTS"
t0=$(now_ms)
(cd "$T_DIR" && "$RUNNER" --config "$SANDBOX_CONFIG" --once > "$T_DIR/once-warm.log" 2>&1)
dt=$(($(now_ms) - t0))
expect_true "prewarm: --once beside held slots ends at once on an empty queue (took $dt ms)" \
	test "$dt" -lt 5000
kill -TERM "$WARM_RUNNER" 2> /dev/null
expect_true "prewarm: the runner stops on SIGTERM" wait_gone 10 "$WARM_RUNNER"
expect_true "prewarm: its holders end with it" poll 10 holders_are 0
expect_true "prewarm: and so do their sandboxes (no process of a slot uid)" slot_uids_idle 10
if stack start-runner; then RUNNER_STOPPED=0; fi

# ================================================= 10. nothing left over

ctx "leftovers"
expect_true "the stack's runner is running" runner_pid
expect_true "no process of slot uids $UID_BASE..$((UID_BASE + SLOTS - 1))" slot_uids_idle 5
for p in "${EXTRA_PIDS[@]}"; do
	expect_true "runner $p started by the suite is gone" wait_gone 10 "$p"
done
expect_eq "no supervisor of this stack left" "" \
	"$(pgrep -f -- "--config $SANDBOX_CONFIG --supervise" | tr '\n' ' ')"
# The stack's runner, just started, probes the runtimes in a slot of its own (a
# workspace and the slot's cgroup for a few seconds): a leftover is what is still
# there after it (up to 15 s, scaled).
ws_mounts() { awk -v d="$STATE_DIR/work/" '$1 == "sandbox-ws" && index($2, d) == 1 {print $2}' /proc/mounts | tr '\n' ' '; }
cg_procs() {
	local c d n=0
	for c in memory pids; do
		for d in /sys/fs/cgroup/$c/$CG_NAME/slot-* /sys/fs/cgroup/$CG_NAME/slot-*; do
			[ -f "$d/cgroup.procs" ] || continue
			n=$((n + $(wc -l < "$d/cgroup.procs")))
		done
	done
	echo "$n"
}
poll 15 eval '[ -z "$(ws_mounts)" ] && [ "$(cg_procs)" = 0 ]'
expect_eq "no sandbox-ws mount under $STATE_DIR/work" "" "$(ws_mounts)"
expect_eq "no process in the slot cgroups of $CG_NAME" 0 "$(cg_procs)"
note "suite time: $((SECONDS - SUITE_T0)) s"

finish
