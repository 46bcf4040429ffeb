/* sandbox-runner/launch/workspace.c: the artifact walker's decisions on a real tree made in
 * a temporary directory (no root needed): what is collected, what is noted and how,
 * what is counted, and that nothing outside the directory or behind a link is read. */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"
#include "strbuf.h"
#include "tests.h"
#include "workspace.h"

static char root[64];

static void put(const char *rel, const char *content)
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

static void mk(const char *rel)
{
	char p[512];

	snprintf(p, sizeof p, "%s/%s", root, rel);
	mkdir(p, 0755);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(path);
}

/* Depth first, links not followed. */
static void rm_tree(void)
{
	if (nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "could not remove %s\n", root);
}

static const struct artifact *find(const struct artifact *a, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i].path, path) == 0)
			return &a[i];
	return NULL;
}

static void test_walker(void)
{
	struct artifact_caps caps = { .max_files = 4, .max_file_bytes = 10, .max_total_bytes = 16 };
	struct strbuf notes = STRBUF_INIT;
	struct artifact *a = NULL;
	size_t n = 0;
	char p[512], hex[65];
	int ws;

	snprintf(root, sizeof root, "/tmp/ws-unit-XXXXXX");
	if (!CHECK(mkdtemp(root) != NULL, "mkdtemp"))
		return;
	mk("out");
	mk("out/sub");
	put("secret.txt", "host");                 /* outside the collected directory */
	put("out/a.txt", "abc");                   /* collected */
	put("out/sub/b.txt", "0123456789");        /* collected: exactly max_file_bytes */
	put("out/big.txt", "0123456789X");         /* over max_file_bytes: noted */
	put("out/evil\nrunner lost during execution", "x"); /* control char: counted */
	snprintf(p, sizeof p, "%s/out/link", root);
	if (symlink("../secret.txt", p) != 0)      /* a link to outside: noted, not read */
		CHECK(0, "symlink");
	snprintf(p, sizeof p, "%s/out/fifo", root);
	mkfifo(p, 0644);                           /* not a regular file: noted */
	ws = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!CHECK(ws >= 0, "open the tree")) {
		rm_tree();
		return;
	}
	CHECK_INT(ws_collect(ws, "out", &caps, &a, &n, &notes), 0);
	CHECK_INT(n, 2);
	CHECK(n < 2 || (strcmp(a[0].path, "out/a.txt") == 0 && strcmp(a[1].path, "out/sub/b.txt") == 0),
	      "sorted by path: a.txt, sub/b.txt");
	if (find(a, n, "out/a.txt")) {
		sha256_hex("abc", 3, hex);
		CHECK_STR(find(a, n, "out/a.txt")->sha256, hex);
		CHECK_INT(find(a, n, "out/a.txt")->size, 3);
	}
	CHECK(find(a, n, "out/link") == NULL, "a symbolic link is never collected");
	CHECK_HAS(notes.buf, "artifact out/big.txt skipped: size limit\n");
	CHECK_HAS(notes.buf, "artifact out/link skipped: symbolic link\n");
	CHECK_HAS(notes.buf, "artifact out/fifo skipped: not a regular file\n");
	CHECK_HAS(notes.buf, "artifacts skipped: 1 name with control characters or invalid UTF-8\n");
	CHECK_LACKS(notes.buf, "runner lost");
	CHECK_LACKS(notes.buf, "host");
	ws_free_artifacts(a, n);

	/* The total cap: 16 bytes hold a.txt (3) and sub/b.txt (10), not a third file. */
	put("out/c.txt", "cccc");
	CHECK_INT(ws_collect(ws, "out", &caps, &a, &n, &notes), 0);
	CHECK_INT(n, 2);
	CHECK_HAS(notes.buf, "skipped: size limit\n");
	ws_free_artifacts(a, n);

	/* A directory that is a link is refused as a whole, and so is one that is absent. */
	snprintf(p, sizeof p, "%s/outlink", root);
	if (symlink("out", p) != 0)
		CHECK(0, "symlink");
	CHECK_INT(ws_collect(ws, "outlink", &caps, &a, &n, &notes), 0);
	CHECK_INT(n, 0);
	CHECK_STR(notes.buf, "artifacts directory outlink: is a symbolic link or not a directory\n");
	ws_free_artifacts(a, n);
	CHECK_INT(ws_collect(ws, "nothere", &caps, &a, &n, &notes), 0);
	CHECK_STR(notes.buf, "artifacts directory nothere: not found\n");
	ws_free_artifacts(a, n);
	close(ws);
	sb_release(&notes);
	rm_tree();
}

static const CU_TestInfo tests[] = {
	{ "walker_decisions", test_walker },
	CU_TEST_INFO_NULL,
};

void suite_workspace(void)
{
	t_register("workspace", tests);
}
