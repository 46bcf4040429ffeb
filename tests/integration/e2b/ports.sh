# shellcheck shell=bash
# Sourced by tests/integration/e2b.sh: sandbox ports (docs/E2B.md "Ports";
# sandbox-runner/session/sports.c, app/e2b/eports.c, nginx's port server).
#   1. https://<port>-<id>.<domain>/ reaches a python http.server inside the sandbox
#      with the traffic token or the owner's key, never without (401 JSON), nor with
#      another key or a wrong token; neither credential reaches the sandboxed server,
#      Authorization does (it is the application's own)
#   2. a port nobody listens on: 502 in E2B's shape; the host's own loopback services
#      (nginx's port, the database's) are not reachable through it (502 too); another
#      session cannot reach this session's port
#   3. a WebSocket through the port (echo), with the traffic token
#   4. a public sandbox (network.allowPublicTraffic) needs no credential; a network
#      sandbox's port works the same way
#   5. GET /v1/sessions/{id}/ports/{port} (REST: the URL); after kill: 403, the helper's
#      socket gone
#   6. the SDK: getHost(port) and an HTTPS request to it (tests/clients/e2b-ports.mjs)

mkkey PA e2b-ports "t-$RUN" user "pa-$RUN"
mkkey PB e2b-ports "t-$RUN" user "pb-$RUN"
PORTS_DIR=$(sed -n 's/^session_ports_dir = //p' "$SANDBOX_CONFIG")
NGINX_PORT=${E2B_API_URL##*:}

# po_get PORT ID PATH [curl args]: an HTTPS request to the sandbox's port through nginx
# (curl resolves *.localhost to loopback itself): $PO_STATUS, $PO_OUT.
PO_OUT=$T_DIR/port.out
po_get() {
	local port=$1 id=$2 path=$3
	shift 3
	PO_STATUS=$(curl -sS --cacert "$SANDBOX_CACERT" -o "$PO_OUT" -w '%{http_code}' \
		--max-time "$((20 * TSCALE))" "$@" "https://$port-$id.$E2B_DOMAIN$path" 2> "$PO_OUT.err") ||
		PO_STATUS=000
}

# po_cmd KEY ID COMMAND: a background command in the sandbox (the REST session API).
po_cmd() {
	TOKEN=$1 req POST "/v1/sessions/$2/commands" "$(jq -nc --arg c "$3" '{command: $c, timeout_seconds: 0}')"
}

ctx "ports: a private sandbox"
e2b_create "$PA_TOK"
P_ID=$E2B_ID
P_TRAFFIC=$(jq -r '.trafficAccessToken // empty' "$BODY")
expect_true "create answers a trafficAccessToken (64 hex)" grep -Eq '^[0-9a-f]{64}$' <<< "$P_TRAFFIC"
expect_eq "the session's ports are private" 0 "$(sql "SELECT ports_public FROM sessions WHERE id = '$P_ID'")"
expect_eq "only the token's hash is stored" "1 0" \
	"$(sql "SELECT CONCAT_WS(' ', COUNT(*), SUM(token_hash = UNHEX('$P_TRAFFIC'))) FROM session_traffic_tokens WHERE session_id = '$P_ID'")"
expect_true "the helper's socket exists, 0660" test "$(stat -c %a "$PORTS_DIR/$P_ID.sock" 2> /dev/null)" = 660

# a server that answers with the request's header lines, and a static one
po_cmd "$PA_TOK" "$P_ID" "mkdir -p www && echo port-marker-$RUN > www/index.txt && cd www && exec python3 -m http.server 8000 --bind 127.0.0.1"
po_cmd "$PA_TOK" "$P_ID" "cat > hdr.py << 'EOF'
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = ''.join('%s: %s\n' % (k.lower(), v) for k, v in self.headers.items()).encode()
        self.send_response(200); self.send_header('Content-Length', str(len(b))); self.end_headers(); self.wfile.write(b)
http.server.HTTPServer(('127.0.0.1', 8001), H).serve_forever()
EOF
exec python3 hdr.py"
for _ in $(seq 1 $((100 * TSCALE))); do
	po_get 8000 "$P_ID" /index.txt -H "X-API-KEY: $PA_TOK"
	[ "$PO_STATUS" = 200 ] && break
	sleep 0.2
done

ctx "ports: access"
po_get 8000 "$P_ID" /index.txt -H "e2b-traffic-access-token: $P_TRAFFIC"
expect_eq "the traffic token: 200 and the file" "200 port-marker-$RUN" "$PO_STATUS $(cat "$PO_OUT")"
po_get 8000 "$P_ID" /index.txt -H "X-API-KEY: $PA_TOK"
expect_eq "the owner's key (X-API-KEY): 200 and the file" "200 port-marker-$RUN" "$PO_STATUS $(cat "$PO_OUT")"
po_get 8000 "$P_ID" /index.txt
expect_eq "no credential: 401, E2B's shape" "401 401" "$PO_STATUS $(jq -r .code "$PO_OUT" 2> /dev/null)"
po_get 8000 "$P_ID" /index.txt -H "X-API-KEY: $PB_TOK"
expect_eq "another identity's key: 401" 401 "$PO_STATUS"
po_wrong=${P_TRAFFIC%?}$([ "${P_TRAFFIC: -1}" = 0 ] && echo 1 || echo 0)
po_get 8000 "$P_ID" /index.txt -H "e2b-traffic-access-token: $po_wrong"
expect_eq "a wrong traffic token: 401" 401 "$PO_STATUS"
po_get 8000 "$P_ID" /index.txt -H "e2b-traffic-access-token: $E2B_TOK"
expect_eq "the envd token is no traffic token: 401" 401 "$PO_STATUS"
po_get 8001 "$P_ID" /h -H "X-API-KEY: $PA_TOK" -H "e2b-traffic-access-token: $P_TRAFFIC" \
	-H 'Authorization: Bearer app-own-secret'
expect_eq "the credentials stay out of the sandbox, Authorization goes in" "200 0 0 1 8001" \
	"$PO_STATUS $(grep -c '^x-api-key:' "$PO_OUT") $(grep -c '^e2b-traffic-access-token:' "$PO_OUT") $(grep -c '^authorization: Bearer app-own-secret$' "$PO_OUT") $(sed -n 's/^x-sandbox-port: //p' "$PO_OUT")"

ctx "ports: what is not reachable"
po_get 8002 "$P_ID" / -H "X-API-KEY: $PA_TOK"
expect_eq "a port nobody listens on: 502, E2B's message" "502 The sandbox is running but port is not open" \
	"$PO_STATUS $(jq -r .message "$PO_OUT" 2> /dev/null)"
po_get "$NGINX_PORT" "$P_ID" / -H "X-API-KEY: $PA_TOK"
expect_eq "the host's nginx port, asked through the sandbox: not the host's (502)" 502 "$PO_STATUS"
po_get 3306 "$P_ID" / -H "X-API-KEY: $PA_TOK"
expect_eq "the database port: 502" 502 "$PO_STATUS"
po_get 49983 "$P_ID" /health -H "X-API-KEY: $PA_TOK" -H "X-Access-Token: $E2B_TOK"
expect_true "port 49983 is envd's, never proxied ($PO_STATUS)" test "$PO_STATUS" != 200 -o "$(head -c 1 "$PO_OUT")" != p
e2b_create "$PA_TOK"
P_ID2=$E2B_ID
po_cmd "$PA_TOK" "$P_ID2" "python3 -c \"import socket, sys; s = socket.socket(); s.settimeout(3); sys.exit(0 if s.connect_ex(('127.0.0.1', 8000)) else 7)\""
po_cid=$(jq -r '.id // empty' "$BODY")
TOKEN=$PA_TOK req GET "/v1/sessions/$P_ID2/commands/$po_cid?wait=20"
expect_json '[.status, .exit_code] | @json' '["succeeded",0]' "another session cannot reach this session's port"
e2b_kill "$PA_TOK" "$P_ID2"

ctx "ports: WebSocket"
po_cmd "$PA_TOK" "$P_ID" "cat > ws.py << 'EOF'
import base64, hashlib, socket
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('127.0.0.1', 8765)); srv.listen(4)
while True:
    c, _ = srv.accept(); head = b''
    while b'\r\n\r\n' not in head: head += c.recv(4096)
    key = [l.split(b':', 1)[1].strip() for l in head.split(b'\r\n') if l.lower().startswith(b'sec-websocket-key:')][0]
    acc = base64.b64encode(hashlib.sha1(key + b'258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest())
    c.sendall(b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ' + acc + b'\r\n\r\n')
    h = c.recv(2); n = h[1] & 127; mask = c.recv(4); data = bytearray(c.recv(n))
    for i in range(n): data[i] ^= mask[i % 4]
    c.sendall(bytes([0x81, n]) + bytes(data)); c.close()
EOF
exec python3 ws.py"
sleep 1
ws_out=$(python3 - "$NGINX_PORT" "8765-$P_ID.${E2B_DOMAIN%:*}" "$SANDBOX_CACERT" "$P_TRAFFIC" << 'EOF'
import os, socket, ssl, sys, time
port, host, ca, tok = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
ctx = ssl.create_default_context(cafile=ca)
for attempt in range(50):
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname=host)
    s.sendall(("GET / HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
               "e2b-traffic-access-token: %s\r\n\r\n" % (host, port, tok)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(4096)
        if not d: break
        head += d
    if head.startswith(b"HTTP/1.1 101"):
        break
    s.close(); time.sleep(0.2)
print(head.split(b"\r\n")[0].decode())
msg = b"hello-ws"; mask = os.urandom(4)
s.sendall(bytes([0x81, 0x80 | len(msg)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(msg)))
f = s.recv(2); print(s.recv(f[1] & 127).decode())
EOF
)
expect_eq "a WebSocket upgrade and an echo through the port" "HTTP/1.1 101 Switching Protocols|hello-ws" "$(paste -sd'|' <<< "$ws_out")"

ctx "ports: public"
e2b_create "$PA_TOK" '{"templateID":"base","network":{"allowPublicTraffic":true}}'
P_PUB=$E2B_ID
expect_eq "a public sandbox: ports_public, no traffic token" "1 null" \
	"$(sql "SELECT ports_public FROM sessions WHERE id = '$P_PUB'") $(jq -r '.trafficAccessToken' "$BODY")"
po_cmd "$PA_TOK" "$P_PUB" "mkdir -p w && echo public-$RUN > w/p.txt && cd w && exec python3 -m http.server 8000 --bind 127.0.0.1"
for _ in $(seq 1 $((100 * TSCALE))); do
	po_get 8000 "$P_PUB" /p.txt
	[ "$PO_STATUS" = 200 ] && break
	sleep 0.2
done
expect_eq "no credential needed" "200 public-$RUN" "$PO_STATUS $(cat "$PO_OUT")"
e2b_req "$PA_TOK" POST /v2/sandboxes '{"templateID":"base","network":{"allowOut":["1.1.1.1"]}}'
expect_e2b 400 'network'
e2b_kill "$PA_TOK" "$P_PUB"

ctx "ports: a network sandbox"
mkkey PN e2b-ports "t-$RUN" user "pn-$RUN" --allow-network
e2b_create "$PN_TOK" '{"templateID":"base","allow_internet_access":true}'
P_NET=$E2B_ID
expect_eq "a network session" 1 "$(sql "SELECT network FROM sessions WHERE id = '$P_NET'")"
po_cmd "$PN_TOK" "$P_NET" "mkdir -p w && echo net-$RUN > w/n.txt && cd w && exec python3 -m http.server 8000 --bind 0.0.0.0"
for _ in $(seq 1 $((100 * TSCALE))); do
	po_get 8000 "$P_NET" /n.txt -H "X-API-KEY: $PN_TOK"
	[ "$PO_STATUS" = 200 ] && break
	sleep 0.2
done
expect_eq "its port through the helper, the same way" "200 net-$RUN" "$PO_STATUS $(cat "$PO_OUT")"
e2b_kill "$PN_TOK" "$P_NET"

ctx "ports: REST and the end"
TOKEN=$PA_TOK req GET "/v1/sessions/$P_ID/ports/8000"
expect_json '[.url, .public] | @json' "[\"https://8000-$P_ID.$E2B_DOMAIN/\",false]"
TOKEN=$PB_TOK req GET "/v1/sessions/$P_ID/ports/8000"
expect_status 404 "another identity's session: 404"
TOKEN=$PA_TOK req GET "/v1/sessions/$P_ID/ports/49983"
expect_error 400 invalid_request port

ctx "ports: the SDK"
e2b_sdk_run "$REPO/tests/clients/e2b-ports.mjs" "e2b SDK ports" E2B_API_KEY="$PA_TOK"

ctx "ports: after kill"
e2b_kill "$PA_TOK" "$P_ID"
for _ in $(seq 1 $((50 * TSCALE))); do
	[ -e "$PORTS_DIR/$P_ID.sock" ] || break
	sleep 0.1
done
po_get 8000 "$P_ID" /index.txt -H "X-API-KEY: $PA_TOK"
expect_eq "a killed sandbox's port: 403" 403 "$PO_STATUS"
expect_true "its socket is gone" test ! -e "$PORTS_DIR/$P_ID.sock"
