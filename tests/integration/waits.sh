#!/usr/bin/env bash
# Long-polls at scale (app/http/waiter.h): 500 concurrent GET /v1/jobs/{id}?wait=20 on
# queued jobs are all held (none answered early), all answered once the jobs end;
# MariaDB's query count while 500 wait is within 2x of the count while 5 wait (same
# window); a key at its share is answered at once while another key still waits; a
# client that goes away frees its slot; SIGTERM answers every waiter with the state
# as it is. The runner is stopped (tests/run-integration.sh): jobs stay queued until
# this suite ends them with SQL, as the API suite does. The suite runs its own API
# (same socket, so through the same nginx) with api_wait_capacity = 600 and
# api_wait_slots_per_key = 500, and gives the stack's back at the end. Under emulation
# (SANDBOX_TIME_SCALE > 1: make test-vm FULL=1) the same checks run with 100 waiters
# (capacity 200, a key's share 100, 10 that hang up): under TCG, 500 TLS long-polls
# through nginx took the guest longer to set up than the API's 30 s cap on a wait.
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env
LP=(python3 "$REPO/tests/bench/longpoll.py")

RUN="$RANDOM$RANDOM"
NS="itest-$RUN"
N=500
DROP=50
((TSCALE > 1)) && N=100 DROP=10
NJOBS=50

mkkey A "$NS" "t-wait-$RUN" user alice
mkkey B "$NS" "t-wait-$RUN" user bob
printf '%s' "$A_TOK" > "$T_DIR/a.tok"

ctx "setup"
JOBS=()
for ((i = 0; i < NJOBS; i++)); do
	as "$A_TOK" submit '{"command":"true"}' || break
	JOBS+=("$JOB")
done
expect_eq "$NJOBS queued jobs of key A" "$NJOBS" "${#JOBS[@]}"
printf '%s\n' "${JOBS[@]}" > "$T_DIR/jobs"
as "$A_TOK" submit '{"command":"true"}'
J_TERM=$JOB
printf '%s\n' "$J_TERM" > "$T_DIR/jterm"
as "$B_TOK" submit '{"command":"true"}'
J_B=$JOB

# This suite's own API on the stack's socket.
CONF=$T_DIR/sandbox.conf
grep -Ev '^(api_wait_capacity|api_wait_slots_per_key) ' "$SANDBOX_CONFIG" > "$CONF"
printf 'api_wait_capacity = %d\napi_wait_slots_per_key = %d\n' $((N + 100)) "$N" >> "$CONF"
API_LOG=$T_DIR/api.log
API_PID=
restore() {
	[ -n "$API_PID" ] && kill -TERM "$API_PID" 2> /dev/null && wait "$API_PID" 2> /dev/null
	stack start-api > /dev/null
}
at_exit restore
stack stop-api > /dev/null
"$SANDBOX_BIN/sandbox-api" --config "$CONF" > "$API_LOG" 2>&1 &
API_PID=$!
poll 10 test -S "$(conf_get fcgi_socket)"
expect_true "the suite's API is up" test -S "$(conf_get fcgi_socket)"

# Under emulation (SANDBOX_TIME_SCALE > 1, make test-vm FULL=1) the waits that must
# outlast the suite's own steps are longer (up to the API's 30 s cap), and so are the
# "answered at once" windows, each kept at half its wait so an answer held for the wait
# still fails it. Lower bounds ("it waited >= 1800 ms") use the 2 s wait as written.
WAIT_LONG=$(tscale 20 30)
WAIT_ONCE=$(tscale 5 30)
ONCE_MS=$(tscale 2500 15000)
questions() { sql "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2; }
# lp NAME N WAIT IDS [--drop-after S]: N long-polls in the background; waits (bounded)
# until all are sent. Their pid is LP_PID; their lines go to $T_DIR/NAME.out.
lp() {
	local name=$1 n=$2 wait=$3 ids=$4
	shift 4
	"${LP[@]}" --url "$SANDBOX_URL" --token-file "$T_DIR/a.tok" --cacert "$SANDBOX_CACERT" \
		--ids "$ids" --n "$n" --wait "$wait" --out "$T_DIR/$name.out" "$@" \
		> "$T_DIR/$name.ready" 2> "$T_DIR/$name.err" &
	LP_PID=$!
	poll 60 grep -q ready "$T_DIR/$name.ready"
}
# lines FILE HTTP STATUS: how many answers of FILE have this HTTP and job status.
lines() { awk -v h="$2" -v s="$3" '$2 == h && $3 == s' "$T_DIR/$1.out" 2> /dev/null | wc -l; }
# timed_get TOKEN PATH: GET, sets STATUS, BODY and MS (how long it took).
timed_get() {
	local t0
	t0=$(now_ms)
	as "$1" req GET "$2"
	MS=$(($(now_ms) - t0))
}
ended() { ! alive "$1"; }
# held N: the API's board holds at least N long-polls (sandbox_api_waiting_requests
# in GET /metrics). "ready" from lp means every request was sent; in the guest the last
# of 100 reached the board seconds later, and a request of key A sent before then
# found a free place in its share and waited its whole 30 s.
# held_below N: it holds fewer than N (and /metrics answered).
on_board() {
	as "" req GET /metrics > /dev/null 2>&1 && [ "$STATUS" = 200 ] || return 1
	BOARD=$(sed -n 's/^sandbox_api_waiting_requests \([0-9][0-9]*\)$/\1/p' "$BODY")
	[ -n "$BOARD" ]
}
held() { on_board && [ "$BOARD" -ge "$1" ]; }
held_below() { on_board && [ "$BOARD" -lt "$1" ]; }

# ----------------------------------------------------------- 5 waiters: the baseline
ctx "5 waiters"
head -n 1 "$T_DIR/jobs" > "$T_DIR/job0"
lp five 5 20 "$T_DIR/job0" --drop-after 8
FIVE_PID=$LP_PID
# The queries counted over QWIN s (3 under emulation: the N waiters below end at the
# API's 30 s cap, and the guest's steps after them are slow)
QWIN=5
[ "$TSCALE" = 1 ] || QWIN=3
sleep 1
q0=$(questions)
sleep "$QWIN"
Q5=$(($(questions) - q0))
note "MariaDB Questions in $QWIN s with 5 waiters: $Q5"
poll 15 ended "$FIVE_PID"
sleep 0.5
gone=$(grep -c 'status=499 .*reason=client_gone' "$API_LOG")
expect_eq "5 clients that went away: 5 requests logged as status=499 client_gone" 5 "$gone"

# The statements that end the jobs, written before the waits begin (in the guest
# the steps while the waits hold count against the API's 30 s cap).
sqlf=$T_DIR/finish.sql
{
	echo "START TRANSACTION;"
	for j in "${JOBS[@]}"; do
		echo "UPDATE jobs SET state='succeeded', started_at=NOW(3) - INTERVAL 1 SECOND,
			finished_at=NOW(3), runner_id='itest-runner' WHERE id='$j';
			INSERT INTO job_results (job_id, exit_code, stdout_bytes, stderr_bytes,
			stdout_truncated, stderr_truncated, diagnostics_json, wall_ms, cpu_ms,
			memory_peak_bytes) VALUES ('$j', 0, 0, 0, 0, 0, '[]', 5, 1, 1048576);"
	done
	echo "COMMIT;"
} > "$sqlf"

# ----------------------------------------------------------- N waiters
ctx "$N waiters"
lp many "$N" "$WAIT_LONG" "$T_DIR/jobs"
MANY_PID=$LP_PID
expect_true "$N long-polls sent ($(head -c 200 "$T_DIR/many.err"))" grep -q ready "$T_DIR/many.ready"
expect_true "all $N on the API's board" poll 30 held "$N"
sleep 1.5
q0=$(questions)
sleep "$QWIN"
Q500=$(($(questions) - q0))
note "MariaDB Questions in $QWIN s with $N waiters: $Q500 (with 5: $Q5)"
expect_true "queries with $N waiters ($Q500) within 2x of those with 5 ($Q5)" \
	test "$Q500" -le $((2 * (Q5 > 10 ? Q5 : 10)))
expect_true "all $N still waiting (no early answer)" alive "$MANY_PID"

ctx "the jobs end"
expect_true "all $N still waiting right before" alive "$MANY_PID"
sql "$(cat "$sqlf")"
t_end=$(now_ms)
poll 15 ended "$MANY_PID"
ok=$(lines many 200 succeeded)
last=$(awk 'BEGIN { m = 0 } $5 > m { m = $5 } END { print m }' "$T_DIR/many.out" 2> /dev/null)
expect_eq "answers 200 with status succeeded (none early: an early one says queued)" "$N" "$ok"
awk '$2 != 200 || $3 != "succeeded"' "$T_DIR/many.out" 2> /dev/null | head -n 5 | sed 's/^/#   /'
LAST_MS=$(tscale 5000 20000)
expect_true "the last answer came $((${last:-0} - t_end)) ms after the jobs ended (< $LAST_MS, the wait was $WAIT_LONG s)" \
	test $((${last:-0} - t_end)) -lt "$LAST_MS"

# ----------------------------------------------------------- hang-ups free slots
ctx "a client that goes away frees its slot"
lp stay $((N - DROP)) "$WAIT_LONG" "$T_DIR/jterm"
STAY_PID=$LP_PID
# The DROP go away when the suite kills their client, once the request answered at
# once is done (a timer could fire before all N reached the board: in the guest the
# board never held N, 10 s after they were sent).
lp drop "$DROP" "$WAIT_LONG" "$T_DIR/jterm"
DROP_PID=$LP_PID
expect_true "all $N on the API's board" poll 30 held "$N"

ctx "a key at its share"
# (here, not while the N above wait for their jobs to end: in the guest those steps
# took the N past the API's 30 s cap, which does not scale.) Key B's 2 s wait runs
# beside key A's request: in the guest one curl took 8 s.
curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $B_TOK" -o "$T_DIR/keyb.body" \
	-w '%{http_code} %{time_total}' "$SANDBOX_URL/v1/jobs/$J_B?wait=2" > "$T_DIR/keyb" 2>&1 &
KEYB_PID=$!
timed_get "$A_TOK" "/v1/jobs/$J_TERM?wait=$WAIT_ONCE"
expect_status 200 "key A (holds its $N) asks to wait"
expect_json .status queued "answered at once with the current state"
expect_true "at once (${MS} ms, < $ONCE_MS; the wait asked was $WAIT_ONCE s)" test "$MS" -lt "$ONCE_MS"
wait "$KEYB_PID"
read -r code secs < "$T_DIR/keyb"
MS=$(awk -v s="${secs:-0}" 'BEGIN { printf "%d", s * 1000 }')
expect_eq "key B asks to wait 2 s meanwhile: HTTP status" 200 "$code"
expect_true "key B gets a slot and waits (${MS} ms >= 1800)" test "$MS" -ge 1800

ctx "a client that goes away frees its slot"
kill -TERM "$DROP_PID"
poll 15 ended "$DROP_PID"
expect_true "the $DROP that went away left the board" poll 15 held_below $((N - DROP + 1))
timed_get "$A_TOK" "/v1/jobs/$J_TERM?wait=2"
expect_status 200 "after $DROP of them hung up"
expect_true "a new wait of key A gets a freed slot (${MS} ms >= 1800)" test "$MS" -ge 1800

# ----------------------------------------------------------- SIGTERM
ctx "SIGTERM answers the waiters"
expect_true "the $((N - DROP)) others still wait" alive "$STAY_PID"
t0=$(now_ms)
kill -TERM "$API_PID"
poll 15 ended "$STAY_PID"
took=$(($(now_ms) - t0))
wait "$API_PID" 2> /dev/null
API_PID=
expect_eq "$((N - DROP)) answered 200 with the current state (queued)" $((N - DROP)) "$(lines stay 200 queued)"
SIG_MS=$(tscale 10000 25000)
expect_true "answered at the signal (${took} ms < $SIG_MS; the wait was $WAIT_LONG s)" test "$took" -lt "$SIG_MS"

finish
