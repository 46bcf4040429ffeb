/* Who is calling the E2B surfaces (app/e2b/e2b.h): the control plane's X-API-KEY (one
 * of our API keys, checked exactly as a bearer token is, cache included), envd's
 * sandbox and access token (envd_resolve), the tokens themselves (made from the
 * kernel's CSPRNG, stored as SHA-256 only, bounded per sandbox), and the answers in
 * E2B's shapes (the control plane's errors, envd's unary errors, a storage failure).
 * A token never reaches a log line. */
#include "e2bctl.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "sha256.h"
#include "util.h"

#define RETRY_AFTER "Retry-After: 1\r\n"
#define KEY_MAX 200   /* an X-API-KEY longer than this is no key of ours */
#define TOKEN_MAX 256 /* an X-Access-Token longer than this is no token of ours */

void e2b_send_error(struct req *r, int status, const char *message, const char *extra)
{
	http_send_json(r, status, json_pack("{s:i, s:s}", "code", status, "message", message),
		       extra);
}

void envd_send_error(struct req *r, const char *code, const char *message)
{
	http_send_json(r, envd_http_of_code(code),
		       json_pack("{s:s, s:s}", "code", code, "message", message), NULL);
}

const char *e2b_param(const struct req *r, const char *name)
{
	return FCGX_GetParam(name, r->fcgi->envp);
}

void e2b_db_error(struct api_ctx *ctx, struct req *r)
{
	char code[16];
	int lost;

	if (ctx->mx)
		mx_db_error(&ctx->mx->w[ctx->slot]);
	if (ctx->db == NULL) {
		e2b_send_error(r, 503, "the database is unavailable; retry later", RETRY_AFTER);
		return;
	}
	lost = db_tx_lost(ctx->db) || db_retryable(ctx->db);
	snprintf(code, sizeof code, "%u", db_errno(ctx->db));
	log_kv("error", "db_error", "errno", code, "error", db_error(ctx->db), "lost_conflict",
	       lost ? "1" : "0", (char *)NULL);
	if (db_gone(ctx->db)) {
		db_close(ctx->db);
		ctx->db = NULL;
		e2b_send_error(r, 503, "the database is unavailable; retry later", RETRY_AFTER);
	} else if (lost) {
		e2b_send_error(r, 503, "the request kept conflicting with concurrent ones and was"
			       " not carried out; retry", RETRY_AFTER);
	} else {
		e2b_send_error(r, 500, "internal error", NULL);
	}
}

int e2b_authenticate(struct api_ctx *ctx, struct req *r, struct identity *who)
{
	const char *key = e2b_param(r, "HTTP_X_API_KEY");
	char bearer[KEY_MAX + 16];
	struct db *db;

	memset(who, 0, sizeof *who);
	if (key == NULL || *key == '\0') {
		e2b_send_error(r, 401, "missing X-API-KEY header (an API key of this service)",
			       NULL);
		return -1;
	}
	if (strlen(key) > KEY_MAX) {
		e2b_send_error(r, 401, "invalid or revoked API key", NULL);
		return -1;
	}
	if ((db = route_db(ctx)) == NULL) {
		e2b_db_error(ctx, r);
		return -1;
	}
	snprintf(bearer, sizeof bearer, "Bearer %s", key);
	switch (auth_identify(db, bearer, who)) {
	case AUTH_OK:
		explicit_bzero(bearer, sizeof bearer);
		return 0;
	case AUTH_MISSING:
	case AUTH_INVALID:
		explicit_bzero(bearer, sizeof bearer);
		e2b_send_error(r, 401, "invalid or revoked API key", NULL);
		return -1;
	default:
		explicit_bzero(bearer, sizeof bearer);
		e2b_db_error(ctx, r);
		return -1;
	}
}

int e2b_token_new(char token[E2B_TOKEN_HEX + 1], unsigned char hash[32])
{
	unsigned char raw[E2B_TOKEN_HEX / 2];

	if (util_random(raw, sizeof raw) < 0)
		return -1;
	util_hex(raw, sizeof raw, token);
	explicit_bzero(raw, sizeof raw);
	sha256_buf(token, E2B_TOKEN_HEX, hash);
	return 0;
}

/* Stores hash for sid in table (e2b_tokens, session_traffic_tokens) and drops the
 * oldest beyond E2B_TOKENS_MAX. */
static int token_store(struct db *db, const char *table, const char *sid,
		       const unsigned char hash[32])
{
	char sql[400];

	snprintf(sql, sizeof sql, "INSERT INTO %s (token_hash, session_id) VALUES (?, ?)", table);
	if (db_exec_p(db, sql, db_blob(hash, 32), db_str(sid)) < 0)
		return -1;
	/* the oldest beyond the bound go (a derived table: MariaDB cannot read the table
	 * a DELETE writes otherwise) */
	snprintf(sql, sizeof sql,
		 "DELETE FROM %s WHERE session_id = ? AND token_hash NOT IN (SELECT h FROM"
		 " (SELECT token_hash AS h FROM %s WHERE session_id = ? ORDER BY created_at"
		 " DESC, token_hash LIMIT ?) keep)", table, table);
	return db_exec_p(db, sql, db_str(sid), db_str(sid), db_i64(E2B_TOKENS_MAX)) < 0 ? -1 : 0;
}

int e2b_token_store(struct db *db, const char *sid, const unsigned char hash[32])
{
	return token_store(db, "e2b_tokens", sid, hash);
}

int e2b_traffic_token_store(struct db *db, const char *sid, const unsigned char hash[32])
{
	return token_store(db, "session_traffic_tokens", sid, hash);
}

/* Equal strings of equal length, in time independent of where they differ. */
static int ct_equal(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

static int refuse(struct envd_err *e, int http, const char *code, const char *msg)
{
	e->http = http;
	e->code = code;
	snprintf(e->msg, sizeof e->msg, "%s", msg);
	return -1;
}

/* A storage failure of an envd call: logged (never the token), the connection dropped
 * when it is gone; unavailable (503) or internal (500). */
static int envd_db_fail(struct api_ctx *ctx, struct envd_err *e)
{
	char code[16];

	if (ctx->mx)
		mx_db_error(&ctx->mx->w[ctx->slot]);
	if (ctx->db == NULL)
		return refuse(e, 503, "unavailable", "the database is unavailable; retry later");
	snprintf(code, sizeof code, "%u", db_errno(ctx->db));
	log_kv("error", "db_error", "errno", code, "error", db_error(ctx->db), (char *)NULL);
	if (db_gone(ctx->db)) {
		db_close(ctx->db);
		ctx->db = NULL;
		return refuse(e, 503, "unavailable", "the database is unavailable; retry later");
	}
	return refuse(e, 500, "internal", "internal error");
}

int envd_resolve(struct api_ctx *ctx, struct req *r, struct envd_caller *c, struct envd_err *e)
{
	static const char bad[] = "missing or invalid access token for this sandbox"
				  " (X-Access-Token: the envdAccessToken of create or connect)";
	const char *host = e2b_param(r, "E2B_HOST_SANDBOX");
	const char *hdr = e2b_param(r, "HTTP_E2B_SANDBOX_ID");
	const char *tok = e2b_param(r, "HTTP_X_ACCESS_TOKEN");
	const char *sid = host && *host ? host : hdr && *hdr ? hdr : NULL;
	unsigned char hash[32];
	char hex[65];
	struct db_res *res;
	struct db *db;
	int ok, live;

	memset(c, 0, sizeof *c);
	memset(e, 0, sizeof *e);
	if (tok == NULL || *tok == '\0' || strlen(tok) > TOKEN_MAX)
		return refuse(e, 401, "unauthenticated", bad);
	if ((db = route_db(ctx)) == NULL)
		return envd_db_fail(ctx, e);
	sha256_buf(tok, strlen(tok), hash);
	util_hex(hash, sizeof hash, hex);
	res = db_query_p(db,
			 "SELECT LOWER(HEX(t.token_hash)) AS h, t.session_id, s.status, s.key_id"
			 " FROM e2b_tokens t JOIN sessions s ON s.id = t.session_id AND s.e2b = 1"
			 " WHERE t.token_hash = ?",
			 db_blob(hash, 32));
	if (res == NULL)
		return envd_db_fail(ctx, e);
	/* One answer for a wrong token, a token of another sandbox, an unknown sandbox and
	 * one that is no E2B sandbox: a caller without the token learns nothing. */
	ok = db_res_rows(res) == 1 && db_res_s(res, 0, "h") && strlen(db_res_s(res, 0, "h")) == 64 &&
	     ct_equal(db_res_s(res, 0, "h"), hex, 64) && db_res_s(res, 0, "session_id") &&
	     strlen(db_res_s(res, 0, "session_id")) < sizeof c->sid &&
	     (sid == NULL || strcmp(sid, db_res_s(res, 0, "session_id")) == 0);
	if (!ok) {
		db_res_free(res);
		return refuse(e, 401, "unauthenticated", bad);
	}
	snprintf(c->sid, sizeof c->sid, "%s", db_res_s(res, 0, "session_id"));
	live = sv_session_live(db_res_s(res, 0, "status") ? db_res_s(res, 0, "status") : "");
	switch (live ? auth_identify_key(db, db_res_s(res, 0, "key_id") ? db_res_s(res, 0, "key_id")
									  : "",
					 &c->who)
		     : AUTH_OK) {
	case AUTH_OK:
		break;
	case AUTH_DB_ERROR:
		db_res_free(res);
		return envd_db_fail(ctx, e);
	default:
		db_res_free(res);
		return refuse(e, 401, "unauthenticated", "the API key that created this sandbox"
			      " is revoked");
	}
	db_res_free(res);
	if (!live) {
		char msg[sizeof e->msg];
		snprintf(msg, sizeof msg, "sandbox %s is not running (it was killed or it timed"
			 " out)", c->sid);
		memset(&c->who, 0, sizeof c->who);
		return refuse(e, 404, "not_found", msg);
	}
	return 0;
}
