/* One slot to one running sandbox (launch.h): the slot's workspace and cgroup, the
 * sandbox's descriptors, bwrap with the start retry, its status, the network, the
 * kill, the cleanup and the failure facts, for the job supervisor, the prewarm holder
 * and the session supervisor alike. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault.h"
#include "log.h"
#include "net.h"
#include "retry.h"
#include "util.h"
#include "workspace.h"

#define START_BACKOFF_CAP_MS 1000 /* the reference's cap */
#define AGENT_MAX_BYTES (64 << 20)

void launch_init(struct launch *l, const struct cfg *cfg, enum launch_kind kind, int slot)
{
	memset(l, 0, sizeof *l);
	l->cfg = cfg;
	l->kind = kind;
	l->slot = slot;
	l->uid = (uid_t)(cfg->runner_uid_base + slot);
	snprintf(l->etc, sizeof l->etc, "%s/etc", cfg->runner_state_dir);
	l->wsfd = l->blockfd = -1;
	l->slirp = -1;
	l->cleanup_status = JS_CLEANUP_NOT_STARTED;
	bws_init(&l->bst);
}

void launch_release(struct launch *l)
{
	bws_release(&l->bst);
}

void launch_mark(const struct launch *l, const char *step)
{
	if (l->mark)
		l->mark(l->mark_ctx, step);
}

int launch_injected(const struct launch *l, const char *point, char *err, size_t errlen)
{
	int e = l->kind == LAUNCH_JOB ? fault_at(point) : 0;

	if (e == 0)
		return 0;
	snprintf(err, errlen, "injected fault: %s", retry_errname(e));
	errno = e;
	return 1;
}

int launch_fail(struct launch *l, enum job_stage stage, const char *what, const char *error)
{
	l->stage = stage;
	l->instance_status = NULL;
	snprintf(l->failure_error, sizeof l->failure_error, "%s", error);
	if (l->on_fail)
		l->on_fail(l->ctx, stage, what);
	return -1;
}

static const char *runtime_id(const struct launch *l)
{
	return l->runner_id ? l->runner_id : "local";
}

void launch_log_attempt(const struct launch *l, const char *step, int attempt, int max,
			const char *type, int retry)
{
	char a[16], m[16];

	snprintf(a, sizeof a, "%d", attempt);
	snprintf(m, sizeof m, "%d", max);
	log_kv("warn", "retry", "step", step, l->kind == LAUNCH_JOB ? "job" : "session",
	       l->id && l->id[0] ? l->id : "-", "attempt", a, "max_attempts", m, "runtime_id",
	       runtime_id(l), "error_type", type, "retry", retry ? "yes" : "no", (char *)NULL);
}

/* ---- the slot */

int launch_workspace(struct launch *l, long long disk_mb)
{
	char err[512], root[CFG_PATH_MAX + 8];

	snprintf(root, sizeof root, "%s/work", l->cfg->runner_state_dir);
	if (launch_injected(l, "workspace", err, sizeof err))
		return launch_fail(l, STAGE_CREATE, "workspace setup failed", err);
	l->wsfd = ws_create(root, l->slot, l->uid, disk_mb, l->ws_path, sizeof l->ws_path, err,
			    sizeof err);
	if (l->wsfd < 0)
		return launch_fail(l, STAGE_CREATE, "workspace setup failed", err);
	return 0;
}

int launch_cgroup(struct launch *l, long long memory_bytes, long long pids, const char *what)
{
	char err[512];

	if (launch_injected(l, "limits", err, sizeof err) ||
	    cg_setup(&l->cg, l->cfg->runner_cgroup_name, l->slot, memory_bytes, pids + 2, err,
		     sizeof err) < 0)
		return launch_fail(l, STAGE_INITIALIZE, what, err);
	l->cg_on = 1;
	return 0;
}

/* ---- the sandbox's descriptors */

void launch_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

void launch_fds_init(struct launch_fds *f)
{
	memset(f, -1, sizeof *f);
}

int launch_pipes(struct launch_fds *f, int block)
{
	if (pipe2(f->in, O_CLOEXEC) < 0 || pipe2(f->out, O_CLOEXEC) < 0 ||
	    pipe2(f->err, O_CLOEXEC) < 0 || pipe2(f->status, O_CLOEXEC) < 0 ||
	    (block && pipe2(f->block, O_CLOEXEC) < 0))
		return -1;
	return 0;
}

void launch_fds_close(struct launch_fds *f)
{
	int *fd[] = { &f->in[0], &f->in[1], &f->out[0], &f->out[1], &f->err[0], &f->err[1],
		      &f->status[0], &f->status[1], &f->sc, &f->args, &f->block[0], &f->block[1] };

	for (size_t i = 0; i < sizeof fd / sizeof fd[0]; i++)
		launch_close_fd(fd[i]);
}

void launch_keep_parent_ends(struct launch_fds *f)
{
	int *fd[] = { &f->in[0], &f->out[1], &f->err[1], &f->status[1], &f->sc, &f->args,
		      &f->block[0] };

	for (size_t i = 0; i < sizeof fd / sizeof fd[0]; i++)
		launch_close_fd(fd[i]);
	nonblock(f->in[1]), nonblock(f->out[0]), nonblock(f->err[0]), nonblock(f->status[0]);
}

void launch_sb(const struct launch *l, const struct launch_fds *f, const long long *limits,
	       char *const *cmd, struct sb_spawn *sp)
{
	*sp = (struct sb_spawn){ .bwrap = l->cfg->bwrap_path, .uid = l->uid, .etc_dir = l->etc,
				 .cg = l->cg_on ? &l->cg : NULL, .limits = limits, .block_fd = -1,
				 .cmd = cmd };
	if (f == NULL)
		return;
	sp->args_fd = f->args, sp->seccomp_fd = f->sc, sp->status_fd = f->status[1];
	sp->stdin_fd = f->in[0], sp->stdout_fd = f->out[1], sp->stderr_fd = f->err[1];
	sp->block_fd = f->block[0];
}

/* The agent binary in a sealed memfd: bwrap copies it into the sandbox, so no host
 * path of it is visible there, and nothing can change it after the check. */
int agent_memfd(const struct cfg *cfg, char *err, size_t errlen)
{
	int src = open(cfg->runner_agent_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), fd = -1;
	struct stat st;
	char buf[65536];
	ssize_t r = 0;

	if (src < 0 || fstat(src, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > AGENT_MAX_BYTES) {
		snprintf(err, errlen, "runner_agent_path is not a readable regular file (%s)",
			 src < 0 ? retry_errname(errno) : "type or size");
		goto out;
	}
	fd = memfd_create("sandbox-agent", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		goto out;
	}
	while ((r = read(src, buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR))
		if (r > 0 && write(fd, buf, (size_t)r) != r) {
			r = -1;
			break;
		}
	if (r < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
	    lseek(fd, 0, SEEK_SET) < 0) {
		snprintf(err, errlen, "copying the agent: %s", strerror(errno));
		launch_close_fd(&fd);
	}
out:
	if (src >= 0)
		close(src);
	return fd;
}

/* ---- bwrap */

pid_t launch_spawn(struct launch *l, const struct sb_spawn *sp, int retry, char *err,
		   size_t errlen)
{
	int max = (int)l->cfg->runner_start_attempts;
	char what[128];

	if (!retry)
		return sb_spawn(sp, err, errlen);
	for (int attempt = 1;; attempt++) {
		/* The wall clock counts from before the fork (the attempt that works): the
		 * command may run before this process is scheduled again on a loaded host,
		 * and that time is the job's too. */
		l->t_spawn = util_mono_ms();
		pid_t pid = launch_injected(l, "start", err, errlen) ? -1 : sb_spawn(sp, err, errlen);
		int e = errno;
		int again = pid < 0 && retry_transient(e) && attempt < max;

		if (pid > 0)
			return pid;
		launch_log_attempt(l, "command.start", attempt, max, retry_errname(e), again);
		if (!again) {
			snprintf(what, sizeof what, "sandbox start failed after %d of %d attempts (%s)",
				 attempt, max, retry_errname(e));
			return launch_fail(l, STAGE_COMMAND_START, what, err);
		}
		util_sleep_ms(retry_delay_ms(l->cfg->runner_start_backoff_ms, START_BACKOFF_CAP_MS,
					     attempt));
	}
}

void launch_read_status(struct launch *l, int *fd)
{
	char tmp[512];
	ssize_t r;

	while ((r = read(*fd, tmp, sizeof tmp)) > 0 || (r < 0 && errno == EINTR))
		if (r > 0)
			bws_feed(&l->bst, tmp, (size_t)r);
	if (r == 0) {
		bws_finish(&l->bst);
		launch_close_fd(fd);
	}
}

/* Waits up to ms for fd to be readable: 1, 0 on timeout, -1. */
static int wait_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	return r;
}

/* The sandbox's pid on the host, from bwrap's {"child-pid": N}: waits up to 10 s. */
pid_t launch_child_pid(struct launch *l, int *fd)
{
	for (int i = 0; i < 100 && !l->bst.have_pid && *fd >= 0; i++) {
		if (wait_readable(*fd, 100) < 0)
			break;
		launch_read_status(l, fd);
	}
	return l->bst.have_pid ? l->bst.child_pid : -1;
}

int launch_net_setup(struct launch *l, int *statusfd, int *blockfd)
{
	static const char *const what = "network setup failed";
	int ready[2];
	char c, err[256];
	pid_t child = launch_child_pid(l, statusfd);

	if (child <= 0)
		return launch_fail(l, STAGE_COMMAND_START, what, "sandbox did not start");
	if (pipe2(ready, O_CLOEXEC) < 0)
		return launch_fail(l, STAGE_COMMAND_START, what, strerror(errno));
	l->slirp = net_slirp_start(l->cfg, child, l->uid, ready[1], err, sizeof err);
	close(ready[1]);
	if (l->slirp < 0) {
		close(ready[0]);
		return launch_fail(l, STAGE_COMMAND_START, what, err);
	}
	if (wait_readable(ready[0], 10000) <= 0 || read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		return launch_fail(l, STAGE_COMMAND_START, what, "slirp4netns did not become ready");
	}
	close(ready[0]);
	if (net_restrict(l->cfg, child, err, sizeof err) < 0)
		return launch_fail(l, STAGE_COMMAND_START, what, err);
	if (write(*blockfd, "1", 1) != 1)
		return launch_fail(l, STAGE_COMMAND_START, what, strerror(errno));
	launch_close_fd(blockfd);
	return 0;
}

/* ---- the end */

void launch_kill(struct launch *l)
{
	if (l->pid > 0)
		kill(-l->pid, SIGKILL);
	/* With a cgroup that emptied, every process of the sandbox is gone: the uid-wide
	 * kill (a fork) is only needed where the cgroup cannot vouch for that. */
	if (l->cg_on && cg_kill_all(&l->cg) == 0 && cg_nprocs(&l->cg) == 0)
		return;
	sb_kill_uid(l->uid);
}

/* Notes the first part of cleanup that failed (failure.cleanup_error). */
static void cleanup_failed(struct launch *l, const char *what)
{
	if (!l->cleanup_error[0])
		snprintf(l->cleanup_error, sizeof l->cleanup_error, "%s", what);
}

/* We are a subreaper: the sandbox's killed processes and bwrap's orphaned pid-1 helper
 * come to us as zombies, not to the host's init (they would still count as the slot
 * uid's): reaped until none is left, at most 1 s. */
static void reap_orphans(void)
{
	for (int i = 0; i < 100; i++) {
		pid_t r = waitpid(-1, NULL, WNOHANG);
		if (r < 0)
			break;
		if (r == 0)
			util_sleep_ms(10);
	}
}

void launch_cleanup(struct launch *l)
{
	char err[160];
	int session = l->kind == LAUNCH_SESSION;

	launch_kill(l);
	launch_mark(l, "cleanup_kill");
	if (session && l->pid > 0)
		waitpid(l->pid, NULL, 0); /* a job's loop reaped it */
	/* slirp4netns: our child, in neither bwrap's process group nor the cgroup */
	if (l->slirp > 0) {
		kill(l->slirp, SIGKILL);
		waitpid(l->slirp, NULL, 0);
		l->slirp = -1;
	}
	launch_close_fd(&l->blockfd); /* after the kill: bwrap must not go on at its EOF */
	if (launch_injected(l, "cleanup", err, sizeof err))
		cleanup_failed(l, "process group: injected fault");
	if (session)
		reap_orphans();
	if (l->cg_on && cg_destroy(&l->cg) < 0)
		cleanup_failed(l, "process group: its cgroup could not be emptied and removed");
	launch_mark(l, "cg_destroy");
	if (!session)
		reap_orphans();
	launch_close_fd(&l->wsfd);
	if (l->ws_path[0] && launch_injected(l, "ws_cleanup", err, sizeof err))
		cleanup_failed(l, "workspace: injected fault");
	else if (l->ws_path[0] && ws_destroy(l->ws_path) < 0) {
		snprintf(err, sizeof err, "workspace: not removed (%s)", retry_errname(errno));
		cleanup_failed(l, err);
	}
	launch_mark(l, "ws_destroy");
	l->cleanup_status = l->cleanup_error[0] ? JS_CLEANUP_FAILED : JS_CLEANUP_COMPLETED;
}

/* failure.instance_status: how far the sandbox got before the service failed. */
static const char *instance_status(const struct launch *l)
{
	if (l->instance_status)
		return l->instance_status;
	switch (l->stage) {
	case STAGE_CREATE: return JS_INSTANCE_NOT_CREATED;
	case STAGE_NONE: return JS_INSTANCE_EXITED;
	default: return JS_INSTANCE_CREATED;
	}
}

json_t *launch_failure_json(const struct launch *l)
{
	int failed = l->stage != STAGE_NONE && l->stage != STAGE_POLICY;

	if (!failed && !l->cleanup_error[0])
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s}", "stage",
			 js_stage_name(failed ? l->stage : STAGE_CLEANUP), "instance_status",
			 instance_status(l), "runtime_id", runtime_id(l), "cleanup_status",
			 l->cleanup_status, "cleanup_error",
			 l->cleanup_error[0] ? l->cleanup_error : NULL, "error",
			 failed ? l->failure_error : l->cleanup_error);
}
