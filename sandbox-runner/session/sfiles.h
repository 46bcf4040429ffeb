/* A session's file API on the host (GET/PUT/DELETE/list under the workspace, and the
 * workspace as entries: stat, listdir, mkdir, move, remove, sfentry.c). The
 * tree belongs to the session's commands, which may plant links, fifos and devices
 * at any moment: every step is by fd with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV), nothing is opened
 * without O_NOFOLLOW and O_NONBLOCK, only regular files are read or replaced. */
#ifndef SANDBOX_SFILES_H
#define SANDBOX_SFILES_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

/* A refusal the API passes on: HTTP status, error code, message (no host path). */
struct sf_err {
	int http;         /* 400 bad path, 404, 409, 413, 500, 507 */
	const char *code; /* "invalid_path", "not_found", "symlink", "not_regular_file",
			   * "not_a_directory", "too_large", "disk_full", "internal" */
	char msg[200];
};

/* What one request may spend on the host (issue 25). The sandbox controls the tree: a
 * sparse file of 64 GiB costs no disk and would cost the host minutes to read, so every
 * read, hash, write and walk over it is bounded in logical bytes (a file's size, not
 * its blocks) and in wall time, and what was spent is reported to the caller for the
 * session's accounting. cut names the limit that ran out (the config key). */
struct sf_budget {
	long long max_bytes; /* <= 0: none */
	double deadline;     /* util_mono_ms() past which work stops; 0: none */
	long long bytes;     /* spent */
	const char *cut;     /* NULL, SF_CUT_BYTES or SF_CUT_TIME */
};
#define SF_CUT_BYTES "session_host_bytes"
#define SF_CUT_TIME "session_host_ms"

/* max_bytes and max_ms <= 0: no limit of that kind. */
void sf_budget_init(struct sf_budget *b, long long max_bytes, long long max_ms);
/* Charges n bytes: 0 while they fit and time is left, else -1 with b->cut set and
 * nothing charged. */
int sf_budget_take(struct sf_budget *b, long long n);
/* Bytes left (LLONG_MAX without a byte limit). */
long long sf_budget_left(const struct sf_budget *b);

/* Regular files under root ("" or "." for the workspace itself), paths relative to
 * root, sorted bytewise; links, fifos, devices, sockets and names that are not
 * printable UTF-8 skipped; at most max_files ({"files": [...], "truncated": bool});
 * with want_sha each entry has "sha256": the hex digest, or null for a file the
 * budget did not cover (too large for the bytes left, or the time ran out) or that
 * was no longer a regular file. A walk cut by the time budget is "truncated"; either
 * cut adds "cut": the limit's name. b may be NULL (no budget). 0 and *out, or -1
 * and e. */
int sf_list(int wsfd, const char *root, int recursive, int want_sha, long long max_files,
	    size_t max_path, struct sf_budget *b, json_t **out, struct sf_err *e);
/* The bytes of a regular file, at most max (else 413): malloc'd *data. Past the
 * budget, 413 too_large naming the limit. 0 or -1. */
int sf_get(int wsfd, const char *path, long long max, size_t max_path, struct sf_budget *b,
	   unsigned char **data, size_t *len, struct sf_err *e);
/* Creates or replaces a regular file (parents created, owned by uid, mode & 0777)
 * through a temporary file and renameat: a link planted meanwhile is replaced, never
 * followed. Past the budget, 413 too_large naming the limit and nothing replaced.
 * 0 or -1. */
int sf_put(int wsfd, const char *path, const unsigned char *data, size_t len, unsigned mode,
	   uid_t uid, size_t max_path, struct sf_budget *b, struct sf_err *e);
/* Removes a regular file (never a link's target, never a directory). 0 or -1. */
int sf_delete(int wsfd, const char *path, size_t max_path, struct sf_err *e);

/* ---- entries (sfentry.c): the workspace as E2B's filesystem service sees it.
 * An entry is {"name", "type": "file"|"dir"|"symlink"|"other" (a fifo, socket or
 * device: listed, never opened), "path" (workspace-relative, "" the workspace itself),
 * "size", "mode" (permission bits), "uid", "gid" (as the sandbox sees them: the
 * session's uid is SANDBOX_UID, any other 65534), "mtime" (RFC 3339, UTC, ns),
 * "symlink_target" (a link's, read with readlinkat and never followed; escaped \xHH
 * when not UTF-8)}. A path is the path rule's, or "" where the workspace itself makes
 * sense (stat, listdir, mkdir). Each is 0 and *out, or -1 and e. */
int sf_stat(int wsfd, const char *path, uid_t uid, size_t max_path, json_t **out,
	    struct sf_err *e);
/* {"entries": [entry...] sorted by path, "truncated": bool, "cut"?}: the directory's
 * entries to depth (1: its children; at most SF_DEPTH_MAX), a link listed and never
 * entered, names the path rule refuses (not UTF-8, control bytes, backslash, too long)
 * left out; at most max_files entries, SF_WALK_MAX looked at and b's time (then
 * truncated). */
int sf_listdir(int wsfd, const char *path, int depth, uid_t uid, long long max_files,
	       size_t max_path, struct sf_budget *b, json_t **out, struct sf_err *e);
/* mkdir -p (each new directory 0755, owned by uid): the entry plus "created": false
 * when it was a directory already; 409 symlink / not_a_directory when something else
 * is there. */
int sf_mkdir(int wsfd, const char *path, uid_t uid, size_t max_path, json_t **out,
	     struct sf_err *e);
/* renameat of src's last component (a link moves as a link) to dst, dst's parents
 * created; a file at dst is replaced, a directory there is 409 not_regular_file. The
 * entry at dst. */
int sf_move(int wsfd, const char *src, const char *dst, uid_t uid, size_t max_path,
	    json_t **out, struct sf_err *e);
/* A file, a link (the link itself), anything but a directory is unlinked; a directory
 * is emptied depth first by fd (links inside removed as names, their targets never
 * touched) then removed, within b's time (past it: 413 too_large, what was removed
 * stays removed). */
int sf_remove(int wsfd, const char *path, size_t max_path, struct sf_budget *b,
	      struct sf_err *e);
/* Several files in one request (E2B's multipart upload): files [{path, size}...]
 * (1..SF_PUT_MANY_MAX, each at most max_file bytes), their bytes back to back in data;
 * each written as sf_put does (0644, parents made), in order, up to the first refusal
 * (the ones before it stay written). {"files": [{path, size}...]}. */
#define SF_PUT_MANY_MAX 100
int sf_put_many(int wsfd, const json_t *files, const unsigned char *data, size_t len,
		uid_t uid, long long max_file, size_t max_path, struct sf_budget *b,
		json_t **out, struct sf_err *e);
/* The request kinds above: file_stat {path}, file_listdir {path, depth}, file_mkdir
 * {path}, file_move {source, destination}, file_remove {path} (-> {}), file_put_many
 * {files} + data. */
struct sf_limits {
	long long max_files; /* session_list_max_files */
	long long max_file;  /* session_file_max_bytes */
	size_t max_path;     /* max_path_bytes */
};
int sf_entry_kind(const char *kind);
int sf_entry_request(int wsfd, uid_t uid, const char *kind, const json_t *args,
		     const struct sf_limits *lim, const unsigned char *data, size_t len,
		     struct sf_budget *b, json_t **out, struct sf_err *e);

#endif
