/* `sandboxctl keys create|list|revoke`: the only place tokens are made. A token is
 * shown once, at creation; the database keeps its sha256 only. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "joblimits.h"
#include "ctl.h"
#include "util.h"

struct key_opts {
	const char *ns, *tenant, *stype, *sid, *atype, *aid;
	int tenant_admin, allow_network, json;
	long long max_queued;
	json_t *max_limits; /* {"memory_mb": 128, ...} */
};

/* --max-limit NAME=VALUE: a known limit, at least its floor. */
static int add_max_limit(struct key_opts *o, const char *arg)
{
	char name[64];
	const char *eq = strchr(arg, '=');
	long long v;
	int id;

	if (eq == NULL || (size_t)(eq - arg) >= sizeof name) {
		fprintf(stderr, "sandboxctl: --max-limit takes NAME=VALUE\n");
		return -1;
	}
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	id = limit_lookup(name);
	if (id < 0) {
		fprintf(stderr, "sandboxctl: --max-limit: unknown limit '%s'\n", name);
		return -1;
	}
	if (util_parse_ll(eq + 1, limit_specs[id].min, limit_specs[id].ceiling, &v) < 0) {
		fprintf(stderr, "sandboxctl: --max-limit %s must be an integer from %lld to %lld\n",
			name, limit_specs[id].min, limit_specs[id].ceiling);
		return -1;
	}
	if (o->max_limits == NULL)
		o->max_limits = json_object();
	json_object_set_new(o->max_limits, name, json_integer(v));
	return 0;
}

static int field_ok(const char *what, const char *v, size_t max, int required)
{
	if (v == NULL && !required)
		return 1;
	if (v == NULL || *v == '\0') {
		fprintf(stderr, "sandboxctl: keys create: %s must not be empty\n", what);
		return 0;
	}
	if (strlen(v) > max || !util_utf8_valid((const unsigned char *)v, strlen(v))) {
		fprintf(stderr, "sandboxctl: keys create: %s must be UTF-8 of at most %zu bytes\n",
			what, max);
		return 0;
	}
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			fprintf(stderr, "sandboxctl: keys create: %s has a control character\n",
				what);
			return 0;
		}
	return 1;
}

static int parse_create(int argc, char **argv, struct key_opts *o)
{
	static const struct option opts[] = {
		{ "namespace", required_argument, NULL, 'n' },
		{ "tenant", required_argument, NULL, 't' },
		{ "subject-type", required_argument, NULL, 's' },
		{ "subject-id", required_argument, NULL, 'i' },
		{ "actor-type", required_argument, NULL, 'a' },
		{ "actor-id", required_argument, NULL, 'b' },
		{ "tenant-admin", no_argument, NULL, 'T' },
		{ "allow-network", no_argument, NULL, 'N' },
		{ "max-queued", required_argument, NULL, 'q' },
		{ "max-limit", required_argument, NULL, 'L' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	memset(o, 0, sizeof *o);
	o->max_queued = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': o->ns = optarg; break;
		case 't': o->tenant = optarg; break;
		case 's': o->stype = optarg; break;
		case 'i': o->sid = optarg; break;
		case 'a': o->atype = optarg; break;
		case 'b': o->aid = optarg; break;
		case 'T': o->tenant_admin = 1; break;
		case 'N': o->allow_network = 1; break;
		case 'j': o->json = 1; break;
		case 'L':
			if (add_max_limit(o, optarg) < 0)
				return -1;
			break;
		case 'q':
			if (util_parse_ll(optarg, 1, 1000000, &o->max_queued) < 0) {
				fprintf(stderr, "sandboxctl: --max-queued must be 1..1000000\n");
				return -1;
			}
			break;
		default: return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "sandboxctl: keys create: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!field_ok("--namespace", o->ns, 128, 1) || !field_ok("--tenant", o->tenant, 128, 1) ||
	    !field_ok("--subject-type", o->stype, 64, 1) ||
	    !field_ok("--subject-id", o->sid, 128, 1) ||
	    !field_ok("--actor-type", o->atype, 64, 0) || !field_ok("--actor-id", o->aid, 128, 0))
		return -1;
	return 0;
}

static int keys_create(struct db *db, int argc, char **argv)
{
	struct key_opts o;
	unsigned char raw[TOKEN_HEX / 2], hash[32];
	char token[sizeof TOKEN_PREFIX + TOKEN_HEX], hex[TOKEN_HEX + 1], id[UUID_STR_LEN];

	if (parse_create(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: sandboxctl keys create --namespace N --tenant T "
				"--subject-type S --subject-id I [--actor-type A --actor-id B] "
				"[--tenant-admin] [--allow-network] [--max-queued N] "
				"[--max-limit NAME=VALUE ...] [--json]\n");
		json_decref(o.max_limits);
		return 2;
	}
	if (util_random(raw, sizeof raw) < 0 || util_uuid7(id) < 0) {
		perror("sandboxctl: getrandom");
		return 1;
	}
	util_hex(raw, sizeof raw, hex);
	snprintf(token, sizeof token, "%s%s", TOKEN_PREFIX, hex);
	auth_token_hash(token, hash);
	if (db_exec(db,
		    "INSERT INTO api_keys (id, token_hash, identity_namespace, tenant_id,"
		    " subject_type, subject_id, actor_type, actor_id, tenant_admin, allow_network,"
		    " max_queued) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		    "sbssssssiis", id, hash, sizeof hash, o.ns, o.tenant, o.stype, o.sid, o.atype,
		    o.aid, (long long)o.tenant_admin, (long long)o.allow_network,
		    (const char *)NULL) < 0) {
		fprintf(stderr, "sandboxctl: keys create: %s\n", db_error(db));
		return 1;
	}
	/* max_queued goes in separately: the binder has no nullable integer. */
	if (o.max_queued > 0 &&
	    db_exec(db, "UPDATE api_keys SET max_queued = ? WHERE id = ?", "is", o.max_queued,
		    id) < 0) {
		fprintf(stderr, "sandboxctl: keys create: %s\n", db_error(db));
		return 1;
	}
	if (o.max_limits) {
		char *m = json_dumps(o.max_limits, JSON_COMPACT | JSON_SORT_KEYS);
		long long n = m ? db_exec(db, "UPDATE api_keys SET max_limits_json = ? WHERE id = ?",
					  "ss", m, id)
				: -1;
		free(m);
		json_decref(o.max_limits);
		if (n < 0) {
			fprintf(stderr, "sandboxctl: keys create: %s\n", db_error(db));
			return 1;
		}
	}
	if (o.json)
		printf("{\"id\":\"%s\",\"token\":\"%s\"}\n", id, token);
	else
		printf("id:    %s\ntoken: %s\n(the token is shown only now; store it safely)\n", id,
		       token);
	explicit_bzero(token, sizeof token);
	explicit_bzero(hex, sizeof hex);
	return 0;
}

static int keys_list(struct db *db, int json)
{
	struct db_res *r = db_query(db,
				    "SELECT id, identity_namespace, tenant_id, subject_type,"
				    " subject_id, actor_type, actor_id, tenant_admin, allow_network,"
				    " max_queued, DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%sZ'),"
				    " DATE_FORMAT(revoked_at, '%Y-%m-%dT%H:%i:%sZ'), max_limits_json"
				    " FROM api_keys ORDER BY created_at, id",
				    "");
	json_t *arr;

	if (r == NULL) {
		fprintf(stderr, "sandboxctl: keys list: %s\n", db_error(db));
		return 1;
	}
	arr = json_array();
	for (size_t i = 0; i < db_res_rows(r); i++) {
#define S(c) (db_res_str(r, i, c) ? json_string(db_res_str(r, i, c)) : json_null())
		json_t *k = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:o, s:o, s:o}",
				      "id", S(0), "identity_namespace", S(1), "tenant_id", S(2),
				      "subject_type", S(3), "subject_id", S(4), "actor_type", S(5),
				      "actor_id", S(6), "tenant_admin",
				      (int)db_res_int(r, i, 7, 0), "allow_network",
				      (int)db_res_int(r, i, 8, 0), "max_queued",
				      db_res_str(r, i, 9) ? json_integer(db_res_int(r, i, 9, 0))
							  : json_null(),
				      "created_at", S(10), "revoked_at", S(11));
#undef S
		json_object_set_new(k, "max_limits",
				    db_res_str(r, i, 12) ? json_loads(db_res_str(r, i, 12), 0, NULL)
							 : json_null());
		if (json)
			json_array_append_new(arr, k);
		else {
			printf("%s %s/%s/%s:%s%s%s\n", json_string_value(json_object_get(k, "id")),
			       db_res_str(r, i, 1), db_res_str(r, i, 2), db_res_str(r, i, 3),
			       db_res_str(r, i, 4), db_res_int(r, i, 7, 0) ? " tenant-admin" : "",
			       db_res_str(r, i, 11) ? " REVOKED" : "");
			json_decref(k);
		}
	}
	if (json) {
		char *s = json_dumps(arr, JSON_COMPACT);
		printf("%s\n", s ? s : "[]");
		free(s);
	}
	json_decref(arr);
	db_res_free(r);
	return 0;
}

static int keys_revoke(struct db *db, const char *id)
{
	long long n = db_exec(db,
			      "UPDATE api_keys SET revoked_at = CURRENT_TIMESTAMP(3)"
			      " WHERE id = ? AND revoked_at IS NULL",
			      "s", id);

	if (n < 0) {
		fprintf(stderr, "sandboxctl: keys revoke: %s\n", db_error(db));
		return 1;
	}
	if (n == 0) {
		fprintf(stderr, "sandboxctl: keys revoke: no active key %s\n", id);
		return 1;
	}
	printf("revoked %s\n", id);
	return 0;
}

int ctl_keys(struct db *db, int argc, char **argv)
{
	if (argc >= 1 && strcmp(argv[0], "create") == 0)
		return keys_create(db, argc, argv);
	if (argc >= 1 && strcmp(argv[0], "list") == 0)
		return keys_list(db, argc >= 2 && strcmp(argv[1], "--json") == 0);
	if (argc == 2 && strcmp(argv[0], "revoke") == 0)
		return keys_revoke(db, argv[1]);
	fprintf(stderr, "usage: sandboxctl keys create ... | list [--json] | revoke ID\n");
	return 2;
}
