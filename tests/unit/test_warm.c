/* Prewarmed sandboxes: the environment a stub execs with (prof_job_env: bwrap's
 * --clearenv/--setenv sequence, later values replacing earlier ones in place), and
 * the exec stub itself (build/sandbox-agent --exec-stub) run on the host with a
 * spec on fd 9, as inside bwrap: the command exec'd with the spec's argv, env, cwd
 * and rlimits, or exactly one step code and errno back. SANDBOX_AGENT names the
 * binary; a missing one is a visible skip. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "profile.h"
#include "strbuf.h"
#include "stubproto.h"
#include "tests.h"

/* "A=1\0B=2\0" -> "A=1|B=2|" */
static void joined(const struct strbuf *b, char *out, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < b->len && o + 1 < n; i++)
		out[o++] = b->buf[i] ? b->buf[i] : '|';
	out[o] = '\0';
}

static void test_job_env(void)
{
	struct cfg c;
	struct strbuf b = STRBUF_INIT;
	json_t *env = json_pack("{s:s, s:s, s:s}", "HOME", "/workspace/h", "SBX_W_PASS", "job",
				"Z", "last");
	char err[256] = "", got[1024];
	int n;

	cfg_defaults(&c);
	setenv("SBX_W_PASS", "host", 1);
	snprintf(c.runner_env_passthrough, sizeof c.runner_env_passthrough, "SBX_W_PASS");
	n = prof_job_env(&c, &prof_default, env, &b, err, sizeof err);
	CHECK(n == 9, "9 variables, got %d (%s)", n, err);
	joined(&b, got, sizeof got);
	/* HOME replaced in place, the passed-through value kept (no override), Z last */
	CHECK_STR(got, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin|HOME=/workspace/h|"
		       "TMPDIR=/tmp|LANG=C.UTF-8|USER=sandbox|LOGNAME=sandbox|SHELL=/bin/sh|"
		       "SBX_W_PASS=host|Z=last|");
	sb_release(&b);
	c.runner_env_passthrough_override = 1;
	n = prof_job_env(&c, &prof_default, env, &b, err, sizeof err);
	joined(&b, got, sizeof got);
	CHECK_HAS(got, "|SBX_W_PASS=job|Z=last|");
	CHECK_INT(n, 9);
	sb_release(&b);
	n = prof_job_env(&c, &prof_default, NULL, &b, err, sizeof err);
	CHECK_INT(n, 8);
	sb_release(&b);
	json_decref(env);
}

static const char *agent_path(void)
{
	const char *p = getenv("SANDBOX_AGENT");

	return p != NULL && p[0] != '\0' ? p : "build/sandbox-agent";
}

/* A spec as supervise.c's warm_spec builds it. */
static void spec(struct strbuf *b, const char *cwd, const char *const *argv,
		 const char *const *envv, int nofile)
{
	struct stub_hdr h = { STUB_MAGIC, 0, 0, 0, 0 };
	struct stub_rl rl = { RLIMIT_NOFILE, 0, (uint64_t)nofile, (uint64_t)nofile };
	size_t start;

	h.nrl = nofile > 0;
	while (argv[h.argc])
		h.argc++;
	while (envv[h.envc])
		h.envc++;
	sb_add(b, &h, sizeof h);
	if (h.nrl)
		sb_add(b, &rl, sizeof rl);
	start = b->len;
	sb_add(b, cwd, strlen(cwd) + 1);
	for (uint32_t i = 0; i < h.argc; i++)
		sb_add(b, argv[i], strlen(argv[i]) + 1);
	for (uint32_t i = 0; i < h.envc; i++)
		sb_add(b, envv[i], strlen(envv[i]) + 1);
	h.strbytes = (uint32_t)(b->len - start);
	memcpy(b->buf, &h, sizeof h);
}

/* Runs the stub with data (len 0: none) on fd 9: its exit status, stdout in out, and
 * what came back on fd 9 in fail (1 if a stub_fail came). */
static int run_stub(const void *data, size_t len, char *out, size_t outlen,
		    struct stub_fail *fail, int *failed)
{
	int sv[2], o[2], st = -1;
	pid_t pid;
	ssize_t n, got = 0;

	*failed = 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(o, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (dup2(sv[1], STUB_FD_CTL) < 0 || dup2(null, STUB_FD_EXE) < 0 || dup2(o[1], 1) < 0)
			_exit(99);
		/* as under bwrap: 0-2 and the stub's two, nothing else (the harness's own) */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != STUB_FD_CTL && fd != STUB_FD_EXE)
				close(fd);
		execl(agent_path(), "sandbox-agent", STUB_ARG0, (char *)NULL);
		_exit(98);
	}
	close(sv[1]);
	close(o[1]);
	if (len && write(sv[0], data, len) != (ssize_t)len)
		CHECK(0, "writing the spec");
	shutdown(sv[0], SHUT_WR);
	while (got + 1 < (ssize_t)outlen && (n = read(o[0], out + got, outlen - 1 - got)) > 0)
		got += n;
	out[got] = '\0';
	waitpid(pid, &st, 0);
	if (recv(sv[0], fail, sizeof *fail, MSG_DONTWAIT) == (ssize_t)sizeof *fail)
		*failed = 1;
	close(sv[0]);
	close(o[0]);
	return st;
}

static void test_stub(void)
{
	const char *argv[] = { "sh", "-c", "echo \"$X\"; pwd; ulimit -n; ls /proc/self/fd | tr '\\n' ' '",
			       NULL };
	const char *envv[] = { "X=from the spec", "PATH=/usr/bin:/bin", NULL };
	const char *missing[] = { "no-such-command-sbx", NULL };
	struct strbuf b = STRBUF_INIT;
	struct stub_fail f;
	char out[512];
	int st, failed;

	if (access(agent_path(), X_OK) != 0) {
		printf("\n    SKIPPED: %s not found (build it, or set SANDBOX_AGENT)\n", agent_path());
		return;
	}
	spec(&b, "/tmp", argv, envv, 64);
	st = run_stub(b.buf, b.len, out, sizeof out, &f, &failed);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the command ran and exited 0 (status %d)", st);
	/* fds 8 and 9 are the stub's: gone at exec (ls's own directory fd is 3) */
	CHECK_STR(out, "from the spec\n/tmp\n64\n0 1 2 3 ");
	CHECK_INT(failed, 0);
	sb_release(&b);

	spec(&b, "/", missing, envv, 0);
	st = run_stub(b.buf, b.len, out, sizeof out, &f, &failed);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1, "exit 1 as bwrap's (status %d)", st);
	CHECK(failed && f.step == STUB_STEP_EXEC && f.err == ENOENT, "exec step, ENOENT");
	CHECK_STR(out, ""); /* no text of its own */
	sb_release(&b);

	spec(&b, "/nonexistent-sbx", missing, envv, 0);
	run_stub(b.buf, b.len, out, sizeof out, &f, &failed);
	CHECK(failed && f.step == STUB_STEP_CHDIR && f.err == ENOENT, "chdir step, ENOENT");
	sb_release(&b);

	spec(&b, "/", argv, envv, 0);
	b.buf[0] = 'X'; /* not a spec */
	run_stub(b.buf, b.len, out, sizeof out, &f, &failed);
	CHECK(failed && f.step == STUB_STEP_SPEC && f.err == EINVAL, "spec step, EINVAL");
	run_stub(b.buf, b.len - 1, out, sizeof out, &f, &failed); /* truncated */
	CHECK(failed && f.step == STUB_STEP_SPEC, "a truncated spec is refused");
	sb_release(&b);

	st = run_stub("", 0, out, sizeof out, &f, &failed);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && !failed,
	      "no spec (the holder went away): exit 0, nothing run");
}

void suite_warm(void)
{
	static const CU_TestInfo tests[] = { { "job_env", test_job_env },
					     { "exec_stub", test_stub },
					     CU_TEST_INFO_NULL };

	t_register("warm", tests);
}
