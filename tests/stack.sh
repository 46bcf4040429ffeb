#!/usr/bin/env bash
# The local stack: a private MariaDB, the sandbox-api FastCGI pool and nginx (TLS on
# 127.0.0.1), everything under one directory, for people (`make run`) and for scripts
# (`make up` / `make test` / `make down`).
#
#   tests/stack.sh up|down|run|status|stop-db|start-db|stop-api|start-api|stop-runner|start-runner
#
# Environment:
#   SANDBOX_VAR   state directory             (default: <repo>/var)
#   SANDBOX_PORT  HTTPS port on 127.0.0.1     (default: 8443)
#   SANDBOX_BIN   sandbox-api and sandboxctl  (default: <repo>/build)
#   SANDBOX_NGINX_USER  as root: the user nginx's workers run as (default: www-data)
#   SANDBOX_E2B_DOMAIN  the E2B sandbox domain (default: e2b.localhost): envd answers on
#                 https://49983-<sandbox id>.<domain>:PORT/ too (docs/E2B.md "Routing");
#                 the certificate covers it and its subdomains. curl resolves any
#                 *.localhost name to loopback by itself; other clients need a resolver
#                 that does (or E2B_SANDBOX_URL, which `env` sets)
#
# The FastCGI socket run/api.sock is mode 0660, never world-accessible. As root,
# nginx's workers run as $SANDBOX_NGINX_USER (the `user` directive) and the API gives
# the socket that user's group (fcgi_socket_group); as anyone else, nginx and the API
# run as the invoking user, who owns the socket.
#
# Layout under $VAR:
#   mysql/data, mysql/mysqld.sock, mysql/mysqld.pid   MariaDB (socket only, no TCP)
#   run/api.sock, run/api.pid, run/nginx.pid          API and nginx
#   nginx/nginx.conf (from nginx/sandbox-dev.conf.in), nginx/cert.pem, nginx/key.pem
#   log/{mariadb,api,nginx-error,nginx-access}.log
#   sandbox.conf   the API/sandboxctl config, rewritten by every `up`
#   db_password    the DB user's password (0600, generated once, never printed)
#   demo_token     the demo API key's token (0600), demo_key_id its id
#   env            SANDBOX_URL, SANDBOX_CACERT, SANDBOX_TOKEN, SANDBOX_CONFIG, ... (0600),
#                  and E2B_API_URL, E2B_SANDBOX_URL, E2B_DOMAIN, E2B_API_KEY (the demo
#                  key) for the E2B SDKs: `set -a; . var/env; set +a;
#                  NODE_EXTRA_CA_CERTS=$SANDBOX_CACERT node app.js` (Python:
#                  SSL_CERT_FILE=$SANDBOX_CACERT)
#
# A component counts as running when its pid file names a live process of the right
# name. Processes are also found by what ties them to this $VAR (working directory or
# command line), so `down` gets nginx and API workers whose master was killed, and
# never touches another directory's stack.
#
# `status` exits 0 when all three components run, 3 otherwise.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
PORT=${SANDBOX_PORT:-8443}
E2B_HOST=${SANDBOX_E2B_DOMAIN:-e2b.localhost}
VAR=$(realpath -m -- "${SANDBOX_VAR:-$REPO/var}")
BIN=$(realpath -m -- "${SANDBOX_BIN:-$REPO/build}")

DB_DIR=$VAR/mysql
DATADIR=$DB_DIR/data
DB_SOCK=$DB_DIR/mysqld.sock
DB_PID=$DB_DIR/mysqld.pid
DB_INSTALLED=$DB_DIR/.installed
RUN_DIR=$VAR/run
API_SOCK=$RUN_DIR/api.sock
API_PID=$RUN_DIR/api.pid
RUNNER_PID=$RUN_DIR/runner.pid
RUNNER_LOG=$VAR/log/runner.log
NGX_DIR=$VAR/nginx
NGX_CONF=$NGX_DIR/nginx.conf
NGX_PID=$RUN_DIR/nginx.pid
CERT=$NGX_DIR/cert.pem
KEY=$NGX_DIR/key.pem
LOG_DIR=$VAR/log
DB_LOG=$LOG_DIR/mariadb.log
API_LOG=$LOG_DIR/api.log
NGX_ERR=$LOG_DIR/nginx-error.log
CONF=$VAR/sandbox.conf
PW_FILE=$VAR/db_password
TOKEN_FILE=$VAR/demo_token
KEYID_FILE=$VAR/demo_key_id
ENV_FILE=$VAR/env
LOCK_FILE=$VAR/.stack.lock
TEMPLATE=$REPO/nginx/sandbox-dev.conf.in

DB_NAME=sandbox
DB_USER=sandbox
NGX_USER=${SANDBOX_NGINX_USER:-www-data}

# Seconds: how long to wait for a component to come up, and to stop after TERM.
DB_START_WAIT=60
API_START_WAIT=20
NGX_START_WAIT=15
DB_STOP_WAIT=60
API_STOP_WAIT=40 # a worker finishes its request first, and a long-poll lasts <= 30 s
NGX_STOP_WAIT=10

STARTED=()        # components this invocation started (rolled back if `up` fails)
CONF_CHANGED=0    # sandbox.conf differs from the one the running API read
NGX_RELOAD=0      # the certificate was regenerated

# ---------------------------------------------------------------------------- helpers

say() { printf 'stack: %s\n' "$*" 2>/dev/null || true; }
warn() { printf 'stack: warning: %s\n' "$*" >&2; }
die() {
    printf 'stack: error: %s\n' "$*" >&2
    exit 1
}

is_root() { [[ $(id -u) == 0 ]]; }

# As root: the group of the socket, nginx's workers' primary group. Otherwise nothing
# (the API's own group, and nginx runs as the same user).
socket_group() {
    is_root || return 0
    id -u "$NGX_USER" >/dev/null 2>&1 ||
        die "as root, nginx's workers run as '$NGX_USER', which does not exist: create it (useradd --system --no-create-home --shell /usr/sbin/nologin $NGX_USER) or set SANDBOX_NGINX_USER"
    id -gn "$NGX_USER" 2>/dev/null || die "cannot find the primary group of '$NGX_USER'"
}

# The nginx `user` directive: as root, the workers run as $NGX_USER and its group.
nginx_user_line() {
    if is_root; then
        printf 'user %s %s;' "$NGX_USER" "$(socket_group)"
    else
        printf '# (not root: the workers run as the invoking user, who owns the API socket)'
    fi
}

# Single-quote a word for a shell unless it is plainly safe.
shq() {
    if [[ $1 =~ ^[A-Za-z0-9_./:@%+=,-]+$ ]]; then
        printf '%s' "$1"
    else
        printf "'%s'" "${1//\'/\'\\\'\'}"
    fi
}

# The last lines of a log, indented, on stderr (for "X failed to start" errors).
log_tail() {
    if [[ -s $1 ]]; then
        printf 'stack: last lines of %s:\n' "$1" >&2
        tail -n "${2:-20}" "$1" | sed 's/^/    /' >&2
    fi
}

# The DB account the stack administers MariaDB with: socket authentication, so the
# account is the OS user's own (root in CI).
db_admin() {
    if is_root; then
        printf 'root'
    else
        id -un 2>/dev/null || die "the current uid $(id -u) has no user name: MariaDB socket auth needs one"
    fi
}

check_socket_path() {
    # sun_path holds 108 bytes including the NUL.
    ((${#1} < 108)) || die "socket path too long for a unix socket (${#1} bytes): $1; set SANDBOX_VAR to a shorter directory"
}

check_port() {
    if ! [[ $PORT =~ ^[0-9]+$ ]] || ((PORT < 1 || PORT > 65535)); then
        die "SANDBOX_PORT is not a port number: $PORT"
    fi
    if ! [[ $E2B_HOST =~ ^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$ ]]; then
        die "SANDBOX_E2B_DOMAIN is not a domain name (lower-case letters, digits, '.', '-'): $E2B_HOST"
    fi
}

make_dirs() {
    mkdir -p "$VAR" "$DB_DIR" "$RUN_DIR" "$LOG_DIR" "$NGX_DIR/tmp" ||
        die "cannot create the state directory $VAR (set SANDBOX_VAR to a writable directory)"
    # nginx's workers (another user when started as root) must reach run/api.sock:
    # the directories are searchable, the socket itself is 0660 (see the top).
    chmod 0755 "$VAR" "$RUN_DIR" || die "cannot chmod $VAR"
}

# Serialise commands that change the stack (two `up`s at once would start two of
# everything). fd 9 must not leak into the daemons, or they would hold the lock.
take_lock() {
    [[ -d $VAR ]] || return 0
    exec 9>"$LOCK_FILE" || die "cannot open $LOCK_FILE"
    flock -w 300 9 || die "another tests/stack.sh holds $LOCK_FILE"
}

drop_lock() { { exec 9>&-; } 2>/dev/null || true; }

# --------------------------------------------------------------------------- processes

proc_comm() { { read -r REPLY <"/proc/$1/comm"; } 2>/dev/null && printf '%s' "$REPLY"; }

# Alive: exists and is not a zombie.
proc_alive() {
    local stat
    [[ $1 =~ ^[0-9]+$ ]] || return 1
    { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
    stat=${stat##*) }
    [[ ${stat%% *} != Z ]]
}

proc_ppid() {
    local stat
    local -a f
    { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
    read -r -a f <<<"${stat##*) }" # state ppid ...
    printf '%s' "${f[1]}"
}

pid_from_file() {
    local pid
    [[ -r $1 ]] || return 1
    { read -r pid <"$1"; } 2>/dev/null || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    printf '%s' "$pid"
}

# Component table: process name, pid file, working directory and command-line marker
# that tie a process to this $VAR. The trailing space in the marker ends the path (the
# command line's NULs read as spaces).
comp_name() {
    case $1 in
        db) printf 'mariadbd' ;;
        api) printf 'sandbox-api' ;;
        runner) printf 'sandbox-runner' ;;
        nginx) printf 'nginx' ;;
    esac
}
comp_pidfile() {
    case $1 in
        db) printf '%s' "$DB_PID" ;;
        api) printf '%s' "$API_PID" ;;
        runner) printf '%s' "$RUNNER_PID" ;;
        nginx) printf '%s' "$NGX_PID" ;;
    esac
}
comp_cwd() {
    case $1 in
        db) printf '%s' "$DATADIR" ;; # mariadbd chdirs to its datadir
        api) printf '%s' "$RUN_DIR" ;; # where we start it
        runner) printf '%s' "$RUN_DIR/runner-cwd" ;; # supervisors inherit it
        nginx) printf '%s' "$NGX_DIR" ;; # where we start it; nginx never chdirs
    esac
}
comp_marker() {
    case $1 in
        db) printf -- '--datadir=%s ' "$DATADIR" ;;
        api) printf -- '--config %s ' "$CONF" ;;
        runner) printf -- '--config %s ' "$CONF" ;;
        nginx) printf -- '-c %s ' "$NGX_CONF" ;;
    esac
}
comp_label() {
    case $1 in
        db) printf 'mariadb' ;;
        api) printf 'api' ;;
        runner) printf 'runner' ;;
        nginx) printf 'nginx' ;;
    esac
}

# Every live process of the component that belongs to this $VAR.
comp_pids() {
    local name cwd marker d pid comm dir cmd
    name=$(comp_name "$1")
    cwd=$(comp_cwd "$1")
    marker=$(comp_marker "$1")
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        { read -r comm <"$d/comm"; } 2>/dev/null || continue
        [[ $comm == "$name" ]] || continue
        proc_alive "$pid" || continue
        cmd=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null) || cmd=
        # A job's or a session's supervisor is not part of the runner: restarting the
        # runner must leave running jobs and live sessions alone (DESIGN.md section 7),
        # whatever directory they inherited. `down` ends them separately.
        [[ $1 == runner && ( $cmd == *" --supervise "* || $cmd == *" --supervise-session "* ) ]] && continue
        dir=$(readlink "$d/cwd" 2>/dev/null) || dir=
        if [[ $dir == "$cwd" ]]; then
            printf '%s\n' "$pid"
            continue
        fi
        [[ $cmd == *"$marker"* ]] && printf '%s\n' "$pid"
    done
    return 0
}

# Supervisors of this stack's runner (running jobs, live sessions), for `down`.
supervisor_pids() {
    local d pid comm cmd
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        { read -r comm <"$d/comm"; } 2>/dev/null || continue
        [[ $comm == sandbox-runner ]] || continue
        cmd=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null) || continue
        [[ $cmd == *"--config $CONF "*" --supervise "* || $cmd == *"--config $CONF "*" --supervise-session "* ]] && printf '%s\n' "$pid"
    done
    return 0
}

stop_supervisors() {
    local -a pids
    mapfile -t pids < <(supervisor_pids)
    ((${#pids[@]})) || return 0
    say "runner: ending ${#pids[@]} running job(s) (their supervisors ignore TERM)"
    kill -KILL "${pids[@]}" 2>/dev/null || true
}

# The component's main pid: the pid file's, if that names a live process of the right
# name. Anything else of ours (comp_pids) is a leftover of a crash: it is stopped
# before the component starts again, and by `down`.
comp_master() {
    local pid
    pid=$(pid_from_file "$(comp_pidfile "$1")") || return 1
    proc_alive "$pid" && [[ $(proc_comm "$pid") == "$(comp_name "$1")" ]] || return 1
    printf '%s' "$pid"
}

comp_running() { comp_master "$1" >/dev/null; }

# Before starting a component that is not running: stop its leftovers (nginx workers
# whose master was killed still hold the port) and remove stale pid file and socket.
comp_reset() {
    local -a left
    mapfile -t left < <(comp_pids "$1")
    if ((${#left[@]})); then
        comp_stop "$1" 10
    else
        comp_clean "$1"
    fi
}

# Remove what a crashed component leaves behind. Only called when it is not running.
comp_clean() {
    case $1 in
        db) rm -f "$DB_PID" "$DB_SOCK" "$DB_SOCK.lock" ;;
        api) rm -f "$API_PID" "$API_SOCK" ;;
        runner) rm -f "$RUNNER_PID" ;;
        nginx) rm -f "$NGX_PID" ;;
    esac
}

# Start a daemon in its own session (so the terminal's Ctrl-C never reaches it),
# reparented to init at once (so it is never our zombie), without our lock fd.
# Prints its pid. Usage: spawn DIR LOG CMD...
spawn() {
    local dir=$1 log=$2
    shift 2
    (
        cd "$dir" || exit 1
        setsid "$@" </dev/null >>"$log" 2>&1 9>&- &
        printf '%s' "$!"
    )
}

# TERM the master, wait, then KILL whatever of the component is left.
comp_stop() {
    local comp=$1 wait_s=$2 label master p deadline
    local -a pids left
    label=$(comp_label "$comp")
    master=$(comp_master "$comp") || master=
    mapfile -t pids < <(comp_pids "$comp")
    [[ -n $master && " ${pids[*]} " != *" $master "* ]] && pids+=("$master")
    if ((${#pids[@]} == 0)); then
        comp_clean "$comp"
        say "$label: not running"
        return 0
    fi
    if [[ -n $master ]]; then
        # Children of the master that the scan missed (e.g. a renamed worker).
        while read -r p; do
            [[ -n $p && " ${pids[*]} " != *" $p "* ]] && pids+=("$p")
        done < <(pgrep -P "$master" 2>/dev/null || true)
        say "$label: stopping (pid $master)"
        kill -TERM "$master" 2>/dev/null || true
    else
        say "$label: stopping orphaned processes ${pids[*]}"
        kill -TERM "${pids[@]}" 2>/dev/null || true
    fi
    deadline=$((SECONDS + wait_s))
    while :; do
        left=()
        for p in "${pids[@]}"; do proc_alive "$p" && left+=("$p"); done
        ((${#left[@]} == 0)) && break
        if ((SECONDS >= deadline)); then
            warn "$label: still running after ${wait_s}s, killing ${left[*]}"
            kill -KILL "${left[@]}" 2>/dev/null || true
            sleep 0.5
            break
        fi
        sleep 0.2
    done
    mapfile -t left < <(comp_pids "$comp")
    if ((${#left[@]} != 0)); then
        kill -KILL "${left[@]}" 2>/dev/null || true
        sleep 0.5
        mapfile -t left < <(comp_pids "$comp")
        ((${#left[@]} == 0)) || die "$label: could not stop ${left[*]}"
    fi
    comp_clean "$comp"
    say "$label: stopped"
}

# --------------------------------------------------------------------------- MariaDB

db_install() {
    [[ -f $DB_INSTALLED && -d $DATADIR/mysql ]] && return 0
    # A datadir without the marker is a half-finished install: start over.
    rm -rf "$DATADIR"
    mkdir -m 0700 "$DATADIR"
    local -a cmd=(mariadb-install-db --no-defaults "--datadir=$DATADIR"
        --auth-root-authentication-method=socket --skip-test-db)
    if is_root; then
        cmd+=(--user=root)
    else
        cmd+=("--auth-root-socket-user=$(db_admin)")
    fi
    say "mariadb: initialising $DATADIR"
    if ! "${cmd[@]}" >>"$DB_LOG" 2>&1; then
        log_tail "$DB_LOG"
        die "mariadb-install-db failed (full log: $DB_LOG)"
    fi
    touch "$DB_INSTALLED"
}

db_ping() {
    mariadb-admin --no-defaults -S "$DB_SOCK" -u "$(db_admin)" --connect-timeout=2 ping >/dev/null 2>&1
}

db_start() {
    local pid deadline
    if pid=$(comp_master db); then
        say "mariadb: already running (pid $pid)"
        return 0
    fi
    check_socket_path "$DB_SOCK"
    comp_reset db
    db_install
    local -a cmd=(mariadbd --no-defaults "--datadir=$DATADIR" "--socket=$DB_SOCK"
        "--pid-file=$DB_PID" --skip-networking
        --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci --max-connections=500
        "--log-error=$DB_LOG")
    is_root && cmd+=(--user=root)
    pid=$(spawn "$VAR" "$DB_LOG" "${cmd[@]}")
    STARTED+=(db)
    deadline=$((SECONDS + DB_START_WAIT))
    until db_ping; do
        if ! proc_alive "$pid"; then
            log_tail "$DB_LOG"
            die "mariadbd exited during start-up (log: $DB_LOG)"
        fi
        if ((SECONDS >= deadline)); then
            log_tail "$DB_LOG"
            die "mariadbd did not answer on $DB_SOCK within ${DB_START_WAIT}s (log: $DB_LOG)"
        fi
        sleep 0.2
    done
    say "mariadb: started (pid $pid, socket $DB_SOCK)"
}

db_password_init() {
    [[ -s $PW_FILE ]] && { chmod 0600 "$PW_FILE"; return 0; }
    local tmp
    tmp=$(umask 077 && mktemp "$PW_FILE.XXXXXX") || die "cannot create $PW_FILE"
    if ! openssl rand -hex 24 >"$tmp"; then
        rm -f "$tmp"
        die "openssl rand failed: cannot generate the DB password"
    fi
    chmod 0600 "$tmp"
    mv -f "$tmp" "$PW_FILE"
}

# Database, user and grant, idempotently, as the socket-authenticated admin. The
# password only travels on stdin: never on a command line that `ps` shows.
db_setup() {
    local pw err
    db_password_init
    { read -r pw <"$PW_FILE"; } || die "cannot read $PW_FILE"
    [[ $pw =~ ^[0-9a-f]+$ ]] || die "$PW_FILE does not hold a hex password; delete it and run up again"
    if ! err=$(mariadb --no-defaults -S "$DB_SOCK" -u "$(db_admin)" --batch 2>&1 <<SQL
CREATE DATABASE IF NOT EXISTS \`$DB_NAME\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$pw';
ALTER USER '$DB_USER'@'localhost' IDENTIFIED BY '$pw';
GRANT ALL ON \`$DB_NAME\`.* TO '$DB_USER'@'localhost';
SQL
    ); then
        printf '%s\n' "$err" >&2
        die "creating the database and user '$DB_USER' failed (as $(db_admin) over $DB_SOCK)"
    fi
}

# ---------------------------------------------------------------------- config, keys

write_config() {
    local tmp group
    group=$(socket_group) || exit 1
    tmp=$(mktemp "$CONF.XXXXXX") || die "cannot write $CONF"
    cat >"$tmp" <<EOF
# Written by tests/stack.sh on every up: edits here are lost.
db_socket = $DB_SOCK
db_name = $DB_NAME
db_user = $DB_USER
db_password_file = $PW_FILE
fcgi_socket = $API_SOCK
# Per stack, beside the API's socket: the API wakes this stack's runner only.
runner_wake_socket = $(dirname "$API_SOCK")/runner-wake.sock
api_workers = 8
# The socket is 0660: nginx's workers need its group (see the top of tests/stack.sh).
fcgi_socket_group = $group
# Low, so that the faults suite sees idle FastCGI connections dropped soon (the
# production default is 10); 10 under emulation (SANDBOX_TIME_SCALE > 1, make test-vm
# FULL=1), where a curl's own start and TLS handshake took the guest more than 2 s.
api_read_timeout_seconds = $((${SANDBOX_TIME_SCALE:-1} > 1 ? 10 : 2))
# The API's wait for a session supervisor's answer (default 10 s): 30 s (the waiter's
# most) under emulation, where the guest's curls took 5 s each and sessions_api's
# kills that must still wait had timed out before the requests it sends past them.
session_request_timeout_ms = $((${SANDBOX_TIME_SCALE:-1} > 1 ? 30000 : 10000))
# The runtimes probe's 2 s for a version command: 20 under emulation, where a
# sandboxed python3 --version took the guest longer (python3 and c then missing).
runner_runtime_probe_seconds = $((${SANDBOX_TIME_SCALE:-1} > 1 ? 20 : 2))
# Small, so that the tenancy suite's api_workers long-polls of one key exceed its share
# (the production default is half of api_wait_capacity; waits.sh runs its own API).
api_wait_slots_per_key = 4
schema_dir = $REPO/schema
runner_state_dir = $VAR/runner
runner_slots = $(($(nproc) * 2))
# Per stack, so that two stacks on one host (make up, make test) never share a
# slot's uid or cgroup.
runner_uid_base = $(runner_uid_base)
runner_cgroup_name = $(runner_cgroup_name)
runner_agent_path = $BIN/sandbox-agent
runner_deliver_path = $BIN/sandbox-deliver
runner_runtimes_file = $REPO/etc/runtimes.conf
runner_max_sessions = ${SANDBOX_MAX_SESSIONS:-32}
EOF
    chmod 0644 "$tmp"
    if cmp -s "$tmp" "$CONF"; then
        rm -f "$tmp"
    else
        mv -f "$tmp" "$CONF"
        CONF_CHANGED=1
    fi
}

stack_hash() { printf '%s' "$VAR" | cksum | cut -d' ' -f1; }
# 2048 uids per stack: job slots from the base, session slots from base + 1000.
runner_uid_base() { echo $((300000 + ($(stack_hash) % 4000) * 2048)); }
runner_cgroup_name() { echo "sandbox-$(($(stack_hash) % 1000000))"; }

# The runner needs root (workspace mounts, cgroups, dropping each job to its own uid).
runner_start() {
    local pid
    need_bin sandbox-runner
    if ((EUID != 0)); then
        warn "runner: not started (it must run as root); jobs stay queued"
        return 0
    fi
    if pid=$(comp_master runner); then
        if ((CONF_CHANGED)) || api_stale_binary_of "$pid" sandbox-runner; then
            say "runner: config or binary changed, restarting"
            comp_stop runner 10
        else
            say "runner: already running (pid $pid)"
            return 0
        fi
    fi
    comp_reset runner
    mkdir -p "$RUN_DIR/runner-cwd"
    pid=$(spawn "$RUN_DIR/runner-cwd" "$RUNNER_LOG" "$BIN/sandbox-runner" --config "$CONF")
    printf '%s\n' "$pid" >"$RUNNER_PID"
    STARTED+=(runner)
    sleep 0.3
    proc_alive "$pid" || { log_tail "$RUNNER_LOG"; die "sandbox-runner exited during start-up (log: $RUNNER_LOG)"; }
    say "runner: started (pid $pid, log $RUNNER_LOG)"
}

need_bin() {
    [[ -x $BIN/$1 ]] || die "$BIN/$1 is missing or not executable: build it first (make), or set SANDBOX_BIN"
}

ctl() { "$BIN/sandboxctl" --config "$CONF" "$@"; }

migrate() {
    need_bin sandboxctl
    ctl migrate || die "sandboxctl migrate failed (config $CONF)"
}

# Is the key id in `keys list --json` and not revoked? Whatever the list's shape
# (array, {"keys": [...]}, one object per line), look at every object with that id.
key_listed() {
    local list
    list=$(ctl keys list --json) || die "sandboxctl keys list --json failed"
    jq -e -s --arg id "$1" '
        first(.. | objects | select(.id? == $id)
              | select((.revoked_at? // null) == null and (.revoked? // false) == false
                       and (.status? // "active") != "revoked")) | true' \
        >/dev/null 2>&1 <<<"$list"
}

write_secret() { # FILE VALUE: 0600 from the first byte
    local tmp
    tmp=$(umask 077 && mktemp "$1.XXXXXX") || die "cannot write $1"
    printf '%s\n' "$2" >"$tmp"
    chmod 0600 "$tmp"
    mv -f "$tmp" "$1"
}

demo_key() {
    local id token out
    need_bin sandboxctl
    if [[ -s $TOKEN_FILE && -s $KEYID_FILE ]]; then
        read -r id <"$KEYID_FILE"
        if key_listed "$id"; then
            return 0
        fi
        say "demo key $id is gone or revoked: creating a new one"
    fi
    out=$(ctl keys create --namespace demo --tenant demo --subject-type user --subject-id demo --json) ||
        die "sandboxctl keys create failed"
    id=$(jq -er '.id | strings' <<<"$out" 2>/dev/null) || die "sandboxctl keys create --json printed no id"
    token=$(jq -er '.token | strings' <<<"$out" 2>/dev/null) || die "sandboxctl keys create --json printed no token"
    write_secret "$TOKEN_FILE" "$token"
    write_secret "$KEYID_FILE" "$id"
    say "demo key created (id $id)"
}

# --------------------------------------------------------------------------------- API

# True when the running API is not $BIN/sandbox-api as it is now: another binary, or
# one that was rebuilt since the process started.
api_stale_binary() { api_stale_binary_of "$1" sandbox-api; }
api_stale_binary_of() {
    local pid=$1 bin=$BIN/$2 exe age mtime
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
    [[ $exe == *" (deleted)" || $exe != "$(realpath -- "$bin")" ]] && return 0
    age=$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ') || return 1
    mtime=$(stat -c %Y "$bin" 2>/dev/null) || return 1
    [[ $age =~ ^[0-9]+$ ]] && (($(date +%s) - age < mtime))
}

api_start() {
    local pid deadline
    need_bin sandbox-api
    [[ -f $CONF ]] || die "$CONF is missing: run tests/stack.sh up first"
    if pid=$(comp_master api); then
        if ((CONF_CHANGED)); then
            say "api: sandbox.conf changed, restarting"
        elif api_stale_binary "$pid"; then
            say "api: $BIN/sandbox-api was rebuilt, restarting"
        else
            say "api: already running (pid $pid)"
            return 0
        fi
        comp_stop api "$API_STOP_WAIT"
    fi
    check_socket_path "$API_SOCK"
    comp_reset api
    pid=$(spawn "$RUN_DIR" "$API_LOG" "$BIN/sandbox-api" --config "$CONF" --pid-file "$API_PID")
    STARTED+=(api)
    deadline=$((SECONDS + API_START_WAIT))
    until [[ -S $API_SOCK ]]; do
        if ! proc_alive "$pid"; then
            log_tail "$API_LOG"
            die "sandbox-api exited during start-up (log: $API_LOG)"
        fi
        if ((SECONDS >= deadline)); then
            log_tail "$API_LOG"
            die "sandbox-api did not create $API_SOCK within ${API_START_WAIT}s (log: $API_LOG)"
        fi
        sleep 0.1
    done
    proc_alive "$pid" || { log_tail "$API_LOG"; die "sandbox-api exited during start-up (log: $API_LOG)"; }
    say "api: started (pid $pid, socket $API_SOCK)"
}

# ------------------------------------------------------------------------------- nginx

ensure_cert() {
    if [[ -s $CERT && -s $KEY ]] && openssl x509 -checkend 86400 -noout -in "$CERT" >/dev/null 2>&1 &&
        openssl x509 -noout -ext subjectAltName -in "$CERT" 2>/dev/null | grep -qF "DNS:*.$E2B_HOST"; then
        return 0
    fi
    say "nginx: generating a self-signed certificate for localhost/127.0.0.1 and *.$E2B_HOST"
    local out
    if ! out=$(umask 077 && openssl req -x509 -newkey rsa:2048 -nodes -days 365 \
        -subj /CN=localhost \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:$E2B_HOST,DNS:*.$E2B_HOST" \
        -keyout "$KEY.tmp" -out "$CERT.tmp" 2>&1); then
        printf '%s\n' "$out" >&2
        rm -f "$KEY.tmp" "$CERT.tmp"
        die "openssl could not create the certificate"
    fi
    chmod 0600 "$KEY.tmp"
    chmod 0644 "$CERT.tmp"
    mv -f "$KEY.tmp" "$KEY"
    mv -f "$CERT.tmp" "$CERT"
    NGX_RELOAD=1
}

# Render the template; print 1 if nginx.conf changed, 0 if not.
render_nginx_conf() {
    local tmp out user_line
    [[ -r $TEMPLATE ]] || die "nginx template $TEMPLATE is missing"
    user_line=$(nginx_user_line) || exit 1
    tmp=$(mktemp "$NGX_CONF.XXXXXX") || die "cannot write $NGX_CONF"
    sed -e "s|@VAR@|$VAR|g" -e "s|@PORT@|$PORT|g" -e "s|@REPO@|$REPO|g" \
        -e "s|@USER@|$user_line|g" -e "s|@E2B_DOMAIN@|$E2B_HOST:$PORT|g" \
        -e "s|@E2B_HOST_RE@|${E2B_HOST//./\\\\.}|g" \
        -e "s|@API_RATE@|${SANDBOX_API_RATE:-2000}|g" "$TEMPLATE" >"$tmp"
    chmod 0644 "$tmp"
    if ! out=$(nginx -t -q -p "$NGX_DIR" -c "$tmp" -e "$NGX_ERR" 2>&1 9>&-); then
        printf '%s\n' "$out" >&2
        rm -f "$tmp"
        die "nginx rejects the configuration rendered from $TEMPLATE"
    fi
    if cmp -s "$tmp" "$NGX_CONF"; then
        rm -f "$tmp"
        printf '0'
    else
        mv -f "$tmp" "$NGX_CONF"
        printf '1'
    fi
}

https_code() {
    curl -s -o /dev/null -w '%{http_code}' --max-time 3 --cacert "$CERT" \
        "https://127.0.0.1:$1/v1/health" 2>/dev/null || true
}

nginx_port() { # the port in the rendered config, or nothing
    [[ -r $NGX_CONF ]] || return 0
    sed -n 's/^[[:space:]]*listen 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$NGX_CONF" | head -n 1
}

nginx_start() {
    local pid changed out deadline code
    ensure_cert
    changed=$(render_nginx_conf)
    if pid=$(comp_master nginx); then
        if ((changed || NGX_RELOAD)); then
            say "nginx: configuration changed, reloading (pid $pid)"
            kill -HUP "$pid" || die "cannot signal nginx (pid $pid)"
            sleep 1
        else
            say "nginx: already running (pid $pid)"
        fi
    else
        comp_reset nginx
        if ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q .; then
            die "port $PORT is already in use (see: ss -ltnp 'sport = :$PORT'); set SANDBOX_PORT"
        fi
        # daemon on (the default): nginx forks and the command returns.
        if ! out=$(cd "$NGX_DIR" && nginx -p "$NGX_DIR" -c "$NGX_CONF" -e "$NGX_ERR" 2>&1 9>&-); then
            printf '%s\n' "$out" >&2
            log_tail "$NGX_ERR" 10
            die "nginx failed to start (log: $NGX_ERR)"
        fi
        STARTED+=(nginx)
        pid=$(comp_master nginx) || { log_tail "$NGX_ERR" 10; die "nginx exited during start-up (log: $NGX_ERR)"; }
        say "nginx: started (pid $pid, https://127.0.0.1:$PORT)"
    fi
    deadline=$((SECONDS + NGX_START_WAIT))
    while :; do
        code=$(https_code "$PORT")
        [[ -n $code && $code != 000 ]] && break
        if ((SECONDS >= deadline)); then
            log_tail "$NGX_ERR" 10
            die "https://127.0.0.1:$PORT/v1/health does not answer (log: $NGX_ERR)"
        fi
        sleep 0.2
    done
    HEALTH_CODE=$code
}

# --------------------------------------------------------------------------- commands

write_env() {
    local tmp token
    read -r token <"$TOKEN_FILE"
    tmp=$(umask 077 && mktemp "$ENV_FILE.XXXXXX") || die "cannot write $ENV_FILE"
    {
        printf 'SANDBOX_URL=%s\n' "$(shq "https://127.0.0.1:$PORT")"
        printf 'SANDBOX_CACERT=%s\n' "$(shq "$CERT")"
        printf 'SANDBOX_TOKEN=%s\n' "$(shq "$token")"
        printf 'SANDBOX_CONFIG=%s\n' "$(shq "$CONF")"
        printf 'SANDBOX_DB_SOCKET=%s\n' "$(shq "$DB_SOCK")"
        printf 'SANDBOX_VAR=%s\n' "$(shq "$VAR")"
        printf 'SANDBOX_PORT=%s\n' "$(shq "$PORT")"
        # the E2B SDKs (docs/E2B.md): the control plane and envd at the fixed URL (no
        # resolver needed), the sandbox domain for getHost and host-name routing
        printf 'E2B_API_URL=%s\n' "$(shq "https://127.0.0.1:$PORT")"
        printf 'E2B_SANDBOX_URL=%s\n' "$(shq "https://127.0.0.1:$PORT")"
        printf 'E2B_DOMAIN=%s\n' "$(shq "$E2B_HOST:$PORT")"
        printf 'E2B_API_KEY=%s\n' "$(shq "$token")"
    } >"$tmp"
    chmod 0600 "$tmp"
    mv -f "$tmp" "$ENV_FILE"
}

banner() {
    local token url cacert auth
    read -r token <"$TOKEN_FILE"
    url="https://127.0.0.1:$PORT"
    cacert=$(shq "$CERT")
    auth=$(shq "Authorization: Bearer $token")
    cat <<EOF

  Sandbox API   $url   (health: ${HEALTH_CODE:-?})
  demo token    $token
  environment   set -a; . $(shq "$ENV_FILE"); set +a
  logs          $LOG_DIR/
  metrics       curl -sS --cacert $cacert $url/metrics   (Prometheus text, from loopback only)

  Submit a job:
    curl -sS --cacert $cacert -H $auth -H 'Content-Type: application/json' -d '{"command":"echo hello"}' $url/v1/jobs

  Submit one and fetch it (GET waits up to 10 s for a result):
    JOB=\$(curl -sS --cacert $cacert -H $auth -H 'Content-Type: application/json' -d '{"command":"echo hello"}' $url/v1/jobs | jq -r .id)
    curl -sS --cacert $cacert -H $auth "$url/v1/jobs/\$JOB?wait=10"

EOF
}

# If `up` fails, stop what this invocation started: nothing is left half-running.
rollback() {
    local rc=$? i
    ((rc == 0)) && return 0
    set +e
    trap - EXIT
    if ((${#STARTED[@]})); then
        warn "up failed: stopping what it started (${STARTED[*]})"
        for ((i = ${#STARTED[@]} - 1; i >= 0; i--)); do
            (comp_stop "${STARTED[i]}" 10)
        done
    fi
    exit "$rc"
}

run_deps() {
    # the packages only: the test clients (tests/clients) are `make test`'s, not the stack's
    SANDBOX_DEPS_CLIENTS=0 bash "$REPO/tests/deps.sh" || die "required Debian packages are missing (see above)"
}

cmd_up() {
    check_port
    run_deps
    need_bin sandbox-api
    need_bin sandboxctl
    make_dirs
    take_lock
    # An interrupted `up` rolls back too (bash skips the EXIT trap on a signal death).
    trap rollback EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    db_start
    db_setup
    write_config
    migrate
    demo_key
    api_start
    runner_start
    nginx_start
    write_env
    trap - EXIT INT TERM HUP
    drop_lock
    banner
}

cmd_down() {
    [[ -d $VAR ]] || { say "nothing to stop ($VAR does not exist)"; return 0; }
    take_lock
    comp_stop nginx "$NGX_STOP_WAIT"
    comp_stop api "$API_STOP_WAIT"
    comp_stop runner 15
    stop_supervisors
    comp_stop db "$DB_STOP_WAIT"
    drop_lock
}

STOP_REQUESTED=0
cmd_run() {
    cmd_up
    # Ctrl-C under `make run` can end this script before its trap runs (make exits
    # at once and takes the terminal with it): a detached watchdog runs `down` as
    # soon as this process is gone, however it went.
    SANDBOX_VAR=$VAR SANDBOX_PORT=$PORT SANDBOX_BIN=$BIN setsid bash -c \
        'while kill -0 "$1" 2>/dev/null; do sleep 0.5; done; exec bash "$2" down' \
        stack-watchdog "$$" "$REPO/tests/stack.sh" </dev/null >>"$LOG_DIR/stack.log" 2>&1 &
    say "running in the foreground: Ctrl-C stops everything"
    trap 'STOP_REQUESTED=1' INT TERM HUP
    local comp label
    local -A reported=()
    # Ctrl-C reaches every process of the group: a command substitution it kills
    # must not end the script under `set -e` before `down` has run.
    set +e
    while ((STOP_REQUESTED == 0)); do
        sleep 2 &
        wait $! 2>/dev/null || true
        for comp in db api runner nginx; do
            label=$(comp_label "$comp")
            if comp_running "$comp"; then
                reported[$comp]=
            elif ((STOP_REQUESTED == 0)) && [[ -z ${reported[$comp]:-} ]]; then
                warn "$label is not running (tests/stack.sh up, in another terminal, restarts it)"
                reported[$comp]=1
            fi
        done
    done
    # A second Ctrl-C must not cut the shutdown short and strand processes. Under
    # `make run`, make exits at once on Ctrl-C and the terminal may go away with it:
    # the shutdown then goes on without an audience (writes may fail, no SIGPIPE).
    trap '' INT TERM HUP PIPE
    echo 2>/dev/null
    say "stopping" 2>/dev/null
    cmd_down
    exit 0
}

# One component's line; returns 1 when it is not running.
status_line() {
    local comp=$1 label pid extra port code n
    local -a left
    label=$(comp_label "$comp")
    if pid=$(comp_master "$comp"); then
        case $comp in
            db) extra="socket $DB_SOCK" ;;
            runner) extra="log $RUNNER_LOG" ;;
            api)
                n=$(pgrep -c -P "$pid" 2>/dev/null) || n=0
                extra="$n workers, socket $API_SOCK"
                ;;
            nginx)
                port=$(nginx_port)
                code=$(https_code "${port:-$PORT}")
                extra="https://127.0.0.1:${port:-$PORT}, /v1/health: ${code:-none}"
                ;;
        esac
        say "$label: running (pid $pid, $extra)"
        return 0
    fi
    mapfile -t left < <(comp_pids "$comp")
    if ((${#left[@]})); then
        say "$label: stopped, but leftover processes run: ${left[*]} (tests/stack.sh down stops them)"
    else
        say "$label: stopped"
    fi
    return 1
}

cmd_status() {
    local rc=0 comp
    for comp in db api runner nginx; do
        status_line "$comp" || rc=3
    done
    say "state: $VAR"
    return "$rc"
}

cmd_start_db() {
    run_deps
    make_dirs
    take_lock
    db_start
    db_setup
    drop_lock
}

cmd_start_api() {
    need_bin sandbox-api
    make_dirs
    take_lock
    api_start
    drop_lock
}

cmd_stop() {
    [[ -d $VAR ]] || { say "$(comp_label "$1"): not running"; return 0; }
    take_lock
    comp_stop "$1" "$2"
    drop_lock
}

usage() {
    cat >&2 <<EOF
usage: tests/stack.sh up|down|run|status|stop-db|start-db|stop-api|start-api|stop-runner|start-runner

  up         start MariaDB, the API and nginx in the background (idempotent)
  down       stop all of them
  run        up, then wait in the foreground; Ctrl-C or TERM runs down
  status     each component's state (exit 0 when all run, 3 otherwise)
  stop-db, start-db, stop-api, start-api   one component (fault tests)

  SANDBOX_VAR=$VAR  SANDBOX_PORT=$PORT  SANDBOX_BIN=$BIN
EOF
    exit 2
}

main() {
    (($# == 1)) || usage
    case $1 in
        up) cmd_up ;;
        down) cmd_down ;;
        run) cmd_run ;;
        status) cmd_status ;;
        stop-db) cmd_stop db "$DB_STOP_WAIT" ;;
        start-db) cmd_start_db ;;
        stop-api) cmd_stop api "$API_STOP_WAIT" ;;
        stop-runner) cmd_stop runner 15 ;;
        start-runner) take_lock; runner_start; drop_lock ;;
        start-api) cmd_start_api ;;
        -h | --help | help) usage ;;
        *) usage ;;
    esac
}

main "$@"
