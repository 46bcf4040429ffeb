/* The job's workspace: a size-limited tmpfs per slot, mounted on the host and bound
 * into the sandbox at /workspace. Host-side file work never follows a symlink and
 * never leaves the workspace: the job controls this tree. */
#ifndef SANDBOX_WORKSPACE_H
#define SANDBOX_WORKSPACE_H

#include <stddef.h>
#include <sys/types.h>

struct artifact {
	char *path;          /* relative to the workspace, UTF-8 */
	unsigned char *data;
	size_t size;
	char sha256[65];
};

struct strbuf;

struct artifact_caps {
	long long max_files, max_file_bytes, max_total_bytes;
};

/* Mounts a fresh tmpfs at <root>/slot-N owned by uid, after removing a stale one.
 * Returns an O_PATH-free directory fd (O_DIRECTORY) or -1 with err. */
int ws_create(const char *root, int slot, uid_t uid, long long disk_mb, char *path,
	      size_t pathlen, char *err, size_t errlen);
/* A prewarmed workspace (warm.h) takes the job's size: the same tmpfs remounted with
 * ws_create's options for disk_mb (the sandbox's bind sees it, one superblock). */
int ws_resize(const char *path, uid_t uid, long long disk_mb, char *err, size_t errlen);
/* Creates rel (and its parent directories) under wsfd, owned by uid. */
int ws_write_file(int wsfd, const char *rel, const unsigned char *data, size_t len,
		  int executable, uid_t uid, char *err, size_t errlen);
/* mkdir -p of rel under wsfd, owned by uid. */
int ws_mkdirs(int wsfd, const char *rel, uid_t uid, char *err, size_t errlen);
/* Regular files under dir (relative), sorted by path, within caps. Skipped entries
 * (links, devices, fifos, over-cap files) are described in notes, one line each with
 * the path escaped (artname.h); names the API could not list or serve (control
 * characters, invalid UTF-8, backslashes, too long) are never collected nor shown:
 * one line per kind gives their count. */
int ws_collect(int wsfd, const char *dir, const struct artifact_caps *caps,
	       struct artifact **out, size_t *n, struct strbuf *notes);
void ws_free_artifacts(struct artifact *a, size_t n);
/* Unmounts (lazily) and removes the workspace directory: 0 or -1. */
int ws_destroy(const char *path);

#endif
