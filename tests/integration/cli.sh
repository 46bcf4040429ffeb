#!/usr/bin/env bash
# tests/integration/cli.sh: the command-line client build/sandbox (issue 12, point 5)
# against the stack's API and runner, with a key of its own. Configured only through
# SANDBOX_URL, SANDBOX_CACERT and SANDBOX_TOKEN (what var/env holds).
#
#   1. run: echo -> stdout exact, exit 0; sh -c 'exit 3' -> 3; stdout and stderr kept
#      apart, byte for byte (binary too); -f uploads a file the job reads (exec bit
#      kept); --stdin; --env; argv is passed as is (no shell: '$HOME;x' stays literal).
#   2. live: a job printing a line, sleeping 3 s, then 5 more lines; its first line is in the
#      CLI's stdout while the job is still running (checked through the API).
#   3. outcomes: --limit wall_seconds=1 with sleep 5 -> 124 and its diagnostic on
#      stderr; output cap -> 122; a bad limit -> 3 with the API's field.
#   4. get (JSON), list, cancel (a queued/running job ends cancelled).
#   5. artifacts: downloaded with exact bytes (sha256); an existing file or a symlink
#      under DIR is neither followed nor overwritten (exit 4, the target untouched).
#   6. session create/exec/ls/cp both ways (binary, exact bytes)/close.
#   7. configuration: no token -> 2 with a message; a wrong token -> 3 with the API's
#      error; --token is refused; the token never appears in any output.
#   8. streamed uploads: -f files larger than the CLI's read buffer (not a multiple of
#      3 bytes), --stdin from a pipe, session cp from a pipe: exact bytes (sha256).
#   9. runtimes: `sandbox runtimes` lists python3 and c; run --runtime python3
#      --source FILE and --source - (exit code kept); c: a compile error shows gcc's
#      message on stderr and exits with its code; a compiled program runs.
#  10. session list (--status, --limit + --cursor paging, --all), exec --detach (a
#      pid), output (replay, --offset, --stream, --follow to the end with the exit
#      code), kill (--signal, by pid; not running -> 3 with the API's 409).
#  11. the man page cli/sandbox.1 renders without warnings (man -l or groff; a
#      visible skip when neither is installed) and names every command that has a
#      --help.
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env SANDBOX_TOKEN
CLI=$SANDBOX_BIN/sandbox
RUN=$(date +%s)-$$
mkkey CK cli-ns "cli-$RUN" user u1
TOKEN=$CK_TOK
W=$T_DIR/cli
mkdir -p "$W"
ALL_OUT=$W/all-output   # every stdout and stderr the CLI wrote, for the token grep

# sb OUT ERR ARGS...: runs the CLI with this suite's key; $RC is its exit code.
# Under emulation every `run` through sb gets a scaled wall and CPU limit first (a
# --limit after them still wins): in the guest plain jobs like `sh -c 'exit 3'` ran into
# the 10 s default beside other guests (124, timed out).
sb() {
	local out=$1 err=$2
	shift 2
	if [ "$1" = run ] && [ "$TSCALE" != 1 ]; then
		shift
		set -- run --limit "wall_seconds=$(tscale 10 300)" --limit "cpu_seconds=$(tscale 10 300)" "$@"
	fi
	SANDBOX_TOKEN=$TOKEN "$CLI" "$@" > "$out" 2> "$err" < /dev/null
	RC=$?
	cat "$out" "$err" >> "$ALL_OUT"
}

# Scaled (SANDBOX_TIME_SCALE), a job or session command that must not hit a limit gets
# one of its own: none at scale 1 (the defaults, 10 s, then hold). LIM N: --limit
# wall_seconds and cpu_seconds of N x scale (at most 300); TMO N: exec's --timeout.
LIM=() TMO=()
lim() { LIM=(); [ "$TSCALE" = 1 ] || LIM=(--limit "wall_seconds=$(tscale "$1" 300)" --limit "cpu_seconds=$(tscale "$1" 300)"); }
tmo() { TMO=(); [ "$TSCALE" = 1 ] || TMO=(--timeout "$(tscale "$1")"); }

# ============================================================ 1. run
ctx "run echo"
sb "$W/o" "$W/e" run -- echo hello world
expect_eq "exit code" 0 "$RC"
expect_eq "stdout exact" "$(printf 'hello world\n' | od -An -tx1)" "$(od -An -tx1 < "$W/o")"
expect_eq "stderr empty" 0 "$(wc -c < "$W/e")"

ctx "run exit 3"
sb "$W/o" "$W/e" run -- sh -c 'exit 3'
expect_eq "exit code" 3 "$RC"

ctx "run stdout and stderr apart"
sb "$W/o" "$W/e" run -- sh -c 'printf "out\n"; printf "err\001\377\n" >&2; printf "\000\200bin"'
expect_eq "exit code" 0 "$RC"
expect_eq "stdout bytes" "6f75740a008062696e" "$(hexf "$W/o")"
expect_eq "stderr bytes" "65727201ff0a" "$(hexf "$W/e")"

ctx "run argv is not a shell string"
sb "$W/o" "$W/e" run -- echo '$HOME;' '`id`' "a b"
expect_eq "literal args" "\$HOME; \`id\` a b" "$(cat "$W/o")"

ctx "run -f, --stdin, --env"
printf '#!/bin/sh\necho "tool:$1:$GREETING"\n' > "$W/tool.sh"
chmod 755 "$W/tool.sh"
head -c 3000 /dev/urandom > "$W/blob"
printf 'from stdin\n' > "$W/in.txt"
sb "$W/o" "$W/e" run -f "$W/tool.sh:bin/tool" -f "$W/blob" --env GREETING=hi \
	--stdin "$W/in.txt" -- sh -c './bin/tool x; sha256sum blob | cut -c1-64; cat'
expect_eq "exit code" 0 "$RC"
expect_eq "output" "tool:x:hi
$(sha256sum "$W/blob" | cut -c1-64)
from stdin" "$(cat "$W/o")"

# ============================================================ 2. live
ctx "run output is live"
# (its sleep scaled, its wall with it: still running when the slower reads see line1)
lim 10
SANDBOX_TOKEN=$TOKEN "$CLI" run -v "${LIM[@]}" -- sh -c 'echo line1; sleep '"$(tscale 3 60)"'; for i in 2 3 4 5 6; do echo line$i; sleep 0.2; done' \
	> "$W/live.o" 2> "$W/live.e" < /dev/null &
LIVE_PID=$!
poll 20 grep -q '^sandbox: job ' "$W/live.e"
LIVE_JOB=$(sed -n 's/^sandbox: job \([0-9a-f-]*\)$/\1/p' "$W/live.e" | head -1)
poll 10 grep -q '^line1$' "$W/live.o"
# The first line is in our stdout: the job must still be running.
req GET "/v1/jobs/$LIVE_JOB"
expect_json .status running "job still running when line1 arrived"
expect_true "not all lines yet when line1 arrived" fails grep -q '^line6$' "$W/live.o"
wait "$LIVE_PID"
expect_eq "exit code" 0 "$?"
expect_eq "all lines in order" "line1 line2 line3 line4 line5 line6" "$(tr '\n' ' ' < "$W/live.o" | sed 's/ $//')"
cat "$W/live.o" "$W/live.e" >> "$ALL_OUT"

ctx "run interrupted"
# (its wall scaled: still running, not timed out, when the slower test interrupts it)
lim 10
SANDBOX_TOKEN=$TOKEN "$CLI" run -v "${LIM[@]}" -- sleep "$(tscale 30)" > "$W/int.o" 2> "$W/int.e" < /dev/null &
INT_PID=$!
poll 20 grep -q '^sandbox: job ' "$W/int.e"
INT_JOB=$(sed -n 's/^sandbox: job \([0-9a-f-]*\)$/\1/p' "$W/int.e" | head -1)
wait_state "$INT_JOB" running 20
kill -TERM "$INT_PID"
wait "$INT_PID"
expect_eq "SIGTERM: exit 130" 130 "$?"
expect_true "says it cancelled the job" grep -q "^sandbox: interrupted: job $INT_JOB cancelled$" "$W/int.e"
wait_state "$INT_JOB" cancelled 15
expect_eq "the job ends cancelled" cancelled "$(state_of "$INT_JOB")"
cat "$W/int.o" "$W/int.e" >> "$ALL_OUT"

# ============================================================ 3. outcomes
ctx "run timed out"
sb "$W/o" "$W/e" run --limit wall_seconds=1 -- sleep 5
expect_eq "exit code" 124 "$RC"
expect_true "diagnostic on stderr" grep -q '^sandbox: command timed out$' "$W/e"

ctx "run output limit"
sb "$W/o" "$W/e" run --limit output_bytes=1000 -- head -c 100000 /dev/zero
expect_eq "exit code" 122 "$RC"
expect_eq "stdout capped at 1000 bytes" 1000 "$(wc -c < "$W/o")"
expect_true "diagnostic on stderr" grep -q '^sandbox: command output limit exceeded$' "$W/e"

ctx "run with a limit out of range"
sb "$W/o" "$W/e" run --limit memory_mb=1 -- true
expect_eq "exit code" 3 "$RC"
expect_true "the API's error names the field" grep -q 'field: limits.memory_mb' "$W/e"

ctx "run usage errors"
sb "$W/o" "$W/e" run --limit memory_mb=lots -- true
expect_eq "bad --limit -> 2" 2 "$RC"
sb "$W/o" "$W/e" run
expect_eq "no command -> 2" 2 "$RC"
sb "$W/o" "$W/e" run -f "$W/does-not-exist" -- true
expect_eq "a missing -f FILE -> 4" 4 "$RC"
sb "$W/o" "$W/e" run -f "$W/blob:../x" -- true
expect_eq "-f with PATH .. -> 2" 2 "$RC"

# ============================================================ 4. get, list, cancel
ctx "get, list"
sb "$W/o" "$W/e" run --detach -- echo detached
expect_eq "detach exit code" 0 "$RC"
JID=$(cat "$W/o")
expect_true "detach prints the id" grep -Eq '^[0-9a-f-]{36}$' "$W/o"
[ "$TSCALE" = 1 ] || await "$JID" # scaled: ended before the one 30 s wait (the API's most)
sb "$W/o" "$W/e" get "$JID" --wait 30
expect_eq "get exit code" 0 "$RC"
expect_eq "get JSON id" "$JID" "$(jq -r .id "$W/o")"
expect_eq "get JSON stdout" "detached" "$(jq -r .result.stdout "$W/o" | tr -d '\n')"
sb "$W/o" "$W/e" list --limit 100
expect_eq "list exit code" 0 "$RC"
expect_true "list has the job, succeeded, exit 0" grep -Eq "^$JID	succeeded	0	" "$W/o"
sb "$W/o" "$W/e" get 00000000-0000-7000-8000-000000000000
expect_eq "unknown id -> 3" 3 "$RC"
expect_true "404 not_found printed" grep -q 'HTTP 404 not_found' "$W/e"
sb "$W/o" "$W/e" get ../../etc
expect_eq "malformed id -> 2" 2 "$RC"

ctx "cancel"
sb "$W/o" "$W/e" run --detach -- sleep 30
CID=$(cat "$W/o")
sb "$W/o" "$W/e" cancel "$CID"
expect_eq "cancel exit code" 0 "$RC"
expect_true "cancel prints id and status" grep -Eq "^$CID	(cancelled|running)$" "$W/o"
wait_state "$CID" cancelled 15
expect_eq "the job ends cancelled" cancelled "$(state_of "$CID")"

# ============================================================ 5. artifacts
ctx "artifacts"
sb "$W/o" "$W/e" run --artifacts out -- sh -c 'mkdir -p out/sub && printf "hello artifact\n" > out/a.txt && head -c 5000 /dev/urandom > out/sub/b.bin && printf x > out/x && sha256sum out/sub/b.bin | cut -c1-64'
expect_eq "job exit code" 0 "$RC"
BSHA=$(head -1 "$W/o")
req GET "/v1/jobs?limit=1"
JA=$(jq -r '.jobs[0].id' "$BODY")
sb "$W/o" "$W/e" artifacts "$JA" --out "$W/art"
expect_eq "artifacts exit code" 0 "$RC"
expect_eq "a.txt exact" "hello artifact" "$(cat "$W/art/out/a.txt")"
expect_eq "b.bin exact (sha256)" "$BSHA" "$(sha256sum "$W/art/out/sub/b.bin" | cut -c1-64)"
expect_eq "paths printed" "$W/art/out/a.txt $W/art/out/sub/b.bin $W/art/out/x" "$(sort "$W/o" | tr '\n' ' ' | sed 's/ $//')"

ctx "artifacts never follow a symlink nor overwrite"
printf 'outside\n' > "$W/outside"
mkdir -p "$W/art2/out"
ln -s "$W/outside" "$W/art2/out/x"
sb "$W/o" "$W/e" artifacts "$JA" --out "$W/art2"
expect_eq "exit code 4" 4 "$RC"
expect_eq "the symlink's target is untouched" "outside" "$(cat "$W/outside")"
expect_true "the link is still a link" test -L "$W/art2/out/x"
expect_true "the error names the file" grep -q "art2/out/x: File exists" "$W/e"
mkdir -p "$W/art3" "$W/elsewhere"
ln -s "$W/elsewhere" "$W/art3/out"
sb "$W/o" "$W/e" artifacts "$JA" --out "$W/art3"
expect_eq "a symlinked parent: exit 4" 4 "$RC"
expect_eq "nothing written through the linked directory" 0 "$(find "$W/elsewhere" -mindepth 1 | wc -l)"

# ============================================================ 6. sessions
ctx "session"
sb "$W/o" "$W/e" session create --limit memory_mb=128 --idle "$(tscale 120 3600)"
expect_eq "create exit code" 0 "$RC"
SID=$(head -1 "$W/o")
expect_true "create prints the id" grep -Eq '^[0-9a-f-]{36}$' "$W/o"
if [ "$RC" = 0 ]; then
	head -c 70000 /dev/urandom > "$W/up.bin"
	sb "$W/o" "$W/e" session cp "$W/up.bin" "$SID:data/up.bin"
	expect_eq "cp up exit code" 0 "$RC"
	sb "$W/o" "$W/e" session exec "$SID" -- sh -c 'sha256sum data/up.bin | cut -c1-64; echo err >&2; cp data/up.bin data/copy.bin; exit 7'
	expect_eq "exec exit code" 7 "$RC"
	expect_eq "exec stdout: the uploaded bytes" "$(sha256sum "$W/up.bin" | cut -c1-64)" "$(cat "$W/o")"
	expect_eq "exec stderr" "err" "$(cat "$W/e")"
	sb "$W/o" "$W/e" session ls "$SID" data
	expect_eq "ls exit code" 0 "$RC"
	expect_eq "ls" "70000	copy.bin 70000	up.bin" "$(sort -k2 "$W/o" | tr '\n' ' ' | sed 's/ $//')"
	sb "$W/o" "$W/e" session cp "$SID:data/copy.bin" "$W/down.bin"
	expect_eq "cp down exit code" 0 "$RC"
	expect_true "cp down: exact bytes" cmp "$W/up.bin" "$W/down.bin"
	ln -s "$W/outside" "$W/down-link"
	sb "$W/o" "$W/e" session cp "$SID:data/copy.bin" "$W/down-link"
	expect_eq "cp down onto a symlink: 4" 4 "$RC"
	expect_eq "its target untouched" outside "$(cat "$W/outside")"
	sb "$W/o" "$W/e" session cp "$SID:data/none" "$W/none"
	expect_eq "cp of a missing file: 3" 3 "$RC"
	expect_true "404 printed" grep -q 'HTTP 404' "$W/e"
	expect_true "no local file left behind" test ! -e "$W/none"
	printf 'keep me\n' > "$W/keep"
	sb "$W/o" "$W/e" session cp "$SID:data/none" "$W/keep"
	expect_eq "a failed download onto a file: 3" 3 "$RC"
	expect_eq "that file is unchanged" "keep me" "$(cat "$W/keep")"
	head -c 100000 /dev/zero > "$W/longer"
	sb "$W/o" "$W/e" session cp "$SID:data/copy.bin" "$W/longer"
	expect_eq "cp down over a longer file" 0 "$RC"
	expect_true "it now holds exactly the download" cmp "$W/up.bin" "$W/longer"
	SANDBOX_TOKEN=$TOKEN "$CLI" session cp "$SID:data/copy.bin" - > "$W/stdout.bin" 2> "$W/e" < /dev/null
	expect_eq "cp down to stdout" 0 "$?"
	expect_true "stdout: exact bytes" cmp "$W/up.bin" "$W/stdout.bin"
	printf 'piped\n' | SANDBOX_TOKEN=$TOKEN "$CLI" session exec "$SID" --stdin - -- cat > "$W/o" 2> "$W/e"
	expect_eq "exec --stdin -" piped "$(cat "$W/o")"
	cat "$W/o" "$W/e" >> "$ALL_OUT"
	sb "$W/o" "$W/e" session exec "$SID" -- sh -c 'for i in 1 2 3; do echo s$i; sleep 0.2; done'
	expect_eq "exec streaming lines" "s1 s2 s3" "$(tr '\n' ' ' < "$W/o" | sed 's/ $//')"
	sb "$W/o" "$W/e" session close "$SID"
	expect_eq "close exit code" 0 "$RC"
	expect_true "close prints closed" grep -Eq "^$SID	closed$" "$W/o"
	sb "$W/o" "$W/e" session exec "$SID" -- true
	expect_eq "exec in a closed session: 3" 3 "$RC"
fi

# ============================================================ 8. streamed uploads
ctx "run -f streams files larger than the read buffer"
head -c 200001 /dev/urandom > "$W/big1"
head -c 49153 /dev/urandom > "$W/big2"
head -c 100000 /dev/urandom > "$W/bigin"
sb "$W/o" "$W/e" run -f "$W/big1" -f "$W/big2:d/b2" --stdin "$W/bigin" -- \
	sh -c 'sha256sum big1 d/b2 | cut -c1-64; sha256sum | cut -c1-64'
expect_eq "exit code" 0 "$RC"
expect_eq "the bytes arrived exactly" "$(sha256sum "$W/big1" | cut -c1-64)
$(sha256sum "$W/big2" | cut -c1-64)
$(sha256sum "$W/bigin" | cut -c1-64)" "$(cat "$W/o")"
ctx "run --stdin - from a pipe"
head -c 70001 /dev/urandom > "$W/pipein"
SANDBOX_TOKEN=$TOKEN "$CLI" run --stdin - -- sh -c 'wc -c; ' < "$W/pipein" > "$W/o" 2> "$W/e"
expect_eq "stdin from a pipe: exit 0" 0 "$?"
expect_eq "stdin from a pipe: all bytes" 70001 "$(tr -d ' ' < "$W/o")"
cat "$W/o" "$W/e" >> "$ALL_OUT"
ctx "an empty file"
: > "$W/empty"
sb "$W/o" "$W/e" run -f "$W/empty" -- sh -c 'test -f empty && wc -c < empty'
expect_eq "empty file uploaded" 0 "$(tr -d ' ' < "$W/o")"

# ============================================================ 9. runtimes
ctx "runtimes"
sb "$W/o" "$W/e" runtimes
expect_eq "runtimes exit code" 0 "$RC"
expect_true "python3 listed (interpreted)" grep -Eq '^python3	[^	]+	[^	]+	main\.py	interpreted$' "$W/o"
expect_true "c listed (compiled)" grep -Eq '^c	[^	]+	[^	]+	[^	]+	compiled$' "$W/o"
printf 'import sys\nprint("py says", 6 * 7)\nsys.exit(5)\n' > "$W/main.py"
lim 10 # scaled: a python3 start, a gcc compile in a slow guest
sb "$W/o" "$W/e" run "${LIM[@]}" --runtime python3 --source "$W/main.py"
expect_eq "python3 --source FILE: its exit code" 5 "$RC"
expect_eq "python3 --source FILE: its output" "py says 42" "$(cat "$W/o")"
printf 'print("from stdin")\n' | SANDBOX_TOKEN=$TOKEN "$CLI" run "${LIM[@]}" --runtime python3 --source - > "$W/o" 2> "$W/e"
expect_eq "python3 --source -: exit 0" 0 "$?"
expect_eq "python3 --source -: output" "from stdin" "$(cat "$W/o")"
cat "$W/o" "$W/e" >> "$ALL_OUT"
printf '#include <stdio.h>\nint main(void) { puts("c says hi"); return 3; }\n' > "$W/ok.c"
sb "$W/o" "$W/e" run "${LIM[@]}" --runtime c --source "$W/ok.c"
expect_eq "c: the program's exit code" 3 "$RC"
expect_eq "c: the program's output" "c says hi" "$(cat "$W/o")"
printf 'int main(void) { return undeclared_thing; }\n' > "$W/bad.c"
sb "$W/o" "$W/e" run "${LIM[@]}" --runtime c --source "$W/bad.c"
expect_true "c compile error: a non-zero exit" test "$RC" -ne 0 -a "$RC" -lt 122
expect_true "c compile error: gcc's message on stderr" grep -q 'undeclared_thing' "$W/e"
expect_true "c compile error: says the compile step failed" grep -q '^sandbox: compile step failed (exit code [1-9]' "$W/e"
expect_eq "c compile error: nothing on stdout" 0 "$(wc -c < "$W/o")"
sb "$W/o" "$W/e" run --runtime python3 -- echo x
expect_eq "--runtime with a command: 2" 2 "$RC"
sb "$W/o" "$W/e" run --source "$W/main.py" -- true
expect_eq "--source without --runtime: 2" 2 "$RC"
sb "$W/o" "$W/e" run --runtime no-such-runtime --source "$W/main.py"
expect_eq "unknown runtime: 3" 3 "$RC"
expect_true "unknown runtime: the API's field" grep -q 'field: runtime' "$W/e"

# ============================================================ 10. sessions: list, detach, output, kill
ctx "session list, exec --detach, output, kill"
sb "$W/o" "$W/e" session create --idle "$(tscale 120 3600)"
S2=$(head -1 "$W/o")
expect_eq "create exit code" 0 "$RC"
sb "$W/o" "$W/e" session create --idle "$(tscale 120 3600)"
S3=$(head -1 "$W/o")
if [ -n "$S2" ] && [ -n "$S3" ]; then
	sb "$W/o" "$W/e" session list --status ready
	expect_eq "list exit code" 0 "$RC"
	expect_true "list has both sessions, ready" grep -Eq "^$S2	ready	" "$W/o"
	expect_true "list: the newer first" test "$(head -1 "$W/o" | cut -f1)" = "$S3"
	sb "$W/o" "$W/e" session list --limit 1 --status ready
	expect_eq "page 1: one line" 1 "$(wc -l < "$W/o")"
	expect_eq "page 1: the newest" "$S3" "$(cut -f1 "$W/o")"
	CUR=$(sed -n 's/^sandbox: more: sandbox session list --cursor \(.*\)$/\1/p' "$W/e")
	expect_true "page 1: a cursor on stderr" test -n "$CUR"
	sb "$W/o" "$W/e" session list --limit 1 --status ready --cursor "$CUR"
	expect_eq "page 2: the older session" "$S2" "$(cut -f1 "$W/o")"
	sb "$W/o" "$W/e" session list --limit 1 --status ready --all
	expect_eq "--all: both, one page at a time" "$S3 $S2" "$(cut -f1 "$W/o" | tr '\n' ' ' | sed 's/ $//')"
	sb "$W/o" "$W/e" session list --status closed
	expect_true "--status closed: not these" fails grep -q "$S2" "$W/o"
	sb "$W/o" "$W/e" session list --status bogus
	expect_eq "--status bogus: the API's 400" 3 "$RC"

	sb "$W/o" "$W/e" session exec --detach "$S2" -- sh -c 'echo first; echo err1 >&2; sleep 1.5; echo second; exit 9'
	expect_eq "exec --detach: exit 0" 0 "$RC"
	P1=$(cat "$W/o")
	expect_eq "exec --detach prints the pid" 1 "$P1"
	sb "$W/o" "$W/e" session output "$S2" "$P1" --follow
	expect_eq "output --follow: the command's exit code" 9 "$RC"
	expect_eq "output --follow: all of stdout" "first second" "$(tr '\n' ' ' < "$W/o" | sed 's/ $//')"
	expect_eq "output --follow: stderr" "err1" "$(cat "$W/e")"
	sb "$W/o" "$W/e" session output "$S2" "$P1"
	expect_eq "output replay: exit 0" 0 "$RC"
	expect_eq "output replay: stdout" "first second" "$(tr '\n' ' ' < "$W/o" | sed 's/ $//')"
	sb "$W/o" "$W/e" session output "$S2" "$P1" --offset 6 --stream stdout
	expect_eq "output --offset 6 --stream stdout" "second" "$(cat "$W/o")"
	expect_eq "--stream stdout: no stderr" 0 "$(wc -c < "$W/e")"
	sb "$W/o" "$W/e" session output "$S2" 77
	expect_eq "output of an unknown pid: 3" 3 "$RC"
	expect_true "says there is no such pid" grep -q 'no command with pid 77' "$W/e"

	tmo 10 # scaled: still running (not timed out) when the slower test kills it
	sb "$W/o" "$W/e" session exec --detach "$S2" "${TMO[@]}" -- sleep "$(tscale 60)"
	P2=$(cat "$W/o")
	expect_eq "second detached pid" 2 "$P2"
	_running() { [ "$(sql "SELECT status FROM session_commands WHERE session_id = '$S2' AND pid = 2")" = running ]; }
	expect_true "the detached command runs" poll 20 _running
	sb "$W/o" "$W/e" session kill "$S2" "$P2" --signal KILL
	expect_eq "kill exit code" 0 "$RC"
	expect_true "kill prints the command id" grep -Eq '^[0-9a-f-]{36}	' "$W/o"
	sb "$W/o" "$W/e" session output "$S2" "$P2" --follow
	expect_eq "killed by KILL: 137" 137 "$RC"
	sb "$W/o" "$W/e" session kill "$S2" "$P2"
	expect_eq "kill of an ended command: 3" 3 "$RC"
	expect_true "the API's 409 not_running" grep -q 'HTTP 409 not_running' "$W/e"
	sb "$W/o" "$W/e" session kill "$S2" "$P1" --signal NOPE
	expect_eq "kill with a bad signal: 3" 3 "$RC"
	expect_true "the API names the field" grep -q 'field: signal' "$W/e"

	ctx "session cp streams; stdin from a pipe"
	head -c 300007 /dev/urandom > "$W/cpbig"
	sb "$W/o" "$W/e" session cp "$W/cpbig" "$S2:cpbig"
	expect_eq "cp a 300007-byte file" 0 "$RC"
	SANDBOX_TOKEN=$TOKEN "$CLI" session cp - "$S2:piped.bin" < "$W/cpbig" > "$W/o" 2> "$W/e"
	expect_eq "cp - from a pipe" 0 "$?"
	cat "$W/o" "$W/e" >> "$ALL_OUT"
	sb "$W/o" "$W/e" session exec "$S2" -- sh -c 'sha256sum cpbig piped.bin | cut -c1-64'
	expect_eq "both exact" "$(sha256sum "$W/cpbig" | cut -c1-64)
$(sha256sum "$W/cpbig" | cut -c1-64)" "$(cat "$W/o")"
	sb "$W/o" "$W/e" session close "$S2"
	sb "$W/o" "$W/e" session close "$S3"
else
	_notok "session create for section 10" "two session ids" "'$S2' '$S3'" 0
fi

# ============================================================ 11. the man page
ctx "man page"
MAN=$REPO/cli/sandbox.1
if command -v man > /dev/null 2>&1; then
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$MAN" > "$W/man.txt" 2> "$W/man.err"
	expect_eq "man -l renders it" 0 "$?"
	expect_eq "no warnings" "" "$(cat "$W/man.err")"
elif command -v groff > /dev/null 2>&1; then
	groff -man -Tutf8 -ww "$MAN" > "$W/man.txt" 2> "$W/man.err"
	expect_eq "groff renders it" 0 "$?"
	expect_eq "no warnings" "" "$(cat "$W/man.err")"
else
	skip "man page renders" "neither man nor groff is installed"
fi
if [ -s "$W/man.txt" ]; then
	for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS ENVIRONMENT 'EXIT STATUS' EXAMPLES SECURITY; do
		expect_true "section $s" grep -q "^$s\$" "$W/man.txt"
	done
	for v in SANDBOX_URL SANDBOX_TOKEN SANDBOX_TOKEN_FILE SANDBOX_CACERT; do
		expect_true "ENVIRONMENT names $v" grep -q "^       $v\$" "$W/man.txt"
	done
	for c in 122 124 125 126 '128\+N' 130; do
		expect_true "EXIT STATUS has $c" grep -Eq "^       $c +[a-z]" "$W/man.txt"
	done
	# Every command with a --help (its NAME line "sandbox CMD - ...") is in the page,
	# and every session subcommand of session --help's SYNOPSIS.
	for c in run get list cancel artifacts runtimes session; do
		sb "$W/o" "$W/e" "$c" --help
		NAME=$(sed -n '2s/^    \(sandbox [a-z]*\) - .*/\1/p' "$W/o")
		expect_eq "$c --help names itself" "sandbox $c" "$NAME"
		expect_true "the page has command $c" grep -Eq "^       $c( |\$)" "$W/man.txt"
	done
	sb "$W/o" "$W/e" session --help
	for sub in $(sed -n 's/^    sandbox session \([a-z]*\) .*/\1/p' "$W/o" | sort -u); do
		expect_true "the page has session $sub" grep -Eq "^       session $sub( |\$)" "$W/man.txt"
	done
	expect_eq "session --help lists 8 subcommands" 8 "$(sed -n 's/^    sandbox session \([a-z]*\) .*/\1/p' "$W/o" | sort -u | wc -l)"
	expect_true "SECURITY: the token is never a flag" grep -q 'never a command-line flag' "$W/man.txt"
else
	skip "man page contents" "the page could not be rendered here"
fi

# ============================================================ 7. configuration, token
ctx "configuration"
env -u SANDBOX_TOKEN -u SANDBOX_TOKEN_FILE "$CLI" list > "$W/o" 2> "$W/e"
expect_eq "no token: exit 2" 2 "$?"
expect_true "no token: says so" grep -q 'no API token' "$W/e"
cat "$W/o" "$W/e" >> "$ALL_OUT"
SANDBOX_TOKEN=wrong-token-xyz "$CLI" list > "$W/o" 2> "$W/e"
expect_eq "wrong token: exit 3" 3 "$?"
expect_true "wrong token: the API's 401 error" grep -q 'HTTP 401 unauthorized' "$W/e"
expect_true "wrong token not echoed" fails grep -q wrong-token-xyz "$W/o" "$W/e"
printf '%s\n' "$TOKEN" > "$W/tokfile"
env -u SANDBOX_TOKEN SANDBOX_TOKEN_FILE="$W/tokfile" "$CLI" run -- echo viafile > "$W/o" 2> "$W/e"
expect_eq "SANDBOX_TOKEN_FILE works" viafile "$(cat "$W/o")"
cat "$W/o" "$W/e" >> "$ALL_OUT"
sb "$W/o" "$W/e" --token x list
expect_eq "--token refused: 2" 2 "$RC"
sb "$W/o" "$W/e" --help
expect_true "--help reads like a man page" grep -q '^EXIT STATUS' "$W/o"
sb "$W/o" "$W/e" session --help
expect_true "session --help" grep -q '^SYNOPSIS' "$W/o"
expect_true "the token never appears in any output" fails grep -qF "$TOKEN" "$ALL_OUT"

finish
