/* sandbox-runner/session/sfiles.c: the session file API on a real tree in a temporary
 * directory (no root needed): links never followed (as target or parent), fifos never
 * blocked on, directories refused, listings sorted, filtered and capped. */
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sfiles.h"
#include "sftree.h"
#include "tests.h"
#include "util.h"

static char root[64];
static int wsfd = -1;

static void put(const char *rel, const char *content)
{
	sft_put(root, rel, content);
}

static void mk(const char *rel)
{
	sft_mk(root, rel);
}

static void link_to(const char *target, const char *rel)
{
	sft_link(root, target, rel);
}

static char *slurp(const char *rel)
{
	char p[512];
	size_t n;

	snprintf(p, sizeof p, "%s/%s", root, rel);
	return util_read_file(p, 4096, &n);
}

static void setup(void)
{
	wsfd = sft_open(root, sizeof root, "sfiles-test");
}

static void teardown(void)
{
	sft_close(root, &wsfd);
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
			 1024, NULL, &e), 0);
	CHECK_INT(sf_get(wsfd, "a/b/c.txt", 100, 1024, NULL, &d, &n, &e), 0);
	CHECK_MEM(d, n, "hello", 5);
	free(d);
	snprintf(p, sizeof p, "%s/a/b/c.txt", root);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640, "mode 0640, got %o",
	      (unsigned)st.st_mode & 07777);
	/* replace: same path, new bytes, no temp file left behind */
	CHECK_INT(sf_put(wsfd, "a/b/c.txt", (const unsigned char *)"x", 1, 0644, getuid(), 1024,
			 NULL, &e), 0);
	CHECK_INT(sf_get(wsfd, "a/b/c.txt", 100, 1024, NULL, &d, &n, &e), 0);
	CHECK_MEM(d, n, "x", 1);
	free(d);
	json_t *l = NULL;
	CHECK_INT(sf_list(wsfd, "a/b", 0, 0, 100, 1024, NULL, &l, &e), 0);
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
	CHECK_INT(sf_get(wsfd, "x", 100, 1024, NULL, &d, &n, &e), -1);
	CHECK_INT(e.http, 409);
	CHECK_STR(e.code, "symlink");
	CHECK_INT(sf_get(wsfd, "pw", 100, 1024, NULL, &d, &n, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK_INT(sf_put(wsfd, "x", (const unsigned char *)"evil", 4, 0644, getuid(), 1024, NULL, &e), -1);
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
	CHECK_INT(sf_get(wsfd, "dir/f", 100, 1024, NULL, &d, &n, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK_INT(sf_put(wsfd, "dir/new", (const unsigned char *)"x", 1, 0644, getuid(), 1024, NULL, &e),
		  -1);
	CHECK_STR(e.code, "symlink");
	snprintf(p, sizeof p, "%s/new", outside);
	CHECK(access(p, F_OK) != 0, "nothing written outside through the link");
	CHECK_INT(sf_delete(wsfd, "dir/f", 1024, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK_INT(sf_list(wsfd, "dir", 1, 0, 100, 1024, NULL, &l, &e), -1);
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
	CHECK_INT(sf_get(wsfd, "fifo", 100, 1024, NULL, &d, &n, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK_INT(sf_get(wsfd, "d", 100, 1024, NULL, &d, &n, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK_INT(sf_put(wsfd, "fifo", (const unsigned char *)"x", 1, 0644, getuid(), 1024, NULL, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK_INT(sf_put(wsfd, "d", (const unsigned char *)"x", 1, 0644, getuid(), 1024, NULL, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK_INT(sf_delete(wsfd, "d", 1024, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK_INT(sf_delete(wsfd, "fifo", 1024, &e), -1);
	CHECK_INT(sf_get(wsfd, "nope", 100, 1024, NULL, &d, &n, &e), -1);
	CHECK_INT(e.http, 404);
	CHECK_INT(sf_delete(wsfd, "d/z", 1024, &e), 0);
	snprintf(p, sizeof p, "%s/d/z", root);
	CHECK(access(p, F_OK) != 0, "d/z deleted");
	CHECK_INT(sf_list(wsfd, "", 1, 0, 100, 1024, NULL, &l, &e), 0);
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
	CHECK_INT(sf_list(wsfd, ".", 1, 1, 100, 1024, NULL, &l, &e), 0);
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
	CHECK_INT(sf_list(wsfd, "sub", 0, 0, 100, 1024, NULL, &l, &e), 0);
	files = json_object_get(l, "files");
	CHECK_INT((long long)json_array_size(files), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(files, 0), "path")), "y");
	CHECK(json_object_get(json_array_get(files, 0), "sha256") == NULL, "no sha256 asked");
	json_decref(l);
	/* cap */
	CHECK_INT(sf_list(wsfd, "", 1, 0, 2, 1024, NULL, &l, &e), 0);
	CHECK_INT((long long)json_array_size(json_object_get(l, "files")), 2);
	CHECK(json_is_true(json_object_get(l, "truncated")), "truncated");
	json_decref(l);
	CHECK_INT(sf_list(wsfd, "nope", 1, 0, 2, 1024, NULL, &l, &e), -1);
	CHECK_INT(e.http, 404);
	CHECK_INT(sf_list(wsfd, "A", 1, 0, 2, 1024, NULL, &l, &e), -1);
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
		CHECK_INT(sf_get(wsfd, bad[i], 100, 1024, NULL, &d, &n, &e), -1);
		CHECK_INT_AT(bad[i], e.http, 400);
		CHECK_INT(sf_put(wsfd, bad[i], (const unsigned char *)"x", 1, 0644, getuid(), 1024,
				 NULL, &e), -1);
		CHECK_INT_AT(bad[i], e.http, 400);
	}
	CHECK_INT(sf_put(wsfd, "m", (const unsigned char *)"x", 1, 04755, getuid(), 1024, NULL, &e), -1);
	CHECK_INT(e.http, 400);
	put("big", "0123456789");
	CHECK_INT(sf_get(wsfd, "big", 9, 1024, NULL, &d, &n, &e), -1);
	CHECK_INT(e.http, 413);
	CHECK_STR(e.code, "too_large");
	CHECK_INT(sf_get(wsfd, "big", 10, 1024, NULL, &d, &n, &e), 0);
	CHECK_INT((long long)n, 10);
	free(d);
	teardown();
}

/* A sparse file of size bytes: no disk, all of it read by a digest. */
static void sparse(const char *rel, off_t size)
{
	char p[512];
	int fd;

	snprintf(p, sizeof p, "%s/%s", root, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, size) < 0)
		CHECK(0, "sparse %s", p);
	if (fd >= 0)
		close(fd);
}

static void test_budget_take(void)
{
	struct sf_budget b;

	sf_budget_init(&b, 100, 0);
	CHECK_INT(sf_budget_take(&b, 60), 0);
	CHECK_INT(sf_budget_left(&b), 40);
	CHECK_INT(sf_budget_take(&b, 41), -1);
	CHECK_STR(b.cut, SF_CUT_BYTES);
	CHECK_INT(b.bytes, 60); /* a refused charge costs nothing */
	CHECK_INT(sf_budget_take(&b, 40), 0);
	CHECK_INT(sf_budget_left(&b), 0);
	CHECK_INT(sf_budget_take(&b, -1), -1);
	/* no byte limit; NULL: no budget at all */
	sf_budget_init(&b, 0, 0);
	CHECK(sf_budget_left(&b) == LLONG_MAX, "no byte limit: all left");
	CHECK_INT(sf_budget_take(&b, 1LL << 40), 0);
	CHECK(b.cut == NULL, "nothing cut");
	CHECK_INT(sf_budget_take(NULL, 1LL << 40), 0);
	/* time: once past the deadline nothing more is charged */
	sf_budget_init(&b, 0, 1);
	util_sleep_ms(5);
	CHECK_INT(sf_budget_take(&b, 1), -1);
	CHECK_STR(b.cut, SF_CUT_TIME);
	CHECK_INT(b.bytes, 0);
}

static void test_list_sha_budget(void)
{
	struct sf_err e = { 0 };
	struct sf_budget b;
	json_t *l = NULL, *files;
	const char *h0, *h1;
	static const char *const names[] = { "f0", "f1", "f2", "f3", "f4" };

	setup();
	for (size_t i = 0; i < 5; i++)
		sparse(names[i], 1 << 20);
	put("z", "333");
	/* 2.5 MiB: f0 and f1 (1 MiB each); f2..f4 do not fit the 0.5 MiB left, z does */
	sf_budget_init(&b, (5 << 20) / 2, 0);
	CHECK_INT(sf_list(wsfd, "", 1, 1, 100, 1024, &b, &l, &e), 0);
	files = json_object_get(l, "files");
	CHECK_INT((long long)json_array_size(files), 6);
	h0 = json_string_value(json_object_get(json_array_get(files, 0), "sha256"));
	h1 = json_string_value(json_object_get(json_array_get(files, 1), "sha256"));
	CHECK(h0 && h1 && strlen(h0) == 64 && strcmp(h0, h1) == 0,
	      "f0 and f1 hashed alike, got %s and %s", h0 ? h0 : "(none)", h1 ? h1 : "(none)");
	for (size_t i = 2; i < 5; i++)
		CHECK(json_is_null(json_object_get(json_array_get(files, i), "sha256")),
		      "%s: sha256 null (over the bytes left)", names[i]);
	CHECK_STR(json_string_value(json_object_get(json_array_get(files, 5), "sha256")),
		  "556d7dc3a115356350f1f9910b1af1ab0e312d4b3e4fc788d2da63668f36d017");
	CHECK_STR(json_string_value(json_object_get(l, "cut")), SF_CUT_BYTES);
	CHECK(json_is_false(json_object_get(l, "truncated")), "every entry listed");
	CHECK_INT(b.bytes, (2LL << 20) + 3);
	json_decref(l);
	/* within the budget: no cut */
	sf_budget_init(&b, 64 << 20, 10000);
	CHECK_INT(sf_list(wsfd, "", 1, 1, 100, 1024, &b, &l, &e), 0);
	CHECK(json_object_get(l, "cut") == NULL, "no cut within the budget");
	CHECK_INT(b.bytes, (5LL << 20) + 3);
	json_decref(l);
	/* time spent: the walk stops (truncated), nothing is hashed */
	sf_budget_init(&b, 0, 1);
	util_sleep_ms(5);
	CHECK_INT(sf_list(wsfd, "", 1, 1, 100, 1024, &b, &l, &e), 0);
	CHECK_INT((long long)json_array_size(json_object_get(l, "files")), 0);
	CHECK(json_is_true(json_object_get(l, "truncated")), "a walk out of time is truncated");
	CHECK_STR(json_string_value(json_object_get(l, "cut")), SF_CUT_TIME);
	json_decref(l);
	teardown();
}

static void test_get_put_budget(void)
{
	struct sf_err e = { 0 };
	struct sf_budget b;
	unsigned char *d = NULL;
	size_t n = 0;
	char p[512];
	json_t *l = NULL;

	setup();
	sparse("s", 100);
	sf_budget_init(&b, 50, 0);
	CHECK_INT(sf_get(wsfd, "s", 1000, 1024, &b, &d, &n, &e), -1);
	CHECK_INT(e.http, 413);
	CHECK_STR(e.code, "too_large");
	CHECK_HAS(e.msg, "session_host_bytes");
	CHECK_INT(b.bytes, 0);
	sf_budget_init(&b, 100, 0);
	CHECK_INT(sf_get(wsfd, "s", 1000, 1024, &b, &d, &n, &e), 0);
	CHECK_INT((long long)n, 100);
	CHECK_INT(b.bytes, 100);
	free(d);
	sf_budget_init(&b, 50, 0);
	CHECK_INT(sf_put(wsfd, "new", (const unsigned char *)"0123456789", 10, 0644, getuid(),
			 1024, &b, &e), 0);
	CHECK_INT(sf_put(wsfd, "new2", (const unsigned char *)"0123456789", 10, 0644, getuid(),
			 1024, &(struct sf_budget){ .max_bytes = 5 }, &e), -1);
	CHECK_INT(e.http, 413);
	CHECK_HAS(e.msg, "session_host_bytes");
	snprintf(p, sizeof p, "%s/new2", root);
	CHECK(access(p, F_OK) != 0, "nothing written past the budget");
	/* out of time: refused, no temporary file left */
	sf_budget_init(&b, 0, 1);
	util_sleep_ms(5);
	CHECK_INT(sf_put(wsfd, "new3", (const unsigned char *)"x", 1, 0644, getuid(), 1024, &b,
			 &e), -1);
	CHECK_HAS(e.msg, "session_host_ms");
	snprintf(p, sizeof p, "%s/new3", root);
	CHECK(access(p, F_OK) != 0, "nothing written out of time");
	CHECK_INT(sf_list(wsfd, "", 1, 0, 100, 1024, NULL, &l, &e), 0);
	CHECK_INT((long long)json_array_size(json_object_get(l, "files")), 2); /* s, new */
	json_decref(l);
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
		{ "budget: bytes and time charged, refusals cost nothing", test_budget_take },
		{ "list: sha256 null past the byte budget, a walk out of time truncated",
		  test_list_sha_budget },
		{ "get/put past the budget: 413 naming the limit", test_get_put_budget },
		CU_TEST_INFO_NULL,
	};
	t_register("sfiles", tests);
}
