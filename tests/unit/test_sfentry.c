/* sandbox-runner/session/sfentry.c: the workspace as entries (stat, listdir, mkdir,
 * move, remove) on a real tree in a temporary directory (no root needed), with links
 * planted as targets and as parents, a fifo (never opened: the tests would hang), a
 * directory replaced by a link, and a directory outside the workspace whose files must
 * survive everything. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sfiles.h"
#include "sftree.h"
#include "tests.h"
#include "util.h"

void suite_sfentry(void);

static char root[64], outside[64];
static const struct sf_limits lim = { 10, 1000, 255 };
static int wsfd = -1;

static void path_of(char *p, size_t n, const char *rel)
{
	snprintf(p, n, "%s/%s", root, rel);
}

static void fifo(const char *rel)
{
	char p[512];

	path_of(p, sizeof p, rel);
	CHECK(mkfifo(p, 0644) == 0, "mkfifo %s", p);
}

static int there(const char *rel)
{
	char p[512];
	struct stat st;

	path_of(p, sizeof p, rel);
	return lstat(p, &st) == 0;
}

static int outside_intact(void)
{
	char p[128], *d;
	size_t n;
	int ok;

	snprintf(p, sizeof p, "%s/secret", outside);
	d = util_read_file(p, 64, &n);
	ok = d && strcmp(d, "keep") == 0;
	free(d);
	snprintf(p, sizeof p, "%s/sub", outside);
	return ok && access(p, F_OK) == 0;
}

static void setup(void)
{
	int fd;

	wsfd = sft_open(root, sizeof root, "sfentry-test");
	fd = sft_open(outside, sizeof outside, "sfentry-out");
	if (fd >= 0)
		close(fd);
	sft_put(outside, "secret", "keep");
	sft_mk(outside, "sub");
}

static void teardown(void)
{
	int none = -1;

	sft_close(root, &wsfd);
	sft_close(outside, &none);
}

static const char *sget(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "(none)";
}

static long long iget(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* The entry of a listing with this path, or NULL. */
static json_t *find(const json_t *l, const char *path)
{
	size_t i;
	json_t *e;

	json_array_foreach(json_object_get(l, "entries"), i, e)
		if (strcmp(sget(e, "path"), path) == 0)
			return e;
	return NULL;
}

static void test_stat(void)
{
	struct sf_err e;
	json_t *o = NULL;
	const char *t;

	setup();
	sft_put(root, "f.txt", "hello");
	sft_mk(root, "d");
	sft_link(root, outside, "ln");
	sft_link(root, "/etc/passwd", "d/pw");
	fifo("p");
	CHECK_INT(sf_stat(wsfd, "f.txt", getuid(), 255, &o, &e), 0);
	CHECK_STR(sget(o, "type"), "file");
	CHECK_STR(sget(o, "name"), "f.txt");
	CHECK_STR(sget(o, "path"), "f.txt");
	CHECK_INT(iget(o, "size"), 5);
	CHECK_INT(iget(o, "uid"), 1000); /* the session's uid as the sandbox sees it */
	t = sget(o, "mtime");
	CHECK(strlen(t) == 30 && t[4] == '-' && t[10] == 'T' && t[19] == '.' && t[29] == 'Z',
	      "mtime RFC 3339 with ns: %s", t);
	json_decref(o);
	CHECK_INT(sf_stat(wsfd, "f.txt", getuid() + 1, 255, &o, &e), 0);
	CHECK_INT(iget(o, "uid"), 65534); /* anyone else: unmapped */
	json_decref(o);
	CHECK_INT(sf_stat(wsfd, "", getuid(), 255, &o, &e), 0);
	CHECK_STR(sget(o, "type"), "dir");
	CHECK_STR(sget(o, "path"), "");
	json_decref(o);
	/* a link is reported, never followed: its own type and target */
	CHECK_INT(sf_stat(wsfd, "d/pw", getuid(), 255, &o, &e), 0);
	CHECK_STR(sget(o, "type"), "symlink");
	CHECK_STR(sget(o, "symlink_target"), "/etc/passwd");
	CHECK_INT(iget(o, "size"), 11);
	json_decref(o);
	CHECK_INT(sf_stat(wsfd, "ln", getuid(), 255, &o, &e), 0);
	CHECK_STR(sget(o, "type"), "symlink");
	CHECK_STR(sget(o, "symlink_target"), outside);
	json_decref(o);
	/* a fifo: "other", never opened (an open would block this test) */
	CHECK_INT(sf_stat(wsfd, "p", getuid(), 255, &o, &e), 0);
	CHECK_STR(sget(o, "type"), "other");
	json_decref(o);
	/* a link as a parent: refused, nothing of the outside told */
	o = NULL;
	CHECK_INT(sf_stat(wsfd, "ln/secret", getuid(), 255, &o, &e), -1);
	CHECK_INT(e.http, 409);
	CHECK_STR(e.code, "symlink");
	CHECK(o == NULL, "no entry");
	CHECK_INT(sf_stat(wsfd, "nope", getuid(), 255, &o, &e), -1);
	CHECK_INT(e.http, 404);
	CHECK_STR(e.code, "not_found");
	CHECK_INT(sf_stat(wsfd, "../x", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "invalid_path");
	teardown();
}

static void test_listdir(void)
{
	struct sf_err e;
	struct sf_budget b;
	json_t *l = NULL, *x;

	setup();
	sft_mk(root, "a");
	sft_mk(root, "a/b");
	sft_put(root, "a/b/deep.txt", "x");
	sft_put(root, "a/one", "1");
	sft_put(root, "top", "t");
	sft_link(root, outside, "a/out");  /* a directory link: listed, never entered */
	fifo("a/pipe");
	sft_put(root, "bad\xff", "x");        /* not UTF-8: left out */
	CHECK_INT(sf_listdir(wsfd, "", 1, getuid(), 100, 255, NULL, &l, &e), 0);
	CHECK_INT((long long)json_array_size(json_object_get(l, "entries")), 2); /* a, top */
	CHECK_STR(sget(json_array_get(json_object_get(l, "entries"), 0), "path"), "a");
	CHECK_STR(sget(find(l, "a"), "type"), "dir");
	CHECK(json_is_false(json_object_get(l, "truncated")), "not truncated");
	json_decref(l);
	CHECK_INT(sf_listdir(wsfd, "a", 5, getuid(), 100, 255, NULL, &l, &e), 0);
	CHECK_INT((long long)json_array_size(json_object_get(l, "entries")), 5);
	CHECK_STR(sget(find(l, "a/out"), "type"), "symlink");
	CHECK_STR(sget(find(l, "a/out"), "symlink_target"), outside);
	CHECK_STR(sget(find(l, "a/pipe"), "type"), "other");
	CHECK_STR(sget(find(l, "a/b/deep.txt"), "type"), "file");
	CHECK(find(l, "a/out/secret") == NULL && find(l, "a/out/sub") == NULL,
	      "the link was not entered");
	json_decref(l);
	/* depth 1 of a: no a/b/deep.txt */
	CHECK_INT(sf_listdir(wsfd, "a", 1, getuid(), 100, 255, NULL, &l, &e), 0);
	CHECK(find(l, "a/b") != NULL && find(l, "a/b/deep.txt") == NULL, "depth 1");
	json_decref(l);
	/* capped */
	CHECK_INT(sf_listdir(wsfd, "a", 5, getuid(), 2, 255, NULL, &l, &e), 0);
	CHECK_INT((long long)json_array_size(json_object_get(l, "entries")), 2);
	CHECK(json_is_true(json_object_get(l, "truncated")), "truncated");
	json_decref(l);
	/* out of time: truncated, the limit named */
	sf_budget_init(&b, 0, 1);
	util_sleep_ms(5);
	CHECK_INT(sf_listdir(wsfd, "a", 5, getuid(), 100, 255, &b, &l, &e), 0);
	CHECK(json_is_true(json_object_get(l, "truncated")), "truncated by time");
	CHECK_STR(sget(l, "cut"), "session_host_ms");
	json_decref(l);
	/* a directory replaced by a link, a file, a link as a parent */
	l = NULL;
	CHECK_INT(sf_listdir(wsfd, "a/out", 1, getuid(), 100, 255, NULL, &l, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK_INT(sf_listdir(wsfd, "a/out/sub", 1, getuid(), 100, 255, NULL, &l, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK_INT(sf_listdir(wsfd, "top", 1, getuid(), 100, 255, NULL, &l, &e), -1);
	CHECK_STR(e.code, "not_a_directory");
	CHECK_INT(sf_listdir(wsfd, "a/pipe", 1, getuid(), 100, 255, NULL, &l, &e), -1);
	CHECK_INT(e.http, 409);
	CHECK(l == NULL, "no listing");
	/* the kind: depth validated */
	x = json_pack("{s:s, s:i}", "path", "a", "depth", 0);
	CHECK_INT(sf_entry_request(wsfd, getuid(), "file_listdir", x, &lim, NULL, 0, NULL, &l, &e), -1);
	CHECK_STR(e.code, "invalid_args");
	json_decref(x);
	teardown();
}

static void test_mkdir(void)
{
	struct sf_err e;
	json_t *o = NULL;
	char p[128];

	setup();
	sft_link(root, outside, "ln");
	sft_put(root, "file", "x");
	CHECK_INT(sf_mkdir(wsfd, "x/y/z", getuid(), 255, &o, &e), 0);
	CHECK_STR(sget(o, "type"), "dir");
	CHECK_STR(sget(o, "path"), "x/y/z");
	CHECK(json_is_true(json_object_get(o, "created")), "created");
	CHECK_INT(iget(o, "mode"), 0755);
	json_decref(o);
	CHECK_INT(sf_mkdir(wsfd, "x/y/z", getuid(), 255, &o, &e), 0);
	CHECK(json_is_false(json_object_get(o, "created")), "the second time: it exists");
	json_decref(o);
	CHECK_INT(sf_mkdir(wsfd, "", getuid(), 255, &o, &e), 0);
	CHECK(json_is_false(json_object_get(o, "created")), "the workspace exists");
	json_decref(o);
	o = NULL;
	CHECK_INT(sf_mkdir(wsfd, "file", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "not_a_directory");
	CHECK_INT(sf_mkdir(wsfd, "ln", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "symlink");
	/* never through a link: nothing made outside */
	CHECK_INT(sf_mkdir(wsfd, "ln/new/deeper", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "symlink");
	snprintf(p, sizeof p, "%s/new", outside);
	CHECK(access(p, F_OK) != 0, "nothing created outside");
	CHECK_INT(sf_mkdir(wsfd, "file/sub", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "not_a_directory");
	CHECK(o == NULL, "no entry");
	teardown();
}

static void test_move(void)
{
	struct sf_err e;
	json_t *o = NULL;
	char p[128];

	setup();
	sft_put(root, "a", "A");
	sft_mk(root, "d");
	sft_mk(root, "d/inner");
	sft_put(root, "d/inner/f", "F");
	sft_link(root, outside, "ln");
	sft_link(root, "/etc/passwd", "pw");
	CHECK_INT(sf_move(wsfd, "a", "new/dir/b", getuid(), 255, &o, &e), 0);
	CHECK_STR(sget(o, "path"), "new/dir/b");
	CHECK_STR(sget(o, "name"), "b");
	CHECK_STR(sget(o, "type"), "file");
	CHECK(!there("a") && there("new/dir/b"), "moved, parents made");
	json_decref(o);
	/* a link moves as a link */
	CHECK_INT(sf_move(wsfd, "pw", "pw2", getuid(), 255, &o, &e), 0);
	CHECK_STR(sget(o, "type"), "symlink");
	CHECK_STR(sget(o, "symlink_target"), "/etc/passwd");
	json_decref(o);
	/* a file replaces a file; a directory at the destination is refused */
	sft_put(root, "c", "C");
	CHECK_INT(sf_move(wsfd, "c", "new/dir/b", getuid(), 255, &o, &e), 0);
	json_decref(o);
	o = NULL;
	sft_put(root, "c", "C");
	CHECK_INT(sf_move(wsfd, "c", "d", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "not_regular_file");
	CHECK(there("c") && there("d/inner/f"), "nothing moved");
	CHECK_INT(sf_move(wsfd, "d", "d/inner/x", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "invalid_path");
	CHECK_INT(sf_move(wsfd, "nope", "x", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "not_found");
	/* never into or out of a link's target */
	CHECK_INT(sf_move(wsfd, "c", "ln/c", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "symlink");
	snprintf(p, sizeof p, "%s/c", outside);
	CHECK(access(p, F_OK) != 0, "nothing moved outside");
	CHECK_INT(sf_move(wsfd, "ln/secret", "stolen", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK(!there("stolen") && outside_intact(), "nothing taken from outside");
	CHECK_INT(sf_move(wsfd, "", "x", getuid(), 255, &o, &e), -1);
	CHECK_STR(e.code, "invalid_path");
	CHECK(o == NULL, "no entry");
	teardown();
}

static void test_remove(void)
{
	struct sf_err e;
	struct sf_budget b;

	setup();
	sft_put(root, "f", "x");
	sft_link(root, outside, "ln");
	sft_link(root, outside, "ln2");
	sft_mk(root, "t");
	sft_mk(root, "t/sub");
	sft_put(root, "t/sub/a", "a");
	sft_link(root, outside, "t/sub/out");      /* a link to outside inside the tree */
	sft_link(root, "/etc/passwd", "t/pw");
	fifo("t/sub/pipe");
	CHECK_INT(sf_remove(wsfd, "f", 255, NULL, &e), 0);
	CHECK(!there("f"), "file removed");
	CHECK_INT(sf_remove(wsfd, "ln", 255, NULL, &e), 0);
	CHECK(!there("ln") && outside_intact(), "the link removed, its target intact");
	CHECK_INT(sf_remove(wsfd, "t", 255, NULL, &e), 0);
	CHECK(!there("t") && outside_intact(), "the tree removed, the outside intact");
	CHECK(access("/etc/passwd", F_OK) == 0, "a link's target is never touched");
	CHECK_INT(sf_remove(wsfd, "ln2/secret", 255, NULL, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK(outside_intact(), "nothing removed through a link");
	CHECK_INT(sf_remove(wsfd, "nope", 255, NULL, &e), -1);
	CHECK_STR(e.code, "not_found");
	CHECK_INT(sf_remove(wsfd, "", 255, NULL, &e), -1);
	CHECK_STR(e.code, "invalid_path");
	/* out of time: 413 naming the limit */
	sft_mk(root, "u");
	sft_put(root, "u/x", "x");
	sf_budget_init(&b, 0, 1);
	util_sleep_ms(5);
	CHECK_INT(sf_remove(wsfd, "u", 255, &b, &e), -1);
	CHECK_INT(e.http, 413);
	CHECK_HAS(e.msg, "session_host_ms");
	CHECK(there("u/x"), "nothing removed out of time");
	teardown();
}

static void test_kinds(void)
{
	struct sf_err e;
	json_t *a, *o = NULL;
	char *d;
	size_t n;
	char p[128];

	setup();
	CHECK(sf_entry_kind("file_stat") && sf_entry_kind("file_remove") &&
	      !sf_entry_kind("file_get"), "kinds");
	a = json_pack("{s:s}", "path", "m/n");
	CHECK_INT(sf_entry_request(wsfd, getuid(), "file_mkdir", a, &lim, NULL, 0, NULL, &o, &e), 0);
	json_decref(o);
	CHECK_INT(sf_entry_request(wsfd, getuid(), "file_remove", a, &lim, NULL, 0, NULL, &o, &e), 0);
	CHECK(json_is_object(o) && json_object_size(o) == 0, "remove answers {}");
	json_decref(o);
	json_decref(a);
	a = json_pack("{s:s, s:s}", "source", "m", "destination", "k");
	CHECK_INT(sf_entry_request(wsfd, getuid(), "file_move", a, &lim, NULL, 0, NULL, &o, &e), 0);
	CHECK_STR(sget(o, "path"), "k");
	json_decref(o);
	json_decref(a);
	a = json_object();
	CHECK_INT(sf_entry_request(wsfd, getuid(), "file_stat", a, &lim, NULL, 0, NULL, &o, &e), -1);
	CHECK_STR(e.code, "invalid_path");
	json_decref(a);
	/* several files in one request: in order, parents made */
	a = json_pack("{s:[{s:s, s:i}, {s:s, s:i}]}", "files", "path", "p/one", "size", 3,
		      "path", "p/q/two", "size", 2);
	CHECK_INT(sf_entry_request(wsfd, getuid(), "file_put_many", a, &lim,
				   (const unsigned char *)"abcde", 5, NULL, &o, &e), 0);
	CHECK_INT((long long)json_array_size(json_object_get(o, "files")), 2);
	json_decref(o);
	snprintf(p, sizeof p, "%s/p/q/two", root);
	d = util_read_file(p, 64, &n);
	CHECK_STR(d ? d : "(none)", "de");
	free(d);
	CHECK_INT(sf_entry_request(wsfd, getuid(), "file_put_many", a, &lim,
				   (const unsigned char *)"abcdef", 6, NULL, &o, &e), -1);
	CHECK_STR(e.code, "invalid_args");
	json_decref(a);
	sft_link(root, outside, "ln");
	a = json_pack("{s:[{s:s, s:i}, {s:s, s:i}]}", "files", "path", "ok", "size", 1, "path",
		      "ln/x", "size", 1);
	CHECK_INT(sf_entry_request(wsfd, getuid(), "file_put_many", a, &lim,
				   (const unsigned char *)"ab", 2, NULL, &o, &e), -1);
	CHECK_STR(e.code, "symlink");
	CHECK(there("ok") && outside_intact(), "the first written, nothing through the link");
	json_decref(a);
	teardown();
}

void suite_sfentry(void)
{
	static const CU_TestInfo tests[] = {
		{ "stat: types, owner, mtime, links and fifos never followed or opened", test_stat },
		{ "listdir: depth, links listed not entered, fifo other, capped, bad names",
		  test_listdir },
		{ "mkdir: parents, exists the second time, never through a link", test_mkdir },
		{ "move: parents made, links moved as links, a directory refused", test_move },
		{ "remove: a link itself, a tree with a link to outside, budget", test_remove },
		{ "request kinds and their args", test_kinds },
		CU_TEST_INFO_NULL,
	};
	t_register("sfentry", tests);
}
