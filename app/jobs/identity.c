/* A key's view of itself: GET /v1/identity (who the key is, its limits, quotas and
 * session limits) and the RateLimit header lines of every authenticated request (its
 * queue quota). */
#include <stdio.h>

#include "api_routes.h"
#include "quota.h"
#include "routes.h"
#include "validate.h"

static json_t *str_or_null(const char *s, int present)
{
	return present ? json_string(s) : json_null();
}

/* A session's own limits (POST /v1/sessions): {name: {min, default, max}}. */
static json_t *session_limits(const struct cfg *c)
{
	return json_pack("{s:{s:i, s:I, s:I}, s:{s:i, s:I, s:I}, s:{s:i, s:I, s:I}}",
			 "cpu_seconds", "min", 1, "default",
			 (json_int_t)c->session_cpu_seconds_default, "max",
			 (json_int_t)c->session_cpu_seconds_max, "idle_seconds", "min", 1,
			 "default", (json_int_t)c->session_idle_seconds_default, "max",
			 (json_int_t)c->session_idle_seconds_max, "max_seconds", "min", 1,
			 "default", (json_int_t)c->session_max_seconds_default, "max",
			 (json_int_t)c->session_max_seconds_max);
}

/* GET /v1/identity: who the key is, exactly as stored (never trimmed or folded),
 * what it may do and what it uses, so a client can check before it submits. */
void h_identity(struct api_ctx *ctx, struct req *r, const struct identity *who,
		const struct route_args *a)
{
	struct cfg eff = *ctx->cfg;
	json_t *limits = json_object(), *quotas, *o;

	(void)a;
	if (*r->query != '\0') {
		http_send_error(r, 400, "invalid_request", "GET /v1/identity takes no query parameters",
				NULL, NULL);
		json_decref(limits);
		return;
	}
	quotas = quota_report(ctx->db, ctx->cfg, who);
	if (quotas == NULL) {
		json_decref(limits);
		route_db_error(ctx, r);
		return;
	}
	val_key_limits(&eff, who->max_limits);
	for (int i = 0; i < LIM_COUNT; i++)
		json_object_set_new(limits, limit_specs[i].name,
				    json_pack("{s:I, s:I, s:I}", "min", (json_int_t)limit_specs[i].min,
					      "default", (json_int_t)eff.limit_default[i], "max",
					      (json_int_t)eff.limit_max[i]));
	o = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:o, s:o}, s:b, s:{s:b, s:b}, s:o, s:o, s:o}",
		      "key_id", who->key_id, "identity", "identity_namespace", who->ns, "tenant_id",
		      who->tenant, "subject_type", who->subject_type, "subject_id",
		      who->subject_id, "actor_type",
		      str_or_null(who->actor_type, who->has_actor_type), "actor_id",
		      str_or_null(who->actor_id, who->has_actor_id), "complete",
		      who->ns[0] && who->tenant[0] && who->subject_type[0] && who->subject_id[0],
		      "permissions", "network", who->allow_network, "tenant_admin",
		      who->tenant_admin, "limits", limits, "quotas", quotas, "session_limits",
		      session_limits(&eff));
	http_send_json(r, 200, o, NULL);
}

/* RateLimit-Policy and RateLimit (the IETF httpapi RateLimit header fields) for the
 * key's queue quota: q = max_queued, r = what is left of it when the request arrived
 * (quota_active_now: this worker's cached count if under 500 ms old, else one bounded
 * count). Written ahead of the handler's own header lines (a CGI header block takes
 * them in any order), once: a long-poll's re-dispatch finds them in its buffer. */
void routes_ratelimit(struct api_ctx *ctx, struct req *r, const struct identity *who)
{
	long long max, active;
	char h[160];
	int n;

	if (r->wait.resumed || ctx->db == NULL)
		return;
	active = quota_active_now(ctx->db, ctx->cfg, who, &max);
	if (active < 0)
		return; /* the handler meets the database error itself */
	n = snprintf(h, sizeof h, "RateLimit-Policy: \"queue\";q=%lld\r\nRateLimit: \"queue\";r=%lld\r\n",
		     max, active < max ? max - active : 0);
	if (n > 0 && (size_t)n < sizeof h)
		FCGX_PutStr(h, n, r->fcgi->out);
}
