#!/usr/bin/env bash
# The benchmark: one command, one run, one machine, one table.
#
#   bash tests/bench/run.sh [--smoke]        (make bench / make bench-smoke)
#
# Brings up a private stack (SANDBOX_VAR=<repo>/var/bench, port 8445 or the next free
# one, nginx's /v1/ rate limit lifted), measures, prints one markdown table on stdout,
# writes it to var/bench/results.md, and always tears the stack down. Progress goes
# to stderr; raw samples stay in var/bench/raw/ for a second look.
#
# What is measured, in this order (every ratio's baseline comes from the same run):
#   launch      build/bench-launch: the runner's launch path (supervise.c's module
#               calls, each phase timed) vs bare bwrap as an unprivileged uid vs bare
#               posix_spawn, /bin/true, interleaved per iteration; runner stopped.
#   rss         VmRSS of the API workers and the runner dispatcher at start.
#   e2e         POST a trivial job, GET ?wait=30 until terminal, one at a time over one
#               kept-alive TLS connection: p50/p95/p99 and where the time goes;
#               interleaved with one bare bwrap launch (bench-launch --serve: the
#               limit) and one job-start sample (build/bench-stamp as the job: its
#               exec time minus the dispatcher's claimed_us).
#   throughput  rounds of N/R trivial jobs from 8 threads as fast as the API takes
#               them (jobs completed per second with the configured slots, from
#               MariaDB's created_at/finished_at), alternating with the bare-bwrap
#               ceiling (runner_slots parallel loops); then rss again.
#   cpu         launch CPU: the dispatcher in a cpuacct cgroup of our own, per job,
#               against bare bwraps and the command's own CPU (measure.py cpu).
#   api         wrk against GET /v1/jobs/{id} and the nginx ceiling /_bench/static,
#               alternating, at each concurrency, for several rounds; then rss again.
#   post        wrk POST /v1/jobs with a key whose max_queued is 1000000, runner
#               stopped; the rows it made are deleted afterwards.
#   longpoll    LP_N (500) concurrent GET ?wait=30 on 50 queued jobs (runner stopped,
#               the API restarted with the production wait defaults): MariaDB
#               Questions per second idle, with 10 and with LP_N waiting (same window
#               length), then the jobs end in one transaction: answered count and
#               p50/p99 from the UPDATE's NOW(3) (finished_at) to each answer.
#   sessions    tests/bench/sessions.py: session create -> ready (each closed after),
#               `true` round trip in a ready session (POST -> exit seen), output
#               latency from a write inside the sandbox to a tailing ?wait client,
#               SESS_IDLE_N idle sessions at once (PSS of their processes and the
#               drop of MemAvailable, per session).
#   scale       filler rows (half terminal, half queued behind the measured job in the
#               fair claim order; one tenant for the small table, the rows added for
#               the large one over 1000 tenants) generated in bulk with MariaDB's
#               Sequence engine; poll latency (GET) and claim latency
#               (build/bench-claim: store_claim) at a small and a large table, and
#               MariaDB's Handler_read_* / page requests per operation.
#   rss-end     VmRSS of every process of the stack once more.
#
# Exit status: 0 when every measurement produced a figure, 1 when one could not be
# taken at all. A missed target is reported as MISS and never fails the run.
#
# Environment: BENCH_PORT (default 8445; the next free port if taken), BENCH_VAR (the
# stack's directory, default <repo>/var/bench: a private one lets a second bench run
# beside it; it is deleted and rebuilt by every run), BENCH_WARM (runner_warm_sandboxes
# for the stack's runner; unset: its runner_slots, every slot prewarmed; 0: cold).

# The steps run through run_step and the teardown through trap: not unreachable.
# shellcheck disable=SC2317
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
HERE=$REPO/tests/bench
BIN=$REPO/build
VAR=${BENCH_VAR:-$REPO/var/bench}
case $VAR in /*) ;; *) VAR=$PWD/$VAR ;; esac
RAW=$VAR/raw
MEASURE=(python3 "$HERE/measure.py")
export PYTHONDONTWRITEBYTECODE=1
# bench-claim's jobs belong to no key that can read them: they never show up in a poll.
CLAIM_KEY=00000000-0000-7000-8000-00000000c1a1

MODE=full
case ${1:-} in
    --smoke) MODE=smoke ;;
    "") ;;
    *) printf 'usage: tests/bench/run.sh [--smoke]\n' >&2; exit 2 ;;
esac

if [[ $MODE == smoke ]]; then
    LAUNCH_N=20 LAUNCH_WARMUP=2
    E2E_N=12 E2E_WARMUP=2
    TPUT_N=100 TPUT_THREADS=8 TPUT_TIMEOUT=60 TPUT_ROUNDS=2 CEIL_SECONDS=1
    CPU_N=10 CPU_ROUNDS=2
    WRK_SECONDS=2 WRK_ROUNDS=1 WRK_WARMUP=0 CONCURRENCIES=(64) POST_C=64
    SCALE_SMALL=1000 SCALE_LARGE=10000 POLL_N=100 CLAIM_N=50 SCALE_ROUNDS=1 SETTLE=1
    LP_N=100 LP_WINDOW=2
    SESS_READY_N=5 SESS_RT_N=20 SESS_OUT_N=10 SESS_IDLE_N=10
else
    LAUNCH_N=300 LAUNCH_WARMUP=10
    E2E_N=300 E2E_WARMUP=10
    TPUT_N=1200 TPUT_THREADS=8 TPUT_TIMEOUT=900 TPUT_ROUNDS=4 CEIL_SECONDS=4
    CPU_N=100 CPU_ROUNDS=4
    WRK_SECONDS=5 WRK_ROUNDS=3 WRK_WARMUP=2 CONCURRENCIES=(16 64 256) POST_C=64
    SCALE_SMALL=10000 SCALE_LARGE=1000000 POLL_N=1000 CLAIM_N=500 SCALE_ROUNDS=2 SETTLE=5
    LP_N=500 LP_WINDOW=5
    SESS_READY_N=50 SESS_RT_N=200 SESS_OUT_N=50 SESS_IDLE_N=100
fi

# Progress goes to fd 3, the run's own stderr, even from inside a step (whose stderr
# is its log) or the EXIT trap. The stack's daemons never inherit it (see stack()).
exec 3>&2
say() { printf 'bench: %s\n' "$*" >&3; }
die() {
    printf 'bench: error: %s\n' "$*" >&3
    exit 1
}

# ------------------------------------------------------------------------- checks

preflight() {
    local b
    (($(id -u) == 0)) || die "must run as root (the runner and bench-launch mount, use cgroups and drop to slot uids)"
    for b in sandbox-api sandboxctl sandbox-runner bench-launch bench-claim bench-stamp; do
        [[ -x $BIN/$b ]] || die "$BIN/$b is missing: build with 'make bench' (or make all build/bench-launch build/bench-claim build/bench-stamp)"
    done
    for b in python3 jq mariadb curl ss; do
        command -v "$b" >/dev/null || die "$b is not installed (bash tests/deps.sh)"
    done
    if ! command -v wrk >/dev/null; then
        say "installing wrk (Debian package)"
        { apt-get install -y wrk || { apt-get update && apt-get install -y wrk; }; } >&2 ||
            die "cannot install wrk: apt-get install wrk"
    fi
}

port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }

pick_port() {
    local p=${BENCH_PORT:-8445} last
    last=$((p + 100))
    while ! port_free "$p"; do
        ((p < last)) || die "no free port in ${BENCH_PORT:-8445}..$last"
        p=$((p + 1))
    done
    [[ $p == "${BENCH_PORT:-8445}" ]] || say "port ${BENCH_PORT:-8445} is taken: using $p"
    printf '%s' "$p"
}

# ------------------------------------------------------------------------- stack

stack() { bash "$REPO/tests/stack.sh" "$1" >>"$VAR/stack.log" 2>&1 3>&-; }

STACK_UP=0
teardown() {
    local rc=$?
    trap - EXIT INT TERM HUP
    set +e
    if ((STACK_UP)); then
        say "tearing the stack down"
        # The database (up to 10^6 filler rows) is large and rebuilt by every run.
        if stack down; then
            rm -rf "$VAR/mysql"
            remove_cgroups
        else
            say "warning: tests/stack.sh down failed (see $VAR/stack.log)"
        fi
    fi
    exit "$rc"
}

# The runner leaves its (empty) per-stack cgroups behind when it stops; rmdir
# removes only empty ones.
remove_cgroups() {
    local name d
    name=$(conf_value runner_cgroup_name)
    [[ $name =~ ^[A-Za-z0-9_-]+$ ]] || return 0
    for d in /sys/fs/cgroup/"$name" /sys/fs/cgroup/*/"$name"; do
        [[ -d $d ]] || continue
        rmdir "$d"/slot-* "$d" 2>/dev/null || true
    done
}

# A previous run's state (its database, workspaces) is gone before this one starts:
# every run measures the same fresh stack.
fresh_state() {
    local m
    if [[ -d $VAR ]]; then
        mkdir -p "$VAR/raw"
        stack down || die "cannot stop the previous bench stack (see $VAR/stack.log)"
        while read -r m; do
            [[ -n $m ]] && umount -l "$m" 2>/dev/null
        done < <(findmnt -rn -o TARGET | grep -F "$VAR/" || true)
        rm -rf "$VAR"
    fi
    mkdir -p "$RAW"
}

SQL() { "${MEASURE[@]}" sql "$1"; }

conf_value() { sed -n "s/^$1 = //p" "$VAR/sandbox.conf" 2>/dev/null | head -n 1; }

# Creates a key; sets KEY_ID and KEY_TOKEN.
make_key() {
    local out
    out=$("$BIN/sandboxctl" --config "$VAR/sandbox.conf" keys create --namespace bench \
        --tenant bench --subject-type user --subject-id "$1" --max-queued 1000000 \
        --max-sessions 1000 --json) ||
        return 1
    KEY_ID=$(jq -er '.id' <<<"$out") && KEY_TOKEN=$(jq -er '.token' <<<"$out") || return 1
    [[ $KEY_ID =~ ^[0-9a-f-]{36}$ ]]
}

write_meta() {
    local c
    c=$(printf '%s,' "${CONCURRENCIES[@]}")
    jq -n --arg mode "$MODE" --arg date "$(date -u '+%Y-%m-%d %H:%M UTC')" \
        --argjson conc "[${c%,}]" --arg slots "$(conf_value runner_slots)" \
        --arg settings "stack: api_workers=$(conf_value api_workers), runner_slots=$(conf_value runner_slots), runner_warm_sandboxes=${BENCH_WARM:-0}, runner_poll_ms=default, nginx /v1/ rate 1000000 r/s; counts: launch $LAUNCH_N x 3 variants (+$LAUNCH_WARMUP warm-up), e2e $E2E_N (+$E2E_WARMUP), throughput $TPUT_N jobs / $TPUT_THREADS threads, wrk ${WRK_SECONDS}s x $WRK_ROUNDS rounds (2 threads), scale $SCALE_SMALL / $SCALE_LARGE rows with $POLL_N polls and $CLAIM_N claims each" \
        '{mode: $mode, date: $date, concurrencies: $conc, runner_slots: $slots,
          settings: $settings}' >"$RAW/meta.json"
}

# ------------------------------------------------------------------------- steps

FAILED=()

# run_step NAME FUNCTION: stderr of the step goes to raw/NAME.log; a failure leaves
# raw/NAME.error (its last line is what the table shows) and the run goes on.
run_step() {
    local name=$1 fn=$2 t0=$SECONDS
    say "$name ..."
    if "$fn" 2>>"$RAW/$name.log"; then
        say "$name done ($((SECONDS - t0)) s)"
    else
        FAILED+=("$name")
        { tail -n 5 "$RAW/$name.log"; printf '%s failed\n' "$name"; } >"$RAW/$name.error"
        say "$name FAILED ($((SECONDS - t0)) s): $(tail -n 1 "$RAW/$name.log" 2>/dev/null)"
    fi
}

step_launch() {
    local rc=0
    stack stop-runner || return 1
    "$BIN/bench-launch" --config "$VAR/sandbox.conf" --iterations "$LAUNCH_N" \
        --warmup "$LAUNCH_WARMUP" >"$RAW/launch.jsonl" || rc=1
    stack start-runner || rc=1
    return "$rc"
}

rss() { "${MEASURE[@]}" rss --label "$1" --out "$RAW/rss-$1.json"; }
step_rss_start() { rss start; }

step_e2e() {
    BENCH_TOKEN=$E2E_TOKEN "${MEASURE[@]}" e2e --n "$E2E_N" --warmup "$E2E_WARMUP" \
        --out "$RAW/e2e.json" || return 1
    rss after-e2e
}

step_throughput() {
    BENCH_TOKEN=$TPUT_TOKEN "${MEASURE[@]}" throughput --n "$TPUT_N" \
        --threads "$TPUT_THREADS" --key-id "$TPUT_ID" --timeout "$TPUT_TIMEOUT" \
        --rounds "$TPUT_ROUNDS" --slots "$(conf_value runner_slots)" \
        --ceiling-seconds "$CEIL_SECONDS" --out "$RAW/throughput.json" || return 1
    rss after-throughput
}

# Launch CPU: the dispatcher in a cpuacct cgroup of our own while CPU_N jobs run,
# against bare bwraps (measure.py cpu).
step_cpu() {
    local pid
    pid=$(cat "$VAR/run/runner.pid") || return 1
    BENCH_TOKEN=$TPUT_TOKEN "${MEASURE[@]}" cpu --n "$CPU_N" --rounds "$CPU_ROUNDS" \
        --key-id "$TPUT_ID" --runner-pid "$pid" --slot-cgroup "$(conf_value runner_cgroup_name)" \
        --out "$RAW/cpu.json"
}

# A terminal job of the e2e key: what the GET runs poll.
poll_target() {
    SQL "SELECT id FROM jobs WHERE key_id = '$E2E_ID' AND state = 'succeeded' ORDER BY seq DESC LIMIT 1"
}

wrk_run() { # LABEL URL C ROUND [--method POST]
    local label=$1 url=$2 c=$3 r=$4
    shift 4
    "${MEASURE[@]}" wrk --url "$url" -c "$c" -d "$WRK_SECONDS" --label "$label" "$@" \
        --out "$RAW/wrk-$label-c$c-r$r.json"
}

step_api() {
    local job url=$SANDBOX_URL r c rc=0
    local -x BENCH_TOKEN=$E2E_TOKEN
    job=$(poll_target) || return 1
    [[ -n $job ]] || { echo "no succeeded job of the e2e key to poll" >&2; return 1; }
    if ((WRK_WARMUP)); then
        WRK_SECONDS=$WRK_WARMUP wrk_run warmup-get "$url/v1/jobs/$job" 64 0 || rc=1
        WRK_SECONDS=$WRK_WARMUP wrk_run warmup-static "$url/_bench/static" 64 0 || rc=1
    fi
    # Alternate which endpoint goes first, so drift hits both alike.
    for ((r = 1; r <= WRK_ROUNDS; r++)); do
        for c in "${CONCURRENCIES[@]}"; do
            if ((r % 2)); then
                wrk_run static "$url/_bench/static" "$c" "$r" || rc=1
                wrk_run get "$url/v1/jobs/$job" "$c" "$r" || rc=1
            else
                wrk_run get "$url/v1/jobs/$job" "$c" "$r" || rc=1
                wrk_run static "$url/_bench/static" "$c" "$r" || rc=1
            fi
        done
    done
    rss after-api || rc=1
    return "$rc"
}

delete_key_jobs() { # KEY_ID: prints the number of jobs deleted
    SQL "DELETE FROM job_events WHERE job_id IN (SELECT id FROM jobs WHERE key_id = '$1')" >/dev/null &&
        SQL "DELETE FROM jobs WHERE key_id = '$1'; SELECT ROW_COUNT()"
}

# Every round starts from an empty queue for the key (the API counts the key's
# queued jobs on each submission, so rounds on a growing queue would not compare).
step_post() {
    local r rc=0 n created=0 deleted=0
    stack stop-runner || return 1
    for ((r = 1; r <= WRK_ROUNDS; r++)); do
        # the ceiling, interleaved: static first in odd rounds, after in even ones
        if ((r % 2)); then wrk_run static-post "$SANDBOX_URL/_bench/static" "$POST_C" "$r" || rc=1; fi
        BENCH_TOKEN=$POST_TOKEN wrk_run post "$SANDBOX_URL/v1/jobs" "$POST_C" "$r" \
            --method POST || rc=1
        if ! ((r % 2)); then wrk_run static-post "$SANDBOX_URL/_bench/static" "$POST_C" "$r" || rc=1; fi
        sleep 1 # requests wrk abandoned at its deadline may still be committing
        n=$(SQL "SELECT COUNT(*) FROM jobs WHERE key_id = '$POST_ID'") || rc=1
        [[ $n =~ ^[0-9]+$ ]] && created=$((created + n))
        n=$(delete_key_jobs "$POST_ID") || rc=1
        [[ $n =~ ^[0-9]+$ ]] && deleted=$((deleted + n))
    done
    jq -n --argjson c "$created" --argjson d "$deleted" '{created: $c, deleted: $d}' \
        >"$RAW/post-rows.json"
    stack start-runner || rc=1
    rss after-post || rc=1
    return "$rc"
}

# ---- longpoll
questions() { SQL "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{ print $NF }'; }
qps_window() { # seconds -> Questions per second over them
    local q0 q1
    q0=$(questions) || return 1
    sleep "$1"
    q1=$(questions) || return 1
    awk -v a="$q0" -v b="$q1" -v s="$1" 'BEGIN { printf "%.1f", (b - a) / s }'
}
lp_clients() { # NAME N: long-polls in the background until all are sent; LP_PID
    python3 "$HERE/longpoll.py" --url "$SANDBOX_URL" --token-file "$RAW/lp.tok" \
        --cacert "$SANDBOX_CACERT" --ids "$RAW/lp-jobs" --n "$2" --wait 30 \
        --out "$RAW/lp-$1.out" >"$RAW/lp-$1.ready" &
    LP_PID=$!
    for _ in $(seq 1 600); do
        grep -q ready "$RAW/lp-$1.ready" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
LP_API=
lp_restore() {
    [[ -n $LP_API ]] && kill -TERM "$LP_API" 2>/dev/null && wait "$LP_API" 2>/dev/null
    LP_API=
    stack start-api && stack start-runner
}
step_longpoll() {
    local i q_idle q10 qn t_change ten rc=0
    stack stop-runner || return 1
    printf '%s' "$LP_TOKEN" >"$RAW/lp.tok"
    : >"$RAW/lp-jobs"
    for ((i = 0; i < 50; i++)); do
        curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $LP_TOKEN" \
            -H 'Content-Type: application/json' -d '{"command":"true"}' \
            "$SANDBOX_URL/v1/jobs" | jq -er .id >>"$RAW/lp-jobs" || return 1
    done
    # The production wait settings: the stack's config narrows a key's share for the
    # tenancy suite.
    grep -v '^api_wait_slots_per_key ' "$VAR/sandbox.conf" >"$RAW/lp.conf"
    stack stop-api || return 1
    "$BIN/sandbox-api" --config "$RAW/lp.conf" >"$RAW/lp-api.log" 2>&1 &
    LP_API=$!
    for _ in $(seq 1 100); do [[ -S $(conf_value fcgi_socket) ]] && break; sleep 0.1; done
    sleep 1
    q_idle=$(qps_window "$LP_WINDOW") || rc=1
    lp_clients ten 10 || rc=1
    ten=$LP_PID
    sleep 1
    q10=$(qps_window "$LP_WINDOW") || rc=1
    lp_clients many "$LP_N" || rc=1
    sleep 1
    qn=$(qps_window "$LP_WINDOW") || rc=1
    SQL "START TRANSACTION;
         INSERT INTO job_results (job_id, exit_code, stdout_bytes, stderr_bytes,
           stdout_truncated, stderr_truncated, diagnostics_json, wall_ms, cpu_ms,
           memory_peak_bytes)
         SELECT id, 0, 0, 0, 0, 0, '[]', 5, 1, 1048576 FROM jobs
           WHERE key_id = '$LP_ID' AND state = 'queued';
         UPDATE jobs SET state = 'succeeded', started_at = NOW(3), finished_at = NOW(3)
           WHERE key_id = '$LP_ID' AND state = 'queued';
         COMMIT" || rc=1
    # The state change's own time (finished_at, NOW(3) of the UPDATE: same host clock).
    t_change=$(SQL "SELECT ROUND(UNIX_TIMESTAMP(MAX(finished_at)) * 1000) FROM jobs
                    WHERE key_id = '$LP_ID'") || rc=1
    wait "$LP_PID" "$ten" || rc=1
    jq -n --argjson idle "${q_idle:-null}" --argjson q10 "${q10:-null}" \
        --argjson qn "${qn:-null}" --argjson n "$LP_N" --argjson t "$t_change" \
        --argjson w "$LP_WINDOW" \
        '{qps_idle: $idle, qps_10: $q10, qps_n: $qn, n: $n, t_change_ms: $t, window_s: $w}' \
        >"$RAW/longpoll.json" || rc=1
    lp_restore || rc=1
    rss after-longpoll || rc=1
    return "$rc"
}

# Filler rows up to TARGET rows in jobs over TENANTS tenants (each its own key; 1:
# tenant "filler"), UUIDv7-shaped ids in time order (like real ones), 100000 per
# statement.
fill_to() {
    local target=$1 tenants=${2:-1} have start n
    have=$(SQL "SELECT COUNT(*) FROM jobs") || return 1
    start=$(SQL "SELECT COUNT(*) FROM jobs WHERE tenant_id LIKE 'filler%'") || return 1
    while ((have < target)); do
        n=$((target - have))
        ((n > 100000)) && n=100000
        # Every other filler row is queued, with a fair_tag after any real job's: the
        # claim walks the same index with half the table queued ahead of nothing.
        SQL "INSERT INTO jobs (id, key_id, identity_namespace, tenant_id, subject_type,
               subject_id, state, argv_json, env_json, stdin, metadata_json, wall_seconds,
               cpu_seconds, memory_mb, pids, output_bytes, disk_mb, created_at, started_at,
               finished_at, runner_id, attempt, profile_digest, fair_tag)
             SELECT LOWER(CONCAT(SUBSTR(h, 1, 8), '-', SUBSTR(h, 9, 4), '-7',
                      LPAD(HEX(FLOOR(RAND() * 4096)), 3, '0'), '-',
                      HEX(8 + FLOOR(RAND() * 4)), LPAD(HEX(FLOOR(RAND() * 4096)), 3, '0'), '-',
                      LPAD(HEX(FLOOR(RAND() * 281474976710656)), 12, '0'))),
                    IF($tenants = 1, '00000000-0000-7000-8000-00000000f111',
                       CONCAT('00000000-0000-7000-8001-', LPAD(seq % $tenants, 12, '0'))),
                    'bench-filler',
                    IF($tenants = 1, 'filler', CONCAT('filler-', seq % $tenants)), 'user',
                    'filler', IF(seq % 2 = 0, 'succeeded', 'queued'), '[\"/bin/true\"]', '{}',
                    '', '{}', 10, 10, 256, 64, 1048576, 64, t,
                    IF(seq % 2 = 0, t + INTERVAL 40000 MICROSECOND, NULL),
                    IF(seq % 2 = 0, t + INTERVAL 70000 MICROSECOND, NULL),
                    IF(seq % 2 = 0, 'filler/slot-0/0', NULL), seq % 2,
                    IF(seq % 2 = 0, 'sha256:filler', NULL),
                    IF(seq % 2 = 0, 0, 1000000000000 + seq)
             FROM (SELECT seq, LPAD(HEX(1600000000000 + seq), 12, '0') AS h,
                          FROM_UNIXTIME(1600000000 + seq / 1000) AS t
                   FROM seq_$((start + 1))_to_$((start + n))) s" >/dev/null || return 1
        start=$((start + n))
        have=$((have + n))
    done
    SQL "ANALYZE TABLE jobs" >/dev/null || return 1
    sleep "$SETTLE" # let InnoDB's background flushing after the bulk insert calm down
}

# MariaDB's own work counters (load-independent, unlike latencies taken minutes apart
# on a shared machine): rows read through the SQL layer and buffer pool page requests.
handlers() {
    SQL "SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_read_key', 'Handler_read_next',
         'Handler_read_first', 'Handler_read_rnd_next', 'Innodb_buffer_pool_read_requests')"
}
# handler_delta WHAT LABEL ROUND N: the deltas of h0 -> h1 per operation (N of them; the
# bench-claim figure includes its untimed queue/finish statements).
handler_delta() {
    join <(sort "$RAW/h0") <(sort "$RAW/h1") | awk -v n="$4" '
        { printf "%s\"%s\": %.2f", (NR > 1 ? ", " : "{"), $1, ($3 - $2) / n }
        END { print "}" }' >"$RAW/handlers-$1-$2-r$3.json"
}

scale_at() { # LABEL TARGET [TENANTS of the rows added]
    local label=$1 target=$2 rows tenants r rc=0 pn cn ids=$RAW/poll-ids.txt
    stack stop-runner || return 1
    # A queued job left by an earlier step would be claimed before bench-claim's own.
    SQL "UPDATE jobs SET state = 'cancelled', finished_at = CURRENT_TIMESTAMP(3)
         WHERE state = 'queued' AND tenant_id NOT LIKE 'filler%'" >/dev/null || return 1
    fill_to "$target" "${3:-1}" || return 1
    rows=$(SQL "SELECT COUNT(*) FROM jobs") || return 1
    tenants=$(SQL "SELECT COUNT(DISTINCT tenant_id) FROM jobs") || return 1
    jq -n --argjson n "$rows" --argjson t "$tenants" '{rows: $n, tenants: $t}' \
        >"$RAW/rows-$label.json"
    # The e2e key's own finished jobs (a client polls its own jobs).
    SQL "SELECT id FROM jobs WHERE key_id = '$E2E_ID' AND subject_id = 'e2e'
         AND state = 'succeeded' ORDER BY seq DESC LIMIT 200" >"$ids" || return 1
    pn=$((POLL_N / SCALE_ROUNDS)) cn=$((CLAIM_N / SCALE_ROUNDS))
    for ((r = 1; r <= SCALE_ROUNDS; r++)); do
        handlers >"$RAW/h0" || rc=1
        BENCH_TOKEN=$E2E_TOKEN "${MEASURE[@]}" poll --n "$pn" --ids "$ids" --label "$label" \
            --out "$RAW/poll-$label-r$r.json" || rc=1
        handlers >"$RAW/h1" || rc=1
        handler_delta poll "$label" "$r" $((pn + 20)) || rc=1 # poll's 20 warm-up GETs
        handlers >"$RAW/h0" || rc=1
        "$BIN/bench-claim" --config "$VAR/sandbox.conf" --key-id "$CLAIM_KEY" --iterations "$cn" \
            --warmup 5 >"$RAW/claim-$label-r$r.jsonl" || rc=1
        handlers >"$RAW/h1" || rc=1
        handler_delta claim "$label" "$r" $((cn + 5)) || rc=1
    done
    return "$rc"
}

# ---- sessions (issue 9): create -> ready, command round trip, output latency, idle
# sessions' memory (tests/bench/sessions.py)
step_sessions() {
    local rc=0 m
    for m in "ready $SESS_READY_N" "roundtrip $SESS_RT_N" "outlat $SESS_OUT_N" "idle $SESS_IDLE_N"; do
        set -- $m
        BENCH_TOKEN=$SESS_TOKEN python3 "$HERE/sessions.py" "$1" --n "$2" \
            --out "$RAW/sessions-$1.json" || rc=1
    done
    rss after-sessions || rc=1
    return "$rc"
}

step_scale_small() { scale_at small "$SCALE_SMALL"; }
step_rss_end() { rss end; }

# From 10^4 rows of one tenant to 10^6 rows, the rows added spread over 1000 tenants,
# each its own key (the fair claim must not walk tenants one by one).
step_scale_large() { scale_at large "$SCALE_LARGE" 1000; }

# -------------------------------------------------------------------------- main

main() {
    local port rc=0
    preflight
    trap teardown EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    export SANDBOX_VAR=$VAR SANDBOX_API_RATE=1000000 SANDBOX_MAX_SESSIONS=$((SESS_IDLE_N + 8))
    fresh_state # stops a previous bench stack, which frees its port
    port=$(pick_port)
    export SANDBOX_PORT=$port
    say "$MODE run: stack in $VAR on port $port"
    STACK_UP=1
    stack up || { tail -n 20 "$VAR/stack.log" >&2; die "tests/stack.sh up failed (see $VAR/stack.log)"; }
    # prewarmed sandboxes in every slot unless BENCH_WARM says otherwise (0: every job
    # launches cold): the bench measures the fastest configuration an operator can
    # choose; the job-start target (0.7x a bare bwrap) needs it
    BENCH_WARM=${BENCH_WARM-$(conf_value runner_slots)}
    if [[ -n ${BENCH_WARM:-} ]]; then
        # the runner rereads its config when it starts again (stack.sh writes it only
        # at up)
        [[ $BENCH_WARM =~ ^[0-9]+$ ]] || die "BENCH_WARM must be a slot count (runner_warm_sandboxes)"
        printf 'runner_warm_sandboxes = %s\n' "$BENCH_WARM" >>"$VAR/sandbox.conf"
        { stack stop-runner && stack start-runner; } || die "the runner did not restart with runner_warm_sandboxes = $BENCH_WARM"
        say "runner_warm_sandboxes = $BENCH_WARM"
    fi
    set -a
    # shellcheck disable=SC1091
    . "$VAR/env"
    set +a
    make_key e2e || die "sandboxctl keys create failed"
    E2E_ID=$KEY_ID E2E_TOKEN=$KEY_TOKEN
    make_key tput || die "sandboxctl keys create failed"
    TPUT_ID=$KEY_ID TPUT_TOKEN=$KEY_TOKEN
    make_key post || die "sandboxctl keys create failed"
    POST_ID=$KEY_ID POST_TOKEN=$KEY_TOKEN
    make_key lp || die "sandboxctl keys create failed"
    LP_ID=$KEY_ID LP_TOKEN=$KEY_TOKEN
    make_key sessions || die "sandboxctl keys create failed"
    SESS_TOKEN=$KEY_TOKEN
    write_meta

    run_step launch step_launch
    run_step rss step_rss_start
    run_step e2e step_e2e
    run_step throughput step_throughput
    run_step cpu step_cpu
    run_step api step_api
    run_step post step_post
    run_step longpoll step_longpoll
    run_step sessions step_sessions
    run_step scale-small step_scale_small
    run_step scale-large step_scale_large
    run_step rss-end step_rss_end

    python3 "$HERE/report.py" "$RAW" >"$VAR/results.md" || rc=1
    cat "$VAR/results.md"
    say "table written to $VAR/results.md"
    ((${#FAILED[@]} == 0)) || { say "steps that failed: ${FAILED[*]}"; rc=1; }
    return "$rc"
}

# One line: bash reads no further from this file once main returns, so editing the
# script while a run is in progress cannot start anything else.
{ main "$@"; exit; }
