/* The fixed, audited sandbox profile: mount table, namespaces, environment
 * allowlist, seccomp rules and limit caps. Requests can never add to it. */
#ifndef SANDBOX_PROFILE_H
#define SANDBOX_PROFILE_H

#include <stdio.h>

#include "config.h"

#define SANDBOX_UID 1000 /* inside the user namespace */
#define PROFILE_DIGEST_LEN 72

void prof_print(FILE *f, const struct cfg *cfg);
/* "sha256:<hex of prof_print's text>" */
int prof_digest(const struct cfg *cfg, char out[PROFILE_DIGEST_LEN]);
/* Refuses host paths that are symlinks or writable by anyone but root. */
int prof_check_host(const struct cfg *cfg, char *err, size_t errlen);
/* Writes the synthesized /etc under runner_state_dir (root-owned, read-only). */
int prof_prepare_etc(const struct cfg *cfg, char *err, size_t errlen);

/* Writes the synthesized /etc (files and the alternatives mount point) into dir, an
 * empty directory; a network job's resolv.conf names slirp4netns's resolver. 0 or
 * -1 with errno. Called in the sandbox child before it drops root (sandbox.c). */
int prof_write_etc(int dir, int network);

/* Appends the profile's bwrap options (NUL-separated) for one job to a memfd and
 * returns it rewound; env is a JSON object of validated names -> strings. */
struct json_t;
int prof_bwrap_args(const struct cfg *cfg, const char *workspace, const char *cwd,
		    long long tmp_mb, const struct json_t *env, int seccomp_fd, int status_fd,
		    int block_fd, char *err, size_t errlen);

#endif
