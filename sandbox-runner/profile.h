/* The fixed, audited sandbox profile: mount table, namespaces, environment
 * allowlist, seccomp rules and limit caps. Requests can never add to it. */
#ifndef SANDBOX_PROFILE_H
#define SANDBOX_PROFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/resource.h>

#include "config.h"
#include "scfilter.h"

#define SANDBOX_UID 1000 /* inside the user namespace */
#define PROFILE_DIGEST_LEN 72

struct prof_mount {
	const char *op, *src, *dst;
};

struct prof_mask {
	const char *path;
	int dir;
};

/* An rlimit of the sandbox's processes: soft = limit << shift + soft_add (fixed
 * when lim < 0), hard likewise with hard_add; net_add more for a network job. */
struct prof_rlimit {
	int res;
	const char *name;
	int lim;              /* LIM_*, or -1: fixed */
	unsigned shift;
	long long soft_add, hard_add, net_add;
	int only_without_cgroup; /* memory and pids: the cgroup is the limit if there is one */
};

/* Everything the profile is made of. prof_bwrap_args, the sandbox child's rlimits and
 * seccomp filter use the compiled-in tables (prof_default); --print-profile and the
 * digest walk the same tables and print the arguments the builder makes from them. */
struct prof_tables {
	const char *const *ns_opts;
	size_t n_ns_opts;
	int uid;
	const struct prof_mount *mounts;
	size_t n_mounts;
	const struct prof_mask *masks;
	size_t n_masks;
	const char *const (*env)[2];
	size_t n_env;
	const struct prof_rlimit *rlimits;
	size_t n_rlimits;
	const struct sc_rule *seccomp; /* ended by a NULL syscall */
};

extern const struct prof_tables prof_default;

/* The rlimit r for a job with these effective limits. */
void prof_rlimit_value(const struct prof_rlimit *r, const long long *limits, int network,
		       rlim_t *soft, rlim_t *hard);

void prof_print(FILE *f, const struct cfg *cfg);
/* "sha256:<hex of prof_print's text>" */
int prof_digest(const struct cfg *cfg, char out[PROFILE_DIGEST_LEN]);
/* The same for other tables (the unit tests change one entry at a time). */
void prof_print_tables(FILE *f, const struct cfg *cfg, const struct prof_tables *t);
int prof_digest_tables(const struct cfg *cfg, const struct prof_tables *t,
		       char out[PROFILE_DIGEST_LEN]);
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
