# tests/integration/api/validation.sh: api.sh's submit validation cases: the JSON body, command and argv, files, limits,
# metadata, media types and the network permission.
# Sourced by api.sh (function definitions only: api.sh's main calls them in its order,
# with its helpers, keys and variables).
# shellcheck shell=bash

# ---------------------------------------------------------------- validation

# bad FIELD BODY [curl args]: one submission that must be a 400 naming FIELD
# (FIELD '' = invalid_json without a field). BAD_NAME names a check whose body is a file.
bad() {
	local field=$1 body=$2
	shift 2
	ctx "validation: $(printf '%s' "${BAD_NAME:-$body}" | tr '\n\t' '  ' | head -c 90)"
	as "$A_TOK" req POST /v1/jobs "$body" "$@"
	if [ -n "$field" ]; then
		expect_error 400 invalid_request "$field"
	else
		expect_error 400 invalid_json ''
	fi
}
# badf FIELD FILES_JSON: a submission with the given "files" value.
badf() { bad "$1" "{\"command\":\"true\",\"files\":$2}"; }
okay() { # okay NAME BODY: a submission that must be accepted
	ctx "validation: $1"
	as "$A_TOK" req POST /v1/jobs "$2"
	expect_status 202
}

t_validation_json() {
	local f=$T_DIR/v
	bad '' '{'
	bad '' '{"command":"true",}'
	bad '' "{\"command\":'true'}"
	printf '{"command":"echo \xff\xfe"}' > "$f.utf8"
	BAD_NAME='invalid UTF-8 in a string' bad '' "@$f.utf8"
	printf '{"command":"true","metadata":{"k\xc0\xaf":"x"}}' > "$f.utf8b"
	BAD_NAME='overlong UTF-8 in a key' bad '' "@$f.utf8b"
	printf '{"command":"echo \xed\xa0\x80"}' > "$f.utf8c"
	BAD_NAME='UTF-8 encoded surrogate' bad '' "@$f.utf8c"
	bad '' '{"command":"a","command":"b"}'
	bad '' '{"command":"true","metadata":{"a":"1","a":"2"}}'
	bad '' '{"command":"echo \u0000"}'
	bad '' '{"command":"true","env":{"A":"x\u0000y"}}'
	local b
	for b in '[{"command":"true"}]' '"x"' 'null' '42'; do
		ctx "validation: body $b is not an object"
		as "$A_TOK" req POST /v1/jobs "$b"
		expect_error 400 'invalid_request|invalid_json' ''
	done
	bad foo '{"command":"true","foo":1}'
	bad identity '{"command":"true","identity":{"tenant_id":"x"}}'
	bad tenant_id '{"command":"true","tenant_id":"x"}'
}

t_validation_command() {
	bad command '{"command":"true","argv":["true"]}'
	bad command '{}'
	bad command '{"stdin":"x"}'
	bad command '{"command":""}'
	bad command '{"command":5}'
	bad command '{"command":["true"]}'
	bad argv '{"argv":[]}'
	bad argv '{"argv":[1]}'
	bad argv '{"argv":["a",null]}'
	bad argv '{"argv":"true"}'
	bad stdin '{"command":"true","stdin":"a","stdin_base64":"YQ=="}'
	bad stdin '{"command":"true","stdin":5}'
	bad stdin_base64 '{"command":"true","stdin_base64":"!!!!"}'
	bad stdin_base64 '{"command":"true","stdin_base64":"YQ=!"}'
	okay 'stdin_base64 accepted' '{"command":"cat","stdin_base64":"aGVsbG8K"}'
	bad env '{"command":"true","env":[]}'
	bad env '{"command":"true","env":"A=1"}'
	bad env '{"command":"true","env":{"A":1}}'
	bad env '{"command":"true","env":{"A":null}}'
	bad env '{"command":"true","env":{"1A":"x"}}'
	bad env '{"command":"true","env":{"A-B":"x"}}'
	bad env '{"command":"true","env":{"A=B":"x"}}'
	bad env '{"command":"true","env":{"":"x"}}'
	BAD_NAME="$((MAX_ENV + 1)) env entries" bad env \
		"$(jq -cn --argjson n "$((MAX_ENV + 1))" '{command:"true",env:([range($n) | {key:"V\(.)",value:"x"}] | from_entries)}')"
	okay "$MAX_ENV env entries" \
		"$(jq -cn --argjson n "$MAX_ENV" '{command:"true",env:([range($n) | {key:"_V\(.)",value:"x"}] | from_entries)}')"
}

t_validation_files() {
	local p f=$T_DIR/v long255 long300
	long255=$(printf 'a%.0s' $(seq "$MAX_PATH"))
	long300=$(printf 'a%.0s' $(seq 300))
	badf files '{}'
	badf files '"main.py"'
	BAD_NAME="$((MAX_FILES + 1)) files" bad files \
		"$(jq -cn --argjson n "$((MAX_FILES + 1))" '{command:"true",files:[range($n) | {path:"f\(.)",content:""}]}')"
	okay "$MAX_FILES files" \
		"$(jq -cn --argjson n "$MAX_FILES" '{command:"true",files:[range($n) | {path:"f\(.)",content:""}]}')"
	{
		printf '{"command":"true","files":[{"path":"big","content":"'
		head -c "$MAX_FILES_BYTES" /dev/zero | tr '\0' a
		printf '"},{"path":"one","content":"x"}]}'
	} > "$f.big"
	BAD_NAME="files totalling max_files_bytes+1" bad files "@$f.big"
	badf 'files[0]' '["x"]'
	badf 'files[1]' '[{"path":"a","content":""},7]'
	badf 'files[0].mode' '[{"path":"a","content":"","mode":"0755"}]'
	for p in /abs a/../b ./a a//b a/ '' . .. a/. ../a "a\u0001b" "a\nb" "$long300"; do
		badf 'files[0].path' "[{\"path\":\"$p\",\"content\":\"\"}]"
	done
	badf 'files[0].path' '[{"content":""}]'
	badf 'files[0].path' '[{"path":5,"content":""}]'
	badf 'files[1].path' '[{"path":"a","content":""},{"path":"a","content":"x"}]'
	okay "a $MAX_PATH-byte path" "{\"command\":\"true\",\"files\":[{\"path\":\"$long255\",\"content\":\"\"}]}"
	badf 'files[0].content' '[{"path":"a","content":"x","content_base64":"eA=="}]'
	badf 'files[0].content' '[{"path":"a"}]'
	badf 'files[0].content' '[{"path":"a","content":5}]'
	badf 'files[0].content_base64' '[{"path":"a","content_base64":"%%%%"}]'
	badf 'files[0].executable' '[{"path":"a","content":"","executable":"yes"}]'
	badf 'files[0].executable' '[{"path":"a","content":"","executable":1}]'
	for p in /abs ../x a/../b a//b; do
		bad cwd "{\"command\":\"true\",\"cwd\":\"$p\"}"
	done
	bad cwd '{"command":"true","cwd":5}'
	for p in /abs a/../b a//b ..; do
		bad artifacts "{\"command\":\"true\",\"artifacts\":\"$p\"}"
	done
	bad artifacts '{"command":"true","artifacts":5}'
	okay 'artifacts null' '{"command":"true","artifacts":null}'
}

t_validation_limits() {
	local l
	bad limits '{"command":"true","limits":"x"}'
	bad limits '{"command":"true","limits":[]}'
	bad limits.foo '{"command":"true","limits":{"foo":1}}'
	bad limits.Memory_MB '{"command":"true","limits":{"Memory_MB":256}}'
	for l in "${LIMIT_NAMES[@]}"; do
		bad "limits.$l" "{\"command\":\"true\",\"limits\":{\"$l\":$((LMIN[$l] - 1))}}"
		bad "limits.$l" "{\"command\":\"true\",\"limits\":{\"$l\":$((LMAX[$l] + 1))}}"
	done
	bad limits.memory_mb '{"command":"true","limits":{"memory_mb":"256"}}'
	bad limits.memory_mb '{"command":"true","limits":{"memory_mb":256.5}}'
	bad limits.memory_mb '{"command":"true","limits":{"memory_mb":true}}'
	bad limits.wall_seconds '{"command":"true","limits":{"wall_seconds":"10"}}'
	bad limits.pids '{"command":"true","limits":{"pids":false}}'
	bad limits.disk_mb '{"command":"true","limits":{"disk_mb":[1]}}'
	bad limits.output_bytes '{"command":"true","limits":{"output_bytes":1.5}}'
	# 2^32 + a valid value: a server that narrows to 32 bits would accept it.
	bad limits.memory_mb '{"command":"true","limits":{"memory_mb":4294967552}}'
	bad limits.wall_seconds '{"command":"true","limits":{"wall_seconds":4294967306}}'
	bad limits.pids '{"command":"true","limits":{"pids":-4294967232}}'
	# Past 64 bits: some JSON parsers give up on the number itself; a 400 either way.
	ctx "validation: output_bytes past 64 bits"
	as "$A_TOK" req POST /v1/jobs '{"command":"true","limits":{"output_bytes":18446744073709551617}}'
	expect_error 400 'invalid_request|invalid_json'
	bad limits.wall_seconds '{"command":"true","limits":{"wall_seconds":-1}}'
	bad network '{"command":"true","network":"yes"}'
	bad network '{"command":"true","network":1}'
}

t_validation_metadata() {
	local k big
	bad metadata '{"command":"true","metadata":[]}'
	bad metadata '{"command":"true","metadata":"x"}'
	bad metadata '{"command":"true","metadata":{"a":1}}'
	bad metadata '{"command":"true","metadata":{"a":{"b":"c"}}}'
	for k in tenant_id Subject_ID sandbox.x identity IDENTITY_NAMESPACE subject_type actor_type \
		actor_id sandbox Sandbox-Trace X-Sandbox-Trace x-sandbox; do
		bad "metadata.$k" "{\"command\":\"true\",\"metadata\":{\"ok\":\"1\",\"$k\":\"x\"}}"
	done
	okay 'metadata keys that only look close to reserved' \
		'{"command":"true","metadata":{"tenant":"x","my_sandbox":"y","xsandbox":"z","actor":"a"}}'
	big=$(printf 'm%.0s' $(seq "$MAX_META"))
	BAD_NAME="metadata of more than $MAX_META bytes" bad metadata "{\"command\":\"true\",\"metadata\":{\"k\":\"$big\"}}"
}

t_media() {
	local f=$T_DIR/m413 m label h st
	# "CONTEXT|HEADER|STATUS": the job with that Content-Type header
	for m in "text/plain body|Content-Type: text/plain|415" "no Content-Type|Content-Type:|415" \
		"form-encoded body|Content-Type: application/x-www-form-urlencoded|415" \
		"application/jsonx|Content-Type: application/jsonx|415" \
		"application/json; charset=utf-8|Content-Type: application/json; charset=utf-8|202" \
		"application/json;charset=UTF-8|Content-Type: application/json;charset=UTF-8|202" \
		"Application/JSON (media types are case-insensitive)|Content-Type: Application/JSON|202"; do
		IFS="|" read -r label h st <<< "$m"
		ctx "media: $label"
		as "$A_TOK" req POST /v1/jobs "$ECHO_JOB" -H "$h"
		if [ "$st" = 415 ]; then
			expect_error 415 unsupported_media_type
		else
			expect_status 202
		fi
	done
	ctx "media: 11 MiB body"
	head -c $((11 * 1024 * 1024)) /dev/zero | tr '\0' ' ' > "$f"
	as "$A_TOK" req POST /v1/jobs "@$f"
	expect_error 413 payload_too_large
	expect_true "$CTX: not HTML" fails grep -qi '<html' "$BODY"
}

t_network() {
	ctx "network: true without permission"
	as "$A_TOK" req POST /v1/jobs '{"command":"true","network":true}'
	expect_error 403 forbidden network
	ctx "network: false without permission"
	as "$A_TOK" req POST /v1/jobs '{"command":"true","network":false}'
	expect_status 202
	expect_json .network false
	ctx "network: true with an --allow-network key"
	as "$NET_TOK" req POST /v1/jobs '{"command":"true","network":true}'
	expect_status 202
	expect_json .network true
}
