#!/usr/bin/env bash
# tests/integration/preflight.sh: `sandbox-runner --check [--json]` against the stack's
# config (everything present: exit 0, every item ok) and against broken copies of it
# (a missing bwrap, slot uids that belong to an account, cgroups requested on a
# machine without them are simulated by config only): exit 1, the failing item named
# with its fix; and a runner whose preflight fails claims nothing.
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env --root "the runner does" --token
at_exit 'bash "$STACK" start-runner > /dev/null 2>&1'

ITEMS="root bwrap userns cgroup slot-uids state-dir tmpfs seccomp slirp4netns session-uids session-agent webhooks database db-packet db-schema db-cluster"

ctx "preflight on the stack's config"
"$RUNNER" --config "$SANDBOX_CONFIG" --check > "$T_DIR/check.txt" 2>&1
expect_eq "--check exits 0" 0 "$?"
sed 's/^/#   /' "$T_DIR/check.txt"
for it in $ITEMS; do
	expect_true "item $it is reported ok" grep -Eq "^ok +$it " "$T_DIR/check.txt"
done
expect_eq "the summary line" "OK: 0 failed, 0 warnings" "$(tail -n 1 "$T_DIR/check.txt")"
"$RUNNER" --config "$SANDBOX_CONFIG" --check --json > "$T_DIR/check.json"
expect_eq "--check --json exits 0" 0 "$?"
expect_eq "--json: ok, no failure, every item" "true 0 $(wc -w <<< "$ITEMS")" \
	"$(jq -r '"\(.ok) \(.fail) \(.items | length)"' "$T_DIR/check.json")"
expect_eq "--json: the same items in the same order" "$ITEMS" "$(jq -r '[.items[].item] | join(" ")' "$T_DIR/check.json")"

ctx "preflight on a broken config"
BAD=$T_DIR/bad.conf
cp "$SANDBOX_CONFIG" "$BAD"
nobody=$(id -u nobody)
printf 'bwrap_path = /nonexistent/bwrap\nrunner_uid_base = %s\nrunner_slots = 1\n' "$nobody" >> "$BAD"
"$RUNNER" --config "$BAD" --check > "$T_DIR/bad.txt" 2>&1
expect_eq "--check exits 1" 1 "$?"
sed 's/^/#   /' "$T_DIR/bad.txt"
expect_true "bwrap fails, naming the path" grep -Eq '^fail +bwrap +/nonexistent/bwrap: No such file or directory$' "$T_DIR/bad.txt"
expect_true "slot-uids fails, naming the account" \
	grep -Eq "^fail +slot-uids +uid $nobody \\(slot 0\\) belongs to the account 'nobody'" "$T_DIR/bad.txt"
expect_eq "each failure carries its fix" 2 "$(grep -A1 '^fail' "$T_DIR/bad.txt" | grep -c 'fix: ')"
expect_eq "the summary counts them" "FAIL: 2 failed, 0 warnings" "$(tail -n 1 "$T_DIR/bad.txt")"
"$RUNNER" --config "$BAD" --check --json > "$T_DIR/bad.json"
expect_eq "--json exits 1 too" 1 "$?"
expect_eq "--json names the failing items" "bwrap slot-uids" \
	"$(jq -r '[.items[] | select(.status == "fail") | .item] | join(" ")' "$T_DIR/bad.json")"
printf 'runner_limits_mode = rlimit-only\n' >> "$BAD"
"$RUNNER" --config "$BAD" --check --json > "$T_DIR/bad2.json"
expect_eq "rlimit-only mode is a warning, not a failure" "warn" \
	"$(jq -r '.items[] | select(.item == "cgroup") | .status' "$T_DIR/bad2.json")"

ctx "a runner whose preflight fails claims nothing"
bash "$STACK" stop-runner > /dev/null 2>&1
submit '{"command":"echo preflight"}'
"$RUNNER" --config "$BAD" --once --max-seconds "$(tscale 5)" > "$T_DIR/runner.out" 2>&1
expect_eq "the runner exits 2" 2 "$?"
expect_true "its log names the failing item" grep -q 'event=preflight item=bwrap status=fail' "$T_DIR/runner.out"
expect_true "and says it refuses to claim" grep -q 'event=runner_refused' "$T_DIR/runner.out"
expect_eq "the job is still queued" queued "$(sql "SELECT state FROM jobs WHERE id = '$JOB'")"
bash "$STACK" start-runner > /dev/null 2>&1
await "$JOB" 30 # one 30 s long-poll on the host; as many as the scaled time allows
expect_json '.status + " " + (.result.stdout | rtrimstr("\n"))' 'succeeded preflight' "the stack's runner then runs it"

finish
