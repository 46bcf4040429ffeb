/* sandbox-agent: the first process inside a session's sandbox (agentproto.h).
 *
 * Theory of operation. fd 0 and fd 1 are one socket to the supervisor; fd 2 is a
 * pipe the supervisor reads as our error log (short lines, never command data).
 * One poll() loop, no threads:
 *   host frames   SPAWN forks a command (setsid, pipes, exec); STDIN queues bytes
 *                 for its stdin pipe; SIGNAL signals its process group.
 *   command pipes OUTPUT frames into the outgoing queue, read only while that queue
 *                 has room: a slow host blocks the commands' writes, never us, and
 *                 nothing is dropped.
 *   signalfd      SIGCHLD: reap; kill the command's group; forward what its pipes
 *                 held at that moment; then EXIT and forget the cid.
 * Every buffer is bounded. The host is trusted, but a frame from it that breaks the
 * protocol still ends us (exit 2): the two ends disagree, and guessing is worse.
 * Statically linked: we run with the sandbox's /usr and must need nothing from it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentproto.h"
#include "stub.h"
#include "stubproto.h"

#define MAX_CMDS 256
#define OUTQ_DATA (1u << 20)		 /* command output is read only below this */
#define OUTQ_LIMIT (OUTQ_DATA + 65536u) /* plus room for control frames */
#define CTL_ROOM 256			 /* the largest reply to one host frame */
#define STDIN_MAX AP_STDIN_WINDOW	 /* per command: the host never sends more */
#define ACK_EVERY 65536u		 /* STDIN_ACK at least this often while writing */
#define CHUNK (AP_HDR + AP_MAX_PAYLOAD)

extern char **environ;

struct cmd {
	uint32_t cid; /* 0: free slot */
	pid_t pid;    /* also its process group (setsid) */
	int out[2];   /* stdout, stderr read ends; -1 once closed */
	int in;	      /* stdin write end; -1 when closed or never opened */
	unsigned char *inq;
	size_t in_off, in_len, in_cap;
	int in_close; /* STDIN_CLOSE seen: close once the queue drains */
	size_t unacked; /* written to the pipe, not yet acknowledged (STDIN_ACK) */
	int gone;       /* stdin dropped (EPIPE, no room): STDIN_GONE to send */
	int reaped, status;
	size_t left[2]; /* after the reap: what the pipe held then, still to send */
};

static struct cmd cmds[MAX_CMDS];
static int ncmds;
/* Twice the limit, so compaction (memmove to the front) is rare and amortized. */
static unsigned char outq[2 * OUTQ_LIMIT];
static size_t oq_off, oq_len;
static unsigned char inbuf[CHUNK];
static size_t in_n;
static int sigfd;

/* One short line on fd 2, never blocking: the host may not be reading it. */
__attribute__((format(printf, 1, 2))) static void logline(const char *fmt, ...)
{
	char line[256];
	struct pollfd p = { .fd = 2, .events = POLLOUT };
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT))
		(void)!write(2, line, (size_t)n);
}

/* Ends the agent: every command's process group goes with it. */
__attribute__((noreturn)) static void finish(int code)
{
	for (int i = 0; i < MAX_CMDS; i++)
		if (cmds[i].cid != 0)
			kill(-cmds[i].pid, SIGKILL);
	exit(code);
}

__attribute__((noreturn)) static void violation(const char *what)
{
	logline("sandbox-agent: protocol violation from the host: %s", what);
	finish(2);
}

static struct cmd *find(uint32_t cid)
{
	for (int i = 0; i < MAX_CMDS; i++)
		if (cmds[i].cid == cid)
			return &cmds[i];
	return NULL;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Contiguous room for need bytes at the queue's end, or NULL past OUTQ_LIMIT. */
static unsigned char *oq_tail(size_t need)
{
	if (oq_len + need > OUTQ_LIMIT)
		return NULL;
	if (oq_off + oq_len + need > sizeof outq) {
		memmove(outq, outq + oq_off, oq_len);
		oq_off = 0;
	}
	return outq + oq_off + oq_len;
}

/* Queues a control frame; callers checked the room (CTL_ROOM, or EXIT's 16 bytes). */
static void send_frame(uint8_t type, uint32_t cid, const void *p, size_t len)
{
	unsigned char *t = oq_tail(AP_HDR + len);

	if (t == NULL) { /* a bug in the room accounting, never silently lost */
		logline("sandbox-agent: outgoing queue overflow");
		finish(1);
	}
	ap_put_header(t, (uint32_t)len, type, 0, cid);
	memcpy(t + AP_HDR, p, len);
	oq_len += AP_HDR + len;
}

static void send_u32(uint8_t type, uint32_t cid, uint32_t v)
{
	unsigned char p[4];

	ap_put_u32(p, v);
	send_frame(type, cid, p, 4);
}

static void spawn_failed(uint32_t cid, int err, const char *step)
{
	unsigned char p[4 + AP_MAX_FAIL_TEXT];
	size_t n = strnlen(step, AP_MAX_FAIL_TEXT);

	ap_put_u32(p, (uint32_t)err);
	memcpy(p + 4, step, n);
	send_frame(AP_SPAWN_FAILED, cid, p, 4 + n);
}

static void flush_host(void)
{
	while (oq_len > 0) {
		ssize_t w = write(1, outq + oq_off, oq_len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			logline("sandbox-agent: host closed the socket");
			finish(0);
		}
		if (w <= 0) {
			logline("sandbox-agent: write to host: %s", strerror(errno));
			finish(1);
		}
		oq_off += (size_t)w;
		oq_len -= (size_t)w;
	}
	oq_off = 0;
}

/* The agent's environment with the SPAWN entries added or overriding (malloc'd
 * array of pointers into environ and the payload). */
static char **merge_env(const struct ap_spawn *s)
{
	size_t n = 0, k;
	char **env;

	while (environ[n] != NULL)
		n++;
	env = calloc(n + s->envc + 1, sizeof *env);
	if (env == NULL)
		return NULL;
	memcpy(env, environ, n * sizeof *env);
	k = n;
	for (size_t i = 0; i < s->envc; i++) {
		const char *e = s->env[i];
		size_t nl = (size_t)(strchr(e, '=') - e) + 1; /* decode checked the '=' */
		size_t j;

		for (j = 0; j < k; j++)
			if (strncmp(env[j], e, nl) == 0)
				break;
		env[j] = (char *)e;
		if (j == k)
			k++;
	}
	return env;
}

struct exec_err {
	int err;
	char step[16];
};

__attribute__((noreturn)) static void child_fail(int ep, const char *step)
{
	struct exec_err e = { .err = errno };

	snprintf(e.step, sizeof e.step, "%s", step);
	(void)!write(ep, &e, sizeof e);
	_exit(127);
}

/* In the forked child: a new session, default signals, the three pipes, no other
 * fd (the host socket above all), then exec. Failures go to ep (CLOEXEC). */
__attribute__((noreturn)) static void child_exec(const struct ap_spawn *s, char **env,
						  const int fds[3], int ep)
{
	sigset_t none;

	if (setsid() < 0)
		child_fail(ep, "setsid");
	sigemptyset(&none);
	for (int sig = 1; sig <= 64; sig++) {
		/* The raw call: libc refuses its own 32 and 33, and an ignored
		 * disposition survives exec. SIGKILL, SIGSTOP fail: fine. */
		struct {
			void *handler;
			unsigned long flags;
			void *restorer;
			unsigned long mask;
		} dfl = { 0 }; /* SIG_DFL */

		syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
	}
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			child_fail(ep, "dup2");
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		struct rlimit rl = { 0 };

		getrlimit(RLIMIT_NOFILE, &rl);
		for (int fd = 3; fd < 65536 && (rlim_t)fd < rl.rlim_cur; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	if (chdir(s->cwd) < 0)
		child_fail(ep, "chdir");
	/* execvp searches the PATH of environ: the merged environment's. */
	environ = env;
	execvp(s->argv[0], (char *const *)s->argv);
	child_fail(ep, "exec");
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Forks and execs; the result (STARTED or SPAWN_FAILED) is known before we return:
 * the child's CLOEXEC error pipe reads EOF exactly when exec succeeded, and by then
 * setsid ran, so a SIGNAL right after STARTED finds the group. */
static void start_cmd(uint32_t cid, const struct ap_spawn *s, struct cmd *c)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 }, ep[2] = { -1, -1 };
	struct exec_err e;
	char **env = NULL;
	const char *step = "pipe";
	ssize_t r;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    pipe2(ep, O_CLOEXEC) < 0)
		goto fail;
	step = "env";
	errno = ENOMEM;
	if ((env = merge_env(s)) == NULL)
		goto fail;
	step = "fork";
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0)
		child_exec(s, env, (int[3]){ in[0], out[1], err[1] }, ep[1]);
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&err[1]);
	close_fd(&ep[1]);
	free(env);
	do
		r = read(ep[0], &e, sizeof e);
	while (r < 0 && errno == EINTR);
	close_fd(&ep[0]);
	if (r != 0) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		close_fd(&in[1]);
		close_fd(&out[0]);
		close_fd(&err[0]);
		if (r != (ssize_t)sizeof e)
			spawn_failed(cid, EIO, "exec report");
		else
			spawn_failed(cid, e.err, e.step);
		return;
	}
	if (!(s->flags & AP_SPAWN_STDIN))
		close_fd(&in[1]); /* the command reads EOF: no /dev/null needed */
	memset(c, 0, sizeof *c);
	c->cid = cid;
	c->pid = pid;
	c->out[0] = out[0];
	c->out[1] = err[0];
	c->in = in[1];
	for (int i = 0; i < 2; i++)
		set_nonblock(c->out[i]);
	if (c->in >= 0)
		set_nonblock(c->in);
	ncmds++;
	send_u32(AP_STARTED, cid, (uint32_t)pid);
	return;
fail:
	spawn_failed(cid, errno, step);
	free(env);
	for (int i = 0; i < 2; i++) {
		close_fd(&in[i]);
		close_fd(&out[i]);
		close_fd(&err[i]);
		close_fd(&ep[i]);
	}
}

static void do_spawn(uint32_t cid, const unsigned char *p, size_t len)
{
	struct ap_spawn s;

	if (ap_spawn_decode(p, len, &s) < 0)
		violation("bad SPAWN payload");
	if (find(cid) != NULL)
		spawn_failed(cid, EBUSY, "cid in use");
	else if (ncmds >= MAX_CMDS)
		spawn_failed(cid, EAGAIN, "too many commands");
	else
		start_cmd(cid, &s, find(0));
	ap_spawn_free(&s);
}

static void drop_stdin(struct cmd *c)
{
	if (c->in >= 0 && !c->reaped && (c->in_len > 0 || !c->in_close))
		c->gone = 1; /* not the drained close the host asked for: tell it */
	close_fd(&c->in);
	free(c->inq);
	c->inq = NULL;
	c->in_off = c->in_len = c->in_cap = 0;
}

static void write_stdin(struct cmd *c)
{
	while (c->in >= 0 && c->in_len > 0) {
		ssize_t w = write(c->in, c->inq + c->in_off, c->in_len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) { /* EPIPE: the command closed its stdin */
			drop_stdin(c);
			return;
		}
		c->in_off += (size_t)w;
		c->in_len -= (size_t)w;
		c->unacked += (size_t)w;
	}
	if (c->in_len == 0) { /* give the memory back between bursts */
		free(c->inq);
		c->inq = NULL;
		c->in_off = c->in_cap = 0;
		if (c->in_close) {
			c->gone = 0;
			close_fd(&c->in);
		}
	}
}

static void queue_stdin(struct cmd *c, const unsigned char *p, size_t len)
{
	if (c->in_len + len > STDIN_MAX) {
		logline("sandbox-agent: command %u: stdin backlog over %u bytes, stdin closed",
			c->cid, STDIN_MAX);
		drop_stdin(c);
		return;
	}
	if (c->in_off + c->in_len + len > c->in_cap) {
		size_t cap = c->in_cap ? c->in_cap : 65536;
		unsigned char *q;

		if (c->inq != NULL)
			memmove(c->inq, c->inq + c->in_off, c->in_len);
		c->in_off = 0;
		while (cap < c->in_len + len)
			cap *= 2;
		if (cap > c->in_cap) {
			q = realloc(c->inq, cap);
			if (q == NULL) {
				logline("sandbox-agent: command %u: out of memory, stdin closed",
					c->cid);
				drop_stdin(c);
				return;
			}
			c->inq = q;
			c->in_cap = cap;
		}
	}
	memcpy(c->inq + c->in_off + c->in_len, p, len);
	c->in_len += len;
	write_stdin(c);
}

static void handle_frame(const struct ap_frame *f)
{
	struct cmd *c = find(f->cid);
	uint32_t sig;

	switch (f->type) {
	case AP_SPAWN:
		do_spawn(f->cid, f->payload, f->len);
		return;
	case AP_STDIN: /* a cid that ended or never had stdin: the host raced EXIT */
		if (c != NULL && c->in >= 0 && !c->in_close)
			queue_stdin(c, f->payload, f->len);
		return;
	case AP_STDIN_CLOSE:
		if (c != NULL && c->in >= 0) {
			c->in_close = 1;
			write_stdin(c);
		}
		return;
	case AP_SIGNAL:
		sig = ap_get_u32(f->payload);
		if (c != NULL && !c->reaped && sig >= 1 && sig <= 64)
			kill(-c->pid, (int)sig);
		return;
	default:
		violation("frame type not for the agent");
	}
}

/* Whole frames at the front of inbuf. A SPAWN waits while its reply has no room. */
static void process_frames(void)
{
	size_t pos = 0;
	struct ap_frame f;
	int rc;

	while ((rc = ap_parse(inbuf + pos, in_n - pos, &f)) == 1) {
		if (!ap_frame_valid(&f))
			violation("bad frame payload length or cid");
		if (f.type == AP_SPAWN && oq_len + CTL_ROOM > OUTQ_LIMIT)
			break;
		handle_frame(&f);
		pos += AP_HDR + f.len;
	}
	if (rc < 0)
		violation("bad frame header");
	memmove(inbuf, inbuf + pos, in_n - pos);
	in_n -= pos;
}

static void read_host(void)
{
	ssize_t r = read(0, inbuf + in_n, sizeof inbuf - in_n);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r == 0 || (r < 0 && errno == ECONNRESET)) {
		logline("sandbox-agent: host closed the socket");
		finish(0);
	}
	if (r < 0) {
		logline("sandbox-agent: read from host: %s", strerror(errno));
		finish(1);
	}
	in_n += (size_t)r;
	process_frames();
}

static int may_read_output(const struct cmd *c, int i)
{
	return c->out[i] >= 0 && (!c->reaped || c->left[i] > 0) &&
	       oq_len + CHUNK <= OUTQ_DATA;
}

/* One read of a command's pipe straight into an OUTPUT frame. */
static void read_output(struct cmd *c, int i)
{
	size_t want = AP_MAX_PAYLOAD;
	unsigned char *t;
	ssize_t r;

	if (!may_read_output(c, i))
		return;
	if (c->reaped && c->left[i] < want)
		want = c->left[i];
	t = oq_tail(AP_HDR + want);
	do
		r = read(c->out[i], t + AP_HDR, want);
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EAGAIN) {
		if (c->reaped)
			c->left[i] = 0; /* nothing more than what is there now */
		return;
	}
	if (r <= 0) {
		close_fd(&c->out[i]);
		return;
	}
	ap_put_header(t, (uint32_t)r, AP_OUTPUT, (uint8_t)(i + 1), c->cid);
	oq_len += AP_HDR + (size_t)r;
	if (c->reaped)
		c->left[i] -= (size_t)r;
}

/* The first process is gone: its group goes now (before any later fork could reuse
 * the pid as a group id), and what its pipes hold at this moment is still sent. */
static void on_reaped(struct cmd *c, int status)
{
	c->reaped = 1;
	c->status = status;
	kill(-c->pid, SIGKILL);
	for (int i = 0; i < 2; i++) {
		int n = 0;

		if (c->out[i] >= 0 && ioctl(c->out[i], FIONREAD, &n) == 0 && n > 0)
			c->left[i] = (size_t)n;
	}
	drop_stdin(c);
}

static void reap(void)
{
	struct signalfd_siginfo si;
	int status;
	pid_t pid;

	while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si)
		;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int i = 0; i < MAX_CMDS; i++)
			if (cmds[i].cid != 0 && cmds[i].pid == pid && !cmds[i].reaped)
				on_reaped(&cmds[i], status);
		/* else a grandchild we inherited as subreaper: nothing to say */
	}
}

/* STDIN_ACK for what reached a command's pipe (every ACK_EVERY bytes, and when its
 * queue is empty), then STDIN_GONE for a stdin that was dropped; both before any EXIT
 * of that command (the host forgets the cid at EXIT). */
static void stdin_notes(void)
{
	for (int i = 0; i < MAX_CMDS; i++) {
		struct cmd *c = &cmds[i];

		if (c->cid == 0 || c->reaped)
			continue;
		if (c->unacked > 0 && (c->unacked >= ACK_EVERY || c->in_len == 0 || c->gone)) {
			if (oq_len + AP_HDR + 4 > OUTQ_LIMIT)
				return;
			send_u32(AP_STDIN_ACK, c->cid, (uint32_t)c->unacked);
			c->unacked = 0;
		}
		if (c->gone) {
			if (oq_len + AP_HDR > OUTQ_LIMIT)
				return;
			send_frame(AP_STDIN_GONE, c->cid, NULL, 0);
			c->gone = 0;
		}
	}
}

/* EXIT for reaped commands whose output is all sent; then the cid is forgotten. */
static void settle(void)
{
	for (int i = 0; i < MAX_CMDS; i++) {
		struct cmd *c = &cmds[i];

		if (c->cid == 0 || !c->reaped)
			continue;
		if ((c->out[0] >= 0 && c->left[0] > 0) || (c->out[1] >= 0 && c->left[1] > 0))
			continue;
		if (oq_len + AP_HDR + 4 > OUTQ_LIMIT)
			return;
		send_u32(AP_EXIT, c->cid, (uint32_t)c->status);
		close_fd(&c->out[0]);
		close_fd(&c->out[1]);
		memset(c, 0, sizeof *c);
		ncmds--;
	}
}

static void setup(void)
{
	sigset_t chld;

	/* Commands run as our uid: non-dumpable, they cannot ptrace us or open our
	 * /proc fds (the host socket) to forge frames. */
	prctl(PR_SET_DUMPABLE, 0);
	/* A command's orphans come back to us to be reaped, not left as zombies. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (fcntl(0, F_GETFD) < 0 || fcntl(1, F_GETFD) < 0)
		exit(1);
	if (fcntl(2, F_GETFD) < 0) { /* keep fd 2 from becoming a command's pipe */
		int p[2];

		if (pipe(p) == 0 && p[1] != 2)
			close(p[1]);
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		logline("sandbox-agent: signalfd: %s", strerror(errno));
		exit(1);
	}
	set_nonblock(0);
	set_nonblock(1);
	for (int i = 0; i < MAX_CMDS; i++)
		cmds[i].out[0] = cmds[i].out[1] = cmds[i].in = -1;
}

int main(int argc, char **argv)
{
	static struct pollfd pf[3 + 3 * MAX_CMDS];
	static struct {
		struct cmd *c;
		int which; /* 0, 1: stdout, stderr; 2: stdin */
	} ref[3 * MAX_CMDS];

	if (argc == 2 && strcmp(argv[1], STUB_ARG0) == 0)
		stub_main(); /* a prewarmed job sandbox's exec stub (stub.c) */
	setup();
	send_u32(AP_HELLO, 0, AP_VERSION);
	for (;;) {
		nfds_t n = 3;

		process_frames();
		stdin_notes();
		settle();
		flush_host();
		pf[0] = (struct pollfd){ .fd = in_n < sizeof inbuf ? 0 : -1, .events = POLLIN };
		pf[1] = (struct pollfd){ .fd = oq_len > 0 ? 1 : -1, .events = POLLOUT };
		pf[2] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
		for (int i = 0; i < MAX_CMDS; i++) {
			struct cmd *c = &cmds[i];

			if (c->cid == 0)
				continue;
			for (int k = 0; k < 3; k++) {
				int fd = k < 2 ? c->out[k] : c->in;

				if (k < 2 ? !may_read_output(c, k) : (fd < 0 || c->in_len == 0))
					continue;
				ref[n - 3].c = c;
				ref[n - 3].which = k;
				pf[n++] = (struct pollfd){ .fd = fd, .events = k < 2 ? POLLIN : POLLOUT };
			}
		}
		if (poll(pf, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			logline("sandbox-agent: poll: %s", strerror(errno));
			finish(1);
		}
		if (pf[0].revents)
			read_host();
		if (pf[1].revents)
			flush_host();
		if (pf[2].revents)
			reap();
		for (nfds_t i = 3; i < n; i++) {
			struct cmd *c = ref[i - 3].c;
			int k = ref[i - 3].which;

			/* a stale entry: the fd was closed (and maybe reused) since poll */
			if (pf[i].revents == 0 || pf[i].fd != (k < 2 ? c->out[k] : c->in))
				continue;
			if (k < 2)
				read_output(c, k);
			else
				write_stdin(c);
		}
	}
}
