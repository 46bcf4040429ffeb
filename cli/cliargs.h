/* The pure parts of the command-line client (cli/sandbox.c): argument forms, name
 * checks and the exit-code rule. No I/O, no libcurl: linked into the unit tests. */
#ifndef SANDBOX_CLIARGS_H
#define SANDBOX_CLIARGS_H

#include <stddef.h>

/* Exit codes of `sandbox` itself (documented in its --help). `run` and
 * `session exec` otherwise exit with the command's own code. */
enum {
	CLI_EXIT_USAGE = 2,  /* bad arguments or configuration (no token, bad URL) */
	CLI_EXIT_API = 3,    /* the API answered an error, or the transport failed */
	CLI_EXIT_LOCAL = 4,  /* a local file could not be read or written */
};

/* NAME=VALUE: name is [a-z][a-z0-9_]* (at most 63 bytes), value a decimal integer
 * 0..2^53 (what a JSON number carries exactly). 0 and name copied into name[64],
 * or -1 with a reason. */
int cli_parse_limit(const char *arg, char name[64], long long *value, const char **why);

/* NAME=VALUE for --env: name is [A-Za-z_][A-Za-z0-9_]* (at most 255 bytes); the value
 * is everything after the first '=' (may be empty). *name_len set; the value starts
 * at arg + *name_len + 1. 0, or -1 with a reason (never quoting the value). */
int cli_parse_env(const char *arg, size_t *name_len, const char **why);

/* -f FILE[:PATH]: with a ':', FILE is before the first one and PATH after it; without,
 * PATH is FILE's last component. *file_len set, *path points into arg. The PATH must be
 * a relative, normalized path (cli_rel_path). 0, or -1 with a reason. */
int cli_split_file(const char *arg, size_t *file_len, const char **path, const char **why);

/* A path the client writes under a local directory (an artifact) or names in the
 * sandbox: relative, non-empty components, no '.' or '..', no control byte or
 * backslash, at most 4096 bytes. NULL when fine, else the reason. */
const char *cli_rel_path(const char *p);

/* Job and session ids: the canonical lower-case UUID form the API issues. Checked
 * before an id goes into a URL path. */
int cli_is_id(const char *s);

/* "ID:PATH" names a session file: 1 and *path set when s is a session id, ':', and a
 * non-empty path; 0 for a local name. */
int cli_remote_spec(const char *s, char id[37], const char **path);

/* The exit code `run` returns for a finished job: its result's exit_code (0..255),
 * else 125 (the service failed or the job never ran: cancelled with no result, lost
 * without one). has_code is 0 when exit_code was null. */
int cli_exit_for(int has_code, long long exit_code);

#endif
