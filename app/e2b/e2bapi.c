/* The E2B control plane (docs/E2B.md "Control plane"; the wire facts:
 * ../shared/reference/e2b-wire-protocol.md section 2): sandboxes are sessions with `e2b`
 * set, made, read, extended and closed for the identity of the X-API-KEY exactly as the
 * session API does it for a bearer token (a create is POST /v1/sessions' own handler,
 * a kill its close handler, through sub-requests: app/http/subcall.h). Every error is
 * {"code":N,"message":...}: the SDK decides its exception by that code (404: not found,
 * kill() false). Handlers: create, get, kill, timeout, connect, pause, resume; the list
 * is app/e2b/e2blist.c.
 *
 * Create. The E2B body is checked here (every field named; what we cannot honour is a
 * 400 saying so), then turned into a session-create body: templateID -> profile ("base"
 * -> "default"), timeout -> max_seconds and idle_seconds (the idle timeout never cuts
 * a sandbox before its timeout unless the timeout passes session_idle_seconds_max),
 * envVars -> env, metadata, allow_internet_access -> network. The session's row gets
 * e2b = 1 and its first token in the create's own transaction (sess_create_hooked), so
 * no runner can start it as a plain session. The answer waits (through the waiter) for
 * the session to be ready: the SDK runs a command next. Because a token is shown once
 * and never stored, the re-dispatch after that wait issues the token it answers with
 * and drops the first one, which nobody saw (r->wait.aux holds its hash's first 8
 * bytes). */
#include "e2bctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sessions.h"
#include "subcall.h"
#include "svalidate.h"
#include "util.h"
#include "validate.h"
#include "waiter.h"

#define E2B_DEFAULT_TIMEOUT 300 /* seconds: the SDKs' default */
#define READY_WAIT 30           /* seconds a create waits for the sandbox to be ready */

/* ------------------------------------------------------------------ shared reads */

const char *e2b_domain(const struct req *r)
{
	const char *d = e2b_param(r, "E2B_DOMAIN");

	return d && *d ? d : NULL;
}

const char *e2b_template_of(const char *profile)
{
	return profile == NULL || strcmp(profile, AUTH_DEFAULT_PROFILE) == 0 ? E2B_BASE_TEMPLATE
									      : profile;
}

int e2b_sess_load(struct db *db, const struct identity *who, const char *id, struct sess *s)
{
	struct db_res *res;
	int rc = sapi_sess_load(db, who, id, s);

	if (rc <= 0)
		return rc;
	res = db_query_p(db, "SELECT e2b FROM sessions WHERE id = ?", db_str(id));
	if (res == NULL) {
		sapi_sess_free(s);
		return -1;
	}
	rc = db_res_rows(res) == 1 && db_res_i(res, 0, "e2b", 0) == 1;
	db_res_free(res);
	if (!rc)
		sapi_sess_free(s);
	return rc;
}

json_t *e2b_sandbox_info(const struct sess_view *v, const char *domain)
{
	json_t *meta = v->metadata_json ? json_loads(v->metadata_json, 0, NULL) : NULL;

	if (!json_is_object(meta)) {
		json_decref(meta);
		meta = json_object();
	}
	return json_pack("{s:s, s:s, s:n, s:s, s:o, s:s, s:s?, s:s?, s:s, s:i, s:I, s:I, s:s?,"
			 " s:b, s:{s:s, s:b}, s:[]}",
			 "sandboxID", v->id, "templateID", e2b_template_of(v->profile_name),
			 "alias", "clientID", "sandbox", "metadata", meta, "envdVersion",
			 E2B_ENVD_VERSION, "startedAt", v->created_at, "endAt",
			 v->ended_at ? v->ended_at : v->expires_at, "state",
			 sv_session_live(v->status) ? "running" : "killed", "cpuCount", 1,
			 "memoryMB", v->limits[SV_MEMORY_MB], "diskSizeMB", v->limits[SV_DISK_MB],
			 "domain", domain, "allowInternetAccess", v->network != 0, "lifecycle",
			 "onTimeout", "kill", "autoResume", 0, "volumeMounts");
}

/* The sandbox id of a route, or after answering 404 (-1): one E2B sandbox of the
 * caller, live (alive: 1) or in any state. */
static int open_sandbox(struct api_ctx *ctx, struct req *r, const struct identity *who,
			const char *id, int alive, struct sess *s)
{
	char msg[160];
	int rc = e2b_sess_load(ctx->db, who, id, s);

	if (rc < 0) {
		e2b_db_error(ctx, r);
		return -1;
	}
	if (rc == 0 || (alive && !sv_session_live(s->v.status))) {
		sapi_sess_free(s);
		snprintf(msg, sizeof msg, "sandbox \"%.64s\" not found", id);
		e2b_send_error(r, 404, msg, NULL);
		return -1;
	}
	return 0;
}

/* A JSON object body ("" and "{}" alike), or NULL after a 400. */
static json_t *object_body(struct req *r)
{
	json_error_t err;
	json_t *o;

	if (r->body_len == 0)
		return json_object();
	o = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &err);
	if (!json_is_object(o)) {
		json_decref(o);
		e2b_send_error(r, 400, "the request body must be a JSON object", NULL);
		return NULL;
	}
	return o;
}

/* An E2B field's seconds: absent or null -> dflt; else an integer in lo..hi. 0, or -1
 * after a 400 naming the field. */
static int seconds_field(struct req *r, json_t *o, const char *name, long long lo, long long hi,
			 long long dflt, long long *out)
{
	json_t *v = json_object_get(o, name);
	char msg[200];

	*out = dflt;
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi) {
		*out = json_integer_value(v);
		return 0;
	}
	snprintf(msg, sizeof msg, "%s must be an integer number of seconds from %lld to %lld (this"
		 " service's session_max_seconds_max)", name, lo, hi);
	e2b_send_error(r, 400, msg, NULL);
	return -1;
}

/* The longest lifetime this key's sessions may have. */
static long long max_lifetime(const struct api_ctx *ctx, const struct identity *who)
{
	struct cfg eff = *ctx->cfg;

	val_key_limits(&eff, who->max_limits);
	return eff.session_max_seconds_max;
}

/* The session ends `seconds` from now (only later than now's end when extend_only),
 * and its idle timeout follows as at create (the timeout, at most the key's idle
 * maximum idle_max; the supervisor re-reads both at its heartbeat), so that a longer
 * timeout is not cut short by idling. */
static int set_end(struct db *db, const char *id, long long seconds, long long idle_max,
		   int extend_only)
{
	long long idle = seconds < idle_max ? seconds : idle_max;

	return db_exec_p(db,
			 extend_only
				 ? "UPDATE sessions SET expires_at = GREATEST(expires_at, NOW(3) +"
				   " INTERVAL ? SECOND), idle_seconds = GREATEST(idle_seconds, ?)"
				   " WHERE id = ? AND e2b = 1 AND status IN " SESS_LIVE
				 : "UPDATE sessions SET expires_at = NOW(3) + INTERVAL ? SECOND,"
				   " idle_seconds = ? WHERE id = ? AND e2b = 1 AND status IN " SESS_LIVE,
			 db_i64(seconds), db_i64(idle), db_str(id)) < 0 ? -1 : 0;
}

/* The longest idle timeout this key's sessions may have. */
static long long max_idle(const struct api_ctx *ctx, const struct identity *who)
{
	struct cfg eff = *ctx->cfg;

	val_key_limits(&eff, who->max_limits);
	return eff.session_idle_seconds_max;
}

/* ------------------------------------------------------------------ create */

/* network: only allowPublicTraffic (a boolean: the sandbox's ports open to anyone, the
 * creator's explicit choice; docs/E2B.md "Ports"); why another is refused, or NULL. */
static const char *network_field(json_t *net)
{
	const char *k;
	json_t *v;

	json_object_foreach(net, k, v) {
		if (strcmp(k, "allowPublicTraffic") != 0)
			return "egress rules are not supported: use allow_internet_access (a network"
			       " session, where the API key allows network); network takes"
			       " allowPublicTraffic only";
		if (!json_is_boolean(v))
			return "allowPublicTraffic must be a boolean";
	}
	return NULL;
}

/* The fields of a create body: each known one checked, the rest refused. */
static int check_create_fields(struct req *r, json_t *o)
{
	static const char *const known[] = { "templateID", "timeout", "metadata", "envVars",
					     "secure", "autoPause", "autoPauseMemory", "autoResume",
					     "allow_internet_access", "allowInternetAccess", "mcp",
					     "network", "iam", "volumeMounts", NULL };
	const char *k;
	json_t *v;
	char msg[200];

	json_object_foreach(o, k, v) {
		size_t i;
		const char *why = NULL;

		for (i = 0; known[i] && strcmp(known[i], k) != 0; i++)
			;
		if (known[i] == NULL)
			why = "unknown field";
		else if (json_is_null(v))
			continue;
		else if (strcmp(k, "templateID") == 0 && !json_is_string(v))
			why = "must be a string (a template name; \"base\" is the default)";
		else if ((strcmp(k, "metadata") == 0 || strcmp(k, "envVars") == 0) &&
			 !json_is_object(v))
			why = "must be an object of strings";
		else if ((strcmp(k, "secure") == 0 || strcmp(k, "autoPause") == 0 ||
			  strncmp(k, "allow", 5) == 0) && !json_is_boolean(v))
			why = "must be a boolean";
		else if (strcmp(k, "autoPause") == 0 && json_is_true(v))
			why = "pausing is not supported by this service (a sandbox ends at its"
			      " timeout)";
		else if (strcmp(k, "autoPauseMemory") == 0 || strcmp(k, "autoResume") == 0)
			why = "pausing is not supported by this service";
		else if (strcmp(k, "mcp") == 0)
			why = "the MCP gateway is not supported (this service's MCP endpoint is"
			      " /v1/mcp)";
		else if (strcmp(k, "network") == 0 && !json_is_object(v))
			why = "must be an object";
		else if (strcmp(k, "network") == 0 && network_field(v) != NULL)
			why = network_field(v);
		else if ((strcmp(k, "iam") == 0 || strcmp(k, "volumeMounts") == 0) &&
			 !(json_is_array(v) && json_array_size(v) == 0) &&
			 !(json_is_object(v) && json_object_size(v) == 0))
			why = "is not supported by this service";
		if (why) {
			snprintf(msg, sizeof msg, "%.60s: %s", k, why);
			e2b_send_error(r, 400, msg, NULL);
			return -1;
		}
	}
	return 0;
}

/* The profile of templateID: "base" -> "default", else a profile the key lists. NULL
 * after a 400 naming templateID. */
static const char *template_profile(struct req *r, const struct identity *who, json_t *o)
{
	const char *t = json_string_value(json_object_get(o, "templateID"));
	char msg[200];

	if (t == NULL || strcmp(t, E2B_BASE_TEMPLATE) == 0)
		return AUTH_DEFAULT_PROFILE;
	if (auth_profile_name_ok(t))
		for (size_t i = 0; i < who->nprofiles; i++)
			if (strcmp(who->profiles[i], t) == 0)
				return t;
	snprintf(msg, sizeof msg, "templateID: unknown template '%.64s' (templates are the"
		 " sandbox profiles this API key may use; \"base\" is the default)", t);
	e2b_send_error(r, 400, msg, NULL);
	return NULL;
}

/* The session-create body for an E2B create body, or NULL after answering. */
static json_t *session_body(struct api_ctx *ctx, struct req *r, const struct identity *who,
			    json_t *o)
{
	struct cfg eff = *ctx->cfg;
	const char *profile;
	long long timeout, idle;
	json_t *net = json_object_get(o, "allow_internet_access"), *b;

	if (check_create_fields(r, o) < 0 || (profile = template_profile(r, who, o)) == NULL)
		return NULL;
	val_key_limits(&eff, who->max_limits);
	if (seconds_field(r, o, "timeout", 1, eff.session_max_seconds_max,
			  E2B_DEFAULT_TIMEOUT < eff.session_max_seconds_max
				  ? E2B_DEFAULT_TIMEOUT : eff.session_max_seconds_max,
			  &timeout) < 0)
		return NULL;
	idle = timeout < eff.session_idle_seconds_max ? timeout : eff.session_idle_seconds_max;
	if (net == NULL || json_is_null(net))
		net = json_object_get(o, "allowInternetAccess");
	/* a network sandbox where the key allows network, else none: the Python SDK sends
	 * allow_internet_access true by default, and its default code must run unchanged
	 * (getInfo says allowInternetAccess false then; docs/E2B.md) */
	b = json_pack("{s:s, s:I, s:I, s:b}", "profile", profile, "max_seconds", timeout,
		      "idle_seconds", idle, "network", json_is_true(net) && who->allow_network);
	if (b && json_is_object(json_object_get(o, "envVars")))
		json_object_set(b, "env", json_object_get(o, "envVars"));
	if (b && json_is_object(json_object_get(o, "metadata")))
		json_object_set(b, "metadata", json_object_get(o, "metadata"));
	if (b == NULL)
		e2b_send_error(r, 500, "internal error", NULL);
	return b;
}

/* Our field names in a session answer's error, as the E2B body names them. */
static const char *const field_map[][2] = { { "max_seconds", "timeout" },
					    { "idle_seconds", "timeout" },
					    { "profile", "templateID" },
					    { "network", "allow_internet_access" },
					    { "env", "envVars" } };

/* A session handler's non-success answer in E2B's shape: the same status, its message
 * naming the field as the E2B body does (our name replaced where the message says it,
 * else the E2B name in front), Retry-After passed on. */
static void send_sub_error(struct req *r, const struct sub *s)
{
	json_t *e = json_object_get(s->json, "error");
	const char *msg = json_string_value(json_object_get(e, "message"));
	const char *field = json_string_value(json_object_get(e, "field"));
	char text[600], ra[32], extra[64];
	int st = s->status >= 400 && s->status <= 599 ? s->status : 500;
	const char *name = field, *at;
	size_t ol = field ? strlen(field) : 0;

	if (msg == NULL)
		msg = "the request failed";
	for (size_t i = 0; field && i < sizeof field_map / sizeof field_map[0]; i++) {
		size_t l = strlen(field_map[i][0]);
		if (strncmp(field, field_map[i][0], l) == 0 && (field[l] == '\0' || field[l] == '.')) {
			name = field_map[i][1];
			ol = l;
			break;
		}
	}
	/* "network access" is prose, not the field */
	if (field && strcmp(field, "network") != 0 && (at = strstr(msg, field)) != NULL)
		snprintf(text, sizeof text, "%.*s%s%s", (int)(at - msg), msg, name, at + ol);
	else if (field)
		snprintf(text, sizeof text, "%s%s: %s", name, name == field ? "" : field + ol, msg);
	else
		snprintf(text, sizeof text, "%s", msg);
	extra[0] = '\0';
	if (sub_header(s, "Retry-After", ra, sizeof ra) == 0 && strspn(ra, "0123456789") == strlen(ra))
		snprintf(extra, sizeof extra, "Retry-After: %s\r\n", ra);
	e2b_send_error(r, st, text, extra[0] ? extra : NULL);
}

/* The create's transaction hook: the sandbox's mark and its first token. */
struct mark {
	const unsigned char *hash;
	int ports_public;
};

static int mark_sandbox(struct db *db, const char *id, void *arg)
{
	const struct mark *m = arg;

	if (db_exec_p(db, "UPDATE sessions SET e2b = 1, ports_public = ? WHERE id = ?",
		      db_i64(m->ports_public), db_str(id)) != 1)
		return -1;
	return e2b_token_store(db, id, m->hash);
}

static const struct sess_hook *create_hook; /* the hook of the sub-request now running */

static void h_inner_create(struct api_ctx *ctx, struct req *r, const struct identity *who,
			   const struct route_args *a)
{
	(void)a;
	sess_create_hooked(ctx, r, who, create_hook);
}

/* The answer of create and connect: the sandbox and a token (the SDK needs one), and
 * the traffic token of its ports (NULL: public ports, none). */
static void send_sandbox_token(struct req *r, int status, const struct sess_view *v,
			       const char *token, const char *traffic)
{
	const char *domain = e2b_domain(r);

	http_send_json(r, status,
		       json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:s?, s:n}", "sandboxID", v->id,
				 "templateID", e2b_template_of(v->profile_name), "clientID", "sandbox",
				 "envdVersion", E2B_ENVD_VERSION, "envdAccessToken", token, "domain",
				 domain, "trafficAccessToken", traffic, "alias"),
		       NULL);
}

/* A new traffic token of sandbox id unless its ports are public (traffic[0] = 0 then).
 * 0 or -1. */
static int traffic_token(struct db *db, const char *id, char traffic[E2B_TOKEN_HEX + 1])
{
	struct db_res *res = db_query_p(db, "SELECT ports_public FROM sessions WHERE id = ?",
					db_str(id));
	unsigned char hash[32];
	int pub;

	traffic[0] = '\0';
	if (res == NULL)
		return -1;
	pub = db_res_rows(res) == 1 && db_res_i(res, 0, "ports_public", 0) == 1;
	db_res_free(res);
	if (pub)
		return 0;
	return e2b_token_new(traffic, hash) < 0 || e2b_traffic_token_store(db, id, hash) < 0 ? -1 : 0;
}

/* A new token for sandbox id (dropping the unseen one of a create, first8 of its hash,
 * when given) and the answer with it. */
static void answer_with_token(struct api_ctx *ctx, struct req *r, const struct identity *who,
			      const char *id, int status, const unsigned char *drop8)
{
	char token[E2B_TOKEN_HEX + 1], traffic[E2B_TOKEN_HEX + 1], msg[400];
	unsigned char hash[32];
	struct sess s;

	if (open_sandbox(ctx, r, who, id, 0, &s) < 0)
		return;
	if (!sv_session_live(s.v.status)) {
		/* ended before the answer: a create whose session failed to start */
		snprintf(msg, sizeof msg, "the sandbox did not start: %.300s",
			 s.v.end_reason ? s.v.end_reason : s.v.status);
		sapi_sess_free(&s);
		e2b_send_error(r, status == 201 ? 500 : 404, msg, NULL);
		return;
	}
	if (e2b_token_new(token, hash) < 0 || e2b_token_store(ctx->db, id, hash) < 0 ||
	    (drop8 && db_exec_p(ctx->db, "DELETE FROM e2b_tokens WHERE session_id = ? AND"
				" LEFT(token_hash, 8) = ?", db_str(id), db_blob(drop8, 8)) < 0) ||
	    traffic_token(ctx->db, id, traffic) < 0) {
		sapi_sess_free(&s);
		e2b_db_error(ctx, r);
		return;
	}
	send_sandbox_token(r, status, &s.v, token, traffic[0] ? traffic : NULL);
	explicit_bzero(token, sizeof token);
	explicit_bzero(traffic, sizeof traffic);
	sapi_sess_free(&s);
}

void h_e2b_create(struct api_ctx *ctx, struct req *r, const struct identity *unused,
		  const struct route_args *a)
{
	static const struct route inner[] = { { "POST", "/v1/sessions", h_inner_create,
						"h_inner_create", 0 } };
	char token[E2B_TOKEN_HEX + 1];
	unsigned char hash[32], first8[8];
	struct identity who;
	struct mark m = { hash, 0 };
	struct sess_hook hook = { mark_sandbox, &m };
	const char *id;
	struct sub s;
	json_t *o, *body;
	char *text;
	int rc;

	(void)unused;
	(void)a;
	if (e2b_authenticate(ctx, r, &who) < 0)
		return;
	if (r->wait.resumed && r->wait.id[0]) {
		long long aux = r->wait.aux;
		memcpy(first8, &aux, sizeof first8);
		answer_with_token(ctx, r, &who, r->wait.id, 201, first8);
		return;
	}
	if ((o = object_body(r)) == NULL)
		return;
	m.ports_public = json_is_true(json_object_get(json_object_get(o, "network"),
						       "allowPublicTraffic"));
	body = session_body(ctx, r, &who, o);
	json_decref(o);
	if (body == NULL)
		return;
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (text == NULL || e2b_token_new(token, hash) < 0) {
		free(text);
		e2b_send_error(r, 500, "internal error", NULL);
		return;
	}
	create_hook = &hook;
	rc = subcall(ctx, r, &who, inner, 1, "POST", "/v1/sessions", "", text, strlen(text), &s);
	create_hook = NULL;
	explicit_bzero(text, strlen(text)); /* env values are secrets */
	free(text);
	id = json_string_value(json_object_get(s.json, "id"));
	if (rc < 0 || s.status != 201 || id == NULL || strlen(id) >= sizeof r->wait.id) {
		if (rc < 0 || s.status == 201)
			e2b_send_error(r, 500, "internal error", NULL);
		else
			send_sub_error(r, &s);
		sub_free(&s);
		explicit_bzero(token, sizeof token);
		return;
	}
	log_kv("info", "e2b_sandbox_created", "session", id, "key", who.key_id, (char *)NULL);
	/* ready in a moment: answered on the re-dispatch, with a token made then */
	if (json_string_value(json_object_get(s.json, "status")) &&
	    strcmp(json_string_value(json_object_get(s.json, "status")), "starting") == 0) {
		long long aux;
		memcpy(&aux, hash, sizeof aux);
		r->wait.aux = aux;
		if (wt_defer(r, who.key_id, &(struct wt_cond){ WT_SESSION_READY, id, 0, 0 },
			     READY_WAIT)) {
			sub_free(&s);
			explicit_bzero(token, sizeof token);
			return;
		}
	}
	{
		char traffic[E2B_TOKEN_HEX + 1];
		struct sess ss;
		if (traffic_token(ctx->db, id, traffic) < 0)
			e2b_db_error(ctx, r);
		else if (open_sandbox(ctx, r, &who, id, 0, &ss) == 0) {
			send_sandbox_token(r, 201, &ss.v, token, traffic[0] ? traffic : NULL);
			sapi_sess_free(&ss);
		}
		explicit_bzero(traffic, sizeof traffic);
	}
	explicit_bzero(token, sizeof token);
	sub_free(&s);
}

/* ------------------------------------------------------------------ one sandbox */

void h_e2b_get(struct api_ctx *ctx, struct req *r, const struct identity *unused,
	       const struct route_args *a)
{
	struct identity who;
	struct sess s;

	(void)unused;
	if (e2b_authenticate(ctx, r, &who) < 0 || open_sandbox(ctx, r, &who, a->id, 1, &s) < 0)
		return;
	http_send_json(r, 200, e2b_sandbox_info(&s.v, e2b_domain(r)), NULL);
	sapi_sess_free(&s);
}

/* DELETE /sandboxes/{id}: the session's close (its handler waits for the end). */
void h_e2b_kill(struct api_ctx *ctx, struct req *r, const struct identity *unused,
		const struct route_args *a)
{
	static const struct route inner[] = { { "POST", "/v1/sessions/{id}/close", h_sess_close,
						"h_sess_close", 0 } };
	char path[128];
	struct identity who;
	struct sess s;
	struct sub sub;
	int rc;

	(void)unused;
	if (e2b_authenticate(ctx, r, &who) < 0)
		return;
	/* the re-dispatch after the close's wait: the sandbox may have ended meanwhile */
	if (!r->wait.resumed) {
		if (open_sandbox(ctx, r, &who, a->id, 1, &s) < 0)
			return;
		sapi_sess_free(&s);
	}
	snprintf(path, sizeof path, "/v1/sessions/%s/close", a->id);
	rc = subcall(ctx, r, &who, inner, 1, "POST", path, "", "", 0, &sub);
	if (rc == 0 && sub.deferred) {
		sub_free(&sub);
		return;
	}
	if (rc < 0)
		e2b_send_error(r, 500, "internal error", NULL);
	else if (sub.status == 200 || sub.status == 202)
		http_send_bytes(r, 204, "application/json", "", 0, NULL);
	else if (sub.status == 404)
		e2b_send_error(r, 404, "sandbox not found", NULL);
	else
		send_sub_error(r, &sub);
	sub_free(&sub);
}

/* The body of timeout and connect ({"timeout": seconds}, required or not, 1..the key's
 * maximum lifetime, 0 when absent; `also` one more field accepted and ignored, or
 * NULL), then the caller's live sandbox a->id proven. 0, or -1 after answering. */
static int timeout_call(struct api_ctx *ctx, struct req *r, const struct identity *who,
			const struct route_args *a, int required, const char *also, long long *t)
{
	const char *k;
	json_t *o, *v;
	struct sess s;
	char msg[160];
	int rc;

	if ((o = object_body(r)) == NULL)
		return -1;
	json_object_foreach(o, k, v) {
		if (strcmp(k, "timeout") != 0 && (also == NULL || strcmp(k, also) != 0)) {
			snprintf(msg, sizeof msg, "%.60s: unknown field (the body is {\"timeout\":"
				 " seconds})", k);
			json_decref(o);
			e2b_send_error(r, 400, msg, NULL);
			return -1;
		}
	}
	if (required && json_object_get(o, "timeout") == NULL) {
		json_decref(o);
		e2b_send_error(r, 400, "timeout is required (seconds from now)", NULL);
		return -1;
	}
	rc = seconds_field(r, o, "timeout", 1, max_lifetime(ctx, who), 0, t);
	json_decref(o);
	if (rc < 0 || open_sandbox(ctx, r, who, a->id, 1, &s) < 0)
		return -1;
	sapi_sess_free(&s);
	return 0;
}

void h_e2b_timeout(struct api_ctx *ctx, struct req *r, const struct identity *unused,
		   const struct route_args *a)
{
	struct identity who;
	long long t;

	(void)unused;
	if (e2b_authenticate(ctx, r, &who) < 0 || timeout_call(ctx, r, &who, a, 1, NULL, &t) < 0)
		return;
	if (set_end(ctx->db, a->id, t, max_idle(ctx, &who), 0) < 0) {
		e2b_db_error(ctx, r);
		return;
	}
	http_send_bytes(r, 204, "application/json", "", 0, NULL);
}

/* POST /sandboxes/{id}/connect (v1 and v2): a new token, the sandbox untouched but for
 * a timeout that extends it. 200. */
void h_e2b_connect(struct api_ctx *ctx, struct req *r, const struct identity *unused,
		   const struct route_args *a)
{
	struct identity who;
	long long t;

	(void)unused;
	if (e2b_authenticate(ctx, r, &who) < 0 ||
	    timeout_call(ctx, r, &who, a, 0, "memory", &t) < 0)
		return;
	if (t > 0 && set_end(ctx->db, a->id, t, max_idle(ctx, &who), 1) < 0) {
		e2b_db_error(ctx, r);
		return;
	}
	answer_with_token(ctx, r, &who, a->id, 200, NULL);
}

/* pause and resume: a sandbox never pauses here; the answer says so (409: the SDK's
 * pause() returns false). */
static void not_paused(struct api_ctx *ctx, struct req *r, const struct route_args *a,
		       const char *msg)
{
	struct identity who;
	struct sess s;

	if (e2b_authenticate(ctx, r, &who) < 0 || open_sandbox(ctx, r, &who, a->id, 1, &s) < 0)
		return;
	sapi_sess_free(&s);
	e2b_send_error(r, 409, msg, NULL);
}

void h_e2b_pause(struct api_ctx *ctx, struct req *r, const struct identity *unused,
		 const struct route_args *a)
{
	(void)unused;
	not_paused(ctx, r, a, "pausing is not supported by this service: the sandbox keeps"
		   " running until it is killed or times out");
}

void h_e2b_resume(struct api_ctx *ctx, struct req *r, const struct identity *unused,
		  const struct route_args *a)
{
	(void)unused;
	not_paused(ctx, r, a, "the sandbox is running: sandboxes are never paused on this"
		   " service");
}
