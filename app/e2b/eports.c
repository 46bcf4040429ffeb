/* Sandbox ports, the API's side (docs/E2B.md "Ports"; the relay itself is the runner's
 * port helper, sandbox-runner/session/sports.h).
 *
 * nginx serves https://<port>-<session id>.<domain>/ by asking this file first (its
 * auth_request subrequest, GET /_sandbox/port-auth, answered only when nginx's internal
 * location set SANDBOX_PORT_AUTH: a client cannot call it) whether the request may
 * reach the session's port: the session must be live, and the request must carry the
 * session's traffic token (e2b-traffic-access-token) or its owner's API key
 * (X-API-KEY: the same scope as the REST API reads the session with), unless the
 * creator made its ports public. Yes: 204 with X-Sandbox-Socket, the helper's socket
 * (nginx strips both credentials before proxying: the sandbox never sees them). No:
 * 401 (nginx answers it with its JSON error page). Authorization is left alone: it is
 * the sandboxed application's own.
 *
 * GET /v1/sessions/{id}/ports/{port} is the REST equivalent of the SDK's getHost: the
 * URL of a port of the caller's session, and how it is opened. */
#include "e2bctl.h"

#include <stdio.h>
#include <string.h>

#include "api_routes.h"
#include "sha256.h"
#include "util.h"

#define KEY_MAX 200
#define TOKEN_MAX 256

/* 1 when tok is one of session sid's traffic tokens (looked up by its SHA-256, the
 * stored hash compared in constant time), 0 not, -1 storage error. */
static int traffic_ok(struct db *db, const char *sid, const char *tok)
{
	unsigned char hash[32], d = 0;
	struct db_res *res;
	size_t n;
	int ok;

	sha256_buf(tok, strlen(tok), hash);
	res = db_query_p(db, "SELECT token_hash, session_id FROM session_traffic_tokens"
			     " WHERE token_hash = ?",
			 db_blob(hash, 32));
	if (res == NULL)
		return -1;
	ok = db_res_rows(res) == 1 && db_res_l(res, 0, "token_hash") == 32 &&
	     db_res_s(res, 0, "session_id") && strcmp(db_res_s(res, 0, "session_id"), sid) == 0;
	if (ok) {
		const unsigned char *h = (const unsigned char *)db_res_s(res, 0, "token_hash");
		for (n = 0; n < 32; n++)
			d |= (unsigned char)(h[n] ^ hash[n]);
		ok = d == 0;
	}
	db_res_free(res);
	return ok;
}

/* 1 when key is an API key whose scope sees session sid, 0 not, -1 storage error. */
static int owner_ok(struct db *db, const char *sid, const char *key)
{
	char bearer[KEY_MAX + 16];
	struct identity who;
	struct sess s;
	int rc;

	if (strlen(key) > KEY_MAX)
		return 0;
	snprintf(bearer, sizeof bearer, "Bearer %s", key);
	rc = auth_identify(db, bearer, &who);
	explicit_bzero(bearer, sizeof bearer);
	if (rc == AUTH_DB_ERROR)
		return -1;
	if (rc != AUTH_OK)
		return 0;
	rc = sapi_sess_load(db, &who, sid, &s);
	if (rc > 0)
		sapi_sess_free(&s);
	return rc;
}

/* nginx answers a refusal with its own JSON error page (auth_request passes 401 and
 * 403 on; the body is not used). */
static void deny(struct req *r, int status)
{
	http_send_bytes(r, status, "application/json", "", 0, NULL);
}

void h_port_auth(struct api_ctx *ctx, struct req *r, const struct identity *unused,
		 const struct route_args *a)
{
	const char *flag = e2b_param(r, "SANDBOX_PORT_AUTH");
	const char *sid = e2b_param(r, "SANDBOX_PORT_SID");
	const char *tok = e2b_param(r, "HTTP_E2B_TRAFFIC_ACCESS_TOKEN");
	const char *key = e2b_param(r, "HTTP_X_API_KEY");
	char sock[CFG_PATH_MAX + 64], extra[CFG_PATH_MAX + 96];
	struct db_res *res;
	struct db *db;
	int ok = 0;

	(void)unused;
	(void)a;
	if (flag == NULL || strcmp(flag, "1") != 0) { /* not nginx's subrequest */
		http_send_error(r, 404, "not_found", "no such route", NULL, NULL);
		return;
	}
	if (sid == NULL || !util_is_uuid(sid) || ctx->cfg->session_ports_dir[0] == '\0') {
		deny(r, 403);
		return;
	}
	if ((db = route_db(ctx)) == NULL) {
		http_send_bytes(r, 503, "application/json", "", 0, "Retry-After: 1\r\n");
		return;
	}
	res = db_query_p(db, "SELECT status, ports_public FROM sessions WHERE id = ?", db_str(sid));
	if (res == NULL) {
		route_db_error(ctx, r);
		return;
	}
	if (db_res_rows(res) == 0 || !db_res_s(res, 0, "status") ||
	    strcmp(db_res_s(res, 0, "status"), "ready") != 0) {
		db_res_free(res);
		deny(r, 403);
		return;
	}
	ok = db_res_i(res, 0, "ports_public", 0) == 1;
	db_res_free(res);
	if (!ok && tok != NULL && *tok && strlen(tok) <= TOKEN_MAX)
		ok = traffic_ok(db, sid, tok);
	if (ok == 0 && key != NULL && *key)
		ok = owner_ok(db, sid, key);
	if (ok < 0) {
		route_db_error(ctx, r);
		return;
	}
	if (!ok) {
		deny(r, 401);
		return;
	}
	snprintf(sock, sizeof sock, "%s/%s.sock", ctx->cfg->session_ports_dir, sid);
	snprintf(extra, sizeof extra, "X-Sandbox-Socket: %s\r\n", sock);
	http_send_bytes(r, 204, "application/json", "", 0, extra);
}

void h_sess_port(struct api_ctx *ctx, struct req *r, const struct identity *who,
		 const struct route_args *a)
{
	const char *domain = e2b_domain(r);
	struct db *db = route_db(ctx);
	struct db_res *res;
	long long port;
	char host[400], url[420];
	struct sess s;
	int rc, pub;

	if (a->rest == NULL || util_parse_ll(a->rest, 1, 65535, &port) < 0 ||
	    strspn(a->rest, "0123456789") != strlen(a->rest) || port == E2B_ENVD_PORT) {
		http_send_error(r, 400, "invalid_request",
				"port must be a TCP port number (1..65535, not 49983)", "port", NULL);
		return;
	}
	if (db == NULL) {
		route_db_error(ctx, r);
		return;
	}
	rc = sapi_sess_load(db, who, a->id, &s);
	if (rc < 0) {
		route_db_error(ctx, r);
		return;
	}
	if (rc == 0) {
		sapi_no_session(r);
		return;
	}
	if (domain == NULL || ctx->cfg->session_ports_dir[0] == '\0') {
		sapi_sess_free(&s);
		http_send_error(r, 501, "not_configured", "sandbox ports are not configured on this"
				" service (session_ports_dir, the sandbox domain)", NULL, NULL);
		return;
	}
	sapi_sess_free(&s);
	res = db_query_p(db, "SELECT ports_public FROM sessions WHERE id = ?", db_str(a->id));
	if (res == NULL) {
		route_db_error(ctx, r);
		return;
	}
	pub = db_res_rows(res) == 1 && db_res_i(res, 0, "ports_public", 0) == 1;
	db_res_free(res);
	snprintf(host, sizeof host, "%lld-%s.%s", port, a->id, domain);
	snprintf(url, sizeof url, "https://%s/", host);
	http_send_json(r, 200,
		       json_pack("{s:I, s:s, s:s, s:b, s:[s, s]}", "port", (json_int_t)port, "url",
				 url, "host", host, "public", pub, "credentials", "X-API-KEY",
				 "e2b-traffic-access-token"),
		       NULL);
}
