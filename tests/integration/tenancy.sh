#!/usr/bin/env bash
# tests/integration/tenancy.sh: tenant isolation and resource safety (issue 7) against a
# running stack with its runner, over HTTPS through nginx:
#   1. identity compares byte for byte ("eve" is not "eve "), keys create refuses edge
#      white space and control characters;
#   2. every response is bounded: list previews, inline cap, the output range endpoint,
#      API worker peak RSS after maximum-size output;
#   3. a job at every output and artifact maximum at once succeeds and is retrievable;
#      a result the database refuses ends `error` 125 naming the cause; a server whose
#      max_allowed_packet is too small is refused at runner start;
#   4. per-key stored-bytes quota, retention (`sandboxctl purge`), secrets erased at rest;
#   5. fair claims across tenants, per-key running cap, per-key long-poll share;
#   7. revocation cancels queued jobs and kills running ones (or keeps them).
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env --root "it restarts the runner" --token
RUN="$RANDOM$RANDOM"
NS="tenancy-$RUN"
SLOTS=$(conf_get runner_slots)
WORKERS=$(conf_get api_workers)

# key TENANT SUBJECT [options...]: creates a key of the run's namespace, sets KEY_ID and KEY_TOK.
key() { mkkey KEY "$NS" "$1" user "$2" "${@:3}"; }

ORIG_PACKET=$(sql "SELECT @@GLOBAL.max_allowed_packet")
restore() {
	sql "SET GLOBAL max_allowed_packet = $ORIG_PACKET" 2> /dev/null
	bash "$STACK" start-runner > /dev/null 2>&1 || true
}
at_exit restore

# ====================================================================== 1. identity
ctx "identity: keys create refuses edge white space and control characters"
for bad in "eve " " eve" $'eve\t' $'eve\xc2\xa0' $'\xe2\x80\x8beve' $'ev\x01e'; do
	out=$(ctl keys create --namespace "$NS" --tenant t --subject-type user --subject-id "$bad" --json 2>&1)
	rc=$?
	expect_eq "subject-id $(printf '%q' "$bad"): exit 2" 2 "$rc"
	expect_true "subject-id $(printf '%q' "$bad"): the message names --subject-id" \
		grep -q -- '--subject-id has' <<< "$out"
done
out=$(ctl keys create --namespace "$NS" --tenant "t " --subject-type user --subject-id eve --json 2>&1)
expect_eq "--tenant 't ' is refused (exit 2)" 2 "$?"
expect_true "the message says white space and byte-for-byte" \
	grep -q 'leading or trailing white space (identities are compared byte for byte' <<< "$out"

key t eve
EVE_ID=$KEY_ID EVE_TOK=$KEY_TOK
# The second identity differs only by trailing spaces: made in SQL, as the CLI refuses it.
SP_TOK="sbx_$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
SP_ID=$(cat /proc/sys/kernel/random/uuid)
sql "INSERT INTO api_keys (id, token_hash, identity_namespace, tenant_id, subject_type, subject_id)
	VALUES ('$SP_ID', UNHEX(SHA2('$SP_TOK', 256)), '$NS', 't ', 'user', 'eve ')"
expect_eq "both keys exist" 2 "$(sql "SELECT COUNT(*) FROM api_keys WHERE identity_namespace = '$NS' AND subject_type = 'user' AND id IN ('$EVE_ID', '$SP_ID')")"

ctx "migration 003 keeps existing data"
# A database at migration 002 with a key, a finished and a queued job, then the later
# migrations as sandboxctl migrate applies them (the mariadb client runs the same files).
MIG="mig_$RUN"
mig_sql() { SQL_DB=$MIG sql "$1"; }
sql "CREATE DATABASE $MIG CHARACTER SET utf8mb4"
at_exit "sql 'DROP DATABASE IF EXISTS $MIG'"
for f in "$REPO"/schema/001_*.sql "$REPO"/schema/002_*.sql; do
	mariadb --no-defaults -S "$SANDBOX_DB_SOCKET" -u root "$MIG" < "$f"
done
mig_sql "INSERT INTO api_keys (id, token_hash, identity_namespace, tenant_id, subject_type, subject_id)
	VALUES ('k1', REPEAT('a', 32), 'ns', 't', 'user', 'eve');
INSERT INTO jobs (id, key_id, identity_namespace, tenant_id, subject_type, subject_id, state, command,
	env_json, stdin, metadata_json, wall_seconds, cpu_seconds, memory_mb, pids, output_bytes, disk_mb,
	idempotency_key)
	VALUES ('j1', 'k1', 'ns', 't', 'user', 'eve', 'succeeded', 'echo', '{\"A\":\"secret\"}', 'in', '{}',
	1, 1, 1, 1, 1, 1, 'idem-1'),
	('j2', 'k1', 'ns', 't', 'user', 'eve', 'queued', 'echo', '{\"A\":\"secret\"}', 'in', '{}',
	1, 1, 1, 1, 1, 1, NULL);
INSERT INTO job_files VALUES ('j1', 0, 'a.txt', 'hello', 0), ('j2', 0, 'a.txt', 'hello', 0);
INSERT INTO job_results (job_id, exit_code, stdout, stderr, diagnostics_json) VALUES ('j1', 0, 'out', 'errr', '[]');
INSERT INTO job_artifacts VALUES ('j1', 'out/a', 3, 'abc', 'xyz');"
for f in "$REPO"/schema/00[3-9]_*.sql; do
	mariadb --no-defaults -S "$SANDBOX_DB_SOCKET" -u root "$MIG" < "$f" ||
		_notok "migration $(basename "$f") applies to a 002 database with rows" "success" "failure"
done
expect_eq "identity, idempotency key and states are kept" "j1 eve idem-1 succeeded|j2 eve NULL queued" \
	"$(mig_sql "SELECT CONCAT_WS(' ', id, subject_id, COALESCE(idempotency_key, 'NULL'), state) FROM jobs ORDER BY id" | paste -sd'|')"
expect_eq "the finished job's output moved to chunks, byte for byte" "1 out|2 errr" \
	"$(mig_sql "SELECT CONCAT(stream, ' ', data) FROM job_output WHERE job_id = 'j1' ORDER BY stream" | paste -sd'|')"
expect_eq "its sizes are on the result row" "3 4" \
	"$(mig_sql "SELECT stdout_bytes, stderr_bytes FROM job_results WHERE job_id = 'j1'" | tr '\t' ' ')"
expect_eq "its artifact's content moved to chunks" "xyz" \
	"$(mig_sql "SELECT data FROM job_artifact_chunks WHERE job_id = 'j1' AND path = 'out/a'")"
expect_eq "the finished job's secrets are erased, names and digests kept" \
	"{}  A $(printf secret | sha256sum | cut -c1-64)" \
	"$(mig_sql "SELECT env_json, stdin, JSON_UNQUOTE(JSON_EXTRACT(env_meta_json, '\$[0].name')), JSON_UNQUOTE(JSON_EXTRACT(env_meta_json, '\$[0].sha256')) FROM jobs WHERE id = 'j1'" | tr '\t' ' ')"
expect_eq "the queued job keeps its inputs (the runner needs them)" '{"A":"secret"} in hello' \
	"$(mig_sql "SELECT j.env_json, j.stdin, f.content FROM jobs j JOIN job_files f ON f.job_id = j.id WHERE j.id = 'j2'" | tr '\t' ' ')"
expect_eq "'eve' no longer equals 'eve '" 0 "$(mig_sql "SELECT COUNT(*) FROM jobs WHERE subject_id = 'eve '")"
expect_eq "the key's stored bytes are summed" 1 "$(mig_sql "SELECT COUNT(*) FROM key_storage WHERE key_id = 'k1' AND bytes > 0")"

ctx "identity: 'eve' and 'eve ' are two identities"
IDEM="idem-$RUN"
as "$EVE_TOK" submit '{"command":"sleep 30","limits":{"wall_seconds":40}}' -H "Idempotency-Key: $IDEM"
J_EVE=$JOB
as "$SP_TOK" submit '{"command":"sleep 30","limits":{"wall_seconds":40}}' -H "Idempotency-Key: $IDEM"
J_SP=$JOB
expect_true "the same Idempotency-Key and body from 'eve ' makes a new job, not a replay" \
	test -n "$J_SP" -a "$J_SP" != "$J_EVE"
expect_eq "no Idempotent-Replayed header for 'eve '" "" "$(hdr Idempotent-Replayed)"
expect_json '.identity.tenant_id + "|" + .identity.subject_id' 't |eve ' "the job carries 'eve ' exactly"
as "$SP_TOK" req GET "/v1/jobs/$J_EVE"
expect_error 404 not_found
as "$EVE_TOK" req GET "/v1/jobs/$J_SP"
expect_error 404 not_found
as "$SP_TOK" req GET "/v1/jobs?limit=100"
expect_json "[.jobs[].id] | index(\"$J_EVE\")" null "'eve ' does not list eve's job"
expect_json "[.jobs[].id] == [\"$J_SP\"]" true "'eve ' lists exactly its own job"
as "$EVE_TOK" req GET "/v1/jobs?limit=100"
expect_json "[.jobs[].id] == [\"$J_EVE\"]" true "eve lists exactly her own job"
as "$SP_TOK" req POST "/v1/jobs/$J_EVE/cancel" ''
expect_error 404 not_found
expect_eq "eve's job was not cancelled by 'eve '" 0 "$(sql "SELECT cancel_requested FROM jobs WHERE id = '$J_EVE'")"
as "$SP_TOK" req GET "/v1/jobs/$J_EVE/output/stdout"
expect_error 404 not_found
as "$EVE_TOK" req POST "/v1/jobs/$J_EVE/cancel" ''
as "$SP_TOK" req POST "/v1/jobs/$J_SP/cancel" ''
as "$SP_TOK" req GET /v1/identity
expect_json '.identity | [.tenant_id, .subject_id] | tostring' '["t ","eve "]' \
	"GET /v1/identity returns 'eve ' exactly, trailing spaces kept"
expect_json '.complete' true
expect_eq "the identity columns are NO PAD" 0 \
	"$(sql "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'sandbox' AND COLUMN_NAME IN ('identity_namespace','tenant_id','subject_type','subject_id','actor_type','actor_id','idempotency_key') AND COLLATION_NAME <> 'utf8mb4_nopad_bin'")"

# ====================================================================== 3. maximum result
# Every maximum at once: stdout and stderr at output_bytes_max, runner_max_artifact_files
# artifacts holding runner_max_artifacts_bytes, one of them runner_max_artifact_bytes.
OUT_MAX=$(conf_get output_bytes_max 16777216)
ART_FILES=$(conf_get runner_max_artifact_files 100)
ART_ONE=$(conf_get runner_max_artifact_bytes 16777216)
ART_ALL=$(conf_get runner_max_artifacts_bytes 33554432)
REST=$(((ART_ALL - ART_ONE) / (ART_FILES - 1)))
key big owner --max-stored-mb 100000
BIG_TOK=$KEY_TOK
ctx "maximum result: stdout $OUT_MAX, stderr $OUT_MAX, $ART_FILES artifacts, $ART_ALL bytes"
script="yes stdout-line | head -c $OUT_MAX; yes stderr-line | head -c $OUT_MAX >&2; mkdir out;"
script+=" yes big-artifact | head -c $ART_ONE > out/big; i=1;"
script+=" while [ \$i -lt $ART_FILES ]; do yes a\$i | head -c $REST > out/f\$i; i=\$((i+1)); done"
# (its hundred files fork twice each: scaled wall and CPU; cpu_seconds 10 is the default)
as "$BIG_TOK" submit "$(jq -nc --arg c "$script" --argjson o "$OUT_MAX" --argjson w "$(tscale 120 300)" \
	--argjson cpu "$(tscale 10 300)" \
	'{command:$c, artifacts:"out", limits:{output_bytes:$o, disk_mb:200, memory_mb:512, wall_seconds:$w}}
	 | if $cpu != 10 then .limits.cpu_seconds = $cpu else . end')"
J_BIG=$JOB
as "$BIG_TOK" await "$J_BIG" 180
expect_json '.status + " " + (.result.exit_code|tostring)' 'succeeded 0'
expect_json '[.result.stdout_bytes, .result.stderr_bytes, .result.stdout_truncated, .result.stderr_truncated] | tostring' \
	"[$OUT_MAX,$OUT_MAX,false,false]"
INLINE=$(conf_get inline_output_bytes 1048576)
expect_json '.result.stdout | length' "$INLINE" "GET carries inline_output_bytes of stdout"
expect_json '.result.stdout_inline_truncated' true
expect_json '.result.artifacts | length' "$ART_FILES"
expect_true "GET /v1/jobs/{id} at the maximum is bounded (< 3 MiB)" test "$(stat -c %s "$BODY")" -lt 3145728
# The whole of stdout through the range endpoint, page by page.
off=0 pages=0
: > "$T_DIR/stdout.got"
while :; do
	as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/output/stdout?offset=$off&limit=1048576"
	[ "$STATUS" = 200 ] || break
	jq -j '.data' "$BODY" >> "$T_DIR/stdout.got"
	off=$(jq -r .next_offset "$BODY")
	pages=$((pages + 1))
	[ "$(jq -r .eof "$BODY")" = true ] && break
	[ "$pages" -gt 40 ] && break
done
expect_eq "stdout read back in 1 MiB pages: $((OUT_MAX / 1048576)) pages" "$((OUT_MAX / 1048576))" "$pages"
expect_eq "stdout read back is exactly what the job printed" \
	"$(yes stdout-line | head -c "$OUT_MAX" | sha256sum | cut -c1-64)" \
	"$(sha256sum < "$T_DIR/stdout.got" | cut -c1-64)"
as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/output/stderr?offset=$((OUT_MAX - 5))&limit=100"
expect_eq "the last 5 bytes of stderr, eof" \
	"$(yes stderr-line | head -c "$OUT_MAX" | tail -c 5 | jq -Rsc --argjson n "$OUT_MAX" '[., $n, true, $n]')" \
	"$(jq -c '[.data, .next_offset, .eof, .total_bytes]' "$BODY")"
as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/output/stderr?offset=$((OUT_MAX + 7))"
expect_json '[.data, .next_offset, .eof] | tostring' "[\"\",$((OUT_MAX + 7)),true]" "past the end: empty"
as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/output/stdout?offset=0&limit=4&encoding=base64"
expect_json '.data_base64' "$(printf stdo | base64)" "encoding=base64"
for q in "limit=0" "limit=1048577" "offset=-1" "encoding=hex" "foo=1"; do
	as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/output/stdout?$q"
	expect_error 400 invalid_request "${q%%=*}"
done
as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/output/stdin"
expect_error 404 not_found
as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/artifacts/out/big"
cp "$BODY" "$T_DIR/big.got"
expect_eq "the $ART_ONE-byte artifact downloads whole" \
	"$(yes big-artifact | head -c "$ART_ONE" | sha256sum | cut -c1-64)" "$(sha256sum < "$T_DIR/big.got" | cut -c1-64)"
as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/artifacts"
jq -r '.[] | "\(.path) \(.sha256)"' "$BODY" > "$T_DIR/arts"
bad=0 n=0
while read -r p s; do
	as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/artifacts/$p"
	[ "$STATUS" = 200 ] && [ "$(sha256sum < "$BODY" | cut -c1-64)" = "$s" ] || bad=$((bad + 1))
	n=$((n + 1))
done < "$T_DIR/arts"
expect_eq "all $ART_FILES artifacts download with their listed sha256" "$ART_FILES 0" "$n $bad"

as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/artifacts/out/$(printf 'a%.0s' $(seq 1 2100))"
expect_error 414 uri_too_long ''

# ====================================================================== 2. bounded responses
ctx "bounded responses: a list of 100 jobs at the maximum output"
# 99 more jobs whose stored output is at the maximum too, made in SQL from the big job's
# rows (the runner was shown to store them above; a hundred real 32 MiB runs would take
# minutes and gigabytes for nothing more).
sql "CREATE TEMPORARY TABLE n (i INT); INSERT INTO n VALUES $(seq -s, 1 99 | sed 's/\([0-9]*\)/(\1)/g');
	INSERT INTO jobs (id, key_id, identity_namespace, tenant_id, subject_type, subject_id, state,
		command, env_json, stdin, metadata_json, wall_seconds, cpu_seconds, memory_mb, pids,
		output_bytes, disk_mb, created_at, started_at, finished_at, inputs_erased)
	SELECT CONCAT(LEFT(j.id, 24), LPAD(LOWER(HEX(n.i)), 12, '0')), j.key_id, j.identity_namespace,
		j.tenant_id, j.subject_type, j.subject_id, 'succeeded', j.command, '{}', '', '{}',
		1, 1, 16, 1, j.output_bytes, 1, j.created_at, j.started_at, j.finished_at, 1
	FROM jobs j, n WHERE j.id = '$J_BIG';
	INSERT INTO job_results (job_id, exit_code, stdout_bytes, stderr_bytes, diagnostics_json)
	SELECT CONCAT(LEFT(r.job_id, 24), LPAD(LOWER(HEX(n.i)), 12, '0')), 0, r.stdout_bytes, r.stderr_bytes, '[]'
	FROM job_results r, n WHERE r.job_id = '$J_BIG';
	INSERT INTO job_output (job_id, stream, off, data)
	SELECT CONCAT(LEFT(o.job_id, 24), LPAD(LOWER(HEX(n.i)), 12, '0')), o.stream, o.off, o.data
	FROM job_output o, n WHERE o.job_id = '$J_BIG' AND o.off < 2097152;"
expect_eq "100 jobs of this key at the maximum output" 100 \
	"$(sql "SELECT COUNT(*) FROM jobs j JOIN job_results r ON r.job_id = j.id WHERE j.key_id = (SELECT key_id FROM jobs WHERE id = '$J_BIG') AND r.stdout_bytes = $OUT_MAX")"
as "$BIG_TOK" req GET "/v1/jobs?limit=100"
expect_status 200
PREVIEW=$(conf_get list_preview_bytes 1024)
expect_json '.jobs | length' 100
expect_json "[.jobs[].result | select((.stdout | length) <= $PREVIEW and .stdout_inline_truncated and .stdout_bytes == $OUT_MAX)] | length" 100 \
	"every item carries at most $PREVIEW bytes of stdout and says there is more"
expect_true "the page of 100 is small (< 1 MiB: $(stat -c %s "$BODY") bytes)" test "$(stat -c %s "$BODY")" -lt 1048576
for i in $(seq 1 10); do
	id="${J_BIG:0:24}$(printf '%012x' "$i")"
	as "$BIG_TOK" req GET "/v1/jobs/$id"
	as "$BIG_TOK" req GET "/v1/jobs/$id/output/stderr?offset=1000000&limit=1048576"
	as "$BIG_TOK" req GET "/v1/jobs?limit=100"
done
as "$BIG_TOK" req GET "/v1/jobs/$J_BIG/artifacts/out/big"
peak=0
for p in $(pgrep -f "sandbox-api --config $SANDBOX_CONFIG"); do
	kb=$(awk '/^VmHWM/ {print $2}' "/proc/$p/status" 2> /dev/null)
	[ -n "$kb" ] && [ "$kb" -gt "$peak" ] && peak=$kb
done
note "API processes' peak RSS (VmHWM): $peak KiB"
expect_true "no API process's peak RSS passed 64 MiB (peak $peak KiB)" test "$peak" -gt 0 -a "$peak" -lt 65536
sql "DELETE o FROM job_output o JOIN jobs j ON j.id = o.job_id WHERE j.key_id = (SELECT key_id FROM jobs WHERE id = '$J_BIG') AND j.id <> '$J_BIG';
	DELETE r FROM job_results r JOIN jobs j ON j.id = r.job_id WHERE j.key_id = (SELECT key_id FROM jobs WHERE id = '$J_BIG') AND j.id <> '$J_BIG';
	DELETE FROM jobs WHERE key_id = (SELECT key_id FROM jobs WHERE id = '$J_BIG') AND id <> '$J_BIG';"

# ====================================================================== 3b. unstorable results
ctx "a result the database refuses ends error 125 and names the cause"
note "max_allowed_packet was $ORIG_PACKET; 1 MiB for this test"
sql "SET GLOBAL max_allowed_packet = 1048576"
# The dispatcher checked the packet size when it started; each supervisor opens its own
# connection, which now has 1 MiB: a 1 MiB output chunk no longer fits.
submit '{"command":"head -c 1500000 /dev/zero | tr \\\\0 x","limits":{"output_bytes":2000000}}'
J_UNS=$JOB
await "$J_UNS" 120
expect_json '.status + " " + (.result.exit_code|tostring)' 'error 125'
expect_json '.result.diagnostics | tostring' \
	"[\"result could not be stored: a value exceeds the server's max_allowed_packet (database error 1153)\"]"
expect_json '.failure.stage' result.store
expect_eq "stored once, not retried into a lost job: one finishing event" 1 \
	"$(sql "SELECT COUNT(*) FROM job_events WHERE job_id = '$J_UNS' AND to_state = 'error'")"
ctx "a max_allowed_packet too small for the configured caps is refused at runner start"
bash "$STACK" stop-runner > /dev/null 2>&1
"$SANDBOX_BIN/sandbox-runner" --config "$SANDBOX_CONFIG" --once --max-seconds "$(tscale 5)" > "$T_DIR/runner.out" 2>&1
expect_eq "the runner exits 2" 2 "$?"
expect_true "its log names max_allowed_packet and both values" \
	grep -q 'config_refused setting=max_allowed_packet server_value=1048576 needed=' "$T_DIR/runner.out"
sql "SET GLOBAL max_allowed_packet = $ORIG_PACKET"
bash "$STACK" start-runner > /dev/null 2>&1

# ====================================================================== 4. storage
ctx "stored-bytes quota"
key quota q --max-stored-mb 1
Q_ID=$KEY_ID Q_TOK=$KEY_TOK
file=$(head -c 600000 /dev/zero | tr '\0' y)
# Runner stopped: the first job's inputs must still be stored when the second arrives.
bash "$STACK" stop-runner > /dev/null 2>&1
as "$Q_TOK" submit "{\"command\":\"true\",\"files\":[{\"path\":\"a\",\"content\":\"$file\"}]}"
J_Q1=$JOB
as "$Q_TOK" req POST /v1/jobs "{\"command\":\"true\",\"files\":[{\"path\":\"a\",\"content\":\"$file\"}]}"
expect_error 429 quota_exceeded
expect_json '.error.message' "stored-bytes quota exceeded for this key: its jobs' output, artifacts and inputs leave no room for this job (delete or wait for old jobs to be purged)"
expect_eq "the queued job's inputs count against the key" 600002 \
	"$(sql "SELECT COALESCE(SUM(bytes), 0) FROM key_storage WHERE key_id = '$Q_ID'")"
bash "$STACK" start-runner > /dev/null 2>&1
as "$Q_TOK" await "$J_Q1"
expect_json .status succeeded
expect_eq "inputs leave the key's stored bytes when the job ends" 0 \
	"$(sql "SELECT COALESCE(SUM(bytes), 0) FROM key_storage WHERE key_id = '$Q_ID'")"
as "$Q_TOK" submit '{"command":"head -c 1200000 /dev/zero","limits":{"output_bytes":2000000}}'
as "$Q_TOK" await "$JOB"
expect_json '.status + " " + (.result.stdout_bytes|tostring)' 'succeeded 1200000'
expect_eq "output counts against the key" 1200000 \
	"$(sql "SELECT COALESCE(SUM(bytes), 0) FROM key_storage WHERE key_id = '$Q_ID'")"
as "$Q_TOK" req POST /v1/jobs '{"command":"true"}'
expect_error 429 quota_exceeded

ctx "retention: sandboxctl purge"
out=$(ctl purge --older-than 0s --dry-run)
expect_true "dry run counts without deleting ($out)" grep -Eq '^would purge [1-9][0-9]* jobs' <<< "$out"
expect_eq "dry run deleted nothing" 2 "$(sql "SELECT COUNT(*) FROM jobs WHERE key_id = '$Q_ID'")"
out=$(ctl purge --older-than 1d)
expect_true "nothing finished a day ago here: purged 0 of this run's jobs ($out)" \
	test "$(sql "SELECT COUNT(*) FROM jobs WHERE key_id = '$Q_ID'")" = 2
out=$(ctl purge --older-than 0s)
expect_true "purge prints its counts ($out)" grep -Eq '^purged [1-9][0-9]* jobs \([0-9]+ bytes\)' <<< "$out"
expect_eq "the key's jobs and everything hanging off them are gone" "0 0 0 0" \
	"$(sql "SELECT (SELECT COUNT(*) FROM jobs WHERE key_id = '$Q_ID'), (SELECT COUNT(*) FROM job_results r LEFT JOIN jobs j ON j.id = r.job_id WHERE j.id IS NULL), (SELECT COUNT(*) FROM job_output o LEFT JOIN jobs j ON j.id = o.job_id LEFT JOIN session_commands c ON c.id = o.job_id WHERE j.id IS NULL AND c.id IS NULL), (SELECT COUNT(*) FROM job_events e LEFT JOIN jobs j ON j.id = e.job_id WHERE j.id IS NULL)" | tr '\t' ' ')"
expect_eq "the key's stored bytes are back to 0" 0 \
	"$(sql "SELECT COALESCE(SUM(bytes), 0) FROM key_storage WHERE key_id = '$Q_ID'")"
as "$Q_TOK" submit '{"command":"true"}'
expect_true "the key can submit again" test -n "$JOB"
ctl purge --older-than 5x > /dev/null 2>&1
expect_eq "purge --older-than 5x is a usage error (exit 2)" 2 "$?"

ctx "secrets do not stay at rest"
SECRET="s3cr3t-$RUN-$RANDOM"
submit "{\"command\":\"cat; cat in.txt; printenv TOKEN_X | wc -c\",\"env\":{\"TOKEN_X\":\"env-$SECRET\"},\"stdin\":\"stdin-$SECRET\",\"files\":[{\"path\":\"in.txt\",\"content\":\"file-$SECRET\"}]}"
J_SEC=$JOB
expect_eq "while queued or running the values are stored (the runner needs them)" 1 \
	"$(sql "SELECT COUNT(*) FROM jobs WHERE id = '$J_SEC' AND (state IN ('succeeded') OR env_json LIKE '%env-$SECRET%')")"
await "$J_SEC"
expect_json .status succeeded
expect_eq "env values, stdin and file contents are erased" "{} 0 0" \
	"$(sql "SELECT env_json, LENGTH(stdin), (SELECT LENGTH(content) FROM job_files WHERE job_id = '$J_SEC') FROM jobs WHERE id = '$J_SEC'" | tr '\t' ' ')"
expect_eq "env names, sizes and sha256 are kept" \
	"TOKEN_X $((4 + ${#SECRET})) $(printf '%s' "env-$SECRET" | sha256sum | cut -c1-64)" \
	"$(sql "SELECT env_meta_json FROM jobs WHERE id = '$J_SEC'" | jq -r '.[] | "\(.name) \(.size) \(.sha256)"')"
expect_eq "stdin size and sha256 are kept" \
	"$((6 + ${#SECRET})) $(printf '%s' "stdin-$SECRET" | sha256sum | cut -c1-64)" \
	"$(sql "SELECT stdin_bytes, stdin_sha256 FROM jobs WHERE id = '$J_SEC'" | tr '\t' ' ')"
expect_eq "file size and sha256 are kept" \
	"in.txt $((5 + ${#SECRET})) $(printf '%s' "file-$SECRET" | sha256sum | cut -c1-64)" \
	"$(sql "SELECT path, size, sha256 FROM job_files WHERE job_id = '$J_SEC'" | tr '\t' ' ')"
mariadb-dump --no-defaults -S "$SANDBOX_DB_SOCKET" -u root --hex-blob=0 sandbox > "$T_DIR/dump.sql" 2> /dev/null
expect_true "the dump is readable" test -s "$T_DIR/dump.sql"
expect_eq "the env value is nowhere in the database" 0 "$(grep -ao "env-$SECRET" "$T_DIR/dump.sql" | wc -l)"
expect_eq "the file content is only in the job's stdout" 1 "$(grep -ao "file-$SECRET" "$T_DIR/dump.sql" | wc -l)"
expect_eq "the stdin value is only in the job's stdout" 1 "$(grep -ao "stdin-$SECRET" "$T_DIR/dump.sql" | wc -l)"

# ====================================================================== 5. fairness
ctx "fair claims: tenant A's job does not wait for tenant B's queue"
key fair-b b
B_TOK=$KEY_TOK B_KEY=$KEY_ID
key fair-a a
A_TOK=$KEY_TOK
bash "$STACK" stop-runner > /dev/null 2>&1
# (B's sleep scaled: a slower start of A's job must still fit in one round of B's)
for i in $(seq 1 40); do as "$B_TOK" submit '{"command":"sleep '"$(tscale 2)"'","limits":{"wall_seconds":'"$(tscale 10 300)"'}}'; done
as "$A_TOK" submit '{"command":"true"}'
J_A=$JOB
bash "$STACK" start-runner > /dev/null 2>&1
as "$A_TOK" await "$J_A" 60
expect_json .status succeeded
ahead=$(sql "SELECT COUNT(*) FROM jobs WHERE key_id = '$B_KEY' AND started_at <= (SELECT started_at FROM jobs WHERE id = '$J_A')")
note "B's jobs started before A's: $ahead of 40 (runner slots: $SLOTS)"
expect_true "at most one round of B's jobs ($((SLOTS + 1)) with ties) started before A's ($ahead)" test "$ahead" -le "$((SLOTS + 1))"
expect_true "B's queue was still long when A's job started" \
	test "$(sql "SELECT COUNT(*) FROM jobs WHERE key_id = '$B_KEY' AND (started_at IS NULL OR started_at > (SELECT finished_at FROM jobs WHERE id = '$J_A'))")" -ge 20
ctl keys revoke "$B_KEY" > /dev/null

ctx "per-key running cap (--max-running 1)"
key cap c --max-running 1
C_TOK=$KEY_TOK C_KEY=$KEY_ID
ids=()
for i in 1 2 3; do as "$C_TOK" submit '{"command":"sleep 1"}'; ids+=("$JOB"); done
for id in "${ids[@]}"; do as "$C_TOK" await "$id" 60; expect_json .status succeeded; done
overlap=$(sql "SELECT COUNT(*) FROM jobs x JOIN jobs y ON x.key_id = y.key_id AND x.id < y.id
	WHERE x.key_id = '$C_KEY' AND x.started_at < y.finished_at AND y.started_at < x.finished_at")
expect_eq "no two of the key's jobs ran at the same time" 0 "$overlap"

ctx "long-poll slots are shared fairly between keys"
key wait-x x
X_TOK=$KEY_TOK
key wait-y y
Y_TOK=$KEY_TOK
# (X's job outlasts the guest's curls, 5 s each to start there: at 6 s it had ended
# before X's waits arrived, and every one of them said succeeded)
if [ "$TSCALE" = 1 ]; then
	as "$X_TOK" submit '{"command":"sleep 6"}'
else
	as "$X_TOK" submit '{"command":"sleep '"$(tscale 6 25)"'","limits":{"wall_seconds":'"$(tscale 10 60)"',"cpu_seconds":'"$(tscale 10 60)"'}}'
fi
J_X=$JOB
as "$Y_TOK" submit '{"command":"sleep 3"}'
J_Y=$JOB
pids=()
for i in $(seq 1 "$WORKERS"); do
	curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $X_TOK" -o "$T_DIR/x$i" \
		"$SANDBOX_URL/v1/jobs/$J_X?wait=$(tscale 20 30)" &
	pids+=($!)
done
sleep "$(tscale 1 3)" # X's waits are in (capped: well before X's 6 s job ends)
as "$Y_TOK" req GET "/v1/jobs/$J_Y?wait=$(tscale 20 30)"
expect_json .status succeeded "key Y still gets a long-poll slot and sees its job end"
wait "${pids[@]}"
early=0
for i in $(seq 1 "$WORKERS"); do
	[ "$(jq -r .status "$T_DIR/x$i")" != succeeded ] && early=$((early + 1))
done
expect_true "key X could not hold every slot: $early of its $WORKERS waits were answered at once" test "$early" -ge 1

# ====================================================================== 7. revocation
# sess_status_within ID STATUS SECONDS: the session's status becomes STATUS in time
sess_status_within() {
	local i
	for i in $(seq 1 $(($3 * 10 * TSCALE))); do
		[ "$(sql "SELECT status FROM sessions WHERE id = '$1'")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# ready_session VAR TOKEN: a session of the key, ready (VAR empty and a failing check if not)
ready_session() {
	local -n sv=$1
	as "$2" req POST /v1/sessions '{}'
	sv=$(jq -r '.id // empty' "$BODY" 2> /dev/null)
	# one 20 s long-poll on the host; scaled, as many 10 s ones as the time allows (the
	# API's wait stops at 30 s, a session's start in a slow guest may take longer)
	if [ -z "$sv" ]; then :
	elif [ "$TSCALE" = 1 ]; then as "$2" req GET "/v1/sessions/$sv?wait=20"
	else as "$2" sready "$sv" "$(tscale 20)"
	fi
	expect_json .status ready "a session of the key is ready"
}

ctx "keys revoke cancels queued jobs and kills running ones, closes sessions"
key revoke r --max-running 1
R_TOK=$KEY_TOK R_KEY=$KEY_ID
ready_session S_R "$R_TOK"
as "$R_TOK" submit '{"command":"sleep 60","limits":{"wall_seconds":90}}'
J_RUN=$JOB
wait_db_state "$J_RUN" running 30 || note "the first job did not start"
as "$R_TOK" submit '{"command":"true"}'
J_Q=$JOB
expect_eq "the second job waits behind the running cap" queued "$(db_state "$J_Q")"
out=$(ctl keys revoke "$R_KEY")
expect_eq "revoke reports what it did" "revoked $R_KEY: 1 queued jobs cancelled, 1 running jobs being killed, 0 sessions closed, 1 sessions closing" "$out"
expect_eq "the ready session is asked to close, once" "1 1" \
	"$(sql "SELECT CONCAT(s.close_requested, ' ', (SELECT COUNT(*) FROM session_requests q
		WHERE q.session_id = s.id AND q.kind = 'close')) FROM sessions s WHERE s.id = '$S_R'")"
expect_true "the session ends closed within a few seconds" sess_status_within "$S_R" closed 10
expect_eq "its cleanup completed" completed "$(sql "SELECT cleanup_status FROM sessions WHERE id = '$S_R'")"
expect_eq "the queued job is cancelled at once" cancelled "$(db_state "$J_Q")"
expect_eq "its diagnostic says why" '["cancelled: its API key was revoked"]' \
	"$(sql "SELECT r.diagnostics_json FROM job_results r WHERE r.job_id = '$J_Q'")"
expect_true "the running job is killed" wait_db_state "$J_RUN" cancelled 15
as "$R_TOK" req GET "/v1/jobs/$J_RUN"
expect_error 401 unauthorized

ctx "keys revoke --keep-jobs keeps them"
key keep k --max-running 1
K_TOK=$KEY_TOK K_KEY=$KEY_ID
ready_session S_K "$K_TOK"
as "$K_TOK" submit '{"command":"sleep '"$(tscale 2 8)"'"}' # running when the polls look (under the 10 s wall)
J_K1=$JOB
wait_db_state "$J_K1" running 30
as "$K_TOK" submit '{"command":"true"}'
J_K2=$JOB
out=$(ctl keys revoke "$K_KEY" --keep-jobs)
expect_eq "revoke --keep-jobs says so" "revoked $K_KEY (its jobs and sessions were kept)" "$out"
sleep "$(tscale 1)" # a close, had one been asked, would have reached the session by now
expect_eq "its session is kept: ready, no close asked" "ready 0 0" \
	"$(sql "SELECT CONCAT(s.status, ' ', s.close_requested, ' ', (SELECT COUNT(*) FROM session_requests q
		WHERE q.session_id = s.id AND q.kind = 'close')) FROM sessions s WHERE s.id = '$S_K'")"
sql "UPDATE sessions SET close_requested = 1 WHERE id = '$S_K'" # the test's own cleanup
expect_true "the running job ends on its own" wait_db_state "$J_K1" succeeded 30
expect_true "the queued job still runs" wait_db_state "$J_K2" succeeded 30


# Each API worker caches key lookups (app/http/auth.h); a revocation must still reach every
# worker before `keys revoke` returns. PAR GETs at a time from one curl (many
# connections, so every worker serves some): the count of each status.
par_get() { # TOKEN PATH N
	local cfg=$T_DIR/par.cfg hdr=$T_DIR/par.hdr
	printf 'Authorization: Bearer %s\n' "$1" > "$hdr"
	for _ in $(seq 1 "$3"); do printf 'url = "%s%s"\noutput = "/dev/null"\n' "$SANDBOX_URL" "$2"; done > "$cfg"
	curl -sS --cacert "$SANDBOX_CACERT" --parallel --parallel-max 32 -H "@$hdr" \
		-w '%{http_code}\n' -K "$cfg" 2> /dev/null | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}'
}

ctx "a revoked key is refused at once by every worker (key cache)"
key cache v
V_TOK=$KEY_TOK V_KEY=$KEY_ID
as "$V_TOK" submit '{"command":"true"}'
J_V=$JOB
as "$V_TOK" await "$J_V" 60
expect_json .status succeeded
WORKERS=$(conf_get api_workers)
N=$((WORKERS * 40))
expect_eq "before: every GET of the key's job answers 200 (cache filled on every worker)" "200:$N " \
	"$(par_get "$V_TOK" "/v1/jobs/$J_V" "$N")"
ctl keys revoke "$V_KEY" > /dev/null
expect_eq "right after keys revoke returns: every GET answers 401, on every worker" "401:$N " \
	"$(par_get "$V_TOK" "/v1/jobs/$J_V" "$N")"
as "$V_TOK" req GET "/v1/jobs/$J_V"
expect_error 401 unauthorized

ctx "a key limit changed in the database takes effect within the cache's TTL"
key cachelim l --max-queued 2
L_TOK=$KEY_TOK L_KEY=$KEY_ID
bash "$STACK" stop-runner > /dev/null 2>&1
as "$L_TOK" submit '{"command":"true"}'
expect_status 202
expect_eq "the key's GETs warm every worker's cache" "200:$N " \
	"$(par_get "$L_TOK" "/v1/jobs/$JOB" "$N")"
sql "UPDATE api_keys SET max_queued = 1 WHERE id = '$L_KEY'"
# AUTH_CACHE_TTL_MS (1000): out-of-band edits of a key row reach the API within it.
sleep 1.2
as "$L_TOK" req POST /v1/jobs '{"command":"true"}'
expect_error 429 quota_exceeded
bash "$STACK" start-runner > /dev/null 2>&1
ctl keys revoke "$L_KEY" > /dev/null

finish
