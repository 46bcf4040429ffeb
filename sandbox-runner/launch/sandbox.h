/* Starting bwrap for one job as the slot's unprivileged uid, never as root. */
#ifndef SANDBOX_SANDBOX_H
#define SANDBOX_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#include "cgroup.h"
#include "joblimits.h"
#include "sbfd.h"

struct sb_spawn {
	const char *bwrap;
	uid_t uid;
	const struct cg *cg;      /* NULL: rlimits only */
	const long long *limits;  /* LIM_COUNT effective limits */
	int args_fd, seccomp_fd, status_fd, stdin_fd, stdout_fd, stderr_fd;
	int block_fd;             /* -1: none */
	const char *etc_dir;      /* the profile's /etc source: a private tmpfs goes over
				   * it in the child (prof_write_etc); NULL: as it is */
	char *const *cmd;         /* the command: argv after "--" */
	int has_agent;            /* sessions: agent_fd goes to SB_FD_AGENT (jobs: 0) */
	int agent_fd;
	int ctl_fd;               /* a prewarmed sandbox: to SB_FD_CTL (needs has_agent) */
};

/* Forks; the child joins the cgroup, mounts its private /etc, sets rlimits, drops to uid, sets
 * no_new_privs, closes every other fd and execs bwrap. -1 with errno (the failing
 * step's) and err ("step: message") when the child could not get as far as exec. */
pid_t sb_spawn(const struct sb_spawn *s, char *err, size_t errlen);
/* SIGKILLs every process of uid (from a child that becomes uid: kill(-1)). */
void sb_kill_uid(uid_t uid);

#endif
