#!/usr/bin/env bash
# tests/integration/api.sh: end-to-end suite for the HTTP API, over HTTPS through nginx.
#
# Needs a running stack (`make test` brings one up; by hand: `bash tests/stack.sh up`,
# then `SANDBOX_VAR=$PWD/var bash tests/integration/api.sh`). Environment, from var/env:
# SANDBOX_URL, SANDBOX_CACERT, SANDBOX_TOKEN, SANDBOX_CONFIG, SANDBOX_DB_SOCKET;
# SANDBOX_VAR defaults to <repo>/var and SANDBOX_BIN to <repo>/build.
#
# The suite makes its own keys with sandboxctl, under names unique to the run, so it can
# run again and again against the same database.
#
# The suite needs a frozen queue, so the runner must be stopped (tests/run-integration.sh
# does that; the suite bails out if one runs): where a test needs a running or finished
# job, the suite plays the runner's part by writing to MariaDB directly, as root over the
# socket (claim fields, terminal state, job_results, job_artifacts, job_events), the way
# the runner's claim and result transactions do (docs/ARCHITECTURE.md, "Claim contract").
# On exit it cancels the run's jobs still queued or running, so that a runner started
# afterwards has none of them to execute.
#
# tests/integration/api/ holds some of its cases (validation.sh, identity.sh): function
# definitions, called from the main section below in its order.

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/lib.sh"
stack_env

RUN="$RANDOM$RANDOM"
NS="itest-$RUN"
TA="t-a-$RUN"
TB="t-b-$RUN"
ECHO_JOB='{"command":"echo hi"}'
JOB_FIELDS='["id","status","created_at","started_at","finished_at","identity","command",
 "argv","cwd","limits","network","artifacts","metadata","profile","cancel_requested",
 "result","failure"]'

# ---------------------------------------------------------------- helpers

sha() { sha256sum "$1" | cut -d' ' -f1; }
jid() { jq -r '.id // empty' "$BODY"; }
ids() { jq -r '[.jobs[]?.id] | join(" ")' "$BODY"; }
same_json() { cmp -s <(jq -S . "$1") <(jq -S . "$2"); }
uri() { jq -rn --arg s "$1" '$s | @uri'; }

LIMIT_NAMES=(wall_seconds cpu_seconds memory_mb pids output_bytes disk_mb)
declare -A LMIN=([wall_seconds]=1 [cpu_seconds]=1 [memory_mb]=16 [pids]=1 [output_bytes]=0 [disk_mb]=1)
declare -A LDEF=([wall_seconds]=10 [cpu_seconds]=10 [memory_mb]=256 [pids]=64
	[output_bytes]=1048576 [disk_mb]=64)
declare -A LMAX=([wall_seconds]=300 [cpu_seconds]=300 [memory_mb]=4096 [pids]=1024
	[output_bytes]=16777216 [disk_mb]=1024)
for l in "${LIMIT_NAMES[@]}"; do
	LDEF[$l]=$(conf_get "${l}_default" "${LDEF[$l]}")
	LMAX[$l]=$(conf_get "${l}_max" "${LMAX[$l]}")
done
limits_json() { # limits_json ASSOC_NAME
	local -n m=$1
	local l out='{}'
	for l in "${LIMIT_NAMES[@]}"; do
		out=$(jq -c --arg k "$l" --argjson v "${m[$l]}" '. + {($k): $v}' <<< "$out")
	done
	printf '%s' "$out"
}
DEF_LIMITS=$(limits_json LDEF)
MAX_LIMITS=$(limits_json LMAX)
MIN_LIMITS=$(limits_json LMIN)
MAX_FILES=$(conf_get max_files 100)
MAX_FILES_BYTES=$(conf_get max_files_bytes 8388608)
MAX_PATH=$(conf_get max_path_bytes 255)
MAX_META=$(conf_get max_metadata_bytes 4096)
MAX_ENV=$(conf_get max_env 64)

# ident NS TENANT SUBJECT_TYPE SUBJECT_ID [ACTOR_TYPE ACTOR_ID]: the identity object.
ident() {
	jq -cn --arg ns "$1" --arg t "$2" --arg st "$3" --arg si "$4" --arg at "${5-}" --arg ai "${6-}" \
		'{identity_namespace:$ns, tenant_id:$t, subject_type:$st, subject_id:$si,
		  actor_type:(if $at == "" then null else $at end),
		  actor_id:(if $ai == "" then null else $ai end)}'
}

# list_all TOKEN [QUERY]: every page of GET /v1/jobs, ids one a line in $T_DIR/ids.
list_all() {
	local tok=$1 q=${2:-} cur='' n=0
	: > "$T_DIR/ids"
	while :; do
		as "$tok" req GET "/v1/jobs?limit=100${q:+&$q}${cur:+&cursor=$(uri "$cur")}"
		if [ "$STATUS" != 200 ]; then
			_notok "$(_name "listing every page")" 200 "$STATUS"
			return 1
		fi
		jq -r '.jobs[].id' "$BODY" >> "$T_DIR/ids"
		cur=$(jq -r '.next_cursor // empty' "$BODY")
		[ -z "$cur" ] && return 0
		n=$((n + 1))
		[ "$n" -lt 100 ] || return 1
	done
}
listed() { grep -qxF "$1" "$T_DIR/ids"; }
not_listed() {
	local i
	for i in "$@"; do grep -qxF -- "$i" "$T_DIR/ids" && return 1; done
	return 0
}

# ---------------------------------------------------------------- keys and auth

setup_keys() {
	mkkey A "$NS" "$TA" user alice
	mkkey A2 "$NS" "$TA" user bob
	mkkey A3 "$NS" "$TA" user alice
	mkkey ACT "$NS" "$TA" user carol --actor-type agent --actor-id bot-1
	mkkey B "$NS" "$TB" user alice
	mkkey NSB "$NS-other" "$TA" user alice
	mkkey ADM "$NS" "$TA" user admin --tenant-admin
	mkkey NET "$NS" "$TA" user dave --allow-network
	mkkey Q "$NS" "$TA" user quota --max-queued 2
	mkkey L "$NS" "$TA" user lister
	mkkey R "$NS" "$TA" user alice
	mkkey CU "$NS" "Acme-$RUN" user alice
	mkkey CL "$NS" "acme-$RUN" user alice
	mkkey CLADM "$NS" "acme-$RUN" user admin --tenant-admin
}

t_health() {
	ctx "health without auth"
	as '' req GET /v1/health
	expect_status 200
	expect_header Content-Type '^application/json'
	expect_json '. == {"status":"ok","database":"ok"}' true 'body is {"status":"ok","database":"ok"}'
}

t_keys() {
	local out f g
	local -A v=([namespace]=$NS [tenant]=$TA [subject-type]=user [subject-id]=x)
	ctx "sandboxctl keys"
	expect_true "key tokens are long enough for 128 bits" test "${#A_TOK}" -ge 22
	expect_true "key tokens differ" test "$A_TOK" != "$A3_TOK"
	for f in namespace tenant subject-type subject-id; do
		local -a a=()
		for g in namespace tenant subject-type subject-id; do
			if [ "$g" = "$f" ]; then a+=(--"$g" ''); else a+=(--"$g" "${v[$g]}"); fi
		done
		expect_true "keys create --$f '' is refused" fails ctl keys create "${a[@]}" --json
	done
	expect_true "keys create without --tenant is refused" \
		fails ctl keys create --namespace "$NS" --subject-type user --subject-id x --json
	out=$(ctl keys list --json)
	expect_true "keys list --json is a JSON array" jq -e 'type == "array"' <<< "$out"
	expect_true "keys list has the suite's keys" jq -e --arg a "$A_ID" --arg b "$B_ID" \
		'any(.[]; .id == $a) and any(.[]; .id == $b)' <<< "$out"
	expect_true "keys list has no token field" jq -e 'all(.[]; has("token") | not)' <<< "$out"
	expect_true "keys list shows no token" fails grep -qF -e "$A_TOK" -e "$B_TOK" -e "$ADM_TOK" <<< "$out"
}

t_auth() {
	local rj
	ctx "auth: no Authorization header"
	as '' req GET /v1/jobs
	expect_error 401 unauthorized
	expect_header WWW-Authenticate '^Bearer( |$)'
	ctx "auth: no Authorization header on submit"
	as '' req POST /v1/jobs "$ECHO_JOB"
	expect_error 401 unauthorized
	expect_header WWW-Authenticate '^Bearer( |$)'
	ctx "auth: garbage token"
	as "garbage-$RUN" req GET /v1/jobs
	expect_error 401 unauthorized
	expect_header WWW-Authenticate '^Bearer .*error="invalid_token"'
	ctx "auth: valid token with a suffix"
	as "${A_TOK}x" req GET /v1/jobs
	expect_error 401 unauthorized
	ctx "auth: Basic scheme"
	as '' req GET /v1/jobs '' -H "Authorization: Basic $(printf 'a:b' | base64)"
	expect_error 401 unauthorized
	ctx "auth: key before revocation"
	as "$R_TOK" req POST /v1/jobs "$ECHO_JOB"
	expect_status 202
	rj=$(jid)
	expect_true "sandboxctl keys revoke" ctl keys revoke "$R_ID"
	ctx "auth: revoked key, right after keys revoke"
	as "$R_TOK" req GET /v1/jobs
	expect_error 401 unauthorized
	expect_header WWW-Authenticate 'error="invalid_token"'
	as "$R_TOK" req POST /v1/jobs "$ECHO_JOB"
	expect_error 401 unauthorized
	ctx "auth: a revoked key's job is still its subject's"
	as "$A_TOK" req GET "/v1/jobs/$rj"
	expect_status 200
}

# ---------------------------------------------------------------- submit

# The submit's answer is rendered from the request (no read back, app/jobs/jobs.c
# jobs_create_job): it must be exactly what GET reads from the database.
same_as_get() { # the answer of a POST /v1/jobs just made (in $BODY)
	local j
	j=$(jid)
	cp "$BODY" "$T_DIR/posted.json"
	as "$1" req GET "/v1/jobs/$j"
	expect_true "$CTX: GET returns exactly the object the submit returned" \
		same_json "$T_DIR/posted.json" "$BODY"
}

t_submit() {
	local j1 j2 body
	ctx "submit: defaults"
	body='{"command":"echo hi","env":{"SECRET_ENV":"s3cr3t-'$RUN'"},"stdin":"stdin-'$RUN'",
	  "files":[{"path":"main.py","content":"file-'$RUN'"}],"metadata":{"ticket":"T-1"}}'
	as "$A_TOK" req POST /v1/jobs "$body"
	expect_status 202
	j1=$(jid)
	cp "$BODY" "$T_DIR/j1.json"
	expect_header Content-Type '^application/json'
	expect_header Location "^/v1/jobs/$j1\$" "Location is /v1/jobs/<id>"
	expect_json ".id | test(\"$UUID_RE\")" true "id is a UUID"
	expect_json .status queued
	expect_json "$JOB_FIELDS - keys | join(\",\")" "" "every documented job field is present"
	expect_json ".identity == $(ident "$NS" "$TA" user alice)" true "identity is the key's, actor null"
	expect_json ".limits == $DEF_LIMITS" true "limits are the defaults $DEF_LIMITS"
	expect_json '.result, .failure, .started_at, .finished_at' $'null\nnull\nnull\nnull'
	expect_json ".created_at | test(\"$TS_RE\")" true "created_at is YYYY-MM-DDTHH:MM:SS.mmmZ"
	expect_json '.command, (.argv | tostring), .cwd, .network, .cancel_requested' $'echo hi\nnull\n\nfalse\nfalse'
	expect_json '.metadata | tojson' '{"ticket":"T-1"}'
	expect_json '[has("env", "stdin", "stdin_base64", "files")] | any' false "env, stdin, files not echoed"
	expect_true "$CTX: env value, stdin and file content appear nowhere" \
		fails grep -qE "s3cr3t-$RUN|stdin-$RUN|file-$RUN" "$BODY"
	ctx "get: the submitted job"
	as "$A_TOK" req GET "/v1/jobs/$j1"
	expect_status 200
	expect_true "$CTX: GET returns the object the submit returned" same_json "$T_DIR/j1.json" "$BODY"

	ctx "submit: a second job"
	as "$A_TOK" req POST /v1/jobs "$ECHO_JOB"
	expect_status 202
	j2=$(jid)
	expect_true "$CTX: ids differ" test "$j1" != "$j2"

	ctx "submit: argv instead of command"
	as "$A_TOK" req POST /v1/jobs '{"argv":["echo","hi there"]}'
	expect_status 202
	expect_json '(.argv | tojson), (.command | tojson)' $'["echo","hi there"]\nnull'
	same_as_get "$A_TOK"

	ctx "submit: the request example of DESIGN.md"
	as "$A_TOK" req POST /v1/jobs '{"command": "python3 main.py", "argv": null,
	  "files": [{"path": "main.py", "content": "print(1)"},
	            {"path": "bin/tool", "content_base64": "IyEvYmluL3NoCmVjaG8gdG9vbAo=", "executable": true}],
	  "stdin": "", "env": {"LANG": "C.UTF-8"}, "cwd": "",
	  "limits": {"wall_seconds": 10, "cpu_seconds": 10, "memory_mb": 256, "pids": 64,
	             "output_bytes": 1048576, "disk_mb": 64},
	  "network": false, "artifacts": "out", "metadata": {"ticket": "T-1"}}'
	expect_status 202
	expect_json '.command, .artifacts, .cwd, .network, .metadata.ticket' $'python3 main.py\nout\n\nfalse\nT-1'
	same_as_get "$A_TOK"

	ctx "submit: given limits"
	as "$A_TOK" req POST /v1/jobs '{"command":"true","limits":{"wall_seconds":5,"cpu_seconds":4,
	  "memory_mb":128,"pids":32,"output_bytes":1000,"disk_mb":16}}'
	expect_status 202
	expect_json '.limits == {"wall_seconds":5,"cpu_seconds":4,"memory_mb":128,"pids":32,"output_bytes":1000,"disk_mb":16}' \
		true "limits are the given values"
	ctx "submit: one limit given"
	as "$A_TOK" req POST /v1/jobs '{"command":"true","limits":{"memory_mb":512}}'
	expect_status 202
	expect_json ".limits == ($DEF_LIMITS + {\"memory_mb\":512})" true "memory_mb 512, the others default"
	same_as_get "$A_TOK"
	ctx "submit: every limit at its maximum"
	as "$A_TOK" req POST /v1/jobs "$(jq -cn --argjson l "$MAX_LIMITS" '{command:"true",limits:$l}')"
	expect_status 202
	expect_json ".limits == $MAX_LIMITS" true "limits are $MAX_LIMITS"
	ctx "submit: every limit at its minimum"
	as "$A_TOK" req POST /v1/jobs "$(jq -cn --argjson l "$MIN_LIMITS" '{command:"true",limits:$l}')"
	expect_status 202
	expect_json ".limits == $MIN_LIMITS" true "limits are $MIN_LIMITS"

	ctx "submit: cwd and nested files"
	as "$A_TOK" req POST /v1/jobs '{"command":"true","cwd":"src/app","files":[{"path":"src/app/x.txt","content":""}]}'
	expect_status 202
	expect_json .cwd src/app
	same_as_get "$A_TOK"

	ctx "submit: a key with an actor"
	as "$ACT_TOK" req POST /v1/jobs "$ECHO_JOB"
	expect_status 202
	expect_json ".identity == $(ident "$NS" "$TA" user carol agent bot-1)" true "identity carries the actor"
	same_as_get "$ACT_TOK"

	ctx "submit: identity headers from the client are ignored"
	as "$A_TOK" req POST /v1/jobs "$ECHO_JOB" -H "X-Tenant-Id: $TB" -H "X-Identity-Namespace: evil" \
		-H "X-Subject-Id: mallory" -H "X-Actor-Id: mallory"
	expect_status 202
	expect_json ".identity == $(ident "$NS" "$TA" user alice)" true "identity is still the key's"
}

t_idempotency() {
	local k="idem-$RUN" i1 body='{"command":"echo idem"}'
	ctx "idempotency: first request"
	as "$A_TOK" req POST /v1/jobs "$body" -H "Idempotency-Key: $k"
	expect_status 202
	i1=$(jid)
	expect_true "$CTX: not marked as replayed" fails grep -qiE '^Idempotent-Replayed: *true' "$HDRS"
	ctx "idempotency: replay"
	as "$A_TOK" req POST /v1/jobs "$body" -H "Idempotency-Key: $k"
	expect_status 202
	expect_json .id "$i1" "same job id"
	expect_header Idempotent-Replayed '^true$'
	ctx "idempotency: replay through another key of the same subject"
	as "$A3_TOK" req POST /v1/jobs "$body" -H "Idempotency-Key: $k"
	expect_status 202
	expect_json .id "$i1" "same job id"
	ctx "idempotency: same key, different body"
	as "$A_TOK" req POST /v1/jobs '{"command":"echo other"}' -H "Idempotency-Key: $k"
	expect_error 409 conflict
	ctx "idempotency: same key, another subject"
	as "$A2_TOK" req POST /v1/jobs "$body" -H "Idempotency-Key: $k"
	expect_status 202
	expect_true "$CTX: a different job" test "$(jid)" != "$i1"
	expect_true "$CTX: not marked as replayed" fails grep -qiE '^Idempotent-Replayed: *true' "$HDRS"
	ctx "idempotency: same key, another tenant"
	as "$B_TOK" req POST /v1/jobs "$body" -H "Idempotency-Key: $k"
	expect_status 202
	expect_true "$CTX: a different job" test "$(jid)" != "$i1"
	ctx "idempotency: 255-character key"
	as "$A_TOK" req POST /v1/jobs "$body" -H "Idempotency-Key: $(printf 'k%.0s' $(seq 255))"
	expect_status 202
	ctx "idempotency: 256-character key"
	as "$A_TOK" req POST /v1/jobs "$body" -H "Idempotency-Key: $(printf 'k%.0s' $(seq 256))"
	expect_error 400 invalid_request Idempotency-Key
	ctx "idempotency: non-ASCII key"
	as "$A_TOK" req POST /v1/jobs "$body" -H "Idempotency-Key: caf$(printf '\xc3\xa9')-$RUN"
	expect_error 400 invalid_request Idempotency-Key
}

. "$HERE/api/validation.sh"

# ---------------------------------------------------------------- results, artifacts

t_results() {
	local js je
	# JF: a finished job with output and artifacts, used by later areas too.
	as "$A_TOK" submit '{"command":"make","artifacts":"out"}'; JF=$JOB
	printf 'alpha' > "$T_DIR/a.txt"
	printf 'bravo\n' > "$T_DIR/b.txt"
	printf '\x00\xff\x01binary\x00\n' > "$T_DIR/b.bin"
	db_finish "$JF" succeeded 0 NULL "$(hexs $'hello\n')" "$(hexs $'warn\n')" '["note one","note two"]'
	db_artifact "$JF" out/b.txt "$T_DIR/b.txt"
	db_artifact "$JF" out/sub/b.bin "$T_DIR/b.bin"
	db_artifact "$JF" out/a.txt "$T_DIR/a.txt"
	ctx "result: finished job"
	as "$A_TOK" req GET "/v1/jobs/$JF"
	expect_status 200
	expect_json '.status, .result.exit_code, .result.signal' $'succeeded\n0\nnull'
	expect_json '[.result.stdout, .result.stderr] | tojson' '["hello\n","warn\n"]'
	expect_json '.result | has("stdout_base64") or has("stderr_base64")' false
	expect_json '.result.stdout_truncated, .result.stderr_truncated' $'false\nfalse'
	expect_json '.result.diagnostics | tojson' '["note one","note two"]'
	expect_json '.result.usage == {"wall_ms":12,"cpu_ms":9,"memory_peak_bytes":2097152}' true "usage"
	expect_json '.failure' null
	expect_json "[.created_at, .started_at, .finished_at] | all(test(\"$TS_RE\"))" true "timestamps set"
	expect_json '[.result.artifacts[]?.path] | join(" ")' 'out/a.txt out/b.txt out/sub/b.bin' \
		"result.artifacts lists the artifacts (DESIGN job object)"

	as "$A_TOK" submit "$ECHO_JOB"; JN=$JOB
	db_finish "$JN" failed 3 NULL FF00FE C328 '[]'
	ctx "result: non-UTF-8 output"
	as "$A_TOK" req GET "/v1/jobs/$JN"
	expect_status 200
	expect_json '.status, .result.exit_code' $'failed\n3'
	expect_json '.result.stdout_base64, .result.stderr_base64' $'/wD+\nwyg='
	expect_json '.result | has("stdout") or has("stderr")' false "no stdout/stderr keys"

	as "$A_TOK" submit "$ECHO_JOB"; js=$JOB
	db_finish "$js" failed 137 9 '' '' '[]'
	ctx "result: killed by a signal"
	as "$A_TOK" req GET "/v1/jobs/$js"
	expect_json '[.result.exit_code, .result.signal, .result.stdout] | tojson' '[137,9,""]'

	as "$A_TOK" submit "$ECHO_JOB"; je=$JOB
	db_finish "$je" error 125 NULL '' '' '["resource limits were not applied"]' \
		'{"stage":"setup","instance_status":"not_started","cleanup_status":"ok","error":"bwrap failed"}'
	ctx "result: service failure"
	as "$A_TOK" req GET "/v1/jobs/$je"
	expect_json '.status, .result.exit_code, .failure.stage, .failure.error' $'error\n125\nsetup\nbwrap failed'
	expect_json '.result.diagnostics | tojson' '["resource limits were not applied"]'
}

t_artifacts() {
	local jq_
	ctx "artifacts: list"
	as "$A_TOK" req GET "/v1/jobs/$JF/artifacts"
	expect_status 200
	expect_header Content-Type '^application/json'
	expect_json 'type' array "a bare array"
	expect_json '[.[].path] | join(" ")' 'out/a.txt out/b.txt out/sub/b.bin' "sorted by path"
	expect_json 'map(keys) | unique | tojson' '[["path","sha256","size"]]' "entries are {path,size,sha256}"
	expect_json '.[] | select(.path == "out/sub/b.bin") | "\(.size) \(.sha256)"' \
		"$(wc -c < "$T_DIR/b.bin") $(sha "$T_DIR/b.bin")"
	for p in a.txt b.txt sub/b.bin; do
		ctx "artifacts: download out/$p"
		as "$A_TOK" req GET "/v1/jobs/$JF/artifacts/out/$p"
		expect_status 200
		expect_header Content-Type '^application/octet-stream'
		expect_eq "$CTX: exact bytes (sha256)" "$(sha "$T_DIR/$(basename "$p")")" "$(sha "$BODY")"
	done
	ctx "artifacts: unknown path"
	as "$A_TOK" req GET "/v1/jobs/$JF/artifacts/out/zzz"
	expect_error 404 not_found
	ctx "artifacts: a directory is not an artifact"
	as "$A_TOK" req GET "/v1/jobs/$JF/artifacts/out/sub"
	expect_error 404 not_found
	ctx "artifacts: unknown job"
	as "$A_TOK" req GET "/v1/jobs/$(uuid)/artifacts"
	expect_error 404 not_found
	as "$A_TOK" submit "$ECHO_JOB"; jq_=$JOB
	ctx "artifacts: queued job"
	as "$A_TOK" req GET "/v1/jobs/$jq_/artifacts"
	expect_status 200
	expect_json tojson '[]'
}

# ---------------------------------------------------------------- tenancy

# same_404 NAME TOKEN METHOD PATH_OF_OTHERS_JOB PATH_OF_UNKNOWN_ID OTHERS_ID UNKNOWN_ID
same_404() {
	ctx "tenancy: $1"
	as "$2" req "$3" "$4"
	expect_error 404 not_found
	sed "s/$6/ID/g" "$BODY" > "$T_DIR/404.a"
	as "$2" req "$3" "$5"
	sed "s/$7/ID/g" "$BODY" > "$T_DIR/404.b"
	expect_true "$CTX: same body as for an unknown id" cmp -s "$T_DIR/404.a" "$T_DIR/404.b"
}

t_tenancy() {
	local ja ja2 jb jc jx u tok
	as "$A_TOK" submit "$ECHO_JOB"; ja=$JOB
	as "$A2_TOK" submit "$ECHO_JOB"; ja2=$JOB
	as "$B_TOK" submit "$ECHO_JOB"; jb=$JOB
	u=$(uuid)
	same_404 "other tenant GET" "$B_TOK" GET "/v1/jobs/$JF" "/v1/jobs/$u" "$JF" "$u"
	same_404 "other tenant cancel" "$B_TOK" POST "/v1/jobs/$ja/cancel" "/v1/jobs/$u/cancel" "$ja" "$u"
	same_404 "other tenant artifacts" "$B_TOK" GET "/v1/jobs/$JF/artifacts" "/v1/jobs/$u/artifacts" "$JF" "$u"
	same_404 "other tenant artifact download" "$B_TOK" GET "/v1/jobs/$JF/artifacts/out/a.txt" \
		"/v1/jobs/$u/artifacts/out/a.txt" "$JF" "$u"
	same_404 "other subject, same tenant, GET" "$A2_TOK" GET "/v1/jobs/$JF" "/v1/jobs/$u" "$JF" "$u"
	same_404 "other subject, same tenant, cancel" "$A2_TOK" POST "/v1/jobs/$ja/cancel" "/v1/jobs/$u/cancel" "$ja" "$u"
	same_404 "other namespace, same tenant and subject names" "$NSB_TOK" GET "/v1/jobs/$JF" "/v1/jobs/$u" "$JF" "$u"
	same_404 "other tenant-admin, GET" "$CLADM_TOK" GET "/v1/jobs/$JF" "/v1/jobs/$u" "$JF" "$u"
	ctx "tenancy: a job id that is not a UUID"
	as "$A_TOK" req GET /v1/jobs/not-a-uuid
	expect_error 404 not_found
	ctx "tenancy: the owner's job after others' cancels"
	as "$A_TOK" req GET "/v1/jobs/$ja"
	expect_json .status queued "still queued"

	ctx "tenancy: lists"
	list_all "$B_TOK"
	expect_true "$CTX: other tenant's list has its own job" listed "$jb"
	expect_true "$CTX: other tenant's list lacks A's jobs" not_listed "$ja" "$JF" "$ja2"
	list_all "$A2_TOK"
	expect_true "$CTX: other subject's list has its own job" listed "$ja2"
	expect_true "$CTX: other subject's list lacks A's jobs" not_listed "$ja" "$JF"
	list_all "$NSB_TOK"
	expect_true "$CTX: other namespace's list lacks A's jobs" not_listed "$ja" "$JF"
	list_all "$A_TOK"
	expect_true "$CTX: A's list has A's jobs" listed "$ja"
	expect_true "$CTX: A's list lacks the other subject's and tenant's jobs" not_listed "$ja2" "$jb"

	ctx "tenancy: tenant admin"
	as "$ADM_TOK" req GET "/v1/jobs/$ja"
	expect_status 200 "reads subject alice's job"
	as "$ADM_TOK" req GET "/v1/jobs/$ja2"
	expect_status 200 "reads subject bob's job"
	as "$ADM_TOK" req GET "/v1/jobs/$jb"
	expect_error 404 not_found
	list_all "$ADM_TOK"
	expect_true "$CTX: list has both subjects' jobs" listed "$ja"
	expect_true "$CTX: list has bob's job" listed "$ja2"
	expect_true "$CTX: list lacks the other tenant's job" not_listed "$jb"
	as "$A2_TOK" submit "$ECHO_JOB"; jx=$JOB
	as "$ADM_TOK" req POST "/v1/jobs/$jx/cancel"
	expect_status 200 "cancels bob's job"
	expect_json .status cancelled

	as "$CU_TOK" submit "$ECHO_JOB"; jc=$JOB
	ctx "tenancy: tenant names differing only in case"
	as "$CL_TOK" req GET "/v1/jobs/$jc"
	expect_error 404 not_found
	as "$CLADM_TOK" req GET "/v1/jobs/$jc"
	expect_error 404 not_found
	list_all "$CL_TOK"
	expect_true "$CTX: acme's list lacks Acme's job" not_listed "$jc"
	list_all "$CLADM_TOK"
	expect_true "$CTX: acme's admin list lacks Acme's job" not_listed "$jc"
	list_all "$CU_TOK"
	expect_true "$CTX: Acme's list has Acme's job" listed "$jc"
}

# ---------------------------------------------------------------- list

t_list() {
	local i all got cur n sizes q
	local -a j
	for i in 1 2 3 4 5; do as "$L_TOK" submit "{\"command\":\"echo $i\"}"; j[$i]=$JOB; done
	all="${j[5]} ${j[4]} ${j[3]} ${j[2]} ${j[1]}"
	ctx "list: default page"
	as "$L_TOK" req GET /v1/jobs
	expect_status 200
	expect_json '[.jobs[].id] | join(" ")' "$all" "newest first"
	expect_json .next_cursor null
	expect_json "all(.jobs[]; ($JOB_FIELDS - keys) == [])" true "items are full job objects"
	ctx "list: limit=2 pagination"
	got='' cur='' n=0 sizes=''
	while [ "$n" -lt 10 ]; do
		as "$L_TOK" req GET "/v1/jobs?limit=2${cur:+&cursor=$(uri "$cur")}"
		[ "$STATUS" = 200 ] || break
		got+="${got:+ }$(ids)"
		sizes+="${sizes:+ }$(jq '.jobs | length' "$BODY")"
		cur=$(jq -r '.next_cursor // empty' "$BODY")
		n=$((n + 1))
		[ -z "$cur" ] && break
	done
	expect_status 200
	expect_eq "$CTX: page sizes until next_cursor is null" "2 2 1" "$sizes"
	expect_eq "$CTX: pages join to the whole list, no duplicates or gaps" "$all" "$got"
	ctx "list: limit=1"
	as "$L_TOK" req GET "/v1/jobs?limit=1"
	expect_json '(.jobs | length), (.next_cursor | type)' $'1\nstring'
	ctx "list: limit=100"
	as "$L_TOK" req GET "/v1/jobs?limit=100"
	expect_json '.jobs | length' 5

	as "$L_TOK" submit '{"command":"true"}'; j[6]=$JOB
	as "$L_TOK" req POST "/v1/jobs/${j[6]}/cancel"
	db_finish "${j[2]}" succeeded 0 NULL '' '' '[]'
	ctx "list: status filter"
	as "$L_TOK" req GET "/v1/jobs?status=cancelled"
	expect_json '[.jobs[].id] | join(" ")' "${j[6]}" "status=cancelled"
	as "$L_TOK" req GET "/v1/jobs?status=succeeded"
	expect_json '[.jobs[].id] | join(" ")' "${j[2]}" "status=succeeded"
	as "$L_TOK" req GET "/v1/jobs?status=queued"
	expect_json '[.jobs[].id] | join(" ")' "${j[5]} ${j[4]} ${j[3]} ${j[1]}" "status=queued"
	as "$L_TOK" req GET "/v1/jobs?status=running"
	expect_json '.jobs | length' 0 "status=running: none"
	as "$L_TOK" req GET "/v1/jobs?status=queued&limit=3"
	expect_json '[.jobs[].id] | join(" ")' "${j[5]} ${j[4]} ${j[3]}" "status=queued&limit=3, first page"
	cur=$(jq -r '.next_cursor // empty' "$BODY")
	as "$L_TOK" req GET "/v1/jobs?status=queued&limit=3&cursor=$(uri "$cur")"
	expect_json '([.jobs[].id] | join(" ")), .next_cursor' "${j[1]}"$'\nnull' "status=queued&limit=3, second page"

	for q in status=bogus status=QUEUED status= limit=0 limit=101 limit=abc limit=-1 limit=2x \
		cursor=garbage "cursor=$(uri '!!')" foo=1 wait=1; do
		ctx "list: bad query $q"
		as "$L_TOK" req GET "/v1/jobs?$q"
		expect_error 400 invalid_request "${q%%=*}"
	done
}

# ---------------------------------------------------------------- get with wait

t_wait() {
	local jw jq2 wpid st tdone t0 q
	as "$A_TOK" submit "$ECHO_JOB"; jw=$JOB
	ctx "wait: wait=1 on a queued job"
	as "$A_TOK" req GET "/v1/jobs/$jw?wait=1"
	expect_status 200
	expect_json .status queued
	expect_true "$CTX: answered after about 1 s (took ${ELAPSED}s)" in_range "$ELAPSED" 0.8 "$(tscale 3.5)"
	ctx "wait: wait=0"
	as "$A_TOK" req GET "/v1/jobs/$jw?wait=0"
	expect_status 200
	for q in wait=31 wait=x wait=-1 wait=1.5 wait= foo=1; do
		ctx "wait: bad query $q"
		as "$A_TOK" req GET "/v1/jobs/$jw?$q"
		expect_error 400 invalid_request "${q%%=*}"
	done

	# A waiter in flight must not block other requests; it returns early when the job ends.
	(
		BODY=$T_DIR/wait.body HDRS=$T_DIR/wait.hdrs REQ_MAX_TIME=45
		as "$A_TOK" req GET "/v1/jobs/$jw?wait=30" > /dev/null
		echo "$STATUS $(date +%s.%N)" > "$T_DIR/wait.done"
	) &
	wpid=$!
	at_exit "kill $wpid 2> /dev/null"
	sleep 1
	ctx "wait: while a wait=30 request is in flight"
	as '' req GET /v1/health
	expect_status 200 "health answers"
	as "$A_TOK" req POST /v1/jobs "$ECHO_JOB"
	expect_status 202 "submit answers"
	as "$A_TOK" req GET "/v1/jobs/$jw"
	expect_status 200 "get answers"
	expect_true "$CTX: the waiter is still waiting" kill -0 "$wpid"
	db_run "$jw"
	db_finish "$jw" succeeded 0 NULL "$(hexs 'done')" '' '[]'
	t0=$(date +%s.%N)
	for _ in $(seq 450); do kill -0 "$wpid" 2> /dev/null || break; sleep 0.1; done
	wait "$wpid" 2> /dev/null
	read -r st tdone < "$T_DIR/wait.done" 2> /dev/null || st=none tdone=$t0
	ctx "wait: the waiter, once the job finished"
	expect_eq "$CTX: status 200" 200 "$st"
	expect_eq "$CTX: returns the terminal status" succeeded "$(jq -r .status "$T_DIR/wait.body" 2> /dev/null)"
	expect_true "$CTX: returns early ($(awk -v a="$tdone" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')s after the job ended)" \
		in_range "$(awk -v a="$tdone" -v b="$t0" 'BEGIN { print a - b }')" -1 10
	as "$A_TOK" submit "$ECHO_JOB"; jq2=$JOB
	db_finish "$jq2" succeeded 0 NULL '' '' '[]'
	ctx "wait: on a job that already ended"
	as "$A_TOK" req GET "/v1/jobs/$jq2?wait=30"
	expect_json .status succeeded
	expect_true "$CTX: answers at once (took ${ELAPSED}s)" in_range "$ELAPSED" 0 "$(tscale 2)"
}

# ---------------------------------------------------------------- cancel

t_cancel() {
	local jc jr jt fin
	as "$A_TOK" submit "$ECHO_JOB"; jc=$JOB
	ctx "cancel: queued job"
	as "$A_TOK" req POST "/v1/jobs/$jc/cancel"
	expect_status 200
	expect_json .id "$jc"
	expect_json .status cancelled
	expect_json ".finished_at | test(\"$TS_RE\")" true "finished_at set"
	fin=$(jq -r .finished_at "$BODY")
	ctx "cancel: again"
	as "$A_TOK" req POST "/v1/jobs/$jc/cancel"
	expect_status 200
	expect_json '.status, .finished_at' "cancelled"$'\n'"$fin" "unchanged"
	ctx "cancel: GET afterwards"
	as "$A_TOK" req GET "/v1/jobs/$jc"
	expect_json .status cancelled
	ctx "cancel: job_events"
	expect_eq "$CTX: submit (-> queued) and cancel (queued -> cancelled), nothing else" \
		$'NULL\tqueued\nqueued\tcancelled' \
		"$(sql "SELECT IFNULL(from_state, 'NULL'), to_state FROM job_events WHERE job_id='$jc' ORDER BY id")"
	expect_eq "$CTX: every event names an actor" 0 \
		"$(sql "SELECT COUNT(*) FROM job_events WHERE job_id='$jc' AND (actor IS NULL OR actor = '')")"

	as "$A_TOK" submit "$ECHO_JOB"; jr=$JOB
	db_run "$jr"
	ctx "cancel: running job"
	as "$A_TOK" req POST "/v1/jobs/$jr/cancel"
	expect_status 200
	expect_json '.status, .cancel_requested, .finished_at' $'running\ntrue\nnull'
	expect_eq "$CTX: cancel_requested stored" 1 "$(sql "SELECT cancel_requested FROM jobs WHERE id='$jr'")"
	as "$A_TOK" req GET "/v1/jobs/$jr"
	expect_json '.status, .cancel_requested' $'running\ntrue' "GET shows it"

	ctx "cancel: finished job"
	as "$A_TOK" req GET "/v1/jobs/$JF"
	cp "$BODY" "$T_DIR/jf.json"
	as "$A_TOK" req POST "/v1/jobs/$JF/cancel"
	expect_status 200
	expect_true "$CTX: returned unchanged" same_json "$T_DIR/jf.json" "$BODY"
	expect_eq "$CTX: no cancel_requested stored" 0 "$(sql "SELECT cancel_requested FROM jobs WHERE id='$JF'")"

	as "$A_TOK" submit "$ECHO_JOB"; jt=$JOB
	ctx "cancel: body is ignored"
	as "$A_TOK" req POST "/v1/jobs/$jt/cancel" 'not json at all' -H 'Content-Type: text/plain'
	expect_status 200
	expect_json .status cancelled
	ctx "cancel: unknown id"
	as "$A_TOK" req POST "/v1/jobs/$(uuid)/cancel"
	expect_error 404 not_found
	ctx "cancel: id that is not a UUID"
	as "$A_TOK" req POST "/v1/jobs/nope/cancel"
	expect_error 404 not_found
}

# ---------------------------------------------------------------- quota

# POST /v1/jobs?wait=S with the runner stopped: the job cannot end, so 202 after S.
t_submit_wait() {
	ctx "submit and wait"
	as "$L_TOK" req POST "/v1/jobs?wait=1" '{"command":"true"}'
	expect_status 202
	expect_json '.status' queued
	as "$L_TOK" req POST "/v1/jobs?wait=31" '{"command":"true"}'
	expect_error 400 invalid_request wait
	as "$L_TOK" req POST "/v1/jobs?bogus=1" '{"command":"true"}'
	expect_error 400 invalid_request bogus
}

t_quota() {
	local q1 q2 q4
	as "$Q_TOK" submit "$ECHO_JOB"; q1=$JOB
	as "$Q_TOK" submit "$ECHO_JOB"; q2=$JOB
	ctx "quota: third queued job of a --max-queued 2 key"
	as "$Q_TOK" req POST /v1/jobs "$ECHO_JOB"
	expect_error 429 quota_exceeded
	as "$Q_TOK" req POST "/v1/jobs/$q1/cancel"
	ctx "quota: after one was cancelled"
	as "$Q_TOK" req POST /v1/jobs "$ECHO_JOB"
	expect_status 202
	q4=$(jid)
	db_run "$q2"
	ctx "quota: running jobs count too"
	as "$Q_TOK" req POST /v1/jobs "$ECHO_JOB"
	expect_error 429 quota_exceeded
	db_finish "$q2" succeeded 0 NULL '' '' '[]'
	ctx "quota: after one finished"
	as "$Q_TOK" req POST /v1/jobs "$ECHO_JOB"
	expect_status 202
	ctx "quota: other keys are not affected"
	as "$A2_TOK" req POST /v1/jobs "$ECHO_JOB"
	expect_status 202
	: "$q4"
}

# ---------------------------------------------------------------- methods, paths, rate limit

t_methods() {
	local allow_get='(^|[ ,])GET([ ,]|$)' allow_post='(^|[ ,])POST([ ,]|$)'
	ctx "405: DELETE /v1/jobs"
	as "$A_TOK" req DELETE /v1/jobs
	expect_error 405 method_not_allowed
	expect_header Allow "$allow_get"
	expect_header Allow "$allow_post"
	ctx "405: PUT /v1/health"
	as '' req PUT /v1/health '{}'
	expect_error 405 method_not_allowed
	expect_header Allow "$allow_get"
	ctx "405: DELETE /v1/jobs/{id}"
	as "$A_TOK" req DELETE "/v1/jobs/$JF"
	expect_error 405 method_not_allowed
	expect_header Allow "$allow_get"
	ctx "405: GET /v1/jobs/{id}/cancel"
	as "$A_TOK" req GET "/v1/jobs/$JF/cancel"
	expect_error 405 method_not_allowed
	expect_header Allow "$allow_post"
	ctx "405: POST /v1/jobs/{id}/artifacts"
	as "$A_TOK" req POST "/v1/jobs/$JF/artifacts" '{}'
	expect_error 405 method_not_allowed
	expect_header Allow "$allow_get"
	local p
	for p in /v1/nope / /v1 /v2/jobs "/v1/jobs/$JF/nope"; do
		ctx "404: unknown path $p"
		as "$A_TOK" req GET "$p"
		expect_error 404 not_found
	done
}

t_ratelimit() {
	local i n429 nother f ct
	local -a a=()
	for i in $(seq 40); do a+=(-o "$T_DIR/rl.$i" "$SANDBOX_URL/v1/health"); done
	curl -sS --cacert "$SANDBOX_CACERT" --parallel --parallel-immediate --parallel-max 40 \
		-w '%{http_code} %{filename_effective} %{content_type}\n' "${a[@]}" > "$T_DIR/rl.out" 2> /dev/null
	n429=$(awk '$1 == 429' "$T_DIR/rl.out" | wc -l)
	nother=$(awk '$1 != 429 && $1 != 200' "$T_DIR/rl.out" | wc -l)
	ctx "rate limit: 40 parallel health requests"
	expect_true "$CTX: at least one 429 (got $n429)" test "$n429" -ge 1
	expect_eq "$CTX: every other answer is 200" 0 "$nother"
	read -r _ f ct <<< "$(awk '$1 == 429 { print; exit }' "$T_DIR/rl.out")"
	if [ -n "${f:-}" ]; then
		cp "$f" "$BODY"
		printf 'HTTP/1.1 429\r\nContent-Type: %s\r\n\r\n' "$ct" > "$HDRS"
		STATUS=429 LAST_REQ="GET /v1/health (parallel)"
		_record GET /v1/health
		expect_error 429 rate_limited
	fi
	sleep 2
}

# ---------------------------------------------------------------- main

echo "# api suite: run $RUN against $SANDBOX_URL"
# The suite needs a frozen queue (see the header); tests/run-integration.sh stops the
# runner for it. A live runner would claim the suite's jobs from under it.
need_no_runner
# Leave nothing of this run for a runner started later: end its jobs that are still
# queued or (as played by the suite) running.
at_exit "sql \"INSERT INTO job_events (job_id, from_state, to_state, actor)
	SELECT id, state, 'cancelled', 'itest-cleanup' FROM jobs
	WHERE identity_namespace LIKE 'itest-$RUN%' AND state IN ('queued', 'running');
	UPDATE jobs SET state = 'cancelled', finished_at = NOW(3), lease_expires_at = NULL
	WHERE identity_namespace LIKE 'itest-$RUN%' AND state IN ('queued', 'running');\""
as '' req GET /v1/health
if [ "$STATUS" = 000 ]; then
	echo "Bail out! $SANDBOX_URL does not answer"
	exit 2
fi
. "$HERE/api/identity.sh"

setup_keys
t_health
t_keys
t_auth
t_submit
t_idempotency
t_validation_json
t_validation_command
t_validation_files
t_validation_limits
t_validation_metadata
t_media
t_network
t_results
t_artifacts
t_tenancy
t_list
t_wait
t_cancel
t_quota
t_key_limits
t_identity
t_metrics
t_submit_wait
t_methods
t_ratelimit
finish
