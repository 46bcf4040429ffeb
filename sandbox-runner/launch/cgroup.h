/* Per-slot cgroups: v2 where the unified hierarchy has the controllers, v1
 * (memory, pids, cpuacct, freezer) otherwise. Which one was used is reported in
 * every job's diagnostics.
 *
 * v2 layout (delegation): <own> is the cgroup the runner was started in (its
 * /proc/self/cgroup, e.g. systemd's system.slice/sandbox-runner.service). The runner
 * moves itself into the leaf <own>/runner (its supervisors inherit it), turns on
 * memory and pids level by level from the top of the hierarchy it sees down to
 * <own>/<runner_cgroup_name>, and the slots are <own>/<runner_cgroup_name>/slot-N:
 * everything it creates stays inside its own subtree. */
#ifndef SANDBOX_CGROUP_H
#define SANDBOX_CGROUP_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct cg {
	int version; /* 0: none, 1, 2 */
	char v2[PATH_MAX];
	char mem[PATH_MAX], pids[PATH_MAX], cpu[PATH_MAX], freezer[PATH_MAX];
};

struct cg_usage {
	long long cpu_ns;
	long long mem_peak;
	long long oom_kills;
	long long pids_denied; /* forks refused by pids.max */
};

#define CG_V2_LEAF "runner"

struct cg_v2_layout {
	char own[PATH_MAX];     /* relative to the hierarchy, "/" for its root */
	char own_dir[PATH_MAX]; /* /sys/fs/cgroup<own> */
	char leaf[PATH_MAX];    /* <own_dir>/runner: the runner's processes */
	char base[PATH_MAX];    /* <own_dir>/<name>: the slots' parent */
	int moved;              /* this call moved the process into the leaf */
	int writes;             /* cgroup.subtree_control writes this call made */
};

/* v2: this process's cgroup from /proc/self/cgroup ("0::" line). -1 with errno
 * (EXDEV: a cgroup namespace that sees the hierarchy from outside). */
int cg_v2_self(char *path, size_t n);
/* v2: the layout above, made or checked (idempotent; no write where nothing is
 * missing). Every failing write is logged and named in err (file, value, errno).
 * 0 or -1. */
int cg_v2_prepare(const char *name, struct cg_v2_layout *l, char *err, size_t errlen);
/* Whether a process in cgroup self (cg_v2_self's form) is outside own's leaf
 * (<own>/runner): 1 moved, 0 in it. Pure. */
int cg_v2_moved(const char *self, const char *own);
/* v2: the process still in the leaf of the first layout it made? 0 yes (or no layout
 * made: v1, rlimit-only), 1 it had been moved elsewhere and is back now (logged:
 * event=cgroup_moved_back from=... to=...), -1 it could not move back (logged:
 * event=cgroup_moved, err names the cgroup it is in and why). cg_v2_prepare does the
 * same first, so a slot is never made under a cgroup the process was moved to. */
int cg_v2_stay(char *err, size_t errlen);
/* 2, 1 or 0 (no usable controllers). */
int cg_detect(void);
/* Creates (after cleaning a stale one) the slot's cgroup with the limits. */
int cg_setup(struct cg *g, const char *name, int slot, long long mem_bytes, long long pids,
	     char *err, size_t errlen);
/* Lowers a set-up slot's memory (= memory+swap) and pids limits (a prewarmed slot,
 * warm.h): 0, or -1 with err naming the file. */
int cg_set_limits(const struct cg *g, long long mem_bytes, long long pids, char *err,
		  size_t errlen);
/* fork(); on v2 the child is born in the slot's cgroup (clone3 with
 * CLONE_INTO_CGROUP) and *placed says so; otherwise (v1, an older kernel) a plain
 * fork and *placed = 0: the child joins with cg_enter. */
pid_t cg_fork(const struct cg *g, int *placed);
/* How the last cg_fork of this process placed its child, for the job's diagnostics:
 * "clone3" (born in the slot's cgroup), "procs" (plain fork, the child writes its
 * pid to cgroup.procs before exec) or "none" (no cgroup, or no fork yet). */
const char *cg_placement(void);
/* Moves the calling process in (used in the child before exec). */
int cg_enter(const struct cg *g);
/* Kills every process in the cgroup and waits for it to empty: 0, or -1. */
int cg_kill_all(const struct cg *g);
int cg_nprocs(const struct cg *g);
void cg_read(const struct cg *g, struct cg_usage *u);
/* Kill, then remove the directories: 0, or -1 if anything is left. */
int cg_destroy(struct cg *g);
const char *cg_describe(const struct cg *g);
/* The value of key in "key value" lines (memory.events, pids.events, cpu.stat,
 * memory.stat, memory.oom_control), or -1 if absent. Pure. */
long long cg_key(const char *text, const char *key);

/* Whether word is one of the space-separated words of list (cgroup.controllers,
 * cgroup.subtree_control). Pure. */
int cg_has_word(const char *list, const char *word);

#endif
