/* The runtimes file (common/runtimes.c): the format, its refusals with file:line,
 * template expansion ({file} as one whole argv element), name and alias look-up, and
 * the file the repository ships. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "runtimes.h"
#include "tests.h"

static const char sample[] =
	"# runtimes\n"
	"\n"
	"runtime python3 aliases=python,py file=main.py version=python3,--version "
	"run=python3,{file}\n"
	"\truntime  c aliases=gcc file=src/main.c version=gcc,--version "
	"compile=gcc,-O2,-o,prog,{file} run=./prog\r\n"
	"runtime odd file=x run=echo,a\\,b,c\\sd,e\\\\f\n"
	"runtime sh file=main.sh run=sh,{file}";

static void test_parse(void)
{
	struct rt_set s;
	char err[300] = "";

	CHECK_INT(rt_parse(sample, strlen(sample), "rt.conf", &s, err, sizeof err), 0);
	CHECK_STR(err, "");
	CHECK_INT(s.n, 4);
	if (s.n != 4) {
		rt_free(&s);
		return;
	}
	CHECK_STR(s.e[0].name, "python3");
	CHECK_INT(s.e[0].naliases, 2);
	CHECK_STR(s.e[0].aliases[1], "py");
	CHECK_STR(s.e[0].file, "main.py");
	CHECK_STR(s.e[0].version[1], "--version");
	CHECK(s.e[0].compile == NULL, "python3 is interpreted");
	CHECK_STR(s.e[1].name, "c");
	CHECK_STR(s.e[1].file, "src/main.c");
	CHECK_STR(s.e[1].compile[4], "{file}");
	CHECK(s.e[1].compile[5] == NULL, "compile argv ends");
	CHECK_STR(s.e[1].run[0], "./prog");
	CHECK_STR(s.e[2].run[1], "a,b");
	CHECK_STR(s.e[2].run[2], "c d");
	CHECK_STR(s.e[2].run[3], "e\\f");
	CHECK(s.e[3].version == NULL, "sh has no version argv");
	rt_free(&s);
}

static void test_refused(void)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "runtime a file=x run=a\nrun b", "f:2: unknown directive 'run'" },
		{ "runtime a file=x run=a colour=red", "f:1: unknown key 'colour'" },
		{ "runtime a file=x", "f:1: runtime a has no run=" },
		{ "runtime a run=a", "f:1: runtime a has no file=" },
		{ "runtime A file=x run=a", "f:1: runtime needs a name" },
		{ "runtime a file=x run=a\nruntime b aliases=a file=y run=b",
		  "f:2: 'a' names two runtimes" },
		{ "runtime a file=x run=a\nruntime a file=y run=b", "f:2: 'a' names two runtimes" },
		{ "runtime a file=/etc/passwd run=a", "f:1: file " },
		{ "runtime a file=../x run=a", "f:1: file " },
		{ "runtime a file=x run=a,,b", "f:1: run: empty argv element" },
		{ "runtime a file=x run=a,\\n", "f:1: run: unknown escape" },
		{ "runtime a file=x run=a,--in={file}", "f:1: run: '{' outside a whole {file}" },
		{ "runtime a file=x run=a,{file}x", "f:1: run: '{' outside a whole {file}" },
		{ "runtime a file=x run=a,{files}", "f:1: run: '{' outside a whole {file}" },
		{ "runtime a file=x run=a run=b", "f:1: run given twice" },
		{ "runtime a file=x run", "f:1: 'run' is not key=value" },
	};
	struct rt_set s;
	char err[300];

	for (size_t i = 0; i < NELEM(bad); i++) {
		err[0] = '\0';
		CHECK_INT_AT(bad[i].text, rt_parse(bad[i].text, strlen(bad[i].text), "f", &s, err,
						   sizeof err), -1);
		CHECK_HAS_AT(bad[i].text, err, bad[i].err);
		CHECK(s.e == NULL && s.n == 0, "nothing left after a refusal: %s", bad[i].text);
	}
}

static void test_lookup_expand(void)
{
	struct rt_set s;
	char err[300], names[64];
	json_t *a;
	char *dump;

	CHECK_INT(rt_parse(sample, strlen(sample), "rt.conf", &s, err, sizeof err), 0);
	CHECK(rt_find(&s, "python3") == &s.e[0], "by name");
	CHECK(rt_find(&s, "py") == &s.e[0], "by alias");
	CHECK(rt_find(&s, "gcc") == &s.e[1], "c by alias");
	CHECK(rt_find(&s, "Python3") == NULL, "byte for byte");
	CHECK(rt_find(&s, "ruby") == NULL, "unknown");
	/* a path with shell metacharacters stays one argv element, untouched */
	a = rt_expand(s.e[0].run, "/workspace/$(id); x.py");
	dump = json_dumps(a, JSON_COMPACT);
	CHECK_STR(dump, "[\"python3\",\"/workspace/$(id); x.py\"]");
	free(dump);
	json_decref(a);
	a = rt_expand(s.e[1].compile, "/workspace/src/main.c");
	dump = json_dumps(a, JSON_COMPACT);
	CHECK_STR(dump, "[\"gcc\",\"-O2\",\"-o\",\"prog\",\"/workspace/src/main.c\"]");
	free(dump);
	json_decref(a);
	rt_names(&s, names, sizeof names);
	CHECK_STR(names, "python3, c, odd, sh");
	rt_names(&s, names, 10);
	CHECK_STR(names, "python...");
	rt_free(&s);
}

/* The file the repository ships (the test stack's runner_runtimes_file). */
static void test_shipped(void)
{
	FILE *f = fopen("etc/runtimes.conf", "r");
	char buf[RT_FILE_BYTES], err[300] = "";
	size_t n;
	struct rt_set s;

	CHECK(f != NULL, "etc/runtimes.conf is readable (run from the repository)");
	if (f == NULL)
		return;
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	CHECK_INT(rt_parse(buf, n, "etc/runtimes.conf", &s, err, sizeof err), 0);
	CHECK_STR(err, "");
	static const char *const want[] = { "python3", "perl", "sh", "bash", "c", "c++", "node" };
	for (size_t i = 0; i < NELEM(want); i++)
		CHECK(rt_find(&s, want[i]) != NULL, "ships %s", want[i]);
	CHECK(rt_find(&s, "c") && rt_find(&s, "c")->compile, "c compiles");
	rt_free(&s);
}

static void test_version_line(void)
{
	char v[RT_VERSION_MAX + 1];
	unsigned char big[600];

	rt_version_line((const unsigned char *)"Python 3.11.2\n", 14, v, sizeof v);
	CHECK_STR(v, "Python 3.11.2");
	/* perl -v starts with an empty line */
	rt_version_line((const unsigned char *)"\nThis is perl 5\r\nmore\n", 23, v, sizeof v);
	CHECK_STR(v, "This is perl 5");
	rt_version_line((const unsigned char *)"  v18\x1b[1m\xc3\xa9 \n", 13, v, sizeof v);
	CHECK_STR(v, "v18?[1m??");
	rt_version_line((const unsigned char *)"\n \n", 3, v, sizeof v);
	CHECK_STR(v, "");
	memset(big, 'x', sizeof big);
	rt_version_line(big, sizeof big, v, sizeof v);
	CHECK_INT(strlen(v), RT_VERSION_MAX);
}

/* The probe's decision: a runtime whose program is missing is never listed. */
static void test_available(void)
{
	static const char text[] = "runtime nonexistent-lang file=m.x version=no-such-binary,-v "
				   "run=no-such-binary,{file}\n"
				   "runtime sh file=main.sh run=sh,{file}\n";
	struct rt_set s;
	char err[300];

	CHECK_INT(rt_parse(text, strlen(text), "t", &s, err, sizeof err), 0);
	CHECK_INT(rt_available(&s.e[0], 0, 0), 0);
	CHECK_INT(rt_available(&s.e[0], 1, 0), 0); /* found, but its version argv failed */
	CHECK_INT(rt_available(&s.e[0], 1, 1), 1);
	CHECK_INT(rt_available(&s.e[1], 1, 0), 1); /* no version argv: found is enough */
	CHECK_INT(rt_available(&s.e[1], 0, 0), 0);
	rt_free(&s);
}

void suite_runtimes(void)
{
	static const CU_TestInfo tests[] = { { "parse", test_parse },
					     { "refused_lines", test_refused },
					     { "lookup_expand", test_lookup_expand },
					     { "shipped_file", test_shipped },
					     { "version_line", test_version_line },
					     { "available", test_available },
					     CU_TEST_INFO_NULL };

	t_register("runtimes", tests);
}
