# shellcheck shell=bash
# Sourced by tests/integration/e2b.sh: the E2B control plane (app/e2b/e2bapi.c,
# e2blist.c, eauth.c) with raw HTTP, then the real SDK (tests/clients/e2b-ctl.mjs).
#   1. X-API-KEY: missing, wrong, a bearer token instead: 401 {"code":401,...}
#   2. create, v1 (the Python SDK): exactly 201 with clientID, envdVersion, sandboxID,
#      templateID, a 64-hex envdAccessToken stored only as its SHA-256, domain; the
#      session row e2b=1, ready, its lifetime and idle timeout from `timeout`
#   3. create, v2, with metadata and envVars; getInfo's fields, no token in them
#   4. create errors in E2B's shape naming the field: unknown template, unknown field,
#      bad timeout, metadata not strings, not JSON, autoPause, egress rules,
#      max_sessions (429 + Retry-After); allow_internet_access true on a key without
#      network: a sandbox without network (the Python SDK's default), never a refusal
#   5. another identity's sandbox: get, delete, connect, timeout, pause are 404 exactly
#      as an unknown id, and the sandbox lives on
#   6. list: metadata filter (all pairs must match), limit + x-next-token paging,
#      state=paused empty, only the caller's sandboxes, bad parameters 400
#   7. timeout: 204, the row's expires_at moves; connect: a new token (both stored,
#      the bound of E2B_TOKENS_MAX per sandbox), nothing killed, a timeout extends only
#   8. pause and resume: 409; kill: 204 then 404, the row closed; connect on it 404;
#      purge takes its token rows with it
#   9. routing: a sandbox host name (49983-<id>.<domain>) serves envd only (other ports:
#      docs/E2B.md "Ports", their own section)
#  10. the SDK: create, getInfo, setTimeout, list by metadata, connect (not killing),
#      kill true then false, connect and getInfo of a killed one: SandboxNotFoundError
# (envd_resolve with both tokens of a connect: tests/integration/e2b/fs.sh and
# process.sh, whose endpoints use it.)

mkkey EA e2b-ns "t-$RUN" user "ea-$RUN"
mkkey EB e2b-ns "t-$RUN" user "eb-$RUN"
mkkey EC e2b-ns "t-$RUN" user "ec-$RUN" --max-sessions 1
mkkey EN e2b-ns "t-$RUN" user "en-$RUN"
NOSUCH=01900000-0000-7000-8000-000000000000
# ctl_row EXPR ID: EXPR of session ID's row
ctl_row() { sql "SELECT $1 FROM sessions WHERE id = '$2'"; }

# ================================================== 1. X-API-KEY

ctx "e2b: no X-API-KEY"
e2b_req '' POST /v2/sandboxes "$E2B_BASE"
expect_e2b 401 'X-API-KEY'
ctx "e2b: a wrong X-API-KEY"
e2b_req "sbx_$(printf '0%.0s' {1..64})" GET /v2/sandboxes
expect_e2b 401 'invalid'
ctx "e2b: a bearer token is not an X-API-KEY"
e2b_req '' GET "/sandboxes/$NOSUCH" '' -H "Authorization: Bearer $EA_TOK"
expect_e2b 401

# ================================================== 2. create, v1

ctx "e2b: create v1 (Python SDK body)"
e2b_req "$EA_TOK" POST /sandboxes '{"templateID":"base","timeout":120,"metadata":{},"envVars":{},"secure":true,"autoPause":false}'
expect_status 201
expect_json '[(.clientID | type), .envdVersion, (.sandboxID | test("^[0-9a-f-]{36}$")), .templateID, (.envdAccessToken | test("^[0-9a-f]{64}$")), .domain, (.trafficAccessToken | test("^[0-9a-f]{64}$"))] | @json' \
	"[\"string\",\"0.5.7\",true,\"base\",true,\"$E2B_DOMAIN\",true]"
V1_ID=$(jq -r '.sandboxID // empty' "$BODY")
V1_TOK=$(jq -r '.envdAccessToken // empty' "$BODY")
if [ -z "$V1_ID" ]; then
	echo "Bail out! POST /sandboxes failed: $(head -c 500 "$BODY")"
	finish
	exit 1
fi
expect_eq "the row: an e2b session, ready, lifetime and idle timeout from timeout" "1 ready 120 120" \
	"$(ctl_row "CONCAT_WS(' ', e2b, status, max_seconds, idle_seconds)" "$V1_ID")"
expect_eq "the token is stored as its SHA-256, once" 1 \
	"$(sql "SELECT COUNT(*) FROM e2b_tokens WHERE session_id = '$V1_ID' AND token_hash = UNHEX(SHA2('$V1_TOK', 256))")"
expect_eq "no token in clear anywhere in its rows" 0 \
	"$(sql "SELECT COUNT(*) FROM sessions WHERE id = '$V1_ID' AND (INSTR(COALESCE(env_json, ''), '$V1_TOK') OR INSTR(COALESCE(metadata_json, ''), '$V1_TOK'))")"

# ================================================== 3. create, v2, getInfo

ctx "e2b: create v2 with metadata and envVars"
e2b_create "$EA_TOK" "{\"templateID\":\"base\",\"timeout\":300,\"metadata\":{\"run\":\"$RUN\",\"who\":\"ea\"},\"envVars\":{\"E2B_T\":\"x\"},\"allow_internet_access\":false}"
expect_status 201
A_ID=$E2B_ID
A_TOK=$E2B_TOK
ctx "e2b: getInfo"
e2b_req "$EA_TOK" GET "/sandboxes/$A_ID"
expect_status 200
expect_json '[.sandboxID, .templateID, .metadata.run, .state, .envdVersion, .cpuCount, (.memoryMB | type), .domain, .allowInternetAccess, has("envdAccessToken")] | @json' \
	"[\"$A_ID\",\"base\",\"$RUN\",\"running\",\"0.5.7\",1,\"number\",\"$E2B_DOMAIN\",false,false]"
expect_json '[.startedAt, .endAt] | map(test("^[0-9-]{10}T[0-9:.]+Z$")) | @json' '[true,true]'
expect_json '((.endAt | sub("\\.[0-9]+Z$"; "Z") | fromdate) - (.startedAt | sub("\\.[0-9]+Z$"; "Z") | fromdate))' 300
ctx "e2b: the envVars reached the session"
expect_eq "env names in the session row" '["E2B_T"]' "$(sql "SELECT env_meta_json FROM sessions WHERE id = '$A_ID'" | jq -c '[.[].name]' 2> /dev/null || echo '?')"

# ================================================== 4. create errors

# WHAT|STATUS|MESSAGE_RE|BODY: a create refused in E2B's shape, naming the field
while IFS='|' read -r what st re body; do
	ctx "e2b: create: $what"
	e2b_req "$EA_TOK" POST /v2/sandboxes "$body"
	expect_e2b "$st" "$re"
done << 'EOF'
unknown template|400|^templateID: .*no-such-template|{"templateID":"no-such-template"}
unknown field|400|^gpu: unknown field|{"templateID":"base","gpu":true}
timeout out of range|400|^timeout |{"templateID":"base","timeout":999999999}
timeout not an integer|400|^timeout |{"templateID":"base","timeout":"60"}
metadata values must be strings|400|metadata|{"templateID":"base","metadata":{"a":1}}
envVars values must be strings|400|envVars|{"templateID":"base","envVars":{"A":1}}
body not JSON|400|JSON|not json
autoPause|400|^autoPause: pausing is not supported|{"templateID":"base","autoPause":true}
network egress rules|400|^network: |{"templateID":"base","network":{"allowOut":["1.1.1.1"]}}
EOF
# The Python SDK sends allow_internet_access true by default: on a key without network
# that is a sandbox without network (getInfo says so), never a refusal.
for f in allow_internet_access allowInternetAccess; do
	ctx "e2b: $f true for a key without network"
	e2b_create "$EN_TOK" "{\"templateID\":\"base\",\"$f\":true}"
	expect_status 201
	expect_eq "a sandbox without network" 0 "$(ctl_row network "$E2B_ID")"
	e2b_req "$EN_TOK" GET "/sandboxes/$E2B_ID"
	expect_json .allowInternetAccess false
	e2b_kill "$EN_TOK" "$E2B_ID"
done
ctx "e2b: max_sessions: 429 in E2B's shape with Retry-After"
e2b_create "$EC_TOK"
expect_status 201
C_ID=$E2B_ID
REQ_RETRY_429=0 e2b_req "$EC_TOK" POST /v2/sandboxes "$E2B_BASE"
expect_e2b 429 'max_sessions'
expect_header Retry-After '^[0-9]+$'
e2b_kill "$EC_TOK" "$C_ID"
expect_eq "the refused creates left no sandbox" 2 \
	"$(sql "SELECT COUNT(*) FROM sessions WHERE key_id = '$EA_ID' AND e2b = 1")"

# ================================================== 5. another identity

ctx "e2b: B reads an unknown sandbox"
e2b_req "$EB_TOK" GET "/sandboxes/$NOSUCH"
expect_e2b 404
UNKNOWN=$(jq -c 'del(.message)' "$BODY")
for call in "GET /sandboxes/$A_ID" "DELETE /sandboxes/$A_ID" "POST /v2/sandboxes/$A_ID/connect {}" \
	"POST /sandboxes/$A_ID/connect {}" "POST /sandboxes/$A_ID/timeout {\"timeout\":5}" \
	"POST /sandboxes/$A_ID/pause {}"; do
	read -r m p b <<< "$call"
	ctx "e2b: B: $m ${p/$A_ID/A-id}"
	e2b_req "$EB_TOK" "$m" "$p" "${b-}"
	expect_e2b 404
	expect_eq "the same as an unknown sandbox" "$UNKNOWN" "$(jq -c 'del(.message)' "$BODY")"
done
expect_eq "A's sandbox lives on, its end unchanged" "ready 300" \
	"$(ctl_row "CONCAT_WS(' ', status, TIMESTAMPDIFF(SECOND, created_at, expires_at))" "$A_ID")"
expect_eq "B's calls made no token" 1 "$(sql "SELECT COUNT(*) FROM e2b_tokens WHERE session_id = '$A_ID'")"
ctx "e2b: a REST session is no sandbox"
REST_ID=$(curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $EA_TOK" -H 'Content-Type: application/json' \
	-d '{}' "$SANDBOX_URL/v1/sessions" | jq -r '.id // empty')
e2b_req "$EA_TOK" GET "/sandboxes/$REST_ID"
expect_e2b 404
curl -sS --cacert "$SANDBOX_CACERT" -o /dev/null -X POST -H "Authorization: Bearer $EA_TOK" "$SANDBOX_URL/v1/sessions/$REST_ID/close"

# ================================================== 6. list

e2b_create "$EA_TOK" "{\"templateID\":\"base\",\"metadata\":{\"run\":\"$RUN\",\"who\":\"ea\",\"n\":\"2\"}}"
A2_ID=$E2B_ID
e2b_create "$EA_TOK" "{\"templateID\":\"base\",\"metadata\":{\"run\":\"$RUN\",\"who\":\"other\"}}"
A3_ID=$E2B_ID
e2b_create "$EB_TOK" "{\"templateID\":\"base\",\"metadata\":{\"run\":\"$RUN\",\"who\":\"ea\"}}"
B_ID=$E2B_ID
ctx "e2b: list by metadata (v2)"
e2b_req "$EA_TOK" GET "/v2/sandboxes?metadata=run%3D$RUN"
expect_status 200
expect_json '[.[].sandboxID] | @json' "[\"$A3_ID\",\"$A2_ID\",\"$A_ID\"]"
expect_json '[.[0] | .state, .templateID, .metadata.who] | @json' '["running","base","other"]'
expect_eq "no x-next-token on the last page" "" "$(hdr x-next-token)"
ctx "e2b: list by two metadata pairs"
e2b_req "$EA_TOK" GET "/v2/sandboxes?metadata=run%3D$RUN%26who%3Dea"
expect_json '[.[].sandboxID] | @json' "[\"$A2_ID\",\"$A_ID\"]"
ctx "e2b: list v1, no match"
e2b_req "$EA_TOK" GET "/sandboxes?metadata=run%3Dnot-$RUN"
expect_json '. | @json' '[]'
ctx "e2b: list paged"
e2b_req "$EA_TOK" GET "/v2/sandboxes?metadata=run%3D$RUN&limit=2"
expect_json '[.[].sandboxID] | @json' "[\"$A3_ID\",\"$A2_ID\"]"
NEXT=$(hdr x-next-token)
expect_eq "x-next-token names the page's last sandbox" "$A2_ID" "$NEXT"
e2b_req "$EA_TOK" GET "/v2/sandboxes?metadata=run%3D$RUN&limit=2&nextToken=$NEXT"
expect_json '[.[].sandboxID] | @json' "[\"$A_ID\"]"
expect_eq "no x-next-token after the last page" "" "$(hdr x-next-token)"
ctx "e2b: list state"
e2b_req "$EA_TOK" GET "/v2/sandboxes?metadata=run%3D$RUN&state=paused"
expect_json '. | @json' '[]'
e2b_req "$EA_TOK" GET "/v2/sandboxes?metadata=run%3D$RUN&state=running,paused"
expect_json 'length' 3
e2b_req "$EA_TOK" GET "/v2/sandboxes?metadata=run%3D$RUN&state=paused&state=running"
expect_json 'length' 3
ctx "e2b: B lists only its own"
e2b_req "$EB_TOK" GET "/v2/sandboxes?metadata=run%3D$RUN"
expect_json '[.[].sandboxID] | @json' "[\"$B_ID\"]"
ctx "e2b: list parameters"
e2b_req "$EA_TOK" GET "/v2/sandboxes?limit=0"
expect_e2b 400 '^limit'
e2b_req "$EA_TOK" GET "/v2/sandboxes?state=sleeping"
expect_e2b 400 '^state'
e2b_req "$EA_TOK" GET "/v2/sandboxes?colour=red"
expect_e2b 400 '^colour: unknown'
e2b_req "$EA_TOK" GET "/v2/sandboxes?nextToken=$B_ID"
expect_e2b 400 '^nextToken'

# ================================================== 7. timeout, connect

ctx "e2b: setTimeout"
e2b_req "$EA_TOK" POST "/sandboxes/$A2_ID/timeout" '{"timeout":900}'
expect_status 204
expect_true "expires_at is 900 s from now ($(ctl_row "TIMESTAMPDIFF(SECOND, NOW(3), expires_at)" "$A2_ID"))" \
	in_range "$(ctl_row "TIMESTAMPDIFF(SECOND, NOW(3), expires_at)" "$A2_ID")" 880 900
expect_eq "the idle timeout follows (a longer timeout is not cut short by idling)" 900 \
	"$(ctl_row idle_seconds "$A2_ID")"
ctx "e2b: setTimeout ends a sandbox then"
e2b_create "$EA_TOK"
T_ID=$E2B_ID
e2b_req "$EA_TOK" POST "/sandboxes/$T_ID/timeout" '{"timeout":1}'
expect_status 204
_t_ended() { [ "$(ctl_row status "$T_ID")" = expired ]; }
if poll 15 _t_ended; then
	_ok "$(_name "the session expired ($(ctl_row end_reason "$T_ID"))")"
elif ! grep -q ss_lifetime "$REPO"/sandbox-runner/session/*.c 2> /dev/null; then
	skip "$(_name "the session expired")" "this runner does not re-read expires_at yet"
	e2b_kill "$EA_TOK" "$T_ID"
else
	_notok "$(_name "the session expired")" expired "$(ctl_row status "$T_ID")" 0
fi
e2b_req "$EA_TOK" GET "/sandboxes/$T_ID"
[ "$(ctl_row status "$T_ID")" = expired ] && expect_e2b 404
ctx "e2b: setTimeout errors"
e2b_req "$EA_TOK" POST "/sandboxes/$A2_ID/timeout" '{}'
expect_e2b 400 'timeout'
e2b_req "$EA_TOK" POST "/sandboxes/$A2_ID/timeout" '{"timeout":0}'
expect_e2b 400 '^timeout'
e2b_req "$EA_TOK" POST "/sandboxes/$NOSUCH/timeout" '{"timeout":5}'
expect_e2b 404

ctx "e2b: connect v2"
e2b_req "$EA_TOK" POST "/v2/sandboxes/$A_ID/connect" '{}'
expect_status 200
expect_json '[.sandboxID, .templateID, .envdVersion, (.envdAccessToken | test("^[0-9a-f]{64}$")), .domain] | @json' \
	"[\"$A_ID\",\"base\",\"0.5.7\",true,\"$E2B_DOMAIN\"]"
A_TOK2=$(jq -r '.envdAccessToken // empty' "$BODY")
expect_true "a new token" test "$A_TOK2" != "$A_TOK"
expect_eq "both tokens stored, as SHA-256" 2 \
	"$(sql "SELECT COUNT(*) FROM e2b_tokens WHERE session_id = '$A_ID' AND token_hash IN (UNHEX(SHA2('$A_TOK', 256)), UNHEX(SHA2('$A_TOK2', 256)))")"
expect_eq "connect killed nothing, its end unchanged" "ready 300" \
	"$(ctl_row "CONCAT_WS(' ', status, TIMESTAMPDIFF(SECOND, created_at, expires_at))" "$A_ID")"
ctx "e2b: both tokens open the sandbox (envd_resolve)"
# envd's cheapest call (process.Process/List, app/e2b/eprocess.c): not recorded for the
# OpenAPI check (envd is not the REST API)
ctl_envd() {
	curl -sS --cacert "$SANDBOX_CACERT" -o "$BODY" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' -H 'Connect-Protocol-Version: 1' --data '{}' \
		"$@" "$E2B_SANDBOX_URL/process.Process/List"
}
code=$(ctl_envd -H "E2b-Sandbox-Id: $A_ID" -H "X-Access-Token: $A_TOK")
if [ "$code" = 404 ] && [ "$(jq -r '.error.code?' "$BODY" 2> /dev/null)" = not_found ]; then
	skip "$(_name "resolve")" "this build has no envd process service (app/e2b/eprocess.c)"
else
	expect_eq "the first token, with E2b-Sandbox-Id" 200 "$code"
	expect_eq "the connect's token, with E2b-Sandbox-Id" 200 \
		"$(ctl_envd -H "E2b-Sandbox-Id: $A_ID" -H "X-Access-Token: $A_TOK2")"
	expect_eq "the connect's token alone (the Python SDK after connect)" 200 \
		"$(ctl_envd -H "X-Access-Token: $A_TOK2")"
	expect_eq "by the host name 49983-<id>.<domain>" 200 \
		"$(curl -sS --cacert "$SANDBOX_CACERT" -o "$BODY" -w '%{http_code}' -X POST \
			-H 'Content-Type: application/json' -H 'Connect-Protocol-Version: 1' --data '{}' \
			-H "X-Access-Token: $A_TOK2" "https://49983-$A_ID.$E2B_DOMAIN/process.Process/List")"
	code=$(ctl_envd -H "E2b-Sandbox-Id: $A2_ID" -H "X-Access-Token: $A_TOK")
	expect_eq "A's token does not open A2" "401 unauthenticated" "$code $(jq -r .code "$BODY")"
	NOTOK=$(jq -c . "$BODY")
	ctl_envd -H "E2b-Sandbox-Id: $A_ID" > /dev/null
	expect_eq "no token: the same answer" "$NOTOK" "$(jq -c . "$BODY")"
	ctl_envd -H "E2b-Sandbox-Id: $NOSUCH" -H "X-Access-Token: $A_TOK" > /dev/null
	expect_eq "an unknown sandbox: the same answer" "$NOTOK" "$(jq -c . "$BODY")"
	ctl_envd -H "E2b-Sandbox-Id: $REST_ID" -H "X-Access-Token: $A_TOK" > /dev/null
	expect_eq "a REST session: the same answer" "$NOTOK" "$(jq -c . "$BODY")"
	code=$(curl -sS --cacert "$SANDBOX_CACERT" -o "$BODY" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' -H 'Connect-Protocol-Version: 1' --data '{}' \
		-H "E2b-Sandbox-Id: $A_ID" -H "X-Access-Token: $A_TOK" \
		"https://49983-$A2_ID.$E2B_DOMAIN/process.Process/List")
	expect_eq "the host name wins over the header: A's token on A2's host" 401 "$code"
fi
ctx "e2b: connect v1 with a timeout extends"
e2b_req "$EA_TOK" POST "/sandboxes/$A_ID/connect" '{"timeout":1200}'
expect_status 200
expect_true "expires_at is 1200 s from now" \
	in_range "$(ctl_row "TIMESTAMPDIFF(SECOND, NOW(3), expires_at)" "$A_ID")" 1180 1200
e2b_req "$EA_TOK" POST "/sandboxes/$A_ID/connect" '{"timeout":10}'
expect_status 200
expect_true "a shorter timeout does not shorten it" \
	in_range "$(ctl_row "TIMESTAMPDIFF(SECOND, NOW(3), expires_at)" "$A_ID")" 1150 1200
ctx "e2b: connect, unknown field"
e2b_req "$EA_TOK" POST "/sandboxes/$A_ID/connect" '{"resume":true}'
expect_e2b 400 '^resume'
ctx "e2b: tokens per sandbox are bounded"
for _ in $(seq 40); do
	curl -sS --cacert "$SANDBOX_CACERT" -o /dev/null -X POST -H "X-API-KEY: $EA_TOK" \
		-H 'Content-Type: application/json' -d '{}' "$E2B_API_URL/v2/sandboxes/$A_ID/connect"
done
expect_eq "at most 32 kept" 32 "$(sql "SELECT COUNT(*) FROM e2b_tokens WHERE session_id = '$A_ID'")"
expect_eq "the oldest went first" 0 \
	"$(sql "SELECT COUNT(*) FROM e2b_tokens WHERE token_hash = UNHEX(SHA2('$A_TOK', 256))")"

# ================================================== 8. pause, resume, kill

ctx "e2b: pause"
e2b_req "$EA_TOK" POST "/sandboxes/$A2_ID/pause" '{}'
expect_e2b 409 'not supported'
e2b_req "$EA_TOK" POST "/sandboxes/$A2_ID/resume" '{}'
expect_e2b 409
e2b_req "$EA_TOK" POST "/sandboxes/$NOSUCH/pause" '{}'
expect_e2b 404
expect_eq "still running" ready "$(ctl_row status "$A2_ID")"
ctx "e2b: kill"
e2b_req "$EA_TOK" DELETE "/sandboxes/$A3_ID"
expect_status 204
expect_eq "the session closed" closed "$(ctl_row status "$A3_ID")"
e2b_req "$EA_TOK" DELETE "/sandboxes/$A3_ID"
expect_e2b 404
e2b_req "$EA_TOK" GET "/sandboxes/$A3_ID"
expect_e2b 404
e2b_req "$EA_TOK" POST "/v2/sandboxes/$A3_ID/connect" '{}'
expect_e2b 404
e2b_req "$EA_TOK" GET "/v2/sandboxes?metadata=run%3D$RUN"
expect_json '[.[].sandboxID] | @json' "[\"$A2_ID\",\"$A_ID\"]"
ctx "e2b: purge takes a sandbox's tokens with it"
expect_true "the killed sandbox kept its token rows until purge" \
	test "$(sql "SELECT COUNT(*) FROM e2b_tokens WHERE session_id = '$A3_ID'")" -ge 1
sql "UPDATE sessions SET ended_at = NOW(3) - INTERVAL 4000 DAY WHERE id = '$A3_ID'"
out=$(ctl purge --older-than 3999d)
expect_true "purge reports the session ($out)" grep -Eq '^purged [1-9][0-9]* sessions' <<< "$out"
expect_eq "the session and its tokens are gone" "0 0" \
	"$(sql "SELECT (SELECT COUNT(*) FROM sessions WHERE id = '$A3_ID'), (SELECT COUNT(*) FROM e2b_tokens WHERE session_id = '$A3_ID')" | tr '\t' ' ')"

# ================================================== 9. routing

ctx "e2b: a sandbox host name"
SBX_HOST="https://49983-$A_ID.${E2B_DOMAIN}"
code=$(curl -sS --cacert "$SANDBOX_CACERT" -o "$BODY" -w '%{http_code}' "$SBX_HOST/v1/health")
expect_eq "the REST API is not served on a sandbox host" "404 not_found" "$code $(jq -r .code "$BODY" 2> /dev/null)"
code=$(curl -sS --cacert "$SANDBOX_CACERT" -o "$BODY" -w '%{http_code}' -H "X-API-KEY: $EA_TOK" "$SBX_HOST/sandboxes/$A_ID")
expect_eq "nor the control plane" 404 "$code"
code=$(curl -sS --cacert "$SANDBOX_CACERT" -o "$BODY" -w '%{http_code}' "$SBX_HOST/x?t=sbx_0123456789abcdef")
expect_eq "a token-shaped string in the URL is refused there too" 400 "$code"

for id in "$V1_ID" "$A_ID" "$A2_ID"; do e2b_kill "$EA_TOK" "$id"; done
e2b_kill "$EB_TOK" "$B_ID"

# ================================================== 10. the SDK

ctx "e2b: SDK control plane"
e2b_sdk_run "$REPO/tests/clients/e2b-ctl.mjs" "e2b SDK control plane"
