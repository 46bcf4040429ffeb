/* Starting bwrap as the slot's unprivileged uid, never as root (see sandbox.h). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile.h"

#define SB_FD_ERR 6

/* What the child reports when it cannot get as far as exec: the errno travels as a
 * number, so the parent can tell a transient fault from a permanent one. */
struct child_err {
	int err;
	char step[60];
};

/* The child's report pipe: where it was forked, SB_FD_ERR once place_fds ran. */
static int err_fd = -1;

static void __attribute__((noreturn)) child_fail(const char *step)
{
	struct child_err ce = { .err = errno };

	snprintf(ce.step, sizeof ce.step, "%s", step);
	if (write(err_fd, &ce, sizeof ce) < 0)
		_exit(126);
	_exit(126);
}

/* The profile's rlimit table (profile.c): the same rows --print-profile shows. */
static void set_rlimits(const struct sb_spawn *s)
{
	const struct prof_tables *t = &prof_default;

	for (size_t i = 0; i < t->n_rlimits; i++) {
		const struct prof_rlimit *r = &t->rlimits[i];
		struct rlimit rl;

		/* with a cgroup, pids.max and memory.max are the limits, and they are the
		 * ones whose hits we can see and report */
		if (s->cg && r->only_without_cgroup)
			continue;
		prof_rlimit_value(r, s->limits, s->block_fd >= 0, &rl.rlim_cur, &rl.rlim_max);
		if (setrlimit(r->res, &rl) < 0)
			child_fail(r->name);
	}
}

/* The profile's data masks (profile.c: the kernel command line, a random boot_id),
 * one memfd each, for bwrap's --ro-bind-data SB_FD_DATA + k; -1 where the kernel
 * lacks the path (prof_job_args leaves its mask out then). Made here, so a job, a
 * session and a prewarmed sandbox each get their own, whoever built the arguments. */
static void data_masks(int fds[PROF_MAX_DATA_MASKS])
{
	const struct prof_tables *t = &prof_default;
	int k = 0;

	for (size_t i = 0; i < t->n_masks && k < PROF_MAX_DATA_MASKS; i++) {
		const struct prof_mask *m = &t->masks[i];
		char data[64];
		long n;

		if (m->kind != PROF_MASK_DATA)
			continue;
		fds[k] = -1;
		if (!prof_mask_present(m)) {
			k++;
			continue;
		}
		if ((n = prof_mask_data(m, data, sizeof data)) < 0 || (size_t)n >= sizeof data)
			child_fail("data mask");
		if ((fds[k] = memfd_create("sandbox-mask", MFD_CLOEXEC)) < 0 ||
		    write(fds[k], data, (size_t)n) != n || lseek(fds[k], 0, SEEK_SET) < 0)
			child_fail("data mask memfd");
		k++;
	}
	while (k < PROF_MAX_DATA_MASKS)
		fds[k++] = -1;
}

/* Moves fds to their fixed numbers without clobbering one another; an absent
 * optional one (block, agent, ctl, a data mask) leaves its number closed. The
 * highest placed. */
static int place_fds(const struct sb_spawn *s, int errw, const int data[PROF_MAX_DATA_MASKS])
{
	int ctl = s->has_agent && s->ctl_fd > 0 ? s->ctl_fd : -1;
	int src[] = { s->stdin_fd, s->stdout_fd, s->stderr_fd, s->args_fd, s->seccomp_fd,
		      s->status_fd, errw, s->block_fd, s->has_agent ? s->agent_fd : -1, ctl,
		      data[0], data[1] };
	_Static_assert(PROF_MAX_DATA_MASKS == 2 && SB_FD_DATA == 10,
		       "src above lists the data masks' fds from SB_FD_DATA");
	int tmp[12], n = 12;

	for (int i = 0; i < n; i++) {
		tmp[i] = src[i] < 0 ? -1 : fcntl(src[i], F_DUPFD, 100);
		if (src[i] >= 0 && tmp[i] < 0)
			child_fail("dup");
	}
	for (int i = 0; i < n; i++) {
		if (tmp[i] < 0) {
			close(i); /* an optional fd left out: its number must not leak in */
			continue;
		}
		if (dup2(tmp[i], i) < 0)
			child_fail("dup2");
		close(tmp[i]);
	}
	/* fd 6 reports failures to the parent and must vanish on exec. */
	err_fd = SB_FD_ERR;
	for (int i = 0; i < n; i++)
		if (tmp[i] >= 0)
			fcntl(i, F_SETFD, i == SB_FD_ERR ? FD_CLOEXEC : 0);
	return n - 1;
}

/* close_range(2), or a loop where the kernel (or valgrind) lacks it; NOFILE is
 * already 1024 here. */
static int close_from(int lowfd)
{
	if (syscall(SYS_close_range, lowfd, ~0U, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
	for (int fd = lowfd; fd < 1024; fd++)
		close(fd);
	return 0;
}

/* The sandbox's /etc: bwrap binds etc_dir, and a bind from the host's disk would
 * show the host path (the state directory, a checkout) in the job's
 * /proc/self/mountinfo. So this child, still root, gets a mount namespace of its own
 * (slave: nothing propagates back to the host) with a fresh read-only tmpfs over
 * etc_dir holding the synthesized files; bwrap inherits it, the host never sees it,
 * and it ends with the sandbox. */
static void private_etc(const struct sb_spawn *s)
{
	const unsigned long fl = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	int fd;

	if (unshare(CLONE_NEWNS) < 0)
		child_fail("unshare mount namespace");
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		child_fail("mount propagation");
	if (mount("sandbox-etc", s->etc_dir, "tmpfs", fl, "size=64k,nr_inodes=64,mode=0755") < 0)
		child_fail("mount tmpfs for /etc");
	fd = open(s->etc_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || prof_write_etc(fd, s->block_fd >= 0) < 0)
		child_fail("writing /etc");
	close(fd);
	if (mount(NULL, s->etc_dir, NULL, MS_REMOUNT | MS_RDONLY | fl, NULL) < 0)
		child_fail("remount /etc read-only");
}

static void __attribute__((noreturn)) child(const struct sb_spawn *s, int errw, int placed)
{
	char *argv[512];
	char *envp[] = { NULL };
	char fdnum[16];
	size_t n = 0;

	err_fd = errw;
	if (setsid() < 0)
		child_fail("setsid");
	if (s->cg && !placed && cg_enter(s->cg) < 0)
		child_fail("cgroup placement");
	if (s->etc_dir)
		private_etc(s);
	set_rlimits(s);
	int data[PROF_MAX_DATA_MASKS];
	data_masks(data);
	int top = place_fds(s, errw, data);
	if (setresgid(s->uid, s->uid, s->uid) < 0)
		child_fail("setresgid");
	if (setgroups(0, NULL) < 0)
		child_fail("setgroups");
	if (setresuid(s->uid, s->uid, s->uid) < 0)
		child_fail("setresuid");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail("no_new_privs");
	if (close_from(top + 1) < 0)
		child_fail("close_range");
	snprintf(fdnum, sizeof fdnum, "%d", SB_FD_ARGS);
	argv[n++] = (char *)"bwrap";
	argv[n++] = (char *)"--args";
	argv[n++] = fdnum;
	argv[n++] = (char *)"--";
	for (size_t i = 0; s->cmd[i] && n + 1 < sizeof argv / sizeof argv[0]; i++)
		argv[n++] = s->cmd[i];
	argv[n] = NULL;
	signal(SIGPIPE, SIG_DFL);
	execve(s->bwrap, argv, envp);
	child_fail("exec bwrap");
}

pid_t sb_spawn(const struct sb_spawn *s, char *err, size_t errlen)
{
	int p[2], e;
	pid_t pid;
	struct child_err ce;
	ssize_t r;
	int placed;

	if (pipe2(p, O_CLOEXEC) < 0) {
		e = errno;
		snprintf(err, errlen, "pipe: %s", strerror(e));
		errno = e;
		return -1;
	}
	pid = cg_fork(s->cg, &placed);
	if (pid < 0) {
		e = errno;
		snprintf(err, errlen, "fork: %s", strerror(e));
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		child(s, p[1], placed);
	}
	close(p[1]);
	do
		r = read(p[0], &ce, sizeof ce);
	while (r < 0 && errno == EINTR);
	close(p[0]);
	if (r == (ssize_t)sizeof ce) {
		ce.step[sizeof ce.step - 1] = '\0';
		snprintf(err, errlen, "%s: %s", ce.step, strerror(ce.err));
		waitpid(pid, NULL, 0);
		errno = ce.err;
		return -1;
	}
	return pid;
}

void sb_kill_uid(uid_t uid)
{
	pid_t pid;

	if (uid == 0)
		return; /* never: kill(-1) as root would end the host */
	pid = fork();
	if (pid == 0) {
		if (setresgid(uid, uid, uid) < 0 || setgroups(0, NULL) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			_exit(1);
		/* Every process of this uid but ourselves: the whole job, even the ones
		 * that left its session or process group. */
		kill(-1, SIGKILL);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}
