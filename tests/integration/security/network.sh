# tests/integration/security/network.sh: security.sh's case 2 (network): the host's listeners, loopback and abstract sockets,
# vsock, and network jobs through slirp4netns.
# Sourced by security.sh at this case's place in the run: its helpers, variables and
# checks are the suite's (the same counts, in the same order).
# Job commands are single-quoted on purpose: they expand inside the sandbox.
# shellcheck shell=bash disable=SC2016

# ------------------------------------------------------------------ 2. network

CASE="network"
HOST_IP=$(ip -4 -o addr show scope global 2> /dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
NO_HOST_IP="no global IPv4 address found (ip -4 -o addr show scope global): nothing listens on the host's own address"
ABSTRACT="sec-probe-$RUN"
LISTEN_LOG=$T_DIR/listen.log
LISTEN_PORTS=$T_DIR/listen.ports
: > "$LISTEN_LOG"
host_listeners "$LISTEN_PORTS" "$LISTEN_LOG" "${HOST_IP:-}" "$(tscale 120)" "$ABSTRACT"
if [ "${P_LO:-0}" = 0 ]; then
	_notok "$CASE: host listeners started" "ports" "none (python3 missing?)" 0
fi
note "host listeners: 127.0.0.1:$P_LO ${HOST_IP:-(no global IPv4)}:$P_HOST @$ABSTRACT"
cmd="./probe connect $SANDBOX_PORT; ./probe connect $P_LO; "
[ -n "$HOST_IP" ] && cmd+="./probe connect $P_HOST $HOST_IP | sed 's/^connect /connect_host /'; "
cmd+="./probe connect 3306 | sed 's/^connect /connect_mysql /'; "
cmd+="./probe connect_unix @$ABSTRACT; ./probe vsock_socket vsock_socketpair; "
# (no awk inside: /usr/bin/awk is an alternatives link into the host's /etc)
cmd+="echo \"IFACES \$(sed -n '3,\$s/^ *\([^:]*\):.*/\1/p' /proc/net/dev | tr '\n' ' ')\"; "
cmd+="echo \"TCP_LISTEN \$(cat /proc/net/tcp /proc/net/tcp6 | grep -cE '^ *[0-9]+: [0-9A-Fa-f]+:[0-9A-Fa-f]+ [0-9A-Fa-f]+:[0-9A-Fa-f]+ 0A ')\"; "
cmd+="if [ -e '$SANDBOX_DB_SOCKET' ]; then echo DBSOCK visible; else echo DBSOCK absent; fi"
run "$CASE" "$cmd"
expect_state succeeded
out=$(stdout)
# The first connect line is nginx's port, the second the host loopback listener.
expect_eq "$CASE: nginx at 127.0.0.1:$SANDBOX_PORT is refused (own loopback)" \
	"connect errno=ECONNREFUSED (Connection refused)" "$(printf '%s\n' "$out" | grep '^connect ' | sed -n 1p)"
expect_eq "$CASE: a host listener on 127.0.0.1:$P_LO is refused" \
	"connect errno=ECONNREFUSED (Connection refused)" "$(printf '%s\n' "$out" | grep '^connect ' | sed -n 2p)"
# The sandbox's netns has only lo: no route to the host's address at all.
if [ -n "$HOST_IP" ]; then
	expect_probe connect_host ENETUNREACH
else
	ci_skip "$(_name "connect_host -> ENETUNREACH")" "$NO_HOST_IP"
fi
expect_probe connect_mysql ECONNREFUSED
expect_probe connect_unix ECONNREFUSED
expect_probe vsock_socket EAFNOSUPPORT
expect_probe vsock_socketpair EAFNOSUPPORT
expect_eq "$CASE: only lo in /proc/net/dev" "IFACES lo " "$(printf '%s\n' "$out" | grep '^IFACES')"
expect_eq "$CASE: no listening TCP socket in the sandbox's netns" "TCP_LISTEN 0" "$(printf '%s\n' "$out" | grep '^TCP_LISTEN')"
expect_match "$CASE: the DB socket path does not exist inside" '^DBSOCK absent$' "$out"
sleep "$(tscale 0.2)" # a connection would have been logged by now
expect_eq "$CASE: the host listeners saw no connection" "" "$(cat "$LISTEN_LOG")"
check_clean

# A job may only ask for network with a key that permits it ...
CASE="network job"
ctx "$CASE"
req POST /v1/jobs '{"command":"true","network":true}'
expect_error 403 forbidden network
# ... and then gets user-mode NAT (slirp4netns) that must not reach the host itself:
# not its loopback (nginx, the listener), not slirp's host alias 10.0.2.2, and not a
# service listening on the host's own address either.
NET_KEY=$(ctl keys create --namespace sec \
	--tenant "sec-$RUN" --subject-type user --subject-id "sec-net-$RUN" --allow-network --json 2> /dev/null)
NET_TOKEN=$(jq -r '.token // empty' <<< "$NET_KEY" 2> /dev/null)
NET_KEY_ID=$(jq -r '.id // empty' <<< "$NET_KEY" 2> /dev/null)
if [ -n "$NET_KEY_ID" ]; then
	at_exit "ctl keys revoke '$NET_KEY_ID' > /dev/null 2>&1"
fi
if [ -z "$NET_TOKEN" ]; then
	_notok "$CASE: a key with --allow-network" "a token from sandboxctl keys create" "none" 0
else
	: > "$LISTEN_LOG"
	slirp_before=$(pgrep -x slirp4netns | sort)
	cmd="./probe connect $SANDBOX_PORT | sed 's/^connect /connect_nginx /'; "
	cmd+="./probe connect $P_LO | sed 's/^connect /connect_lo /'; "
	cmd+="./probe connect $SANDBOX_PORT 10.0.2.2 | sed 's/^connect /connect_alias /'; "
	[ -n "$HOST_IP" ] && cmd+="./probe connect $P_HOST $HOST_IP | sed 's/^connect /connect_host /'; "
	cmd+="if [ -e '$SANDBOX_DB_SOCKET' ]; then echo DBSOCK visible; else echo DBSOCK absent; fi"
	TOKEN=$NET_TOKEN run "$CASE" "$cmd" '{"network":true}'
fi
if [ -n "$NET_TOKEN" ] && [ "$(jf .status)" = blocked ] &&
	[[ "$(jf '.result.diagnostics | join(" ")')" == *"not available"* ]]; then
	# A runner without slirp4netns or /dev/net/tun refuses network jobs: secure, but
	# then none of the NAT isolation checks ran. In CI network jobs must work.
	ci_skip "$CASE: NAT isolation (nginx, host loopback, 10.0.2.2, the host's address; slirp4netns privileges)" \
		"network jobs are not available on this runner: $(jf '.result.diagnostics | join(" ")')"
	check_clean
elif [ -n "$NET_TOKEN" ]; then
	expect_state succeeded
	[ "$(jf .status)" = succeeded ] || note "$CASE: failure: $(jf '.failure | tostring')"
	expect_match "$CASE: the runner set up slirp4netns" 'network: slirp4netns' "$(jf '.result.diagnostics[]?')"
	expect_probe connect_nginx ECONNREFUSED
	expect_probe connect_lo ECONNREFUSED
	# slirp4netns --disable-host-loopback answers a SYN to its host alias with an ICMP
	# net unreachable (libslirp's tcp_input when the connect to the host fails).
	expect_probe connect_alias ENETUNREACH
	# The runner routes every address of this host "unreachable" in the job's netns
	# (sandbox-runner/launch/net.c, net_batch): the kernel's answer for such a route.
	if [ -n "$HOST_IP" ]; then
		expect_probe connect_host EHOSTUNREACH
	else
		ci_skip "$(_name "connect_host -> EHOSTUNREACH")" "$NO_HOST_IP"
	fi
	expect_match "$CASE: the DB socket path does not exist inside" '^DBSOCK absent$' "$(stdout)"
	sleep "$(tscale 0.2)" # a connection would have been logged by now
	expect_eq "$CASE: the host listeners saw no connection" "" "$(cat "$LISTEN_LOG")"
	check_clean
	for _ in $(seq $((15 * TSCALE))); do
		slirp_left=$(comm -13 <(printf '%s\n' "$slirp_before") <(pgrep -x slirp4netns | sort) | tr '\n' ' ')
		[ -z "${slirp_left// /}" ] && break
		sleep 0.2
	done
	expect_eq "$CASE: cleanup: no slirp4netns left" "" "${slirp_left// /}"

	# slirp4netns handles the job's packets: it runs with the least privilege it
	# can, the slot's uid (never root), no capability, no_new_privs, seccomp, in a
	# read-only root of its own without the host's /etc, /run, /var or the state dir.
	CASE="network job: slirp4netns privileges"
	ctx "$CASE"
	TOKEN=$NET_TOKEN submit "$(mkjob 'echo "IFACES $(sed -n "3,\$s/^ *\([^:]*\):.*/\1/p" /proc/net/dev | tr "\n" " ")"; sleep '"$(tscale 3)" '{"network":true,"limits":{"wall_seconds":'"$(tscale 20 300)"'}}')"
	SLIRP=
	for _ in $(seq $((100 * TSCALE))); do
		for p in $(pgrep -x slirp4netns); do
			pp=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2> /dev/null)
			if [ -n "$JOB" ] && tr '\0' ' ' < "/proc/$pp/cmdline" 2> /dev/null | grep -Fq -- "--supervise $JOB "; then
				SLIRP=$p
				break 2
			fi
		done
		sleep 0.1
	done
	expect_true "$CASE: the job's slirp4netns found (child of its supervisor)" test -n "$SLIRP"
	sl_status=$(cat "/proc/${SLIRP:-0}/status" 2> /dev/null)
	sl_root=$(ls -A "/proc/${SLIRP:-0}/root/" 2> /dev/null | tr '\n' ' ')
	sl_etc=$(ls -A "/proc/${SLIRP:-0}/root/etc" 2> /dev/null | tr '\n' ' ')
	sl_visible=
	for p in /run /var /home /root /proc /sys /tmp "$STATE_DIR" "$SANDBOX_CONFIG" "$SANDBOX_DB_SOCKET" "$REPO"; do
		[ -e "/proc/${SLIRP:-0}/root$p" ] && sl_visible+="$p "
	done
	sl_touch=$(touch "/proc/${SLIRP:-0}/root/sec-probe" 2>&1; echo "rc=$?")
	rm -f "/proc/${SLIRP:-0}/root/sec-probe" 2> /dev/null
	sl_mnt=$(readlink "/proc/${SLIRP:-0}/ns/mnt" 2> /dev/null)
	sl_uid=$(awk '/^Uid:/ { print $2 }' <<< "$sl_status")
	note "slirp4netns pid ${SLIRP:-none}: $(grep -E '^(Uid|Gid|CapEff|CapBnd|NoNewPrivs|Seccomp):' <<< "$sl_status" | tr '\t\n' ' ;'); root: $sl_root"
	expect_true "$CASE: its uid (${sl_uid:-none}) is a slot uid ($UID_BASE..$UID_LAST), not 0" \
		test -n "$sl_uid" -a "${sl_uid:-0}" -ge "$UID_BASE" -a "${sl_uid:-0}" -le "$UID_LAST"
	expect_match "$CASE: real, effective, saved and fs uid all the slot uid" \
		"^Uid:	${sl_uid:-x}	${sl_uid:-x}	${sl_uid:-x}	${sl_uid:-x}\$" "$sl_status"
	expect_match "$CASE: real, effective, saved and fs gid all the slot uid" \
		"^Gid:	${sl_uid:-x}	${sl_uid:-x}	${sl_uid:-x}	${sl_uid:-x}\$" "$sl_status"
	expect_match "$CASE: no supplementary group" '^Groups:[[:space:]]*$' "$sl_status"
	for k in CapInh CapPrm CapEff CapBnd CapAmb; do
		expect_match "$CASE: $k is 0" "^$k:	0000000000000000\$" "$sl_status"
	done
	expect_match "$CASE: NoNewPrivs is 1" '^NoNewPrivs:	1$' "$sl_status"
	expect_match "$CASE: seccomp filter mode (2)" '^Seccomp:	2$' "$sl_status"
	expect_eq "$CASE: its root holds only /usr, the lib links, /etc, /dev (tun) and the namespace files" \
		"bin dev etc lib lib64 ns sbin usr " "$sl_root"
	expect_eq "$CASE: its /etc holds only resolv.conf" "resolv.conf " "$sl_etc"
	expect_eq "$CASE: none of the host's /run /var /home /root /proc /sys /tmp, state dir, config, DB socket, checkout" "" "$sl_visible"
	expect_match "$CASE: its root is read-only" 'Read-only file system' "$sl_touch"
	expect_true "$CASE: its mount namespace is not the host's ($sl_mnt)" \
		test -n "$sl_mnt" -a "$sl_mnt" != "$(readlink /proc/self/ns/mnt)"
	if [ -n "$JOB" ]; then
		TOKEN=$NET_TOKEN wait_job "$JOB"
		expect_state succeeded
		expect_eq "$CASE: the job had its tap0" "IFACES lo tap0 " "$(stdout | grep '^IFACES' | tr -s ' ')"
	fi
	check_clean
fi
kill "$LISTENER" 2> /dev/null
