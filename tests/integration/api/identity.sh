# tests/integration/api/identity.sh: api.sh's key maximum limits, GET /v1/identity and GET /metrics.
# Sourced by api.sh (function definitions only: api.sh's main calls them in its order,
# with its helpers, keys and variables).
# shellcheck shell=bash

# A key's own maximum limits (DESIGN.md section 4): the lower of the key's and the
# operator's maximum bounds a job; a default above it comes down to it.
t_key_limits() {
	local out
	ctx "key max limits"
	expect_true "keys create refuses an unknown --max-limit" \
		eval '! ctl keys create --namespace "$NS" --tenant "$TA" --subject-type user --subject-id lim --max-limit bogus=1 --json >/dev/null 2>&1'
	expect_true "keys create refuses a --max-limit below the limit's floor" \
		eval '! ctl keys create --namespace "$NS" --tenant "$TA" --subject-type user --subject-id lim --max-limit memory_mb=8 --json >/dev/null 2>&1'
	mkkey KL "$NS" "$TA" user "limited-$RUN" --max-limit memory_mb=128 --max-limit wall_seconds=5
	out=$(ctl keys list --json)
	expect_eq "keys list shows the key's max_limits" '{"memory_mb":128,"wall_seconds":5}' \
		"$(jq -c --arg id "$KL_ID" '.[] | select(.id == $id) | .max_limits' <<< "$out")"
	as "$KL_TOK" req POST /v1/jobs '{"command":"true"}'
	expect_status 202
	expect_json '.limits.memory_mb' 128 "the default memory (256) comes down to the key's 128"
	expect_json '.limits.wall_seconds' 5
	expect_json '.limits.cpu_seconds' "$(conf_get cpu_seconds_default 10)" \
		"limits the key does not cap keep the operator default"
	as "$KL_TOK" req POST /v1/jobs '{"command":"true","limits":{"memory_mb":129}}'
	expect_error 400 invalid_request limits.memory_mb
	expect_json '.error.message | test("16 to 128")' true "the message names the key's maximum"
	as "$KL_TOK" req POST /v1/jobs '{"command":"true","limits":{"memory_mb":64,"wall_seconds":5}}'
	expect_status 202
	expect_json '.limits.memory_mb' 64
}

# GET /v1/identity: the key's verified identity exactly as stored, its permissions,
# effective limits and quotas.
t_identity() {
	ctx "identity"
	as "$ACT_TOK" req GET /v1/identity
	expect_status 200
	expect_json '.identity | [.identity_namespace, .tenant_id, .subject_type, .subject_id, .actor_type, .actor_id] | join("|")' \
		"$NS|$TA|user|carol|agent|bot-1" "the six identity fields, as created"
	expect_json '[.key_id, .complete, .permissions.network, .permissions.tenant_admin] | tostring' \
		"[\"$ACT_ID\",true,false,false]"
	expect_json '.limits.memory_mb | [.min, .default, .max] | tostring' \
		"[16,$(conf_get memory_mb_default 256),$(conf_get memory_mb_max 4096)]" "operator limits"
	expect_json '.quotas | [.max_queued, .max_stored_bytes, .max_running] | tostring' \
		"[$(conf_get default_max_queued 100),$(($(conf_get default_max_stored_mb 1024) * 1048576)),null]"
	as "$A_TOK" req GET /v1/identity
	expect_json '.identity | [.actor_type, .actor_id] | tostring' '[null,null]' "no actor: null"
	as "$ADM_TOK" req GET /v1/identity
	expect_json '.permissions.tenant_admin' true
	as "$NET_TOK" req GET /v1/identity
	expect_json '.permissions.network' true
	as "$Q_TOK" req GET /v1/identity
	expect_json '.quotas.max_queued' 2
	expect_json '.quotas.active_jobs | type' number
	as "$KL_TOK" req GET /v1/identity
	expect_json '[.limits.memory_mb.max, .limits.memory_mb.default, .limits.wall_seconds.max] | tostring' \
		'[128,128,5]' "the key's own maxima (default brought down to them)"
	as "" req GET /v1/identity
	expect_error 401 unauthorized
	as "$A_TOK" req GET "/v1/identity?x=1"
	expect_error 400 invalid_request
	as "$A_TOK" req POST /v1/identity '{}'
	expect_status 405
	expect_header Allow '^GET$'
}

# The window histograms of the jobs finished in the last 5 minutes: declared
# histograms, and their _count and _sum are the database's (read just before and just
# after the scrape, so a job leaving the window in between cannot fail it). One job
# that ran 2.5 s makes the sum one that a rounding to whole seconds or to 0 would lose.
recent_window() {
	sql "SELECT CONCAT(COUNT(*), ' ', COALESCE(SUM(TIMESTAMPDIFF(MICROSECOND, started_at,
		finished_at)), 0)) FROM jobs WHERE finished_at >= CURRENT_TIMESTAMP(3) - INTERVAL
		300 SECOND AND started_at IS NOT NULL"
}
t_metrics_recent() {
	local before after got h
	as "$A_TOK" submit "$ECHO_JOB"
	db_finish "$JOB" succeeded 0 NULL '' '' '[]'
	sql "UPDATE jobs SET started_at = finished_at - INTERVAL 2.5 SECOND WHERE id = '$JOB'"
	before=$(recent_window)
	as "" req GET /metrics
	after=$(recent_window)
	for h in sandbox_recent_job_queue_wait_seconds sandbox_recent_job_run_seconds; do
		expect_true "$h is declared a histogram" grep -qx "# TYPE $h histogram" "$BODY"
		expect_true "$h: its buckets end with le=\"+Inf\", equal to _count" \
			test "$(sed -n "s/^${h}_bucket{le=\"+Inf\"} //p" "$BODY")" = \
			"$(sed -n "s/^${h}_count //p" "$BODY")"
	done
	got="$(sed -n 's/^sandbox_recent_job_run_seconds_count //p' "$BODY") $(sed -n \
		's/^sandbox_recent_job_run_seconds_sum //p' "$BODY" | awk '{ printf "%.0f", $1 * 1e6 }')"
	if [ "$got" = "$after" ]; then before=$after; fi
	expect_eq "run time's _count and _sum (µs) are the database's window (one job of 2.5 s in it)" \
		"$before" "$got"
}

# GET /metrics (Prometheus text, no key, loopback only through nginx).
t_metrics() {
	ctx "metrics"
	as "" req GET /metrics
	expect_status 200
	expect_header Content-Type '^text/plain; version=0\.0\.4'
	for st in queued running succeeded failed cancelled lost; do
		expect_true "sandbox_jobs{state=\"$st\"} is exposed" grep -Eq "^sandbox_jobs\\{state=\"$st\"\\} [0-9]+$" "$BODY"
	done
	expect_true "the queued count is the database's" \
		grep -qx "sandbox_jobs{state=\"queued\"} $(sql "SELECT COUNT(*) FROM jobs WHERE state = 'queued'")" "$BODY"
	expect_true "identity requests were counted by route and status" \
		grep -Eq '^sandbox_api_requests_total\{route="GET /v1/identity",status="200"\} [1-9][0-9]*$' "$BODY"
	expect_true "with their latency histogram" \
		grep -Eq '^sandbox_api_request_duration_seconds_count\{route="GET /v1/identity"\} [1-9]' "$BODY"
	expect_true "the queue head age is exposed" grep -Eq '^sandbox_queue_head_age_seconds [0-9.]+$' "$BODY"
	expect_true "no tenant name appears in the metrics" fails grep -q -- "$TA" "$BODY"
	expect_promtool "promtool check metrics accepts the whole text" "$BODY"
	t_metrics_recent
	as "$A_TOK" req POST /metrics '{}'
	expect_status 405
}
