/* A slot's workspace (see workspace.h). */
#include "workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "artname.h"
#include "sha256.h"
#include "strbuf.h"

#define MAX_DEPTH 32

/* The mount options of a workspace of disk_mb: ws_create's and ws_resize's. */
static void ws_opts(char *opts, size_t n, long long disk_mb, uid_t uid)
{
	snprintf(opts, n, "size=%lldm,nr_inodes=%lld,mode=0700,uid=%u,gid=%u", disk_mb,
		 disk_mb * 256 < 4096 ? 4096 : disk_mb * 256, (unsigned)uid, (unsigned)uid);
}

int ws_resize(const char *path, uid_t uid, long long disk_mb, char *err, size_t errlen)
{
	char opts[128];

	ws_opts(opts, sizeof opts, disk_mb, uid);
	if (mount(NULL, path, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, opts) < 0) {
		snprintf(err, errlen, "remount tmpfs on %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int ws_destroy(const char *path)
{
	/* Unmounting discards the job's tree without walking it. */
	while (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
		;
	if (rmdir(path) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

int ws_create(const char *root, int slot, uid_t uid, long long disk_mb, char *path,
	      size_t pathlen, char *err, size_t errlen)
{
	char opts[128];
	int fd;

	if ((size_t)snprintf(path, pathlen, "%s/slot-%d", root, slot) >= pathlen) {
		snprintf(err, errlen, "workspace path too long");
		return -1;
	}
	if (ws_destroy(path) < 0) {
		snprintf(err, errlen, "stale workspace %s: %s", path, strerror(errno));
		return -1;
	}
	if (mkdir(path, 0700) < 0) {
		snprintf(err, errlen, "mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	ws_opts(opts, sizeof opts, disk_mb, uid);
	if (mount("sandbox-ws", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		snprintf(err, errlen, "mount tmpfs on %s: %s", path, strerror(errno));
		rmdir(path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		ws_destroy(path);
		return -1;
	}
	return fd;
}

/* Walks all but the last component of rel, creating directories; returns a new
 * fd for the parent and points *last at the final component. */
static int walk_parent(int wsfd, const char *rel, uid_t uid, int create, const char **last,
		       char *err, size_t errlen)
{
	char comp[256];
	const char *p = rel;
	int fd = dup(wsfd);

	if (fd < 0) {
		snprintf(err, errlen, "dup: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n = strcspn(p, "/");
		int next;

		if (p[n] == '\0') {
			*last = p;
			return fd;
		}
		if (n >= sizeof comp) {
			close(fd);
			snprintf(err, errlen, "path component too long");
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (create && mkdirat(fd, comp, 0755) == 0 && fchownat(fd, comp, uid, uid,
									AT_SYMLINK_NOFOLLOW) < 0) {
			snprintf(err, errlen, "chown %s: %s", comp, strerror(errno));
			close(fd);
			return -1;
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0) {
			snprintf(err, errlen, "open directory %s: %s", comp, strerror(errno));
			return -1;
		}
		fd = next;
		p += n + 1;
	}
}

int ws_write_file(int wsfd, const char *rel, const unsigned char *data, size_t len,
		  int executable, uid_t uid, char *err, size_t errlen)
{
	const char *name;
	int dir = walk_parent(wsfd, rel, uid, 1, &name, err, errlen), fd;
	size_t off = 0;

	if (dir < 0)
		return -1;
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    executable ? 0755 : 0644);
	close(dir);
	if (fd < 0) {
		snprintf(err, errlen, "create %s: %s", rel, strerror(errno));
		return -1;
	}
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(err, errlen, "write %s: %s", rel,
				 w < 0 ? strerror(errno) : "short write");
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	if (fchown(fd, uid, uid) < 0 || fchmod(fd, executable ? 0755 : 0644) < 0) {
		snprintf(err, errlen, "chown %s: %s", rel, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int ws_mkdirs(int wsfd, const char *rel, uid_t uid, char *err, size_t errlen)
{
	char buf[1100];
	const char *name;
	int dir;

	/* walk_parent creates all but the last component; add a dummy last one. */
	if ((size_t)snprintf(buf, sizeof buf, "%s/x", rel) >= sizeof buf) {
		snprintf(err, errlen, "path too long");
		return -1;
	}
	dir = walk_parent(wsfd, buf, uid, 1, &name, err, errlen);
	if (dir < 0)
		return -1;
	close(dir);
	return 0;
}

struct collect {
	const struct artifact_caps *caps;
	struct artifact *a;
	size_t n, cap;
	long long total;
	struct strbuf *notes;
	/* names that are never collected nor shown: counted, one line per kind */
	size_t n_control, n_backslash, n_long, n_unlisted;
};

/* The notes are diagnostics: bounded, so a job with many odd entries cannot fill
 * its result with them. Room is kept at the end for the summary lines. */
#define NOTES_MAX 2047
#define NOTES_RESERVE 320

/* Appends one whole line, or counts it as unlisted when it does not fit. */
static void add_line(struct collect *c, const char *line, size_t reserve)
{
	size_t n = strlen(line);

	if (c->notes->len + n + 1 + reserve > NOTES_MAX) {
		c->n_unlisted++;
		return;
	}
	sb_add(c->notes, line, n);
	sb_add(c->notes, "\n", 1);
}

/* One line per skipped entry: "artifact PATH skipped: WHY". PATH is the job's:
 * escaped, so that it is never taken for service text or a line of its own. */
static void note(struct collect *c, const char *path, const char *why)
{
	struct strbuf line = STRBUF_INIT;
	char esc[256];

	an_escape(esc, sizeof esc, path);
	sb_addf(&line, "artifact %s skipped: %s", esc, why);
	add_line(c, line.buf, NOTES_RESERVE);
	sb_release(&line);
}

static void note_dir(struct collect *c, const char *dir, const char *why)
{
	char esc[256];

	an_escape(esc, sizeof esc, dir);
	sb_reset(c->notes);
	sb_addf(c->notes, "artifacts directory %s: %s\n", esc, why);
}

static void summary(struct collect *c)
{
	struct strbuf line = STRBUF_INIT;

	if (c->n_control) {
		sb_addf(&line, "artifacts skipped: %zu name%s with control characters or invalid "
			"UTF-8", c->n_control, c->n_control == 1 ? "" : "s");
		add_line(c, line.buf, 0);
		sb_reset(&line);
	}
	if (c->n_backslash) {
		sb_addf(&line, "artifacts skipped: %zu name%s with a backslash (not downloadable)",
			c->n_backslash, c->n_backslash == 1 ? "" : "s");
		add_line(c, line.buf, 0);
		sb_reset(&line);
	}
	if (c->n_long) {
		sb_addf(&line, "artifacts skipped: %zu path%s longer than %d bytes (or %d bytes "
			"percent-encoded)", c->n_long, c->n_long == 1 ? "" : "s", AN_PATH_MAX,
			AN_URL_PATH_MAX);
		add_line(c, line.buf, 0);
		sb_reset(&line);
	}
	if (c->n_unlisted) {
		sb_addf(&line, "artifacts: %zu more skipped entr%s not listed", c->n_unlisted,
			c->n_unlisted == 1 ? "y" : "ies");
		add_line(c, line.buf, 0);
	}
	sb_release(&line);
}

/* A name the API could not list or serve, or that could pass for service text,
 * is not collected: counted by kind. 1 when e is skipped. */
static int skip_name(struct collect *c, const char *name, const char *prefix, char *rel,
		     size_t reln)
{
	switch (an_check_name(name, strlen(name))) {
	case AN_OK:
		break;
	case AN_BACKSLASH:
		c->n_backslash++;
		return 1;
	default:
		c->n_control++;
		return 1;
	}
	if ((size_t)snprintf(rel, reln, "%s%s%s", prefix, *prefix ? "/" : "", name) >= reln ||
	    an_check_path(rel) != AN_OK) {
		c->n_long++;
		return 1;
	}
	return 0;
}

static int add_file(struct collect *c, int dir, const char *name, const char *rel,
		    const struct stat *st0)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	struct artifact *a;
	size_t got = 0;

	if (fd < 0)
		return 0;
	/* The entry must still be the regular file we saw. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != st0->st_ino) {
		close(fd);
		return 0;
	}
	if ((long long)c->n >= c->caps->max_files) {
		note(c, rel, "too many files");
		close(fd);
		return 0;
	}
	if (st.st_size > c->caps->max_file_bytes ||
	    c->total + st.st_size > c->caps->max_total_bytes) {
		note(c, rel, "size limit");
		close(fd);
		return 0;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct artifact *na = reallocarray(c->a, cap, sizeof *na);
		if (na == NULL) {
			close(fd);
			return -1;
		}
		c->a = na;
		c->cap = cap;
	}
	a = &c->a[c->n];
	memset(a, 0, sizeof *a);
	a->data = malloc((size_t)st.st_size + 1);
	a->path = strdup(rel);
	if (a->data == NULL || a->path == NULL) {
		free(a->data);
		free(a->path);
		close(fd);
		return -1;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, a->data + got, (size_t)st.st_size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	a->size = got;
	sha256_hex(a->data, got, a->sha256);
	c->total += (long long)got;
	c->n++;
	return 0;
}

static int walk(struct collect *c, int dir, const char *prefix, int depth)
{
	int dfd = dup(dir), rc = 0;
	DIR *d;
	struct dirent *e;

	if (dfd < 0)
		return -1;
	d = fdopendir(dfd);
	if (d == NULL) {
		close(dfd);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char rel[1100];
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (skip_name(c, e->d_name, prefix, rel, sizeof rel))
			continue;
		if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth >= MAX_DEPTH) {
				note(c, rel, "too deep");
				continue;
			}
			int sub = openat(dir, e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				continue;
			rc = walk(c, sub, rel, depth + 1);
			close(sub);
		} else if (S_ISREG(st.st_mode)) {
			rc = add_file(c, dir, e->d_name, rel, &st);
		} else {
			note(c, rel,
			     S_ISLNK(st.st_mode) ? "symbolic link" : "not a regular file");
		}
	}
	closedir(d);
	return rc;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct artifact *)a)->path, ((const struct artifact *)b)->path);
}

/* Where openat2 is missing (kernel < 5.6, valgrind): the same guarantees by hand,
 * one component at a time with O_NOFOLLOW, never leaving the workspace's device. */
static int open_beneath(int wsfd, const char *dir)
{
	char comp[256];
	const char *p = dir;
	struct stat root, st;
	int fd;

	if (fstat(wsfd, &root) < 0 || (fd = dup(wsfd)) < 0)
		return -1;
	while (*p) {
		size_t n = strcspn(p, "/");
		int next;

		if (n == 0 || n >= sizeof comp || (n == 2 && p[0] == '.' && p[1] == '.')) {
			close(fd);
			errno = EXDEV;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -1;
		if (fstat(next, &st) < 0 || st.st_dev != root.st_dev) {
			close(next);
			errno = EXDEV;
			return -1;
		}
		fd = next;
		p += n + (p[n] == '/');
	}
	return fd;
}

int ws_collect(int wsfd, const char *dir, const struct artifact_caps *caps,
	       struct artifact **out, size_t *n, struct strbuf *notes)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	struct collect c = { .caps = caps, .notes = notes };
	int fd, rc;

	*out = NULL;
	*n = 0;
	sb_reset(notes);
	fd = (int)syscall(SYS_openat2, wsfd, dir, &how, sizeof how);
	if (fd < 0 && errno == ENOSYS)
		fd = open_beneath(wsfd, dir);
	if (fd < 0) {
		note_dir(&c, dir,
		     errno == ENOENT ? "not found"
		     : errno == ELOOP || errno == ENOTDIR ? "is a symbolic link or not a directory"
							    : strerror(errno));
		return 0;
	}
	rc = walk(&c, fd, dir, 0);
	close(fd);
	summary(&c);
	if (rc < 0) {
		ws_free_artifacts(c.a, c.n);
		return -1;
	}
	qsort(c.a, c.n, sizeof *c.a, by_path);
	*out = c.a;
	*n = c.n;
	return 0;
}

void ws_free_artifacts(struct artifact *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(a[i].path);
		free(a[i].data);
	}
	free(a);
}
