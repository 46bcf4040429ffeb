/* `sandboxctl keys create|list|revoke|webhook-secret`: the only place tokens and
 * webhook secrets are made. A token is shown once, at creation; the database keeps
 * its sha256 only. A webhook secret is shown once too, but stored as is (the runner
 * signs with it). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "jobdata.h"
#include "joblimits.h"
#include "sreq.h"
#include "ctl.h"
#include "util.h"

struct key_opts {
	const char *ns, *tenant, *stype, *sid, *atype, *aid;
	int tenant_admin, allow_network, json;
	long long max_queued, max_stored_mb, max_running, max_sessions;
	json_t *max_limits; /* {"memory_mb": 128, ...} */
	json_t *profiles;   /* ["default", "python-data"], NULL: only "default" */
};

/* --profile NAME (repeatable): the sandbox profiles the key's jobs may name. Only
 * the name's form is checked: the runners' runner_profiles_dir decides which exist. */
static int add_profile(struct key_opts *o, const char *name)
{
	size_t i;
	json_t *v;

	if (!auth_profile_name_ok(name)) {
		fprintf(stderr, "sandboxctl: --profile '%s': a profile name is 1 to %d of "
				"[a-z0-9_-], starting with a letter or digit\n",
			name, AUTH_PROFILE_NAME_MAX);
		return -1;
	}
	if (o->profiles == NULL)
		o->profiles = json_array();
	json_array_foreach(o->profiles, i, v)
		if (strcmp(json_string_value(v), name) == 0)
			return 0;
	if (json_array_size(o->profiles) == AUTH_MAX_PROFILES) {
		fprintf(stderr, "sandboxctl: at most %d --profile options\n", AUTH_MAX_PROFILES);
		return -1;
	}
	return json_array_append_new(o->profiles, json_string(name));
}

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
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)) {
			fprintf(stderr, "sandboxctl: keys create: %s has a control character\n",
				what);
			return 0;
		}
	if (util_edge_space(v)) {
		/* The reference SDK strips white space; we refuse: an identity is compared
		 * byte for byte and must be given exactly. */
		fprintf(stderr,
			"sandboxctl: keys create: %s has leading or trailing white space"
			" (identities are compared byte for byte; give the value without it)\n",
			what);
		return 0;
	}
	return 1;
}

/* A --max-* count: 1 to max into *out, else the message and -1. */
static int opt_count(const char *arg, const char *name, long long max, long long *out)
{
	if (util_parse_ll(arg, 1, max, out) < 0) {
		fprintf(stderr, "sandboxctl: %s must be 1..%lld\n", name, max);
		return -1;
	}
	return 0;
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
		{ "max-stored-mb", required_argument, NULL, 'S' },
		{ "max-running", required_argument, NULL, 'R' },
		{ "max-sessions", required_argument, NULL, 'M' },
		{ "profile", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	memset(o, 0, sizeof *o);
	o->max_queued = o->max_stored_mb = o->max_running = o->max_sessions = -1;
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
		case 'P':
			if (add_profile(o, optarg) < 0)
				return -1;
			break;
		case 'S':
			if (opt_count(optarg, "--max-stored-mb", 100000000, &o->max_stored_mb) < 0)
				return -1;
			break;
		case 'R':
			if (opt_count(optarg, "--max-running", 1000000, &o->max_running) < 0)
				return -1;
			break;
		case 'M':
			if (opt_count(optarg, "--max-sessions", 100000, &o->max_sessions) < 0)
				return -1;
			break;
		case 'q':
			if (opt_count(optarg, "--max-queued", 1000000, &o->max_queued) < 0)
				return -1;
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

/* The key and all its quotas in one transaction: a key never exists without the
 * limits it was created with. The body of that transaction (db_tx). */
struct create_key_tx {
	const struct key_opts *o;
	const char *id;
	const unsigned char *hash;
	const char *whsec;
	const char *limits;   /* max_limits_json text, or NULL */
	const char *profiles; /* profiles_json text, or NULL */
};

static enum db_tx_end create_key_body(struct db *db, void *arg)
{
	const struct create_key_tx *t = arg;
	const struct key_opts *o = t->o;

	/* A quota not given is SQL NULL: the config's default applies. */
	return db_exec_p(db,
			 "INSERT INTO api_keys (id, token_hash, identity_namespace,"
			 " tenant_id, subject_type, subject_id, actor_type, actor_id,"
			 " tenant_admin, allow_network, max_queued, max_limits_json,"
			 " max_stored_mb, max_running, profiles_json, max_sessions,"
			 " webhook_secret)"
			 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			 db_str(t->id), db_blob(t->hash, 32), db_str(o->ns), db_str(o->tenant),
			 db_str(o->stype), db_str(o->sid), db_str(o->atype), db_str(o->aid),
			 db_i64(o->tenant_admin), db_i64(o->allow_network),
			 db_null_i64(o->max_queued, o->max_queued <= 0), db_str(t->limits),
			 db_null_i64(o->max_stored_mb, o->max_stored_mb <= 0),
			 db_null_i64(o->max_running, o->max_running <= 0), db_str(t->profiles),
			 db_null_i64(o->max_sessions, o->max_sessions <= 0),
			 db_str(t->whsec)) < 0
		       ? DB_TX_ERROR
		       : DB_TX_COMMIT;
}

static int create_row(struct db *db, const struct key_opts *o, const char *id,
		      const unsigned char hash[32], const char *whsec)
{
	char *m = o->max_limits ? json_dumps(o->max_limits, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	char *p = o->profiles ? json_dumps(o->profiles, JSON_COMPACT) : NULL;
	struct create_key_tx t = { o, id, hash, whsec, m, p };
	int rc = -1;

	if ((o->max_limits == NULL || m != NULL) && (o->profiles == NULL || p != NULL))
		rc = db_tx(db, create_key_body, &t);
	free(m);
	free(p);
	return rc;
}

static int keys_create(struct db *db, int argc, char **argv)
{
	struct key_opts o;
	unsigned char raw[TOKEN_HEX / 2], hash[32];
	char token[sizeof TOKEN_PREFIX + TOKEN_HEX], hex[TOKEN_HEX + 1], id[UUID_STR_LEN];
	/* Signs the webhooks of the key's jobs (sandbox-runner/deliver/callback.c). The runner
	 * needs it to sign, so it is stored as is; it is shown here once. */
	unsigned char wraw[32];
	char whsec[2 * sizeof wraw + 1];

	if (parse_create(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: sandboxctl keys create --namespace N --tenant T "
				"--subject-type S --subject-id I [--actor-type A --actor-id B] "
				"[--tenant-admin] [--allow-network] [--max-queued N] "
				"[--max-stored-mb N] [--max-running N] [--max-sessions N] "
				"[--max-limit NAME=VALUE ...] [--profile NAME ...] [--json]\n");
		json_decref(o.max_limits);
		json_decref(o.profiles);
		return 2;
	}
	if (util_random(raw, sizeof raw) < 0 || util_random(wraw, sizeof wraw) < 0 ||
	    util_uuid7(id) < 0) {
		perror("sandboxctl: getrandom");
		return 1;
	}
	util_hex(raw, sizeof raw, hex);
	snprintf(token, sizeof token, "%s%s", TOKEN_PREFIX, hex);
	auth_token_hash(token, hash);
	util_hex(wraw, sizeof wraw, whsec);
	explicit_bzero(wraw, sizeof wraw);
	if (create_row(db, &o, id, hash, whsec) < 0) {
		fprintf(stderr, "sandboxctl: keys create: %s\n", db_error(db));
		db_rollback(db);
		json_decref(o.max_limits);
		json_decref(o.profiles);
		return 1;
	}
	json_decref(o.max_limits);
	json_decref(o.profiles);
	if (o.json)
		printf("{\"id\":\"%s\",\"token\":\"%s\",\"webhook_secret\":\"%s\"}\n", id, token,
		       whsec);
	else
		printf("id:    %s\ntoken: %s\nwebhook_secret: %s\n(the token and the webhook secret"
		       " are shown only now; store them safely)\n",
		       id, token, whsec);
	explicit_bzero(token, sizeof token);
	explicit_bzero(whsec, sizeof whsec);
	explicit_bzero(hex, sizeof hex);
	return 0;
}

static json_t *text_or_null(const struct db_res *r, size_t row, const char *col)
{
	const char *v = db_res_s(r, row, col);

	return v ? json_string(v) : json_null();
}

static json_t *int_or_null(const struct db_res *r, size_t row, const char *col)
{
	return db_res_s(r, row, col) ? json_integer(db_res_i(r, row, col, 0)) : json_null();
}

/* One row of keys_list as its JSON object (members in the listed order). */
static json_t *key_object(const struct db_res *r, size_t i)
{
	static const char *const text[] = { "id",         "identity_namespace", "tenant_id",
					    "subject_type", "subject_id",        "actor_type",
					    "actor_id" };
	const char *limits = db_res_s(r, i, "max_limits_json");
	struct identity who; /* its profiles, read as the API reads them */
	json_t *k = json_object(), *profiles = json_array();

	for (size_t c = 0; c < sizeof text / sizeof text[0]; c++)
		json_object_set_new(k, text[c], text_or_null(r, i, text[c]));
	json_object_set_new(k, "tenant_admin", json_boolean(db_res_i(r, i, "tenant_admin", 0)));
	json_object_set_new(k, "allow_network", json_boolean(db_res_i(r, i, "allow_network", 0)));
	json_object_set_new(k, "max_queued", int_or_null(r, i, "max_queued"));
	json_object_set_new(k, "created_at", text_or_null(r, i, "created_at"));
	json_object_set_new(k, "revoked_at", text_or_null(r, i, "revoked_at"));
	json_object_set_new(k, "max_stored_mb", int_or_null(r, i, "max_stored_mb"));
	json_object_set_new(k, "max_running", int_or_null(r, i, "max_running"));
	json_object_set_new(k, "max_sessions", int_or_null(r, i, "max_sessions"));
	json_object_set_new(k, "stored_bytes", json_integer(db_res_i(r, i, "stored_bytes", 0)));
	json_object_set_new(k, "max_limits", limits ? json_loads(limits, 0, NULL) : json_null());
	/* whether deliveries can be signed (never the secret itself) */
	json_object_set_new(k, "webhook_secret_set", json_boolean(db_res_i(r, i, "whsec_set", 0)));
	auth_parse_profiles(db_res_s(r, i, "profiles_json"), &who);
	for (size_t p = 0; p < who.nprofiles; p++)
		json_array_append_new(profiles, json_string(who.profiles[p]));
	json_object_set_new(k, "profiles", profiles);
	return k;
}

static int keys_list(struct db *db, int json)
{
	/* ORDER BY names the table's column: the alias created_at is the formatted text. */
	struct db_res *r = db_querya(db,
				     "SELECT id, identity_namespace, tenant_id, subject_type,"
				     " subject_id, actor_type, actor_id, tenant_admin, allow_network,"
				     " max_queued, DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%sZ')"
				     " AS created_at, DATE_FORMAT(revoked_at, '%Y-%m-%dT%H:%i:%sZ')"
				     " AS revoked_at, max_limits_json, max_stored_mb, max_running, max_sessions,"
				     " profiles_json, webhook_secret IS NOT NULL AS whsec_set,"
				     " (SELECT COALESCE(SUM(s.bytes), 0) FROM key_storage s"
				     " WHERE s.key_id = api_keys.id) AS stored_bytes"
				     " FROM api_keys ORDER BY api_keys.created_at, api_keys.id",
				     NULL, 0);
	json_t *arr;

	if (r == NULL) {
		fprintf(stderr, "sandboxctl: keys list: %s\n", db_error(db));
		return 1;
	}
	arr = json_array();
	for (size_t i = 0; i < db_res_rows(r); i++) {
		json_t *k = key_object(r, i);

		if (json)
			json_array_append_new(arr, k);
		else {
			printf("%s %s/%s/%s:%s%s%s\n", json_string_value(json_object_get(k, "id")),
			       db_res_s(r, i, "identity_namespace"), db_res_s(r, i, "tenant_id"),
			       db_res_s(r, i, "subject_type"), db_res_s(r, i, "subject_id"),
			       db_res_i(r, i, "tenant_admin", 0) ? " tenant-admin" : "",
			       db_res_s(r, i, "revoked_at") ? " REVOKED" : "");
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

/* A session no runner host has claimed is closed here, as the API's close does (the
 * dispatcher's claim is conditional on runner_id IS NULL: one of the two wins); its
 * files go, its queued commands and pending requests end with it. 1 closed, 0 not
 * such a session, -1 error. */
static int close_unclaimed(struct db *db, const char *sid)
{
	long long n = db_exec_p(db,
				"UPDATE sessions SET status = 'closed', close_requested = 1,"
				" ended_at = CURRENT_TIMESTAMP(3), end_reason = 'closed: its API key"
				" was revoked', cleanup_status = 'not_started'"
				" WHERE id = ? AND status = 'starting' AND runner_id IS NULL AND"
				" runner_host IS NULL",
				db_str(sid));

	if (n != 1)
		return n < 0 ? -1 : 0;
	/* its inputs are erased and released only by the UPDATE that closed it */
	if (sreq_end_unstarted(db, sid) < 0)
		return -1;
	return 1;
}

/* The key's live sessions end: unclaimed ones are closed here, the others get
 * close_requested (their supervisor reads it with its heartbeat) and, when ready, one
 * `close` request, as POST /v1/sessions/{id}/close does. Inside the transaction. */
static int revoke_sessions(struct db *db, const char *key, long long *closed,
			   long long *closing)
{
	struct db_res *res = db_query_p(db,
					"SELECT id, status, close_requested FROM sessions"
					" WHERE key_id = ? AND status IN ('starting', 'ready')"
					" FOR UPDATE",
					db_str(key));
	int rc = 0;

	*closed = *closing = 0;
	if (res == NULL)
		return -1;
	for (size_t i = 0; i < db_res_rows(res) && rc == 0; i++) {
		const char *sid = db_res_s(res, i, "id");
		int asked = db_res_i(res, i, "close_requested", 0) != 0;
		int c = close_unclaimed(db, sid);

		if (c != 0) {
			rc = c < 0 ? -1 : 0;
			*closed += c > 0;
			continue;
		}
		(*closing)++;
		if (asked)
			continue;
		if (db_exec_p(db, "UPDATE sessions SET close_requested = 1 WHERE id = ?",
			      db_str(sid)) < 0 ||
		    (strcmp(db_res_s(res, i, "status"), "ready") == 0 &&
		     db_exec_p(db,
			       "INSERT INTO session_requests (session_id, kind, args_json)"
			       " VALUES (?, 'close', '{}')",
			       db_str(sid)) < 0))
			rc = -1;
	}
	db_res_free(res);
	return rc;
}

/* Revocation ends the key's work too (unless keep_jobs): its queued jobs are
 * cancelled at once, its running ones get cancel_requested (their runner kills them
 * within a second, as for an API cancel), its live sessions are closed or asked to
 * close (revoke_sessions). One transaction, whose body (db_tx) this is; rc: 1
 * revoked, 0 no active key of that id; the counts of what it did. */
struct revoke_tx {
	const char *id;
	int keep_jobs;
	int rc;
	long long queued, running, sclosed, sclosing;
};

/* Cancels the key's queued jobs (their bytes settled on the transaction's one shard
 * of the key: jd_add_stored). 0 or -1. */
static int cancel_queued(struct db *db, struct revoke_tx *t)
{
	struct db_res *res = db_query_p(db,
					"SELECT id FROM jobs WHERE key_id = ? AND state = 'queued'"
					" FOR UPDATE",
					db_str(t->id));

	if (res == NULL)
		return -1;
	for (size_t i = 0; i < db_res_rows(res); i++) {
		const char *job = db_res_s(res, i, "id");
		if (db_exec_p(db,
			      "UPDATE jobs SET state = 'cancelled', cancel_requested = 1,"
			      " finished_at = CURRENT_TIMESTAMP(3)"
			      " WHERE id = ? AND state = 'queued'",
			      db_str(job)) < 0 ||
		    db_exec_p(db,
			      "INSERT INTO job_results (job_id, diagnostics_json) VALUES (?, ?)",
			      db_str(job), db_str("[\"cancelled: its API key was revoked\"]")) < 0 ||
		    jd_settle(db, job, 0) < 0 ||
		    db_exec_p(db,
			      "INSERT INTO job_events (job_id, from_state, to_state, actor, detail)"
			      " VALUES (?, 'queued', 'cancelled', 'sandboxctl', 'key revoked')",
			      db_str(job)) < 0) {
			db_res_free(res);
			return -1;
		}
	}
	t->queued = (long long)db_res_rows(res);
	db_res_free(res);
	return 0;
}

static enum db_tx_end revoke_body(struct db *db, void *arg)
{
	struct revoke_tx *t = arg;
	long long n;

	t->rc = 0;
	t->queued = t->running = t->sclosed = t->sclosing = 0;
	n = db_exec_p(db,
		      "UPDATE api_keys SET revoked_at = CURRENT_TIMESTAMP(3)"
		      " WHERE id = ? AND revoked_at IS NULL",
		      db_str(t->id));
	if (n <= 0)
		return n < 0 ? DB_TX_ERROR : DB_TX_ROLLBACK;
	t->rc = 1;
	if (t->keep_jobs)
		return DB_TX_COMMIT;
	if (cancel_queued(db, t) < 0)
		return DB_TX_ERROR;
	n = db_exec_p(db,
		      "UPDATE jobs SET cancel_requested = 1 WHERE key_id = ? AND state = 'running'",
		      db_str(t->id));
	if (n < 0)
		return DB_TX_ERROR;
	t->running = n;
	if (revoke_sessions(db, t->id, &t->sclosed, &t->sclosing) < 0)
		return DB_TX_ERROR;
	return DB_TX_COMMIT;
}

/* Every API worker on this host drops its cached identities before we return
 * (app/http/auth.h); API hosts elsewhere refuse the key within AUTH_CACHE_TTL_MS. */
static void push_revocation(const struct cfg *cfg)
{
	char path[CFG_PATH_MAX + 32];

	if (auth_gen_bump(cfg) >= 0)
		return;
	if (auth_gen_path(cfg, path, sizeof path) < 0)
		snprintf(path, sizeof path, "%s", AUTH_GEN_FILE);
	fprintf(stderr,
		"sandboxctl: warning: cannot signal the API on this host (%s: %s): it refuses"
		" the key within %d ms\n",
		path, strerror(errno), AUTH_CACHE_TTL_MS);
}

/* The arguments `ID [flag]` of a command: the ID, *set whether flag was given; NULL
 * for anything else (the caller prints its usage). */
static const char *id_and_flag(int argc, char **argv, const char *flag, int *set)
{
	const char *id = NULL;

	*set = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], flag) == 0)
			*set = 1;
		else if (id == NULL && argv[i][0] != '-')
			id = argv[i];
		else
			return NULL;
	}
	return id;
}

static int keys_revoke(struct db *db, const struct cfg *cfg, int argc, char **argv)
{
	int keep;
	const char *id = id_and_flag(argc, argv, "--keep-jobs", &keep);
	struct revoke_tx t = { 0 };

	if (id == NULL) {
		fprintf(stderr, "usage: sandboxctl keys revoke ID [--keep-jobs]\n");
		return 2;
	}
	t.id = id;
	t.keep_jobs = keep;
	if (db_tx(db, revoke_body, &t) < 0) {
		fprintf(stderr, "sandboxctl: keys revoke: %s\n", db_error(db));
		return 1;
	}
	push_revocation(cfg); /* also when already revoked: a run cut short before */
	if (t.rc == 0) {
		fprintf(stderr, "sandboxctl: keys revoke: no active key %s\n", id);
		return 1;
	}
	if (keep)
		printf("revoked %s (its jobs and sessions were kept)\n", id);
	else
		printf("revoked %s: %lld queued jobs cancelled, %lld running jobs being killed,"
		       " %lld sessions closed, %lld sessions closing\n",
		       id, t.queued, t.running, t.sclosed, t.sclosing);
	return 0;
}

/* `keys webhook-secret ID [--json]`: a new webhook secret for an active key (keys made
 * before schema 007 have none; rotation). Shown once on stdout, never logged. Every
 * delivery attempt reads the key's secret when it is made: attempts already sent stay
 * signed with the old one, later attempts (retries of pending deliveries too) use the
 * new one. No grace period: a receiver verifies with the secret it was given. */
static int keys_webhook_secret(struct db *db, int argc, char **argv)
{
	unsigned char raw[32];
	char whsec[2 * sizeof raw + 1];
	int json;
	const char *id = id_and_flag(argc, argv, "--json", &json);
	long long n;

	if (id == NULL) {
		fprintf(stderr, "usage: sandboxctl keys webhook-secret ID [--json]\n");
		return 2;
	}
	if (util_random(raw, sizeof raw) < 0) {
		perror("sandboxctl: getrandom");
		return 1;
	}
	util_hex(raw, sizeof raw, whsec);
	explicit_bzero(raw, sizeof raw);
	n = db_exec_p(db,
		      "UPDATE api_keys SET webhook_secret = ? WHERE id = ? AND revoked_at IS NULL",
		      db_str(whsec), db_str(id));
	if (n != 1) {
		explicit_bzero(whsec, sizeof whsec);
		if (n < 0)
			fprintf(stderr, "sandboxctl: keys webhook-secret: %s\n", db_error(db));
		else
			fprintf(stderr, "sandboxctl: keys webhook-secret: no active key %s\n", id);
		return 1;
	}
	if (json)
		printf("{\"id\":\"%s\",\"webhook_secret\":\"%s\"}\n", id, whsec);
	else
		printf("id:    %s\nwebhook_secret: %s\n(shown only now; deliveries from now on are"
		       " signed with it, the old secret no longer verifies them)\n",
		       id, whsec);
	explicit_bzero(whsec, sizeof whsec);
	return 0;
}

int ctl_keys(struct db *db, const struct cfg *cfg, int argc, char **argv)
{
	if (argc >= 1 && strcmp(argv[0], "create") == 0)
		return keys_create(db, argc, argv);
	if (argc >= 1 && strcmp(argv[0], "list") == 0)
		return keys_list(db, argc >= 2 && strcmp(argv[1], "--json") == 0);
	if (argc >= 2 && strcmp(argv[0], "revoke") == 0)
		return keys_revoke(db, cfg, argc, argv);
	if (argc >= 1 && strcmp(argv[0], "webhook-secret") == 0)
		return keys_webhook_secret(db, argc, argv);
	fprintf(stderr, "usage: sandboxctl keys create ... | list [--json] | revoke ID [--keep-jobs]"
			" | webhook-secret ID [--json]\n");
	return 2;
}
