#!/usr/bin/env bash
# No leak in a request loop or a job loop. The API pool (master + 2 workers) runs
# under valgrind on the test stack while real requests go through: every process must
# report 0 bytes definitely or indirectly lost and 0 errors. The runner (dispatcher
# and supervisors) runs as the ASan+LSan build (valgrind cannot follow bwrap's
# namespace set-up): any leak or memory error makes a process write a report.
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env SANDBOX_TOKEN
VG_DIR=$(mktemp -d /tmp/sandbox-vg.XXXXXX)
VG=(valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
    --trace-children=yes --log-file="$VG_DIR/vg.%p.log")

if ! command -v valgrind >/dev/null; then
	echo "Bail out! valgrind is not installed (tests/deps.sh installs it)"
	exit 1
fi
CONF=$VG_DIR/sandbox.conf
sed 's/^api_workers = .*/api_workers = 2/' "$SANDBOX_CONFIG" >"$CONF"
restore() {
	pkill -TERM -f -- "sandbox-api --config $CONF" 2>/dev/null
	pkill -TERM -f -- "sandbox-runner --config $CONF" 2>/dev/null
	bash "$STACK" start-api >/dev/null 2>&1
	[[ -n ${KEEP_VG:-} ]] || rm -rf "$VG_DIR"
}
at_exit restore

bash "$STACK" stop-api >/dev/null
bash "$STACK" stop-runner >/dev/null
"${VG[@]}" "$SANDBOX_BIN/sandbox-api" --config "$CONF" >"$VG_DIR/api.out" 2>&1 &
api_pid=$!
for _ in $(seq 1 100); do
	[[ -S $SANDBOX_VAR/run/api.sock ]] && break
	sleep 0.1
done
TOKEN=$SANDBOX_TOKEN

ctx "leaks: requests"
ids=()
for i in $(seq 1 10); do
	req POST /v1/jobs '{"command":"mkdir -p out; echo '"$i"' > out/f; echo hi","files":[{"path":"in/a","content_base64":"AAEC"}],"env":{"A":"b"},"metadata":{"k":"v"},"artifacts":"out"}'
	ids+=("$(jq -r .id "$BODY")")
	req GET '/v1/jobs?limit=3'
	req POST /v1/jobs '{"command":"x","bogus":1}'
	TOKEN=sbx_0000 req GET /v1/jobs
	req GET "/v1/jobs/${ids[0]}?wait=0"
	req GET /v1/health
done
expect_true "10 jobs accepted under valgrind" test "${#ids[@]}" -eq 10

ctx "leaks: jobs"
ASAN_DIR=$VG_DIR/asan
mkdir -p "$ASAN_DIR"
ASAN_OPTIONS="detect_leaks=1:log_path=$ASAN_DIR/report:abort_on_error=0" \
	UBSAN_OPTIONS="print_stacktrace=1:log_path=$ASAN_DIR/report" \
	"$SANDBOX_BIN/asan-runner" --config "$CONF" --once --max-seconds 60 >"$VG_DIR/runner.out" 2>&1
expect_true "ASan runner --once exits 0" test $? -eq 0
for id in "${ids[@]}"; do
	req GET "/v1/jobs/$id?wait=5"
	expect_json .status succeeded "job ${id:0:13} succeeded under the ASan runner"
	req GET "/v1/jobs/$id/artifacts/out/f"
	req GET "/v1/jobs/$id/output/stdout?offset=1&limit=2"
	req GET "/v1/jobs/$id/output/stderr?encoding=base64"
	req POST "/v1/jobs/$id/cancel" ''
done
sup=$(grep -c 'event=job_finished' "$VG_DIR/runner.out")
expect_true "10 supervisors of the ASan build finished ($sup)" test "$sup" -eq 10
reports=$(find "$ASAN_DIR" -type f | wc -l)
if ((reports > 0)); then
	cat "$ASAN_DIR"/* | head -n 80 | sed 's/^/# /'
fi
expect_true "no ASan/LSan report from dispatcher or supervisors" test "$reports" -eq 0

# E2B (app/e2b): the control plane, envd's streams (their state lives across the
# waiter's re-dispatches and is released with the request, a client gone mid-stream
# included), unary calls and refusals, the ports' auth subrequest: under valgrind too,
# with the stack's runner for the sandbox.
ctx "leaks: E2B"
bash "$STACK" start-runner >/dev/null 2>&1
e2b_env() { sed -n "s/^$1=//p" "$SANDBOX_VAR/env" | tr -d "'\""; }
E2B_URL=$(e2b_env E2B_API_URL)
lk_frame() { python3 -c 'import sys,struct; m=sys.argv[1].encode(); sys.stdout.buffer.write(b"\0"+struct.pack(">I",len(m))+m)' "$1"; }
lk_curl() { curl -sS --cacert "$SANDBOX_CACERT" --max-time 30 "$@"; }
TOKEN='' req POST /v2/sandboxes '{"templateID":"base"}' -H "X-API-KEY: $SANDBOX_TOKEN"
lk_id=$(jq -r '.sandboxID // empty' "$BODY")
lk_tok=$(jq -r '.envdAccessToken // empty' "$BODY")
expect_true "an E2B sandbox under valgrind" test -n "$lk_id"
TOKEN='' req POST /v2/sandboxes '{"templateID":"nope","bogus":1}' -H "X-API-KEY: $SANDBOX_TOKEN"
TOKEN='' req GET "/sandboxes/$lk_id" -H "X-API-KEY: $SANDBOX_TOKEN"
TOKEN='' req GET '/v2/sandboxes?metadata=a%3Db&limit=1' -H "X-API-KEY: $SANDBOX_TOKEN"
lk_frame '{"process":{"cmd":"/bin/bash","args":["-l","-c","echo hi; echo err >&2"]}}' > "$VG_DIR/start.req"
for i in 1 2 3; do
	lk_curl -o "$VG_DIR/start.out" -H 'Content-Type: application/connect+json' \
		-H "E2b-Sandbox-Id: $lk_id" -H "X-Access-Token: $lk_tok" \
		--data-binary "@$VG_DIR/start.req" "$E2B_URL/process.Process/Start"
done
expect_true "a Start stream under valgrind ends with its end-of-stream envelope" \
	test "$(tail -c 7 "$VG_DIR/start.out" | od -An -tx1 | tr -d ' \n')" = 02000000027b7d
lk_frame '{"process":{"cmd":"/bin/bash","args":["-l","-c","sleep 30"]}}' > "$VG_DIR/sleep.req"
lk_curl -o /dev/null --max-time 2 -H 'Content-Type: application/connect+json' \
	-H "X-Access-Token: $lk_tok" --data-binary "@$VG_DIR/sleep.req" \
	"$E2B_URL/process.Process/Start" 2>/dev/null
printf '{"process":{"pid":1}}' > "$VG_DIR/pid.req"
printf '\001\000\000\000\002{}' > "$VG_DIR/bad.req"
lk_curl -o /dev/null -H 'Content-Type: application/json' -H "X-Access-Token: $lk_tok" \
	--data-binary "@$VG_DIR/pid.req" "$E2B_URL/process.Process/List"
lk_curl -o /dev/null -H 'Content-Type: application/json' -H "X-Access-Token: $lk_tok" \
	--data-binary "@$VG_DIR/pid.req" "$E2B_URL/process.Process/SendSignal"
lk_curl -o /dev/null -H 'Content-Type: application/connect+json' -H "X-Access-Token: $lk_tok" \
	--data-binary "@$VG_DIR/bad.req" "$E2B_URL/process.Process/Connect"
lk_curl -o /dev/null -H 'Content-Type: application/connect+json' -H "X-Access-Token: nope" \
	--data-binary "@$VG_DIR/start.req" "$E2B_URL/process.Process/Start"
lk_curl -o /dev/null "https://8000-$lk_id.$(e2b_env E2B_DOMAIN)/" -H "X-API-KEY: $SANDBOX_TOKEN"
lk_curl -o /dev/null "https://8000-$lk_id.$(e2b_env E2B_DOMAIN)/"
TOKEN='' req DELETE "/sandboxes/$lk_id" '' -H "X-API-KEY: $SANDBOX_TOKEN"
expect_status 204 "the sandbox killed"
bash "$STACK" stop-runner >/dev/null 2>&1

kill -TERM "$api_pid"
wait "$api_pid"
n=$(find "$VG_DIR" -name 'vg.*.log' | wc -l)
expect_true "valgrind logs of the api master and 2 workers ($n)" test "$n" -eq 3
for log in "$VG_DIR"/vg.*.log; do
	prog=$(sed -n 's/^==[0-9]*== Command: \([^ ]*\).*/\1/p' "$log" | head -n 1)
	args=$(sed -n 's/^==[0-9]*== Command: [^ ]* \(.*\)/\1/p' "$log" | head -n 1 | cut -c1-60)
	if ! grep -q 'ERROR SUMMARY' "$log"; then
		# A forked child that exec'd something untraced (bwrap, slirp4netns): no
		# summary, but any error before the exec would have been reported inline.
		if grep -Eq '== (Invalid|Conditional|Syscall param|Use of uninit|Mismatched)' "$log"; then
			sed 's/^/# /' "$log" | tail -n 60
			expect_true "no memory error before exec in pid ${log##*.vg.}" false
		fi
		continue
	fi
	if grep -q 'definitely lost: [1-9]\|indirectly lost: [1-9]' "$log" ||
		! grep -q 'ERROR SUMMARY: 0 errors' "$log"; then
		sed 's/^/# /' "$log" | tail -n 60
		expect_true "no leak or memory error in $(basename "$prog") $args" false
	else
		expect_true "no leak or memory error in $(basename "$prog") $args" true
	fi
done
finish
