/*
 * seccomp-probe: runs inside the sandbox for tests/integration/security.sh.
 *
 *   probe OP [OP...]            attempt each operation in turn
 *   probe connect PORT [ADDR]   TCP connect to ADDR (default 127.0.0.1):PORT
 *   probe connect_unix PATH     unix stream connect; a leading @ is the abstract
 *                               namespace (per network namespace)
 *
 * For every operation it prints exactly one line,
 *
 *   NAME ok
 *   NAME errno=ENAME (strerror text)
 *
 * and it exits 0 (unless the kernel kills it, which is what `x32` expects: a
 * syscall with __X32_SYSCALL_BIT set must end the process with SIGSYS, so the
 * suite checks the job's exit code 159 / signal 31 instead of a line; run it as the
 * last or only operation). An unknown operation prints `NAME unknown` and exits 2.
 *
 * Each attempt is chosen so that the same sandbox *without* its seccomp filter gives
 * a different answer wherever that is possible. Measured under bwrap 0.8 with the
 * runner's namespace options but no --seccomp, as an unprivileged uid, kernel 6.x:
 *   ok:      ptrace_traceme ptrace_attach process_vm_readv clone3 keyctl add_key
 *            perf_event_open (paranoid 2) userfaultfd (user-mode only) io_uring_setup
 *            tiocsti (on its own controlling pty) vsock_socket personality (query)
 *   ENOSPC:  unshare_user clone_newuser (bwrap's --disable-userns)
 *   ENOKEY:  request_key    ENOTTY: tioclinux (a pty)    EOPNOTSUPP: vsock_socketpair
 *   ENOSYS:  kexec_load init_module delete_module (kernel without them)
 *   EPERM:   mount umount2 pivot_root chroot unshare_ns unshare_net setns bpf
 *            (privilege alone refuses these: EPERM is simply the secure answer)
 *   EINVAL:  setuid (uid 0 is not mapped in the job's user namespace)
 * Under the filter every one of them but setuid answers EPERM, clone3 ENOSYS and
 * AF_VSOCK EAFNOSUPPORT. Attempts that could wedge the probe if they succeeded run
 * in a throw-away child (PTRACE_TRACEME; TIOCSTI/TIOCLINUX, which need a fresh
 * session whose controlling terminal is a new pty: a job's stdin is a pipe), and a
 * successful PTRACE_ATTACH is undone.
 *
 * Raw syscall() is used throughout so that the errno is the kernel's, not a libc
 * emulation's, and so that calls without a glibc wrapper work the same way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef PTRACE_TRACEME
#define PTRACE_TRACEME 0
#endif
#ifndef PTRACE_ATTACH
#define PTRACE_ATTACH 16
#endif
#ifndef PTRACE_DETACH
#define PTRACE_DETACH 17
#endif
#ifndef CLONE_NEWUSER
#define CLONE_NEWUSER 0x10000000
#endif

/* Prints the outcome of one attempt: rc < 0 means failure with errno e. */
static void report(const char *name, long rc, int e)
{
	if (rc >= 0) {
		printf("%s ok\n", name);
	} else {
		const char *sym = strerrorname_np(e);
		if (sym)
			printf("%s errno=%s (%s)\n", name, sym, strerror(e));
		else
			printf("%s errno=%d (%s)\n", name, e, strerror(e));
	}
	fflush(stdout);
}

#define TRY(name, expr)                                                                \
	do {                                                                           \
		errno = 0;                                                             \
		long rc_ = (long)(expr);                                               \
		report(name, rc_, errno);                                              \
	} while (0)

/* A raw clone/clone3 that succeeded: the child leaves at once, the parent reaps. */
static long reap_if_child(long rc)
{
	if (rc == 0)
		syscall(SYS_exit_group, 0);
	if (rc > 0) {
		int e = errno;
		waitpid((pid_t)rc, NULL, __WALL);
		errno = e;
	}
	return rc;
}

/* In a throw-away child: a process that did become traced would stop at its next
 * signal and hang the rest of the probe. */
static void op_ptrace_traceme(void)
{
	int p[2], res[2] = { -1, EIO };
	pid_t pid;

	if (pipe(p) < 0 || (pid = fork()) < 0) {
		report("ptrace_traceme_fork", -1, errno);
		return;
	}
	if (pid == 0) {
		errno = 0;
		res[0] = (int)syscall(SYS_ptrace, PTRACE_TRACEME, 0, NULL, NULL);
		res[1] = errno;
		if (write(p[1], res, sizeof res) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], res, sizeof res) != (ssize_t)sizeof res)
		res[0] = -1;
	close(p[0]);
	waitpid(pid, NULL, 0);
	report("ptrace_traceme", res[0], res[1]);
}

static void op_ptrace_attach(void)
{
	errno = 0;
	long rc = syscall(SYS_ptrace, PTRACE_ATTACH, 1, NULL, NULL);
	int e = errno;
	if (rc == 0) {
		/* Detach needs the tracee stopped: wait for the attach's SIGSTOP. */
		waitpid(1, NULL, __WALL);
		syscall(SYS_ptrace, PTRACE_DETACH, 1, NULL, NULL);
	}
	report("ptrace_attach", rc, e);
}

static void op_process_vm_readv(void)
{
	static char src[16] = "probe-secret";
	char dst[16];
	struct iovec l = { dst, sizeof dst }, r = { src, sizeof src };

	TRY("process_vm_readv", syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0));
}

static void op_mount(void)
{
	mkdir("/tmp/x", 0700);
	TRY("mount", syscall(SYS_mount, "none", "/tmp/x", "tmpfs", 0, "size=1m"));
}

static void op_umount2(void)
{
	TRY("umount2", syscall(SYS_umount2, "/tmp", MNT_DETACH));
}

static void op_pivot_root(void)
{
	TRY("pivot_root", syscall(SYS_pivot_root, "/tmp", "/tmp"));
}

static void op_chroot(void)
{
	TRY("chroot", syscall(SYS_chroot, "/tmp"));
}

static void op_unshare_user(void)
{
	TRY("unshare_user", syscall(SYS_unshare, CLONE_NEWUSER));
}

static void op_unshare_ns(void)
{
	TRY("unshare_ns", syscall(SYS_unshare, CLONE_NEWNS));
}

static void op_unshare_net(void)
{
	TRY("unshare_net", syscall(SYS_unshare, CLONE_NEWNET));
}

static void op_setns(void)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		report("setns_open", -1, errno);
		return;
	}
	TRY("setns", syscall(SYS_setns, fd, 0));
	close(fd);
}

static void op_clone_newuser(void)
{
	errno = 0;
	long rc = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL,
			  0UL);
	int e = errno;
	reap_if_child(rc);
	report("clone_newuser", rc, e);
}

static void op_clone3(void)
{
	struct clone_args a;

	memset(&a, 0, sizeof a);
	a.exit_signal = SIGCHLD; /* a plain fork: the filter must refuse clone3 outright */
	errno = 0;
	long rc = syscall(__NR_clone3, &a, sizeof a);
	int e = errno;
	reap_if_child(rc);
	report("clone3", rc, e);
}

static void op_keyctl(void)
{
	TRY("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
}

static void op_add_key(void)
{
	TRY("add_key",
	    syscall(SYS_add_key, "user", "probe", "x", (size_t)1, KEY_SPEC_PROCESS_KEYRING));
}

static void op_request_key(void)
{
	TRY("request_key", syscall(SYS_request_key, "user", "probe-nonexistent", NULL, 0));
}

static void op_bpf(void)
{
	/* BPF_MAP_CREATE of an array map: harmless if it were allowed. */
	union {
		uint32_t u32[32];
		uint64_t align;
	} attr;

	memset(&attr, 0, sizeof attr);
	attr.u32[0] = 2; /* BPF_MAP_TYPE_ARRAY */
	attr.u32[1] = 4; /* key_size */
	attr.u32[2] = 4; /* value_size */
	attr.u32[3] = 1; /* max_entries */
	TRY("bpf", syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, &attr, sizeof attr));
}

static void op_perf_event_open(void)
{
	struct perf_event_attr pe;

	memset(&pe, 0, sizeof pe);
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof pe;
	pe.config = PERF_COUNT_SW_TASK_CLOCK;
	pe.disabled = 1;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	TRY("perf_event_open", syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0UL));
}

static void op_userfaultfd(void)
{
	TRY("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
}

static void op_io_uring_setup(void)
{
	unsigned char params[512]; /* struct io_uring_params is 120 bytes */

	memset(params, 0, sizeof params);
	TRY("io_uring_setup", syscall(__NR_io_uring_setup, 4, params));
}

static void op_kexec_load(void)
{
	TRY("kexec_load", syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0UL));
}

static void op_init_module(void)
{
	static const char image[64];

	TRY("init_module", syscall(SYS_init_module, image, sizeof image, ""));
}

static void op_delete_module(void)
{
	TRY("delete_module", syscall(SYS_delete_module, "probe_nonexistent", O_NONBLOCK));
}

/*
 * The ioctl is tried on fd 0 when that is a terminal; otherwise (a job's stdin is a
 * pipe) on a fresh pty that a throw-away child makes its *controlling* terminal
 * (setsid, then open the slave without O_NOCTTY). On a controlling terminal
 * TIOCSTI is allowed to its owner unless dev.tty.legacy_tiocsti=0, so an EPERM there
 * is the filter's, not the tty layer's. The child reports over a pipe.
 */
static void op_tty_ioctl(const char *name, unsigned long req, void *arg)
{
	int p[2], res[2] = { -1, EIO };
	pid_t pid;

	if (isatty(0)) {
		TRY(name, syscall(SYS_ioctl, 0, req, arg));
		return;
	}
	if (pipe(p) < 0 || (pid = fork()) < 0) {
		report(name, -1, errno);
		return;
	}
	if (pid == 0) {
		int m, fd = -1;
		char *pts;

		close(p[0]);
		errno = 0;
		if (setsid() >= 0 && (m = posix_openpt(O_RDWR | O_NOCTTY)) >= 0 &&
		    grantpt(m) == 0 && unlockpt(m) == 0 && (pts = ptsname(m)) != NULL)
			fd = open(pts, O_RDWR); /* no O_NOCTTY: becomes our controlling tty */
		if (fd < 0) {
			res[0] = -2;
			res[1] = errno;
		} else {
			errno = 0;
			res[0] = (int)syscall(SYS_ioctl, fd, req, arg);
			res[1] = errno;
		}
		if (write(p[1], res, sizeof res) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], res, sizeof res) != (ssize_t)sizeof res)
		res[0] = -1;
	close(p[0]);
	waitpid(pid, NULL, 0);
	if (res[0] == -2) {
		char what[64];
		snprintf(what, sizeof what, "%s_no_tty", name);
		report(what, -1, res[1]);
		return;
	}
	report(name, res[0], res[1]);
}

static void op_tiocsti(void)
{
	static char c = '\n';

	op_tty_ioctl("tiocsti", TIOCSTI, &c);
}

static void op_tioclinux(void)
{
	static char sub = 12; /* TIOCL_GETFGCONSOLE: read-only */

	op_tty_ioctl("tioclinux", TIOCLINUX, &sub);
}

static void op_vsock_socket(void)
{
	errno = 0;
	long rc = syscall(SYS_socket, AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int e = errno;
	if (rc >= 0)
		close((int)rc);
	report("vsock_socket", rc, e);
}

static void op_vsock_socketpair(void)
{
	int sv[2];

	errno = 0;
	long rc = syscall(SYS_socketpair, AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	int e = errno;
	if (rc == 0) {
		close(sv[0]);
		close(sv[1]);
	}
	report("vsock_socketpair", rc, e);
}

static void op_personality(void)
{
	/* 0xffffffff only queries the current persona. */
	TRY("personality", syscall(SYS_personality, 0xffffffffUL));
}

static void op_setuid(void)
{
	TRY("setuid", syscall(SYS_setuid, 0));
}

static void op_x32(void)
{
	printf("x32 attempting\n");
	fflush(stdout);
	TRY("x32", syscall(__X32_SYSCALL_BIT | SYS_getpid));
}

/* Non-blocking connect with a 3 s bound; a timeout is reported as ETIMEDOUT. */
static void op_connect(const char *port_s, const char *addr_s)
{
	const char *name = "connect";
	struct sockaddr_in sa;
	char *end;
	long port = strtol(port_s ? port_s : "", &end, 10);
	int fd, rc, e;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	if (port_s == NULL || *end || port < 1 || port > 65535 ||
	    inet_pton(AF_INET, addr_s, &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: probe connect PORT [IPv4-ADDR]\n");
		exit(2);
	}
	sa.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		report(name, -1, errno);
		return;
	}
	rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
	e = errno;
	if (rc < 0 && e == EINPROGRESS) {
		struct pollfd p = { fd, POLLOUT, 0 };
		socklen_t len = sizeof e;
		int n = poll(&p, 1, 3000);
		if (n == 0) {
			rc = -1;
			e = ETIMEDOUT;
		} else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0) {
			rc = -1;
			e = errno;
		} else {
			rc = e ? -1 : 0;
		}
	}
	close(fd);
	report(name, rc, e);
}

static void op_connect_unix(const char *path)
{
	struct sockaddr_un sa;
	size_t n = path ? strlen(path) : 0;
	socklen_t len;
	int fd;

	if (n == 0 || n >= sizeof sa.sun_path) {
		fprintf(stderr, "usage: probe connect_unix PATH|@ABSTRACT\n");
		exit(2);
	}
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '@' ? 0 : 1));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		report("connect_unix", -1, errno);
		return;
	}
	TRY("connect_unix", connect(fd, (struct sockaddr *)&sa, len));
	close(fd);
}

static const struct op {
	const char *name;
	void (*fn)(void);
} ops[] = {
	{ "ptrace_traceme", op_ptrace_traceme },
	{ "ptrace_attach", op_ptrace_attach },
	{ "process_vm_readv", op_process_vm_readv },
	{ "mount", op_mount },
	{ "umount2", op_umount2 },
	{ "pivot_root", op_pivot_root },
	{ "chroot", op_chroot },
	{ "unshare_user", op_unshare_user },
	{ "unshare_ns", op_unshare_ns },
	{ "unshare_net", op_unshare_net },
	{ "setns", op_setns },
	{ "clone_newuser", op_clone_newuser },
	{ "clone3", op_clone3 },
	{ "keyctl", op_keyctl },
	{ "add_key", op_add_key },
	{ "request_key", op_request_key },
	{ "bpf", op_bpf },
	{ "perf_event_open", op_perf_event_open },
	{ "userfaultfd", op_userfaultfd },
	{ "io_uring_setup", op_io_uring_setup },
	{ "kexec_load", op_kexec_load },
	{ "init_module", op_init_module },
	{ "delete_module", op_delete_module },
	{ "tiocsti", op_tiocsti },
	{ "tioclinux", op_tioclinux },
	{ "vsock_socket", op_vsock_socket },
	{ "vsock_socketpair", op_vsock_socketpair },
	{ "personality", op_personality },
	{ "setuid", op_setuid },
	{ "x32", op_x32 },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: probe OP [OP...] | probe connect PORT [ADDR] | probe connect_unix PATH\nops:");
		for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
			fprintf(stderr, " %s", ops[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	if (strcmp(argv[1], "connect_unix") == 0) {
		op_connect_unix(argc > 2 ? argv[2] : NULL);
		return 0;
	}
	if (strcmp(argv[1], "connect") == 0) {
		op_connect(argc > 2 ? argv[2] : NULL, argc > 3 ? argv[3] : "127.0.0.1");
		return 0;
	}
	for (int a = 1; a < argc; a++) {
		size_t i;
		for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
			if (strcmp(argv[a], ops[i].name) == 0)
				break;
		if (i == sizeof ops / sizeof ops[0]) {
			printf("%s unknown\n", argv[a]);
			return 2;
		}
		ops[i].fn();
	}
	return 0;
}
