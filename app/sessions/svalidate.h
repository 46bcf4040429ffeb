/* Validation of the session API's inputs (pure but for the profile look-up that
 * val_profile_exists does): the session-create and command-create bodies, the kill
 * and stdin bodies, file paths and modes, status names. Every rejection names the
 * field, as app/jobs/validate.c does for jobs, and the same rules apply where the fields
 * are the same (env, files, metadata, network, profile, command/argv, cwd, stdin). */
#ifndef SANDBOX_SVALIDATE_H
#define SANDBOX_SVALIDATE_H

#include <jansson.h>
#include <stddef.h>

#include "config.h"
#include "validate.h"

#define SV_MAX_TAG_BYTES 255
#define SV_MAX_LIVE_COMMANDS 256 /* non-terminal commands in one session */

/* The session-wide limits, in the order of sv_limit_names. */
enum sv_limit { SV_MEMORY_MB, SV_PIDS, SV_CPU_SECONDS, SV_DISK_MB, SV_LIMIT_COUNT };
extern const char *const sv_limit_names[SV_LIMIT_COUNT];

struct sess_req {
	json_t *root;         /* owns what is borrowed below */
	long long limits[SV_LIMIT_COUNT];
	long long idle_seconds, max_seconds;
	json_t *env;          /* object of strings, never NULL */
	json_t *metadata;     /* object of strings, never NULL */
	int network;
	const char *profile;  /* "default" when not given */
	struct job_file *files;
	size_t nfiles;
};

struct cmd_req {
	json_t *root;
	const char *command;  /* NULL when argv is used */
	json_t *argv;         /* NULL when command is used */
	json_t *env;          /* never NULL */
	const char *cwd;      /* "" = workspace root */
	unsigned char *stdin_buf;
	size_t stdin_len;
	int stdin_open;
	long long timeout_seconds; /* 0: until the session ends */
	long long output_bytes;
	const char *tag;      /* NULL: none */
};

/* POST /v1/sessions. eff: the config with the key's own maxima applied
 * (val_key_limits). 0, or -1 with err filled in (release req with sv_session_free
 * either way). */
int sv_session(const char *body, size_t len, const struct cfg *eff, int allow_network,
	       struct sess_req *req, struct val_err *err);
void sv_session_free(struct sess_req *req);
/* 403 field profile unless the key lists req->profile. */
int sv_session_profile(const struct sess_req *req,
		       const char (*allowed)[AUTH_PROFILE_NAME_MAX + 1], size_t n,
		       struct val_err *err);

/* POST /v1/sessions/{id}/commands. session_max_seconds bounds timeout_seconds. */
int sv_command(const char *body, size_t len, const struct cfg *eff, long long session_max_seconds,
	       struct cmd_req *req, struct val_err *err);
void sv_command_free(struct cmd_req *req);

/* {"signal": "TERM"|"KILL"|"INT"|"HUP"|"QUIT"|"USR1"|"USR2" (optionally "SIG"-prefixed)
 * or an integer 1..64}; an empty body or no signal is TERM. */
int sv_kill(const char *body, size_t len, int *signo, struct val_err *err);
/* {"data" | "data_base64", "close": bool}: *data malloc'd (free it), at most max bytes. */
int sv_stdin(const char *body, size_t len, long long max, unsigned char **data, size_t *dlen,
	     int *close_after, struct val_err *err);

/* A decoded file path of the file API: the job path rule (pr_job_path). NULL when
 * fine, else the reason. */
const char *sv_file_path(const struct cfg *cfg, const char *path);
/* "0644" / "644" / "755": octal 0..0777 -> 0, else -1. */
int sv_file_mode(const char *s, int *mode);
/* "true"/"false" (and "1"/"0") -> 0, else -1. */
int sv_bool(const char *s, int *out);

/* Known statuses (the schema's comments); 1 when name is one. */
int sv_session_status(const char *name);
int sv_command_status(const char *name);
/* The session statuses that mean it is alive: starting, ready. */
int sv_session_live(const char *name);
/* The command statuses that mean it has ended (all but queued and running). */
int sv_command_terminal(const char *name);

#endif
