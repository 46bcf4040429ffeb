#!/usr/bin/env bash
# tests/integration/profiles.sh: issue 13 points 6 and 9, against an API and a runner
# this suite starts itself with its own config copies (the stack's are stopped, and
# started again at exit).
#
#   environment passthrough: with runner_env_passthrough = LANG, a job sees the
#   runner's own LANG; a host variable that is not listed (SANDBOX_SECRET_TEST) is
#   never in a job's environment nor in any log line; a job's env may not set LANG
#   (400 field env.LANG); the list is in --print-profile (names only) and a bad name
#   stops the runner at start.
#
#   named profiles: python-data (a read-only bind of a site-packages tree) for a key
#   that lists it: the job sees the tree read-only, its object names the profile and
#   carries that profile's digest; a key that does not list it gets 403, an unknown
#   name 400 (field profile); a profile the API knows but the runner host lacks ends
#   error 125 with a diagnostic; --print-profile python-data shows the bind and has
#   its own digest; a group-writable profile file stops the runner at start.
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env --root "the runner does" SANDBOX_TOKEN

SITE=/usr/lib/python3/dist-packages
[ -d "$SITE" ] || SITE=/usr/share/doc
MNT=/opt/python-data/site-packages
HOST_LANG=en_GB.UTF-8
SECRET=hunter2-$RANDOM$RANDOM

# The runner's profiles (python-data) and the API's (python-data and ghost: a
# profile this runner host does not have). Root-owned, 0755 / 0644.
RDIR=$T_DIR/runner-profiles
ADIR=$T_DIR/api-profiles
mkdir -p "$RDIR" "$ADIR"
chmod 0755 "$T_DIR" "$RDIR" "$ADIR"
printf '# a site-packages tree, read-only\nro-bind %s %s\n' "$SITE" "$MNT" > "$RDIR/python-data.profile"
cp "$RDIR/python-data.profile" "$ADIR/python-data.profile"
printf 'ro-bind /usr/share/doc /opt/ghost\n' > "$ADIR/ghost.profile"
chmod 0644 "$RDIR"/*.profile "$ADIR"/*.profile

RCONF=$T_DIR/runner.conf
ACONF=$T_DIR/api.conf
cp "$SANDBOX_CONFIG" "$RCONF"
printf 'runner_env_passthrough = LANG\nrunner_profiles_dir = %s\n' "$RDIR" >> "$RCONF"
cp "$SANDBOX_CONFIG" "$ACONF"
printf 'runner_env_passthrough = LANG\nrunner_profiles_dir = %s\n' "$ADIR" >> "$ACONF"

api_pid=
runner_pid=
restore() {
	[ -n "$runner_pid" ] && kill -TERM "$runner_pid" 2> /dev/null && wait "$runner_pid" 2> /dev/null
	[ -n "$api_pid" ] && kill -TERM "$api_pid" 2> /dev/null && wait "$api_pid" 2> /dev/null
	bash "$STACK" start-api > /dev/null 2>&1
	bash "$STACK" start-runner > /dev/null 2>&1
}
at_exit restore

health() { req GET /v1/health > /dev/null 2>&1; [ "$STATUS" = 200 ]; }
bash "$STACK" stop-runner > /dev/null
bash "$STACK" stop-api > /dev/null
"$SANDBOX_BIN/sandbox-api" --config "$ACONF" > "$T_DIR/api.out" 2>&1 &
api_pid=$!
env LANG=$HOST_LANG SANDBOX_SECRET_TEST=$SECRET "$RUNNER" --config "$RCONF" > "$T_DIR/runner.out" 2>&1 &
runner_pid=$!
if ! poll 20 health; then
	echo "Bail out! the suite's API did not answer: $(tail -n 5 "$T_DIR/api.out")"
	exit 2
fi
expect_true "the suite's runner is running" alive "$runner_pid"

mkkey PD prof-ns prof-tenant user pd-user --profile default --profile python-data --profile ghost
mkkey PLAIN prof-ns prof-tenant user plain-user

DEFAULT_DIGEST=$("$RUNNER" --config "$RCONF" --print-profile | sed -n 's/^digest //p')
"$RUNNER" --config "$RCONF" --print-profile python-data > "$T_DIR/pd.txt" 2>&1
PD_DIGEST=$(sed -n 's/^digest //p' "$T_DIR/pd.txt")

# ---------------------------------------------------------------- point 6
ctx "env passthrough"
TOKEN=$PLAIN_TOK
submit '{"command":"printenv LANG; printenv SANDBOX_SECRET_TEST || echo no-secret; printenv > out/env.txt","files":[{"path":"out/.keep","content":""}],"artifacts":"out"}'
await "$JOB" 60
expect_json .status succeeded "the job ran"
expect_json '.result.stdout' "$(printf '%s\nno-secret\n' "$HOST_LANG")" \
	"the job sees the runner's LANG, and not SANDBOX_SECRET_TEST"
expect_json '.profile_name' default "a job naming no profile runs 'default'"
expect_json '.profile' "$DEFAULT_DIGEST" "its digest is --print-profile's (with the passthrough list)"
req GET "/v1/jobs/$JOB/artifacts/out/env.txt"
expect_status 200 "the job's whole environment (printenv)"
cp "$BODY" "$T_DIR/jobenv.txt"
expect_true "LANG=$HOST_LANG in it" grep -qx "LANG=$HOST_LANG" "$T_DIR/jobenv.txt"
expect_true "no SANDBOX_SECRET_TEST in it" fails grep -q SANDBOX_SECRET_TEST "$T_DIR/jobenv.txt"
expect_true "no secret value in it" fails grep -qF "$SECRET" "$T_DIR/jobenv.txt"
note "job environment: $(cut -d= -f1 "$T_DIR/jobenv.txt" | sort | tr '\n' ' ')"

req POST /v1/jobs '{"command":"true","env":{"LANG":"C"}}'
expect_error 400 invalid_request env.LANG
req POST /v1/jobs '{"command":"printenv LANGUAGE","env":{"LANGUAGE":"de"}}'
expect_status 202 "an unlisted name is the job's own"

expect_true "--print-profile lists LANG" grep -q '^env-passthrough LANG ' <("$RUNNER" --config "$RCONF" --print-profile)
expect_true "--print-profile never shows the runner's value" \
	fails grep -qF "$HOST_LANG" <(LANG=$HOST_LANG "$RUNNER" --config "$RCONF" --print-profile)
expect_true "the passthrough list changes the digest" test "$DEFAULT_DIGEST" != \
	"$("$RUNNER" --config "$SANDBOX_CONFIG" --print-profile | sed -n 's/^digest //p')"

BAD=$T_DIR/bad-env.conf
cp "$RCONF" "$BAD"
printf 'runner_env_passthrough = LANG,1BAD\n' >> "$BAD"
timeout 20 "$RUNNER" --config "$BAD" --once --max-seconds 5 > "$T_DIR/bad-env.out" 2>&1
rc=$?
expect_true "a bad passthrough name stops the runner (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
expect_true "naming the setting and the entry" \
	grep -q "refusing to start: runner_env_passthrough: entry 2 '1BAD' is not a variable name" "$T_DIR/bad-env.out"

# ---------------------------------------------------------------- point 9
ctx "named profiles"
TOKEN=$PD_TOK
submit '{"profile":"python-data","command":"ls '"$MNT"' >/dev/null 2>&1 && echo listed; test -r '"$MNT"'/'"$(ls "$SITE" | head -n 1)"' && echo readable; touch '"$MNT"'/x 2>&1 | grep -o \"Read-only file system\"; mkdir '"$MNT"'/d 2>&1 | grep -o \"Read-only file system\"; true"}'
await "$JOB" 60
expect_json .status succeeded "the python-data job ran"
expect_json '.result.stdout' "$(printf 'listed\nreadable\nRead-only file system\nRead-only file system\n')" \
	"it sees the site-packages tree at $MNT, read-only"
expect_json '.profile_name' python-data "its object names the profile"
expect_json '.profile' "$PD_DIGEST" "and carries python-data's digest"
PD_JOB=$JOB
req GET '/v1/jobs?limit=5'
expect_json "[.jobs[] | select(.id == \"$PD_JOB\") | .profile_name][0]" python-data "the list shows profile_name"

submit '{"command":"test -e /opt/python-data && echo visible || echo absent"}'
await "$JOB" 60
expect_json '.result.stdout' "absent" "the same key's default job has no such bind"
expect_json '.profile_name + " " + .profile' "default $DEFAULT_DIGEST" "default job: name and digest"

req POST /v1/jobs '{"command":"true","profile":"nope"}'
expect_error 400 invalid_request profile
req POST /v1/jobs '{"command":"true","profile":"../etc"}'
expect_error 400 invalid_request profile
req POST /v1/jobs '{"command":"true","profile":7}'
expect_error 400 invalid_request profile
TOKEN=$PLAIN_TOK req POST /v1/jobs '{"command":"true","profile":"python-data"}'
expect_error 403 forbidden profile
TOKEN=$PLAIN_TOK req POST /v1/jobs '{"command":"true","profile":"default"}'
expect_status 202 "a key listing no profile may use default"
req POST /v1/jobs '{"command":"true","mounts":[{"src":"/etc","dst":"/opt/etc"}]}'
expect_error 400 invalid_request mounts

# The API knows ghost (its directory has it), this runner host does not.
submit '{"profile":"ghost","command":"echo ran"}'
await "$JOB" 60
expect_json '.status + " " + (.result.exit_code | tostring)' "error 125" "a profile the runner lacks: error 125"
expect_json '.profile_name' ghost "the job still names it"
expect_true "named profiles: the diagnostic names the profile" \
	jq -e '.result.diagnostics | any(test("sandbox profile .ghost. is not available on this runner host"))' "$BODY"
expect_true "named profiles: the failure says what is missing" \
	jq -e '.failure.error | test("ghost.profile")' "$BODY"
expect_json '.result.stdout' '' "the command never ran"

ctx "print-profile"
expect_true "--print-profile python-data lists the bind" \
	grep -qx "mount --ro-bind $SITE $MNT (profile python-data)" "$T_DIR/pd.txt"
expect_true "and passes it to bwrap" grep -q "^bwrap-args .* --ro-bind $SITE $MNT --proc /proc " "$T_DIR/pd.txt"
expect_true "python-data has its own digest ($PD_DIGEST)" \
	test -n "$PD_DIGEST" -a -n "$DEFAULT_DIGEST" -a "$PD_DIGEST" != "$DEFAULT_DIGEST"
"$RUNNER" --config "$RCONF" --print-profile ghost > "$T_DIR/ghost.txt" 2>&1
expect_eq "--print-profile of a profile this host lacks exits 2" 2 "$?"
expect_true "naming it" grep -q "profile 'ghost' is not defined on this runner host" "$T_DIR/ghost.txt"

ctx "profile files"
GW=$T_DIR/gw-profiles
mkdir -p "$GW"
chmod 0755 "$GW"
printf 'ro-bind %s %s\n' "$SITE" "$MNT" > "$GW/python-data.profile"
chmod 0664 "$GW/python-data.profile"
GWCONF=$T_DIR/gw.conf
cp "$RCONF" "$GWCONF"
printf 'runner_profiles_dir = %s\n' "$GW" >> "$GWCONF"
timeout 20 "$RUNNER" --config "$GWCONF" --once --max-seconds 5 > "$T_DIR/gw.out" 2>&1
rc=$?
expect_true "a group-writable profile file stops the runner (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
expect_true "naming the file" grep -q "refusing to start: $GW/python-data.profile must be a regular file owned by root and not group or world writable" "$T_DIR/gw.out"
chmod 0644 "$GW/python-data.profile"
printf 'bind /usr/share /opt/share\n' > "$GW/rw.profile"
chmod 0644 "$GW/rw.profile"
timeout 20 "$RUNNER" --config "$GWCONF" --once --max-seconds 5 > "$T_DIR/rw.out" 2>&1
expect_true "a writable bind stops the runner, naming file and line" \
	grep -q "refusing to start: $GW/rw.profile: line 1: 'bind' is refused (nothing writable" "$T_DIR/rw.out"

ctx "no secret in any log"
sleep 0.5 # the last log lines of the supervisors
logs=("$T_DIR/runner.out" "$T_DIR/api.out" "$T_DIR/bad-env.out" "$T_DIR/gw.out" "$T_DIR/rw.out")
for f in "$SANDBOX_VAR"/log/*.log; do [ -f "$f" ] && logs+=("$f"); done
expect_true "the runner logged jobs (${#logs[@]} logs searched)" grep -q 'event=job_finished' "$T_DIR/runner.out"
expect_true "no log line holds the unlisted variable's value" fails grep -qF "$SECRET" "${logs[@]}"
expect_true "no log line holds the passed-through value" fails grep -qF "$HOST_LANG" "${logs[@]}"
expect_true "no log line names the unlisted variable" fails grep -q SANDBOX_SECRET_TEST "${logs[@]}"

finish
