/* Bearer token -> verified identity. Identity comes only from the key row. */
#ifndef SANDBOX_AUTH_H
#define SANDBOX_AUTH_H

#include "db.h"
#include "joblimits.h"

#define TOKEN_PREFIX "sbx_"
#define TOKEN_HEX 64 /* 256 random bits */

struct identity {
	char key_id[40];
	char ns[130], tenant[130], subject_type[66], subject_id[130];
	char actor_type[66], actor_id[130];
	int has_actor_type, has_actor_id;
	int tenant_admin, allow_network;
	long long max_queued; /* -1: use the config default */
	long long max_stored_mb; /* -1: use the config default */
	long long max_running;   /* -1: use the config default (enforced by the runner) */
	long long max_limits[LIM_COUNT]; /* the key's own maxima, -1: none */
};

enum auth_result { AUTH_OK, AUTH_MISSING, AUTH_INVALID, AUTH_DB_ERROR };

/* Checks the token's shape (cheap, no DB) and looks up its unrevoked key. */
enum auth_result auth_identify(struct db *db, const char *authorization, struct identity *id);
/* Shape of a token: prefix + 64 lower-case hex. */
int auth_token_well_formed(const char *t);
/* api_keys.max_limits_json -> out (-1 where the key sets no maximum). */
void auth_parse_max_limits(const char *json, long long out[LIM_COUNT]);
/* sha256 of the token, the only form ever stored. */
void auth_token_hash(const char *token, unsigned char out[32]);

#endif
