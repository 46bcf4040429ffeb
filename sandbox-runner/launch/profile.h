/* The fixed, audited sandbox profile: mount table, namespaces, environment
 * allowlist, seccomp rules and limit caps. Requests can never add to it. The operator
 * may name a few more profiles (runner_profiles_dir/NAME.profile): the same tables
 * plus read-only binds of host directories under /usr or /opt, nothing else.
 * profile.c: the tables and the bwrap arguments made from them; profile_file.c: named
 * profile files; profile_host.c: host path checks and the synthesized /etc. */
#ifndef SANDBOX_PROFILE_H
#define SANDBOX_PROFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/resource.h>

#include "config.h"
#include "scfilter.h"

#define SANDBOX_UID 1000 /* inside the user namespace */
#define PROFILE_DIGEST_LEN 72
#define PROF_NAME_MAX 64      /* [a-z0-9][a-z0-9_-]*: also a file name */
#define PROF_MAX_BINDS 16     /* read-only binds of one named profile */
#define PROF_PATH_MAX 256     /* one bind's source or destination */
#define PROF_FILE_MAX 65536   /* bytes of one profile file */
#define PROF_ENV_MAX 64       /* names in runner_env_passthrough */
#define PROF_DEFAULT "default"

struct prof_mount {
	const char *op, *src, *dst;
};

/* How a host fact in the sandbox's /proc is masked. */
enum prof_mask_kind {
	PROF_MASK_FILE, /* /dev/null bound read-only over it: opening it fails (nodev) */
	PROF_MASK_DIR,  /* an empty read-only tmpfs over it */
	PROF_MASK_DATA, /* a read-only file of the sandbox's own (--ro-bind-data) holding
			 * data, or a fresh random UUID per sandbox for PROF_MASK_UUID */
};
#define PROF_MASK_UUID "@uuid"
#define PROF_MAX_DATA_MASKS 2 /* their fds: SB_FD_DATA, SB_FD_DATA + 1 (sandbox.h) */

struct prof_mask {
	const char *path;
	enum prof_mask_kind kind;
	const char *data; /* PROF_MASK_DATA */
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
	const char *name;              /* "default", or the NAME of NAME.profile */
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
	const struct prof_mount *extra; /* a named profile's read-only binds ("@extra") */
	size_t n_extra;
};

extern const struct prof_tables prof_default;

/* A named profile: prof_default plus the read-only binds of its file. t points into
 * the struct itself: never copy one, pass its address. */
struct prof_named {
	struct prof_tables t;
	char name[PROF_NAME_MAX + 1];
	struct prof_mount binds[PROF_MAX_BINDS];
	char paths[PROF_MAX_BINDS][2][PROF_PATH_MAX];
};

/* [a-z0-9][a-z0-9_-]{0,63} */
int prof_name_valid(const char *name);
/* The text of a profile file (NUL-terminated), for profile `name`: "#" comments,
 * blank lines and `ro-bind SRC DST` lines. SRC is an existing host directory under
 * /usr or /opt (absolute, no symbolic link on the way, owned by root, not group or
 * world writable; neither under runner_state_dir nor above it or the database or
 * FastCGI socket); DST is under /usr (then an existing directory) or /opt. Anything
 * else is refused: 0, or -1 with "line N: why" in err. */
int prof_parse(const struct cfg *cfg, const char *name, const char *text,
	       struct prof_named *p, char *err, size_t errlen);
/* "default" (the compiled-in tables) or runner_profiles_dir/NAME.profile, which must
 * be a regular file owned by root and not group or world writable, in a directory
 * that is the same: 0, or -1 with err naming the file and what is wrong. */
int prof_load(const struct cfg *cfg, const char *name, struct prof_named *p, char *err,
	      size_t errlen);
/* Every NAME.profile of runner_profiles_dir loads (the runner refuses to start
 * otherwise, naming the file); "default" cannot be redefined. */
int prof_check_profiles(const struct cfg *cfg, char *err, size_t errlen);
/* runner_env_passthrough is a comma-separated list of [A-Za-z_][A-Za-z0-9_]* names
 * (at most PROF_ENV_MAX): 0, or -1 with err naming the bad entry. */
int prof_check_env(const struct cfg *cfg, char *err, size_t errlen);

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
/* Refuses host paths that are symlinks or writable by anyone but root, a bad
 * runner_env_passthrough and a profile file that does not load (prof_check_env,
 * prof_check_profiles). */
int prof_check_host(const struct cfg *cfg, char *err, size_t errlen);
/* Writes the synthesized /etc under runner_state_dir (root-owned, read-only). */
int prof_prepare_etc(const struct cfg *cfg, char *err, size_t errlen);

/* Whether mask m's path exists on this kernel (a mask of a missing path is left
 * out: bwrap would fail on it); only ENOENT from lstat counts as absent. */
int prof_mask_present(const struct prof_mask *m);
/* The content of data mask m into buf (n >= 64): its data, or a fresh random v4 UUID
 * and a newline for PROF_MASK_UUID. Its length, or -1 with errno (no randomness). */
long prof_mask_data(const struct prof_mask *m, char *buf, size_t n);

/* A network job's /etc/resolv.conf (prof_write_etc; --print-profile shows it). */
extern const char prof_net_resolv[];
/* Writes the synthesized /etc (files and the alternatives mount point) into dir, an
 * empty directory; a network job's resolv.conf names slirp4netns's resolver. 0 or
 * -1 with errno. Called in the sandbox child before it drops root (sandbox.c). */
int prof_write_etc(int dir, int network);

/* Where the workspace is mounted ("@home" in the tables: the mount point, HOME and
 * the directory commands start in): /workspace, or /home/user for a session made
 * through the E2B API (sessions.e2b; the E2B SDKs expect that home). One mount either
 * way: an E2B sandbox has no /workspace. */
#define PROF_WORKSPACE "/workspace"
#define PROF_E2B_HOME "/home/user"

/* One job's side of the bwrap arguments. */
struct json_t;
struct prof_job {
	const char *workspace, *cwd;
	long long tmp_mb;
	const struct json_t *env; /* validated names -> strings; NULL: none */
	int seccomp_fd, status_fd, block_fd; /* block_fd -1: no network */
};

/* Writes the bwrap options (NUL-separated) of profile t for job j to a memfd and
 * returns it rewound, or -1 with err. The environment: the profile's defaults, then
 * each runner_env_passthrough name the runner's own environment has (its value, read
 * now), then the job's env; a job's variable of a passed-through name is dropped
 * unless runner_env_passthrough_override = 1 (the API refuses such a job). */
int prof_job_args(const struct cfg *cfg, const struct prof_tables *t, const struct prof_job *j,
		  char *err, size_t errlen);
/* The environment bwrap would give a job of profile t with env: "NAME=value" strings
 * back to back, each NUL-terminated, appended to out (a prewarmed sandbox's stub
 * execs with it). The count, or -1 with err. */
struct strbuf;
int prof_job_env(const struct cfg *cfg, const struct prof_tables *t, const struct json_t *env,
		 struct strbuf *out, char *err, size_t errlen);
/* A session's bwrap options: prof_job_args's, plus the agent binary (agent_fd, a
 * sealed memfd the child finds at that number) as a read-only file at
 * PROF_AGENT_PATH, placed before the root is remounted read-only. The command is
 * then PROF_AGENT_PATH. */
#define PROF_AGENT_DIR "/.sandbox"
#define PROF_AGENT_PATH "/.sandbox/agent"
/* e2b: the workspace, HOME and the start directory are PROF_E2B_HOME. */
int prof_session_args(const struct cfg *cfg, const struct prof_tables *t,
		      const struct prof_job *j, int agent_fd, int e2b, char *err, size_t errlen);
/* prof_job_args with prof_default. */
int prof_bwrap_args(const struct cfg *cfg, const char *workspace, const char *cwd,
		    long long tmp_mb, const struct json_t *env, int seccomp_fd, int status_fd,
		    int block_fd, char *err, size_t errlen);

#endif
