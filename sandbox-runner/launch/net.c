/* Network sandboxes: slirp4netns (see net.h). */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ifaddrs.h>
#include <linux/nsfs.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * slirp4netns, theory of operation. The sandbox's network namespace belongs to the
 * user namespace bwrap made as the slot uid, and the slot uid owns it: a process of
 * that uid may join it and then holds every capability inside it (and nowhere
 * else), which is all slirp4netns needs to open tap0 there. So slirp4netns runs as
 * the slot uid, not as root, with no capability in the host's namespaces,
 * no_new_privs, its own seccomp filter (--enable-seccomp), and only its child joins
 * the job's user and network namespaces (--userns-path, --netns-type=path); the
 * parent stays in the host's network namespace to do the NAT.
 *
 * Its --enable-sandbox cannot work unprivileged (it wants uid 0 in the job's user
 * namespace, which bwrap's single-uid mapping does not have) and would bind the
 * host's whole /etc and /run anyway. Instead the child below, while still root,
 * builds the root slirp4netns runs in: a private mount namespace (owned by the
 * host's user namespace, so slirp cannot undo it) pivoted into a read-only tmpfs
 * with /usr read-only (+ the lib and bin links), /etc/resolv.conf (a copy of the
 * host's: libslirp forwards 10.0.2.3 there), a /dev/net/tun node of the slot uid's
 * own (the host's may be root's 0600), and the two namespace
 * files at /ns/user and /ns/net. No /proc, /run, /var, /home, no host /etc, no
 * state directory, no config, no DB socket.
 */

#define SLIRP_FD_READY 3
#define SLIRP_FD_EXE 4
#define SLIRP_FD_ERR 5

static int slirp_errfd = -1;

static void __attribute__((noreturn)) slirp_fail(const char *step)
{
	char msg[256];
	int n = snprintf(msg, sizeof msg, "slirp4netns setup: %s: %s", step, strerror(errno));

	if (n > 0 && write(slirp_errfd, msg, (size_t)n) < 0)
		_exit(126);
	_exit(126);
}

/* root/rel, or failure: the paths are the state directory's (root-owned, checked). */
static const char *at(char *buf, size_t n, const char *root, const char *rel)
{
	if ((size_t)snprintf(buf, n, "%s/%s", root, rel) >= n) {
		errno = ENAMETOOLONG;
		slirp_fail(rel);
	}
	return buf;
}

/* An empty file or directory in the new root, and a bind mount of src on it. */
static void bind_into(int rfd, const char *root, const char *rel, const char *src, int dir)
{
	char p[CFG_PATH_MAX + 64];
	int fd;

	if (dir) {
		if (mkdirat(rfd, rel, 0755) < 0)
			slirp_fail(rel);
	} else {
		fd = openat(rfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
		if (fd < 0)
			slirp_fail(rel);
		close(fd);
	}
	if (mount(src, at(p, sizeof p, root, rel), NULL, MS_BIND | (dir ? MS_REC : 0), NULL) < 0)
		slirp_fail(rel);
}

static void write_file(int rfd, const char *rel, const char *data, size_t n)
{
	int fd = openat(rfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, data, n) != (ssize_t)n || close(fd) < 0)
		slirp_fail(rel);
}

/* The host's resolver configuration (the host's own file: links are followed). */
static size_t host_resolv(char *buf, size_t n)
{
	int fd = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC);
	ssize_t r = fd < 0 ? 0 : read(fd, buf, n);

	if (fd >= 0)
		close(fd);
	return r > 0 ? (size_t)r : 0;
}

static void build_root(const char *root, uid_t uid, int netns, int userns)
{
	static const char *const links[][2] = {
		{ "usr/bin", "bin" }, { "usr/sbin", "sbin" }, { "usr/lib", "lib" },
		{ "usr/lib64", "lib64" },
	};
	/* not nodev: dev/net/tun is a node of its own (read-only once built) */
	const unsigned long fl = MS_NOSUID | MS_NOEXEC;
	char p[CFG_PATH_MAX + 64], resolv[4096], src[64];
	size_t rn = host_resolv(resolv, sizeof resolv);
	int rfd;

	if (unshare(CLONE_NEWNS) < 0)
		slirp_fail("unshare mount namespace");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		slirp_fail("mount propagation");
	if (mount("sandbox-slirp", root, "tmpfs", fl, "size=64k,nr_inodes=64,mode=0755") < 0)
		slirp_fail("mount tmpfs");
	rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0)
		slirp_fail("open root");
	bind_into(rfd, root, "usr", "/usr", 1);
	if (mount(NULL, at(p, sizeof p, root, "usr"), NULL,
		  MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		slirp_fail("remount /usr read-only");
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
		if (symlinkat(links[i][0], rfd, links[i][1]) < 0)
			slirp_fail(links[i][1]);
	if (mkdirat(rfd, "etc", 0755) < 0 || mkdirat(rfd, "dev", 0755) < 0 ||
	    mkdirat(rfd, "dev/net", 0755) < 0 || mkdirat(rfd, "ns", 0755) < 0)
		slirp_fail("mkdir");
	write_file(rfd, "etc/resolv.conf", resolv, rn);
	/* Its own tun node, the slot uid's: the host's may be root's 0600. Opening it
	 * gives nothing but a tap in a namespace where one holds CAP_NET_ADMIN. */
	if (mknodat(rfd, "dev/net/tun", S_IFCHR | 0600, makedev(10, 200)) < 0 ||
	    fchownat(rfd, "dev/net/tun", uid, uid, AT_SYMLINK_NOFOLLOW) < 0)
		slirp_fail("dev/net/tun");
	snprintf(src, sizeof src, "/proc/self/fd/%d", netns);
	bind_into(rfd, root, "ns/net", src, 0);
	snprintf(src, sizeof src, "/proc/self/fd/%d", userns);
	bind_into(rfd, root, "ns/user", src, 0);
	/* pivot_root(".", "."): the old root ends up on top, and goes */
	if (fchdir(rfd) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		slirp_fail("pivot_root");
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		slirp_fail("detach the host's root");
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | fl, NULL) < 0)
		slirp_fail("remount root read-only");
	close(rfd);
}

/* Moves fds to their fixed numbers without clobbering one another. */
static void place(const int *src, int n)
{
	int tmp[8];

	for (int i = 0; i < n; i++)
		if ((tmp[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 100)) < 0)
			slirp_fail("dup");
	for (int i = 0; i < n; i++) {
		if (dup3(tmp[i], i, i >= SLIRP_FD_EXE ? O_CLOEXEC : 0) < 0)
			slirp_fail("dup3");
		close(tmp[i]);
	}
	slirp_errfd = SLIRP_FD_ERR;
	if (syscall(SYS_close_range, n, ~0U, 0) < 0)
		slirp_fail("close_range");
}

static void __attribute__((noreturn)) slirp_child(const struct cfg *cfg, pid_t child, uid_t uid,
						  int ready)
{
	char path[64], root[CFG_PATH_MAX + 16], readyfd[32];
	int netns, userns, exe, devnull;
	uid_t owner;

	snprintf(path, sizeof path, "/proc/%ld/ns/net", (long)child);
	snprintf(readyfd, sizeof readyfd, "--ready-fd=%d", SLIRP_FD_READY);
	/* the mount point of the private root: etc-net (root-owned, checked) */
	snprintf(root, sizeof root, "%s/etc-net", cfg->runner_state_dir);
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 ||
	    (exe = open(cfg->slirp4netns_path, O_PATH | O_CLOEXEC)) < 0 ||
	    (netns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		slirp_fail("open");
	/* the user namespace that owns the job's network namespace: bwrap's, owned by
	 * the slot uid (else joining it would fail, or mean something else) */
	if ((userns = ioctl(netns, NS_GET_USERNS)) < 0 ||
	    ioctl(userns, NS_GET_OWNER_UID, &owner) < 0)
		slirp_fail("NS_GET_USERNS");
	if (owner != uid) {
		errno = EPERM;
		slirp_fail("the job's user namespace is not the slot uid's");
	}
	build_root(root, uid, netns, userns);
	close(netns);
	close(userns);
	/* no capability left even to inherit (joining the job's user namespace grants
	 * the ones slirp needs, there and only there) */
	for (int cap = 0; prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0; cap++)
		;
	if (setresgid(uid, uid, uid) < 0 || setgroups(0, NULL) < 0 || setresuid(uid, uid, uid) < 0)
		slirp_fail("drop to the slot uid");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		slirp_fail("prctl");
	place((int[]){ devnull, devnull, 2, ready, exe, slirp_errfd }, 6);
	/* --disable-host-loopback: the job must not reach the host's 127.0.0.1 (the
	 * database, nginx). No --enable-sandbox: see above. */
	char *const argv[] = { (char *)"slirp4netns", (char *)"--configure", (char *)"--mtu=65520",
			       (char *)"--disable-host-loopback", (char *)"--enable-seccomp",
			       readyfd, (char *)"--userns-path=/ns/user",
			       (char *)"--netns-type=path", (char *)"/ns/net", (char *)"tap0",
			       NULL };
	char *const envp[] = { NULL };
	syscall(SYS_execveat, SLIRP_FD_EXE, "", argv, envp, AT_EMPTY_PATH);
	slirp_fail("exec slirp4netns");
}

pid_t net_slirp_start(const struct cfg *cfg, pid_t child, uid_t uid, int ready_fd, char *err,
		      size_t errlen)
{
	int p[2];
	char msg[256];
	ssize_t r;
	pid_t pid;

	if (uid == 0) {
		snprintf(err, errlen, "slirp4netns must not run as root");
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		slirp_errfd = p[1];
		slirp_child(cfg, child, uid, ready_fd);
	}
	close(p[1]);
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		return -1;
	}
	do
		r = read(p[0], msg, sizeof msg - 1);
	while (r < 0 && errno == EINTR);
	close(p[0]);
	if (r > 0) {
		msg[r] = '\0';
		snprintf(err, errlen, "%s", msg);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* Destinations a network job must never reach, beyond what slirp4netns's
 * --disable-host-loopback covers: private, shared, link-local (cloud metadata) and
 * documentation ranges, and every address of this host (computed per job). The
 * connected 10.0.2.0/24 of slirp's tap0 stays more specific than 10.0.0.0/8. */
static const char *const net_deny[] = {
	"0.0.0.0/8",      "10.0.0.0/8",    "100.64.0.0/10",   "127.0.0.0/8",
	"169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",    "192.0.2.0/24",
	"192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
	"224.0.0.0/4",    "240.0.0.0/4",
};


/* "route add unreachable X" lines for `ip -batch -`; no job data goes in. */
static char *net_batch(const struct cfg *cfg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ifaddrs *ifa = NULL;
	struct in_addr db;

	if (f == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof net_deny / sizeof net_deny[0]; i++)
		fprintf(f, "route add unreachable %s\n", net_deny[i]);
	if (getifaddrs(&ifa) == 0) {
		for (struct ifaddrs *a = ifa; a; a = a->ifa_next) {
			char txt[INET_ADDRSTRLEN];
			if (a->ifa_addr == NULL || a->ifa_addr->sa_family != AF_INET)
				continue;
			inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)a->ifa_addr)->sin_addr, txt,
				  sizeof txt);
			fprintf(f, "route add unreachable %s/32\n", txt);
		}
		freeifaddrs(ifa);
	}
	if (cfg->db_socket[0] == '\0' && inet_pton(AF_INET, cfg->db_host, &db) == 1)
		fprintf(f, "route add unreachable %s/32\n", cfg->db_host);
	fclose(f);
	return buf;
}

/* Enters the job's network namespace (we are root there too) and installs the
 * unreachable routes before the command starts. */
int net_restrict(const struct cfg *cfg, pid_t child, char *err, size_t errlen)
{
	char path[64], *batch = net_batch(cfg);
	int in[2], st = 0, fd;
	pid_t pid;

	if (batch == NULL || pipe2(in, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "route batch: %s", strerror(errno));
		free(batch);
		return -1;
	}
	snprintf(path, sizeof path, "/proc/%ld/ns/net", (long)child);
	pid = fork();
	if (pid == 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNET) < 0 || dup2(in[0], 0) < 0)
			_exit(126);
		execl(IP_PATH, "ip", "-batch", "-", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	if (pid > 0 && write(in[1], batch, strlen(batch)) != (ssize_t)strlen(batch))
		st = -1;
	close(in[1]);
	free(batch);
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(err, errlen, "%s -batch in the job's namespace failed (status %d)", IP_PATH,
			 st);
		return -1;
	}
	return 0;
}
