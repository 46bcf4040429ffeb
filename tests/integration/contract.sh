#!/usr/bin/env bash
# tests/integration/contract.sh: the reference SDK's job contract, end to end (issue
# 13): every error 125 and blocked 126 path is reached by a real job through the API,
# not by a row written into the database. The faults that production cannot be made
# to produce come from build/fault-runner, the test build of the runner that reads
# SANDBOX_FAULTS (sandbox-runner/launch/fault.h); the release build has no such code path.
# For each case: status, exit code, the exact diagnostics (and their order) and the
# failure facts (stage, instance_status, runtime_id, cleanup_status, cleanup_error).
#
#   1. The release runner holds no fault injection; the fault runner runs a plain job.
#   2. Startup retry: EAGAIN twice then started (attempt 3), EAGAIN every time (6
#      attempts, one log line each, one diagnostic), ENOENT (not transient: 1 attempt).
#   3. Limits that cannot be applied, workspace and input-file failures.
#   4. Cleanup failures (process group, workspace) alone, after a timeout, after an
#      output limit, after limits that were not applied: 124/122 stand, every
#      diagnostic in the reference's order.
#   5. The operator's command policy: argv and shell command refused (blocked 126, no
#      failure object, no workspace, no bwrap), an allowed command, the runner refusing
#      to start with an unsafe or malformed policy file.
#
# By hand:
#   SANDBOX_VAR=/tmp/x SANDBOX_PORT=8743 bash tests/stack.sh up
#   make build/fault-runner && SANDBOX_VAR=/tmp/x bash tests/integration/contract.sh
# It stops the stack's runner while it runs (jobs go to the fault runner, one
# `--once` run per case, with a config copy) and starts it again at the end.

set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env --root "the runner itself needs root" --token
FAULT_RUNNER="$SANDBOX_BIN/fault-runner"
if [ ! -x "$FAULT_RUNNER" ]; then
	echo "Bail out! $FAULT_RUNNER is missing (make build/fault-runner; make integration builds it)"
	exit 2
fi

stack stop-runner || { echo "Bail out! tests/stack.sh stop-runner failed"; exit 2; }
at_exit 'stack start-runner > /dev/null || echo "# could not restart the stack'"'"'s runner"'

# The fault runner's config: the stack's, with short start backoff (20 ms doubled:
# 6 attempts take 20+40+80+160+320 ms) and, for section 5, a command policy.
CONF=$T_DIR/contract.conf
cp "$SANDBOX_CONFIG" "$CONF"
printf 'runner_start_backoff_ms = 20\n' >> "$CONF"
POL_DIR=$(mktemp -d /tmp/sandbox-contract-pol.XXXXXX) # root-owned, 0700
at_exit "rm -rf '$POL_DIR'"
POLICY=$POL_DIR/command-policy
POL_CONF=$T_DIR/contract-policy.conf
cp "$CONF" "$POL_CONF"
printf 'runner_command_policy = %s\n' "$POLICY" >> "$POL_CONF"
WORK_DIR="$(conf_get runner_state_dir /var/lib/sandbox-runner)/work"

# fault_run CASE FAULTS [CONF]: the fault runner drains the queue once with
# SANDBOX_FAULTS=FAULTS; its log (runner and supervisors) in $LOG, exit status in $FRC.
fault_run() {
	LOG=$T_DIR/$1.log
	(cd "$T_DIR" && SANDBOX_FAULTS=$2 timeout 90 "$FAULT_RUNNER" --config "${3:-$CONF}" \
		--once --max-seconds 30 < /dev/null > "$LOG" 2>&1)
	FRC=$?
}

# job CASE FAULTS BODY [CONF]: submits BODY, runs the fault runner, waits for the
# result ($BODY holds the job); CTX is CASE.
job() {
	ctx "$1"
	submit "$3" || return 1
	fault_run "$1" "$2" "${4:-}"
	expect_eq "$1: fault runner --once exits 0" 0 "$FRC"
	await "$JOB" 60 || _notok "$1: job is terminal" "terminal" "$(jq -r .status "$BODY")" 0
	RID=$(sql "SELECT runner_id FROM jobs WHERE id = '$JOB'")
}

# expect_result STATUS EXIT_CODE DIAGNOSTICS_JSON: the outcome, and the diagnostics
# the outcome contributes, in order (lines starting with "limits:" or "network:" say
# how the job was run and are left out).
expect_result() {
	expect_json '.status, .result.exit_code' "$1"$'\n'"$2"
	expect_json '[.result.diagnostics[] | select(test("^(limits|network): ") | not)] | tojson' "$3" \
		"diagnostics == $3"
}

# expect_failure STAGE INSTANCE CLEANUP_STATUS CLEANUP_ERROR ERROR: the failure facts
# (CLEANUP_ERROR null: none); runtime_id is the job's jobs.runner_id (host/slot-N/id).
expect_failure() {
	expect_json '.failure | [.stage, .instance_status, .cleanup_status] | join(" ")' "$1 $2 $3"
	expect_json '.failure.cleanup_error // "null"' "$4"
	expect_json '.failure.error' "$5"
	expect_json '.failure.runtime_id' "$RID" "failure.runtime_id is jobs.runner_id ($RID)"
	expect_true "$CTX: runtime_id names host and slot ($RID)" \
		grep -Eq '^[^/]+/slot-[0-9]+/[0-9a-f]+$' <<< "$RID"
	expect_json '.failure | keys | join(",")' \
		"cleanup_error,cleanup_status,error,instance_status,runtime_id,stage"
}

# retry_lines: the job's start attempts in the log, "attempt/max error_type retry".
retry_lines() {
	sed -n "s/.*event=retry step=command.start job=$JOB attempt=\([0-9]*\) max_attempts=\([0-9]*\) runtime_id=\([^ ]*\) error_type=\([A-Z]*\) retry=\([a-z]*\).*/\1\/\2 \3 \4 \5/p" "$LOG" |
		sed "s| $RID | RID |"
}

ECHO='{"command":"echo hi"}'

# ============================================ 1. the builds

ctx "builds"
expect_eq "the release runner has no SANDBOX_FAULTS code path" 0 \
	"$(grep -c -a 'SANDBOX_FAULTS' "$SANDBOX_BIN/sandbox-runner")"
expect_eq "the release runner has no injected-fault text" 0 \
	"$(grep -c -a 'injected fault' "$SANDBOX_BIN/sandbox-runner")"
expect_true "the fault runner reads SANDBOX_FAULTS" grep -q -a SANDBOX_FAULTS "$FAULT_RUNNER"
job "no fault" "" "$ECHO"
expect_result succeeded 0 '[]'
expect_json '(.result.stdout | rtrimstr("\n")), .failure' $'hi\nnull'
expect_eq "no fault: nothing injected" 0 "$(grep -c 'event=fault_injected' "$LOG")"

# ============================================ 2. startup retry

job "start: EAGAIN twice" "start:EAGAIN:2" "$ECHO"
expect_result succeeded 0 '[]'
expect_json '(.result.stdout | rtrimstr("\n")), .failure' $'hi\nnull'
expect_eq "start: EAGAIN twice: one log line per attempt, started on attempt 3" \
	$'1/6 RID EAGAIN yes\n2/6 RID EAGAIN yes' "$(retry_lines)"

job "start: EAGAIN always" "start:EAGAIN" "$ECHO"
expect_result error 125 \
	'["local-process controls failed: sandbox start failed after 6 of 6 attempts (EAGAIN)"]'
expect_failure command.start created completed null "injected fault: EAGAIN"
expect_eq "start: EAGAIN always: 6 attempts logged, the last without retry" \
	"$(printf '%s\n' 1/6 2/6 3/6 4/6 5/6 | sed 's/$/ RID EAGAIN yes/'; echo '6/6 RID EAGAIN no')" \
	"$(retry_lines)"
expect_json '.result.stdout_bytes, .result.usage.wall_ms' $'0\nnull'

job "start: ENOENT" "start:ENOENT" "$ECHO"
expect_result error 125 \
	'["local-process controls failed: sandbox start failed after 1 of 6 attempts (ENOENT)"]'
expect_failure command.start created completed null "injected fault: ENOENT"
expect_eq "start: ENOENT: not transient, one attempt" "1/6 RID ENOENT no" "$(retry_lines)"

ctx "secrets"
expect_eq "no token or database password in the fault runner's logs" 0 \
	"$(cat "$T_DIR"/*.log | grep -c -F -e "$SANDBOX_TOKEN" -e "$(cat "$(conf_get db_password_file /nonexistent)" 2> /dev/null || echo none-set)")"

# ============================================ 3. limits, workspace, input files

job "limits" "limits:EINVAL" "$ECHO"
expect_result error 125 '["resource limits were not applied"]'
expect_failure initialize created completed null "injected fault: EINVAL"

job "workspace" "workspace:EIO" "$ECHO"
expect_result error 125 '["local-process controls failed: workspace setup failed"]'
expect_failure create not_created completed null "injected fault: EIO"

job "input files" "files:ENOSPC" '{"command":"cat a","files":[{"path":"a","content":"x"}]}'
expect_result error 125 '["local-process controls failed: writing input files failed"]'
expect_failure input_files.write created completed null "injected fault: ENOSPC"

# ============================================ 4. cleanup failures

job "cleanup: process group" "cleanup:EBUSY" "$ECHO"
expect_result error 125 '["command process-group cleanup failed"]'
expect_json '.result.stdout' hi "the command's output is kept"
expect_failure cleanup exited failed "process group: injected fault" "process group: injected fault"

job "cleanup: workspace" "ws_cleanup:EBUSY" "$ECHO"
expect_result error 125 '["command process-group cleanup failed"]'
expect_failure cleanup exited failed "workspace: injected fault" "workspace: injected fault"

job "timeout + cleanup" "cleanup:EBUSY" '{"command":"sleep 30","limits":{"wall_seconds":1}}'
expect_result timed_out 124 '["command timed out","command process-group cleanup failed"]'
expect_failure cleanup exited failed "process group: injected fault" "process group: injected fault"

job "output limit + cleanup" "ws_cleanup:EBUSY" \
	'{"command":"yes","limits":{"output_bytes":1000,"wall_seconds":20}}'
expect_result output_limit 122 \
	'["command output limit exceeded","command process-group cleanup failed"]'
expect_failure cleanup exited failed "workspace: injected fault" "workspace: injected fault"

job "limits + cleanup" "limits:EINVAL,cleanup:EBUSY" "$ECHO"
expect_result error 125 \
	'["resource limits were not applied","command process-group cleanup failed"]'
expect_failure initialize created failed "process group: injected fault" "injected fault: EINVAL"

# ============================================ 5. the operator's command policy

cat > "$POLICY" << 'POL'
# contract suite: refuse dd
deny /usr/bin/dd disk copies are not allowed here
POL
chmod 0644 "$POLICY"
# Faults at every step after the policy: a refused job must meet none of them.
AFTER="workspace:EIO,limits:EINVAL,start:EIO"
for c in 'argv|{"argv":["dd","if=/dev/zero","count=1"]}' \
	'argv by path|{"argv":["/bin/dd","if=/dev/zero","count=1"]}' \
	'command|{"command":"LC_ALL=C dd if=/dev/zero count=1 | od"}'; do
	job "policy: ${c%%|*}" "$AFTER" "${c#*|}" "$POL_CONF"
	expect_result blocked 126 '["blocked by local-process policy: disk copies are not allowed here"]'
	expect_json '.failure, .result.stdout_bytes' $'null\n0' "no failure object (the job's outcome)"
	expect_eq "$CTX: refused before workspace, limits and bwrap (no fault met)" 0 \
		"$(grep -c 'event=fault_injected' "$LOG")"
	expect_true "$CTX: the runner logged the policy it loaded" \
		grep -q "event=command_policy path=$POLICY rules=1" "$LOG"
done
job "policy: allowed command" "" '{"command":"echo dd"}' "$POL_CONF"
expect_result succeeded 0 '[]'
expect_json '.result.stdout' dd
# The same faults do fire for a job the policy lets through (so the checks above can fail).
job "policy: allowed command meets the faults" "$AFTER" '{"argv":["echo","dd"]}' "$POL_CONF"
expect_result error 125 '["local-process controls failed: workspace setup failed"]'
expect_eq "$CTX: the workspace fault was met" 1 "$(grep -c 'event=fault_injected point=workspace' "$LOG")"
expect_eq "no workspace left under $WORK_DIR" "" \
	"$(awk -v d="$WORK_DIR/" '$1 == "sandbox-ws" && index($2, d) == 1 {print $2}' /proc/mounts | tr '\n' ' ')"

ctx "policy file"
chmod 0666 "$POLICY"
fault_run "policy-writable" "" "$POL_CONF"
expect_true "a world-writable policy: the runner refuses to start (exit $FRC)" test "$FRC" != 0
expect_true "a world-writable policy: the log says why" \
	grep -q "refusing to start: runner_command_policy $POLICY: group or world writable" "$LOG"
chmod 0644 "$POLICY"
chown 65534 "$POLICY"
fault_run "policy-owner" "" "$POL_CONF"
expect_true "a policy not owned by root: the runner refuses to start" test "$FRC" != 0
expect_true "a policy not owned by root: the log says why" \
	grep -q "refusing to start: runner_command_policy $POLICY: not owned by root" "$LOG"
chown 0 "$POLICY"
printf 'deny /usr/bin/dd ok\nallow /usr/bin/ls\n' > "$POLICY"
fault_run "policy-malformed" "" "$POL_CONF"
expect_true "a malformed policy: the runner refuses to start" test "$FRC" != 0
expect_true "a malformed policy: the log names the line" \
	grep -q "refusing to start: runner_command_policy $POLICY: line 2: a rule starts with deny" "$LOG"

finish
