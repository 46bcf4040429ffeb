#!/usr/bin/env bash
# tests/integration/runtimes.sh: issue 12 point 1 (runtimes), over HTTPS through nginx
# with the stack's real runner and bwrap (its runner_runtimes_file is etc/runtimes.conf).
#
#   1. GET /v1/runtimes lists python3, perl, bash, sh (version null: dash has no
#      version option), c and c++ (compiled: true) with the version line the host's
#      own binaries print (the sandbox's /usr is the host's); node exactly when the
#      host has it (tests/deps.sh does not install it).
#   2. A runner with a test file naming a program that does not exist: that runtime
#      is not listed; a second version of python3 on another (fake) host is listed as
#      its own entry while the host is fresh, and not once it is 5 minutes old.
#   3. Jobs: {"runtime":"python3","source":...} succeeds with the program's output; an
#      alias; files + entrypoint; shell metacharacters in the source are program text;
#      the stored argv is the run template with the file's path as one element.
#   4. Refusals: unknown runtime (400 field runtime, naming the known ones), runtime
#      with command or argv, source without runtime, neither or both of source and
#      entrypoint, an entrypoint that is not a file, a source clashing with a file.
#   5. Compiled runtimes (gcc from build-essential): hello world runs after the
#      compile step (result.compile exit 0); a compile error ends the job failed with
#      gcc's exit code, result.compile.stderr holds gcc's message, and nothing ran.
#   6. Cron runners (--once) on a fresh host name (a UTS namespace of their own):
#      the first run probes and still runs the queued job; the next does not probe
#      (rows fresh, file unchanged); a changed file, then rows 4 minutes old, make
#      the next run probe again.
#   7. With the suite's own API and runner reading a test runtimes file: a runtime
#      the file lists but no live host provides is a 422 (runtime_unavailable, field
#      runtime; a batch item's too), and accepted (202) once no live host reported;
#      POST /v1/jobs/batch?wait=30 answers 200 with every job ended; compile and run
#      share wall_seconds (a compile of 3 s leaves 2 of 5 to a run of 3 s: timed
#      out; a compile that never ends ends the job at wall_seconds, naming it).
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env --root "the suite starts a runner" --token
HOST=$(hostname)
FAKE_HOST="rt-fake-$RANDOM$RANDOM"

# What the sandbox's PATH (/usr/local/bin:/usr/bin:/bin) finds on this host.
host_prog() {
	local d
	for d in /usr/local/bin /usr/bin /bin; do
		[ -x "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	return 1
}
first_line() { sed -n '/[^[:space:]]/{s/^[[:space:]]*//;s/[[:space:]]*$//;p;q}'; }
rt_field() { jq -r --arg n "$1" "[.runtimes[] | select(.name == \$n)] | if length == 0 then \"(absent)\" else .[0].$2 end" "$BODY"; }
rt_count() { jq -r --arg n "$1" '[.runtimes[] | select(.name == $n)] | length' "$BODY"; }
_listed() { req GET /v1/runtimes; [ "$(rt_count "$1")" -ge 1 ]; }
_not_listed() { req GET /v1/runtimes; [ "$(rt_count "$1")" = 0 ]; }

ONCE_HOST="rt-once-$RANDOM$RANDOM"
STATE_DIR=$(conf_get runner_state_dir)

cleanup() {
	local h
	for h in "$FAKE_HOST" "$ONCE_HOST"; do
		sql "DELETE FROM runner_runtimes WHERE host = '$h'; DELETE FROM runner_hosts WHERE host = '$h'" 2> /dev/null
	done
	[ -n "${test_runner:-}" ] && kill -TERM "$test_runner" 2> /dev/null && wait "$test_runner" 2> /dev/null
	if [ -n "${test_api:-}" ]; then
		kill -TERM "$test_api" 2> /dev/null && wait "$test_api" 2> /dev/null
		bash "$STACK" start-api > /dev/null 2>&1
	fi
	bash "$STACK" start-runner > /dev/null 2>&1
}
at_exit cleanup

t_list() {
	local name prog want
	ctx "GET /v1/runtimes"
	bash "$STACK" start-runner > /dev/null 2>&1
	if ! poll 60 _listed python3; then
		_notok "python3 listed within 60 s" "listed" "$(head -c 300 "$BODY")"
		return
	fi
	expect_status 200
	expect_json '.runtimes | type' array
	for name in python3 perl bash c c++; do
		prog=$(sed -n "s/^runtime $name .*version=\([^, ]*\).*/\1/p" "$REPO/etc/runtimes.conf")
		if ! prog=$(host_prog "$prog"); then
			skip "$name listed" "$prog is not installed on this host"
			continue
		fi
		case $name in
		perl) want=$("$prog" -v | first_line) ;;
		*) want=$("$prog" --version 2>&1 | first_line) ;;
		esac
		expect_eq "$name: version is what the host's $prog prints" "$want" "$(rt_field "$name" version)"
	done
	expect_eq "python3: aliases, file, compiled" '["python","py"] main.py false' \
		"$(rt_field python3 aliases | jq -c .) $(rt_field python3 file) $(rt_field python3 compiled)"
	expect_eq "sh: listed with version null" null "$(rt_field sh version)"
	if host_prog gcc > /dev/null; then
		expect_eq "c: compiled, file main.c" "true main.c" "$(rt_field c compiled) $(rt_field c file)"
	fi
	if host_prog node > /dev/null; then
		expect_eq "node: installed here, so listed" 1 "$(rt_count node)"
	else
		expect_eq "node: not installed, so not listed" 0 "$(rt_count node)"
	fi
	req GET "/v1/runtimes?x=1"
	expect_error 400 invalid_request
	TOKEN='' req GET /v1/runtimes
	expect_error 401 unauthorized
}

# A runner of its own with a test file: a runtime whose binary does not exist is not
# listed, the others are. Then the stack's runner again (it probes at start).
# A version command gets runner_runtime_probe_seconds (5 here, scaled): one that takes
# longer is not listed; one of 3 s is (it would not be under the old fixed 2 s).
t_missing() {
	local rdir=$T_DIR/rt conf=$T_DIR/runner.conf ps
	ps=$(tscale 5 60)
	ctx "missing runtime"
	mkdir -p "$rdir"
	chmod 0755 "$T_DIR" "$rdir"
	cat > "$rdir/runtimes.conf" << CONF
runtime python3 file=main.py version=python3,--version run=python3,{file}
runtime nonexistent-lang file=main.x version=sandbox-no-such-binary,--version run=sandbox-no-such-binary,{file}
runtime badversion file=main.y version=python3,-c,raise\\sSystemExit(3) run=python3,{file}
runtime slowversion file=main.s version=sh,-c,sleep\\s$((ps + 2));echo\\sslow-1 run=sh,{file}
runtime slowok file=main.t version=sh,-c,sleep\\s3;echo\\sslowok-1 run=sh,{file}
CONF
	chmod 0644 "$rdir/runtimes.conf"
	cp "$SANDBOX_CONFIG" "$conf"
	printf 'runner_runtimes_file = %s\nrunner_runtime_probe_seconds = %s\n' "$rdir/runtimes.conf" "$ps" >> "$conf"
	bash "$STACK" stop-runner > /dev/null
	"$RUNNER" --config "$conf" > "$T_DIR/runner.out" 2>&1 &
	test_runner=$!
	expect_true "the runner with the test file replaced this host's runtimes" \
		poll 30 _not_listed perl
	expect_eq "python3 still listed" 1 "$(rt_count python3)"
	expect_eq "a runtime whose binary does not exist is not listed" 0 "$(rt_count nonexistent-lang)"
	expect_eq "a runtime whose version argv fails is not listed" 0 "$(rt_count badversion)"
	expect_eq "a version command longer than runner_runtime_probe_seconds ($ps) is not listed" 0 "$(rt_count slowversion)"
	expect_eq "a version command of 3 s is listed (over the default 2 s, under $ps)" 1 "$(rt_count slowok)"
	expect_eq "with the version it printed" slowok-1 "$(rt_field slowok version)"
	expect_true "the probe logged nonexistent-lang as unavailable" \
		grep -q 'event=runtime_probe.*runtime=nonexistent-lang available=no' "$T_DIR/runner.out"
	kill -TERM "$test_runner" 2> /dev/null
	wait "$test_runner" 2> /dev/null
	test_runner=
	bash "$STACK" start-runner > /dev/null 2>&1
	expect_true "the stack's runner lists perl again" poll 30 _listed perl
}

# Distinct versions across hosts; only fresh hosts count.
t_hosts() {
	ctx "versions across hosts"
	sql "INSERT INTO runner_hosts (host, slots, max_sessions, seen_at) VALUES ('$FAKE_HOST', 1, 0, NOW(3));
	     INSERT INTO runner_runtimes (host, name, version, aliases, file, has_compile, seen_at)
	     VALUES ('$FAKE_HOST', 'python3', 'Python 0.0-test', 'python,py', 'main.py', 0, NOW(3)),
	            ('$FAKE_HOST', 'ruby', 'ruby 0.0-test', '', 'main.rb', 0, NOW(3))"
	req GET /v1/runtimes
	expect_eq "python3: one entry per distinct version" 2 "$(rt_count python3)"
	expect_json '[.runtimes[] | select(.name == "python3") | .version] | index("Python 0.0-test") != null' true
	expect_eq "a runtime only the other host has is listed" 1 "$(rt_count ruby)"
	sql "UPDATE runner_hosts SET seen_at = NOW(3) - INTERVAL 6 MINUTE WHERE host = '$FAKE_HOST'"
	req GET /v1/runtimes
	expect_eq "a host not seen for 5 minutes: its versions go" 1 "$(rt_count python3)"
	expect_eq "a host not seen for 5 minutes: its runtimes go" 0 "$(rt_count ruby)"
}

# scaled JOB_JSON: the job as given at scale 1; scaled (SANDBOX_TIME_SCALE), the
# wall_seconds and cpu_seconds it does not give (10, the defaults) are 300, the most a
# job may ask (common/joblimits.c): a python3 start or a gcc compile in a slow guest.
scaled() {
	if [ "$TSCALE" = 1 ]; then
		printf '%s' "$1"
	else
		# (200 s was too little: in a loaded guest g++ reading <iostream>'s headers
		# over 9p took more than 200 s of wall for 262 ms of CPU)
		jq -c --argjson d 300 '.limits = ({wall_seconds: $d, cpu_seconds: $d} + (.limits // {}))' <<< "$1"
	fi
}

run_job() {
	submit "$(scaled "$1")" || return 1
	await "$JOB" 60
}

t_jobs() {
	ctx "python3 source"
	run_job '{"runtime":"python3","source":"print(6*7)"}'
	expect_json .status succeeded
	expect_json .result.stdout '42'
	expect_json '.result.stdout == "42\n"' true
	expect_json '.argv | tostring' '["python3","/workspace/main.py"]'
	expect_json .command null
	ctx "alias py"
	run_job '{"runtime":"py","source":"import sys; print(sys.argv[1:])"}'
	expect_json .result.stdout "[]"
	ctx "shell metacharacters are program text"
	run_job '{"runtime":"python3","source":"print(\"$(id)\"); import os; print(\"`id`;|&\", os.getcwd())"}'
	expect_json .status succeeded
	expect_json '.result.stdout == "$(id)\n`id`;|& /workspace\n"' true
	ctx "files + entrypoint"
	run_job '{"runtime":"python3","files":[{"path":"lib/m.py","content":"X = 5"},{"path":"app.py","content":"import sys\nsys.path.insert(0, \"/workspace/lib\")\nimport m\nprint(m.X)"}],"entrypoint":"app.py"}'
	expect_json .status succeeded
	expect_json .result.stdout 5
	expect_json '.argv | tostring' '["python3","/workspace/app.py"]'
	ctx "perl, stdin"
	run_job '{"runtime":"perl","source":"my $l = <STDIN>; print uc $l;","stdin":"abc\n"}'
	expect_json .result.stdout ABC
	ctx "sh: exit code"
	run_job '{"runtime":"sh","source":"echo \"$0\"; exit 3"}'
	expect_json .status failed
	expect_json .result.exit_code 3
	expect_json .result.stdout /workspace/main.sh
	expect_json .result.compile null
}

t_refused() {
	local known
	ctx "refusals"
	req POST /v1/jobs '{"runtime":"cobol","source":"x"}'
	expect_error 400 invalid_request runtime
	expect_json '.error.message | (contains("cobol") and contains("python3") and contains("perl"))' true
	req POST /v1/jobs '{"runtime":"Python3","source":"x"}'
	expect_error 400 invalid_request runtime
	req POST /v1/jobs '{"runtime":"python3","source":"print(1)","command":"id"}'
	expect_error 400 invalid_request runtime
	req POST /v1/jobs '{"runtime":"python3","source":"print(1)","argv":["id"]}'
	expect_error 400 invalid_request runtime
	req POST /v1/jobs '{"runtime":7,"source":"print(1)"}'
	expect_error 400 invalid_request runtime
	req POST /v1/jobs '{"command":"id","source":"print(1)"}'
	expect_error 400 invalid_request source
	req POST /v1/jobs '{"runtime":"python3"}'
	expect_error 400 invalid_request source
	req POST /v1/jobs '{"runtime":"python3","source":"1","entrypoint":"main.py","files":[{"path":"main.py","content":""}]}'
	expect_error 400 invalid_request source
	req POST /v1/jobs '{"runtime":"python3","source":1}'
	expect_error 400 invalid_request source
	req POST /v1/jobs '{"runtime":"python3","entrypoint":"nope.py","files":[{"path":"a.py","content":""}]}'
	expect_error 400 invalid_request entrypoint
	req POST /v1/jobs '{"runtime":"python3","source":"1","files":[{"path":"main.py","content":""}]}'
	expect_error 400 invalid_request source
}

t_compile() {
	ctx "c: compile then run"
	if ! host_prog gcc > /dev/null; then
		skip "compiled runtimes" "gcc is not installed on this host"
		return
	fi
	run_job '{"runtime":"c","source":"#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n"}'
	expect_json .status succeeded
	expect_json '.result.stdout == "hello\n"' true
	expect_json .result.compile.exit_code 0
	expect_json .result.compile.status succeeded
	expect_json '.argv | tostring' '["./prog"]'
	ctx "c: compile error"
	run_job '{"runtime":"gcc","source":"int main(void) { return undeclared_thing; }\n"}'
	expect_json .status failed
	expect_json .result.exit_code 1
	expect_json .result.compile.exit_code 1
	expect_json .result.compile.status failed
	expect_json '.result.compile.stderr | contains("undeclared_thing")' true
	expect_json .result.stdout ''
	expect_json '.result.diagnostics | map(select(contains("compile step"))) | length' 1
	ctx "c++: compile then run, stdin"
	run_job '{"runtime":"c++","source":"#include <iostream>\n#include <string>\nint main() { std::string s; std::cin >> s; std::cout << s << s << std::endl; }\n","stdin":"ab"}'
	expect_json .status succeeded
	expect_json .result.stdout abab
	ctx "c: the run sees the job's limits"
	# (scaled: the compile in a slow guest must fit in the wall; the CPU stays above it)
	run_job '{"runtime":"c","source":"int main(void) { for (;;) ; }\n","limits":{"wall_seconds":'"$(tscale 2 100)"'}}'
	expect_json .status timed_out
	expect_json .result.compile.exit_code 0
}

# A runtimes file of the suite's own (root-owned, 0644, in a 0755 directory) and a
# copy of the stack's config that names it: rt_conf DIR -> $T_DIR/DIR.conf
rt_conf() {
	mkdir -p "$T_DIR/$1"
	chmod 0755 "$T_DIR" "$T_DIR/$1"
	cat > "$T_DIR/$1/runtimes.conf"
	chmod 0644 "$T_DIR/$1/runtimes.conf"
	grep -v '^runner_runtimes_file' "$SANDBOX_CONFIG" > "$T_DIR/$1.conf"
	printf 'runner_runtimes_file = %s\n' "$T_DIR/$1/runtimes.conf" >> "$T_DIR/$1.conf"
}
once_rows() { sql "SELECT COUNT(*) FROM runner_runtimes WHERE host = '$ONCE_HOST'"; }
once_seen() { sql "SELECT MAX(seen_at) FROM runner_runtimes WHERE host = '$ONCE_HOST'"; }
_once_rows_are() { [ "$(once_rows)" = "$1" ]; }
_once_fresh() { [ "$(sql "SELECT TIMESTAMPDIFF(SECOND, MAX(seen_at), NOW(3)) < 60 FROM runner_runtimes WHERE host = '$ONCE_HOST'")" = 1 ]; }
_stamp_is() { [ "$(head -c 64 "$STATE_DIR/runtimes.probed" 2> /dev/null)" = "$1" ]; }

# once N: a queued job, then `sandbox-runner --once` as host $ONCE_HOST (its log:
# $T_DIR/once.N.log); the job must have run in that same run.
once() {
	local n=$1
	submit "{\"command\":\"echo once-$n\"}" || return 1
	unshare --uts -- bash -c 'hostname "$1" && shift && exec "$@"' _ "$ONCE_HOST" \
		"$RUNNER" --config "$T_DIR/once.conf" --once --max-seconds "$(tscale 30)" > "$T_DIR/once.$n.log" 2>&1
	expect_eq "$CTX: the run exited 0" 0 "$?"
	req GET "/v1/jobs/$JOB"
	expect_json .status succeeded "the run also ran the queued job"
	expect_json .result.stdout "once-$n"
}

t_once() {
	local seen sum
	ctx "--once: first run on a fresh host"
	if ! command -v unshare > /dev/null || ! command -v hostname > /dev/null; then
		skip "--once probes" "unshare or hostname is not installed"
		return
	fi
	rt_conf once << 'CONF'
runtime python3 file=main.py version=python3,--version run=python3,{file}
runtime sh file=main.sh run=sh,{file}
CONF
	bash "$STACK" stop-runner > /dev/null
	once 1
	expect_true "$CTX: it probed" grep -q 'event=runtime_probe_due' "$T_DIR/once.1.log"
	expect_true "$CTX: its rows are stored" poll 30 _once_rows_are 2
	sum=$(sha256sum "$T_DIR/once/runtimes.conf" | cut -c1-64)
	expect_true "$CTX: the stamp holds the file's digest" poll 10 _stamp_is "$sum"
	seen=$(once_seen)
	ctx "--once: second run, nothing changed"
	once 2
	expect_true "$CTX: it did not probe" fails grep -q 'event=runtime_probe' "$T_DIR/once.2.log"
	sleep "$(tscale 1)" # a probe started anyway would have stored by now
	expect_eq "$CTX: the rows are the first run's" "$seen" "$(once_seen)"
	ctx "--once: the file changed"
	echo 'runtime perl file=main.pl version=perl,-v run=perl,{file}' >> "$T_DIR/once/runtimes.conf"
	once 3
	expect_true "$CTX: it probed" grep -q 'event=runtime_probe_due.*changed' "$T_DIR/once.3.log"
	expect_true "$CTX: the new runtime is stored" poll 30 _once_rows_are 3
	ctx "--once: rows 4 minutes old"
	poll 10 _stamp_is "$(sha256sum "$T_DIR/once/runtimes.conf" | cut -c1-64)"
	sql "UPDATE runner_runtimes SET seen_at = NOW(3) - INTERVAL 4 MINUTE WHERE host = '$ONCE_HOST'"
	once 4
	expect_true "$CTX: it probed" grep -q 'event=runtime_probe_due.*older' "$T_DIR/once.4.log"
	expect_true "$CTX: the rows are fresh again" poll 30 _once_fresh
	sql "DELETE FROM runner_runtimes WHERE host = '$ONCE_HOST'; DELETE FROM runner_hosts WHERE host = '$ONCE_HOST'"
	bash "$STACK" start-runner > /dev/null 2>&1
}

# The suite's own API and runner (both reading $T_DIR/live/runtimes.conf) on the
# stack's socket and host, until the end of the suite.
# slowc's compile and run sleep SLOW s each; a wall of W_OK holds both, W_OVER only the
# compile (scaled, at most 4x: 12 s sleeps leave a slow guest's starts 8 s and more).
SLOW=$(tscale 3 12) W_OK=$(tscale 10 40) W_OVER=$(tscale 5 20)
own_stack() {
	rt_conf live << CONF
runtime python3 aliases=py file=main.py version=python3,--version run=python3,{file}
runtime slowc file=main.s compile=sleep,$SLOW run=sleep,$SLOW
runtime hogc file=main.h compile=sleep,120 run=true
runtime ghost file=main.g version=sandbox-no-such-binary,--version run=sandbox-no-such-binary,{file}
CONF
	bash "$STACK" stop-runner > /dev/null
	bash "$STACK" stop-api > /dev/null
	"$SANDBOX_BIN/sandbox-api" --config "$T_DIR/live.conf" > "$T_DIR/api.log" 2>&1 &
	test_api=$!
	poll 10 test -S "$(conf_get fcgi_socket)"
	"$RUNNER" --config "$T_DIR/live.conf" > "$T_DIR/live-runner.log" 2>&1 &
	test_runner=$!
	poll 30 _listed slowc
}

t_live() {
	ctx "live hosts: a runtime none of them provides"
	if ! poll 1 _listed slowc; then
		_notok "$CTX: the suite's runner listed slowc" listed "$(head -c 300 "$BODY")"
		return
	fi
	expect_eq "$CTX: ghost is not listed" 0 "$(rt_count ghost)"
	req POST /v1/jobs '{"runtime":"ghost","source":"x"}'
	expect_error 422 runtime_unavailable runtime
	expect_json '.error.message | (contains("ghost") and contains("no runner host provides"))' true
	req POST /v1/jobs/batch '{"jobs":[{"runtime":"ghost","source":"x"},{"runtime":"py","source":"print(3)"}]}'
	expect_status 200
	expect_json '[.results[].status] | join(",")' "422,202"
	expect_json '.results[0].error.code + " " + .results[0].error.field' "runtime_unavailable jobs[0].runtime"
	ctx "batch?wait=30: every job ends"
	BATCH='{"jobs":[{"runtime":"py","source":"print(1)"},{"command":"echo 2"},{"runtime":"ghost","source":"x"}]}'
	# (scaled: each item with scaled limits, as run_job's; the wait stays the API's most)
	[ "$TSCALE" = 1 ] || BATCH=$(jq -c --argjson d "$(tscale 10 300)" '.jobs |= map(.limits = {wall_seconds: $d, cpu_seconds: $d})' <<< "$BATCH")
	req POST "/v1/jobs/batch?wait=30" "$BATCH"
	expect_status 200
	expect_json '[.results[].status] | join(",")' "202,202,422"
	expect_json '[.results[0,1].job.status] | join(",")' "succeeded,succeeded"
	expect_json '[.results[0,1].job.result.stdout] == ["1\n", "2\n"]' true "their output"
	ctx "no live host reported: accepted"
	kill -TERM "$test_runner" 2> /dev/null
	wait "$test_runner" 2> /dev/null
	test_runner=
	sql "UPDATE runner_hosts SET seen_at = NOW(3) - INTERVAL 6 MINUTE"
	req POST /v1/jobs '{"runtime":"ghost","source":"x"}'
	expect_status 202
	expect_json .status queued
	req POST "/v1/jobs/$(jq -r .id "$BODY")/cancel"
	expect_json .status cancelled
	req GET /v1/runtimes
	expect_json '.runtimes | length' 0 "nothing listed either"
	"$RUNNER" --config "$T_DIR/live.conf" > "$T_DIR/live-runner.2.log" 2>&1 &
	test_runner=$!
	expect_true "$CTX: the runner back" poll 30 _listed slowc
	req POST /v1/jobs '{"runtime":"ghost","source":"x"}'
	expect_error 422 runtime_unavailable runtime
}

t_budget() {
	ctx "compile and run share wall_seconds"
	run_job '{"runtime":"slowc","source":"x","limits":{"wall_seconds":'"$W_OK"'}}'
	expect_json .status succeeded "$SLOW s + $SLOW s within $W_OK"
	expect_json .result.compile.status succeeded
	run_job '{"runtime":"slowc","source":"x","limits":{"wall_seconds":'"$W_OVER"'}}'
	expect_json .status timed_out "$SLOW s + $SLOW s over $W_OVER"
	expect_json .result.exit_code 124
	expect_json .result.compile.status succeeded
	expect_json '.result.diagnostics | index("command timed out") != null' true
	ctx "a compile that uses all of wall_seconds"
	run_job '{"runtime":"hogc","source":"x","limits":{"wall_seconds":2}}'
	expect_json .status timed_out
	expect_json .result.exit_code 124
	expect_json .result.compile.status timed_out
	expect_json '[.result.diagnostics[] | select(contains("compile step") and contains("wall_seconds"))] | length' 1
}

t_list
t_hosts
t_missing
t_jobs
t_refused
t_compile
t_once
own_stack
t_live
t_budget
finish
