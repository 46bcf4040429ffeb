/* Bearer token -> verified identity (see auth.h). */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_util.h"
#include "sha256.h"
#include "util.h"

int auth_token_well_formed(const char *t)
{
	size_t plen = strlen(TOKEN_PREFIX);

	if (strncmp(t, TOKEN_PREFIX, plen) != 0 || strlen(t) != plen + TOKEN_HEX)
		return 0;
	for (t += plen; *t; t++)
		if (!((*t >= '0' && *t <= '9') || (*t >= 'a' && *t <= 'f')))
			return 0;
	return 1;
}

void auth_token_hash(const char *token, unsigned char out[32])
{
	sha256_buf(token, strlen(token), out);
}

void auth_parse_max_limits(const char *json, long long out[LIM_COUNT])
{
	json_t *o = json ? json_loads(json, 0, NULL) : NULL;
	const char *k;
	json_t *v;

	for (int i = 0; i < LIM_COUNT; i++)
		out[i] = -1;
	if (!json_is_object(o)) {
		json_decref(o);
		return;
	}
	json_object_foreach(o, k, v) {
		int id = limit_lookup(k);
		if (id >= 0 && json_is_integer(v) && json_integer_value(v) >= 0)
			out[id] = json_integer_value(v);
	}
	json_decref(o);
}

void auth_parse_profiles(const char *json, struct identity *id)
{
	json_t *a = json ? json_loads(json, 0, NULL) : NULL, *v;
	size_t i;

	id->nprofiles = 0;
	json_array_foreach(a, i, v) {
		const char *name = json_string_value(v);

		if (name && auth_profile_name_ok(name) && id->nprofiles < AUTH_MAX_PROFILES)
			snprintf(id->profiles[id->nprofiles++], sizeof id->profiles[0], "%s", name);
	}
	json_decref(a);
	if (id->nprofiles == 0)
		snprintf(id->profiles[id->nprofiles++], sizeof id->profiles[0], "%s",
			 AUTH_DEFAULT_PROFILE);
}

static void copy(char *dst, size_t n, const char *src, int *present)
{
	if (present)
		*present = src != NULL;
	snprintf(dst, n, "%s", src ? src : "");
}

#define KEY_SELECT                                                                     \
	"SELECT id, identity_namespace, tenant_id, subject_type, subject_id, actor_type,"  \
	" actor_id, tenant_admin, allow_network, max_queued, max_limits_json, max_stored_mb," \
	" max_running, profiles_json FROM api_keys"

/* The identity of an unrevoked key row: where (" WHERE col = ?") with its parameter. */
static enum auth_result lookup_where(struct db *db, const char *where, struct db_param p,
				     struct identity *id)
{
	struct db_res *res;

	res = db_query_p(db, where, p);
	if (res == NULL)
		return AUTH_DB_ERROR;
	if (db_res_rows(res) != 1) {
		db_res_free(res);
		return AUTH_INVALID;
	}
#define COPY(field, col, present) \
	copy(id->field, sizeof id->field, db_res_s(res, 0, col), present)
	COPY(key_id, "id", NULL);
	COPY(ns, "identity_namespace", NULL);
	COPY(tenant, "tenant_id", NULL);
	COPY(subject_type, "subject_type", NULL);
	COPY(subject_id, "subject_id", NULL);
	COPY(actor_type, "actor_type", &id->has_actor_type);
	COPY(actor_id, "actor_id", &id->has_actor_id);
#undef COPY
	id->tenant_admin = db_res_i(res, 0, "tenant_admin", 0) != 0;
	id->allow_network = db_res_i(res, 0, "allow_network", 0) != 0;
	id->max_queued = db_res_i(res, 0, "max_queued", -1);
	auth_parse_max_limits(db_res_s(res, 0, "max_limits_json"), id->max_limits);
	id->max_stored_mb = db_res_i(res, 0, "max_stored_mb", -1);
	id->max_running = db_res_i(res, 0, "max_running", -1);
	auth_parse_profiles(db_res_s(res, 0, "profiles_json"), id);
	db_res_free(res);
	return AUTH_OK;
}

/* The key row of an unrevoked token hash. */
static enum auth_result lookup(struct db *db, const unsigned char hash[32], struct identity *id)
{
	return lookup_where(db, KEY_SELECT " WHERE token_hash = ? AND revoked_at IS NULL",
			    db_blob(hash, 32), id);
}

enum auth_result auth_identify_key(struct db *db, const char *key_id, struct identity *id)
{
	memset(id, 0, sizeof *id);
	return lookup_where(db, KEY_SELECT " WHERE id = ? AND revoked_at IS NULL", db_str(key_id),
			    id);
}

/* ---- the per-worker key cache (see auth.h) ---- */

struct cached {
	unsigned char hash[32];
	uint64_t gen;   /* the generation read before the row was fetched */
	double at;      /* util_mono_ms() of the fetch; 0: empty */
	struct identity id;
};

static const uint64_t *gen_map; /* NULL: no cache (sandboxctl, the runner) */
static struct cached *cache;
static unsigned next_victim;

int auth_gen_path(const struct cfg *cfg, char *buf, size_t n)
{
	const char *slash = strrchr(cfg->fcgi_socket, '/');
	int dir = slash ? (int)(slash - cfg->fcgi_socket) : 1;
	const char *d = slash ? cfg->fcgi_socket : ".";
	int k = snprintf(buf, n, "%.*s/%s", dir, d, AUTH_GEN_FILE);

	if (k < 0 || (size_t)k >= n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Maps the generation file (a regular file owned by us or root, never a link). */
static uint64_t *gen_open(const struct cfg *cfg, int create)
{
	char path[CFG_PATH_MAX + 32];
	struct stat st;
	void *p;
	int fd, e;

	if (auth_gen_path(cfg, path, sizeof path) < 0)
		return NULL;
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0)
		goto fail;
	/* The API trusts only its own file: whoever can write it could revive a revoked
	 * key (by setting an old generation) for up to the TTL. */
	if (!S_ISREG(st.st_mode) ||
	    (create && ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 0022)))) {
		errno = EPERM;
		goto fail;
	}
	if (st.st_size < (off_t)sizeof(uint64_t) && ftruncate(fd, sizeof(uint64_t)) < 0)
		goto fail;
	p = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	close(fd);
	return p;
fail:
	e = errno;
	close(fd);
	errno = e;
	return NULL;
}

int auth_cache_init(const struct cfg *cfg)
{
	uint64_t *g = gen_open(cfg, 1);

	if (g == NULL)
		return -1;
	cache = calloc(AUTH_CACHE_ENTRIES, sizeof *cache);
	if (cache == NULL) {
		munmap(g, sizeof *g);
		errno = ENOMEM;
		return -1;
	}
	/* a fresh start: whatever a previous instance cached is gone with it */
	__atomic_add_fetch(g, 1, __ATOMIC_SEQ_CST);
	gen_map = g;
	return 0;
}

int auth_gen_bump(const struct cfg *cfg)
{
	uint64_t *g = gen_open(cfg, 0);

	if (g == NULL)
		return errno == ENOENT ? 0 : -1;
	__atomic_add_fetch(g, 1, __ATOMIC_SEQ_CST);
	munmap(g, sizeof *g);
	return 1;
}

void auth_cache_clear(void)
{
	if (cache)
		memset(cache, 0, AUTH_CACHE_ENTRIES * sizeof *cache);
}

static struct cached *cache_find(const unsigned char hash[32], uint64_t gen, double now)
{
	for (int i = 0; i < AUTH_CACHE_ENTRIES; i++) {
		struct cached *c = &cache[i];

		if (c->at > 0 && memcmp(c->hash, hash, 32) == 0) {
			if (c->gen == gen && now - c->at < AUTH_CACHE_TTL_MS)
				return c;
			c->at = 0; /* stale: fetched again below */
			return NULL;
		}
	}
	return NULL;
}

/* A free slot, else round robin (entries live at most the TTL anyway). */
static void cache_put(const unsigned char hash[32], uint64_t gen, double now,
		      const struct identity *id)
{
	struct cached *c = NULL;

	for (int i = 0; i < AUTH_CACHE_ENTRIES && c == NULL; i++)
		if (cache[i].at <= 0 || now - cache[i].at >= AUTH_CACHE_TTL_MS)
			c = &cache[i];
	if (c == NULL)
		c = &cache[next_victim++ % AUTH_CACHE_ENTRIES];
	memcpy(c->hash, hash, 32);
	c->gen = gen;
	c->at = now;
	c->id = *id;
}

enum auth_result auth_identify(struct db *db, const char *authorization, struct identity *id)
{
	const char *token = http_bearer(authorization);
	unsigned char hash[32];
	enum auth_result rc;
	struct cached *c;
	uint64_t gen = 0;
	double now = 0;

	memset(id, 0, sizeof *id);
	if (token == NULL)
		return authorization ? AUTH_INVALID : AUTH_MISSING;
	if (!auth_token_well_formed(token))
		return AUTH_INVALID;
	auth_token_hash(token, hash);
	if (gen_map == NULL)
		return lookup(db, hash, id);
	/* The generation is read before the row: a revocation committed after this
	 * read bumps it, so the entry stored below is never used again. */
	gen = __atomic_load_n(gen_map, __ATOMIC_ACQUIRE);
	now = util_mono_ms();
	if ((c = cache_find(hash, gen, now)) != NULL) {
		*id = c->id;
		return AUTH_OK;
	}
	rc = lookup(db, hash, id);
	if (rc == AUTH_OK)
		cache_put(hash, gen, now, id);
	return rc;
}

size_t auth_scope_params(const struct identity *who, struct db_param *p, size_t n)
{
	p[n++] = db_str(who->ns);
	p[n++] = db_str(who->tenant);
	if (!who->tenant_admin) {
		p[n++] = db_str(who->subject_type);
		p[n++] = db_str(who->subject_id);
	}
	return n;
}
