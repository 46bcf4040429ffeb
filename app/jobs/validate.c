/* A job submission's validation (validate.h), and the field vocabulary the session
 * API's validation shares with it: the error builder, optional fields, text or
 * base64, env, command, files, metadata, cwd, network, profile. */
#include "validate.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "netcheck.h"
#include "pathrules.h"
#include "runtimes.h"
#include "sha256.h"
#include "util.h"

#define MAX_ENV_BYTES 65536
#define MAX_ARGV 1024
#define MAX_COMMAND_BYTES 65536
#define MAX_META_KEY 64
#define MAX_META_KEYS 64

int val_fail(struct val_err *e, const char *field, const char *fmt, ...)
{
	va_list ap;

	e->status = 400;
	e->code = "invalid_request";
	snprintf(e->field, sizeof e->field, "%s", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof e->message, fmt, ap);
	va_end(ap);
	return -1;
}

int val_forbid(struct val_err *e, const char *field, const char *msg)
{
	val_fail(e, field, "%s", msg);
	e->status = 403;
	e->code = "forbidden";
	return -1;
}

const char *val_rel_path(const char *p, size_t max)
{
	return pr_rel_path(p, max);
}

int val_env_name(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

int val_reserved_meta_key(const char *k)
{
	static const char *const exact[] = { "identity",   "identity_namespace", "tenant_id",
					     "subject_type", "subject_id",       "actor_type",
					     "actor_id" };

	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (strcasecmp(k, exact[i]) == 0)
			return 1;
	return strncasecmp(k, "sandbox", 7) == 0 || strncasecmp(k, "x-sandbox", 9) == 0;
}

static int meta_key_ok(const char *k)
{
	size_t n = strlen(k);

	if (n == 0 || n > MAX_META_KEY)
		return 0;
	for (; *k; k++)
		if (!(isalnum((unsigned char)*k) || strchr("_.:-", *k)))
			return 0;
	return 1;
}

/* obj's key, or NULL when it is absent or null: an optional field not given. */
static json_t *given(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_null(v) ? NULL : v;
}

int val_opt_string(json_t *obj, const char *key, const char **out, struct val_err *e)
{
	json_t *v = given(obj, key);

	*out = NULL;
	if (v != NULL && !json_is_string(v))
		return val_fail(e, key, "%s must be a string", key);
	*out = json_string_value(v);
	return 0;
}

int val_opt_bool(json_t *obj, const char *key, int *out, struct val_err *e)
{
	json_t *v = given(obj, key);

	*out = 0;
	if (v != NULL && !json_is_boolean(v))
		return val_fail(e, key, "%s must be a boolean", key);
	*out = json_is_true(v);
	return 0;
}

int val_opt_int(json_t *obj, const char *key, const char *field, long long lo, long long hi,
		long long dflt, long long *out, struct val_err *e)
{
	json_t *v = given(obj, key);

	*out = dflt;
	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return val_fail(e, field, "%s must be an integer from %lld to %lld", field, lo, hi);
	*out = json_integer_value(v);
	return 0;
}

int val_unknown_field(json_t *obj, const char *const *known, const char *prefix, int keymax,
		      struct val_err *e)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v) {
		size_t i;
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(k, known[i]) == 0)
				break;
		if (known[i] == NULL) {
			char field[160];
			snprintf(field, sizeof field, "%s%.*s", prefix, keymax, k);
			return val_fail(e, field, "unknown field '%s'", field);
		}
	}
	return 0;
}

json_t *val_load_object(const char *body, size_t len, const char *const *known,
			struct val_err *e)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);

	if (root == NULL) {
		val_fail(e, NULL, "invalid JSON at line %d column %d: %s", jerr.line, jerr.column,
			 jerr.text);
		e->code = "invalid_json";
		return NULL;
	}
	if (!json_is_object(root))
		val_fail(e, NULL, "the request body must be a JSON object");
	else if (val_unknown_field(root, known, "", VAL_KEY_MAX, e) == 0)
		return root;
	json_decref(root);
	return NULL;
}

int val_command(json_t *root, const char **command, json_t **argv_out, struct val_err *e)
{
	json_t *argv = json_object_get(root, "argv");
	const char *cmd;
	size_t i, total = 0;
	json_t *a;

	if (val_opt_string(root, "command", &cmd, e) < 0)
		return -1;
	if (argv != NULL && json_is_null(argv))
		argv = NULL;
	if ((cmd == NULL) == (argv == NULL))
		return val_fail(e, "command", "exactly one of command and argv is required");
	if (cmd != NULL) {
		if (*cmd == '\0' || strlen(cmd) > MAX_COMMAND_BYTES)
			return val_fail(e, "command", "command must be 1 to %d bytes",
					MAX_COMMAND_BYTES);
		*command = cmd;
		return 0;
	}
	if (!json_is_array(argv) || json_array_size(argv) == 0 ||
	    json_array_size(argv) > MAX_ARGV)
		return val_fail(e, "argv", "argv must be an array of 1 to %d strings", MAX_ARGV);
	json_array_foreach(argv, i, a) {
		if (!json_is_string(a))
			return val_fail(e, "argv", "argv[%zu] must be a string", i);
		total += json_string_length(a);
	}
	if (json_string_length(json_array_get(argv, 0)) == 0)
		return val_fail(e, "argv", "argv[0] must not be empty");
	if (total > MAX_COMMAND_BYTES)
		return val_fail(e, "argv", "argv is longer than %d bytes", MAX_COMMAND_BYTES);
	*argv_out = argv;
	return 0;
}

static int v_command(json_t *root, struct job_req *r, struct val_err *e)
{
	if (json_object_get(root, "runtime") != NULL)
		return 0; /* val_job_runtime gives the argv */
	return val_command(root, &r->command, &r->argv, e);
}

int val_text_or_b64(json_t *obj, const char *tkey, const char *bkey, const char *prefix,
		    int flags, long long max, unsigned char **out, size_t *len, struct val_err *e)
{
	json_t *t = json_object_get(obj, tkey), *b = json_object_get(obj, bkey);
	char ft[160], fb[160];

	snprintf(ft, sizeof ft, "%s%s", prefix, tkey);
	snprintf(fb, sizeof fb, "%s%s", prefix, bkey);
	*out = NULL;
	*len = 0;
	if (flags & VAL_NULL_ABSENT) {
		t = given(obj, tkey);
		b = given(obj, bkey);
	}
	if (t != NULL && b != NULL)
		return val_fail(e, ft, "%s and %s are mutually exclusive", ft, fb);
	if (t == NULL && b == NULL && (flags & VAL_REQUIRED))
		return val_fail(e, ft, "%s or %s is required", ft, fb);
	if (t != NULL) {
		if (!json_is_string(t))
			return val_fail(e, ft, "%s must be a string", ft);
		*len = json_string_length(t);
		if (max >= 0 && (long long)*len > max)
			return val_fail(e, ft, "%s exceeds %lld bytes", ft, max);
		*out = malloc(*len + 1);
		if (*out == NULL)
			return val_fail(e, ft, "out of memory");
		memcpy(*out, json_string_value(t), *len + 1);
	} else if (b != NULL) {
		if (!json_is_string(b))
			return val_fail(e, fb, "%s must be a string", fb);
		*out = util_b64_decode(json_string_value(b), json_string_length(b), len);
		if (*out == NULL)
			return val_fail(e, fb, "%s is not valid base64", fb);
		if (max >= 0 && (long long)*len > max)
			return val_fail(e, fb, "%s exceeds %lld bytes", fb, max);
	} else {
		*out = calloc(1, 1);
		if (*out == NULL)
			return val_fail(e, ft, "out of memory");
	}
	return 0;
}

int val_env_passthrough(const struct cfg *cfg, const char *name)
{
	size_t n = strlen(name);

	for (const char *s = cfg->runner_env_passthrough; *s;) {
		size_t len = strcspn(s, ",");
		const char *a = s, *b = s + len;

		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if ((size_t)(b - a) == n && memcmp(a, name, n) == 0)
			return 1;
		s += len + (s[len] == ',');
	}
	return 0;
}

int val_env(json_t *root, const struct cfg *cfg, json_t **out, struct val_err *e)
{
	json_t *env = json_object_get(root, "env"), *v;
	const char *k;
	size_t total = 0;

	if (env == NULL || json_is_null(env)) {
		*out = json_object();
		return *out ? 0 : val_fail(e, "env", "out of memory");
	}
	if (!json_is_object(env))
		return val_fail(e, "env", "env must be an object of strings");
	if (json_object_size(env) > (size_t)cfg->max_env)
		return val_fail(e, "env", "env has more than %lld entries", cfg->max_env);
	json_object_foreach(env, k, v) {
		if (!val_env_name(k))
			return val_fail(e, "env",
					"env name '%.64s' must match [A-Za-z_][A-Za-z0-9_]*", k);
		if (!json_is_string(v))
			return val_fail(e, "env", "env value of %.64s must be a string", k);
		/* the operator's variables (runner_env_passthrough) come from the runner's
		 * host; refused here rather than silently replaced there */
		if (!cfg->runner_env_passthrough_override && val_env_passthrough(cfg, k)) {
			char field[160];
			snprintf(field, sizeof field, "env.%.120s", k);
			return val_fail(e, field, "%s is passed through from the runner's "
					"environment (runner_env_passthrough) and cannot be set", field);
		}
		total += strlen(k) + json_string_length(v) + 2;
	}
	if (total > MAX_ENV_BYTES)
		return val_fail(e, "env", "env is larger than %d bytes", MAX_ENV_BYTES);
	*out = json_incref(env);
	return 0;
}

/* "a" and "a/b" cannot both be files; neither can two equal paths. */
static int paths_clash(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;

	return strncmp(a, b, n) == 0 && (la == lb || (la < lb ? b[la] : a[lb]) == '/');
}

static int one_file(json_t *f, size_t i, const struct cfg *cfg,
		    const struct val_files_rules *rules, struct job_file *out, struct val_err *e)
{
	static const char *const known[] = { "path", "content", "content_base64", "executable",
					     NULL };
	char prefix[48], field[64];
	json_t *p, *x;
	const char *why;

	snprintf(prefix, sizeof prefix, "files[%zu].", i);
	if (!json_is_object(f)) {
		snprintf(field, sizeof field, "files[%zu]", i);
		return val_fail(e, field, "%s must be an object", field);
	}
	if (val_unknown_field(f, known, prefix, rules->key_max, e) < 0)
		return -1;
	snprintf(field, sizeof field, "%spath", prefix);
	p = json_object_get(f, "path");
	if (!json_is_string(p))
		return val_fail(e, field, "%s must be a string", field);
	why = pr_job_path(cfg, json_string_value(p));
	if (why != NULL)
		return val_fail(e, field, "%s %s", field, why);
	out->path = json_string_value(p);
	x = json_object_get(f, "executable");
	snprintf(field, sizeof field, "%sexecutable", prefix);
	if (x != NULL && !json_is_boolean(x))
		return val_fail(e, field, "%s must be a boolean", field);
	out->executable = x != NULL && json_is_true(x);
	return val_text_or_b64(f, "content", "content_base64", prefix, VAL_REQUIRED | rules->flags,
			       rules->each_max, &out->data, &out->len, e);
}

int val_files(json_t *root, const struct cfg *cfg, const struct val_files_rules *rules,
	      struct job_file **out, size_t *nout, struct val_err *e)
{
	json_t *files = json_object_get(root, "files"), *f;
	size_t i, total = rules->base;

	if (files == NULL || json_is_null(files))
		return 0;
	if (!json_is_array(files))
		return val_fail(e, "files", "files must be an array");
	if (json_array_size(files) > (size_t)cfg->max_files)
		return val_fail(e, "files", "files has more than %lld entries", cfg->max_files);
	*out = calloc(json_array_size(files) + 1, sizeof **out);
	if (*out == NULL)
		return val_fail(e, "files", "out of memory");
	json_array_foreach(files, i, f) {
		*nout = i + 1; /* so the caller's free releases a partial decode */
		if (one_file(f, i, cfg, rules, &(*out)[i], e) < 0)
			return -1;
		total += (*out)[i].len;
		if (total > (size_t)cfg->max_files_bytes)
			return val_fail(e, "files", "%s exceed %lld bytes", rules->total_name,
					cfg->max_files_bytes);
		for (size_t j = 0; j < i; j++) {
			if (paths_clash((*out)[j].path, (*out)[i].path)) {
				char field[64];
				snprintf(field, sizeof field, "files[%zu].path", i);
				return val_fail(e, field, "%s clashes with files[%zu].path", field,
						j);
			}
		}
	}
	return 0;
}

static int v_limits(json_t *root, const struct cfg *cfg, struct job_req *r, struct val_err *e)
{
	json_t *lim = json_object_get(root, "limits"), *v;
	const char *k;

	for (int i = 0; i < LIM_COUNT; i++)
		r->limits[i] = cfg->limit_default[i];
	if (lim == NULL || json_is_null(lim))
		return 0;
	if (!json_is_object(lim))
		return val_fail(e, "limits", "limits must be an object");
	json_object_foreach(lim, k, v) {
		int id = limit_lookup(k);
		char field[96];
		long long lo, hi;

		snprintf(field, sizeof field, "limits.%.64s", k);
		if (id < 0)
			return val_fail(e, field, "unknown field '%s'", field);
		lo = limit_specs[id].min;
		hi = cfg->limit_max[id];
		if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
			return val_fail(e, field, "%s must be an integer from %lld to %lld", field,
					lo, hi);
		r->limits[id] = json_integer_value(v);
	}
	return 0;
}

int val_metadata(json_t *root, const struct cfg *cfg, json_t **out, struct val_err *e)
{
	json_t *m = json_object_get(root, "metadata"), *v;
	const char *k;
	char *dump;
	size_t n;

	if (m == NULL || json_is_null(m)) {
		*out = json_object();
		return *out ? 0 : val_fail(e, "metadata", "out of memory");
	}
	if (!json_is_object(m))
		return val_fail(e, "metadata", "metadata must be an object of strings");
	if (json_object_size(m) > MAX_META_KEYS)
		return val_fail(e, "metadata", "metadata has more than %d keys", MAX_META_KEYS);
	json_object_foreach(m, k, v) {
		if (!meta_key_ok(k))
			return val_fail(e, "metadata",
					"metadata keys must be 1 to %d of [A-Za-z0-9_.:-]",
					MAX_META_KEY);
		if (val_reserved_meta_key(k)) {
			char field[96];
			snprintf(field, sizeof field, "metadata.%s", k);
			return val_fail(e, field, "%s is reserved for identity", field);
		}
		if (!json_is_string(v))
			return val_fail(e, "metadata", "metadata.%s must be a string", k);
	}
	dump = json_dumps(m, JSON_COMPACT);
	n = dump ? strlen(dump) : 0;
	free(dump);
	if (n > (size_t)cfg->max_metadata_bytes)
		return val_fail(e, "metadata", "metadata is larger than %lld bytes",
				cfg->max_metadata_bytes);
	*out = json_incref(m);
	return 0;
}

int val_cwd(json_t *root, const struct cfg *cfg, const char **out, struct val_err *e)
{
	const char *why;

	if (val_opt_string(root, "cwd", out, e) < 0)
		return -1;
	if (*out == NULL)
		*out = "";
	if (**out != '\0' && (why = pr_job_path(cfg, *out)) != NULL)
		return val_fail(e, "cwd", "cwd %s", why);
	return 0;
}

static int v_paths(json_t *root, const struct cfg *cfg, struct job_req *r, struct val_err *e)
{
	const char *why;

	if (val_cwd(root, cfg, &r->cwd, e) < 0 ||
	    val_opt_string(root, "artifacts", &r->artifacts, e) < 0)
		return -1;
	if (r->artifacts != NULL && (why = pr_job_path(cfg, r->artifacts)))
		return val_fail(e, "artifacts", "artifacts %s", why);
	return 0;
}

int val_network(json_t *root, int allow_network, const char *refusal, int *out,
		struct val_err *e)
{
	if (val_opt_bool(root, "network", out, e) < 0)
		return -1;
	if (*out && !allow_network)
		return val_forbid(e, "network", refusal);
	return 0;
}

int val_profile_exists(const struct cfg *cfg, const char *name)
{
	char path[CFG_PATH_MAX + AUTH_PROFILE_NAME_MAX + 16];
	struct stat st;

	if (strcmp(name, AUTH_DEFAULT_PROFILE) == 0)
		return 1;
	if (cfg->runner_profiles_dir[0] == '\0' || !auth_profile_name_ok(name) ||
	    (size_t)snprintf(path, sizeof path, "%s/%s.profile", cfg->runner_profiles_dir,
			     name) >= sizeof path)
		return 0;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int val_profile(json_t *root, const struct cfg *cfg, const char **out, struct val_err *e)
{
	if (val_opt_string(root, "profile", out, e) < 0)
		return -1;
	if (*out == NULL) {
		*out = AUTH_DEFAULT_PROFILE;
		return 0;
	}
	if (!auth_profile_name_ok(*out))
		return val_fail(e, "profile", "profile must be 1 to %d of [a-z0-9_-], starting with"
				" a letter or digit", AUTH_PROFILE_NAME_MAX);
	if (!val_profile_exists(cfg, *out))
		return val_fail(e, "profile", "unknown profile '%s'", *out);
	return 0;
}

int val_profile_allowed(const char *profile, const char (*allowed)[AUTH_PROFILE_NAME_MAX + 1],
			size_t n, struct val_err *e)
{
	char msg[128];

	for (size_t i = 0; i < n; i++)
		if (strcmp(allowed[i], profile) == 0)
			return 0;
	snprintf(msg, sizeof msg, "this key may not use profile '%s'", profile);
	return val_forbid(e, "profile", msg);
}

int val_job_profile(const struct job_req *r, const char (*allowed)[AUTH_PROFILE_NAME_MAX + 1],
		    size_t n, struct val_err *e)
{
	return val_profile_allowed(r->profile, allowed, n, e);
}

/* Shape only: the API never resolves the host. Where it points (after DNS, against
 * callback_allow) is checked by the runner right before each delivery. */
static int v_callback(json_t *root, const struct cfg *cfg, struct job_req *r, struct val_err *e)
{
	json_t *v = json_object_get(root, "callback_url");
	const char *why = NULL;
	struct nc_url u;

	if (val_opt_string(root, "callback_url", &r->callback_url, e) < 0)
		return -1;
	if (r->callback_url == NULL)
		return 0;
	if (json_string_length(v) != strlen(r->callback_url))
		return val_fail(e, "callback_url", "callback_url must not contain NUL");
	if (nc_parse_url(r->callback_url, &u, &why) < 0)
		return val_fail(e, "callback_url", "callback_url: %s", why);
	if (!u.https && !cfg->callback_allow_http)
		return val_fail(e, "callback_url", "callback_url: scheme must be https");
	return 0;
}

int val_job_request(const char *body, size_t len, const struct cfg *cfg, int allow_network,
		    struct job_req *r, struct val_err *e)
{
	static const char *const known[] = { "command", "argv",    "files",   "stdin",
					     "stdin_base64", "env", "cwd",     "limits",
					     "network", "artifacts", "metadata", "profile",
					     "callback_url", "runtime", "source", "entrypoint", NULL };
	struct val_files_rules files = { 0, "files and stdin", -1, VAL_KEY_MAX, 0 };

	memset(r, 0, sizeof *r);
	memset(e, 0, sizeof *e);
	if ((r->root = val_load_object(body, len, known, e)) == NULL ||
	    v_command(r->root, r, e) < 0 ||
	    val_text_or_b64(r->root, "stdin", "stdin_base64", "", 0, -1, &r->stdin_buf,
			    &r->stdin_len, e) < 0 ||
	    val_env(r->root, cfg, &r->env, e) < 0)
		return -1;
	files.base = r->stdin_len;
	if (val_files(r->root, cfg, &files, &r->files, &r->nfiles, e) < 0 ||
	    val_job_runtime(r->root, cfg, r, e) < 0 || v_paths(r->root, cfg, r, e) < 0 ||
	    v_limits(r->root, cfg, r, e) < 0 ||
	    val_network(r->root, allow_network, "this key may not run jobs with network access",
			&r->network, e) < 0 ||
	    val_metadata(r->root, cfg, &r->metadata, e) < 0 ||
	    val_profile(r->root, cfg, &r->profile, e) < 0 || v_callback(r->root, cfg, r, e) < 0)
		return -1;
	if (r->stdin_len > (size_t)cfg->max_files_bytes)
		return val_fail(e, "stdin", "stdin exceeds %lld bytes", cfg->max_files_bytes);
	return 0;
}

/* source -> a new file at the runtime's file name (the request's files must not
 * have it); returns the index of the program file in r->files. */
static long rt_source_file(json_t *src, const struct rt_entry *rt, const struct cfg *cfg,
			   struct job_req *r, struct val_err *e)
{
	struct job_file *f;
	size_t total = r->stdin_len;

	if (!json_is_string(src))
		return val_fail(e, "source", "source must be a string");
	for (size_t i = 0; i < r->nfiles; i++) {
		total += r->files[i].len;
		if (paths_clash(r->files[i].path, rt->file))
			return val_fail(e, "source", "source goes to %s, which files[%zu].path "
				    "clashes with", rt->file, i);
	}
	if (r->nfiles + 1 > (size_t)cfg->max_files)
		return val_fail(e, "files", "files has more than %lld entries", cfg->max_files);
	if (total + json_string_length(src) > (size_t)cfg->max_files_bytes)
		return val_fail(e, "source", "source, files and stdin exceed %lld bytes",
				cfg->max_files_bytes);
	f = realloc(r->files, (r->nfiles + 2) * sizeof *f);
	if (f == NULL)
		return val_fail(e, "source", "out of memory");
	r->files = f;
	f = &r->files[r->nfiles];
	memset(f, 0, sizeof *f);
	/* a copy: the process's runtimes set may be read again before the insert */
	if ((r->rt_file = strdup(rt->file)) == NULL)
		return val_fail(e, "source", "out of memory");
	f->path = r->rt_file;
	f->len = json_string_length(src);
	f->data = malloc(f->len + 1);
	if (f->data == NULL)
		return val_fail(e, "source", "out of memory");
	memcpy(f->data, json_string_value(src), f->len + 1);
	return (long)r->nfiles++;
}

static long rt_entry_file(json_t *ep, struct job_req *r, struct val_err *e)
{
	if (!json_is_string(ep))
		return val_fail(e, "entrypoint", "entrypoint must be a string");
	for (size_t i = 0; i < r->nfiles; i++)
		if (strcmp(r->files[i].path, json_string_value(ep)) == 0)
			return (long)i;
	return val_fail(e, "entrypoint", "entrypoint must be the path of one of files");
}

int val_job_runtime(json_t *root, const struct cfg *cfg, struct job_req *r, struct val_err *e)
{
	json_t *rt_name = json_object_get(root, "runtime");
	json_t *src = json_object_get(root, "source"), *ep = json_object_get(root, "entrypoint");
	const struct rt_set *set;
	const struct rt_entry *rt;
	char err[256], names[160], path[CFG_PATH_MAX];
	long fi;

	if (rt_name == NULL) {
		if (src != NULL || ep != NULL)
			return val_fail(e, src ? "source" : "entrypoint", "%s needs runtime",
					src ? "source" : "entrypoint");
		return 0;
	}
	if (!json_is_string(rt_name))
		return val_fail(e, "runtime", "runtime must be a string");
	if (json_object_get(root, "command") != NULL || json_object_get(root, "argv") != NULL)
		return val_fail(e, "runtime", "runtime excludes command and argv");
	if ((set = rt_cached(cfg->runner_runtimes_file, err, sizeof err)) == NULL)
		return val_fail(e, "runtime", "no runtimes are configured on this service");
	if ((rt = rt_find(set, json_string_value(rt_name))) == NULL) {
		rt_names(set, names, sizeof names);
		return val_fail(e, "runtime", "unknown runtime '%.40s' (known: %s)",
				json_string_value(rt_name), names);
	}
	if ((src == NULL) == (ep == NULL))
		return val_fail(e, "source", "runtime needs exactly one of source and entrypoint");
	fi = src ? rt_source_file(src, rt, cfg, r, e) : rt_entry_file(ep, r, e);
	if (fi < 0)
		return -1;
	if ((size_t)snprintf(path, sizeof path, RT_WORKSPACE "/%s", r->files[fi].path) >=
	    sizeof path)
		return val_fail(e, src ? "source" : "entrypoint", "the program's path is too long");
	snprintf(r->runtime, sizeof r->runtime, "%s", rt->name);
	r->rt_argv = rt_expand(rt->run, path);
	r->compile_argv = rt->compile ? rt_expand(rt->compile, path) : NULL;
	if (r->rt_argv == NULL || (rt->compile && r->compile_argv == NULL))
		return val_fail(e, "runtime", "out of memory");
	r->argv = r->rt_argv;
	return 0;
}

void val_key_limits(struct cfg *eff, const long long key_max[LIM_COUNT])
{
	for (int i = 0; i < LIM_COUNT; i++) {
		if (key_max[i] >= 0 && key_max[i] < eff->limit_max[i])
			eff->limit_max[i] = key_max[i];
		if (eff->limit_default[i] > eff->limit_max[i])
			eff->limit_default[i] = eff->limit_max[i];
	}
}

void val_files_free(struct job_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(files[i].data);
	free(files);
}

void val_job_free(struct job_req *r)
{
	val_files_free(r->files, r->nfiles);
	free(r->stdin_buf);
	json_decref(r->env);
	json_decref(r->rt_argv);
	free(r->rt_file);
	json_decref(r->compile_argv);
	json_decref(r->metadata);
	json_decref(r->root);
	memset(r, 0, sizeof *r);
}

char *val_env_meta(const json_t *env)
{
	json_t *arr = json_array(), *v;
	const char *k;
	char *text;

	json_object_foreach((json_t *)env, k, v) {
		unsigned char d[32];
		char hex[65];
		const char *val = json_string_value(v);
		size_t n = json_string_length(v);

		sha256_buf(val, n, d);
		util_hex(d, sizeof d, hex);
		json_array_append_new(arr, json_pack("{s:s, s:I, s:s}", "name", k, "size",
						     (json_int_t)n, "sha256", hex));
	}
	text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return text;
}
