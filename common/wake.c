/* Host-local claim wake-up (issue 11) (see wake.h). */
#include "wake.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define DRAIN_MAX 4096 /* datagrams discarded per wake-up: a flood cannot pin the loop */

static ino_t bound_ino; /* the socket file wake_listen created */
static dev_t bound_dev;

static int fill_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (path[0] == '\0' || strlen(path) >= sizeof a->sun_path) {
		errno = EINVAL;
		return -1;
	}
	memcpy(a->sun_path, path, strlen(path) + 1);
	return 0;
}

int wake_send(const char *path)
{
	/* one socket per process, opened on first use (API workers after their fork) */
	static int fd = -1;
	static pid_t owner;
	struct sockaddr_un a;

	if (fill_addr(path, &a) < 0)
		return -1;
	if (fd >= 0 && owner != getpid()) {
		close(fd); /* inherited across fork: harmless, but keep one per process */
		fd = -1;
	}
	if (fd < 0) {
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return -1;
		owner = getpid();
	}
	return sendto(fd, "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&a,
		      sizeof a) == 1 ? 0 : -1;
}

static int fail_as(char *err, size_t errlen, const char *key, const char *path,
		   const char *what)
{
	int e = errno;

	snprintf(err, errlen, "%s %s: %s%s%s", key, path, what, e ? ": " : "",
		 e ? strerror(e) : "");
	errno = e;
	return -1;
}

/* Whether a dispatcher listens at path now (a datagram connect succeeds). */
static int live(const struct sockaddr_un *a)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), ok;

	if (fd < 0)
		return 0;
	ok = connect(fd, (const struct sockaddr *)a, sizeof *a) == 0;
	close(fd);
	return ok;
}

/* Binds path; see wake_listen (group 0: mode 0200, the directory's owner) and
 * wake_listen_group (group 1: mode 0220, the directory's group). key names the
 * setting in messages. */
static int listen_at(const char *path, const char *key, int group, char *err, size_t errlen)
{
	char dirbuf[sizeof ((struct sockaddr_un *)0)->sun_path], namebuf[sizeof dirbuf];
	struct sockaddr_un a;
	struct stat dst, st;
	int dfd = -1, fd = -1;
	const char *name;
	mode_t old;

	errno = 0;
	if (fill_addr(path, &a) < 0)
		return fail_as(err, errlen, key, path, "not a usable socket path");
	snprintf(dirbuf, sizeof dirbuf, "%s", path);
	snprintf(namebuf, sizeof namebuf, "%s", path);
	name = basename(namebuf);
	dfd = open(dirname(dirbuf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &dst) < 0) {
		fail_as(err, errlen, key, path, "its directory cannot be opened");
		goto bad;
	}
	/* whoever may write the directory could put their own socket there (a group
	 * socket: the operator's directory may let its group in, never everyone) */
	if (dst.st_mode & (group ? S_IWOTH : (S_IWGRP | S_IWOTH))) {
		errno = 0;
		fail_as(err, errlen, key, path,
			group ? "its directory is world-writable"
			      : "its directory is group- or world-writable");
		goto bad;
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = 0;
		if (!S_ISSOCK(st.st_mode)) {
			fail_as(err, errlen, key, path, "exists and is not a socket");
			goto bad;
		}
		if (live(&a)) {
			fail_as(err, errlen, key, path,
				group ? "another process listens there"
				      : "another dispatcher listens there");
			goto bad;
		}
		if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT) {
			fail_as(err, errlen, key, path, "the stale socket cannot be removed");
			goto bad;
		}
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		fail_as(err, errlen, key, path, "socket");
		goto bad;
	}
	old = umask(0577); /* created 0200: write only, for its owner */
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		umask(old);
		fail_as(err, errlen, key, path, "bind");
		goto bad;
	}
	umask(old);
	if (group) {
		/* the directory's group may send too: the group first, then its write
		 * bit, so no other group ever has it; never through a link */
		if (fchownat(dfd, name, (uid_t)-1, dst.st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
		    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode) ||
		    fchmodat(dfd, name, 0220, 0) < 0) {
			fail_as(err, errlen, key, path, "giving it the directory's group, mode 0220");
			unlinkat(dfd, name, 0);
			goto bad;
		}
	} else if (fchownat(dfd, name, dst.st_uid, dst.st_gid, AT_SYMLINK_NOFOLLOW) < 0) {
		/* the directory's owner (the API's user) may send; never through a link */
		fail_as(err, errlen, key, path, "chown to the directory's owner");
		unlinkat(dfd, name, 0);
		goto bad;
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		bound_ino = st.st_ino, bound_dev = st.st_dev;
	close(dfd);
	return fd;
bad:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return -1;
}

int wake_listen(const char *path, char *err, size_t errlen)
{
	return listen_at(path, "runner_wake_socket", 0, err, errlen);
}

int wake_listen_group(const char *path, const char *key, char *err, size_t errlen)
{
	return listen_at(path, key, 1, err, errlen);
}

int wake_drain(int fd)
{
	char buf[64];
	int n;

	/* the content is never looked at: a wake-up is all a datagram says */
	for (n = 0; n < DRAIN_MAX && recv(fd, buf, sizeof buf, MSG_DONTWAIT) >= 0; n++)
		;
	return n;
}

int wake_wait(int fd, long ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, (int)ms) <= 0 || !(p.revents & POLLIN))
		return 0;
	wake_drain(fd);
	return 1;
}

int wake_bound(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == bound_ino &&
	       st.st_dev == bound_dev;
}

void wake_close(int fd, const char *path)
{
	if (fd < 0)
		return;
	/* only our own socket: another dispatcher may have replaced it since */
	if (wake_bound(path))
		unlink(path);
	close(fd);
}
