/* The exec stub of a prewarmed sandbox (stubproto.h): `sandbox-agent --exec-stub`,
 * run by bwrap as /proc/self/fd/8 (a sealed memfd of the agent binary: no host path
 * and no extra mount in the sandbox). It is bwrap's command, so bwrap has already
 * done everything a cold launch does before its execvp: namespaces, uid, mounts,
 * capabilities dropped, no_new_privs, seccomp, --chdir /workspace. It reads one spec
 * from fd 9, applies the job's rlimits (lowering the prewarm ones), changes to the
 * job's cwd, replaces its environment and execvp()s the command in place, exactly
 * where bwrap would have: the job is bwrap's child with the same pid, status and
 * signals as a cold one. A failure before the exec is reported as a step and an
 * errno on fd 9, then exit 1 (what bwrap's own die_with_error exits with). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "stubproto.h"
#include "stub.h"

extern char **environ;

static void __attribute__((noreturn)) fail(int step, int err)
{
	struct stub_fail f = { step, err };

	if (write(STUB_FD_CTL, &f, sizeof f) < 0)
		_exit(1);
	_exit(1);
}

/* The whole spec, until the host shuts its side: its length, or -1. */
static ssize_t read_spec(char *buf, size_t cap)
{
	size_t n = 0;

	for (;;) {
		ssize_t r = read(STUB_FD_CTL, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return (ssize_t)n;
		n += (size_t)r;
		if (n == cap)
			return -1;
	}
}

/* Points v[0..count) at consecutive strings of [*p, end): 0, or -1. */
static int take_strings(char **p, const char *end, char **v, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++) {
		char *nul = memchr(*p, '\0', (size_t)(end - *p));
		if (nul == NULL)
			return -1;
		v[i] = *p;
		*p = nul + 1;
	}
	v[count] = NULL;
	return 0;
}

int stub_main(void)
{
	static char buf[STUB_SPEC_MAX];
	static char *argv[STUB_ARG_MAX / 2], *envp[STUB_ARG_MAX / 2];
	struct stub_hdr h;
	const struct stub_rl *rl;
	char *p, *end, *cwd[2];
	ssize_t n = read_spec(buf, sizeof buf);

	if (n == 0)
		_exit(0); /* the holder went away before a job came: nothing to run */
	if (n < (ssize_t)sizeof h)
		fail(STUB_STEP_SPEC, EINVAL);
	memcpy(&h, buf, sizeof h);
	if (memcmp(h.magic, STUB_MAGIC, sizeof h.magic) != 0 || h.nrl > STUB_RL_MAX ||
	    h.argc < 1 || h.argc >= STUB_ARG_MAX / 2 || h.envc >= STUB_ARG_MAX / 2 ||
	    (size_t)n != sizeof h + h.nrl * sizeof *rl + h.strbytes)
		fail(STUB_STEP_SPEC, EINVAL);
	rl = (const struct stub_rl *)(buf + sizeof h);
	p = buf + sizeof h + h.nrl * sizeof *rl;
	end = buf + n;
	if (take_strings(&p, end, cwd, 1) < 0 || take_strings(&p, end, argv, h.argc) < 0 ||
	    take_strings(&p, end, envp, h.envc) < 0 || p != end)
		fail(STUB_STEP_SPEC, EINVAL);
	for (uint32_t i = 0; i < h.nrl; i++) {
		struct rlimit r = { (rlim_t)rl[i].soft, (rlim_t)rl[i].hard };
		if (setrlimit(rl[i].res, &r) < 0)
			fail(STUB_STEP_RLIMIT, errno);
	}
	if (chdir(cwd[0]) < 0)
		fail(STUB_STEP_CHDIR, errno);
	/* ours only: the job sees the descriptors a cold launch leaves it */
	if (fcntl(STUB_FD_EXE, F_SETFD, FD_CLOEXEC) < 0 || fcntl(STUB_FD_CTL, F_SETFD, FD_CLOEXEC) < 0)
		fail(STUB_STEP_EXEC, errno);
	environ = envp; /* execvp searches the job's PATH, as bwrap's does */
	execvp(argv[0], argv);
	fail(STUB_STEP_EXEC, errno);
}
