#!/usr/bin/env bash
# tests/integration/live.sh: live output of plain jobs (issue 9). Against the stack's
# API and runner, with a key of its own (so its storage sums are this suite's alone):
#
#   1. a job that prints a line every 250 ms for 10 s: while it runs, its stdout grows
#      (total_bytes rises, eof false), a range read twice gives the same bytes, and
#      the key's stored bytes equal the sum of its jobs' stored_bytes; wait=5 at the
#      current end answers with new bytes before the job ends; afterwards the whole
#      stream read in ranges equals the job object's (non-live) stdout and the
#      expected bytes exactly, reattaching from 0 and from an offset read during the
#      run gives the same bytes, it was stored in more than one chunk, the chunks'
#      offsets are continuous from 0 to stdout_bytes.
#   2. wait=10 at the end of a running job returns its next line when it comes, and
#      past its last line returns eof when the job ends.
#   3. output_bytes with live flushing: exactly output_bytes stored, output_limit.
#   4. a fast job (echo) stores one chunk per non-empty stream.
#   5. 8 MiB of output (two halves 200 ms apart) arrives complete and in order (sha256
#      of the ranges read back), no chunk over 1 MiB.
#   6. a job whose runner loses it keeps (and counts) the output stored until then.
#   7. storage: the key's stored bytes equal the sum of its jobs' stored_bytes, which
#      equals the bytes in their chunks. wait outside 0..30 is a 400 naming it.
#   8. the result wake-up (api_wake_socket, app/http/waiter.h): the stack's API binds it
#      beside its FastCGI socket, mode 0220 (nobody else can send); with the suite's own
#      API ticking every 10 s, POST /v1/jobs?wait=25 of a quick job answers succeeded
#      within half a tick (the supervisor's datagram), and with api_wake_socket empty
#      it still answers succeeded at the tick (well before its 25 s deadline).
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env SANDBOX_TOKEN
RUN=$(date +%s)-$$
mkkey LK live-ns "live-$RUN" user u1
TOKEN=$LK_TOK

# out_read ID STREAM OFFSET LIMIT [QUERY]: one range (base64) -> $T_DIR/slice, $O_NEXT,
# $O_TOTAL, $O_EOF
out_read() {
	req GET "/v1/jobs/$1/output/$2?offset=$3&limit=$4&encoding=base64${5:+&$5}"
	jq -r '.data_base64 // empty' "$BODY" | base64 -d > "$T_DIR/slice"
	O_NEXT=$(jq -r '.next_offset // -1' "$BODY")
	O_TOTAL=$(jq -r '.total_bytes // -1' "$BODY")
	O_EOF=$(jq -r '.eof | tostring' "$BODY")
}
# out_all ID STREAM FROM FILE: a finished job's stream from FROM to its end, in 1 MiB
# ranges, into FILE; 1 if a range failed or eof never came.
out_all() {
	local off=$3 i
	: > "$4"
	for ((i = 0; i < 64; i++)); do
		out_read "$1" "$2" "$off" 1048576
		[ "$STATUS" = 200 ] || return 1
		cat "$T_DIR/slice" >> "$4"
		off=$O_NEXT
		[ "$O_EOF" = true ] && return 0
	done
	return 1
}
chunks() { sql "SELECT COUNT(*) FROM job_output WHERE job_id = '$1' AND stream = ${2:-1}"; }
# Offsets that do not start where the previous chunk ended, plus 1 if the first is not 0.
gaps() {
	sql "SELECT COUNT(*) FROM (SELECT off, LAG(off + LENGTH(data)) OVER (ORDER BY off) AS prev
		FROM job_output WHERE job_id = '$1' AND stream = ${2:-1}) t
		WHERE (prev IS NULL AND off <> 0) OR (prev IS NOT NULL AND prev <> off)"
}
stored_chunks() { sql "SELECT COALESCE(SUM(LENGTH(data)), 0) FROM job_output WHERE job_id = '$1' AND stream = ${2:-1}"; }
key_sums() {
	sql "SELECT (SELECT COALESCE(SUM(bytes), 0) FROM key_storage WHERE key_id = '$LK_ID'),
		(SELECT COALESCE(SUM(stored_bytes), 0) FROM jobs WHERE key_id = '$LK_ID')" | tr '\t' ' '
}
_total_above() { out_read "$1" stdout 0 1 && [ "$O_TOTAL" -gt "$2" ] && [ "$O_EOF" = false ]; }

# ====================================================================== 1. a growing stream
ctx "live: a line every 250 ms for 10 s"
EXP=$T_DIR/expected
for i in $(seq 1 40); do echo "line $i"; done > "$EXP"
# Slow enough that a loaded machine's polls still see it run (timing windows below are
# wide for the same reason).
submit '{"command":"for i in $(seq 1 40); do echo \"line $i\"; sleep '"$(tscale 0.25 2)"'; done","limits":{"wall_seconds":'"$(tscale 60 300)"',"cpu_seconds":'"$(tscale 10 60)"'}}'
J1=$JOB
if ! wait_state "$J1" running 20; then
	_notok "the job runs" running "$(state_of "$J1")" 0
fi
if POLL_EVERY=0.02 poll 5 _total_above "$J1" 0; then
	T1=$O_TOTAL
	note "first bytes seen: total_bytes $T1"
	expect_eq "while it runs: eof false" false "$O_EOF"
	expect_true "while it runs: total_bytes ($T1) is less than the whole ($(stat -c %s "$EXP"))" \
		test "$T1" -lt "$(stat -c %s "$EXP")"
	out_read "$J1" stdout 0 "$T1"
	cp "$T_DIR/slice" "$T_DIR/first"
	expect_eq "the first $T1 bytes are the expected ones" "$(head -c "$T1" "$EXP" | sha256sum)" \
		"$(sha256sum < "$T_DIR/first")"
	expect_eq "key stored bytes = sum of its jobs' stored_bytes, mid-run" 1 \
		"$(key_sums | awk '{print ($1 == $2)}')"
	if POLL_EVERY=0.05 poll 5 _total_above "$J1" "$T1"; then
		T2=$O_TOTAL
		expect_true "total_bytes grows while it runs ($T1 -> $T2)" test "$T2" -gt "$T1"
		expect_eq "still running when it grew" running "$(db_state "$J1")"
		out_read "$J1" stdout 0 "$T1"
		expect_true "the same range read again gives the same bytes" cmp -s "$T_DIR/first" "$T_DIR/slice"
		# wait=5 at the current end: new bytes come within about 250 ms + a flush.
		out_read "$J1" stdout "$T2" 65536 wait=5
		n=$(stat -c %s "$T_DIR/slice")
		note "wait=5 at offset $T2 answered after ${ELAPSED}s with $n bytes, eof $O_EOF"
		expect_true "wait=5 at the end returns new bytes ($n)" test "$n" -gt 0
		expect_eq "... before the job ended (eof false)" false "$O_EOF"
		expect_true "... well before the 5 s are up (${ELAPSED}s)" awk -v e="$ELAPSED" -v hi="$(tscale 3.0 4.9)" 'BEGIN { exit !(e < hi) }'
		expect_eq "... and they are the next expected bytes" "$(tail -c +"$((T2 + 1))" "$EXP" | head -c "$n" | sha256sum)" \
			"$(sha256sum < "$T_DIR/slice")"
	else
		_notok "total_bytes grows while it runs" "more than $T1" "$O_TOTAL" 0
	fi
else
	_notok "output appears while the job runs" "total_bytes > 0 and eof false" "$O_TOTAL/$O_EOF" 0
	T1=0
fi
await "$J1" 30
expect_json .status succeeded
expect_json .result.stdout_bytes "$(stat -c %s "$EXP")"
jq -j .result.stdout "$BODY" > "$T_DIR/nonlive"
expect_true "the job object's stdout is the expected bytes" cmp -s "$EXP" "$T_DIR/nonlive"
expect_true "the whole stream read in ranges" out_all "$J1" stdout 0 "$T_DIR/all"
expect_true "... equals the expected bytes exactly" cmp -s "$EXP" "$T_DIR/all"
expect_eq "... total_bytes is the whole" "$(stat -c %s "$EXP")" "$O_TOTAL"
out_all "$J1" stdout 0 "$T_DIR/again"
expect_true "reattach from 0: the same bytes" cmp -s "$EXP" "$T_DIR/again"
out_all "$J1" stdout "$T1" "$T_DIR/tail"
expect_true "reattach from offset $T1 (read during the run): the rest, exactly" \
	cmp -s "$T_DIR/tail" <(tail -c +"$((T1 + 1))" "$EXP")
c=$(chunks "$J1")
note "stdout stored in $c chunks"
expect_true "stored live: more than one chunk ($c)" test "$c" -gt 1
expect_eq "chunk offsets continuous from 0" 0 "$(gaps "$J1")"
expect_eq "chunks hold exactly stdout_bytes" "$(stat -c %s "$EXP")" "$(stored_chunks "$J1")"
expect_eq "no stderr chunk" 0 "$(chunks "$J1" 2)"
out_read "$J1" stdout "$(stat -c %s "$EXP")" 10 wait=5
expect_eq "wait at the end of a finished job: eof at once" true "$O_EOF"
expect_true "... without waiting (${ELAPSED}s)" awk -v e="$ELAPSED" -v hi="$(tscale 1.0)" 'BEGIN { exit !(e < hi) }'

# ====================================================================== 2. waiting
ctx "live: wait=10 returns the next bytes, then eof"
# (under emulation 'b' comes 20 s after 'a' and the end 20 s after 'b': in a loaded guest
# one step of this test took longer than the job's 8 s sleeps)
submit '{"command":"echo a; sleep '"$(tscale 3 20)"'; echo b; sleep '"$(tscale 3 20)"'","limits":{"wall_seconds":'"$(tscale 30 300)"'}}'
J2=$JOB
if wait_state "$J2" running 20 && POLL_EVERY=0.02 poll 5 _total_above "$J2" 1; then
	expect_eq "'a' is stored while the job sleeps" "2 false" "$O_TOTAL $O_EOF"
	out_read "$J2" stdout 2 10 wait=$(tscale 10 30)
	note "wait=10 at offset 2 answered after ${ELAPSED}s: $(stat -c %s "$T_DIR/slice") bytes, eof $O_EOF"
	expect_eq "wait=10 at the end returns the next line" "$(printf 'b\n' | od -An -tx1)" "$(od -An -tx1 < "$T_DIR/slice")"
	expect_eq "... before the job ended" "false 4" "$O_EOF $O_NEXT"
	expect_true "... when it came, not at once nor at the deadline (${ELAPSED}s)" \
		awk -v e="$ELAPSED" -v hi="$(tscale 8.0 29.9)" 'BEGIN { exit !(e > 0.3 && e < hi) }'
	out_read "$J2" stdout 4 10 wait=$(tscale 10 30)
	note "wait=10 at offset 4 answered after ${ELAPSED}s: eof $O_EOF, total $O_TOTAL"
	expect_eq "wait=10 past the last line: eof when the job ends" true "$O_EOF"
	expect_eq "... no bytes" 0 "$(stat -c %s "$T_DIR/slice")"
	expect_eq "... next_offset is the total" "4 4" "$O_NEXT $O_TOTAL"
	expect_true "... it waited for the end (${ELAPSED}s, the job sleeps 3 s)" \
		awk -v e="$ELAPSED" -v hi="$(tscale 8.0 29.9)" 'BEGIN { exit !(e > 0.3 && e < hi) }'
else
	_notok "the job's 'a' is stored while it runs" "total_bytes 2" "$O_TOTAL" 0
fi
await "$J2" 30

# ====================================================================== 3. the cap
ctx "live: output_bytes 10000 with live flushing"
submit '{"command":"for i in $(seq 1 40); do head -c 1000 /dev/zero | tr \"\\\\0\" a; sleep 0.05; done","limits":{"output_bytes":10000,"wall_seconds":30}}'
J3=$JOB
await "$J3" 30
expect_json '.status + " " + (.result.exit_code|tostring)' "output_limit 122"
expect_json .result.stdout_bytes 10000
expect_json .result.stdout_truncated true
expect_eq "chunks hold exactly output_bytes" 10000 "$(stored_chunks "$J3")"
expect_eq "chunk offsets continuous" 0 "$(gaps "$J3")"
c=$(chunks "$J3")
expect_true "stored live: more than one chunk ($c)" test "$c" -gt 1
out_all "$J3" stdout 0 "$T_DIR/cap"
expect_true "the stream is 10000 'a'" cmp -s "$T_DIR/cap" <(head -c 10000 /dev/zero | tr '\0' a)

# ====================================================================== 4. a fast job
ctx "live: a fast job stores its output once"
submit '{"command":"echo hi; echo oops >&2"}'
J4=$JOB
await "$J4" 30
expect_json '.result.stdout + .result.stderr | @json' '"hi\noops\n"'
expect_eq "one chunk per non-empty stream" "1 1" "$(chunks "$J4" 1) $(chunks "$J4" 2)"

# ====================================================================== 5. 8 MiB
ctx "live: 8 MiB of output"
# Two halves 200 ms apart: the first is stored live, the second live or with the result.
submit '{"command":"seq 1 2000000 | head -c 4194304; sleep 0.2; seq 2000000 | head -c 4194304","limits":{"output_bytes":9000000,"wall_seconds":60}}'
J5=$JOB
want=$( (seq 1 2000000 | head -c 4194304; seq 2000000 | head -c 4194304) | sha256sum)
await "$J5" 90
expect_json '.status + " " + (.result.stdout_bytes|tostring)' "succeeded 8388608"
out_all "$J5" stdout 0 "$T_DIR/big"
expect_eq "the ranges concatenated are the expected bytes (sha256)" "$want" "$(sha256sum < "$T_DIR/big")"
expect_eq "chunk offsets continuous" 0 "$(gaps "$J5")"
note "8 MiB stored in chunks (count, smallest, largest): $(sql "SELECT COUNT(*), MIN(LENGTH(data)), MAX(LENGTH(data)) FROM job_output WHERE job_id = '$J5'" | tr '\t' ' ')"
expect_eq "no chunk over 1 MiB" 0 \
	"$(sql "SELECT COUNT(*) FROM job_output WHERE job_id = '$J5' AND LENGTH(data) > 1048576")"

# ====================================================================== 6. lost
ctx "live: a lost job keeps its stored output"
EXPL=$T_DIR/expected-lost
for i in $(seq 1 100); do echo "tick $i"; done > "$EXPL"
submit '{"command":"for i in $(seq 1 100); do echo \"tick $i\"; sleep '"$(tscale 0.1 0.5)"'; done","limits":{"wall_seconds":'"$(tscale 60 300)"'}}'
J6=$JOB
if wait_state "$J6" running 20 && POLL_EVERY=0.05 poll 5 _total_above "$J6" 20; then
	# Another runner took it over and its lease ran out: this supervisor's next flush or
	# heartbeat finds it is no longer its job, the dispatcher marks it lost.
	sql "UPDATE jobs SET runner_id = 'live-test-elsewhere', lease_expires_at = NOW(3) - INTERVAL 1 SECOND WHERE id = '$J6'"
	if wait_db_state "$J6" lost 20; then
		await "$J6" 10
		n=$(jq -r .result.stdout_bytes "$BODY")
		note "lost with $n bytes stored"
		expect_true "its result counts the output stored while it ran ($n)" test "$n" -ge 20
		expect_eq "... all of it in chunks" "$n" "$(stored_chunks "$J6")"
		expect_eq "... its stored_bytes" "$n" "$(sql "SELECT stored_bytes FROM jobs WHERE id = '$J6'")"
		out_all "$J6" stdout 0 "$T_DIR/lost"
		expect_true "... readable, a prefix of what it printed" cmp -s "$T_DIR/lost" <(head -c "$n" "$EXPL")
	else
		_notok "the job ends lost" lost "$(db_state "$J6")" 0
	fi
else
	_notok "the job's output is stored while it runs" "total_bytes > 20" "$O_TOTAL" 0
fi

# ====================================================================== 7. storage, validation
ctx "live: storage per key"
_key_idle() { [ "$(sql "SELECT COUNT(*) FROM jobs WHERE key_id = '$LK_ID' AND state IN ('queued', 'running')")" = 0 ]; }
expect_true "the key's jobs have all ended" poll 20 _key_idle
read -r ks js <<< "$(key_sums)"
expect_eq "key stored bytes = sum of its jobs' stored_bytes" "$js" "$ks"
expect_eq "... = the bytes in their chunks" "$js" \
	"$(sql "SELECT COALESCE(SUM(LENGTH(o.data)), 0) FROM job_output o JOIN jobs j ON j.id = o.job_id WHERE j.key_id = '$LK_ID'")"
ctx "live: wait validation"
req GET "/v1/jobs/$J4/output/stdout?wait=31"
expect_error 400 invalid_request wait
req GET "/v1/jobs/$J4/output/stdout?wait=x"
expect_error 400 invalid_request wait


# ====================================================================== 8. result wake-up
ctx "live: result wake-up (api_wake_socket)"
AWAKE=$(dirname "$(conf_get fcgi_socket)")/api-wake.sock
[ -n "$(conf_get api_wake_socket)" ] && AWAKE=$(conf_get api_wake_socket)
# awake_dg USER: one datagram to the API's wake socket as USER: "sent" or the errno name
awake_dg() {
	setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups /usr/bin/python3 -c '
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    s.sendto(b"w", sys.argv[1]); print("sent")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))' "$AWAKE"
}
if ! grep -qE '^api_wake_socket *= *$' "$SANDBOX_CONFIG" && [ "$(id -u)" = 0 ]; then
	AW_GID=$(stat -c %g "$(dirname "$AWAKE")")
	expect_eq "the stack's API binds it: write-only for its owner and its directory's group" \
		"s-w--w---- $AW_GID" "$(stat -c '%A %g' "$AWAKE" 2>&1)"
	expect_eq "another user (nobody) cannot send" EACCES "$(awake_dg nobody)"
	expect_eq "root can send" sent "$(awake_dg root)"
	W_PID=
	w_restore() {
		[ -n "$W_PID" ] && kill -TERM "$W_PID" 2> /dev/null && wait "$W_PID" 2> /dev/null
		W_PID=
		stack start-api > /dev/null
	}
	at_exit w_restore
	# w_api EXTRA: the suite's own API on the stack's socket, with the config lines EXTRA
	w_api() {
		[ -n "$W_PID" ] && kill -TERM "$W_PID" 2> /dev/null && wait "$W_PID" 2> /dev/null
		W_PID=
		stack stop-api > /dev/null
		grep -Ev '^(api_wait_tick_ms|api_wake_socket) ' "$SANDBOX_CONFIG" > "$T_DIR/wake-api.conf"
		printf '%s\n' "$@" >> "$T_DIR/wake-api.conf"
		"$SANDBOX_BIN/sandbox-api" --config "$T_DIR/wake-api.conf" >> "$T_DIR/wake-api.log" 2>&1 &
		W_PID=$!
		poll 10 test -S "$(conf_get fcgi_socket)"
	}
	# w_post: POST /v1/jobs?wait=25 of a quick job; W_MS how long it took
	w_post() {
		local t0
		t0=$(now_ms)
		req POST "/v1/jobs?wait=25" '{"command":"echo woke"}'
		W_MS=$(($(now_ms) - t0))
	}
	w_api "api_wait_tick_ms = 10000"
	expect_true "the suite's API (tick 10 s) binds the wake socket" poll 10 test -S "$AWAKE"
	w_post
	expect_status 200 "tick 10 s, wake-up on: the quick job's wait"
	expect_json '.status + " " + (.result.stdout | rtrimstr("\n"))' 'succeeded woke'
	expect_true "answered within half a tick (${W_MS} ms < $(tscale 5000 9900)): the supervisor's wake-up" \
		test "$W_MS" -lt "$(tscale 5000 9900)"
	w_api "api_wait_tick_ms = 10000" "api_wake_socket ="
	expect_true "api_wake_socket empty: no socket" test ! -e "$AWAKE"
	w_post
	expect_status 200 "tick 10 s, wake-up off: the quick job's wait"
	expect_json '.status + " " + (.result.stdout | rtrimstr("\n"))' 'succeeded woke'
	expect_true "answered at the tick, not at the 25 s deadline (${W_MS} ms < $(tscale 20000 24900))" \
		test "$W_MS" -lt "$(tscale 20000 24900)"
	note "wake-up off: answered after ${W_MS} ms (the tick is 10 s)"
	w_restore
	expect_true "the stack's API binds it again" poll 10 test -S "$AWAKE"
else
	skip "result wake-up: api_wake_socket is off in this stack's config, or not root (setpriv)"
fi

finish
