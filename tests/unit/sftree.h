/* A temporary tree for the session file tests (test_sfiles.c, test_sfentry.c): a
 * directory made with mkdtemp and opened as the workspace fd, files, directories and
 * links made by path under it, and its removal (links removed, never followed). */
#ifndef SANDBOX_SFTREE_H
#define SANDBOX_SFTREE_H

#include <stddef.h>

/* mkdtemp of "/tmp/<prefix>.XXXXXX" into root (n bytes): the directory's fd, or -1
 * (a failed check). */
int sft_open(char *root, size_t n, const char *prefix);
void sft_put(const char *root, const char *rel, const char *content);
void sft_mk(const char *root, const char *rel);
/* A symbolic link rel -> target (a failed check if it cannot be made). */
void sft_link(const char *root, const char *target, const char *rel);
/* Closes *fd (when >= 0) and removes the tree. */
void sft_close(const char *root, int *fd);

#endif
