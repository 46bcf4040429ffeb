#include "auth.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "http_util.h"
#include "sha256.h"

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

enum auth_result auth_identify(struct db *db, const char *authorization, struct identity *id)
{
	const char *token = http_bearer(authorization);
	unsigned char hash[32];
	struct db_res *res;

	memset(id, 0, sizeof *id);
	if (token == NULL)
		return authorization ? AUTH_INVALID : AUTH_MISSING;
	if (!auth_token_well_formed(token))
		return AUTH_INVALID;
	auth_token_hash(token, hash);
	res = db_query_p(db,
			 "SELECT id, identity_namespace, tenant_id, subject_type, subject_id,"
			 " actor_type, actor_id, tenant_admin, allow_network, max_queued,"
			 " max_limits_json, max_stored_mb, max_running, profiles_json"
			 " FROM api_keys WHERE token_hash = ? AND revoked_at IS NULL",
			 db_blob(hash, sizeof hash));
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
