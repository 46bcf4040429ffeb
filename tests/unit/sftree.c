/* A temporary tree for the session file tests (see sftree.h). */
#include "sftree.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"

int sft_open(char *root, size_t n, const char *prefix)
{
	snprintf(root, n, "/tmp/%s.XXXXXX", prefix);
	if (mkdtemp(root) == NULL) {
		CHECK(0, "mkdtemp");
		return -1;
	}
	return open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

void sft_put(const char *root, const char *rel, const char *content)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", root, rel);
	f = fopen(p, "w");
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

void sft_mk(const char *root, const char *rel)
{
	char p[512];

	snprintf(p, sizeof p, "%s/%s", root, rel);
	mkdir(p, 0755);
}

void sft_link(const char *root, const char *target, const char *rel)
{
	char p[512];

	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (symlink(target, p) < 0)
		CHECK(0, "symlink %s", p);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(path);
}

void sft_close(const char *root, int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}
