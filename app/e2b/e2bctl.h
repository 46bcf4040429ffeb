/* What the E2B control plane's files share (app/e2b/eauth.c, app/e2b/e2bapi.c,
 * app/e2b/e2blist.c): the storage-failure answer in E2B's shape, envd tokens (made,
 * stored as SHA-256, bounded per sandbox), the one scoped read of a caller's sandbox
 * and a sandbox's view as the SDK reads it. */
#ifndef SANDBOX_E2BCTL_H
#define SANDBOX_E2BCTL_H

#include <jansson.h>

#include "auth.h"
#include "db.h"
#include "e2b.h"
#include "http.h"
#include "routes.h"
#include "sapi.h"

/* The control plane's routes (app/http/api_routes.h): e2bapi.c, e2blist.c. */
route_fn h_e2b_create, h_e2b_get, h_e2b_kill, h_e2b_timeout, h_e2b_connect, h_e2b_pause,
	h_e2b_resume, h_e2b_list;

/* The envd tokens a sandbox keeps: connect adds one and drops the oldest beyond. */
#define E2B_TOKENS_MAX 32
/* An envd token: 32 random bytes as lower-case hex. */
#define E2B_TOKEN_HEX 64
/* The template that names the "default" profile. */
#define E2B_BASE_TEMPLATE "base"

/* A storage failure (as route_db_error: counted, logged, the connection dropped when
 * gone) answered {"code":503|500,...}, 503 with Retry-After. */
void e2b_db_error(struct api_ctx *ctx, struct req *r);
/* A new token (NUL-terminated hex) and its SHA-256. 0 or -1. */
int e2b_token_new(char token[E2B_TOKEN_HEX + 1], unsigned char hash[32]);
/* Stores hash for session sid and drops the oldest beyond E2B_TOKENS_MAX. 0 or -1. */
int e2b_token_store(struct db *db, const char *sid, const unsigned char hash[32]);
/* Stores a traffic token's hash for session sid, bounded as the envd tokens. 0 or -1. */
int e2b_traffic_token_store(struct db *db, const char *sid, const unsigned char hash[32]);
/* The caller's E2B sandbox id (scoped exactly as the session API reads a session):
 * 1 found (s filled: release with sapi_sess_free), 0 not visible or not an E2B
 * sandbox, -1 storage error. */
int e2b_sess_load(struct db *db, const struct identity *who, const char *id, struct sess *s);
/* The template a session's profile is ("base" for the default profile). */
const char *e2b_template_of(const char *profile);
/* GET /sandboxes/{id}'s object for a session (the list's items too). domain: the
 * sandbox domain (NULL: null). */
json_t *e2b_sandbox_info(const struct sess_view *v, const char *domain);
/* The sandbox domain nginx passes (FastCGI param E2B_DOMAIN), or NULL. */
const char *e2b_domain(const struct req *r);

#endif
