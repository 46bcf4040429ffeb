/* Bearer token -> verified identity. Identity comes only from the key row.
 *
 * Key cache (sandbox-api only): each worker keeps the identities of the last
 * AUTH_CACHE_ENTRIES tokens it saw, keyed by the token's hash. An entry is used only
 * while (a) the instance's key generation is the one read before its row was
 * fetched and (b) it is younger than AUTH_CACHE_TTL_MS. The generation is a counter
 * in a small file in the FastCGI socket's directory (auth_cache_init maps it in the
 * master, the workers inherit the mapping, one atomic load per request);
 * `sandboxctl keys revoke` bumps it after its commit (auth_gen_bump), so every
 * worker of this host refuses a revoked key before the command returns. API hosts
 * that do not share that file (another machine), and key rows edited in the
 * database by hand, take effect within the TTL. Unknown or bad tokens are never
 * cached: they always go to the database. */
#ifndef SANDBOX_AUTH_H
#define SANDBOX_AUTH_H

#include <stddef.h>
#include <string.h>

#include "config.h"
#include "db.h"
#include "joblimits.h"

#define TOKEN_PREFIX "sbx_"
#define TOKEN_HEX 64 /* 256 random bits */
#define AUTH_PROFILE_NAME_MAX 64 /* = the runner's PROF_NAME_MAX */
#define AUTH_MAX_PROFILES 16     /* profiles one key may list */
#define AUTH_DEFAULT_PROFILE "default"

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
	/* the sandbox profiles its jobs may name; "default" only when the key lists none */
	char profiles[AUTH_MAX_PROFILES][AUTH_PROFILE_NAME_MAX + 1];
	size_t nprofiles;
};

enum auth_result { AUTH_OK, AUTH_MISSING, AUTH_INVALID, AUTH_DB_ERROR };

#define AUTH_CACHE_ENTRIES 64
#define AUTH_CACHE_TTL_MS 1000
#define AUTH_GEN_FILE "sandbox-api.keygen"

/* The generation file: AUTH_GEN_FILE beside cfg->fcgi_socket. -1 if too long. */
int auth_gen_path(const struct cfg *cfg, char *buf, size_t n);
/* API master: creates (0600, never through a link) or reuses the generation file and
 * maps it shared; from then on auth_identify caches. 0, or -1 with errno set. */
int auth_cache_init(const struct cfg *cfg);
/* sandboxctl, after a key change is committed: bumps this host's generation.
 * 1 bumped, 0 no API instance on this host (no file), -1 error (errno set). */
int auth_gen_bump(const struct cfg *cfg);
/* Drops every cached identity of this process. */
void auth_cache_clear(void);

/* Checks the token's shape (cheap, no DB) and looks up its unrevoked key (through the
 * cache when auth_cache_init ran). */
enum auth_result auth_identify(struct db *db, const char *authorization, struct identity *id);
/* The identity of key key_id as the key is now (always read from the database, never
 * the cache): AUTH_INVALID when it is unknown or revoked. For a call made on behalf of
 * an object a key created (an E2B sandbox's envd calls, app/e2b/eauth.c). */
enum auth_result auth_identify_key(struct db *db, const char *key_id, struct identity *id);
/* Shape of a token: prefix + 64 lower-case hex. */
int auth_token_well_formed(const char *t);
/* api_keys.max_limits_json -> out (-1 where the key sets no maximum). */
void auth_parse_max_limits(const char *json, long long out[LIM_COUNT]);
/* api_keys.profiles_json (a JSON array of names, NULL: none listed) -> id->profiles;
 * a key that lists none, or whose list cannot be read, may use "default" only. */
void auth_parse_profiles(const char *json, struct identity *id);
/* A profile name: [a-z0-9][a-z0-9_-]*, at most AUTH_PROFILE_NAME_MAX bytes (the runner
 * looks for runner_profiles_dir/NAME.profile; sandbox-runner/launch/profile.c has the same
 * rule). */
static inline int auth_profile_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= AUTH_PROFILE_NAME_MAX && s[0] != '-' && s[0] != '_' &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}
/* sha256 of the token, the only form ever stored. */
void auth_token_hash(const char *token, unsigned char out[32]);

/* The caller's scope as statement parameters appended at p[n] (at most 4): namespace,
 * tenant and, unless who is a tenant admin, subject type and id, in that order; the
 * SQL beside them (" AND x.identity_namespace = ? AND x.tenant_id = ?" [" AND
 * x.subject_type = ? AND x.subject_id = ?"]) names its table. Returns the new n. */
size_t auth_scope_params(const struct identity *who, struct db_param *p, size_t n);

#endif
