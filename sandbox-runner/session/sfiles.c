/* A session's file API on the host (GET/PUT/DELETE/list under the workspace) (see
 * sfiles.h). */
#include "sfiles.h"
#include "sfint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "artname.h"
#include "pathrules.h"
#include "sha256.h"
#include "util.h"

#define RESOLVE_SAFE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
#define SF_IO_CHUNK 65536 /* a read or write between two looks at the budget */

int sf_fail(struct sf_err *e, int http, const char *code, const char *fmt, ...)
{
	va_list ap;

	e->http = http;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the budget (sfiles.h) */

void sf_budget_init(struct sf_budget *b, long long max_bytes, long long max_ms)
{
	memset(b, 0, sizeof *b);
	b->max_bytes = max_bytes;
	b->deadline = max_ms > 0 ? util_mono_ms() + (double)max_ms : 0;
}

long long sf_budget_left(const struct sf_budget *b)
{
	if (b == NULL || b->max_bytes <= 0)
		return LLONG_MAX;
	return b->max_bytes > b->bytes ? b->max_bytes - b->bytes : 0;
}

/* 1 once the time is spent (b->cut says so from then on). */
int sf_time_out(struct sf_budget *b)
{
	if (b == NULL || b->deadline <= 0 || util_mono_ms() < b->deadline)
		return 0;
	if (b->cut == NULL)
		b->cut = SF_CUT_TIME;
	return 1;
}

int sf_budget_take(struct sf_budget *b, long long n)
{
	if (b == NULL)
		return 0;
	if (n < 0 || n > sf_budget_left(b)) {
		if (b->cut == NULL)
			b->cut = SF_CUT_BYTES;
		return -1;
	}
	if (sf_time_out(b))
		return -1;
	b->bytes += n;
	return 0;
}

/* A request cut by its budget: 413, naming the limit (the API passes too_large on). */
int sf_fail_budget(struct sf_err *e, const struct sf_budget *b)
{
	if (b->cut && strcmp(b->cut, SF_CUT_TIME) == 0)
		return sf_fail(e, 413, "too_large",
			    "the host's work for this request ran past its time budget"
			    " (session_host_ms)");
	return sf_fail(e, 413, "too_large",
		    "the request is over the host's byte budget for one request (session_host_bytes)");
}

/* errno of a failed open or stat -> the refusal; the path is the request's own. */
int sf_fail_errno(struct sf_err *e, int err)
{
	switch (err) {
	case ENOENT: return sf_fail(e, 404, "not_found", "no such file");
	case ELOOP: return sf_fail(e, 409, "symlink", "the path or one of its parents is a symbolic link");
	case EXDEV: return sf_fail(e, 409, "not_regular_file", "the path crosses a mount");
	case ENOTDIR: return sf_fail(e, 409, "not_a_directory", "a parent of the path is not a directory");
	case EISDIR: return sf_fail(e, 409, "not_regular_file", "the path is a directory");
	case ENOSPC:
	case EDQUOT: return sf_fail(e, 507, "disk_full", "the session's workspace is full (disk_mb)");
	case EFBIG: return sf_fail(e, 413, "too_large", "the file is too large");
	default: return sf_fail(e, 500, "internal_error", "file operation failed: %s", strerror(err));
	}
}

/* openat2 beneath dir, never through a link, never off the workspace's mount. */
int sf_open_safe(int dir, const char *path, int flags)
{
	struct open_how how = { .flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW),
				.resolve = RESOLVE_SAFE };
	int fd;

	do
		fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof how);
	while (fd < 0 && errno == EINTR);
	return fd;
}

int sf_check_path(const char *path, size_t max_path, struct sf_err *e)
{
	const char *why = pr_rel_path(path, max_path);

	if (why != NULL)
		return sf_fail(e, 400, "invalid_path", "path: %s", why);
	return 0;
}

/* The final component of path (after its last '/'). */
const char *sf_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A failed open of comp under dir: a link (which O_NOFOLLOW | O_DIRECTORY reports as
 * ENOTDIR) is named as such. */
int sf_fail_at(int dir, const char *comp, int err, struct sf_err *e)
{
	struct stat st;

	if ((err == ENOTDIR || err == ELOOP) && fstatat(dir, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		err = ELOOP;
	return sf_fail_errno(e, err);
}

/* One directory step below fd; with create, a missing one is made (owned by uid,
 * 0755). A new fd, or -1 and e. */
static int step(int fd, const char *comp, int create, uid_t uid, struct sf_err *e)
{
	int next = sf_open_safe(fd, comp, O_RDONLY | O_DIRECTORY);

	if (next < 0 && errno == ENOENT && create) {
		if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST)
			return sf_fail_errno(e, errno);
		next = sf_open_safe(fd, comp, O_RDONLY | O_DIRECTORY);
		/* ours or not, it is a directory of the session's tree now */
		if (next >= 0 && fchown(next, uid, uid) < 0) {
			int err = errno;
			close(next);
			return sf_fail_errno(e, err);
		}
	}
	if (next < 0)
		return sf_fail_at(fd, comp, errno, e);
	return next;
}

/* Walks path's directories by fd, one component at a time (all of them with whole,
 * else all but the last): the workspace itself for a bare name. */
int sf_walk_dirs(int wsfd, const char *path, int whole, int create, uid_t uid,
		     struct sf_err *e)
{
	char comp[256];
	const char *p = path;
	int fd = sf_open_safe(wsfd, ".", O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return sf_fail_errno(e, errno);
	while (*p) {
		size_t n = strcspn(p, "/");
		int next;

		if (p[n] == '\0' && !whole)
			break;
		if (n >= sizeof comp) {
			close(fd);
			return sf_fail(e, 400, "invalid_path", "path: a component is too long");
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		next = step(fd, comp, create, uid, e);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
		p += n + (p[n] == '/');
	}
	return fd;
}

static int open_parent(int wsfd, const char *path, int create, uid_t uid, struct sf_err *e)
{
	return sf_walk_dirs(wsfd, path, 0, create, uid, e);
}

/* Opens a regular file for reading without blocking on a fifo and without
 * following a link: O_PATH first (any type opens), then a real open of the same
 * inode. */
static int open_regular(int dir, const char *name, struct stat *st, struct sf_err *e)
{
	struct stat st2;
	int pfd = sf_open_safe(dir, name, O_PATH), fd;

	if (pfd < 0)
		return sf_fail_errno(e, errno);
	if (fstat(pfd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(pfd);
		if (S_ISLNK(st->st_mode))
			return sf_fail(e, 409, "symlink", "the path is a symbolic link");
		if (S_ISDIR(st->st_mode))
			return sf_fail(e, 409, "not_regular_file", "the path is a directory");
		return sf_fail(e, 409, "not_regular_file", "the path is not a regular file");
	}
	close(pfd);
	fd = sf_open_safe(dir, name, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return sf_fail_errno(e, errno);
	if (fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) || st2.st_ino != st->st_ino) {
		close(fd);
		return sf_fail(e, 409, "not_regular_file", "the path changed while it was opened");
	}
	*st = st2;
	return fd;
}

/* Reads up to max bytes; 1 more than max means "too large" (the file grew). Each
 * chunk is charged to b first. */
static int read_bounded(int fd, size_t max, struct sf_budget *b, unsigned char **data,
			size_t *len, struct sf_err *e)
{
	size_t cap = 65536, n = 0;
	unsigned char *buf = malloc(cap);

	if (buf == NULL)
		return sf_fail(e, 500, "internal_error", "out of memory");
	for (;;) {
		ssize_t r;

		if (n == cap) {
			unsigned char *nb;
			if (cap > max) {
				free(buf);
				return sf_fail(e, 413, "too_large", "the file is over %zu bytes", max);
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				return sf_fail(e, 500, "internal_error", "out of memory");
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n > SF_IO_CHUNK ? SF_IO_CHUNK : cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;
			free(buf);
			return sf_fail_errno(e, err);
		}
		if (r == 0)
			break;
		if (sf_budget_take(b, r) < 0) {
			free(buf);
			return sf_fail_budget(e, b);
		}
		n += (size_t)r;
		if (n > max) {
			free(buf);
			return sf_fail(e, 413, "too_large", "the file is over %zu bytes", max);
		}
	}
	*data = buf;
	*len = n;
	return 0;
}

int sf_get(int wsfd, const char *path, long long max, size_t max_path, struct sf_budget *b,
	   unsigned char **data, size_t *len, struct sf_err *e)
{
	struct stat st;
	int dir, fd, rc;

	*data = NULL;
	*len = 0;
	if (sf_check_path(path, max_path, e) < 0)
		return -1;
	if ((dir = open_parent(wsfd, path, 0, 0, e)) < 0)
		return -1;
	fd = open_regular(dir, sf_base_name(path), &st, e);
	close(dir);
	if (fd < 0)
		return -1;
	if (st.st_size > max) {
		close(fd);
		return sf_fail(e, 413, "too_large", "the file is %lld bytes, over %lld",
			    (long long)st.st_size, max);
	}
	if (st.st_size > sf_budget_left(b)) {
		close(fd);
		sf_budget_take(b, st.st_size); /* refused: names the limit */
		return sf_fail_budget(e, b);
	}
	rc = read_bounded(fd, (size_t)max, b, data, len, e);
	close(fd);
	return rc;
}

/* Writes all of data in chunks charged to b, retrying short writes. 0, -1 with errno,
 * or -2 when the budget ran out. */
static int write_all(int fd, const unsigned char *data, size_t len, struct sf_budget *b)
{
	while (len > 0) {
		ssize_t w;

		if (sf_time_out(b))
			return -2;
		w = write(fd, data, len > SF_IO_CHUNK ? SF_IO_CHUNK : len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (sf_budget_take(b, w) < 0)
			return -2;
		data += w;
		len -= (size_t)w;
	}
	return 0;
}

/* A fresh temporary file beside the target: O_EXCL, never an existing name. */
static int temp_file(int dir, char name[32])
{
	unsigned char r[8];
	char hex[17];
	int fd;

	for (int i = 0; i < 8; i++) {
		util_random(r, sizeof r);
		util_hex(r, sizeof r, hex);
		snprintf(name, 32, ".sbput-%s", hex);
		fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* The target must not be a link (409 symlink) nor anything but a regular file. */
static int target_ok(int dir, const char *name, struct sf_err *e)
{
	struct stat st;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : sf_fail_errno(e, errno);
	if (S_ISLNK(st.st_mode))
		return sf_fail(e, 409, "symlink", "the path is a symbolic link");
	if (!S_ISREG(st.st_mode))
		return sf_fail(e, 409, "not_regular_file", "the path exists and is not a regular file");
	return 0;
}

int sf_put(int wsfd, const char *path, const unsigned char *data, size_t len, unsigned mode,
	   uid_t uid, size_t max_path, struct sf_budget *b, struct sf_err *e)
{
	char tmp[32];
	const char *name = sf_base_name(path);
	int dir, fd, err, wr;

	if (sf_check_path(path, max_path, e) < 0)
		return -1;
	if (mode > 0777)
		return sf_fail(e, 400, "invalid_mode", "mode must be 0..0777");
	if ((long long)len > sf_budget_left(b)) {
		sf_budget_take(b, (long long)len);
		return sf_fail_budget(e, b);
	}
	if ((dir = open_parent(wsfd, path, 1, uid, e)) < 0)
		return -1;
	if (target_ok(dir, name, e) < 0) {
		close(dir);
		return -1;
	}
	if ((fd = temp_file(dir, tmp)) < 0) {
		err = errno;
		close(dir);
		return sf_fail_errno(e, err);
	}
	wr = write_all(fd, data, len, b);
	if (wr == 0 && (fchown(fd, uid, uid) < 0 || fchmod(fd, mode) < 0))
		wr = -1;
	err = errno;
	if (close(fd) < 0 && wr == 0) {
		wr = -1;
		err = errno;
	}
	if (wr < 0) {
		unlinkat(dir, tmp, 0);
		close(dir);
		return wr == -2 ? sf_fail_budget(e, b) : sf_fail_errno(e, err);
	}
	/* A link planted at name since target_ok is replaced by rename, not followed;
	 * a directory planted there makes rename fail. */
	if (renameat(dir, tmp, dir, name) < 0) {
		err = errno;
		unlinkat(dir, tmp, 0);
		close(dir);
		return sf_fail_errno(e, err == ENOTDIR ? EISDIR : err);
	}
	close(dir);
	return 0;
}

int sf_delete(int wsfd, const char *path, size_t max_path, struct sf_err *e)
{
	const char *name = sf_base_name(path);
	struct stat st;
	int dir, rc = 0;

	if (sf_check_path(path, max_path, e) < 0)
		return -1;
	if ((dir = open_parent(wsfd, path, 0, 0, e)) < 0)
		return -1;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		rc = sf_fail_errno(e, errno);
	else if (S_ISLNK(st.st_mode))
		rc = sf_fail(e, 409, "symlink", "the path is a symbolic link");
	else if (!S_ISREG(st.st_mode))
		rc = sf_fail(e, 409, "not_regular_file", "the path is not a regular file");
	else if (unlinkat(dir, name, 0) < 0) /* a link planted meanwhile goes, not its target */
		rc = sf_fail_errno(e, errno);
	close(dir);
	return rc;
}

/* ---- listing */

struct walk {
	struct sf_entries l;
	size_t seen;
	int recursive, overflow;
	struct sf_budget *b;
};

int sf_entries_add(struct sf_entries *l, const char *path, long long size, json_t *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct sf_entry *nv = reallocarray(l->v, cap, sizeof *nv);
		if (nv == NULL)
			return -1;
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n].path = strdup(path);
	if (l->v[l->n].path == NULL)
		return -1;
	l->v[l->n].size = size;
	l->v[l->n++].e = e;
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct sf_entry *)a)->path, ((const struct sf_entry *)b)->path);
}

void sf_entries_sort(struct sf_entries *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof *l->v, by_path);
}

void sf_entries_free(struct sf_entries *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		json_decref(l->v[i].e);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* One directory, by fd: regular files are noted, directories entered (recursive),
 * everything else and names a client could not use are skipped. */
static int walk_dir(struct walk *w, int dfd, const char *prefix, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		close(dfd);
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		char rel[AN_PATH_MAX + 1];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->seen > SF_WALK_MAX || sf_time_out(w->b)) {
			w->overflow = 1;
			break;
		}
		if ((size_t)snprintf(rel, sizeof rel, "%s%s%s", prefix, *prefix ? "/" : "",
				     de->d_name) >= sizeof rel ||
		    an_check_path(rel) != AN_OK || an_check_name(rel, strlen(rel)) != AN_OK)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		if (S_ISREG(st.st_mode)) {
			rc = sf_entries_add(&w->l, rel, (long long)st.st_size, NULL);
		} else if (S_ISDIR(st.st_mode) && w->recursive && depth < SF_DEPTH_MAX) {
			int sub = sf_open_safe(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY);
			if (sub >= 0)
				rc = walk_dir(w, sub, rel, depth + 1);
		}
	}
	closedir(d);
	return rc;
}

/* sha256 of a regular file under root, by fd (no link, no fifo), every chunk charged
 * to b: NULL when it is no longer a regular file or the budget ran out before its end
 * (it may have grown: a partial digest is never given). */
static json_t *file_sha(int rootfd, const char *rel, struct sf_budget *b)
{
	struct sf_err e;
	struct stat st;
	unsigned char buf[SF_IO_CHUNK], out[32];
	char hex[65];
	struct sha256 c;
	const char *slash = strrchr(rel, '/');
	int dir = rootfd, fd;
	ssize_t r;

	if (slash) {
		char parent[AN_PATH_MAX + 1];
		snprintf(parent, sizeof parent, "%.*s", (int)(slash - rel), rel);
		dir = sf_open_safe(rootfd, parent, O_RDONLY | O_DIRECTORY);
		if (dir < 0)
			return NULL;
	}
	fd = open_regular(dir, slash ? slash + 1 : rel, &st, &e);
	if (dir != rootfd)
		close(dir);
	if (fd < 0)
		return NULL;
	sha256_init(&c);
	while ((r = read(fd, buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR)) {
		if (r < 0)
			continue;
		if (sf_budget_take(b, r) < 0)
			break;
		sha256_update(&c, buf, (size_t)r);
	}
	close(fd);
	if (r != 0)
		return NULL;
	sha256_final(&c, out);
	util_hex(out, sizeof out, hex);
	return json_string(hex);
}

/* An entry's digest within the budget, or null: a file larger than the bytes left is
 * not begun (smaller ones after it may still fit), none is begun once time is out. */
static json_t *entry_sha(int rootfd, const struct sf_entry *en, struct sf_budget *b)
{
	json_t *h = NULL;

	if (sf_time_out(b))
		return json_null();
	if (en->size > sf_budget_left(b))
		sf_budget_take(b, en->size); /* refused: marks the cut */
	else
		h = file_sha(rootfd, en->path, b);
	return h ? h : json_null();
}

static json_t *render(struct walk *w, int rootfd, int want_sha, long long max_files)
{
	json_t *files = json_array(), *o;
	size_t keep = w->l.n > (size_t)max_files ? (size_t)max_files : w->l.n;

	for (size_t i = 0; files && i < keep; i++) {
		json_t *f = json_pack("{s:s, s:I}", "path", w->l.v[i].path, "size",
				      (json_int_t)w->l.v[i].size);
		if (f && want_sha)
			json_object_set_new(f, "sha256", entry_sha(rootfd, &w->l.v[i], w->b));
		json_array_append_new(files, f);
	}
	o = json_pack("{s:o, s:b}", "files", files, "truncated",
		      w->l.n > keep || w->overflow);
	if (o && w->b && w->b->cut)
		json_object_set_new(o, "cut", json_string(w->b->cut));
	return o;
}

int sf_list(int wsfd, const char *root, int recursive, int want_sha, long long max_files,
	    size_t max_path, struct sf_budget *b, json_t **out, struct sf_err *e)
{
	struct walk w = { .recursive = recursive, .b = b };
	int rootfd, walkfd;

	*out = NULL;
	if (root == NULL || *root == '\0' || strcmp(root, ".") == 0)
		root = ".";
	else if (sf_check_path(root, max_path, e) < 0)
		return -1;
	rootfd = sf_walk_dirs(wsfd, strcmp(root, ".") == 0 ? "" : root, 1, 0, 0, e);
	if (rootfd < 0)
		return -1;
	walkfd = dup(rootfd);
	if (walkfd < 0 || walk_dir(&w, walkfd, "", 0) < 0) {
		sf_entries_free(&w.l);
		close(rootfd);
		return sf_fail(e, 500, "internal_error", "listing failed: %s", strerror(errno));
	}
	sf_entries_sort(&w.l);
	*out = render(&w, rootfd, want_sha, max_files);
	sf_entries_free(&w.l);
	close(rootfd);
	if (*out == NULL)
		return sf_fail(e, 500, "internal_error", "out of memory");
	return 0;
}
