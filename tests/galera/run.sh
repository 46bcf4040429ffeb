#!/usr/bin/env bash
# tests/galera/run.sh: make test-galera. The service on a three-node MariaDB Galera
# cluster (the bed: tests/galera/cluster.sh), with TAP-style assertions like the
# integration suites (tests/integration/lib.sh):
#   1 cluster up: three nodes, Primary, Synced; --check reports the cluster;
#   2 N jobs (SANDBOX_GALERA_JOBS, default 2000) submitted through both API hosts: each
#     succeeded with its own marker as output, claimed and started exactly once (the
#     database's attempt and events, the two runner hosts' job_claimed lines), and a
#     key with max_running=2 never had more than 2 running (its jobs' intervals);
#     max_queued and max_sessions held under concurrent submits and creates of one key
#     through both API hosts;
#   3 GET after POST across API hosts finds the job;
#   4 a long-poll on host A answered when a runner host finishes the job; a session's
#     command output waited for on host A (the session made through host B);
#   5 a node killed with SIGKILL while jobs flow: the survivors stay Primary, every
#     answer is 202 or 503 with Retry-After, no accepted job lost or run twice, the node
#     rejoins by IST;
#   6 a runner host killed with SIGKILL: its running jobs and its sessions end lost
#     after the lease, none stays running, the other host goes on;
#   7 sandboxctl migrate again while serving: nothing applied twice, schema_migrations
#     the same on every node.
# Root only (mariadbd as mysql, runners). Figures (jobs/s, tx_retry lines, the stall of
# writes after the kill) are '#' lines. Exit status non-zero when an assertion fails.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BIN=${SANDBOX_BIN:-$REPO/build}
N_JOBS=${SANDBOX_GALERA_JOBS:-2000}
[ "$(id -u)" = 0 ] || { echo "Bail out! make test-galera needs root (mariadbd as mysql, runners)"; exit 2; }
for c in mariadbd mariadb-install-db rsync nginx curl jq; do
	command -v "$c" >/dev/null || { echo "Bail out! $c missing: bash tests/deps.sh"; exit 2; }
done
[ -r /usr/lib/galera/libgalera_smm.so ] || { echo "Bail out! galera-4 missing: bash tests/deps.sh"; exit 2; }

W=$(mktemp -d /tmp/sbx-galera.XXXXXX)
chmod 0755 "$W"
(umask 077 && openssl rand -hex 24 >"$W/db_password")
export SANDBOX_VAR=$W SANDBOX_CACERT=$W/nginx/cert.pem
# shellcheck source=tests/integration/lib.sh
. "$REPO/tests/integration/lib.sh"
# shellcheck source=tests/galera/cluster.sh
. "$REPO/tests/galera/cluster.sh"
URL_BOTH=https://127.0.0.1:$GB_PORT
URL_A=https://127.0.0.1:$((GB_PORT + 1))
URL_B=https://127.0.0.1:$((GB_PORT + 2))
SANDBOX_URL=$URL_BOTH
at_exit gb_down
trap 'exit 130' INT TERM

T0=$SECONDS
# ------------------------------------------------------------------ 1. the cluster
gb_cluster_up
gb_say "cluster up in $((SECONDS - T0)) s"
ctx "cluster"
for i in 1 2 3; do
	expect_eq "node $i: size, status, state" "3 Primary Synced" \
		"$(node_status "$i" wsrep_cluster_size) $(node_status "$i" wsrep_cluster_status) $(node_status "$i" wsrep_local_state_comment)"
done

gb_conf ctl 1 ""
export SANDBOX_CONFIG=$W/ctl.conf
ctl migrate >"$W/migrate1.log" 2>&1 || gb_die "sandboxctl migrate failed: $(tail -n 5 "$W/migrate1.log")"
N_SCHEMA=$(find "$REPO/schema" -maxdepth 1 -name '*.sql' | wc -l)
mkkey K1 g t1 user u1
mkkey K2 g t2 user u2 --max-running 2
gb_api_start a 1
gb_api_start b 2
gb_nginx_start
# the runner hosts on nodes 1 and 3 alone: their claims meet only at certification
gb_runner_start 1 =1
gb_runner_start 2 =3
# what the preflight says about the cluster (systemd/README.md "Several hosts")
"$BIN/sandbox-runner" --config "$W/r1.conf" --check --json >"$W/check.json" 2>/dev/null
expect_eq "sandbox-runner --check on a runner host: db-cluster ok, Synced, size 3, Primary" \
	"ok Galera: this node Synced, cluster size 3, Primary; wsrep_sync_wait 0 (db_sync_wait)" \
	"$(jq -r '.items[] | select(.item == "db-cluster") | "\(.status) \(.detail)"' "$W/check.json")"
# sql_is NODE VALUE SQL: the statement's answer on NODE is VALUE (for poll)
sql_is() { [ "$(node_sql "$1" "$3" 2>/dev/null)" = "$2" ]; }
poll 20 sql_is 1 2 "SELECT COUNT(*) FROM runner_hosts WHERE host IN ('g1','g2')" ||
	gb_say "the runner hosts have no runner_hosts rows yet"

# ------------------------------------------------------------ 2. N jobs, both hosts
# One curl per API host, requests in parallel (curl --parallel), each its own body
# and output file; every 5th job is K2's (max_running 2) and sleeps a little.
sub_cfg() { # FILE URL FIRST STEP PREFIX: a curl config, one POST per job
	local i tok body
	: >"$1"
	for ((i = $3; i <= N_JOBS; i += $4)); do
		if ((i % 5 == 0)); then
			tok=$K2_TOK body='{"command":"sleep 0.3; echo '"$5-$i"'"}'
		else
			tok=$K1_TOK body='{"command":"echo '"$5-$i"'"}'
		fi
		[ -s "$1" ] && printf 'next\n' >>"$1"
		printf 'url = "%s/v1/jobs"\nrequest = POST\ncacert = "%s"\nheader = "Authorization: Bearer %s"\nheader = "Content-Type: application/json"\ndata = %s\noutput = "%s/sub/%s-%d.json"\nwrite-out = "%%{http_code} %s-%d\\n"\nsilent\nshow-error\n' \
			"$2" "$SANDBOX_CACERT" "$tok" "$(jq -Rn --arg b "$body" '$b')" "$W" "$5" "$i" "$5" "$i" >>"$1"
	done
}
mkdir -p "$W/sub"
sub_cfg "$W/sub-a.cfg" "$URL_A" 1 2 gm
sub_cfg "$W/sub-b.cfg" "$URL_B" 2 2 gm
t_sub=$(now_ms)
curl --parallel --parallel-max 4 -K "$W/sub-a.cfg" >"$W/sub-a.out" 2>"$W/sub-a.err" &
pa=$!
curl --parallel --parallel-max 4 -K "$W/sub-b.cfg" >"$W/sub-b.out" 2>"$W/sub-b.err" &
pb=$!
wait "$pa" "$pb"
ctx "jobs"
cat "$W"/sub-a.out "$W"/sub-b.out >"$W/sub.out"
expect_eq "every submit answered 202, or 503 with Retry-After (a conflict lost)" "" \
	"$(grep -v '^202 \|^503 ' "$W/sub.out" | head -n 3 | tr '\n' ';')"
# the 503s again, as a client does after Retry-After
n503=$(grep -c '^503 ' "$W/sub.out")
for tag in $(awk '$1 == 503 { print $2 }' "$W/sub.out"); do
	i=${tag#gm-}
	if ((i % 5 == 0)); then tok=$K2_TOK cmd="sleep 0.3; echo $tag"; else tok=$K1_TOK cmd="echo $tag"; fi
	for _ in 1 2 3 4 5; do
		code=$(curl -sS --cacert "$SANDBOX_CACERT" -o "$W/sub/$tag.json" -w '%{http_code}' \
			-H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
			--data-binary "$(jq -cn --arg c "$cmd" '{command: $c}')" "$URL_BOTH/v1/jobs")
		[ "$code" = 503 ] || break
		sleep 1
	done
	printf '%s %s\n' "$code" "$tag" >>"$W/sub.out"
done
t_subd=$(now_ms)
gb_say "$n503 of $N_JOBS submits answered 503 (conflict lost after the retries), sent again"
expect_eq "$N_JOBS submits accepted (A and B)" "$N_JOBS" "$(grep -c '^202 ' "$W/sub.out")"
jq -r '.id // empty' "$W"/sub/gm-*.json >"$W/ids"
expect_eq "each answer names a job" "$N_JOBS" "$(sort -u "$W/ids" | wc -l)"
terminal_left() {
	node_sql 1 "SELECT COUNT(*) FROM jobs WHERE state IN ('queued','running')"
}
no_active() { [ "$(terminal_left)" = 0 ]; }
poll $((60 + N_JOBS / 2)) no_active
t_done=$(now_ms)
gb_say "$N_JOBS jobs: submitted in $((t_subd - t_sub)) ms, all ended $((t_done - t_sub)) ms after the first submit ($(awk -v n="$N_JOBS" -v ms=$((t_done - t_sub)) 'BEGIN{printf "%.1f", n*1000/ms}') jobs/s)"
expect_eq "every job succeeded" "$N_JOBS" \
	"$(node_sql 2 "SELECT COUNT(*) FROM jobs WHERE state = 'succeeded' AND key_id IN ('$K1_ID','$K2_ID')")"
# the marker: each job's stdout is its own line
expect_eq "each job's output is its own marker" "$N_JOBS" \
	"$(node_sql 3 "SELECT COUNT(*) FROM jobs j WHERE j.key_id IN ('$K1_ID','$K2_ID') AND
		(SELECT GROUP_CONCAT(o.data ORDER BY o.off SEPARATOR '') FROM job_output o
		 WHERE o.job_id = j.id AND o.stream = 1) = CONCAT(REGEXP_SUBSTR(j.command, 'gm-[0-9]+'), '\n')")"
expect_eq "each job claimed once (attempt 1, one running event)" "0" \
	"$(node_sql 1 "SELECT COUNT(*) FROM jobs j WHERE j.key_id IN ('$K1_ID','$K2_ID') AND (j.attempt <> 1 OR
		(SELECT COUNT(*) FROM job_events e WHERE e.job_id = j.id AND e.to_state = 'running') <> 1)")"
grep -ah 'job_claimed' "$W"/r1/runner.log "$W"/r2/runner.log | grep -o 'job=[0-9a-f-]*' | sort >"$W/claims"
expect_eq "each job in exactly one job_claimed line of the two runner hosts" "$N_JOBS 0" \
	"$(grep -cFf <(sed 's/^/job=/' "$W/ids") "$W/claims") $(uniq -d "$W/claims" | wc -l)"
expect_true "both runner hosts ran jobs" test "$(grep -ac job_claimed "$W/r1/runner.log")" -gt 0 -a \
	"$(grep -ac job_claimed "$W/r2/runner.log")" -gt 0
# max_running 2 across the hosts: the most of K2's jobs whose [started, finished)
# overlap, in the mixed run and in a burst of K2's jobs alone (every free slot of both
# hosts wanting one of them at once)
k2_most() {
	node_sql 1 "SELECT UNIX_TIMESTAMP(started_at)*1000, 1 FROM jobs WHERE key_id = '$K2_ID'
		UNION ALL SELECT UNIX_TIMESTAMP(finished_at)*1000, -1 FROM jobs WHERE key_id = '$K2_ID'" |
		sort -k1,1n -k2,2n | awk '{ n += $2; if (n > m) m = n } END { print m + 0 }'
}
k2_max=$(k2_most)
expect_eq "max_running=2 held across both runner hosts (most overlapping, mixed run)" "ok" \
	"$([ "$k2_max" -le 2 ] && echo ok || echo "$k2_max at once")"
for i in $(seq 1 40); do
	SANDBOX_URL=$URL_BOTH as "$K2_TOK" req POST /v1/jobs '{"command":"echo b"}'
done
poll 90 no_active
k2_max=$(k2_most)
expect_eq "max_running=2 held across both runner hosts (most overlapping, a burst of 40)" "ok" \
	"$([ "$k2_max" -le 2 ] && echo ok || echo "$k2_max at once")"
# max_queued and max_sessions across the hosts: concurrent submits (creates) of one key
# through A and B at once, each API on another node, never pass the cap (the API writes
# the key's row near the cap: jd_key_lock, certified by Galera)
mkkey K3 g t3 user u3 --max-queued 5 --max-running 1
mkkey K4 g t4 user u4 --max-sessions 2
burst() { # N TOKEN PATH BODY OUTDIR: N concurrent POSTs alternately through A and B
	local i url
	mkdir -p "$5"
	for i in $(seq 1 "$1"); do
		url=$URL_A
		[ $((i % 2)) = 0 ] && url=$URL_B
		curl -sS --cacert "$SANDBOX_CACERT" -o "$5/$i.json" -w '%{http_code}\n' \
			-H "Authorization: Bearer $2" -H 'Content-Type: application/json' -d "$4" \
			"$url$3" > "$5/$i.code" 2>/dev/null &
	done
	wait
}
codes() { cat "$1"/*.code | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }'; }
burst 20 "$K3_TOK" /v1/jobs '{"command":"sleep 30"}' "$W/q"
q_ok=$(cat "$W"/q/*.code | grep -c '^20[12]$')
expect_true "max_queued=5 held across hosts: $q_ok of 20 concurrent submits accepted ($(codes "$W/q"))" \
	test "$q_ok" -le 5 -a "$(grep -c '^429$' "$W"/q/*.code | awk -F: '{ n += $2 } END { print n }')" -ge 15
for f in "$W"/q/*.json; do
	id=$(jq -r '.id // empty' "$f" 2>/dev/null)
	[ -n "$id" ] && SANDBOX_URL=$URL_BOTH as "$K3_TOK" req POST "/v1/jobs/$id/cancel" ''
done
burst 8 "$K4_TOK" /v1/sessions '{}' "$W/s"
s_ok=$(cat "$W"/s/*.code | grep -c '^201$')
expect_true "max_sessions=2 held across hosts: $s_ok of 8 concurrent creates accepted ($(codes "$W/s"))" \
	test "$s_ok" -le 2 -a "$s_ok" -ge 1
for f in "$W"/s/*.json; do
	id=$(jq -r '.id // empty' "$f" 2>/dev/null)
	[ -n "$id" ] && SANDBOX_URL=$URL_BOTH as "$K4_TOK" req POST "/v1/sessions/$id/close" ''
done
retries=$(cat "$W"/r1/runner.log "$W"/r2/runner.log | grep -ac 'event=tx_retry')
gb_say "runner tx_retry lines: $retries for the $N_JOBS jobs and the burst of 40 ($(grep -ah 'event=tx_retry' "$W"/r1/runner.log "$W"/r2/runner.log | grep -o 'step=[a-z_]*' | sort | uniq -c | tr '\n' ' '))"

# ----------------------------------------------------- 3. GET after POST across hosts
ctx "read after write"
miss=0
for i in $(seq 1 40); do
	SANDBOX_URL=$URL_A as "$K1_TOK" req POST /v1/jobs '{"command":"true"}'
	id=$(jq -r '.id // empty' "$BODY")
	SANDBOX_URL=$URL_B as "$K1_TOK" req GET "/v1/jobs/$id"
	[ "$STATUS" = 200 ] || { miss=$((miss + 1)); note "GET on B of $id (POST on A): $STATUS"; }
	SANDBOX_URL=$URL_B as "$K1_TOK" req POST /v1/jobs '{"command":"true"}'
	id=$(jq -r '.id // empty' "$BODY")
	SANDBOX_URL=$URL_A as "$K1_TOK" req GET "/v1/jobs/$id"
	[ "$STATUS" = 200 ] || { miss=$((miss + 1)); note "GET on A of $id (POST on B): $STATUS"; }
done
expect_eq "80 GETs right after a POST on the other API host found the job" 0 "$miss"
# the cost of wsrep_sync_wait=1 on a node (the APIs' db_sync_wait): 1000 reads of one
# session, with and without, while nothing else runs
sync_cost() { # 0|1: ms for 1000 point reads on node 3
	local t0 id
	id=$(head -n 1 "$W/ids")
	{
		echo "SET SESSION wsrep_sync_wait = $1;"
		for _ in $(seq 1000); do echo "SELECT state FROM jobs WHERE id = '$id';"; done
	} >"$W/reads.sql"
	t0=$(now_ms)
	node_sql 3 "source $W/reads.sql" >/dev/null
	echo $(($(now_ms) - t0))
}
gb_say "1000 reads on node 3: $(sync_cost 0) ms without wsrep_sync_wait, $(sync_cost 1) ms with 1"

# ------------------------------------------------------------ 4. long-poll across hosts
ctx "long-poll"
SANDBOX_URL=$URL_B as "$K1_TOK" req POST /v1/jobs '{"command":"sleep 1; echo lp"}'
id=$(jq -r '.id // empty' "$BODY")
SANDBOX_URL=$URL_A as "$K1_TOK" req GET "/v1/jobs/$id?wait=30"
expect_status 200
expect_json .status succeeded "host A's long-poll answered with the finished job (POST on B)"
note "long-poll on A answered in ${ELAPSED}s (job sleeps 1 s), runner $(node_sql 2 "SELECT runner_id FROM jobs WHERE id = '$id'")"

# a session's command output waited for on host A while the command runs on whichever
# runner host took the session (its output committed through another node), the
# session made through host B: the wait is answered through the database alone
ctx "session output across hosts"
SANDBOX_URL=$URL_B as "$K1_TOK" req POST /v1/sessions '{}'
sid=$(jq -r '.id // empty' "$BODY")
SANDBOX_URL=$URL_A as "$K1_TOK" req GET "/v1/sessions/$sid?wait=20"
expect_json .status ready "a session made through host B is ready, seen (waited for) on host A"
SANDBOX_URL=$URL_A as "$K1_TOK" req POST "/v1/sessions/$sid/commands" '{"command":"sleep 1; echo across"}'
cid=$(jq -r '.id // empty' "$BODY")
SANDBOX_URL=$URL_A as "$K1_TOK" req GET "/v1/sessions/$sid/commands/$cid/output?wait=20"
expect_json '.data == "across\n"' true "host A's output wait answered with the command's output (session via B, runner $(node_sql 1 "SELECT runner_host FROM sessions WHERE id = '$sid'"))"
note "the output wait on A answered in ${ELAPSED}s (the command sleeps 1 s)"
SANDBOX_URL=$URL_B as "$K1_TOK" req GET "/v1/sessions/$sid/commands/$cid?wait=20"
expect_json .status succeeded "host B sees the command succeeded"
SANDBOX_URL=$URL_A as "$K1_TOK" req POST "/v1/sessions/$sid/close" ''

# ------------------------------------------------------------- 5. a node killed
ctx "node killed"
# a steady flow through both hosts while node 2 dies: every answer recorded
flow() { # URL PREFIX COUNT
	local i code
	for ((i = 1; i <= $3; i++)); do
		t0=$(now_ms)
		code=$(curl -sS --max-time 30 --cacert "$SANDBOX_CACERT" -o "$W/flow/$2-$i.json" -D "$W/flow/$2-$i.h" \
			-w '%{http_code}' -H "Authorization: Bearer $K1_TOK" -H 'Content-Type: application/json' \
			--data-binary '{"command":"echo '"$2-$i"'"}' "$1/v1/jobs" 2>/dev/null)
		printf '%s %s-%d %s %s\n' "$code" "$2" "$i" "$(date +%s%N | cut -c1-13)" "$(($(now_ms) - t0))" >>"$W/flow/$2.out"
		sleep 0.05
	done
}
mkdir -p "$W/flow"
flow "$URL_A" fa 120 &
fpa=$!
flow "$URL_B" fb 120 &
fpb=$!
sleep 2
kill_ms=$(now_ms)
kill -KILL "$(node_pid 2)"
size_is() { [ "$(node_status "$1" wsrep_cluster_size)" = "$2" ]; }
poll 30 size_is 1 2
expect_eq "survivors: size 2, Primary (nodes 1 and 3)" "2 Primary 2 Primary" \
	"$(node_status 1 wsrep_cluster_size) $(node_status 1 wsrep_cluster_status) $(node_status 3 wsrep_cluster_size) $(node_status 3 wsrep_cluster_status)"
evicted_ms=$(now_ms)
wait "$fpa" "$fpb"
cat "$W"/flow/fa.out "$W"/flow/fb.out >"$W/flow/all"
bad=$(awk '$1 != 202 && $1 != 503' "$W/flow/all" | head -n 3 | tr '\n' ';')
expect_eq "every answer during the kill is 202 or 503" "" "$bad"
no_ra=0
for f in $(awk '$1 == 503 { print $2 }' "$W/flow/all"); do
	grep -qi '^retry-after:' "$W/flow/$f.h" || no_ra=$((no_ra + 1))
done
expect_eq "every 503 carries Retry-After" 0 "$no_ra"
n503=$(awk '$1 == 503' "$W/flow/all" | wc -l)
slowest=$(awk '$4 > m { m = $4 } END { print m + 0 }' "$W/flow/all")
last503=$(awk '$1 == 503 { t = $3 } END { print t + 0 }' "$W/flow/all")
gb_say "node 2 killed: survivors at size 2 after $((evicted_ms - kill_ms)) ms; slowest submit $slowest ms; $n503 of 240 submits answered 503$( ((last503)) && echo ", the last $((last503 - kill_ms)) ms after the kill")"
expect_true "both hosts answer 202 again after the kill (failover)" test \
	"$(tail -n 5 "$W/flow/fa.out" | grep -c '^202 ')$(tail -n 5 "$W/flow/fb.out" | grep -c '^202 ')" = 55
node_restart 2
node_wait_synced 2 90
expect_eq "node 2 rejoined: size 3, Synced" "3 Synced" \
	"$(node_status 2 wsrep_cluster_size) $(node_status 2 wsrep_local_state_comment)"
expect_true "node 2 rejoined by IST (no full state transfer)" grep -aq 'IST received\|Receiving IST' "$W/n2/err.log"
jq -r '.id // empty' "$W"/flow/f*.json 2>/dev/null | sort -u >"$W/flow/ids"
accepted=$(awk '$1 == 202' "$W/flow/all" | wc -l)
expect_eq "each 202 named a job" "$accepted" "$(wc -l <"$W/flow/ids")"
poll 90 no_active
idlist=$(sed "s/.*/'&'/" "$W/flow/ids" | paste -sd, -)
expect_eq "every accepted job succeeded, claimed once" "$accepted" \
	"$(node_sql 2 "SELECT COUNT(*) FROM jobs j WHERE id IN ($idlist) AND state = 'succeeded' AND attempt = 1
		AND (SELECT COUNT(*) FROM job_events e WHERE e.job_id = j.id AND e.to_state = 'running') = 1")"

# ------------------------------------------------------------ 6. a runner host killed
ctx "runner host killed"
# four sessions first (four per host at most): those g2 holds must end lost
: >"$W/rk-sids"
for i in 1 2 3 4; do
	SANDBOX_URL=$URL_BOTH as "$K1_TOK" screate '{"idle_seconds":300}' && echo "$SID" >>"$W/rk-sids"
done
sids=$(sed "s/.*/'&'/" "$W/rk-sids" | paste -sd, -)
poll 60 sql_is 1 4 "SELECT COUNT(*) FROM sessions WHERE id IN ($sids) AND status = 'ready'"
expect_eq "4 sessions ready" 4 "$(node_sql 1 "SELECT COUNT(*) FROM sessions WHERE id IN ($sids) AND status = 'ready'")"
: >"$W/rk-ids"
for i in $(seq 1 6); do
	SANDBOX_URL=$URL_BOTH as "$K1_TOK" req POST /v1/jobs '{"command":"sleep 20","limits":{"wall_seconds":60}}'
	jq -r '.id // empty' "$BODY" >>"$W/rk-ids"
done
on_g2() { [ "$(node_sql 1 "SELECT COUNT(*) FROM jobs WHERE state = 'running' AND runner_id LIKE 'g2/%'")" -gt 0 ]; }
if poll 20 on_g2; then
	node_sql 1 "SELECT id FROM jobs WHERE state = 'running' AND runner_id LIKE 'g2/%'" >"$W/rk-g2"
	node_sql 1 "SELECT id FROM sessions WHERE id IN ($sids) AND runner_host = 'g2'" >"$W/rk-g2s"
	for p in $(gb_procs_of "$W/r2.conf"); do kill -KILL "$p" 2>/dev/null; done
	kill_ms=$(now_ms)
	g2_ended() {
		[ "$(node_sql 1 "SELECT COUNT(*) FROM jobs WHERE runner_id LIKE 'g2/%' AND state = 'running'")" = 0 ]
	}
	poll 60 g2_ended
	gb_say "runner host g2 killed with $(wc -l <"$W/rk-g2") running jobs: none running $(($(now_ms) - kill_ms)) ms later"
	ids=$(sed "s/.*/'&'/" "$W/rk-g2" | paste -sd, -)
	expect_eq "g2's running jobs ended lost (the lease, then g1's recovery)" "lost $(wc -l <"$W/rk-g2")" \
		"$(node_sql 1 "SELECT state, COUNT(*) FROM jobs WHERE id IN ($ids) GROUP BY state" | tr '\t\n' '  ' | sed 's/ $//')"
	if [ -s "$W/rk-g2s" ]; then
		ids=$(sed "s/.*/'&'/" "$W/rk-g2s" | paste -sd, -)
		poll 60 sql_is 1 "lost $(wc -l <"$W/rk-g2s")" "SELECT status, COUNT(*) FROM sessions WHERE id IN ($ids) GROUP BY status"
		expect_eq "g2's sessions ended lost" "lost $(wc -l <"$W/rk-g2s")" \
			"$(node_sql 1 "SELECT status, COUNT(*) FROM sessions WHERE id IN ($ids) GROUP BY status" | tr '\t\n' '  ' | sed 's/ $//')"
	else
		skip "g2's sessions ended lost" "g1 took the four sessions"
	fi
	expect_eq "g1's sessions still ready" "$((4 - $(wc -l <"$W/rk-g2s")))" \
		"$(node_sql 1 "SELECT COUNT(*) FROM sessions WHERE id IN ($sids) AND runner_host = 'g1' AND status = 'ready'")"
	ids=$(sed "s/.*/'&'/" "$W/rk-ids" | paste -sd, -)
	poll 60 sql_is 1 0 "SELECT COUNT(*) FROM jobs WHERE id IN ($ids) AND state IN ('queued','running')"
	expect_eq "none of the 6 stuck running or queued (g1 ran the rest)" 0 \
		"$(node_sql 1 "SELECT COUNT(*) FROM jobs WHERE id IN ($ids) AND state IN ('queued','running')")"
else
	_notok "a job running on g2" "one within 20 s" "none" 0
fi

# ------------------------------------------------------------ 7. migrate while serving
ctx "migrate"
SANDBOX_URL=$URL_BOTH as "$K1_TOK" req POST /v1/jobs '{"command":"echo m"}'
ctl migrate >"$W/migrate2.log" 2>&1
expect_eq "a second migrate applies nothing" "rc=0 applied=0" "rc=$? applied=$(grep -c '^applied' "$W/migrate2.log")"
for i in 1 2 3; do
	expect_eq "node $i: schema_migrations has each of the $N_SCHEMA files once" "$N_SCHEMA $N_SCHEMA" \
		"$(node_sql "$i" "SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations" | tr '\t' ' ')"
done
expect_eq "schema_migrations the same on the three nodes" 1 \
	"$(for i in 1 2 3; do node_sql "$i" "SELECT GROUP_CONCAT(version ORDER BY version) FROM schema_migrations"; done | sort -u | wc -l)"

gb_say "total $((SECONDS - T0)) s"
if finish; then
	at_exit 'rm -rf "$W"'
else
	at_exit 'echo "# the bed stays in $W (logs: n*/err.log, a|b/api.log, r*/runner.log)"'
	exit 1
fi
