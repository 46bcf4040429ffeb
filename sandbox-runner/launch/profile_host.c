/* The profile's host side: the host paths it binds are safe (prof_check_host), the
 * synthesized /etc under runner_state_dir is written at runner start
 * (prof_prepare_etc), and each sandbox child writes its own /etc into a fresh tmpfs
 * (prof_write_etc). */
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const etc_files[][2] = {
	{ "passwd", "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
		    "sandbox:x:1000:1000:sandbox:/workspace:/bin/sh\n"
		    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" },
	{ "group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n" },
	{ "hosts", "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost\n" },
	{ "nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n" },
	/* "alternatives" is a directory, created by prof_prepare_etc (mount point) */
	{ "resolv.conf", "# no network by default\n" },
	{ "hostname", "sandbox\n" },
};

/* A network job's /etc/resolv.conf: slirp4netns forwards 10.0.2.3 to the host's
 * resolver. */
const char prof_net_resolv[] = "nameserver 10.0.2.3\n";

static int check_path(const char *p, int want_dir, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(p, &st) < 0) {
		snprintf(err, errlen, "profile path %s: %s", p, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, errlen, "profile path %s is a symbolic link", p);
		return -1;
	}
	if ((want_dir && !S_ISDIR(st.st_mode)) || (!want_dir && !S_ISREG(st.st_mode))) {
		snprintf(err, errlen, "profile path %s has the wrong type", p);
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & 022) != 0) {
		snprintf(err, errlen, "profile path %s must be owned by root and not group or "
				      "world writable", p);
		return -1;
	}
	return 0;
}

int prof_check_host(const struct cfg *cfg, char *err, size_t errlen)
{
	char etc[CFG_PATH_MAX + 8];

	snprintf(etc, sizeof etc, "%s/etc", cfg->runner_state_dir);
	if (check_path("/usr", 1, err, errlen) < 0 || check_path("/usr/bin", 1, err, errlen) < 0 ||
	    check_path("/etc/alternatives", 1, err, errlen) < 0 ||
	    check_path("/usr/lib", 1, err, errlen) < 0 ||
	    check_path(cfg->runner_state_dir, 1, err, errlen) < 0 ||
	    check_path(etc, 1, err, errlen) < 0 || check_path(cfg->bwrap_path, 0, err, errlen) < 0 ||
	    prof_check_env(cfg, err, errlen) < 0 || prof_check_profiles(cfg, err, errlen) < 0)
		return -1;
	static const char *const subdirs[] = { "etc-net", "slots", "work" };
	for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
		snprintf(etc, sizeof etc, "%s/%s", cfg->runner_state_dir, subdirs[i]);
		if (check_path(etc, 1, err, errlen) < 0)
			return -1;
	}
	snprintf(etc, sizeof etc, "%s/etc", cfg->runner_state_dir);
	for (size_t i = 0; i < sizeof etc_files / sizeof etc_files[0]; i++) {
		char p[CFG_PATH_MAX + 64];
		snprintf(p, sizeof p, "%s/%s", etc, etc_files[i][0]);
		if (check_path(p, 0, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* A root-owned directory, not a link, writable by root only: created if missing,
 * opened without following links. The state directory is trusted with mounts and
 * with the sandbox's /etc: anything else there must stop the runner. */
static int safe_dir(int parent, const char *path, mode_t mode, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkdirat(parent, path, mode) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	fd = openat(parent, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 errno == ELOOP || errno == ENOTDIR ? "is a symbolic link or not a directory"
							    : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022) != 0) {
		snprintf(err, errlen, "%s must be owned by root and not group or world writable",
			 path);
		close(fd);
		return -1;
	}
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode) < 0) {
		snprintf(err, errlen, "chmod %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Replaces dir/name atomically unless it already holds data; never follows a link,
 * and a private temporary name lets several runners start at once. */
static int write_etc(int dir, const char *name, const char *data, char *err, size_t errlen)
{
	char tmp[96], cur[512];
	size_t n = strlen(data);
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t r = read(fd, cur, sizeof cur);
		struct stat st;
		int same = r == (ssize_t)n && memcmp(cur, data, n) == 0 && fstat(fd, &st) == 0 &&
			   S_ISREG(st.st_mode) && st.st_uid == 0 && (st.st_mode & 07777) == 0644;
		close(fd);
		if (same)
			return 0;
	}
	snprintf(tmp, sizeof tmp, ".%s.%ld.tmp", name, (long)getpid());
	unlinkat(dir, tmp, 0);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "write %s: %s", name, strerror(errno));
		return -1;
	}
	if (write(fd, data, n) != (ssize_t)n || fchmod(fd, 0644) < 0) {
		snprintf(err, errlen, "write %s: %s", name, strerror(errno));
		close(fd);
		unlinkat(dir, tmp, 0);
		return -1;
	}
	if (close(fd) < 0 || renameat(dir, tmp, dir, name) < 0) {
		snprintf(err, errlen, "write %s: %s", name, strerror(errno));
		unlinkat(dir, tmp, 0);
		return -1;
	}
	return 0;
}

int prof_prepare_etc(const struct cfg *cfg, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		mode_t mode;
	} subdirs[] = { { "etc", 0755 }, { "etc-net", 0755 }, { "slots", 0711 }, { "work", 0711 } };
	int state, fds[4] = { -1, -1, -1, -1 }, rc = -1;

	state = safe_dir(AT_FDCWD, cfg->runner_state_dir, 0711, err, errlen);
	if (state < 0)
		return -1;
	for (int i = 0; i < 4; i++)
		if ((fds[i] = safe_dir(state, subdirs[i].name, subdirs[i].mode, err, errlen)) < 0)
			goto out;
	if (mkdirat(fds[0], "alternatives", 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir etc/alternatives: %s", strerror(errno));
		goto out;
	}
	/* etc is the mount point of each sandbox's private /etc (sandbox.c), etc-net
	 * that of slirp4netns's private root (net.c); the files here are what a bare
	 * bwrap would see (tests/bench). */
	for (size_t i = 0; i < sizeof etc_files / sizeof etc_files[0]; i++)
		if (write_etc(fds[0], etc_files[i][0], etc_files[i][1], err, errlen) < 0)
			goto out;
	rc = 0;
out:
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(state);
	return rc;
}

/* Plain writes into the fresh tmpfs of the child's own mount namespace: nothing else
 * is in it, so no link to avoid and no atomic replace needed. */
static int write_new(int dir, const char *name, const char *data)
{
	size_t n = strlen(data);
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	if (write(fd, data, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

int prof_write_etc(int dir, int network)
{
	if (mkdirat(dir, "alternatives", 0755) < 0)
		return -1;
	for (size_t i = 0; i < sizeof etc_files / sizeof etc_files[0]; i++) {
		const char *data = etc_files[i][1];
		if (network && strcmp(etc_files[i][0], "resolv.conf") == 0)
			data = prof_net_resolv;
		if (write_new(dir, etc_files[i][0], data) < 0)
			return -1;
	}
	return 0;
}
