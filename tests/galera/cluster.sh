# tests/galera/cluster.sh: the Galera test bed of make test-galera, sourced by
# tests/galera/run.sh (which holds the assertions). Everything lives under one temp
# directory $W and is torn down by gb_down (run.sh traps it):
#   three mariadbd nodes with galera-4 on loopback (datadir, socket, client, gcomm, IST
#   and SST ports of their own, user=mysql, rsync state transfer), node 1 bootstrapped
#   (--wsrep-new-cluster), nodes 2 and 3 joining one at a time from an empty datadir;
#   two sandbox-api instances (A, B), each with db_hosts listing every node and
#   db_sync_wait = 1, behind one nginx: port GB_PORT is an upstream of both, GB_PORT+1 pins A,
#   GB_PORT+2 pins B (TLS, the test stack's certificate recipe);
#   two runner hosts (runner_host g1, g2), each its own slots, uid base, cgroup name,
#   state directory and wake socket, on node 1 and node 3 alone (db_host, db_port).
# Ports: GB_BASE+10+i client, +20+i gcomm, +30+i IST, +40+i SST (i = 1..3), nginx
# GB_PORT (default GB_BASE) .. GB_PORT+2.
# shellcheck shell=bash

GB_BASE=${SANDBOX_GALERA_PORT:-14300}
GB_PORT=$GB_BASE
GB_PROVIDER=/usr/lib/galera/libgalera_smm.so
GB_PIDS=()        # processes gb_down stops (besides the nodes and nginx)

gb_say() { printf '# galera: %s\n' "$*"; }
gb_die() {
	echo "Bail out! $*"
	exit 2
}

node_port() { echo $((GB_BASE + 10 + $1)); }
node_sock() { echo "$W/n$1/sock"; }
node_sql() { # node SQL: one statement as root over the node's socket, tab-separated
	mariadb --no-defaults -S "$(node_sock "$1")" -u root -N -B --connect-timeout=3 sandbox -e "$2"
}
node_sql_nodb() { mariadb --no-defaults -S "$(node_sock "$1")" -u root -N -B --connect-timeout=3 -e "$2"; }
node_status() { # node VAR: a wsrep status variable's value
	node_sql_nodb "$1" "SHOW GLOBAL STATUS LIKE '$2'" 2>/dev/null | cut -f2
}
node_pid() { cat "$W/n$1/pid" 2>/dev/null; }

node_conf() {
	local i=$1 g1=$((GB_BASE + 21)) g2=$((GB_BASE + 22)) g3=$((GB_BASE + 23))
	mkdir -p "$W/n$i/data"
	cat >"$W/n$i/my.cnf" <<EOF
[mysqld]
datadir=$W/n$i/data
socket=$W/n$i/sock
pid-file=$W/n$i/pid
log-error=$W/n$i/err.log
port=$(node_port "$i")
bind-address=127.0.0.1
skip-name-resolve
user=mysql
character-set-server=utf8mb4
collation-server=utf8mb4_unicode_ci
max-connections=400
innodb_buffer_pool_size=64M
innodb_log_file_size=48M
innodb_flush_log_at_trx_commit=2
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
wsrep_on=ON
wsrep_provider=$GB_PROVIDER
wsrep_cluster_name=sandbox-test
wsrep_cluster_address=gcomm://127.0.0.1:$g1,127.0.0.1:$g2,127.0.0.1:$g3
wsrep_node_name=n$i
wsrep_node_address=127.0.0.1:$((GB_BASE + 20 + i))
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$((GB_BASE + 40 + i))
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$((GB_BASE + 20 + i));ist.recv_addr=127.0.0.1:$((GB_BASE + 30 + i));gcache.size=64M;evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S;evs.install_timeout=PT4S"
EOF
	chown -R mysql: "$W/n$i"
}

# node_start i [mariadbd options...]: in the background, its own session.
node_start() {
	local i=$1
	shift
	setsid mariadbd --defaults-file="$W/n$i/my.cnf" "$@" </dev/null >>"$W/n$i/out.log" 2>&1 &
	disown
}

node_synced() {
	[ "$(node_status "$1" wsrep_local_state_comment)" = Synced ] &&
		[ "$(node_status "$1" wsrep_cluster_status)" = Primary ]
}

# node_wait_synced i SECONDS: the node answers, Primary and Synced.
node_wait_synced() {
	local end=$((SECONDS + $2))
	until node_synced "$1"; do
		if ((SECONDS >= end)); then
			tail -n 30 "$W/n$1/err.log" | sed 's/^/#   /'
			return 1
		fi
		sleep 0.3
	done
}

# After a SIGKILL: the position InnoDB recovered, then a start from it (IST).
node_restart() {
	local i=$1 pos
	rm -f "$W/n$i/pid" "$W/n$i/sock"
	mariadbd --defaults-file="$W/n$i/my.cnf" --wsrep-recover --log-error="$W/n$i/recover.log" \
		</dev/null >/dev/null 2>&1
	pos=$(sed -n 's/.*WSREP: Recovered position: *\([0-9a-f-]*:-*[0-9]*\).*/\1/p' \
		"$W/n$i/recover.log" | tail -n 1)
	[ -n "$pos" ] || { gb_say "no recovered position in $W/n$i/recover.log"; return 1; }
	node_start "$i" --wsrep-start-position="$pos"
}

gb_cluster_up() {
	local i
	for i in 1 2 3; do node_conf "$i"; done
	mariadb-install-db --no-defaults --datadir="$W/n1/data" --user=mysql \
		--auth-root-authentication-method=socket --skip-test-db >"$W/n1/install.log" 2>&1 ||
		gb_die "mariadb-install-db failed: $(tail -n 5 "$W/n1/install.log")"
	node_start 1 --wsrep-new-cluster
	node_wait_synced 1 60 || gb_die "node 1 did not bootstrap"
	node_sql_nodb 1 "CREATE DATABASE sandbox CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
		CREATE USER 'sandbox'@'127.0.0.1' IDENTIFIED BY '$(cat "$W/db_password")';
		GRANT ALL ON sandbox.* TO 'sandbox'@'127.0.0.1';" || gb_die "cannot create the database user"
	for i in 2 3; do
		node_start "$i"
		node_wait_synced "$i" 90 || gb_die "node $i did not join"
	done
}

# ---- the service: configs, API, nginx, runners

gb_hash() { printf '%s' "$W" | cksum | cut -d' ' -f1; }
gb_cg_name() { echo "sbxg-$(($(gb_hash) % 100000))-$1"; }

# gb_hosts FIRST: db_hosts with node FIRST first.
gb_hosts() {
	local f=$1 i out
	out=127.0.0.1:$(node_port "$1")
	for i in 1 2 3; do [ "$i" = "$f" ] || out+=,127.0.0.1:$(node_port "$i"); done
	printf '%s' "$out"
}

# gb_conf NAME NODE EXTRA: $W/NAME.conf; NODE: db_hosts, every node with NODE first;
# =NODE: that node alone (db_host, db_port)
gb_conf() {
	local name=$1 db
	if [ "${2#=}" != "$2" ]; then
		db="db_host = 127.0.0.1
db_port = $(node_port "${2#=}")"
	else
		db="db_hosts = $(gb_hosts "$2")"
	fi
	mkdir -p "$W/$name"
	cat >"$W/$name.conf" <<EOF
$db
db_name = sandbox
db_user = sandbox
db_password_file = $W/db_password
db_connect_timeout = 2
schema_dir = $REPO/schema
fcgi_socket = $W/$name/api.sock
fcgi_socket_group = $(id -gn www-data)
api_workers = 4
api_read_timeout_seconds = 2
runner_wake_socket = $W/$name/wake.sock
runner_agent_path = $BIN/sandbox-agent
runner_deliver_path = $BIN/sandbox-deliver
runner_runtimes_file = $REPO/etc/runtimes.conf
runner_lease_seconds = 6
runner_max_sessions = 4
default_max_queued = 100000
$3
EOF
}

gb_api_start() { # NAME FIRST_NODE: reads wait for the node to have applied the
	# cluster's commits (GET after POST through the other API host)
	gb_conf "$1" "$2" "db_sync_wait = 1"
	chmod 0755 "$W/$1"
	setsid "$BIN/sandbox-api" --config "$W/$1.conf" --pid-file "$W/$1/api.pid" \
		</dev/null >>"$W/$1/api.log" 2>&1 &
	disown
	local end=$((SECONDS + 20))
	until [ -S "$W/$1/api.sock" ]; do
		((SECONDS < end)) || gb_die "sandbox-api $1 did not start: $(tail -n 5 "$W/$1/api.log")"
		sleep 0.1
	done
}

# gb_runner_start N NODE: runner host gN on NODE alone (=NODE) or on db_hosts.
gb_runner_start() {
	local n=$1 h
	h=$(gb_hash)
	gb_conf "r$n" "$2" "runner_host = g$n
runner_slots = 3
runner_uid_base = $((2400000 + (h % 2000) * 4096 + (n - 1) * 2048))
runner_cgroup_name = $(gb_cg_name "$n")
runner_state_dir = $W/r$n/state"
	setsid "$BIN/sandbox-runner" --config "$W/r$n.conf" </dev/null >>"$W/r$n/runner.log" 2>&1 &
	echo $! >"$W/r$n/runner.pid"
	GB_PIDS+=($!)
	disown
}

gb_nginx_start() {
	mkdir -p "$W/nginx/tmp"
	(umask 077 && openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
		-addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
		-keyout "$W/nginx/key.pem" -out "$W/nginx/cert.pem" >/dev/null 2>&1) ||
		gb_die "openssl could not make the certificate"
	chmod 0644 "$W/nginx/cert.pem"
	local loc='
            include /etc/nginx/fastcgi_params;
            fastcgi_param HTTP_PROXY "";
            fastcgi_keep_conn on;
            fastcgi_read_timeout 60s;'
	cat >"$W/nginx/nginx.conf" <<EOF
user www-data $(id -gn www-data);
worker_processes 1;
pid $W/nginx/nginx.pid;
error_log $W/nginx/error.log warn;
events { worker_connections 1024; }
http {
    default_type application/json;
    client_body_temp_path $W/nginx/tmp/body;
    fastcgi_temp_path $W/nginx/tmp/fastcgi;
    proxy_temp_path $W/nginx/tmp/proxy;
    scgi_temp_path $W/nginx/tmp/scgi;
    uwsgi_temp_path $W/nginx/tmp/uwsgi;
    access_log off;
    ssl_certificate $W/nginx/cert.pem;
    ssl_certificate_key $W/nginx/key.pem;
    upstream both { server unix:$W/a/api.sock; server unix:$W/b/api.sock; keepalive 8; keepalive_timeout 1s; }
    upstream only_a { server unix:$W/a/api.sock; keepalive 8; keepalive_timeout 1s; }
    upstream only_b { server unix:$W/b/api.sock; keepalive 8; keepalive_timeout 1s; }
    server { listen 127.0.0.1:$GB_PORT ssl; location / { fastcgi_pass both; $loc } }
    server { listen 127.0.0.1:$((GB_PORT + 1)) ssl; location / { fastcgi_pass only_a; $loc } }
    server { listen 127.0.0.1:$((GB_PORT + 2)) ssl; location / { fastcgi_pass only_b; $loc } }
}
EOF
	nginx -p "$W/nginx" -c "$W/nginx/nginx.conf" -e "$W/nginx/error.log" ||
		gb_die "nginx did not start: $(tail -n 5 "$W/nginx/error.log")"
}

# Stops what gb_up started, whatever state it is in: runners and their supervisors
# (found by their config path on the command line), APIs, nginx, the nodes.
gb_down() {
	local p f n
	for p in "${GB_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for f in "$W"/a/api.pid "$W"/b/api.pid; do
		[ -r "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null
	done
	[ -r "$W/nginx/nginx.pid" ] && kill -QUIT "$(cat "$W/nginx/nginx.pid")" 2>/dev/null
	sleep 1
	for n in 1 2; do
		for p in $(gb_procs_of "$W/r$n.conf"); do kill -KILL "$p" 2>/dev/null; done
	done
	for n in a b; do
		for p in $(gb_procs_of "$W/$n.conf"); do kill -KILL "$p" 2>/dev/null; done
	done
	for n in 1 2 3; do
		p=$(node_pid "$n")
		[ -n "$p" ] && kill -TERM "$p" 2>/dev/null
	done
	for n in 1 2 3; do
		p=$(node_pid "$n")
		for _ in $(seq 100); do
			if [ -z "$p" ] || ! [ -d "/proc/$p" ]; then break; fi
			sleep 0.2
		done
		[ -n "$p" ] && kill -KILL "$p" 2>/dev/null
	done
	# leftovers of this bed only: anything whose command line names $W
	for p in $(gb_procs_of "$W/"); do kill -KILL "$p" 2>/dev/null; done
	# a runner host killed with SIGKILL leaves its slots' workspace mounts and its
	# cgroups (the next start of that host would reclaim them: there is none)
	for p in $(awk -v w="$W/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r); do
		umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null
	done
	for n in 1 2; do
		for p in /sys/fs/cgroup/*/"$(gb_cg_name "$n")" /sys/fs/cgroup/"$(gb_cg_name "$n")"; do
			[ -d "$p" ] && find "$p" -depth -type d -exec rmdir {} + 2>/dev/null
		done
	done
}

# Pids whose command line contains the string (this bed's paths only).
gb_procs_of() {
	local d
	for d in /proc/[0-9]*; do
		[ "${d#/proc/}" = "$$" ] && continue
		tr '\0' ' ' 2>/dev/null <"$d/cmdline" | grep -qF -- "$1" && echo "${d#/proc/}"
	done
}
