/* build/sandbox-agent, run on the host over a socketpair the way the supervisor runs
 * it inside bwrap: the frames it sends for real commands (echo, sh, cat, sleep, head).
 * SANDBOX_AGENT names the binary (default build/sandbox-agent, relative to the repo);
 * a missing binary is a visible skip. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agentproto.h"
#include "tests.h"

/* The SPAWN API takes char *const * (execv's type); -Wwrite-strings makes literals
 * const. */
#define S(lit) ((char *)(lit))

#define MAXCID 300

struct agent {
	pid_t pid;
	int sock, err;
	unsigned char buf[AP_HDR + AP_MAX_PAYLOAD];
	size_t n;
};

struct tframe {
	uint8_t type, stream;
	uint32_t cid, len;
	unsigned char p[AP_MAX_PAYLOAD];
};

/* What one command produced. */
struct res {
	int started, failed, exited, after_end;
	uint32_t pid, err, status;
	char step[AP_MAX_FAIL_TEXT + 1];
	char out[2][4096];
	size_t total[2];
	int nonzero; /* any byte other than 0 seen (the /dev/zero test) */
	size_t acked; /* STDIN_ACK bytes */
	int gone;     /* STDIN_GONE frames */
};

static struct agent A;
static struct res R[MAXCID];
static struct tframe F;

static const char *agent_path(void)
{
	const char *p = getenv("SANDBOX_AGENT");

	return p != NULL && p[0] != '\0' ? p : "build/sandbox-agent";
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The next frame from the agent into F: 1, 0 on timeout, -1 on EOF or a frame that
 * breaks the protocol (reported). */
static int next_frame(int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	struct ap_frame f;

	for (;;) {
		int rc = ap_parse(A.buf, A.n, &f);
		struct pollfd p = { .fd = A.sock, .events = POLLIN };
		long long left;
		ssize_t r;

		if (rc < 0) {
			CHECK(0, "agent sent an invalid frame header");
			return -1;
		}
		if (rc == 1) {
			CHECK(ap_frame_valid(&f), "agent frame type %u len %u cid %u valid", f.type,
			      f.len, f.cid);
			F.type = f.type;
			F.stream = f.stream;
			F.cid = f.cid;
			F.len = f.len;
			memcpy(F.p, f.payload, f.len);
			A.n -= AP_HDR + f.len;
			memmove(A.buf, A.buf + AP_HDR + f.len, A.n);
			return 1;
		}
		left = end - now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return 0;
		r = read(A.sock, A.buf + A.n, sizeof A.buf - A.n);
		if (r <= 0)
			return -1;
		A.n += (size_t)r;
	}
}

static void send_frame(uint8_t type, uint32_t cid, const void *p, size_t len)
{
	unsigned char hdr[AP_HDR];

	ap_put_header(hdr, (uint32_t)len, type, 0, cid);
	CHECK(write(A.sock, hdr, AP_HDR) == AP_HDR, "header written");
	if (len > 0)
		CHECK(write(A.sock, p, len) == (ssize_t)len, "payload written");
}

static void send_u32(uint8_t type, uint32_t cid, uint32_t v)
{
	unsigned char p[4];

	ap_put_u32(p, v);
	send_frame(type, cid, p, 4);
}

/* argv and env NULL-terminated. */
static void spawn(uint32_t cid, uint32_t flags, const char *cwd, char *const *argv,
		  char *const *env)
{
	static unsigned char p[AP_MAX_PAYLOAD];
	size_t argc = 0, envc = 0;
	long n;

	while (argv[argc] != NULL)
		argc++;
	while (env != NULL && env[envc] != NULL)
		envc++;
	n = ap_spawn_encode(p, flags, cwd, argv, argc, env, envc);
	if (CHECK(n > 0, "SPAWN encoded"))
		send_frame(AP_SPAWN, cid, p, (size_t)n);
	memset(&R[cid], 0, sizeof R[cid]);
}

/* Files F into R. */
static void record(void)
{
	struct res *r;

	if (!CHECK(F.cid > 0 && F.cid < MAXCID, "frame cid %u in range", F.cid))
		return;
	r = &R[F.cid];
	if (r->exited || r->failed) {
		r->after_end++;
		return;
	}
	switch (F.type) {
	case AP_STARTED:
		r->started = 1;
		r->pid = ap_get_u32(F.p);
		break;
	case AP_SPAWN_FAILED:
		r->failed = 1;
		r->err = ap_get_u32(F.p);
		if (F.len - 4 < sizeof r->step) {
			memcpy(r->step, F.p + 4, F.len - 4);
			r->step[F.len - 4] = '\0';
		}
		break;
	case AP_OUTPUT: {
		int s = F.stream - 1;
		size_t room = sizeof r->out[s] - 1 - strlen(r->out[s]);

		CHECK(r->started, "OUTPUT after STARTED");
		for (uint32_t i = 0; i < F.len; i++)
			r->nonzero |= F.p[i] != 0;
		if (r->total[s] < sizeof r->out[s] - 1)
			strncat(r->out[s], (const char *)F.p, F.len < room ? F.len : room);
		r->total[s] += F.len;
		break;
	}
	case AP_EXIT:
		r->exited = 1;
		r->status = ap_get_u32(F.p);
		break;
	case AP_STDIN_ACK:
		CHECK(r->started && !r->gone, "STDIN_ACK after STARTED, before GONE");
		r->acked += ap_get_u32(F.p);
		break;
	case AP_STDIN_GONE:
		r->gone++;
		break;
	default:
		CHECK(0, "unexpected frame type %u for cid %u", F.type, F.cid);
	}
}

/* Reads frames until cid has ended (EXIT or SPAWN_FAILED): 1, or 0 on timeout/EOF. */
static int until_end(uint32_t cid, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	while (!R[cid].exited && !R[cid].failed) {
		long long left = end - now_ms();

		if (left <= 0 || next_frame((int)left) != 1) {
			CHECK(0, "cid %u ended within %d ms", cid, timeout_ms);
			return 0;
		}
		record();
	}
	return 1;
}

static int until_started(uint32_t cid)
{
	while (!R[cid].started && !R[cid].failed) {
		if (next_frame(3000) != 1) {
			CHECK(0, "cid %u started", cid);
			return 0;
		}
		record();
	}
	return CHECK(R[cid].started, "cid %u started (failed: %u %s)", cid, R[cid].err,
		     R[cid].step);
}

static int start_agent(void)
{
	int sv[2], ep[2];

	memset(&A, 0, sizeof A);
	if (access(agent_path(), X_OK) != 0) {
		printf("\n    SKIPPED: %s not found (build it, or set SANDBOX_AGENT)\n",
		       agent_path());
		return 0;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(ep, O_CLOEXEC) < 0)
		return CHECK(0, "socketpair/pipe: %s", strerror(errno));
	A.pid = fork();
	if (A.pid == 0) {
		sigset_t usr2;

		/* inherited by the agent: its commands must not inherit them */
		signal(SIGUSR1, SIG_IGN);
		sigemptyset(&usr2);
		sigaddset(&usr2, SIGUSR2);
		sigprocmask(SIG_BLOCK, &usr2, NULL);
		dup2(sv[1], 0);
		dup2(sv[1], 1);
		dup2(ep[1], 2);
		execl(agent_path(), agent_path(), (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	close(ep[1]);
	A.sock = sv[0];
	A.err = ep[0];
	if (!CHECK(A.pid > 0, "fork") || !CHECK(next_frame(3000) == 1, "a first frame"))
		return 0;
	CHECK_INT(F.type, AP_HELLO);
	CHECK_INT(F.cid, 0);
	return CHECK_INT(F.len == 4 ? ap_get_u32(F.p) : 0, AP_VERSION);
}

/* Waits up to 3 s for the agent to exit: its wait status, or -1 (then killed). */
static int wait_agent(void)
{
	long long end = now_ms() + 3000;
	int st;

	while (now_ms() < end) {
		if (waitpid(A.pid, &st, WNOHANG) == A.pid)
			return st;
		usleep(5000);
	}
	kill(A.pid, SIGKILL);
	waitpid(A.pid, &st, 0);
	return -1;
}

/* Closes the host end; the agent must exit 0. */
static void stop_agent(void)
{
	close(A.sock);
	CHECK_INT(wait_agent(), 0);
	close(A.err);
}

/* The agent's error log so far (it has exited). */
static void read_err(char *buf, size_t n)
{
	ssize_t r = read(A.err, buf, n - 1);

	buf[r > 0 ? r : 0] = '\0';
}

/* Gone, or a zombie nobody reaped yet: either way no longer running. */
static int proc_dead(pid_t pid)
{
	char path[64], st[512];
	FILE *f;
	char *paren;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 1;
	n = fread(st, 1, sizeof st - 1, f);
	fclose(f);
	st[n] = '\0';
	paren = strrchr(st, ')');
	return paren != NULL && (paren[2] == 'Z' || paren[2] == 'X');
}

static int dies_within(pid_t pid, int ms)
{
	long long end = now_ms() + ms;

	while (!proc_dead(pid)) {
		if (now_ms() > end)
			return 0;
		usleep(10000);
	}
	return 1;
}

static void test_echo(void)
{
	char *argv[] = { S("/bin/echo"), S("hi"), NULL };

	if (!start_agent())
		return;
	spawn(1, 0, "/", argv, NULL);
	if (until_end(1, 5000)) {
		CHECK(R[1].started && R[1].pid > 0, "STARTED with a pid");
		CHECK_STR(R[1].out[0], "hi\n");
		CHECK_INT(R[1].total[1], 0);
		CHECK(WIFEXITED(R[1].status) && WEXITSTATUS(R[1].status) == 0, "exit 0, got %#x",
		      R[1].status);
	}
	stop_agent();
}

static void test_stderr_and_status(void)
{
	char *argv[] = { S("sh"), S("-c"), S("echo out; echo err >&2; exit 3"), NULL };

	if (!start_agent())
		return;
	spawn(7, 0, "/tmp", argv, NULL);
	if (until_end(7, 5000)) {
		CHECK_STR(R[7].out[0], "out\n");
		CHECK_STR(R[7].out[1], "err\n");
		CHECK(WIFEXITED(R[7].status) && WEXITSTATUS(R[7].status) == 3, "exit 3, got %#x",
		      R[7].status);
	}
	stop_agent();
}

static void test_spawn_failures(void)
{
	char *argv[] = { S("/bin/echo"), S("hi"), NULL };
	char *nope[] = { S("no-such-program-here"), NULL };
	char *echo[] = { S("echo"), S("x"), NULL };
	char *nopath[] = { S("PATH=/nonexistent"), NULL };

	if (!start_agent())
		return;
	spawn(1, 0, "/no/such/dir", argv, NULL);
	if (until_end(1, 3000)) {
		CHECK_INT(R[1].failed, 1);
		CHECK_INT(R[1].err, ENOENT);
		CHECK_STR(R[1].step, "chdir");
	}
	spawn(2, 0, "/", nope, NULL);
	if (until_end(2, 3000)) {
		CHECK_INT(R[2].err, ENOENT);
		CHECK_STR(R[2].step, "exec");
	}
	/* PATH is searched in the merged environment, not the agent's own */
	spawn(3, 0, "/", echo, nopath);
	if (until_end(3, 3000)) {
		CHECK_INT(R[3].failed, 1);
		CHECK_INT(R[3].err, ENOENT);
	}
	/* a cid is free again after its failure */
	spawn(1, 0, "/", argv, NULL);
	if (until_end(1, 3000))
		CHECK_STR(R[1].out[0], "hi\n");
	stop_agent();
}

static void test_env_override(void)
{
	char *argv[] = { S("sh"), S("-c"), S("echo \"$X/$Y\""), NULL };
	char *env[] = { S("X=first"), S("X=override"), S("Y=a=b"), NULL };

	if (!start_agent())
		return;
	spawn(1, 0, "/", argv, env);
	if (until_end(1, 5000))
		CHECK_STR(R[1].out[0], "override/a=b\n");
	stop_agent();
}

static void test_stdin_relay(void)
{
	char *cat[] = { S("cat"), NULL };

	if (!start_agent())
		return;
	spawn(1, AP_SPAWN_STDIN, "/", cat, NULL);
	if (until_started(1)) {
		send_frame(AP_STDIN, 1, "ab", 2);
		send_frame(AP_STDIN, 1, "c", 1);
		send_frame(AP_STDIN_CLOSE, 1, NULL, 0);
	}
	if (until_end(1, 5000)) {
		CHECK_STR(R[1].out[0], "abc");
		CHECK_INT(R[1].status, 0);
		CHECK_INT((long long)R[1].acked, 3); /* every byte acknowledged, before EXIT */
		CHECK_INT(R[1].gone, 0);             /* the host's own close: no GONE */
	}
	/* without AP_SPAWN_STDIN, stdin is at EOF: cat ends at once */
	spawn(2, 0, "/", cat, NULL);
	if (until_end(2, 3000)) {
		CHECK_INT(R[2].total[0], 0);
		CHECK_INT(R[2].status, 0);
	}
	stop_agent();
}

static void test_concurrent_and_signal(void)
{
	char *sleeper[] = { S("sleep"), S("5"), NULL };
	char *echo[] = { S("echo"), S("x"), NULL };
	long long t0 = now_ms();

	if (!start_agent())
		return;
	spawn(1, 0, "/", sleeper, NULL);
	if (!until_started(1))
		goto out;
	/* the same cid again while it runs */
	spawn(1, 0, "/", echo, NULL);
	R[1].started = 1;
	while (!R[1].failed && next_frame(3000) == 1)
		record();
	CHECK_INT(R[1].err, EBUSY);
	spawn(2, 0, "/", echo, NULL);
	if (until_end(2, 3000)) {
		CHECK_STR(R[2].out[0], "x\n");
		CHECK_INT(R[2].status, 0);
	}
	CHECK(!R[1].exited, "the sleeper still runs after the echo ended");
	send_u32(AP_SIGNAL, 1, 0);   /* ignored: out of range */
	send_u32(AP_SIGNAL, 1, 65);  /* ignored */
	send_u32(AP_SIGNAL, 99, 15); /* unknown cid: ignored */
	send_u32(AP_SIGNAL, 1, SIGTERM);
	memset(&R[1], 0, sizeof R[1]);
	R[1].started = 1;
	if (until_end(1, 3000))
		CHECK(WIFSIGNALED(R[1].status) && WTERMSIG(R[1].status) == SIGTERM,
		      "killed by SIGTERM, got %#x", R[1].status);
	CHECK(now_ms() - t0 < 4000, "well before sleep 5 ended (%lld ms)", now_ms() - t0);
out:
	stop_agent();
}

static void test_grandchild_killed(void)
{
	char *argv[] = { S("sh"), S("-c"), S("sleep 30 & echo $!"), NULL };
	long gpid;

	if (!start_agent())
		return;
	spawn(1, 0, "/", argv, NULL);
	if (until_end(1, 5000)) {
		gpid = strtol(R[1].out[0], NULL, 10);
		CHECK_INT(R[1].status, 0);
		if (CHECK(gpid > 1, "background pid printed: %s", R[1].out[0]))
			CHECK(dies_within((pid_t)gpid, 1000), "background sleep %ld gone", gpid);
	}
	/* nothing more for cid 1 after its EXIT */
	CHECK_INT(next_frame(200), 0);
	CHECK_INT(R[1].after_end, 0);
	stop_agent();
}

static void test_flow_control(void)
{
	char *argv[] = { S("head"), S("-c"), S("2097152"), S("/dev/zero"), NULL };

	if (!start_agent())
		return;
	spawn(1, 0, "/", argv, NULL);
	if (!until_started(1))
		goto out;
	/* Not reading: the agent's queue (1 MiB) plus the socket and pipe buffers hold
	 * less than 2 MiB, so head must be blocked, not finished. */
	usleep(300000);
	CHECK(!proc_dead((pid_t)R[1].pid), "head still blocked while the host does not read");
	while (!R[1].exited) {
		if (next_frame(5000) != 1) {
			CHECK(0, "frames until EXIT");
			break;
		}
		record();
		usleep(2000); /* a slow reader */
	}
	CHECK_INT(R[1].total[0], 2097152);
	CHECK_INT(R[1].nonzero, 0);
	CHECK_INT(R[1].status, 0);
out:
	stop_agent();
}

static void test_host_close_kills(void)
{
	char *argv[] = { S("sleep"), S("30"), NULL };

	if (!start_agent())
		return;
	spawn(1, 0, "/", argv, NULL);
	if (!until_started(1)) {
		stop_agent();
		return;
	}
	stop_agent(); /* exit status 0 checked there */
	CHECK(dies_within((pid_t)R[1].pid, 1000), "sleeper %u killed with the agent", R[1].pid);
}

static void test_many_commands(void)
{
	char *argv[] = { S("sleep"), S("30"), NULL };
	uint32_t cid;

	if (!start_agent())
		return;
	for (cid = 1; cid <= 256; cid++) {
		spawn(cid, 0, "/", argv, NULL);
		if (!until_started(cid))
			break;
	}
	spawn(257, 0, "/", argv, NULL);
	if (until_end(257, 3000)) {
		CHECK_INT(R[257].failed, 1);
		CHECK_INT(R[257].err, EAGAIN);
	}
	stop_agent();
	CHECK(dies_within((pid_t)R[256].pid, 1000), "the last sleeper killed with the agent");
}

/* A command starts clean: only its three pipes (never the host socket), no blocked
 * or ignored signal inherited from the agent (which blocks SIGCHLD, ignores SIGPIPE). */
static void test_child_state(void)
{
	char *fds[] = { S("ls"), S("/proc/self/fd"), NULL };
	char *kinds[] = { S("readlink"), S("/proc/self/fd/0"), S("/proc/self/fd/1"),
			  S("/proc/self/fd/2"), NULL };
	char *sigs[] = { S("grep"), S("-E"), S("^Sig(Blk|Ign)"), S("/proc/self/status"), NULL };
	const char *p;
	int pipes = 0;

	if (!start_agent())
		return;
	spawn(1, 0, "/", fds, NULL);
	if (until_end(1, 5000))
		CHECK_STR(R[1].out[0], "0\n1\n2\n3\n"); /* 3: ls's own directory fd */
	spawn(2, 0, "/", kinds, NULL);
	if (until_end(2, 5000)) {
		for (p = R[2].out[0]; (p = strstr(p, "pipe:[")) != NULL; p++)
			pipes++;
		CHECK(pipes == 3, "stdin, stdout, stderr are pipes: %s", R[2].out[0]);
	}
	spawn(3, 0, "/", sigs, NULL);
	if (until_end(3, 5000))
		CHECK_STR(R[3].out[0], "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
	stop_agent();
}

/* A fresh agent running argv as command 1 with a stdin pipe: 1 once it started, else
 * 0 with the agent stopped. */
static int agent_with_stdin_cmd(char *const *argv)
{
	if (!start_agent())
		return 0;
	spawn(1, AP_SPAWN_STDIN, "/", argv, NULL);
	if (!until_started(1)) {
		stop_agent();
		return 0;
	}
	return 1;
}

/* The window (issue 25 item 3): a host that keeps at most AP_STDIN_WINDOW bytes in
 * flight (sent, not acknowledged) can pour any amount through a command that reads:
 * every byte is acknowledged, none dropped, no GONE. */
static void test_stdin_window(void)
{
	static unsigned char chunk[AP_MAX_PAYLOAD];
	char *argv[] = { S("wc"), S("-c"), NULL };
	const size_t total = 6u << 20; /* more than the window */
	size_t sent = 0;

	if (!agent_with_stdin_cmd(argv))
		return;
	while (sent < total) {
		while (sent < total && sent - R[1].acked + sizeof chunk <= AP_STDIN_WINDOW) {
			send_frame(AP_STDIN, 1, chunk, sizeof chunk);
			sent += sizeof chunk;
		}
		if (sent < total && !CHECK(next_frame(5000) == 1, "an ACK frees the window"))
			break;
		if (sent < total)
			record();
	}
	send_frame(AP_STDIN_CLOSE, 1, NULL, 0);
	if (until_end(1, 5000)) {
		CHECK_STR(R[1].out[0], "6291456\n");
		CHECK_INT((long long)R[1].acked, (long long)total);
		CHECK_INT(R[1].gone, 0);
	}
	stop_agent();
}

/* A command that closes its stdin: the bytes the host sent are discarded and the host
 * is told once (STDIN_GONE, before EXIT), with what reached the pipe acknowledged. */
static void test_stdin_gone(void)
{
	static unsigned char chunk[AP_MAX_PAYLOAD];
	char *argv[] = { S("sh"), S("-c"), S("exec 0<&-; sleep 1; echo done"), NULL };

	if (!agent_with_stdin_cmd(argv))
		return;
	usleep(300000); /* the command has closed its stdin */
	for (int i = 0; i < 4; i++)
		send_frame(AP_STDIN, 1, chunk, sizeof chunk);
	if (until_end(1, 5000)) {
		CHECK_INT(R[1].gone, 1);
		CHECK_STR(R[1].out[0], "done\n");
		CHECK(R[1].acked < 4 * sizeof chunk, "not all acknowledged: %zu", R[1].acked);
	}
	stop_agent();
}

/* A host that breaks the window: past 4 MiB queued the command's stdin is dropped
 * (said on fd 2, and STDIN_GONE), and a SIGNAL behind all those bytes still gets
 * through. */
static void test_stdin_backlog(void)
{
	static unsigned char chunk[AP_MAX_PAYLOAD];
	char *argv[] = { S("sleep"), S("10"), NULL };
	char err[512];

	if (!agent_with_stdin_cmd(argv))
		return;
	for (int i = 0; i < 70; i++) /* 4.4 MiB */
		send_frame(AP_STDIN, 1, chunk, sizeof chunk);
	send_frame(AP_STDIN, 1, "late", 4); /* after the close: ignored */
	send_u32(AP_SIGNAL, 1, SIGKILL);
	if (until_end(1, 3000)) {
		CHECK(WIFSIGNALED(R[1].status) && WTERMSIG(R[1].status) == SIGKILL,
		      "killed by SIGKILL, got %#x", R[1].status);
		CHECK_INT(R[1].gone, 1);
	}
	close(A.sock);
	CHECK_INT(wait_agent(), 0);
	read_err(err, sizeof err);
	close(A.err);
	CHECK_HAS(err, "command 1: stdin backlog over 4194304 bytes, stdin closed");
	CHECK_HAS(err, "host closed the socket");
}

/* Frames a host must never send: the agent exits 2 with one line on fd 2. */
static void test_violations(void)
{
	static const struct {
		const char *name;
		unsigned char hdr[AP_HDR];
		size_t plen;
	} rows[] = {
		{ "garbage", { 'G', 'A', 'R', 'B', 'A', 'G', 'E', '!', 0, 0, 0, 0 }, 0 },
		{ "HELLO from the host", { 4, 0, 0, 0, AP_HELLO, 0, 0, 0, 0, 0, 0, 0 }, 4 },
		{ "SPAWN shorter than its words", { 4, 0, 0, 0, AP_SPAWN, 0, 0, 0, 1, 0, 0, 0 }, 4 },
		{ "SPAWN argc 0", { 14, 0, 0, 0, AP_SPAWN, 0, 0, 0, 1, 0, 0, 0 }, 14 },
		{ "SIGNAL without a number", { 0, 0, 0, 0, AP_SIGNAL, 0, 0, 0, 1, 0, 0, 0 }, 0 },
	};
	unsigned char zero[16] = { 0 };

	for (size_t i = 0; i < NELEM(rows); i++) {
		char err[512];
		int st;

		if (!start_agent())
			return;
		zero[12] = '/';
		CHECK(write(A.sock, rows[i].hdr, AP_HDR) == AP_HDR, "header written");
		if (rows[i].plen)
			CHECK(write(A.sock, zero, rows[i].plen) == (ssize_t)rows[i].plen, "payload");
		st = wait_agent();
		CHECK(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s: exit 2, got %#x",
		      rows[i].name, st);
		read_err(err, sizeof err);
		CHECK_HAS_AT(rows[i].name, err, "protocol violation");
		close(A.sock);
		close(A.err);
	}
}

void suite_agent(void)
{
	static const CU_TestInfo tests[] = { { "echo", test_echo },
					     { "stderr_and_status", test_stderr_and_status },
					     { "spawn_failures", test_spawn_failures },
					     { "env_override", test_env_override },
					     { "stdin_relay", test_stdin_relay },
					     { "concurrent_and_signal", test_concurrent_and_signal },
					     { "grandchild_killed", test_grandchild_killed },
					     { "flow_control", test_flow_control },
					     { "host_close_kills", test_host_close_kills },
					     { "many_commands", test_many_commands },
					     { "child_state", test_child_state },
					     { "stdin_backlog", test_stdin_backlog },
					     { "stdin_window", test_stdin_window },
					     { "stdin_gone", test_stdin_gone },
					     { "violations", test_violations },
					     CU_TEST_INFO_NULL };

	t_register("agent", tests);
}
