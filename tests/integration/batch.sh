#!/usr/bin/env bash
# tests/integration/batch.sh: POST /v1/jobs/batch, GET /v1/jobs?ids=, and the
# RateLimit / Retry-After headers (issue 12 points 3 and 7), over HTTPS through nginx.
# POST /v1/jobs/batch?wait=S without a runner: 202 with the entries as accepted once S
# passed, answered at once when the key's wait share cannot hold every job (the 200
# case, with a runner, is in runtimes.sh). nginx's own 429 (limit_req): Retry-After
# and the API's JSON error.
#
# Needs a frozen queue (no runner: tests/run-integration.sh stops it), so queued counts
# and quotas are exact; on exit it cancels the run's jobs still queued.
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stack_env

RUN="$RANDOM$RANDOM"
NS="batch-$RUN"
MAX_BATCH=$(conf_get max_batch_jobs 20)
WALL_MAX=$(conf_get wall_seconds_max 300)

# items JSON...: {"jobs": [JSON, ...]}
items() { jq -cn '{jobs: $ARGS.positional | map(fromjson)}' --args "$@"; }
queued_of() { sql "SELECT COUNT(*) FROM jobs WHERE key_id = '$1' AND state IN ('queued', 'running')"; }
rl_remaining() { hdr RateLimit | sed -n 's/^"queue";r=\([0-9]*\)$/\1/p'; }

need_no_runner
at_exit "sql \"UPDATE jobs SET state = 'cancelled', finished_at = NOW(3)
	WHERE identity_namespace = '$NS' AND state IN ('queued', 'running');\""

mkkey A "$NS" ta user alice
mkkey A2 "$NS" ta user bob
mkkey B "$NS" tb user alice
mkkey Q "$NS" ta user quota --max-queued 3
mkkey S "$NS" ta user stored --max-stored-mb 1
mkkey R "$NS" ta user rate --max-queued 10
mkkey W "$NS" ta user waiter

# ------------------------------------------------------------ accepted items, one transaction
t_accept() {
	ctx "batch: three valid jobs"
	as "$A_TOK" req POST /v1/jobs/batch "$(items '{"command":"echo 0"}' '{"argv":["echo","1"]}' \
		'{"command":"echo 2","metadata":{"n":"2"}}')"
	expect_status 200
	expect_json '[.results[].index] | join(",")' "0,1,2" "entries in item order"
	expect_json '[.results[].status] | join(",")' "202,202,202"
	expect_json '[.results[].replayed] | join(",")' "false,false,false"
	expect_json '[.results[].job.status] | join(",")' "queued,queued,queued"
	expect_json '.results[1].job.argv | join(" ")' "echo 1"
	expect_json '.results[2].job.metadata.n' 2
	expect_json '[.results[].job.identity.subject_id] | unique | join(",")' alice
	local ids
	ids=$(jq -r '[.results[].job.id] | join(" ")' "$BODY")
	expect_true "$CTX: three distinct uuids" bash -c \
		"[ \$(printf '%s\n' $ids | grep -cE '$UUID_RE') = 3 ] && [ \$(printf '%s\n' $ids | sort -u | wc -l) = 3 ]"
	expect_eq "$CTX: stored with their submit events" 3 \
		"$(sql "SELECT COUNT(*) FROM job_events e JOIN jobs j ON j.id = e.job_id
			WHERE j.key_id = '$A_ID' AND e.to_state = 'queued' AND e.detail = 'submitted (batch)'")"
	BATCH_IDS=($ids)
	ctx "batch: each job readable by its owner"
	as "$A_TOK" req GET "/v1/jobs/${BATCH_IDS[1]}"
	expect_status 200
	expect_json '.command, (.argv | join(" "))' $'null\necho 1' "argv job"
}

# ------------------------------------------------------------ one transaction
# A trigger refuses the third item's insert: the first two, already inserted in the
# same transaction, must be gone with it.
t_atomic() {
	local before
	sql "DELIMITER //
		CREATE TRIGGER batch_fail_$RUN BEFORE INSERT ON jobs FOR EACH ROW
		IF NEW.command = 'fail-$RUN' THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test';
		END IF //" || { _notok "batch atomic: create trigger" ok failed; return; }
	at_exit "sql 'DROP TRIGGER IF EXISTS batch_fail_$RUN'"
	before=$(queued_of "$A2_ID")
	ctx "batch: a failed insert stores none"
	as "$A2_TOK" req POST /v1/jobs/batch "$(items '{"command":"echo a"}' '{"command":"echo b"}' \
		"{\"command\":\"fail-$RUN\"}")"
	expect_error 500 internal_error
	expect_eq "$CTX: the first two rolled back" "$before" "$(queued_of "$A2_ID")"
	expect_eq "$CTX: no stored bytes charged" \
		"$(sql "SELECT COALESCE(SUM(stored_bytes), 0) FROM jobs WHERE key_id = '$A2_ID'")" \
		"$(sql "SELECT COALESCE(SUM(bytes), 0) FROM key_storage WHERE key_id = '$A2_ID'")"
	sql "DROP TRIGGER batch_fail_$RUN"
	ctx "batch: the same items without the refused one"
	as "$A2_TOK" req POST /v1/jobs/batch "$(items '{"command":"echo a"}' '{"command":"echo b"}')"
	expect_json '[.results[].status] | join(",")' "202,202"
	expect_eq "$CTX: stored" "$((before + 2))" "$(queued_of "$A2_ID")"
}

# ------------------------------------------------------------ per-item validation
t_items() {
	ctx "batch: mixed valid and invalid items"
	as "$A_TOK" req POST /v1/jobs/batch "$(items '{"command":"echo ok"}' \
		"{\"command\":\"x\",\"limits\":{\"wall_seconds\":$((WALL_MAX + 1))}}" '"not an object"' \
		'{"command":"x","bogus":1}' '{"command":"x","network":true}' '{"argv":["true"]}' \
		'{"command":"x","argv":["y"]}' '{"command":"x","files":[{"path":"../up","content":""}]}')"
	expect_status 200
	expect_json '[.results[].index] | join(",")' "0,1,2,3,4,5,6,7"
	expect_json '[.results[].status] | join(",")' "202,400,400,400,403,202,400,400"
	expect_json '.results[1].error.field' "jobs[1].limits.wall_seconds"
	expect_json '.results[1].error.code' invalid_request
	expect_json '.results[2].error.field' "jobs[2]"
	expect_json '.results[3].error.field' "jobs[3].bogus"
	expect_json '.results[4].error.field, .results[4].error.code' $'jobs[4].network\nforbidden'
	expect_json '.results[6].error.field | startswith("jobs[6].")' true
	expect_json '.results[7].error.field | startswith("jobs[7].files[0]")' true
	expect_json '[.results[] | select(.status != 202) | has("job")] | any' false "errors carry no job"
	expect_json '[.results[] | select(.status == 202) | has("error")] | any' false "jobs carry no error"
	expect_eq "$CTX: only the two valid ones stored" 5 "$(queued_of "$A_ID")"
}

# ------------------------------------------------------------ the envelope
t_envelope() {
	local many
	ctx "batch: no jobs field"
	as "$A_TOK" req POST /v1/jobs/batch '{}'
	expect_error 400 invalid_request jobs
	ctx "batch: empty jobs"
	as "$A_TOK" req POST /v1/jobs/batch '{"jobs":[]}'
	expect_error 400 invalid_request jobs
	ctx "batch: jobs not an array"
	as "$A_TOK" req POST /v1/jobs/batch '{"jobs":{"command":"x"}}'
	expect_error 400 invalid_request jobs
	ctx "batch: max_batch_jobs + 1 items"
	many=$(jq -cn --argjson n "$((MAX_BATCH + 1))" '{jobs: [range($n) | {command: "echo \(.)"}]}')
	as "$A_TOK" req POST /v1/jobs/batch "$many"
	expect_error 400 invalid_request jobs
	expect_eq "$CTX: nothing stored" 5 "$(queued_of "$A_ID")"
	ctx "batch: exactly max_batch_jobs items"
	many=$(jq -cn --argjson n "$MAX_BATCH" '{jobs: [range($n) | {command: "echo \(.)"}]}')
	as "$A2_TOK" req POST /v1/jobs/batch "$many"
	expect_status 200
	expect_json '[.results[] | select(.status == 202)] | length' "$MAX_BATCH"
	ctx "batch: unknown top-level field"
	as "$A_TOK" req POST /v1/jobs/batch '{"jobs":[{"command":"x"}],"wait":1}'
	expect_error 400 invalid_request wait
	ctx "batch: not JSON"
	as "$A_TOK" req POST /v1/jobs/batch '{"jobs":['
	expect_error 400 invalid_json ''
	ctx "batch: duplicate keys"
	as "$A_TOK" req POST /v1/jobs/batch '{"jobs":[],"jobs":[]}'
	expect_error 400 invalid_json ''
	ctx "batch: Idempotency-Key header"
	as "$A_TOK" req POST /v1/jobs/batch '{"jobs":[{"command":"x"}]}' -H 'Idempotency-Key: k'
	expect_error 400 invalid_request Idempotency-Key
	ctx "batch: not JSON content type"
	as "$A_TOK" req POST /v1/jobs/batch '{"jobs":[{"command":"x"}]}' -H 'Content-Type: text/plain'
	expect_error 415 unsupported_media_type
	ctx "batch: unknown query parameter"
	as "$A_TOK" req POST '/v1/jobs/batch?sync=1' '{"jobs":[{"command":"x"}]}'
	expect_error 400 invalid_request sync
	ctx "batch: no key"
	as '' req POST /v1/jobs/batch '{"jobs":[{"command":"x"}]}'
	expect_error 401 unauthorized
	ctx "batch: GET is not a batch read"
	as "$A_TOK" req GET /v1/jobs/batch
	expect_error 404 not_found
	ctx "batch: DELETE"
	as "$A_TOK" req DELETE /v1/jobs/batch
	expect_error 405 method_not_allowed
	expect_header Allow '(^|[ ,])POST([ ,]|$)'
}

# ------------------------------------------------------------ quotas across the batch
t_quota() {
	local small
	as "$Q_TOK" req POST /v1/jobs '{"command":"echo first"}'
	ctx "batch quota: 4 items with 2 of 3 queued slots left"
	as "$Q_TOK" req POST /v1/jobs/batch "$(items '{"command":"a"}' '{"command":"b"}' \
		'{"command":"c"}' '{"command":"d"}')"
	expect_status 200
	expect_json '[.results[].status] | join(",")' "202,202,429,429"
	expect_json '[.results[2,3].error.code] | join(",")' "quota_exceeded,quota_exceeded"
	expect_json '[.results[2,3].error.field] | join(",")' "jobs[2],jobs[3]"
	expect_eq "$CTX: the key holds exactly its quota" 3 "$(queued_of "$Q_ID")"
	ctx "batch quota: a full key"
	as "$Q_TOK" req POST /v1/jobs/batch "$(items '{"command":"e"}')"
	expect_json '[.results[].status] | join(",")' "429"

	# 1 MiB stored: two 400 KB stdins fit, a third does not, a small one after it does.
	head -c 400000 /dev/zero | tr '\0' a > "$T_DIR/big"
	small='{"command":"cat","stdin":"small"}'
	jq -cn --rawfile s "$T_DIR/big" --argjson sm "$small" \
		'{jobs: [{command: "cat", stdin: $s}, {command: "cat", stdin: $s},
		         {command: "cat", stdin: $s}, $sm]}' > "$T_DIR/stored.json"
	ctx "batch quota: stored bytes across the batch"
	as "$S_TOK" req POST /v1/jobs/batch "@$T_DIR/stored.json"
	expect_status 200
	expect_json '[.results[].status] | join(",")' "202,202,429,202"
	expect_json '.results[2].error.code, .results[2].error.field' $'quota_exceeded\njobs[2]'
	expect_eq "$CTX: the key's stored bytes are the three stored jobs'" \
		"$(sql "SELECT SUM(stored_bytes) FROM jobs WHERE key_id = '$S_ID'")" \
		"$(sql "SELECT SUM(bytes) FROM key_storage WHERE key_id = '$S_ID'")"
	ctx "stored-bytes 429 of a single submit"
	jq -cn --rawfile s "$T_DIR/big" '{command: "cat", stdin: $s}' > "$T_DIR/one.json"
	as "$S_TOK" req POST /v1/jobs "@$T_DIR/one.json"
	expect_error 429 quota_exceeded
	expect_header Retry-After '^[0-9]+$'
}

# Three batches of 3 and three single submits at once against a quota of 5: exactly 5
# stored, whoever wins (near a quota the admission locks the key's row and recounts).
t_quota_race() {
	local i n202=0 body
	mkkey QC "$NS" ta user race --max-queued 5
	body=$(items '{"command":"r1"}' '{"command":"r2"}' '{"command":"r3"}')
	for i in 1 2 3; do
		curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $QC_TOK" \
			-H 'Content-Type: application/json' -d "$body" -o "$T_DIR/race.b$i" \
			"$SANDBOX_URL/v1/jobs/batch" &
		curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $QC_TOK" \
			-H 'Content-Type: application/json' -d '{"command":"r"}' -o "$T_DIR/race.s$i" \
			-w '%{http_code}\n' "$SANDBOX_URL/v1/jobs" > "$T_DIR/race.c$i" &
	done
	wait
	for i in 1 2 3; do
		n202=$((n202 + $(jq '[.results[]? | select(.status == 202)] | length' "$T_DIR/race.b$i")))
		[ "$(cat "$T_DIR/race.c$i")" = 202 ] && n202=$((n202 + 1))
	done
	ctx "batch quota: 3 batches and 3 submits racing for 5 slots"
	expect_eq "$CTX: accepted" 5 "$n202"
	expect_eq "$CTX: stored" 5 "$(queued_of "$QC_ID")"
	expect_eq "$CTX: every batch item a 202 or a quota 429" 9 \
		"$(cat "$T_DIR"/race.b? | jq -s '[.[].results[]? | select(.status == 202 or
			(.status == 429 and .error.code == "quota_exceeded"))] | length')"
	expect_eq "$CTX: every submit a 202 or a 429" "202|429 202|429 202|429" \
		"$(for i in 1 2 3; do sed 's/^429$/202|429/; s/^202$/202|429/' "$T_DIR/race.c$i"; done | paste -sd' ')"
}

# ------------------------------------------------------------ concurrent batches of one key
# Issue 25 item 4: 16 batches of one key at once (curl --parallel: all connected before
# the first is answered), each of max_batch_jobs items (at most 20) carrying stdin and
# two input files (stored bytes, charged to the key's key_storage rows in the batch's
# transaction). Every batch is stored (200, every item 202), none answers a 5xx (a
# deadlock that lost: 4 to 8 of 16 answered 500 with 20 items before the fix), and the
# key's stored bytes are exactly its jobs' inputs afterwards. Twice: a key far from its
# queued quota (no key lock), and one whose max_queued is exactly the jobs sent (each
# admission near the quota locks the key's row and recounts: all fit, one more does
# not).
CONC_N=16
CONC_PER=$((MAX_BATCH < 20 ? MAX_BATCH : 20))
# conc_items BATCH: the batch's body; item i's stored bytes are 100 + 2 + (1000 + i) +
# (2000 + BATCH) (stdin, the empty env's '{}', the two files).
conc_items() {
	jq -cn --argjson b "$1" --argjson per "$CONC_PER" '{jobs: [range($per) as $i | {
		command: "cat a b", stdin: ("s" * 100), files: [
			{path: "a", content: ("a" * (1000 + $i))},
			{path: "b", content: ("b" * (2000 + $b))}]}]}'
}
conc_expected() {
	local b i sum=0
	for ((b = 1; b <= CONC_N; b++)); do
		for ((i = 0; i < CONC_PER; i++)); do sum=$((sum + 100 + 2 + 1000 + i + 2000 + b)); done
	done
	echo "$sum"
}
conc_round() { # KEYVAR LABEL
	local tok_var=$1_TOK id_var=$1_ID label=$2 b codes stored_items retries0 retries1
	local tok=${!tok_var} id=${!id_var}
	retries0=$(curl -sS --cacert "$SANDBOX_CACERT" "$SANDBOX_URL/metrics" |
		awk '/^sandbox_api_tx_retries_total[{ ]/ { n += $NF } END { print n + 0 }')
	for ((b = 1; b <= CONC_N; b++)); do conc_items "$b" > "$T_DIR/conc.req.$b"; done
	local -a a=()
	for ((b = 1; b <= CONC_N; b++)); do
		a+=(--cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $tok"
			-H 'Content-Type: application/json' --data-binary "@$T_DIR/conc.req.$b"
			-o "$T_DIR/conc.body.$b" -w '%{http_code}\n' "$SANDBOX_URL/v1/jobs/batch" --next)
	done
	unset 'a[${#a[@]}-1]'
	curl -sS --parallel --parallel-immediate --parallel-max "$CONC_N" "${a[@]}" \
		> "$T_DIR/conc.codes" 2> /dev/null
	retries1=$(curl -sS --cacert "$SANDBOX_CACERT" "$SANDBOX_URL/metrics" |
		awk '/^sandbox_api_tx_retries_total[{ ]/ { n += $NF } END { print n + 0 }')
	codes=$(sort "$T_DIR/conc.codes" | uniq -c | awk '{ printf "%s%sx%s", s, $1, $2; s = " " }')
	note "$label: answers $codes, whole-transaction retries $((retries1 - retries0))"
	ctx "batch concurrency ($label): $CONC_N batches of $CONC_PER items at once"
	expect_eq "$CTX: every batch answered 200" "${CONC_N}x200" "$codes"
	stored_items=$(cat "$T_DIR"/conc.body.* | jq -s '[.[].results[]? | select(.status == 202)] | length' 2> /dev/null)
	expect_eq "$CTX: every item stored (202)" "$((CONC_N * CONC_PER))" "$stored_items"
	expect_eq "$CTX: jobs in the database" "$((CONC_N * CONC_PER))" "$(queued_of "$id")"
	expect_eq "$CTX: the jobs' stored bytes are their inputs" "$(conc_expected)" \
		"$(sql "SELECT COALESCE(SUM(stored_bytes), 0) FROM jobs WHERE key_id = '$id'")"
	expect_eq "$CTX: the key's stored bytes are its jobs'" "$(conc_expected)" \
		"$(sql "SELECT COALESCE(SUM(bytes), 0) FROM key_storage WHERE key_id = '$id'")"
}
t_concurrent() {
	mkkey CF "$NS" ta user concurrent-far --max-queued 100000
	mkkey CQ "$NS" ta user concurrent-quota --max-queued $((CONC_N * CONC_PER))
	conc_round CF "far from the queued quota"
	conc_round CQ "at the queued quota"
	ctx "batch concurrency: the key at its quota refuses one more"
	as "$CQ_TOK" req POST /v1/jobs/batch "$(items '{"command":"one more"}')"
	expect_status 200
	expect_json '.results[0].status, .results[0].error.code' $'429\nquota_exceeded'
}

# ------------------------------------------------------------ idempotency per item
t_idem() {
	local k1="k1-$RUN" k2="k2-$RUN" id1 id2
	ctx "batch idempotency: first submit"
	as "$A2_TOK" req POST /v1/jobs/batch "$(items "{\"idempotency_key\":\"$k1\",\"command\":\"echo 1\"}" \
		"{\"idempotency_key\":\"$k2\",\"command\":\"echo 2\"}")"
	expect_json '[.results[].status] | join(",")' "202,202"
	expect_json '[.results[].replayed] | join(",")' "false,false"
	id1=$(jq -r '.results[0].job.id' "$BODY")
	id2=$(jq -r '.results[1].job.id' "$BODY")
	ctx "batch idempotency: the same items again (other spacing, key order)"
	as "$A2_TOK" req POST /v1/jobs/batch "{ \"jobs\" : [ {\"command\": \"echo 1\", \"idempotency_key\": \"$k1\"},
		{\"idempotency_key\":\"$k2\",\"command\":\"echo 2\"}, {\"command\":\"echo 3\"} ] }"
	expect_json '[.results[].status] | join(",")' "202,202,202"
	expect_json '[.results[].replayed] | join(",")' "true,true,false"
	expect_json '[.results[0,1].job.id] | join(",")' "$id1,$id2" "the first jobs"
	ctx "batch idempotency: a key with another request"
	as "$A2_TOK" req POST /v1/jobs/batch "$(items "{\"idempotency_key\":\"$k1\",\"command\":\"echo other\"}")"
	expect_json '.results[0].status, .results[0].error.code, .results[0].error.field' \
		$'409\nconflict\njobs[0].idempotency_key'
	ctx "batch idempotency: one key twice in one batch"
	as "$A2_TOK" req POST /v1/jobs/batch "$(items '{"idempotency_key":"dup-'"$RUN"'","command":"echo d"}' \
		'{"idempotency_key":"dup-'"$RUN"'","command":"echo d"}' \
		'{"idempotency_key":"dup-'"$RUN"'","command":"echo e"}')"
	expect_json '[.results[].status] | join(",")' "202,202,409"
	expect_json '.results[1].replayed' true
	expect_json '(.results[0].job.id == .results[1].job.id)' true "the same job"
	expect_eq "$CTX: stored once" 1 "$(sql "SELECT COUNT(*) FROM jobs WHERE idempotency_key = 'dup-$RUN'")"
	ctx "batch idempotency: another identity's key is its own"
	as "$B_TOK" req POST /v1/jobs/batch "$(items "{\"idempotency_key\":\"$k1\",\"command\":\"echo 1\"}")"
	expect_json '.results[0].status, .results[0].replayed' $'202\nfalse'
	expect_true "$CTX: a new job" test "$(jq -r '.results[0].job.id' "$BODY")" != "$id1"
	B_JOB=$(jq -r '.results[0].job.id' "$BODY")
	ctx "batch idempotency: bad keys"
	as "$A2_TOK" req POST /v1/jobs/batch "$(items '{"idempotency_key":"","command":"x"}' \
		'{"idempotency_key":"a b\u0001","command":"x"}' '{"idempotency_key":7,"command":"x"}')"
	expect_json '[.results[].error.field] | join(",")' \
		"jobs[0].idempotency_key,jobs[1].idempotency_key,jobs[2].idempotency_key"
	ctx "batch idempotency: the header's job is not an item's"
	as "$A2_TOK" req POST /v1/jobs '{"command":"echo h"}' -H "Idempotency-Key: h-$RUN"
	expect_status 202
}

# ------------------------------------------------------------ GET /v1/jobs?ids=
t_ids() {
	local u a0=${BATCH_IDS[0]} a2=${BATCH_IDS[2]} many
	u=$(uuid)
	ctx "ids: own, foreign, unknown, not an id"
	as "$A_TOK" req GET "/v1/jobs?ids=$a2,$B_JOB,$a0,$u,nope,$a2"
	expect_status 200
	expect_json '[.jobs[].id] | join(",")' "$a2,$a0" "own jobs in the order asked, once"
	expect_json '.missing | join(",")' "$B_JOB,$u,nope" "foreign and unknown alike"
	expect_json '.next_cursor' null
	expect_json '.jobs[0].metadata.n' 2
	ctx "ids: the other identity sees none of them"
	as "$B_TOK" req GET "/v1/jobs?ids=$a0,$a2"
	expect_json '(.jobs | length), (.missing | join(","))' $'0\n'"$a0,$a2"
	ctx "ids: another subject of the same tenant"
	as "$A2_TOK" req GET "/v1/jobs?ids=$a0"
	expect_json '(.jobs | length), (.missing | join(","))' $'0\n'"$a0"
	ctx "ids: 100 ids"
	many=$(for i in $(seq 99); do uuid; done | paste -sd,)
	as "$A_TOK" req GET "/v1/jobs?ids=$a0,$many"
	expect_status 200
	expect_json '(.jobs | length), (.missing | length)' $'1\n99'
	ctx "ids: 101 ids"
	as "$A_TOK" req GET "/v1/jobs?ids=$a0,$a2,$many"
	expect_error 400 invalid_request ids
	ctx "ids: an empty element"
	as "$A_TOK" req GET "/v1/jobs?ids=$a0,,$a2"
	expect_error 400 invalid_request ids
	ctx "ids: with limit"
	as "$A_TOK" req GET "/v1/jobs?ids=$a0&limit=5"
	expect_error 400 invalid_request ids
	ctx "ids: twice"
	as "$A_TOK" req GET "/v1/jobs?ids=$a0&ids=$a2"
	expect_error 400 invalid_request ids
	ctx "list: without ids, as before"
	as "$A_TOK" req GET "/v1/jobs?limit=2"
	expect_json '(.jobs | length), has("missing")' $'2\nfalse'
}

# ------------------------------------------------------------ RateLimit headers
t_ratelimit() {
	local r0 r1 r2
	sleep 0.6 # past every worker's cached count (500 ms)
	ctx "RateLimit: a fresh key"
	as "$R_TOK" req GET /v1/identity
	expect_header RateLimit-Policy '^"queue";q=10$'
	expect_header RateLimit '^"queue";r=10$'
	r0=$(rl_remaining)
	as "$R_TOK" req POST /v1/jobs/batch "$(items '{"command":"a"}' '{"command":"b"}' '{"command":"c"}')"
	expect_header RateLimit '^"queue";r=[0-9]+$' "on the batch answer"
	sleep 0.6
	ctx "RateLimit: after a batch of 3"
	as "$R_TOK" req GET /v1/jobs
	r1=$(rl_remaining)
	expect_eq "$CTX: remaining" "$((r0 - 3))" "$r1"
	as "$R_TOK" req POST /v1/jobs '{"command":"d"}'
	expect_header RateLimit '^"queue";r=[0-9]+$' "on a submit"
	sleep 0.6
	ctx "RateLimit: after one more submit"
	as "$R_TOK" req GET "/v1/jobs/$(uuid)"
	expect_status 404
	r2=$(rl_remaining)
	expect_eq "$CTX: remaining (on a 404 too)" "$((r1 - 1))" "$r2"
	expect_eq "$CTX: agrees with GET /v1/identity" "$r2" \
		"$(as "$R_TOK" req GET /v1/identity; jq -r '.quotas.max_queued - .quotas.active_jobs' "$BODY")"
	ctx "RateLimit: a long-poll answered after its wait"
	as "$R_TOK" req POST /v1/jobs '{"command":"w"}'
	as "$R_TOK" req GET "/v1/jobs/$(jq -r .id "$BODY")?wait=1"
	expect_status 200
	expect_true "$CTX: waited" awk -v e="$ELAPSED" 'BEGIN { exit !(e >= 0.9) }'
	expect_eq "$CTX: each header once" "1 1" \
		"$(grep -ci '^RateLimit:' "$HDRS") $(grep -ci '^RateLimit-Policy:' "$HDRS")"
	ctx "RateLimit: a full key's 429"
	as "$Q_TOK" req POST /v1/jobs '{"command":"over"}'
	expect_error 429 quota_exceeded
	expect_header Retry-After '^[0-9]+$'
	expect_header RateLimit '^"queue";r=0$'
	expect_header RateLimit-Policy '^"queue";q=3$'
	ctx "RateLimit: not on unauthenticated answers"
	as '' req GET /v1/health
	expect_eq "$CTX: health" "" "$(hdr RateLimit)"
	as 'bogus' req GET /v1/jobs
	expect_status 401
	expect_eq "$CTX: 401" "" "$(hdr RateLimit-Policy)"
}

# ------------------------------------------------------------ ?wait=S
t_wait() {
	local share
	share=$(conf_get api_wait_slots_per_key 0)
	ctx "batch?wait=1: the jobs do not end (no runner)"
	as "$W_TOK" req POST "/v1/jobs/batch?wait=1" "$(items '{"command":"echo w0"}' \
		'{"command":7}' '{"argv":["echo","w2"]}')"
	expect_status 202
	expect_true "$CTX: answered after the wait" awk -v e="$ELAPSED" 'BEGIN { exit !(e >= 0.9) }'
	expect_json '[.results[].status] | join(",")' "202,400,202"
	expect_json '[.results[] | .job.status // "-"] | join(",")' "queued,-,queued"
	expect_json '.results[1].error.field' 'jobs[1].command'
	expect_eq "$CTX: both stored" 2 "$(queued_of "$W_ID")"
	ctx "batch?wait=2: nothing stored, nothing to wait for"
	as "$W_TOK" req POST "/v1/jobs/batch?wait=2" "$(items '{"command":7}')"
	expect_status 200
	expect_json '[.results[].status] | join(",")' "400"
	ctx "batch?wait=0: as without wait"
	as "$W_TOK" req POST "/v1/jobs/batch?wait=0" "$(items '{"command":"echo w3"}')"
	expect_status 200
	expect_json '.results[0].job.status' queued
	ctx "batch?wait: bad values"
	for w in 31 -1 x 1.5 ''; do
		as "$W_TOK" req POST "/v1/jobs/batch?wait=$w" "$(items '{"command":"echo never"}')"
		expect_error 400 invalid_request wait
	done
	as "$W_TOK" req POST "/v1/jobs/batch?wait=1&x=1" "$(items '{"command":"echo never"}')"
	expect_error 400 invalid_request
	expect_eq "$CTX: nothing stored by a refused query" 3 "$(queued_of "$W_ID")"
	if ! [[ $share =~ ^[1-9][0-9]*$ ]] || [ "$share" -ge "$MAX_BATCH" ]; then
		skip "batch?wait: more jobs than the key's wait share" \
			"api_wait_slots_per_key ($share) is not below max_batch_jobs ($MAX_BATCH)"
		return
	fi
	ctx "batch?wait=30: $((share + 1)) jobs, more than the key's wait share ($share)"
	local -a many=()
	for ((i = 0; i <= share; i++)); do many+=("{\"command\":\"echo s$i\"}"); done
	REQ_MAX_TIME=20 as "$W_TOK" req POST "/v1/jobs/batch?wait=30" "$(items "${many[@]}")"
	expect_status 202
	expect_json '[.results[].job.status] | unique | join(",")' queued
	expect_json '.results | length' "$((share + 1))"
}

# ------------------------------------------------------------ nginx's own 429
# 40 parallel requests to /v1/health (nginx: 5 r/s, burst 5): nginx refuses some
# itself (limit_req), with the API's JSON error shape and a Retry-After.
t_nginx_429() {
	local i f
	local -a a=()
	ctx "nginx limit_req: 429"
	# Each answer's head and body in one file (-i): with --parallel, curl's -D files
	# can receive another transfer's head (the head of a 429 beside a 200's body).
	for i in $(seq 40); do a+=(-o "$T_DIR/n429.$i" "$SANDBOX_URL/v1/health"); done
	curl -sS -i --cacert "$SANDBOX_CACERT" --parallel --parallel-immediate --parallel-max 40 \
		"${a[@]}" 2> /dev/null
	f=$(grep -l '^HTTP/[0-9.]* 429' "$T_DIR"/n429.* 2> /dev/null | head -n 1)
	if [ -z "$f" ]; then
		_notok "$CTX: one of 40 parallel requests refused" "a 429" "none"
		sleep 2
		return
	fi
	sed '/^\r\?$/q' "$f" > "$HDRS.raw"
	tr -d '\r' < "$HDRS.raw" > "$HDRS"
	sed '1,/^\r\?$/d' "$f" > "$BODY"
	STATUS=429 LAST_REQ="GET /v1/health (40 in parallel)"
	_record GET /v1/health
	expect_error 429 rate_limited
	expect_header Retry-After '^[1-9][0-9]*$'
	expect_header Content-Type '^application/json'
	expect_header Cache-Control 'no-store'
	expect_json '.error.message | length > 0' true
	sleep 2 # the next suite's health checks
}

echo "# batch suite: run $RUN against $SANDBOX_URL"
t_accept
t_atomic
t_items
t_envelope
t_quota
t_quota_race
t_concurrent
t_idem
t_ids
t_ratelimit
t_wait
t_nginx_429
finish
