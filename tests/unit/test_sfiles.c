/* sandbox-runner/sfiles.c: the session file API on a real tree in a temporary
 * directory (no root needed): links never followed (as target or parent), fifos never
 * blocked on, directories refused, listings sorted, filtered and capped. */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sfiles.h"
#include "tests.h"
#include "util.h"

static char root[64];
static int wsfd = -1;

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

static void link_to(const char *target, const char *rel)
{
	char p[512];

	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (symlink(target, p) < 0)
		CHECK(0, "symlink %s", p);
}

static char *slurp(const char *rel)
{
	char p[512];
	size_t n;

	snprintf(p, sizeof p, "%s/%s", root, rel);
	return util_read_file(p, 4096, &n);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(path);
}

static void setup(void)
{
	snprintf(root, sizeof root, "/tmp/sfiles-test.XXXXXX");
	if (mkdtemp(root) == NULL) {
		CHECK(0, "mkdtemp");
		return;
	}
	wsfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void teardown(void)
{
	if (wsfd >= 0)
		close(wsfd);
	wsfd = -1;
	nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void test_get_put_roundtrip(void)
{
	struct sf_err e = { 0 };
	unsigned char *d = NULL;
	size_t n = 0;
	struct stat st;
	char p[512];

	setup();
	CHECK_INT(sf_put(wsfd, "a/b/c.txt", (const unsigned char *)"hello", 5, 0640, getuid(),
			 1024, &e), 0);
	CHECK_INT(sf_get(wsfd, "a/b/c.txt", 100, 1024, &d, &n, &e), 0);
	CHECK_MEM(d, n, "hello", 5);
	free(d);
	snprintf(p, sizeof p, "%s/a/b/c.txt", root);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640, "mode 0640, got %o",
	      (unsigned)st.st_mode & 07777);
	/* replace: same path, new bytes, no temp file left behind */
	CHECK_INT(sf_put(wsfd, "a/b/c.txt", (const unsigned char *)"x", 1, 0644, getuid(), 1024,
			 &e), 0);
	CHECK_INT(sf_get(wsfd, "a/b/c.txt", 100, 1024, &d, &n, &e), 0);
	CHECK_MEM(d, n, "x", 1);
	free(d);
	json_t *l = NULL;
	CHECK_INT(sf_list(wsfd, "a/b", 0, 0, 100, 1024, &l, &e), 0);
	CHECK_INT((long long)json_array_size(json_object_get(l, "files")), 1);
	json_decref(l);
	teardown();
}

static void test_symlink_target_refused(void)
{
	struct sf_err e = { 0 };
	unsigned char *d = NULL;
	size_t n = 0;
	char *c;

	setup();
	put("secret", "host secret");
	link_to("secret", "x");
	link_to("/etc/passwd", "pw");
	CHECK_INT(sf_get(wsfd, "x", 100, 1024, &d, &n, &e), -1);
	CHECK_INT(e.http, 409);
	CHECK_STR(e.code, "symlink");
	CHECK_INT(sf_get(wsfd, "pw", 100, 1024, &d, &n, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK_INT(sf_put(wsfd, "x", (const unsigned char *)"evil", 4, 0644, getuid(), 1024, &e), -1);
	CHECK_STR(e.code, "symlink");
	c = slurp("secret");
	CHECK_STR(c, "host secret");
	free(c);
	CHECK_INT(sf_delete(wsfd, "x", 1024, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK(access(root, F_OK) == 0, "root still there");
	c = slurp("secret");
	CHECK_STR(c, "host secret");
	free(c);
	teardown();
}

static void test_symlink_parent_refused(void)
{
	struct sf_err e = { 0 };
	unsigned char *d = NULL;
	size_t n = 0;
	char outside[128], p[256];
	json_t *l = NULL;

	setup();
	snprintf(outside, sizeof outside, "%s-outside", root);
	mkdir(outside, 0755);
	snprintf(p, sizeof p, "%s/f", outside);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs("outside", f);
		fclose(f);
	}
	link_to(outside, "dir");
	CHECK_INT(sf_get(wsfd, "dir/f", 100, 1024, &d, &n, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK_INT(sf_put(wsfd, "dir/new", (const unsigned char *)"x", 1, 0644, getuid(), 1024, &e),
		  -1);
	CHECK_STR(e.code, "symlink");
	snprintf(p, sizeof p, "%s/new", outside);
	CHECK(access(p, F_OK) != 0, "nothing written outside through the link");
	CHECK_INT(sf_delete(wsfd, "dir/f", 1024, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK_INT(sf_list(wsfd, "dir", 1, 0, 100, 1024, &l, &e), -1);
	CHECK_STR(e.code, "symlink");
	snprintf(p, sizeof p, "%s/f", outside);
	CHECK(access(p, F_OK) == 0, "the file behind the link is still there");
	unlink(p);
	rmdir(outside);
	teardown();
}

static void test_fifo_and_dir(void)
{
	struct sf_err e = { 0 };
	unsigned char *d = NULL;
	size_t n = 0;
	char p[512];
	json_t *l = NULL;

	setup();
	snprintf(p, sizeof p, "%s/fifo", root);
	mkfifo(p, 0644);
	mk("d");
	put("d/z", "1");
	/* would block forever if opened for reading without O_NONBLOCK/O_PATH */
	CHECK_INT(sf_get(wsfd, "fifo", 100, 1024, &d, &n, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK_INT(sf_get(wsfd, "d", 100, 1024, &d, &n, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK_INT(sf_put(wsfd, "fifo", (const unsigned char *)"x", 1, 0644, getuid(), 1024, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK_INT(sf_put(wsfd, "d", (const unsigned char *)"x", 1, 0644, getuid(), 1024, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK_INT(sf_delete(wsfd, "d", 1024, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK_INT(sf_delete(wsfd, "fifo", 1024, &e), -1);
	CHECK_INT(sf_get(wsfd, "nope", 100, 1024, &d, &n, &e), -1);
	CHECK_INT(e.http, 404);
	CHECK_INT(sf_delete(wsfd, "d/z", 1024, &e), 0);
	snprintf(p, sizeof p, "%s/d/z", root);
	CHECK(access(p, F_OK) != 0, "d/z deleted");
	CHECK_INT(sf_list(wsfd, "", 1, 0, 100, 1024, &l, &e), 0);
	CHECK_INT((long long)json_array_size(json_object_get(l, "files")), 0);
	json_decref(l);
	teardown();
}

static void test_list_sorted_filtered_capped(void)
{
	struct sf_err e = { 0 };
	json_t *l = NULL, *files;
	char p[512];
	const char *want[] = { "A", "b", "sub/deep/x", "sub/y" };

	setup();
	put("b", "22");
	put("A", "1");
	mk("sub");
	mk("sub/deep");
	put("sub/deep/x", "333");
	put("sub/y", "");
	link_to("/etc/passwd", "link");
	link_to("b", "sub/link2");
	snprintf(p, sizeof p, "%s/fifo", root);
	mkfifo(p, 0644);
	put("bad\x01name", "x");
	CHECK_INT(sf_list(wsfd, ".", 1, 1, 100, 1024, &l, &e), 0);
	files = json_object_get(l, "files");
	CHECK_INT((long long)json_array_size(files), 4);
	for (size_t i = 0; i < 4 && i < json_array_size(files); i++)
		CHECK_STR_AT(want[i], json_string_value(json_object_get(json_array_get(files, i),
									 "path")), want[i]);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(files, 2), "size")), 3);
	/* sha256("333") */
	CHECK_STR(json_string_value(json_object_get(json_array_get(files, 2), "sha256")),
		  "556d7dc3a115356350f1f9910b1af1ab0e312d4b3e4fc788d2da63668f36d017");
	CHECK(json_is_false(json_object_get(l, "truncated")), "not truncated");
	json_decref(l);
	/* relative to root, not recursive */
	CHECK_INT(sf_list(wsfd, "sub", 0, 0, 100, 1024, &l, &e), 0);
	files = json_object_get(l, "files");
	CHECK_INT((long long)json_array_size(files), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(files, 0), "path")), "y");
	CHECK(json_object_get(json_array_get(files, 0), "sha256") == NULL, "no sha256 asked");
	json_decref(l);
	/* cap */
	CHECK_INT(sf_list(wsfd, "", 1, 0, 2, 1024, &l, &e), 0);
	CHECK_INT((long long)json_array_size(json_object_get(l, "files")), 2);
	CHECK(json_is_true(json_object_get(l, "truncated")), "truncated");
	json_decref(l);
	CHECK_INT(sf_list(wsfd, "nope", 1, 0, 2, 1024, &l, &e), -1);
	CHECK_INT(e.http, 404);
	CHECK_INT(sf_list(wsfd, "A", 1, 0, 2, 1024, &l, &e), -1);
	CHECK_STR(e.code, "not_a_directory");
	teardown();
}

static void test_bad_paths_and_caps(void)
{
	struct sf_err e = { 0 };
	unsigned char *d = NULL;
	size_t n = 0;
	static const char *bad[] = { "../x", "/etc/passwd", "a//b", "./a", "a/..", "", "a\\b" };

	setup();
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_INT(sf_get(wsfd, bad[i], 100, 1024, &d, &n, &e), -1);
		CHECK_INT_AT(bad[i], e.http, 400);
		CHECK_INT(sf_put(wsfd, bad[i], (const unsigned char *)"x", 1, 0644, getuid(), 1024,
				 &e), -1);
		CHECK_INT_AT(bad[i], e.http, 400);
	}
	CHECK_INT(sf_put(wsfd, "m", (const unsigned char *)"x", 1, 04755, getuid(), 1024, &e), -1);
	CHECK_INT(e.http, 400);
	put("big", "0123456789");
	CHECK_INT(sf_get(wsfd, "big", 9, 1024, &d, &n, &e), -1);
	CHECK_INT(e.http, 413);
	CHECK_STR(e.code, "too_large");
	CHECK_INT(sf_get(wsfd, "big", 10, 1024, &d, &n, &e), 0);
	CHECK_INT((long long)n, 10);
	free(d);
	teardown();
}

void suite_sfiles(void)
{
	static const CU_TestInfo tests[] = {
		{ "get/put round trip, mode, replace", test_get_put_roundtrip },
		{ "a symlink as the target is refused, never followed", test_symlink_target_refused },
		{ "a symlink as a parent is refused, nothing written outside",
		  test_symlink_parent_refused },
		{ "fifo and directory refused without blocking", test_fifo_and_dir },
		{ "list sorted, links/fifos/bad names skipped, capped", test_list_sorted_filtered_capped },
		{ "bad paths 400, mode bits, size cap 413", test_bad_paths_and_caps },
		CU_TEST_INFO_NULL,
	};
	t_register("sfiles", tests);
}
