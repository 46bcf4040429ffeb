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
#   4. The webhook secret: in `keys create` output once, in no log file of the stack.
#
# Needs root (it stops the stack's runner and starts its own); the stack's runner is
# running again at the end, also on failure.
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/env.sh"
load_stack_env SANDBOX_URL SANDBOX_CACERT SANDBOX_TOKEN SANDBOX_CONFIG SANDBOX_DB_SOCKET
need_root "the suite starts a runner of its own"
. "$HERE/lib.sh"

STACK="$REPO/tests/stack.sh"
RUNNER="$SANDBOX_BIN/sandbox-runner"
RUN="$RANDOM$RANDOM"
NS="hooks-$RUN"
UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
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
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > ext
	openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
		-extfile ext -out srv.pem
	chmod 644 ca.pem
) > "$T_DIR/openssl.log" 2>&1 || { echo "Bail out! openssl: $(tail -n 3 "$T_DIR/openssl.log")"; exit 2; }

cat > "$R/recv.py" <<'PY'
import http.server, json, ssl, sys, threading
d = sys.argv[1]
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
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(d + "/srv.pem", d + "/srv.key")
s.socket = ctx.wrap_socket(s.socket, server_side=True)
open(d + "/port", "w").write(str(s.server_address[1]))
s.serve_forever()
PY
: > "$R/log.jsonl"
python3 "$R/recv.py" "$R" > "$T_DIR/recv.err" 2>&1 &
RECV_PID=$!
poll 5 test -s "$R/port" || { echo "Bail out! the receiver did not start: $(cat "$T_DIR/recv.err")"; exit 2; }
PORT=$(cat "$R/port")
HOOK="https://127.0.0.1:$PORT"
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
declare -A REF=(
	[loopback]="$HOOK/refused-ip"
	[loopback-name]="https://localhost:$PORT/refused-name"
	[metadata]="https://169.254.169.254/latest"
)
for k in "${!REF[@]}"; do
	submit "{\"command\":\"echo hi\",\"callback_url\":\"${REF[$k]}\"}"
	REFJ[$k]=$JOB
done
for k in "${!REF[@]}"; do
	j=${REFJ[$k]}
	cls=${k%-name}
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
callback_allow = 127.0.0.1/32
callback_backoff_ms = 200
callback_max_attempts = 3
callback_cacert = $R/ca.pem
CONF_EOF
(cd "$T_DIR" && exec setsid "$RUNNER" --config "$CONF" < /dev/null >> "$T_DIR/hooks-runner.log" 2>&1) &
MY_RUNNER=$!
sleep 0.3
expect_true "a runner with callback_allow runs" alive "$MY_RUNNER"

cb_wait "$CJ" 20
req GET "/v1/jobs/$CJ"
expect_json .callback.state delivered
expect_eq "cancelled: body status" cancelled \
	"$(jq -r 'select(.path == "/cancelled") | .body | fromjson | .status' "$R/log.jsonl")"

ctx "delivered"
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

# ---------------------------------------------------------------- 4. the secret
ctx "secret"
LOGS=$(grep -rlF "$SECRET" "$SANDBOX_VAR/log" "$T_DIR"/*.log 2> /dev/null)
expect_eq "the webhook secret is in no log file" "" "$LOGS"
req GET "/v1/jobs/$OJ"
expect_true "nor in the job object" fails grep -qF "$SECRET" "$BODY"
expect_true "the delivery log line has no URL" fails grep -q "127.0.0.1:$PORT" "$T_DIR/hooks-runner.log"

finish
