/* A session's file API on the host (GET/PUT/DELETE/list under the workspace). The
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

/* Regular files under root ("" or "." for the workspace itself), paths relative to
 * root, sorted bytewise; links, fifos, devices, sockets and names that are not
 * printable UTF-8 skipped; at most max_files ({"files": [...], "truncated": bool});
 * with want_sha each entry has "sha256". 0 and *out, or -1 and e. */
int sf_list(int wsfd, const char *root, int recursive, int want_sha, long long max_files,
	    size_t max_path, json_t **out, struct sf_err *e);
/* The bytes of a regular file, at most max (else 413): malloc'd *data. 0 or -1. */
int sf_get(int wsfd, const char *path, long long max, size_t max_path, unsigned char **data,
	   size_t *len, struct sf_err *e);
/* Creates or replaces a regular file (parents created, owned by uid, mode & 0777)
 * through a temporary file and renameat: a link planted meanwhile is replaced, never
 * followed. 0 or -1. */
int sf_put(int wsfd, const char *path, const unsigned char *data, size_t len, unsigned mode,
	   uid_t uid, size_t max_path, struct sf_err *e);
/* Removes a regular file (never a link's target, never a directory). 0 or -1. */
int sf_delete(int wsfd, const char *path, size_t max_path, struct sf_err *e);

#endif
