# tests/integration/faults/fastcgi.sh: faults.sh's cases 6 and 7, the API's FastCGI
# socket: its permissions (mode 0660, the configured group) and the read timeout
# (api_read_timeout_seconds) against raw FastCGI clients. Sourced by faults.sh at this
# place in the run: its helpers, variables and checks are the suite's.
# shellcheck shell=bash

# ========================================================= 6. FastCGI socket permissions

# Raw FastCGI clients (sections 6 and 7). Fed on stdin: a setpriv'd uid cannot read $T_DIR.
cat > "$T_DIR/fcgi.py" << 'PYEOF'
# Raw FastCGI clients for the faults suite (sections 6 and 7). Usage:
#   connect PATH                      one connect(): prints connected, or the errno name
#                                     (after an lstat that proves the path is reachable)
#   idle PATH COUNT MODE GIVEUP_S     COUNT connections that send nothing (MODE idle) or
#                                     4 bytes of a record header (MODE partial); prints
#                                     "ready", then one line per connection when the
#                                     server closes it: "closed EPOCH_MS", and "open" for
#                                     those still open after GIVEUP_S
#   slow PATH PAUSE_S                 GET /v1/health with a 10-byte body, sent in four
#                                     pieces PAUSE_S apart; prints the response's Status
#                                     line and body, or "closed without a response"
#   stall PATH GIVEUP_S               the same request's params and 3 of its 10 body bytes,
#                                     then nothing; prints "closed without a response",
#                                     "response: ...", or "open" after GIVEUP_S
#   behind PATH PAUSE_S               two connections B, A; A sends the slow request (as
#                                     slow), B its whole request while the worker reads
#                                     A; prints "a: " and "b: " with each one's answer
import errno, os, select, socket, struct, sys, time


def now_ms():
    return int(time.time() * 1000)


def record(rtype, content, rid=1):
    return struct.pack(">BBHHBB", 1, rtype, rid, len(content), 0, 0) + content


def nv(name, value):
    out = b""
    for s in (name, value):
        n = len(s)
        out += bytes([n]) if n < 128 else struct.pack(">I", n | 0x80000000)
    return out + name + value


def request_parts(body_len):
    params = b"".join(nv(k.encode(), v.encode()) for k, v in (
        ("REQUEST_METHOD", "GET"), ("REQUEST_URI", "/v1/health"),
        ("CONTENT_LENGTH", str(body_len)), ("SERVER_PROTOCOL", "HTTP/1.1")))
    begin = record(1, struct.pack(">HB5x", 1, 0))
    return begin + record(4, params), record(4, b""), b"x" * body_len


def read_response(s, giveup):
    """(stdout bytes, closed?) reading records until END_REQUEST or EOF."""
    s.settimeout(giveup)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        return None, False
    except ConnectionResetError:
        pass
    out, i = b"", 0
    while i + 8 <= len(data):
        _, rtype, _, clen, plen, _ = struct.unpack(">BBHHBB", data[i:i + 8])
        if rtype == 6:
            out += data[i + 8:i + 8 + clen]
        i += 8 + clen + plen
    return out, True


def describe(out):
    if not out:
        return "closed without a response"
    head, _, body = out.partition(b"\r\n\r\n")
    status = [l for l in head.split(b"\r\n") if l.lower().startswith(b"status:")]
    return "response: %s %s" % ((status[0] if status else b"(no status)").decode(),
                               body.decode(errors="replace").strip())


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "connect":
        try:
            os.lstat(path)
        except OSError as e:
            print("lstat " + errno.errorcode.get(e.errno, str(e.errno)))
            return
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            print("connected")
        except OSError as e:
            print(errno.errorcode.get(e.errno, str(e.errno)))
    elif cmd == "idle":
        count, mode, giveup = int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
        socks = []
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            if mode == "partial":
                s.sendall(b"\x01\x01\x00\x01")  # half of a BEGIN_REQUEST header
            socks.append(s)
        print("ready", flush=True)
        deadline, left = time.time() + giveup, list(socks)
        while left and time.time() < deadline:
            r, _, _ = select.select(left, [], [], max(0.0, deadline - time.time()))
            for s in r:
                try:
                    data = s.recv(4096)
                except ConnectionResetError:
                    data = b""
                if not data:
                    print("closed %d" % now_ms(), flush=True)
                    left.remove(s)
        for _ in left:
            print("open", flush=True)
    elif cmd == "slow":
        pause = float(sys.argv[3])
        head, end_params, body = request_parts(10)
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        pieces = [head[:5], head[5:], end_params + record(5, body[:4]),
                  record(5, body[4:]) + record(5, b"")]
        for i, p in enumerate(pieces):
            if i:
                time.sleep(pause)
            s.sendall(p)
        out, _ = read_response(s, 60)
        print(describe(out))
    elif cmd == "stall":
        giveup = float(sys.argv[3])
        head, end_params, body = request_parts(10)
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        s.sendall(head + end_params + record(5, body[:3]))
        out, closed = read_response(s, giveup)
        print(describe(out) if closed else "open")
    elif cmd == "behind":
        pause = float(sys.argv[3])
        head, end_params, body = request_parts(10)
        b = socket.socket(socket.AF_UNIX)
        b.connect(path)
        a = socket.socket(socket.AF_UNIX)
        a.connect(path)
        time.sleep(0.5)  # both accepted into the one worker's pool
        pieces = [head[:5], head[5:], end_params + record(5, body[:4]),
                  record(5, body[4:]) + record(5, b"")]
        a.sendall(pieces[0])
        time.sleep(0.2)  # the worker is reading A now
        b.sendall(head + end_params + record(5, body) + record(5, b""))
        for p in pieces[1:]:
            time.sleep(pause)
            a.sendall(p)
        out, _ = read_response(a, 60)
        print("a: " + describe(out))
        out, _ = read_response(b, 60)
        print("b: " + describe(out))


main()
PYEOF
fcgi() { "$PY" - "$@" < "$T_DIR/fcgi.py"; }
# fcgi_as_nobody GID ARGS...: the helper as uid 65534 with primary group GID and no others.
fcgi_as_nobody() {
	local gid=$1
	shift
	setpriv --reuid=65534 --regid="$gid" --clear-groups "$PY" - "$@" < "$T_DIR/fcgi.py"
}

ctx "socket permissions"
MASTER=$(api_master)
if [ -n "$SOCK_GROUP" ]; then
	WANT_GID=$(getent group "$SOCK_GROUP" | cut -d: -f3)
	WANT_WHAT="fcgi_socket_group $SOCK_GROUP"
else
	WANT_GID=$(awk '/^Gid:/ { print $3 }' "/proc/${MASTER:-0}/status" 2> /dev/null)
	WANT_WHAT="the API's own group"
fi
expect_eq "socket $API_SOCK mode" 660 "$(stat -c %a "$API_SOCK" 2> /dev/null)"
expect_eq "socket group is $WANT_WHAT (gid)" "${WANT_GID:-?}" "$(stat -c %g "$API_SOCK" 2> /dev/null)"
# A configured group shared by every "nobody" process would be as good as world.
[ -n "$SOCK_GROUP" ] && expect_true "fcgi_socket_group is not nogroup ($SOCK_GROUP)" \
	test "$(stat -c %g "$API_SOCK" 2> /dev/null)" != 65534
if [ "$(id -u)" != 0 ]; then
	skip "uid 65534 cannot connect" "not root: cannot switch to uid 65534"
	skip "uid 65534 with the socket's group connects" "not root"
elif ! command -v setpriv > /dev/null; then
	skip "uid 65534 cannot connect" "setpriv (util-linux) is missing"
	skip "uid 65534 with the socket's group connects" "setpriv is missing"
else
	# lstat succeeds first: the EACCES comes from the socket's mode, not a directory.
	expect_eq "uid 65534, gid 65534, no groups: connect() to the socket" EACCES \
		"$(fcgi_as_nobody 65534 connect "$API_SOCK" 2>&1)"
	expect_eq "uid 65534 with the socket's group ($(stat -c %G "$API_SOCK")) only: connect()" connected \
		"$(fcgi_as_nobody "$(stat -c %g "$API_SOCK")" connect "$API_SOCK" 2>&1)"
fi
# nginx's workers hold the socket's group (as root they are another user) or are the
# socket's owner (a stack run by an ordinary user).
NGX_MASTER=$(cat "$SANDBOX_VAR/run/nginx.pid" 2> /dev/null)
ngx_ok=0 ngx_n=0
for p in $(pgrep -P "${NGX_MASTER:-0}" 2> /dev/null); do
	ngx_n=$((ngx_n + 1))
	uid=$(awk '/^Uid:/ { print $3 }' "/proc/$p/status")
	gids=" $(awk '/^Gid:/ { print $3 } /^Groups:/ { $1 = ""; print }' "/proc/$p/status" | tr '\n' ' ') "
	if [ "$uid" = "$(stat -c %u "$API_SOCK")" ] || [[ $gids == *" $(stat -c %g "$API_SOCK") "* ]]; then
		ngx_ok=$((ngx_ok + 1))
	else
		note "nginx worker $p: uid $uid, gids$gids"
	fi
done
expect_true "nginx has workers ($ngx_n)" test "$ngx_n" -gt 0
expect_eq "nginx workers that own the socket or have its group" "$ngx_n" "$ngx_ok"
as '' req GET /v1/health
expect_status 200 "health through nginx with the 0660 socket"
req GET /v1/jobs
expect_status 200 "GET /v1/jobs through nginx with the 0660 socket"

ctx "socket group errors"
# A private config: another socket, one worker, a group that does not exist.
BAD_CONF=$T_DIR/badgroup.conf
BAD_SOCK=$T_DIR/badgroup.sock
{
	grep -Ev '^[[:space:]]*(fcgi_socket|fcgi_socket_group|api_workers)[[:space:]]*=' "$SANDBOX_CONFIG"
	printf 'fcgi_socket = %s\napi_workers = 1\nfcgi_socket_group = sbx-no-such-group-%s\n' "$BAD_SOCK" "$RUN"
} > "$BAD_CONF"
timeout 20 "$SANDBOX_BIN/sandbox-api" --config "$BAD_CONF" > "$T_DIR/badgroup.out" 2>&1
rc=$?
expect_eq "sandbox-api with an unknown fcgi_socket_group: exit status" 1 "$rc"
expect_true "its message names fcgi_socket_group and the group ($(head -c 300 "$T_DIR/badgroup.out"))" \
	grep -E "fcgi_socket_group: no group named 'sbx-no-such-group-$RUN'" "$T_DIR/badgroup.out"
expect_true "no socket is left behind" test ! -e "$BAD_SOCK"
# An API not in group root may not give its socket the group root: EPERM. As root,
# that API runs as uid 65534 without groups; otherwise as the invoking user.
NB_RUN=()
if [ "$(id -u)" = 0 ]; then
	command -v setpriv > /dev/null && NB_RUN=(setpriv --reuid=65534 --regid=65534 --clear-groups)
elif [[ " $(id -G) " != *" 0 "* ]]; then
	NB_RUN=(env)
fi
if [ "${#NB_RUN[@]}" = 0 ]; then
	skip "an API that may not chown its socket to the group refuses to start" \
		"root without setpriv, or a user in group root"
else
	NB_DIR=$(mktemp -d /tmp/sandbox-faults.XXXXXX)
	[ "$(id -u)" = 0 ] && chown 65534:65534 "$NB_DIR"
	printf 'fcgi_socket = %s/api.sock\napi_workers = 1\nfcgi_socket_group = root\n' "$NB_DIR" > "$NB_DIR/c.conf"
	chmod 0644 "$NB_DIR/c.conf"
	timeout 20 "${NB_RUN[@]}" "$SANDBOX_BIN/sandbox-api" --config "$NB_DIR/c.conf" > "$T_DIR/chown.out" 2>&1
	rc=$?
	expect_eq "sandbox-api not in group root, fcgi_socket_group = root: exit status" 1 "$rc"
	expect_true "its message names fcgi_socket_group and the chown error ($(head -c 300 "$T_DIR/chown.out"))" \
		grep -E "fcgi_socket_group: cannot give .* the group 'root'.*Operation not permitted" "$T_DIR/chown.out"
	expect_true "no socket is left behind" test ! -e "$NB_DIR/api.sock"
	rm -rf "$NB_DIR"
fi

# ========================================================= 7. read timeout

drops_with() { grep 'event=connection_dropped' "$API_LOG" 2> /dev/null | grep -c "reason=$1"; }

# pin_pool MODE: api_workers+2 raw connections (MODE idle: silent, they wait in the
# workers' connection pools and the HTTPS request after them is served at once;
# partial: half a record header, then silent, every worker blocks reading one and the
# request waits until the server drops them), all of them get closed by the server,
# and the same workers serve again.
pin_pool() {
	local mode=$1 reason=$2 n=$((NWORKERS + 2)) giveup=$((4 * READ_TIMEOUT + 30))
	local before_reason first closed open curl_end code i
	local -a workers_before workers_after
	ctx "read timeout: $n $mode connections"
	MASTER=$(api_master)
	mapfile -t workers_before < <(children "${MASTER:-0}")
	before_reason=$(drops_with "$reason")
	: > "$T_DIR/pin.out"
	fcgi idle "$API_SOCK" "$n" "$mode" "$giveup" > "$T_DIR/pin.out" 2>&1 &
	local pin_pid=$!
	poll 10 grep -q '^ready' "$T_DIR/pin.out"
	expect_true "$n raw connections are open ($(head -c 200 "$T_DIR/pin.out"))" grep -q '^ready' "$T_DIR/pin.out"
	# Queued behind all of them (the socket's backlog is FIFO).
	curl -sS --cacert "$SANDBOX_CACERT" --max-time $((giveup + 30)) -H "Authorization: Bearer $TOKEN" \
		-o "$T_DIR/pin.body" -w '%{http_code}' "$SANDBOX_URL/v1/jobs?limit=1" > "$T_DIR/pin.curl" 2>&1
	curl_end=$(now_ms)
	wait "$pin_pid"
	code=$(cat "$T_DIR/pin.curl")
	closed=$(grep -c '^closed' "$T_DIR/pin.out")
	open=$(grep -c '^open' "$T_DIR/pin.out")
	first=$(sed -n 's/^closed //p' "$T_DIR/pin.out" | sort -n | head -n 1)
	expect_eq "the HTTPS request behind them gets its answer (HTTP status)" 200 "$code"
	if [ "$mode" = idle ]; then
		# Silent connections wait in the workers' connection pools (app/http/api_main.c):
		# they hold no worker, so the request is served at once.
		expect_true "it was answered before the server dropped any of them (silent connections hold no worker: first drop ${first:-none}, answer $curl_end)" \
			test -n "$first" -a "$curl_end" -lt "${first:-0}"
	else
		expect_true "it was answered only after the server dropped the first of them (every worker reading a partial header: first drop ${first:-none}, answer $curl_end)" \
			test -n "$first" -a "$curl_end" -ge "${first:-0}"
	fi
	expect_eq "connections the server closed" "$n" "$closed"
	expect_eq "connections still open when the helper gave up" 0 "$open"
	expect_true "api.log: $n more event=connection_dropped reason=$reason lines ($(($(drops_with "$reason") - before_reason)))" \
		test $(($(drops_with "$reason") - before_reason)) -ge "$n"
	grep 'event=connection_dropped' "$API_LOG" | tail -n 1 | sed 's/^/#   /'
	mapfile -t workers_after < <(children "${MASTER:-0}")
	expect_eq "the same workers afterwards (no worker died or was replaced)" \
		"${workers_before[*]}" "${workers_after[*]}"
	all_200 afterwards
}

if [ "$(id -u)" != 0 ] && [ "$(stat -c %u "$API_SOCK")" != "$(id -u)" ]; then
	skip "read timeout" "cannot connect to the 0660 socket as uid $(id -u)"
else
	note "api_read_timeout_seconds = $READ_TIMEOUT, api_workers = $NWORKERS"
	pin_pool idle idle
	pin_pool partial read_timeout

	ctx "read timeout: slow but active"
	# Four pieces, each pause shorter than the timeout, together longer than it.
	pause=$(awk -v t="$READ_TIMEOUT" 'BEGIN { printf "%.2f", t * 0.6 }')
	out=$(fcgi slow "$API_SOCK" "$pause" 2>&1)
	expect_true "a raw client pausing ${pause}s between pieces gets its answer ($out)" \
		eval '[[ $out == "response: Status: 200 "* && $out == *"\"status\":\"ok\""* ]]'

	ctx "read timeout: stalled body"
	n0=$(drops_with body_timeout)
	out=$(fcgi stall "$API_SOCK" $((4 * READ_TIMEOUT + 30)) 2>&1)
	expect_eq "a client that stops inside its body is dropped without an answer" \
		"closed without a response" "$out"
	expect_true "api.log: event=connection_dropped reason=body_timeout" \
		test $(($(drops_with body_timeout) - n0)) -ge 1

	ctx "read timeout: a request that came while the worker served another"
	# One worker: while it reads A's slow request (longer than the timeout in all), B's
	# whole request arrives on a connection it accepted before. B was not idle: it gets
	# its answer (it used to be closed as idle right after A: nginx's 502).
	BH_DIR=$(mktemp -d /tmp/sandbox-faults.XXXXXX)
	{
		grep -Ev '^[[:space:]]*(fcgi_socket|api_workers|api_wake_socket)[[:space:]]*=' "$SANDBOX_CONFIG"
		printf 'fcgi_socket = %s/api.sock\napi_workers = 1\n' "$BH_DIR"
	} > "$BH_DIR/c.conf"
	"$SANDBOX_BIN/sandbox-api" --config "$BH_DIR/c.conf" > "$BH_DIR/api.log" 2>&1 &
	BH_PID=$!
	poll 10 test -S "$BH_DIR/api.sock"
	expect_true "a one-worker API on its own socket ($(head -c 300 "$BH_DIR/api.log"))" test -S "$BH_DIR/api.sock"
	if [ -S "$BH_DIR/api.sock" ]; then
		pause=$(awk -v t="$READ_TIMEOUT" 'BEGIN { printf "%.2f", t * 0.6 }')
		fcgi behind "$BH_DIR/api.sock" "$pause" > "$T_DIR/behind.out" 2>&1
		expect_true "A, slow (3 pauses of ${pause}s), gets its answer ($(head -n 1 "$T_DIR/behind.out"))" \
			grep -q '^a: response: Status: 200 .*"status":"ok"' "$T_DIR/behind.out"
		expect_true "B, sent while the worker read A, gets its answer ($(sed -n 2p "$T_DIR/behind.out"))" \
			grep -q '^b: response: Status: 200 .*"status":"ok"' "$T_DIR/behind.out"
		expect_eq "no connection dropped as idle" 0 "$(grep -c 'event=connection_dropped' "$BH_DIR/api.log")"
	fi
	kill "$BH_PID" 2> /dev/null
	wait "$BH_PID" 2> /dev/null
	rm -rf "$BH_DIR"

	ctx "read timeout: long-poll through nginx"
	# A request the worker holds longer than the timeout without reading anything is
	# not a silent client: it must get its answer.
	req POST /v1/jobs '{"command":"sleep 30","limits":{"wall_seconds":40}}'
	expect_status 202 "submit a job to wait on"
	LPT_JOB=$(jq -r '.id // empty' "$BODY")
	if [ -n "$LPT_JOB" ]; then
		req GET "/v1/jobs/$LPT_JOB?wait=$((READ_TIMEOUT + 2))"
		expect_status 200 "GET ?wait=$((READ_TIMEOUT + 2)) (longer than the read timeout): 200"
		expect_json .id "$LPT_JOB"
		held=$(grep 'event=request' "$API_LOG" | grep -F "path=/v1/jobs/$LPT_JOB" | grep 'status=200' |
			tail -n 1 | sed -n 's/.* ms=\([0-9]*\).*/\1/p')
		expect_true "the API held it longer than the read timeout without dropping it (${held:-?} ms)" \
			test "${held:-0}" -ge $((READ_TIMEOUT * 1000))
		req POST "/v1/jobs/$LPT_JOB/cancel"
		expect_status 200 "cancel the sleeping job"
	fi
fi
