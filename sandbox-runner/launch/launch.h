/* One slot to one running sandbox, the same for a job, a prewarmed job sandbox and a
 * session: prepare the slot (workspace tmpfs, cgroup and its limits), the sandbox's
 * descriptors, spawn bwrap as the slot uid with the profile's arguments and the
 * caller's first process (with the start retry), read bwrap's status, set up the
 * network, kill every process of the slot, clean the slot up, and the failure facts
 * (failure.stage, instance_status, cleanup_status, cleanup_error) of what failed on
 * the way. The callers keep what is theirs: which profile and arguments, the job's
 * files or the session's, and the words a failure ends in (a job's diagnostic, a
 * session's end reason: on_fail). */
#ifndef SANDBOX_LAUNCH_H
#define SANDBOX_LAUNCH_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "bwstatus.h"
#include "cgroup.h"
#include "config.h"
#include "jobstate.h"
#include "sandbox.h"

/* Where the two kinds differ, each keeps its own way. */
enum launch_kind {
	LAUNCH_JOB,     /* log lines say job=; the fault points (fault.h) apply; bwrap is
			 * reaped by the job's loop; the cgroup goes before the orphans are
			 * reaped */
	LAUNCH_SESSION  /* log lines say session=; no fault points; cleanup waits for
			 * bwrap and reaps the orphans before it removes the cgroup */
};

struct launch {
	const struct cfg *cfg;
	enum launch_kind kind;
	int slot;
	uid_t uid;                 /* runner_uid_base + slot */
	const char *id;            /* the job's or session's id, for log lines */
	const char *runner_id;     /* failure.runtime_id; NULL: "local" */
	char etc[CFG_PATH_MAX + 8];  /* the profile's /etc source (sb_spawn etc_dir) */
	char ws_path[CFG_PATH_MAX + 64];
	int wsfd;
	struct cg cg;
	int cg_on;
	pid_t pid;                 /* bwrap, 0 before the spawn */
	pid_t slirp;               /* network: slirp4netns, or -1 */
	int blockfd;               /* a session's --block-fd end, closed after the kill */
	struct bw_status bst;      /* bwrap's --json-status-fd */
	double t_spawn;            /* right before the fork that worked, 0 before any */
	/* the failure facts */
	enum job_stage stage;          /* STAGE_NONE: the service did not fail */
	const char *instance_status;   /* NULL: as the stage says (launch_failure_json) */
	char failure_error[600];
	const char *cleanup_status;    /* JS_CLEANUP_*: not_started, completed, failed */
	char cleanup_error[200];       /* what failed in cleanup, "" if nothing */
	/* the caller's words for a failure at stage (launch_fail) */
	void (*on_fail)(void *ctx, enum job_stage stage, const char *what);
	void *ctx;
	/* the benchmark's hook after each step (supervise.h sup_probe), or NULL */
	void (*mark)(void *ctx, const char *step);
	void *mark_ctx;
};

/* The sandbox's descriptors; ours are close-on-exec, the child's ends are placed by
 * sb_spawn. */
struct launch_fds {
	int in[2], out[2], err[2], status[2], block[2], sc, args;
};

void launch_init(struct launch *l, const struct cfg *cfg, enum launch_kind kind, int slot);
void launch_release(struct launch *l);
void launch_mark(const struct launch *l, const char *step);
/* An injected fault at point (the test build, a job only): 1 with errno and err set. */
int launch_injected(const struct launch *l, const char *point, char *err, size_t errlen);
/* The service failed at stage: the facts, then the caller's words. -1. */
int launch_fail(struct launch *l, enum job_stage stage, const char *what, const char *error);
/* One attempt of step, logged as the reference does (E2B_DIAGNOSTIC): step, id,
 * attempt, max, runtime, error type (a class, never a job's data), retry yes/no. */
void launch_log_attempt(const struct launch *l, const char *step, int attempt, int max,
			const char *type, int retry);

/* The slot's workspace: a tmpfs of disk_mb at ws_path, wsfd. 0, or -1 (failed at
 * stage create: "workspace setup failed"). */
int launch_workspace(struct launch *l, long long disk_mb);
/* The slot's cgroup with its limits (pids + 2: bwrap's monitor and its pid 1 live in
 * it too). 0, or -1 (failed at stage initialize, in the caller's words what). */
int launch_cgroup(struct launch *l, long long memory_bytes, long long pids, const char *what);

/* Closes *fd if open; -1 after. */
void launch_close_fd(int *fd);
/* All -1. */
void launch_fds_init(struct launch_fds *f);
/* stdin, stdout, stderr and status pipes (and block, for a network sandbox): 0, or -1
 * with errno. */
int launch_pipes(struct launch_fds *f, int block);
void launch_fds_close(struct launch_fds *f);
/* After the spawn: our copies of the child's ends must go, or EOF never comes; ours
 * become non-blocking for the pump. */
void launch_keep_parent_ends(struct launch_fds *f);
/* The sb_spawn of this slot for cmd with limits: bwrap, uid, /etc, cgroup and f's
 * child ends (f NULL: the caller places the descriptors). */
void launch_sb(const struct launch *l, const struct launch_fds *f, const long long *limits,
	       char *const *cmd, struct sb_spawn *sp);
/* runner_agent_path in a sealed memfd (close-on-exec): a session's agent, or the exec
 * stub of a prewarmed sandbox (warm.h). The fd, or -1 with err. */
int agent_memfd(const struct cfg *cfg, char *err, size_t errlen);

/* Starts bwrap: with retry, as the reference starts its sandbox (up to
 * runner_start_attempts attempts while the errno says transient, capped exponential
 * backoff, one log line per attempt; when all fail, the failure at stage
 * command_start), t_spawn right before each fork; without, once and nothing recorded
 * (a prewarm: its caller logs err). The pid, or -1. */
pid_t launch_spawn(struct launch *l, const struct sb_spawn *sp, int retry, char *err,
		   size_t errlen);
/* Takes what bwrap's status pipe has now into bst; closes it at EOF. */
void launch_read_status(struct launch *l, int *fd);
/* The sandbox's pid on the host (bwrap's child: its namespaces), read from bwrap's
 * status fd (*statusfd) within 10 s; -1 when bwrap never said. */
pid_t launch_child_pid(struct launch *l, int *statusfd);
/* Network sandboxes: bwrap is blocked before exec until slirp4netns has configured
 * tap0 in the sandbox's network namespace; then *blockfd is written and closed.
 * 0, or -1 (failed at stage command_start: "network setup failed"). */
int launch_net_setup(struct launch *l, int *statusfd, int *blockfd);

/* Every process of the slot: bwrap's process group, the cgroup, the slot uid. */
void launch_kill(struct launch *l);
/* Kills, reaps, removes the cgroup and the workspace; cleanup_status says how it went. */
void launch_cleanup(struct launch *l);
/* failure.*: only when the service failed (a stage, or cleanup); a policy refusal is
 * the job's outcome, not one. NULL when nothing failed. */
json_t *launch_failure_json(const struct launch *l);

#endif
