/* What the runner refuses before it creates anything for a job (a refusal ends the
 * job blocked 126, "blocked by local-process policy: <reason>"):
 *   - its re-check of what the API validated (it trusts no row blindly): the job's
 *     paths under the same rule and limit (common/pathrules.h);
 *   - the operator's command policy (runner_command_policy), described at
 *     cmdpol_parse in policy.c.
 * Pure, except cmdpol_load (reads the file) and pol_exec_chain (looks in /usr). */
#ifndef SANDBOX_POLICY_H
#define SANDBOX_POLICY_H

#include <stddef.h>

#include "config.h"
#include "store.h"

/* NULL if every path of j is fine, else the reason ("cwd is too long", ...) in why. */
const char *pol_paths(const struct cfg *cfg, const struct job *j, char *why, size_t whylen);

#define POL_PATH_MAX 256
#define POL_REASON_MAX 200
#define POL_MAX_RULES 256
#define POL_FILE_MAX 65536
#define POL_CHAIN_MAX 8

struct cmdpol_rule {
	char path[POL_PATH_MAX];
	char reason[POL_REASON_MAX + 1];
};

struct cmdpol {
	struct cmdpol_rule *rules;
	size_t n;
};

/* Parses a policy file's text: 0, or -1 with "line N: why" in err. */
int cmdpol_parse(const char *text, size_t len, struct cmdpol *p, char *err, size_t errlen);
void cmdpol_free(struct cmdpol *p);
/* Reads and parses path, a trusted file: a regular file (not a link) owned by root,
 * not group or world writable, in a directory of the same kind. 0 or -1 (err). */
int cmdpol_load(const char *path, struct cmdpol *p, char *err, size_t errlen);

/* The first word of a shell command, after any NAME=value assignments: what the
 * shell runs. "" when it starts with something else (a quote, a substitution, ...). */
void pol_first_word(const char *command, char *out, size_t outlen);
/* Lexically normalized absolute path (".", "..", "//" resolved): 0, -1 if too long or
 * not absolute. */
int pol_normalize(const char *in, char *out, size_t outlen);
/* The executable word names, as the sandbox's PATH (/usr/local/bin:/usr/bin:/bin)
 * finds it, then each path its symbolic links lead to while they stay inside /usr:
 * the number of paths in chain (0: not found, or a relative path: the job's own). */
size_t pol_exec_chain(const char *word, char chain[][POL_PATH_MAX], size_t max);
/* The reason of the first rule naming a path of chain, or NULL. */
const char *cmdpol_match(const struct cmdpol *p, char chain[][POL_PATH_MAX], size_t n);
/* The reason p refuses j for (its argv[0], or its command's first word), or NULL. */
const char *cmdpol_check(const struct cmdpol *p, const struct job *j);

#endif
