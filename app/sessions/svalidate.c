#include "svalidate.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pathrules.h"
#include "util.h"

/* The same bounds as app/jobs/validate.c's for jobs. */
#define MAX_ENV_BYTES 65536
#define MAX_META_KEY 64
#define MAX_META_KEYS 64

const char *const sv_limit_names[SV_LIMIT_COUNT] = { "memory_mb", "pids", "cpu_seconds",
						     "disk_mb" };

static int fail(struct val_err *e, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct val_err *e, const char *field, const char *fmt, ...)
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

static int forbid(struct val_err *e, const char *field, const char *msg)
{
	fail(e, field, "%s", msg);
	e->status = 403;
	e->code = "forbidden";
	return -1;
}

/* Parses body as a JSON object, unknown top-level keys refused. */
static json_t *load_object(const char *body, size_t len, const char *const *known,
			   struct val_err *e)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr), *v;
	const char *k;

	if (root == NULL) {
		fail(e, NULL, "invalid JSON at line %d column %d: %s", jerr.line, jerr.column,
		     jerr.text);
		e->code = "invalid_json";
		return NULL;
	}
	if (!json_is_object(root)) {
		fail(e, NULL, "the request body must be a JSON object");
		json_decref(root);
		return NULL;
	}
	json_object_foreach(root, k, v) {
		size_t i;
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(k, known[i]) == 0)
				break;
		if (known[i] == NULL) {
			char field[160];
			snprintf(field, sizeof field, "%.120s", k);
			fail(e, field, "unknown field '%s'", field);
			json_decref(root);
			return NULL;
		}
	}
	return root;
}

static int opt_string(json_t *root, const char *key, const char **out, struct val_err *e)
{
	json_t *v = json_object_get(root, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return fail(e, key, "%s must be a string", key);
	*out = json_string_value(v);
	return 0;
}

static int opt_bool(json_t *root, const char *key, int *out, struct val_err *e)
{
	json_t *v = json_object_get(root, key);

	*out = 0;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return fail(e, key, "%s must be a boolean", key);
	*out = json_is_true(v);
	return 0;
}

/* An integer field lo..hi, dflt when absent; field names it in errors. */
static int opt_int(json_t *obj, const char *key, const char *field, long long lo, long long hi,
		   long long dflt, long long *out, struct val_err *e)
{
	json_t *v = json_object_get(obj, key);

	*out = dflt;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return fail(e, field, "%s must be an integer from %lld to %lld", field, lo, hi);
	*out = json_integer_value(v);
	return 0;
}

/* `text` or `text_base64` (both refused): decoded into *out (malloc'd, never NULL on
 * success), at most max bytes. */
static int text_or_b64(json_t *obj, const char *tkey, const char *bkey, const char *prefix,
		       int required, long long max, unsigned char **out, size_t *len,
		       struct val_err *e)
{
	json_t *t = json_object_get(obj, tkey), *b = json_object_get(obj, bkey);
	char ft[160], fb[160];

	snprintf(ft, sizeof ft, "%s%s", prefix, tkey);
	snprintf(fb, sizeof fb, "%s%s", prefix, bkey);
	*out = NULL;
	*len = 0;
	if (t != NULL && json_is_null(t))
		t = NULL;
	if (b != NULL && json_is_null(b))
		b = NULL;
	if (t != NULL && b != NULL)
		return fail(e, ft, "%s and %s are mutually exclusive", ft, fb);
	if (t == NULL && b == NULL && required)
		return fail(e, ft, "%s or %s is required", ft, fb);
	if (t != NULL) {
		if (!json_is_string(t))
			return fail(e, ft, "%s must be a string", ft);
		*len = json_string_length(t);
		if ((long long)*len > max)
			return fail(e, ft, "%s exceeds %lld bytes", ft, max);
		*out = malloc(*len + 1);
		if (*out == NULL)
			return fail(e, ft, "out of memory");
		memcpy(*out, json_string_value(t), *len + 1);
	} else if (b != NULL) {
		if (!json_is_string(b))
			return fail(e, fb, "%s must be a string", fb);
		*out = util_b64_decode(json_string_value(b), json_string_length(b), len);
		if (*out == NULL)
			return fail(e, fb, "%s is not valid base64", fb);
		if ((long long)*len > max)
			return fail(e, fb, "%s exceeds %lld bytes", fb, max);
	} else {
		*out = calloc(1, 1);
		if (*out == NULL)
			return fail(e, ft, "out of memory");
	}
	return 0;
}

static int v_env(json_t *root, const struct cfg *cfg, json_t **out, struct val_err *e)
{
	return val_env(root, cfg, out, e);
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

static int v_metadata(json_t *root, const struct cfg *cfg, json_t **out, struct val_err *e)
{
	json_t *m = json_object_get(root, "metadata"), *v;
	const char *k;
	char *dump;
	size_t n;

	if (m == NULL || json_is_null(m)) {
		*out = json_object();
		return *out ? 0 : fail(e, "metadata", "out of memory");
	}
	if (!json_is_object(m))
		return fail(e, "metadata", "metadata must be an object of strings");
	if (json_object_size(m) > MAX_META_KEYS)
		return fail(e, "metadata", "metadata has more than %d keys", MAX_META_KEYS);
	json_object_foreach(m, k, v) {
		if (!meta_key_ok(k))
			return fail(e, "metadata", "metadata keys must be 1 to %d of [A-Za-z0-9_.:-]",
				    MAX_META_KEY);
		if (val_reserved_meta_key(k)) {
			char field[96];
			snprintf(field, sizeof field, "metadata.%s", k);
			return fail(e, field, "%s is reserved for identity", field);
		}
		if (!json_is_string(v))
			return fail(e, "metadata", "metadata.%s must be a string", k);
	}
	dump = json_dumps(m, JSON_COMPACT);
	n = dump ? strlen(dump) : 0;
	free(dump);
	if (n > (size_t)cfg->max_metadata_bytes)
		return fail(e, "metadata", "metadata is larger than %lld bytes",
			    cfg->max_metadata_bytes);
	*out = json_incref(m);
	return 0;
}

/* "a" and "a/b" cannot both be files; neither can two equal paths. */
static int paths_clash(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;

	return strncmp(a, b, n) == 0 && (la == lb || (la < lb ? b[la] : a[lb]) == '/');
}

static int v_one_file(json_t *f, size_t i, const struct cfg *cfg, struct job_file *out,
		      struct val_err *e)
{
	static const char *const known[] = { "path", "content", "content_base64", "executable",
					     NULL };
	char prefix[48], field[64];
	const char *k, *why;
	json_t *p, *x, *v;

	snprintf(prefix, sizeof prefix, "files[%zu].", i);
	if (!json_is_object(f)) {
		snprintf(field, sizeof field, "files[%zu]", i);
		return fail(e, field, "%s must be an object", field);
	}
	json_object_foreach(f, k, v) {
		size_t j;
		for (j = 0; known[j] && strcmp(k, known[j]) != 0; j++)
			;
		if (known[j] == NULL) {
			char uf[160];
			snprintf(uf, sizeof uf, "%s%.100s", prefix, k);
			return fail(e, uf, "unknown field '%s'", uf);
		}
	}
	snprintf(field, sizeof field, "%spath", prefix);
	p = json_object_get(f, "path");
	if (!json_is_string(p))
		return fail(e, field, "%s must be a string", field);
	if ((why = pr_job_path(cfg, json_string_value(p))) != NULL)
		return fail(e, field, "%s %s", field, why);
	out->path = json_string_value(p);
	x = json_object_get(f, "executable");
	snprintf(field, sizeof field, "%sexecutable", prefix);
	if (x != NULL && !json_is_boolean(x))
		return fail(e, field, "%s must be a boolean", field);
	out->executable = x != NULL && json_is_true(x);
	return text_or_b64(f, "content", "content_base64", prefix, 1, cfg->max_files_bytes,
			   &out->data, &out->len, e);
}

static int v_files(json_t *root, const struct cfg *cfg, struct sess_req *r, struct val_err *e)
{
	json_t *files = json_object_get(root, "files"), *f;
	size_t i, total = 0;

	if (files == NULL || json_is_null(files))
		return 0;
	if (!json_is_array(files))
		return fail(e, "files", "files must be an array");
	if (json_array_size(files) > (size_t)cfg->max_files)
		return fail(e, "files", "files has more than %lld entries", cfg->max_files);
	r->files = calloc(json_array_size(files) + 1, sizeof *r->files);
	if (r->files == NULL)
		return fail(e, "files", "out of memory");
	json_array_foreach(files, i, f) {
		r->nfiles = i + 1; /* so sv_session_free releases a partial decode */
		if (v_one_file(f, i, cfg, &r->files[i], e) < 0)
			return -1;
		total += r->files[i].len;
		if (total > (size_t)cfg->max_files_bytes)
			return fail(e, "files", "files exceed %lld bytes", cfg->max_files_bytes);
		for (size_t j = 0; j < i; j++) {
			if (paths_clash(r->files[j].path, r->files[i].path)) {
				char field[64];
				snprintf(field, sizeof field, "files[%zu].path", i);
				return fail(e, field, "%s clashes with files[%zu].path", field, j);
			}
		}
	}
	return 0;
}

/* memory_mb, pids, disk_mb: the job limits' floors, defaults and maxima (the key's
 * own maxima already in eff); cpu_seconds: the session's own (whole-session CPU). */
static int v_limits(json_t *root, const struct cfg *eff, struct sess_req *r, struct val_err *e)
{
	static const enum limit_id job_lim[SV_LIMIT_COUNT] = { LIM_MEMORY_MB, LIM_PIDS,
							       LIM_CPU_SECONDS, LIM_DISK_MB };
	json_t *lim = json_object_get(root, "limits"), *v;
	const char *k;

	for (int i = 0; i < SV_LIMIT_COUNT; i++)
		r->limits[i] = eff->limit_default[job_lim[i]];
	r->limits[SV_CPU_SECONDS] = eff->session_cpu_seconds_default;
	if (lim == NULL || json_is_null(lim))
		return 0;
	if (!json_is_object(lim))
		return fail(e, "limits", "limits must be an object");
	json_object_foreach(lim, k, v) {
		char field[96];
		int id;

		snprintf(field, sizeof field, "limits.%.64s", k);
		for (id = 0; id < SV_LIMIT_COUNT && strcmp(k, sv_limit_names[id]) != 0; id++)
			;
		if (id == SV_LIMIT_COUNT)
			return fail(e, field, "unknown field '%s' (session limits: memory_mb, pids,"
				    " cpu_seconds, disk_mb)", field);
		if (id == SV_CPU_SECONDS) {
			if (opt_int(lim, k, field, 1, eff->session_cpu_seconds_max,
				    r->limits[id], &r->limits[id], e) < 0)
				return -1;
		} else if (opt_int(lim, k, field, limit_specs[job_lim[id]].min,
				   eff->limit_max[job_lim[id]], r->limits[id], &r->limits[id],
				   e) < 0) {
			return -1;
		}
	}
	return 0;
}

static int v_network(json_t *root, int allow_network, int *out, struct val_err *e)
{
	if (opt_bool(root, "network", out, e) < 0)
		return -1;
	if (*out && !allow_network)
		return forbid(e, "network", "this key may not start sessions with network access");
	return 0;
}

static int v_profile(json_t *root, const struct cfg *cfg, const char **out, struct val_err *e)
{
	if (opt_string(root, "profile", out, e) < 0)
		return -1;
	if (*out == NULL) {
		*out = AUTH_DEFAULT_PROFILE;
		return 0;
	}
	if (!auth_profile_name_ok(*out))
		return fail(e, "profile", "profile must be 1 to %d of [a-z0-9_-], starting with a "
			    "letter or digit", AUTH_PROFILE_NAME_MAX);
	if (!val_profile_exists(cfg, *out))
		return fail(e, "profile", "unknown profile '%s'", *out);
	return 0;
}

int sv_session(const char *body, size_t len, const struct cfg *eff, int allow_network,
	       struct sess_req *r, struct val_err *e)
{
	static const char *const known[] = { "limits",   "env",     "files",        "network",
					     "metadata", "profile", "idle_seconds", "max_seconds",
					     NULL };

	memset(r, 0, sizeof *r);
	memset(e, 0, sizeof *e);
	if ((r->root = load_object(body, len, known, e)) == NULL)
		return -1;
	if (v_limits(r->root, eff, r, e) < 0 ||
	    opt_int(r->root, "idle_seconds", "idle_seconds", 1, eff->session_idle_seconds_max,
		    eff->session_idle_seconds_default, &r->idle_seconds, e) < 0 ||
	    opt_int(r->root, "max_seconds", "max_seconds", 1, eff->session_max_seconds_max,
		    eff->session_max_seconds_default, &r->max_seconds, e) < 0 ||
	    v_env(r->root, eff, &r->env, e) < 0 || v_files(r->root, eff, r, e) < 0 ||
	    v_network(r->root, allow_network, &r->network, e) < 0 ||
	    v_metadata(r->root, eff, &r->metadata, e) < 0 ||
	    v_profile(r->root, eff, &r->profile, e) < 0)
		return -1;
	return 0;
}

int sv_session_profile(const struct sess_req *r, const char (*allowed)[AUTH_PROFILE_NAME_MAX + 1],
		       size_t n, struct val_err *e)
{
	char msg[128];

	for (size_t i = 0; i < n; i++)
		if (strcmp(allowed[i], r->profile) == 0)
			return 0;
	snprintf(msg, sizeof msg, "this key may not use profile '%s'", r->profile);
	return forbid(e, "profile", msg);
}

void sv_session_free(struct sess_req *r)
{
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i].data);
	free(r->files);
	json_decref(r->env);
	json_decref(r->metadata);
	json_decref(r->root);
	memset(r, 0, sizeof *r);
}

static int v_command(json_t *root, struct cmd_req *r, struct val_err *e)
{
	return val_command(root, &r->command, &r->argv, e);
}

static int v_tag(json_t *root, struct cmd_req *r, struct val_err *e)
{
	if (opt_string(root, "tag", &r->tag, e) < 0)
		return -1;
	if (r->tag == NULL)
		return 0;
	if (strlen(r->tag) > SV_MAX_TAG_BYTES)
		return fail(e, "tag", "tag must be at most %d bytes", SV_MAX_TAG_BYTES);
	for (const unsigned char *p = (const unsigned char *)r->tag; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return fail(e, "tag", "tag must not contain control characters");
	return 0;
}

int sv_command(const char *body, size_t len, const struct cfg *eff, long long session_max_seconds,
	       struct cmd_req *r, struct val_err *e)
{
	static const char *const known[] = { "command",    "argv",         "env",
					     "cwd",        "stdin",        "stdin_base64",
					     "stdin_open", "timeout_seconds", "output_bytes",
					     "tag",        NULL };
	long long tdef = eff->limit_default[LIM_WALL_SECONDS];
	const char *why;

	memset(r, 0, sizeof *r);
	memset(e, 0, sizeof *e);
	if ((r->root = load_object(body, len, known, e)) == NULL)
		return -1;
	if (tdef > session_max_seconds)
		tdef = session_max_seconds;
	if (v_command(r->root, r, e) < 0 || v_env(r->root, eff, &r->env, e) < 0 ||
	    opt_string(r->root, "cwd", &r->cwd, e) < 0)
		return -1;
	if (r->cwd == NULL)
		r->cwd = "";
	if (*r->cwd != '\0' && (why = pr_job_path(eff, r->cwd)) != NULL)
		return fail(e, "cwd", "cwd %s", why);
	if (text_or_b64(r->root, "stdin", "stdin_base64", "", 0, eff->max_files_bytes,
			&r->stdin_buf, &r->stdin_len, e) < 0 ||
	    opt_bool(r->root, "stdin_open", &r->stdin_open, e) < 0 ||
	    opt_int(r->root, "timeout_seconds", "timeout_seconds", 0, session_max_seconds, tdef,
		    &r->timeout_seconds, e) < 0 ||
	    opt_int(r->root, "output_bytes", "output_bytes", limit_specs[LIM_OUTPUT_BYTES].min,
		    eff->limit_max[LIM_OUTPUT_BYTES], eff->limit_default[LIM_OUTPUT_BYTES],
		    &r->output_bytes, e) < 0 ||
	    v_tag(r->root, r, e) < 0)
		return -1;
	return 0;
}

void sv_command_free(struct cmd_req *r)
{
	free(r->stdin_buf);
	json_decref(r->env);
	json_decref(r->root);
	memset(r, 0, sizeof *r);
}

static const struct {
	const char *name;
	int no;
} signals[] = { { "HUP", 1 },  { "INT", 2 },   { "QUIT", 3 },  { "KILL", 9 },
		{ "USR1", 10 }, { "USR2", 12 }, { "TERM", 15 } };

int sv_kill(const char *body, size_t len, int *signo, struct val_err *e)
{
	static const char *const known[] = { "signal", NULL };
	json_t *root, *s;
	int rc = 0;

	memset(e, 0, sizeof *e);
	*signo = 15;
	if (len == 0)
		return 0;
	if ((root = load_object(body, len, known, e)) == NULL)
		return -1;
	s = json_object_get(root, "signal");
	if (s == NULL || json_is_null(s)) {
		/* TERM */
	} else if (json_is_integer(s)) {
		if (json_integer_value(s) < 1 || json_integer_value(s) > 64)
			rc = fail(e, "signal", "signal must be a name or an integer from 1 to 64");
		else
			*signo = (int)json_integer_value(s);
	} else if (json_is_string(s)) {
		const char *n = json_string_value(s);
		size_t i;

		if (strncmp(n, "SIG", 3) == 0)
			n += 3;
		for (i = 0; i < sizeof signals / sizeof signals[0]; i++)
			if (strcmp(n, signals[i].name) == 0)
				break;
		if (i == sizeof signals / sizeof signals[0])
			rc = fail(e, "signal", "signal must be one of TERM, KILL, INT, HUP, QUIT,"
				  " USR1, USR2 or an integer from 1 to 64");
		else
			*signo = signals[i].no;
	} else {
		rc = fail(e, "signal", "signal must be a name or an integer from 1 to 64");
	}
	json_decref(root);
	return rc;
}

int sv_stdin(const char *body, size_t len, long long max, unsigned char **data, size_t *dlen,
	     int *close_after, struct val_err *e)
{
	static const char *const known[] = { "data", "data_base64", "close", NULL };
	json_t *root;
	int rc;

	memset(e, 0, sizeof *e);
	*data = NULL;
	*dlen = 0;
	*close_after = 0;
	if ((root = load_object(body, len, known, e)) == NULL)
		return -1;
	rc = opt_bool(root, "close", close_after, e);
	if (rc == 0)
		rc = text_or_b64(root, "data", "data_base64", "", 0, max, data, dlen, e);
	if (rc == 0 && *dlen == 0 && !*close_after &&
	    json_object_get(root, "data") == NULL && json_object_get(root, "data_base64") == NULL)
		rc = fail(e, "data", "data, data_base64 or close is required");
	if (rc < 0) {
		free(*data);
		*data = NULL;
		*dlen = 0;
	}
	json_decref(root);
	return rc;
}

const char *sv_file_path(const struct cfg *cfg, const char *path)
{
	return pr_job_path(cfg, path);
}

int sv_file_mode(const char *s, int *mode)
{
	long v = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 4)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '7')
			return -1;
		v = v * 8 + (*s - '0');
	}
	if (v > 0777)
		return -1;
	*mode = (int)v;
	return 0;
}

int sv_bool(const char *s, int *out)
{
	if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
		*out = 1;
	else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
		*out = 0;
	else
		return -1;
	return 0;
}

static int one_of(const char *name, const char *const *names)
{
	for (; name && *names; names++)
		if (strcmp(name, *names) == 0)
			return 1;
	return 0;
}

int sv_session_status(const char *name)
{
	static const char *const names[] = { "starting", "ready", "closed", "expired",
					     "failed",   "lost",  NULL };
	return one_of(name, names);
}

int sv_command_status(const char *name)
{
	static const char *const names[] = { "queued",  "running",   "succeeded", "failed",
					     "timed_out", "output_limit", "killed", "cancelled",
					     "error",   "lost",      NULL };
	return one_of(name, names);
}

int sv_session_live(const char *name)
{
	static const char *const names[] = { "starting", "ready", NULL };
	return one_of(name, names);
}

int sv_command_terminal(const char *name)
{
	static const char *const live[] = { "queued", "running", NULL };
	return sv_command_status(name) && !one_of(name, live);
}
