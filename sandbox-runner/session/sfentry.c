/* A session's workspace as entries (see sfiles.h, "entries"): stat, a listing to a
 * depth, mkdir -p, rename and recursive removal, on the host by fd. Every directory of
 * a path is reached with sf_walk_dirs (openat2 beneath the workspace, no link, no other
 * mount); the last component is looked at with fstatat(AT_SYMLINK_NOFOLLOW), renamed
 * with renameat and removed with unlinkat, which act on the name itself: a link is
 * reported, moved or removed, never followed, and no fifo or device is ever opened. */
#include "sfiles.h"
#include "sfint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "artname.h"
#include "pathrules.h"
#include "profile.h"
#include "util.h"

#define SF_NOBODY 65534   /* an owner the sandbox's user namespace does not map */
#define SF_RM_DEPTH 256   /* directories one removal descends */

/* "" (the workspace itself) when root_ok, else the path rule. */
static int entry_path(const char *path, int root_ok, size_t max_path, struct sf_err *e)
{
	if (path == NULL)
		return sf_fail(e, 400, "invalid_path", "path is required");
	if (*path == '\0')
		return root_ok ? 0 : sf_fail(e, 400, "invalid_path",
					     "path: the workspace itself cannot be moved or removed");
	return sf_check_path(path, max_path, e);
}

static const char *type_of(mode_t m)
{
	return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink" : "other";
}

/* A link's target as JSON text: as it is when UTF-8, else escaped (\xHH). */
static json_t *link_target(int dir, const char *name)
{
	char buf[PATH_MAX + 1], esc[PATH_MAX * 4 + 8];
	ssize_t n = readlinkat(dir, name, buf, sizeof buf - 1);

	if (n < 0)
		return NULL; /* gone or replaced meanwhile: no target */
	buf[n] = '\0';
	if (util_utf8_valid((const unsigned char *)buf, (size_t)n) && strlen(buf) == (size_t)n)
		return json_string(buf);
	an_escape(esc, sizeof esc, buf);
	return json_string(esc);
}

/* The entry of name under dir, whose lstat is st, at workspace path rel. Owners as the
 * sandbox sees them: the session's uid is SANDBOX_UID, any other one unmapped. */
static json_t *entry_of(int dir, const char *name, const char *rel, const struct stat *st,
			uid_t uid)
{
	struct tm tm;
	char when[64];
	size_t k;
	json_t *o;

	gmtime_r(&st->st_mtim.tv_sec, &tm);
	k = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + k, sizeof when - k, ".%09ldZ", st->st_mtim.tv_nsec);
	o = json_pack("{s:s, s:s, s:s, s:I, s:i, s:i, s:i, s:s}", "name", sf_base_name(rel),
		      "type", type_of(st->st_mode), "path", rel, "size", (json_int_t)st->st_size,
		      "mode", (int)(st->st_mode & 07777),
		      "uid", st->st_uid == uid ? SANDBOX_UID : SF_NOBODY,
		      "gid", st->st_gid == (gid_t)uid ? SANDBOX_UID : SF_NOBODY, "mtime", when);
	if (o && S_ISLNK(st->st_mode)) {
		json_t *t = link_target(dir, name);
		if (t)
			json_object_set_new(o, "symlink_target", t);
	}
	return o;
}

/* The entry at path (root_ok: "" is the workspace): 0 and *out, or -1. */
static int stat_path(int wsfd, const char *path, uid_t uid, json_t **out, struct sf_err *e)
{
	struct stat st;
	int dir, rc = 0;

	if (*path == '\0') {
		if (fstat(wsfd, &st) < 0)
			return sf_fail_errno(e, errno);
		*out = entry_of(wsfd, ".", "", &st, uid);
		return *out ? 0 : sf_fail(e, 500, "internal_error", "out of memory");
	}
	if ((dir = sf_walk_dirs(wsfd, path, 0, 0, 0, e)) < 0)
		return -1;
	if (fstatat(dir, sf_base_name(path), &st, AT_SYMLINK_NOFOLLOW) < 0)
		rc = sf_fail_errno(e, errno);
	else if ((*out = entry_of(dir, sf_base_name(path), path, &st, uid)) == NULL)
		rc = sf_fail(e, 500, "internal_error", "out of memory");
	close(dir);
	return rc;
}

int sf_stat(int wsfd, const char *path, uid_t uid, size_t max_path, json_t **out,
	    struct sf_err *e)
{
	*out = NULL;
	if (entry_path(path, 1, max_path, e) < 0)
		return -1;
	return stat_path(wsfd, path, uid, out, e);
}

/* ---- listing to a depth */

struct lwalk {
	struct sf_entries l;
	size_t seen;
	long long max;
	int depth, truncated;
	uid_t uid;
	size_t max_path;
	struct sf_budget *b;
};

/* One directory (dfd, consumed) at level `level` (1: the listed one's children):
 * every entry noted, directories entered below the depth, links never. Names that
 * could not be named back through the API (the path rule) are left out. */
static int lw_dir(struct lwalk *w, int dfd, const char *prefix, int level)
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
		json_t *e;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->seen > SF_WALK_MAX || sf_time_out(w->b) || (long long)w->l.n >= w->max) {
			w->truncated = 1;
			break;
		}
		if ((size_t)snprintf(rel, sizeof rel, "%s%s%s", prefix, *prefix ? "/" : "",
				     de->d_name) >= sizeof rel ||
		    pr_rel_path(rel, w->max_path) != NULL)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		e = entry_of(dirfd(d), de->d_name, rel, &st, w->uid);
		if (e == NULL || sf_entries_add(&w->l, rel, 0, e) < 0) {
			json_decref(e);
			rc = -1;
		} else if (S_ISDIR(st.st_mode) && level < w->depth) {
			int sub = sf_open_safe(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY);
			if (sub >= 0)
				rc = lw_dir(w, sub, rel, level + 1);
		}
	}
	closedir(d);
	return rc;
}

int sf_listdir(int wsfd, const char *path, int depth, uid_t uid, long long max_files,
	       size_t max_path, struct sf_budget *b, json_t **out, struct sf_err *e)
{
	struct lwalk w = { .max = max_files, .depth = depth < 1 ? 1 : depth > SF_DEPTH_MAX
						? SF_DEPTH_MAX : depth,
			   .uid = uid, .max_path = max_path, .b = b };
	json_t *entries;
	int fd, rc;

	*out = NULL;
	if (entry_path(path, 1, max_path, e) < 0)
		return -1;
	if ((fd = sf_walk_dirs(wsfd, path, 1, 0, 0, e)) < 0)
		return -1;
	rc = lw_dir(&w, fd, path, 1);
	sf_entries_sort(&w.l);
	entries = rc == 0 ? json_array() : NULL;
	for (size_t i = 0; entries && i < w.l.n; i++)
		json_array_append(entries, w.l.v[i].e);
	sf_entries_free(&w.l);
	if (entries == NULL)
		return sf_fail(e, 500, "internal_error", "listing failed: %s", strerror(errno));
	*out = json_pack("{s:o, s:b}", "entries", entries, "truncated", w.truncated);
	if (*out && b && b->cut)
		json_object_set_new(*out, "cut", json_string(b->cut));
	return *out ? 0 : sf_fail(e, 500, "internal_error", "out of memory");
}

/* ---- mkdir, move, remove */

int sf_mkdir(int wsfd, const char *path, uid_t uid, size_t max_path, json_t **out,
	     struct sf_err *e)
{
	const char *name = sf_base_name(path);
	struct stat st;
	int dir, created = 1, rc = 0;

	*out = NULL;
	if (entry_path(path, 1, max_path, e) < 0)
		return -1;
	if (*path == '\0') {
		created = 0;
	} else {
		if ((dir = sf_walk_dirs(wsfd, path, 0, 1, uid, e)) < 0)
			return -1;
		if (mkdirat(dir, name, 0755) == 0) {
			int fd = sf_open_safe(dir, name, O_RDONLY | O_DIRECTORY);
			if (fd < 0 || fchown(fd, uid, uid) < 0)
				rc = sf_fail_errno(e, errno);
			if (fd >= 0)
				close(fd);
		} else if (errno != EEXIST) {
			rc = sf_fail_errno(e, errno);
		} else if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = sf_fail_errno(e, errno);
		} else if (S_ISLNK(st.st_mode)) {
			rc = sf_fail(e, 409, "symlink", "the path exists and is a symbolic link");
		} else if (!S_ISDIR(st.st_mode)) {
			rc = sf_fail(e, 409, "not_a_directory",
				     "the path exists and is not a directory");
		} else {
			created = 0;
		}
		close(dir);
	}
	if (rc == 0 && (rc = stat_path(wsfd, path, uid, out, e)) == 0)
		json_object_set_new(*out, "created", json_boolean(created));
	return rc;
}

int sf_move(int wsfd, const char *src, const char *dst, uid_t uid, size_t max_path,
	    json_t **out, struct sf_err *e)
{
	struct stat ss, ds;
	int sdir, ddir, rc = 0;

	*out = NULL;
	if (entry_path(src, 0, max_path, e) < 0 || entry_path(dst, 0, max_path, e) < 0)
		return -1;
	if ((sdir = sf_walk_dirs(wsfd, src, 0, 0, 0, e)) < 0)
		return -1;
	if (fstatat(sdir, sf_base_name(src), &ss, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = sf_fail_errno(e, errno);
		close(sdir);
		return rc;
	}
	if ((ddir = sf_walk_dirs(wsfd, dst, 0, 1, uid, e)) < 0) {
		close(sdir);
		return -1;
	}
	if (fstatat(ddir, sf_base_name(dst), &ds, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(ds.st_mode) && !(ds.st_ino == ss.st_ino && ds.st_dev == ss.st_dev))
		rc = sf_fail(e, 409, "not_regular_file", "the destination exists and is a directory");
	else if (renameat(sdir, sf_base_name(src), ddir, sf_base_name(dst)) < 0)
		rc = errno == EINVAL ? sf_fail(e, 400, "invalid_path",
					       "a directory cannot be moved into itself")
		   : errno == ENOTEMPTY || errno == EEXIST
			? sf_fail(e, 409, "not_regular_file", "the destination is a directory")
		   : errno == EISDIR ? sf_fail(e, 409, "not_regular_file",
					       "the destination is a directory")
				     : sf_fail_errno(e, errno);
	close(sdir);
	close(ddir);
	return rc == 0 ? stat_path(wsfd, dst, uid, out, e) : rc;
}

/* Empties directory fd (consumed) by name, depth first: links, fifos and devices
 * unlinked as names, subdirectories opened without following anything. */
static int rm_tree(int fd, int level, struct sf_budget *b, struct sf_err *e)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		close(fd);
		return sf_fail_errno(e, errno);
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		struct stat st;
		int sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (sf_time_out(b)) {
			rc = sf_fail_budget(e, b);
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT)
				rc = sf_fail_errno(e, errno);
			continue;
		}
		if (level >= SF_RM_DEPTH) {
			rc = sf_fail(e, 413, "too_large", "the tree is more than %d directories deep",
				     SF_RM_DEPTH);
			break;
		}
		/* replaced by a link since the fstatat: the open fails, the link goes */
		sub = sf_open_safe(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY);
		if (sub < 0)
			rc = unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT
				     ? sf_fail_errno(e, errno) : 0;
		else if ((rc = rm_tree(sub, level + 1, b, e)) == 0 &&
			 unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
			rc = sf_fail_errno(e, errno);
	}
	if (rc == 0 && de == NULL && errno != 0)
		rc = sf_fail_errno(e, errno);
	closedir(d);
	return rc;
}

int sf_remove(int wsfd, const char *path, size_t max_path, struct sf_budget *b,
	      struct sf_err *e)
{
	const char *name = sf_base_name(path);
	struct stat st;
	int dir, rc = 0;

	if (entry_path(path, 0, max_path, e) < 0)
		return -1;
	if ((dir = sf_walk_dirs(wsfd, path, 0, 0, 0, e)) < 0)
		return -1;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = sf_fail_errno(e, errno);
	} else if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dir, name, 0) < 0) /* the name: a link goes, never its target */
			rc = sf_fail_errno(e, errno);
	} else {
		int fd = sf_open_safe(dir, name, O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			rc = sf_fail_at(dir, name, errno, e);
		else if ((rc = rm_tree(fd, 1, b, e)) == 0 && unlinkat(dir, name, AT_REMOVEDIR) < 0)
			rc = sf_fail_errno(e, errno);
	}
	close(dir);
	return rc;
}

/* ---- several files in one request */

int sf_put_many(int wsfd, const json_t *files, const unsigned char *data, size_t len,
		uid_t uid, long long max_file, size_t max_path, struct sf_budget *b,
		json_t **out, struct sf_err *e)
{
	size_t i, off = 0;
	json_t *f, *done;

	*out = NULL;
	if (!json_is_array(files) || json_array_size(files) == 0 ||
	    json_array_size(files) > SF_PUT_MANY_MAX)
		return sf_fail(e, 400, "invalid_args", "files must list 1 to %d files",
			       SF_PUT_MANY_MAX);
	json_array_foreach(files, i, f) {
		json_int_t n = json_integer_value(json_object_get(f, "size"));
		if (!json_is_string(json_object_get(f, "path")) || n < 0 || n > max_file ||
		    (size_t)n > len - off)
			return sf_fail(e, 400, "invalid_args",
				       "file %zu: a path and a size within the data are required", i);
		off += (size_t)n;
	}
	if (off != len)
		return sf_fail(e, 400, "invalid_args", "the sizes do not add up to the data");
	if ((done = json_array()) == NULL)
		return sf_fail(e, 500, "internal_error", "out of memory");
	off = 0;
	json_array_foreach(files, i, f) {
		const char *path = json_string_value(json_object_get(f, "path"));
		size_t n = (size_t)json_integer_value(json_object_get(f, "size"));
		if (sf_put(wsfd, path, data + off, n, 0644, uid, max_path, b, e) < 0) {
			json_decref(done);
			return -1; /* the files before it are written */
		}
		json_array_append_new(done, json_pack("{s:s, s:I}", "path", path, "size",
						      (json_int_t)n));
		off += n;
	}
	*out = json_pack("{s:o}", "files", done);
	return *out ? 0 : sf_fail(e, 500, "internal_error", "out of memory");
}

/* ---- the request kinds */

static const char *const kinds[] = { "file_stat", "file_listdir", "file_mkdir", "file_move",
				     "file_remove", "file_put_many", NULL };

int sf_entry_kind(const char *kind)
{
	for (size_t i = 0; kinds[i]; i++)
		if (strcmp(kind, kinds[i]) == 0)
			return 1;
	return 0;
}

int sf_entry_request(int wsfd, uid_t uid, const char *kind, const json_t *args,
		     const struct sf_limits *lim, const unsigned char *data, size_t len,
		     struct sf_budget *b, json_t **out, struct sf_err *e)
{
	long long max_files = lim->max_files;
	size_t max_path = lim->max_path;

	const char *path = json_string_value(json_object_get(args, "path"));
	const json_t *depth = json_object_get(args, "depth");

	*out = NULL;
	if (strcmp(kind, "file_stat") == 0)
		return sf_stat(wsfd, path, uid, max_path, out, e);
	if (strcmp(kind, "file_listdir") == 0) {
		if (depth && (!json_is_integer(depth) || json_integer_value(depth) < 1))
			return sf_fail(e, 400, "invalid_args", "depth must be an integer >= 1");
		return sf_listdir(wsfd, path, depth ? (int)(json_integer_value(depth) > SF_DEPTH_MAX
							  ? SF_DEPTH_MAX : json_integer_value(depth)) : 1,
				  uid, max_files, max_path, b, out, e);
	}
	if (strcmp(kind, "file_mkdir") == 0)
		return sf_mkdir(wsfd, path, uid, max_path, out, e);
	if (strcmp(kind, "file_move") == 0)
		return sf_move(wsfd, json_string_value(json_object_get(args, "source")),
			       json_string_value(json_object_get(args, "destination")), uid,
			       max_path, out, e);
	if (strcmp(kind, "file_put_many") == 0)
		return sf_put_many(wsfd, json_object_get(args, "files"), data, len, uid,
				   lim->max_file, max_path, b, out, e);
	if (strcmp(kind, "file_remove") == 0) {
		if (sf_remove(wsfd, path, max_path, b, e) < 0)
			return -1;
		*out = json_object();
		return 0;
	}
	return sf_fail(e, 400, "unknown_kind", "unknown request kind");
}
