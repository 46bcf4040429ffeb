/* The steps the session's file requests share on the host (sfiles.c defines them,
 * sfentry.c uses them too): refusals, openat2 beneath a directory that never follows
 * a link nor leaves the workspace's mount, the walk of a path's directories by fd, and
 * the budget's clock. Not for other modules: they call sfiles.h. */
#ifndef SANDBOX_SFINT_H
#define SANDBOX_SFINT_H

#include <stddef.h>
#include <sys/types.h>

struct sf_err;
struct sf_budget;
struct json_t;

#define SF_DEPTH_MAX 32
#define SF_WALK_MAX 200000 /* entries looked at in one listing (tmpfs inodes bound it too) */

/* Fills e: -1. */
int sf_fail(struct sf_err *e, int http, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* errno of a failed open, stat, rename or unlink -> the refusal: -1. */
int sf_fail_errno(struct sf_err *e, int err);
/* A failed open of comp under dir: a link is named as such. -1. */
int sf_fail_at(int dir, const char *comp, int err, struct sf_err *e);
/* A request cut by its budget: 413 too_large naming the limit. -1. */
int sf_fail_budget(struct sf_err *e, const struct sf_budget *b);
/* 1 once b's time is spent (b->cut says so from then on); 0 for NULL. */
int sf_time_out(struct sf_budget *b);
/* openat2 beneath dir, never through a link (O_NOFOLLOW too), never off the mount. */
int sf_open_safe(int dir, const char *path, int flags);
/* The path rule (common/pathrules): 0, or -1 with 400 invalid_path. */
int sf_check_path(const char *path, size_t max_path, struct sf_err *e);
/* The final component of path. */
const char *sf_base_name(const char *path);
/* The directories of path by fd, one component at a time: all of them with whole,
 * else all but the last (the workspace itself for a bare name); with create a missing
 * one is made (0755, owned by uid). A new fd, or -1 and e. */
int sf_walk_dirs(int wsfd, const char *path, int whole, int create, uid_t uid,
		 struct sf_err *e);

/* What a walk collects (sfiles.c's listing, sfentry.c's): a workspace path with its
 * size or its JSON entry. */
struct sf_entry {
	char *path;
	long long size;
	struct json_t *e; /* owned: released by sf_entries_free */
};
struct sf_entries {
	struct sf_entry *v;
	size_t n, cap;
};
/* Appends one (path copied; e taken on success only): 0 or -1 (out of memory). */
int sf_entries_add(struct sf_entries *l, const char *path, long long size, struct json_t *e);
/* Sorted by path, bytewise. */
void sf_entries_sort(struct sf_entries *l);
void sf_entries_free(struct sf_entries *l);

#endif
