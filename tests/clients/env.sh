# shellcheck shell=bash
# Sourced (bash) by tests/deps.sh and by the suites that drive the real client SDKs:
# where the pinned clients live and which node runs them.
#
#   CLIENTS_DIR   this folder: package.json + package-lock.json pin the SDKs, and
#                 tests/deps.sh installs them into node_modules/ with `npm ci`
#   PATH          gains $CLIENTS_DIR/.node/node_modules/.bin first when that private
#                 Node.js exists: tests/deps.sh installs it (from the npm registry) only
#                 when the machine's node is older than package.json's engines.node;
#                 otherwise the node on PATH is the one used
#   clients_node_ok   exit 0 when the node on PATH satisfies engines.node (engines.cjs)
#   clients_installed exit 0 when node_modules/ is the install of the current lock by
#                     the current node (the stamp tests/deps.sh writes after `npm ci`)

CLIENTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLIENTS_STAMP=$CLIENTS_DIR/node_modules/.sandbox-clients.stamp

if [[ -x $CLIENTS_DIR/.node/node_modules/.bin/node && :$PATH: != *:$CLIENTS_DIR/.node/node_modules/.bin:* ]]; then
	PATH=$CLIENTS_DIR/.node/node_modules/.bin:$PATH
fi

clients_node_ok() {
	local v
	v=$(node --version 2> /dev/null) || return 1
	node "$CLIENTS_DIR/engines.cjs" "$v"
}

# The stamp: the lock's sha256 and the node version (optional dependencies depend on it).
clients_stamp() {
	local sum
	sum=$(sha256sum < "$CLIENTS_DIR/package-lock.json") || return 1
	printf '%s node %s\n' "${sum%% *}" "$(node --version 2> /dev/null)"
}

clients_installed() {
	local want have
	want=$(clients_stamp) || return 1
	have=$(cat "$CLIENTS_STAMP" 2> /dev/null) || return 1
	[[ $want == "$have" ]]
}
