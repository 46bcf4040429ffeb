/* The session API's bodies and parameters, in the field vocabulary of
 * app/jobs/validate.h (what a session shares with a job is checked by the same code,
 * with the same texts); here only what is a session's own: its limits and timeouts,
 * a command's tag and stdin, kill signals, file modes, status names. */
#include "svalidate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pathrules.h"

const char *const sv_limit_names[SV_LIMIT_COUNT] = { "memory_mb", "pids", "cpu_seconds",
						     "disk_mb" };

/* A session's files, as a job's but for these: no stdin, one file's content at most
 * max_files_bytes and named so, an unknown key of an entry named up to 100 bytes,
 * null content as none. */
static int v_files(json_t *root, const struct cfg *cfg, struct sess_req *r, struct val_err *e)
{
	const struct val_files_rules rules = { 0, "files", cfg->max_files_bytes, 100,
					       VAL_NULL_ABSENT };

	return val_files(root, cfg, &rules, &r->files, &r->nfiles, e);
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
		return val_fail(e, "limits", "limits must be an object");
	json_object_foreach(lim, k, v) {
		char field[96];
		int id;

		snprintf(field, sizeof field, "limits.%.64s", k);
		for (id = 0; id < SV_LIMIT_COUNT && strcmp(k, sv_limit_names[id]) != 0; id++)
			;
		if (id == SV_LIMIT_COUNT)
			return val_fail(e, field, "unknown field '%s' (session limits: memory_mb,"
					" pids, cpu_seconds, disk_mb)", field);
		if (id == SV_CPU_SECONDS) {
			if (val_opt_int(lim, k, field, 1, eff->session_cpu_seconds_max,
					r->limits[id], &r->limits[id], e) < 0)
				return -1;
		} else if (val_opt_int(lim, k, field, limit_specs[job_lim[id]].min,
				       eff->limit_max[job_lim[id]], r->limits[id], &r->limits[id],
				       e) < 0) {
			return -1;
		}
	}
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
	if ((r->root = val_load_object(body, len, known, e)) == NULL)
		return -1;
	if (v_limits(r->root, eff, r, e) < 0 ||
	    val_opt_int(r->root, "idle_seconds", "idle_seconds", 1, eff->session_idle_seconds_max,
			eff->session_idle_seconds_default, &r->idle_seconds, e) < 0 ||
	    val_opt_int(r->root, "max_seconds", "max_seconds", 1, eff->session_max_seconds_max,
			eff->session_max_seconds_default, &r->max_seconds, e) < 0 ||
	    val_env(r->root, eff, &r->env, e) < 0 || v_files(r->root, eff, r, e) < 0 ||
	    val_network(r->root, allow_network,
			"this key may not start sessions with network access", &r->network,
			e) < 0 ||
	    val_metadata(r->root, eff, &r->metadata, e) < 0 ||
	    val_profile(r->root, eff, &r->profile, e) < 0)
		return -1;
	return 0;
}

int sv_session_profile(const struct sess_req *r, const char (*allowed)[AUTH_PROFILE_NAME_MAX + 1],
		       size_t n, struct val_err *e)
{
	return val_profile_allowed(r->profile, allowed, n, e);
}

void sv_session_free(struct sess_req *r)
{
	val_files_free(r->files, r->nfiles);
	json_decref(r->env);
	json_decref(r->metadata);
	json_decref(r->root);
	memset(r, 0, sizeof *r);
}

static int v_tag(json_t *root, struct cmd_req *r, struct val_err *e)
{
	if (val_opt_string(root, "tag", &r->tag, e) < 0)
		return -1;
	if (r->tag == NULL)
		return 0;
	if (strlen(r->tag) > SV_MAX_TAG_BYTES)
		return val_fail(e, "tag", "tag must be at most %d bytes", SV_MAX_TAG_BYTES);
	for (const unsigned char *p = (const unsigned char *)r->tag; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return val_fail(e, "tag", "tag must not contain control characters");
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

	memset(r, 0, sizeof *r);
	memset(e, 0, sizeof *e);
	if ((r->root = val_load_object(body, len, known, e)) == NULL)
		return -1;
	if (tdef > session_max_seconds)
		tdef = session_max_seconds;
	if (val_command(r->root, &r->command, &r->argv, e) < 0 ||
	    val_env(r->root, eff, &r->env, e) < 0 || val_cwd(r->root, eff, &r->cwd, e) < 0 ||
	    val_text_or_b64(r->root, "stdin", "stdin_base64", "", VAL_NULL_ABSENT,
			    eff->max_files_bytes, &r->stdin_buf, &r->stdin_len, e) < 0 ||
	    val_opt_bool(r->root, "stdin_open", &r->stdin_open, e) < 0 ||
	    val_opt_int(r->root, "timeout_seconds", "timeout_seconds", 0, session_max_seconds,
			tdef, &r->timeout_seconds, e) < 0 ||
	    val_opt_int(r->root, "output_bytes", "output_bytes",
			limit_specs[LIM_OUTPUT_BYTES].min, eff->limit_max[LIM_OUTPUT_BYTES],
			eff->limit_default[LIM_OUTPUT_BYTES], &r->output_bytes, e) < 0 ||
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
	if ((root = val_load_object(body, len, known, e)) == NULL)
		return -1;
	s = json_object_get(root, "signal");
	if (s == NULL || json_is_null(s)) {
		/* TERM */
	} else if (json_is_integer(s)) {
		if (json_integer_value(s) < 1 || json_integer_value(s) > 64)
			rc = val_fail(e, "signal",
				      "signal must be a name or an integer from 1 to 64");
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
			rc = val_fail(e, "signal", "signal must be one of TERM, KILL, INT, HUP,"
				      " QUIT, USR1, USR2 or an integer from 1 to 64");
		else
			*signo = signals[i].no;
	} else {
		rc = val_fail(e, "signal", "signal must be a name or an integer from 1 to 64");
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
	if ((root = val_load_object(body, len, known, e)) == NULL)
		return -1;
	rc = val_opt_bool(root, "close", close_after, e);
	if (rc == 0)
		rc = val_text_or_b64(root, "data", "data_base64", "", VAL_NULL_ABSENT, max, data,
				     dlen, e);
	if (rc == 0 && *dlen == 0 && !*close_after &&
	    json_object_get(root, "data") == NULL && json_object_get(root, "data_base64") == NULL)
		rc = val_fail(e, "data", "data, data_base64 or close is required");
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
