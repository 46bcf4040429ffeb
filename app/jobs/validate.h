/* Validation of a job submission, and the vocabulary of field rules that the session
 * API's validation (app/sessions/svalidate.c) shares with it: one error builder, the
 * optional-field readers, env, command, files, metadata, network, profile, cwd. Every
 * rejection names the field. Pure but for one look-up: a named profile must exist in
 * runner_profiles_dir (the runners' directory). */
#ifndef SANDBOX_VALIDATE_H
#define SANDBOX_VALIDATE_H

#include <jansson.h>
#include <stddef.h>

#include "auth.h"
#include "config.h"
#include "joblimits.h"

struct val_err {
	int status;          /* 400, or 403 for a permission */
	const char *code;    /* invalid_json, invalid_request, forbidden */
	char field[160];     /* empty when the error is about the whole body */
	char message[256];
};

struct job_file {
	const char *path;    /* borrowed from job_req.root */
	unsigned char *data; /* owned, decoded */
	size_t len;
	int executable;
};

struct job_req {
	json_t *root;            /* owns everything borrowed below */
	const char *command;     /* NULL when argv is used */
	json_t *argv;            /* NULL when command is used */
	unsigned char *stdin_buf;
	size_t stdin_len;
	json_t *env;             /* object of strings, maybe empty, never NULL */
	const char *cwd;         /* "" = workspace root */
	long long limits[LIM_COUNT];
	int network;
	const char *artifacts;   /* NULL = none */
	json_t *metadata;        /* object of strings, never NULL */
	const char *profile;     /* the sandbox profile's name, "default" when not given */
	const char *callback_url; /* NULL = none (common/netcheck.h's URL rules) */
	struct job_file *files;
	size_t nfiles;
	/* "runtime" (val_job_runtime): argv is then rt_argv, the runtime's run template
	 * with {file} expanded; compile_argv its compile template, NULL if interpreted */
	char runtime[33];        /* the name as the file spells it (an alias resolved) */
	char *rt_file;           /* owned: the path source went to */
	json_t *rt_argv;         /* owned */
	json_t *compile_argv;    /* owned, NULL when none */
};

/* Parses and validates body. 0 and a filled req (release with val_job_free), or -1
 * and err filled in. `allow_network` is the key's permission. */
int val_job_request(const char *body, size_t len, const struct cfg *cfg, int allow_network,
		    struct job_req *req, struct val_err *err);
void val_job_free(struct job_req *req);
/* "runtime" with "source" (written to the runtime's file) or "files" + "entrypoint",
 * instead of command/argv: the runtime must be in runner_runtimes_file (400 field
 * runtime naming the known ones). Called by val_job_request after the files. */
int val_job_runtime(json_t *root, const struct cfg *cfg, struct job_req *req,
		    struct val_err *err);
/* 403 `forbidden` naming the field profile unless req's profile is one of the key's
 * (allowed[0 .. n), struct identity's profiles). */
int val_job_profile(const struct job_req *req, const char (*allowed)[AUTH_PROFILE_NAME_MAX + 1],
		    size_t n, struct val_err *err);
/* "default", or runner_profiles_dir/NAME.profile is a regular file (the runner
 * checks it fully: owner, mode, content; the API only needs to know it is there). */
int val_profile_exists(const struct cfg *cfg, const char *name);
/* name is one of runner_env_passthrough's comma-separated names. */
int val_env_passthrough(const struct cfg *cfg, const char *name);
/* The limits a key may use: the operator's maxima lowered to the key's own
 * (key_max[i] < 0: none), and a default above the lowered maximum brought down to it
 * (a request that names a value above it is still a 400, never clamped). */
void val_key_limits(struct cfg *eff, const long long key_max[LIM_COUNT]);

/* common/pathrules.h's pr_rel_path (job paths use pr_job_path: the configured limit). */
const char *val_rel_path(const char *p, size_t max);
/* [A-Za-z_][A-Za-z0-9_]* */
int val_env_name(const char *s);
/* root's "env" (absent or null: {}): an object of at most max_env string values
 * (MAX_ENV_BYTES in all), names [A-Za-z_][A-Za-z0-9_]*, none passed through from the
 * runner unless the operator allows overriding; *out is a new reference. Jobs,
 * sessions and session commands share it. 0, or -1 with e filled. */
int val_env(json_t *root, const struct cfg *cfg, json_t **out, struct val_err *e);
/* root's "command" (a non-empty string of at most 64 KiB) or "argv" (1 to 1024
 * strings, argv[0] non-empty, 64 KiB in all), exactly one of them: *command or *argv
 * set (borrowed from root). Jobs and session commands share it. 0, or -1 with e. */
int val_command(json_t *root, const char **command, json_t **argv, struct val_err *e);
/* Metadata keys that could be taken for identity (case-insensitive). */
int val_reserved_meta_key(const char *k);

/* ---- the field vocabulary (jobs and sessions) ---- */

/* An unknown key is named in its error up to this many bytes. */
#define VAL_KEY_MAX 120

/* e filled for a 400 invalid_request naming field (NULL: the whole body): -1. */
int val_fail(struct val_err *e, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same as a 403 forbidden saying msg (a permission the key lacks): -1. */
int val_forbid(struct val_err *e, const char *field, const char *msg);
/* body parsed as a JSON object (duplicate keys refused: invalid_json) whose keys are
 * all in known (NULL-terminated); a new reference, or NULL with e filled. */
json_t *val_load_object(const char *body, size_t len, const char *const *known,
			struct val_err *e);
/* 0 when every key of obj is in known, else -1 naming the first other one as
 * prefix + key, the key cut at keymax bytes. */
int val_unknown_field(json_t *obj, const char *const *known, const char *prefix, int keymax,
		      struct val_err *e);
/* Optional fields (absent or null: not given): a string (*out NULL when not given,
 * borrowed from obj), a boolean (0), an integer lo..hi (dflt; field names it). */
int val_opt_string(json_t *obj, const char *key, const char **out, struct val_err *e);
int val_opt_bool(json_t *obj, const char *key, int *out, struct val_err *e);
int val_opt_int(json_t *obj, const char *key, const char *field, long long lo, long long hi,
		long long dflt, long long *out, struct val_err *e);

#define VAL_REQUIRED 1    /* one of the two must be given */
#define VAL_NULL_ABSENT 2 /* a null counts as not given (else: not a string) */
/* obj's `tkey` (text) or `bkey` (base64), not both, decoded into *out (malloc'd,
 * never NULL on success: "" when neither is given), at most max bytes (max < 0: no
 * bound here); fields are named prefix + key. */
int val_text_or_b64(json_t *obj, const char *tkey, const char *bkey, const char *prefix,
		    int flags, long long max, unsigned char **out, size_t *len, struct val_err *e);

/* How a request's "files" are bounded: the one place jobs and sessions differ. */
struct val_files_rules {
	size_t base;            /* bytes already counted against max_files_bytes (stdin) */
	const char *total_name; /* what exceeds it, in the error: "files and stdin" */
	long long each_max;     /* one file's content at most (-1: only the total) */
	int key_max;            /* an unknown key of an entry is named up to this */
	int flags;              /* VAL_NULL_ABSENT for content / content_base64 */
};
/* root's "files" (absent or null: none): [{path, content | content_base64,
 * executable}], at most max_files, max_files_bytes in all, no two paths clashing
 * ("a" and "a/b"). *out is calloc'd and *nout counts the entries decoded so far, also
 * on failure (val_files_free releases them). 0, or -1 with e filled. */
int val_files(json_t *root, const struct cfg *cfg, const struct val_files_rules *rules,
	      struct job_file **out, size_t *nout, struct val_err *e);
/* Frees files[0 .. n) (their data) and the array. */
void val_files_free(struct job_file *files, size_t n);
/* root's "metadata" (absent or null: {}): an object of strings, keys [A-Za-z0-9_.:-]
 * none reserved for identity, at most max_metadata_bytes; *out a new reference. */
int val_metadata(json_t *root, const struct cfg *cfg, json_t **out, struct val_err *e);
/* root's "cwd": "" (the workspace root) when not given, else a job path. */
int val_cwd(json_t *root, const struct cfg *cfg, const char **out, struct val_err *e);
/* root's "network" boolean; true without allow_network is a 403 saying refusal. */
int val_network(json_t *root, int allow_network, const char *refusal, int *out,
		struct val_err *e);
/* root's "profile": "default" when not given, else a well-formed name that exists
 * (val_profile_exists). */
int val_profile(json_t *root, const struct cfg *cfg, const char **out, struct val_err *e);
/* 403 `forbidden` naming the field profile unless profile is one of allowed[0 .. n). */
int val_profile_allowed(const char *profile, const char (*allowed)[AUTH_PROFILE_NAME_MAX + 1],
			size_t n, struct val_err *e);

/* What a job or session keeps of its validated env object: [{name, size, sha256}]
 * as compact JSON (malloc'd), never the values. */
char *val_env_meta(const json_t *env);

#endif
