#!/usr/bin/env bash
# tests/integration/hooks.sh: job webhooks (issue 12, point 4) over real HTTPS through
# nginx with the real runner, against a local HTTPS receiver started here (python3
# http.server with ssl, its certificate signed by a CA made here with openssl) that
# records every request it gets.
#
#   1. callback_url at submit: http:// (callback_allow_http = 0), userinfo, a bad port,
#      over 2048 bytes: 400 naming callback_url.
#   2. With the stack's runner (no callback_allow): 127.0.0.1, localhost (DNS, then the
#      check) and 169.254.169.254 are refused, the receiver is never connected, and the
#      job's callback says failed with a reason naming the address class.
#   3. With a runner on a config copy (callback_allow = 127.0.0.1/32, small backoff,
#      3 attempts, the test CA): delivered once with a valid signature, body = the job
#      object; 500, 500, 200 -> delivered on attempt 3; always 500 -> failed after 3;
#      a 302 is not followed; a job cancelled while queued gets its callback too; two
#      runners send each delivery once.
#      Each attempt in callback.attempts_log (500, 500, 200 in order). IPv6: a receiver
#      on [::1] is refused by default (loopback, no connection), delivered when
#      callback_allow lists ::1; fe80::1, fc00::1, ::ffff:127.0.0.1 and
#      64:ff9b::a9fe:a9fe are refused by their class without a connection.
#      `keys webhook-secret`: a key whose secret was cleared fails with the reason; a
#      new secret signs the next delivery (the old ones do not verify it).
#      GET /metrics: deliveries by state as the table counts them, the attempts
#      counters grown exactly by this suite's attempts. Purge takes a job's attempts.
#      A runner whose runner_deliver_path is missing logs it once (rate-limited).
#   4. The webhook secrets: in `keys create` / `keys webhook-secret` output once, in no
#      log file of the stack.
#
# Needs root (it stops the stack's runner and starts its own); the stack's runner is
# running again at the end, also on failure.
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env --root "the suite starts a runner of its own" SANDBOX_TOKEN
RUN="$RANDOM$RANDOM"
NS="hooks-$RUN"
MY_RUNNER=

restore() {
	[ -n "$MY_RUNNER" ] && kill -TERM "$MY_RUNNER" 2> /dev/null && poll 10 fails alive "$MY_RUNNER"
	[ -n "${RECV_PID:-}" ] && kill "$RECV_PID" 2> /dev/null
	bash "$STACK" start-runner > /dev/null 2>&1 || echo "# could not restart the stack's runner"
}
at_exit restore

# ---------------------------------------------------------------- the receiver
# The runner's delivery pass runs as nobody: the CA must be readable by it.
chmod 711 "$T_DIR"
R=$T_DIR/recv
mkdir -m 755 "$R"
(
	cd "$R" || exit 1
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=hooks test CA $RUN" \
		-keyout ca.key -out ca.pem -addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign
	openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout srv.key -out srv.csr
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n' > ext
	openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
		-extfile ext -out srv.pem
	chmod 644 ca.pem
) > "$T_DIR/openssl.log" 2>&1 || { echo "Bail out! openssl: $(tail -n 3 "$T_DIR/openssl.log")"; exit 2; }

cat > "$R/recv.py" <<'PY'
import http.server, json, socket, ssl, sys, threading
d = sys.argv[1]
v6 = len(sys.argv) > 2 and sys.argv[2] == "6"
counts = {}
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode("utf-8", "replace")
        path = self.path.split("?")[0]
        with lock:
            counts[path] = counts.get(path, 0) + 1
            c = counts[path]
            with open(d + "/log.jsonl", "a") as f:
                f.write(json.dumps({"path": path, "n": c, "body": body,
                    "sig": self.headers.get("X-Sandbox-Signature"),
                    "event": self.headers.get("X-Sandbox-Event"),
                    "delivery": self.headers.get("X-Sandbox-Delivery"),
                    "ctype": self.headers.get("Content-Type")}) + "\n")
        code = 200
        if path.startswith("/flaky") and c <= 2: code = 500
        if path.startswith("/never"): code = 500
        if path.startswith("/redir"): code = 302
        self.send_response(code)
        if code == 302: self.send_header("Location", "/other")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
class S(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6 if v6 else socket.AF_INET
    def verify_request(self, request, client_address):
        # every accepted connection, whatever follows: "never connected" is checked here
        with lock:
            with open(d + "/conns", "a") as f:
                f.write(("6" if v6 else "4") + "\n")
        return True
s = S(("::1" if v6 else "127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(d + "/srv.pem", d + "/srv.key")
s.socket = ctx.wrap_socket(s.socket, server_side=True)
open(d + ("/port6" if v6 else "/port"), "w").write(str(s.server_address[1]))
s.serve_forever()
PY
: > "$R/log.jsonl"
: > "$R/conns"
python3 "$R/recv.py" "$R" > "$T_DIR/recv.err" 2>&1 &
RECV_PID=$!
poll 5 test -s "$R/port" || { echo "Bail out! the receiver did not start: $(cat "$T_DIR/recv.err")"; exit 2; }
PORT=$(cat "$R/port")
HOOK="https://127.0.0.1:$PORT"
# The same receiver on [::1] (the machine has ::1 on lo; else the IPv6 checks skip).
python3 "$R/recv.py" "$R" 6 > "$T_DIR/recv6.err" 2>&1 &
RECV6_PID=$!
at_exit 'kill "$RECV6_PID" 2> /dev/null'
PORT6=
poll 5 test -s "$R/port6" && PORT6=$(cat "$R/port6")
HOOK6="https://[::1]:${PORT6:-1}"
conns() { wc -l < "$R/conns" | tr -d ' '; }
got() { jq -r --arg p "$1" 'select(.path == $p)' "$R/log.jsonl" | jq -s length; }
cb_state() { sql "SELECT state FROM job_callbacks WHERE job_id = '$1'"; }
_cb_ended() { [[ $(cb_state "$1") =~ ^(delivered|failed)$ ]]; }
cb_wait() { poll "${2:-20}" _cb_ended "$1"; }

# ---------------------------------------------------------------- keys
ctx "keys create"
OUT=$(ctl keys create --namespace "$NS" --tenant t1 --subject-type user --subject-id alice --json)
TOKEN=$(jq -r .token <<< "$OUT")
KEY_ID=$(jq -r .id <<< "$OUT")
SECRET=$(jq -r '.webhook_secret // empty' <<< "$OUT")
expect_true "--json shows webhook_secret (64 hex)" grep -Eq '^[0-9a-f]{64}$' <<< "$SECRET"
OUT2=$(ctl keys create --namespace "$NS" --tenant t1 --subject-type user --subject-id bob)
expect_true "plain output shows webhook_secret once" test "$(grep -c '^webhook_secret: [0-9a-f]\{64\}$' <<< "$OUT2")" = 1
expect_true "keys list does not show it" fails grep -qF "$SECRET" <<< "$(ctl keys list --json 2>&1)"
at_exit "sql \"UPDATE jobs SET state = 'cancelled', finished_at = NOW(3)
	WHERE identity_namespace = '$NS' AND state IN ('queued', 'running');\""

# ---------------------------------------------------------------- 1. at submit
ctx "submit"
req POST /v1/jobs "{\"command\":\"true\",\"callback_url\":\"http://127.0.0.1:$PORT/x\"}"
expect_error 400 invalid_request callback_url
expect_true "http: the message says https" grep -q https "$BODY"
req POST /v1/jobs '{"command":"true","callback_url":"https://u:p@example.com/"}'
expect_error 400 invalid_request callback_url
req POST /v1/jobs '{"command":"true","callback_url":"https://example.com:70000/"}'
expect_error 400 invalid_request callback_url
req POST /v1/jobs '{"command":"true","callback_url":"ftp://example.com/"}'
expect_error 400 invalid_request callback_url
req POST /v1/jobs '{"command":"true","callback_url":7}'
expect_error 400 invalid_request callback_url
LONG="https://example.com/$(head -c 2100 /dev/zero | tr '\0' a)"
req POST /v1/jobs "{\"command\":\"true\",\"callback_url\":\"$LONG\"}"
expect_error 400 invalid_request callback_url
submit '{"command":"true"}'
await "$JOB" 60
expect_json '.callback' null "no callback_url: callback null"

# ---------------------------------------------------------------- 2. refused
ctx "refused"
stack start-runner > /dev/null 2>&1 || { echo "Bail out! tests/stack.sh start-runner failed"; exit 2; }
declare -A REFJ
# IPv6: [::1] (the receiver listens there), link-local, ULA, IPv4-mapped loopback and
# the NAT64 form of the metadata address: each refused by its class, never connected.
declare -A REF=(
	[loopback]="$HOOK/refused-ip"
	[loopback-name]="https://localhost:$PORT/refused-name"
	[metadata]="https://169.254.169.254/latest"
	[loopback-v6]="$HOOK6/refused-v6"
	[link-local-v6]="https://[fe80::1]/x"
	[private-v6]="https://[fc00::1]:$PORT/x"
	[loopback-mapped]="https://[::ffff:127.0.0.1]:$PORT/refused-mapped"
	[metadata-nat64]="https://[64:ff9b::a9fe:a9fe]/latest"
)
for k in "${!REF[@]}"; do
	submit "{\"command\":\"echo hi\",\"callback_url\":\"${REF[$k]}\"}"
	REFJ[$k]=$JOB
done
for k in "${!REF[@]}"; do
	j=${REFJ[$k]}
	cls=${k%-name}
	cls=${cls%-v6}
	cls=${cls%-mapped}
	cls=${cls%-nat64}
	await "$j" 60
	cb_wait "$j" 20
	req GET "/v1/jobs/$j"
	expect_json .callback.url "${REF[$k]}" "$k: callback.url"
	expect_json .callback.state failed "$k: state failed"
	expect_json .callback.attempts 0 "$k: never attempted"
	expect_json '.callback.attempts_log' '[]' "$k: no attempt in the log"
	expect_json '.callback.last_error | test("^refused: destination address is .*'"$cls"'")' true "$k: reason names $cls"
done
expect_eq "refused: the receiver was never connected" 0 "$(jq -s length "$R/log.jsonl")"
expect_eq "refused: no connection reached either receiver (IPv4, IPv6)" 0 "$(conns)"
[ -n "$PORT6" ] || skip "[::1] receiver" "could not listen on [::1]: $(tail -n 1 "$T_DIR/recv6.err")"

# ---------------------------------------------------------------- 3. delivered
ctx "cancelled while queued"
stack stop-runner > /dev/null 2>&1
submit "{\"command\":\"echo never\",\"callback_url\":\"$HOOK/cancelled\"}"
CJ=$JOB
req POST "/v1/jobs/$CJ/cancel" ''
expect_json .status cancelled
expect_eq "row made by the cancel" pending "$(cb_state "$CJ")"

CONF=$T_DIR/hooks.conf
cp "$SANDBOX_CONFIG" "$CONF"
cat >> "$CONF" <<CONF_EOF
callback_allow = 127.0.0.1/32, ::1
callback_backoff_ms = 200
callback_max_attempts = 3
callback_cacert = $R/ca.pem
CONF_EOF
(cd "$T_DIR" && exec setsid "$RUNNER" --config "$CONF" < /dev/null >> "$T_DIR/hooks-runner.log" 2>&1) &
MY_RUNNER=$!
sleep "$(tscale 0.3)" # long enough for a bad config to have ended it
expect_true "a runner with callback_allow runs" alive "$MY_RUNNER"

cb_wait "$CJ" 20
req GET "/v1/jobs/$CJ"
expect_json .callback.state delivered
expect_eq "cancelled: body status" cancelled \
	"$(jq -r 'select(.path == "/cancelled") | .body | fromjson | .status' "$R/log.jsonl")"

ctx "delivered"
# attempts counters before the deliveries below (checked in "metrics")
metric() { sed -n "s/^$1 //p" "$2"; }
as "" req GET /metrics
cp "$BODY" "$T_DIR/metrics-before"
submit "{\"command\":\"echo hello; exit 3\",\"callback_url\":\"$HOOK/ok?x=1\"}"
OJ=$JOB
submit "{\"command\":\"true\",\"callback_url\":\"$HOOK/flaky\"}"
FJ=$JOB
submit "{\"command\":\"true\",\"callback_url\":\"$HOOK/never\"}"
NJ=$JOB
submit "{\"command\":\"true\",\"callback_url\":\"$HOOK/redir\"}"
RJ=$JOB
await "$OJ" 60
cb_wait "$OJ" 20
req GET "/v1/jobs/$OJ"
expect_json .callback.state delivered
expect_json .callback.attempts 1
expect_json .callback.last_status 200
expect_json '.callback.delivered_at | test("Z$")' true
expect_eq "received once" 1 "$(got /ok)"
REC=$(jq -c 'select(.path == "/ok")' "$R/log.jsonl" | head -n 1)
expect_eq "X-Sandbox-Event" job.finished "$(jq -r .event <<< "$REC")"
expect_true "X-Sandbox-Delivery is a UUID" grep -Eq "$UUID_RE" <<< "$(jq -r .delivery <<< "$REC")"
expect_eq "Content-Type" application/json "$(jq -r .ctype <<< "$REC")"
expect_eq "body: id" "$OJ" "$(jq -r '.body | fromjson | .id' <<< "$REC")"
expect_eq "body: status" failed "$(jq -r '.body | fromjson | .status' <<< "$REC")"
expect_eq "body: exit_code" 3 "$(jq -r '.body | fromjson | .result.exit_code' <<< "$REC")"
expect_eq "body: stdout" hello "$(jq -r '.body | fromjson | .result.stdout' <<< "$REC" | tr -d '\n')"
VERIFY=$(jq -c . <<< "$REC" | SECRET=$SECRET python3 -c '
import hmac, hashlib, json, os, sys, time
r = json.loads(sys.stdin.read())
parts = dict(p.split("=", 1) for p in r["sig"].split(","))
t = int(parts["t"])
mac = hmac.new(os.environ["SECRET"].encode(), (parts["t"] + "." + r["body"]).encode(), hashlib.sha256).hexdigest()
print("ok" if hmac.compare_digest(mac, parts["v1"]) and abs(time.time() - t) < 300 else "bad")')
expect_eq "X-Sandbox-Signature verifies with the key's secret" ok "$VERIFY"
BAD=$(jq -c . <<< "$REC" | python3 -c '
import hmac, hashlib, json, sys
r = json.loads(sys.stdin.read())
p = dict(x.split("=", 1) for x in r["sig"].split(","))
print("ok" if hmac.new(b"wrong", (p["t"] + "." + r["body"]).encode(), hashlib.sha256).hexdigest() == p["v1"] else "bad")')
expect_eq "another secret does not verify" bad "$BAD"

ctx "retries"
cb_wait "$FJ" 30
req GET "/v1/jobs/$FJ"
expect_json .callback.state delivered "500, 500, 200: delivered"
expect_json .callback.attempts 3 "delivered on attempt 3"
expect_eq "flaky: received 3 times" 3 "$(got /flaky)"
expect_eq "flaky: one delivery id for all attempts" 1 \
	"$(jq -r 'select(.path == "/flaky") | .delivery' "$R/log.jsonl" | sort -u | wc -l)"
expect_json '[.callback.attempts_log[].status] | map(tostring) | join(",")' "500,500,200" \
	"attempts_log: statuses 500, 500, 200 in order"
expect_json '[.callback.attempts_log[].attempt] | map(tostring) | join(",")' "1,2,3" \
	"attempts_log: attempts 1, 2, 3"
expect_json '[.callback.attempts_log[].outcome] | join(",")' "http_status,http_status,delivered" \
	"attempts_log: outcome classes"
expect_json '[.callback.attempts_log[].error] | map(tostring) | join(",")' \
	"receiver answered HTTP 500,receiver answered HTTP 500,null" "attempts_log: error texts"
expect_json '[.callback.attempts_log[] | (.duration_ms | type == "number" and . >= 0)
	and (.at | test("^[0-9-]{10}T[0-9:.]{12}Z$"))] | all' true "attempts_log: at and duration_ms"
expect_json '[.callback.attempts_log[].at] | . == sort' true "attempts_log: times in order"
expect_eq "attempts rows in the table" 3 \
	"$(sql "SELECT COUNT(*) FROM job_callback_attempts WHERE job_id = '$FJ'")"
cb_wait "$NJ" 30
req GET "/v1/jobs/$NJ"
expect_json .callback.state failed "always 500: failed"
expect_json .callback.attempts 3 "after callback_max_attempts"
expect_json .callback.last_status 500
expect_json .callback.delivered_at null
expect_json '.callback.attempts_log | length' 3 "never: attempts_log bounded by callback_max_attempts"
expect_eq "never: received 3 times" 3 "$(got /never)"
cb_wait "$RJ" 30
req GET "/v1/jobs/$RJ"
expect_json .callback.last_status 302 "redirect: status recorded"
expect_json .callback.state failed "redirect: not delivered"
expect_eq "redirect: the Location was never fetched" 0 "$(got /other)"

ctx "ipv6"
if [ -n "$PORT6" ]; then
	# callback_allow lists ::1: the same loopback address is now delivered to, over IPv6.
	submit "{\"command\":\"echo six\",\"callback_url\":\"$HOOK6/v6\"}"
	SJ=$JOB
	await "$SJ" 60
	cb_wait "$SJ" 20
	req GET "/v1/jobs/$SJ"
	expect_json .callback.state delivered "[::1] listed in callback_allow: delivered"
	expect_json .callback.last_status 200
	expect_eq "[::1]: received once" 1 "$(got /v6)"
	expect_eq "[::1]: the connection came over IPv6" 1 "$(grep -c '^6$' "$R/conns")"
	expect_eq "[::1]: body id" "$SJ" "$(jq -r 'select(.path == "/v6") | .body | fromjson | .id' "$R/log.jsonl")"
	VERIFY6=$(jq -c 'select(.path == "/v6")' "$R/log.jsonl" | SECRET=$SECRET python3 -c '
import hmac, hashlib, json, os, sys
r = json.loads(sys.stdin.read())
p = dict(x.split("=", 1) for x in r["sig"].split(","))
m = hmac.new(os.environ["SECRET"].encode(), (p["t"] + "." + r["body"]).encode(), hashlib.sha256).hexdigest()
print("ok" if hmac.compare_digest(m, p["v1"]) else "bad")')
	expect_eq "[::1]: the signature verifies" ok "$VERIFY6"
	# still refused with ::1 listed: link-local and the NAT64 metadata address
	submit "{\"command\":\"true\",\"callback_url\":\"https://[64:ff9b::a9fe:a9fe]/m\"}"
	MJ=$JOB
	await "$MJ" 60
	cb_wait "$MJ" 20
	req GET "/v1/jobs/$MJ"
	expect_json '.callback.last_error | test("metadata")' true "::1 listed: NAT64 metadata still refused"
else
	skip "[::1] delivery with callback_allow = ::1" "no IPv6 loopback to listen on"
fi

ctx "webhook-secret"
# A key without a secret (made before schema 007: cleared here by SQL) cannot sign: the
# delivery fails at once, naming the reason; `keys webhook-secret` gives it one, shown
# once, and the next delivery is signed with it (and not with any earlier secret).
sig_ok() { # sig_ok PATH SECRET: ok|bad for the first request to PATH
	jq -c --arg p "$1" 'select(.path == $p)' "$R/log.jsonl" | head -n 1 | SECRET=$2 python3 -c '
import hmac, hashlib, json, os, sys
r = json.loads(sys.stdin.read())
p = dict(x.split("=", 1) for x in r["sig"].split(","))
m = hmac.new(os.environ["SECRET"].encode(), (p["t"] + "." + r["body"]).encode(), hashlib.sha256).hexdigest()
print("ok" if hmac.compare_digest(m, p["v1"]) else "bad")'
}
OUT3=$(ctl keys create --namespace "$NS" --tenant t2 --subject-type user --subject-id carol --json)
K3_ID=$(jq -r .id <<< "$OUT3")
K3_OLD=$(jq -r .webhook_secret <<< "$OUT3")
MAIN_TOKEN=$TOKEN
TOKEN=$(jq -r .token <<< "$OUT3")
sql "UPDATE api_keys SET webhook_secret = NULL WHERE id = '$K3_ID'"
K3_SET() { ctl keys list --json | jq -r --arg id "$K3_ID" '.[] | select(.id == $id) | .webhook_secret_set'; }
expect_eq "keys list: webhook_secret_set false without one" false "$(K3_SET)"
submit "{\"command\":\"true\",\"callback_url\":\"$HOOK/nosecret\"}"
XJ=$JOB
await "$XJ" 60
cb_wait "$XJ" 20
req GET "/v1/jobs/$XJ"
expect_json .callback.state failed "no secret: failed"
expect_json .callback.attempts 0 "no secret: never attempted"
expect_json '.callback.last_error | test("no webhook secret")' true "no secret: the reason says so"
expect_eq "no secret: the receiver was never connected" 0 "$(got /nosecret)"
OUTP=$(ctl keys webhook-secret "$K3_ID")
expect_eq "webhook-secret: exit 0, one secret line" 1 "$(grep -c '^webhook_secret: [0-9a-f]\{64\}$' <<< "$OUTP")"
K3_MID=$(sed -n 's/^webhook_secret: //p' <<< "$OUTP")
OUTJ=$(ctl keys webhook-secret "$K3_ID" --json)
K3_NEW=$(jq -r .webhook_secret <<< "$OUTJ")
expect_true "--json: a new 64-hex secret for the key" grep -Eq '^[0-9a-f]{64}$' <<< "$K3_NEW"
expect_eq "--json: the key id" "$K3_ID" "$(jq -r .id <<< "$OUTJ")"
expect_true "each call makes a new secret" test "$K3_NEW" != "$K3_MID" -a "$K3_NEW" != "$K3_OLD"
expect_eq "stored for the key" "$K3_NEW" "$(sql "SELECT webhook_secret FROM api_keys WHERE id = '$K3_ID'")"
expect_eq "keys list: webhook_secret_set true now" true "$(K3_SET)"
OUTE=$(ctl keys webhook-secret 01900000-0000-7000-8000-00000000dead 2>&1)
expect_eq "unknown key: exit 1" 1 "$?"
expect_true "unknown key: named" grep -q "no active key 01900000-0000-7000-8000-00000000dead" <<< "$OUTE"
ctl keys webhook-secret > /dev/null 2>&1
expect_eq "no id: exit 2 (usage)" 2 "$?"
submit "{\"command\":\"true\",\"callback_url\":\"$HOOK/rotated\"}"
YJ=$JOB
await "$YJ" 60
cb_wait "$YJ" 20
req GET "/v1/jobs/$YJ"
expect_json .callback.state delivered "after webhook-secret: delivered"
expect_eq "signed with the new secret" ok "$(sig_ok /rotated "$K3_NEW")"
expect_eq "not with the previous one" bad "$(sig_ok /rotated "$K3_MID")"
expect_eq "nor with the one keys create showed" bad "$(sig_ok /rotated "$K3_OLD")"
ctl keys revoke "$K3_ID" --keep-jobs > /dev/null
OUTE=$(ctl keys webhook-secret "$K3_ID" 2>&1)
expect_eq "revoked key: exit 1" 1 "$?"
expect_true "revoked key: no active key" grep -q "no active key" <<< "$OUTE"
TOKEN=$MAIN_TOKEN

ctx "two runners"
# A second dispatcher on the same config: every delivery is still sent once (the claim
# is a conditional UPDATE won by one of them).
(cd "$T_DIR" && exec setsid "$RUNNER" --config "$CONF" < /dev/null >> "$T_DIR/hooks-runner2.log" 2>&1) &
MY_RUNNER2=$!
at_exit 'kill -TERM "$MY_RUNNER2" 2> /dev/null'
RACE=()
for i in 1 2 3 4 5 6; do
	submit "{\"command\":\"true\",\"callback_url\":\"$HOOK/race-$i\"}"
	RACE+=("$JOB")
done
for j in "${RACE[@]}"; do cb_wait "$j" 30; done
for i in 1 2 3 4 5 6; do
	expect_eq "race-$i received exactly once" 1 "$(got "/race-$i")"
done
kill -TERM "$MY_RUNNER2" 2> /dev/null
expect_true "the second runner stops" poll 10 fails alive "$MY_RUNNER2"

ctx "metrics"
# GET /metrics: deliveries by state and attempts by outcome class, as the tables hold
# them (nothing is in flight now), no tenant data.
as "" req GET /metrics
expect_status 200
for st in pending delivered failed; do
	expect_true "sandbox_webhook_deliveries{state=\"$st\"} is the table's count" grep -qx \
		"sandbox_webhook_deliveries{state=\"$st\"} $(sql "SELECT COUNT(*) FROM job_callbacks WHERE state = '$st'")" "$BODY"
done
for oc in delivered http_status dns connect tls timeout other internal; do
	expect_true "sandbox_webhook_attempts_total{outcome=\"$oc\"} is exposed" grep -Eq \
		"^sandbox_webhook_attempts_total\\{outcome=\"$oc\"\\} [0-9]+$" "$BODY"
done
# Since "delivered": /ok 200, /flaky 500 500 200, /never 500 x3, /redir 302 x3, [::1] 200
# (when it listens), the NAT64 refusal and /nosecret (refused: not attempts), /rotated
# 200, /race-1..6 200.
DELTA_OK=$(( $(metric 'sandbox_webhook_attempts_total{outcome="delivered"}' "$BODY") - \
	$(metric 'sandbox_webhook_attempts_total{outcome="delivered"}' "$T_DIR/metrics-before") ))
DELTA_HTTP=$(( $(metric 'sandbox_webhook_attempts_total{outcome="http_status"}' "$BODY") - \
	$(metric 'sandbox_webhook_attempts_total{outcome="http_status"}' "$T_DIR/metrics-before") ))
expect_eq "attempts_total{delivered} grew by the 2xx answers" $((9 + (${#PORT6} > 0))) "$DELTA_OK"
expect_eq "attempts_total{http_status} grew by the 500 and 302 answers" 8 "$DELTA_HTTP"
expect_eq "attempts_all_total: the sum of the classes" \
	"$(awk '/^sandbox_webhook_attempts_total\{/ { s += $2 } END { print s }' "$BODY")" \
	"$(metric sandbox_webhook_attempts_all_total "$BODY")"
expect_true "no tenant namespace in the metrics" fails grep -qF "$NS" "$BODY"
expect_promtool "promtool check metrics accepts the whole text" "$BODY"
expect_true "no callback URL in the metrics" fails grep -qF "127.0.0.1:$PORT" "$BODY"

ctx "purge"
# The attempts go with their job: the flaky job (3 attempts) made old, then purged.
sql "UPDATE jobs SET finished_at = NOW(3) - INTERVAL 4000 DAY WHERE id = '$FJ'"
PURGED=$(ctl purge --older-than 3999d)
expect_true "purge: the old job was purged" grep -q '^purged 1 jobs' <<< "$PURGED"
expect_eq "purge: its attempts are gone" 0 "$(sql "SELECT COUNT(*) FROM job_callback_attempts WHERE job_id = '$FJ'")"
expect_eq "purge: its delivery row is gone" 0 "$(sql "SELECT COUNT(*) FROM job_callbacks WHERE job_id = '$FJ'")"
expect_eq "purge: another job's attempts stay" 3 "$(sql "SELECT COUNT(*) FROM job_callback_attempts WHERE job_id = '$NJ'")"

ctx "deliver path"
# A runner whose runner_deliver_path cannot be exec'd says so: one line naming the path
# and the exit status (127), at most one a minute however many passes fail (every 500 ms).
CONF3=$T_DIR/hooks-nodeliver.conf
grep -v '^runner_deliver_path' "$SANDBOX_CONFIG" > "$CONF3"
echo "runner_deliver_path = $T_DIR/no-such-sandbox-deliver" >> "$CONF3"
(cd "$T_DIR" && exec setsid "$RUNNER" --config "$CONF3" < /dev/null >> "$T_DIR/hooks-runner3.log" 2>&1) &
MY_RUNNER3=$!
at_exit 'kill -TERM "$MY_RUNNER3" 2> /dev/null'
_pass_failed() { grep -q 'event=callback_pass_failed' "$T_DIR/hooks-runner3.log"; }
expect_true "a failed delivery pass is logged" poll 15 _pass_failed
LINE=$(grep 'event=callback_pass_failed' "$T_DIR/hooks-runner3.log" | head -n 1)
expect_true "the line names runner_deliver_path" grep -qF "runner_deliver_path=$T_DIR/no-such-sandbox-deliver" <<< "$LINE"
expect_true "the line names the exit status 127" grep -q 'status="\?exit 127' <<< "$LINE"
# four more passes fail meanwhile (scaled: each pass forks the deliverer; capped well
# under the minute of the rate limit, or a second line would be right)
sleep "$(tscale 2 30)"
expect_eq "rate-limited: one line for several failed passes" 1 \
	"$(grep -c 'event=callback_pass_failed' "$T_DIR/hooks-runner3.log")"
kill -TERM "$MY_RUNNER3" 2> /dev/null
expect_true "that runner stops" poll 10 fails alive "$MY_RUNNER3"

# ---------------------------------------------------------------- 4. the secret
ctx "secret"
LOGS=$(grep -rlF "$SECRET" "$SANDBOX_VAR/log" "$T_DIR"/*.log 2> /dev/null)
expect_eq "the webhook secret is in no log file" "" "$LOGS"
# every log of the stack: API, runner, nginx, MariaDB (*.log, *.err anywhere in its var)
ALL_LOGS=$(find "$SANDBOX_VAR" "$T_DIR" -type f \( -name '*.log' -o -name '*.err' \) 2> /dev/null)
expect_true "the stack has log files to search" test -n "$ALL_LOGS"
for s_ in "$K3_NEW" "$K3_MID" "$K3_OLD"; do
	expect_eq "a secret from keys create/webhook-secret is in no log file" "" \
		"$(xargs -r -d '\n' grep -lF "$s_" <<< "$ALL_LOGS" 2> /dev/null)"
done
req GET "/v1/jobs/$OJ"
expect_true "nor in the job object" fails grep -qF "$SECRET" "$BODY"
expect_true "the delivery log line has no URL" fails grep -q "127.0.0.1:$PORT" "$T_DIR/hooks-runner.log"

finish
