/* The operator's command policy (sandbox-runner/job/policy.c): the file format, the
 * first word of a shell command, path normalization, the PATH lookup that follows
 * links only inside /usr, and the match against a job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "policy.h"
#include "tests.h"

static const char sample[] = "# operator policy\n"
			     "\n"
			     "deny /usr/bin/curl network tools are not allowed here\n"
			     "  deny\t/usr/bin/dash   no shells, please  \n"
			     "\t# indented comment\n"
			     "deny /usr/bin/wget network tools are not allowed here";

static void test_parse(void)
{
	struct cmdpol p;
	char err[160] = "";

	CHECK_INT(cmdpol_parse(sample, strlen(sample), &p, err, sizeof err), 0);
	CHECK_STR(err, "");
	CHECK_INT(p.n, 3);
	if (p.n == 3) {
		CHECK_STR(p.rules[0].path, "/usr/bin/curl");
		CHECK_STR(p.rules[0].reason, "network tools are not allowed here");
		CHECK_STR(p.rules[1].path, "/usr/bin/dash");
		CHECK_STR(p.rules[1].reason, "no shells, please");
		CHECK_STR(p.rules[2].path, "/usr/bin/wget");
	}
	cmdpol_free(&p);
	CHECK_INT(cmdpol_parse("", 0, &p, err, sizeof err), 0);
	CHECK_INT(p.n, 0);
	cmdpol_free(&p);
}

static void test_refused(void)
{
	char long_reason[260], long_path[300], r201[202];
	static const struct {
		const char *text, *why;
	} rows[] = {
		{ "allow /usr/bin/curl ok\n", "line 1: a rule starts with deny" },
		{ "# c\ndeny\n", "line 2: deny needs a path and a reason" },
		{ "deny /usr/bin/curl\n", "line 1: a rule needs a reason" },
		{ "deny /usr/bin/curl   \n", "line 1: a rule needs a reason" },
		{ "deny curl no\n", "line 1: path must be absolute and normalized" },
		{ "deny /usr/bin/../bin/curl no\n", "line 1: path must be absolute and normalized" },
		{ "deny /usr//bin/curl no\n", "line 1: path must be absolute and normalized" },
		{ "deny /usr/bin/ no\n", "line 1: path must be absolute and normalized" },
		{ "deny /usr/bin/curl caf\xc3\xa9\n", "line 1: reason must be printable ASCII" },
		{ "deny /usr/bin/curl a\rb\n", "line 1: reason must be printable ASCII" },
	};
	struct cmdpol p;
	char err[160];

	for (size_t i = 0; i < NELEM(rows); i++) {
		err[0] = '\0';
		CHECK_INT_AT(rows[i].text,
			     cmdpol_parse(rows[i].text, strlen(rows[i].text), &p, err, sizeof err), -1);
		CHECK_STR_AT(rows[i].text, err, rows[i].why);
		CHECK_INT_AT(rows[i].text, p.n, 0);
	}
	memset(r201, 'r', 201);
	r201[201] = '\0';
	snprintf(long_reason, sizeof long_reason, "deny /usr/bin/x %s", r201);
	CHECK_INT(cmdpol_parse(long_reason, strlen(long_reason), &p, err, sizeof err), -1);
	CHECK_STR(err, "line 1: reason longer than 200 bytes");
	memset(long_path, 'p', sizeof long_path);
	memcpy(long_path, "deny /", 6);
	memcpy(long_path + 262, " why", 5);
	CHECK_INT(cmdpol_parse(long_path, strlen(long_path), &p, err, sizeof err), -1);
	CHECK_STR(err, "line 1: path longer than 255 bytes");
	CHECK_INT(cmdpol_parse("deny /a b\0c", 11, &p, err, sizeof err), -1);
	CHECK_STR(err, "line 1: NUL byte");
}

static void test_too_many(void)
{
	size_t cap = (POL_MAX_RULES + 1) * 24;
	char *text = calloc(1, cap);
	size_t off = 0;
	struct cmdpol p;
	char err[160];

	if (!CHECK(text != NULL, "calloc"))
		return;
	for (int i = 0; i <= POL_MAX_RULES; i++)
		off += (size_t)snprintf(text + off, cap - off, "deny /usr/bin/t%d x\n", i);
	CHECK_INT(cmdpol_parse(text, off, &p, err, sizeof err), -1);
	CHECK_STR(err, "line 257: more than 256 rules");
	free(text);
}

static void test_first_word(void)
{
	static const struct {
		const char *command, *word;
	} rows[] = {
		{ "curl -s http://x", "curl" },
		{ "  \t/usr/bin/curl", "/usr/bin/curl" },
		{ "curl;ls", "curl" },
		{ "curl|sh", "curl" },
		{ "A=1 B=two curl x", "curl" },
		{ "A=1", "" },
		{ "A=\"x y\" curl", "" },
		{ "\"curl\" x", "" },
		{ "$(echo curl)", "" },
		{ "(curl)", "" },
		{ "", "" },
		{ "./tool arg", "./tool" },
		{ "a-b=c x", "a-b=c" },
	};
	char w[POL_PATH_MAX];

	for (size_t i = 0; i < NELEM(rows); i++) {
		pol_first_word(rows[i].command, w, sizeof w);
		CHECK_STR_AT(rows[i].command, w, rows[i].word);
	}
}

static void test_normalize(void)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{ "/usr/bin/curl", "/usr/bin/curl" }, { "//usr///bin/", "/usr/bin" },
		{ "/usr/./bin/../bin/sh", "/usr/bin/sh" }, { "/../../bin", "/bin" },
		{ "/", "/" }, { "/..", "/" },
	};
	char o[POL_PATH_MAX];

	for (size_t i = 0; i < NELEM(rows); i++) {
		CHECK_INT_AT(rows[i].in, pol_normalize(rows[i].in, o, sizeof o), 0);
		CHECK_STR_AT(rows[i].in, o, rows[i].out);
	}
	CHECK_INT(pol_normalize("usr/bin", o, sizeof o), -1);
}

/* On this (merged-/usr Debian) host: /bin -> usr/bin, /usr/bin/sh -> dash, and
 * /usr/bin/awk -> /etc/alternatives/awk, a link out of /usr that is not followed. */
static void test_chain(void)
{
	char chain[POL_CHAIN_MAX][POL_PATH_MAX];
	size_t n;
	struct stat st;

	n = pol_exec_chain("/bin/sh", chain, POL_CHAIN_MAX);
	if (lstat("/bin", &st) == 0 && S_ISLNK(st.st_mode) && lstat("/usr/bin/sh", &st) == 0 &&
	    S_ISLNK(st.st_mode)) {
		CHECK_INT(n, 3);
		CHECK_STR(chain[0], "/bin/sh");
		CHECK_STR(chain[1], "/usr/bin/sh");
		CHECK(n == 3 && strncmp(chain[2], "/usr/bin/", 9) == 0, "sh leads into /usr/bin");
	}
	n = pol_exec_chain("sh", chain, POL_CHAIN_MAX);
	CHECK(n >= 1 && strcmp(chain[0], "/usr/bin/sh") == 0, "sh is found as /usr/bin/sh");
	if (lstat("/usr/bin/awk", &st) == 0 && S_ISLNK(st.st_mode)) {
		n = pol_exec_chain("awk", chain, POL_CHAIN_MAX);
		CHECK_INT(n, 1); /* its link leads out of /usr: not followed */
		CHECK_STR(chain[0], "/usr/bin/awk");
	}
	CHECK_INT(pol_exec_chain("no-such-tool-here", chain, POL_CHAIN_MAX), 0);
	CHECK_INT(pol_exec_chain("./sh", chain, POL_CHAIN_MAX), 0);
	CHECK_INT(pol_exec_chain("", chain, POL_CHAIN_MAX), 0);
	CHECK_INT(pol_exec_chain("/usr/bin/../bin/true", chain, POL_CHAIN_MAX) >= 1, 1);
	CHECK_STR(chain[0], "/usr/bin/true");
}

static void test_check_job(void)
{
	static const char text[] = "deny /usr/bin/dash no shells\ndeny /usr/bin/true no truth\n";
	struct cmdpol p;
	struct job j;
	char err[160];

	memset(&j, 0, sizeof j);
	if (!CHECK(cmdpol_parse(text, strlen(text), &p, err, sizeof err) == 0, "%s", err))
		return;
	j.command = (char *)"X=1 true && echo";
	CHECK_STR(cmdpol_check(&p, &j), "no truth");
	j.command = (char *)"echo true";
	CHECK_STR(cmdpol_check(&p, &j), NULL);
	j.command = NULL;
	j.argv = json_pack("[ss]", "/bin/true", "x");
	CHECK_STR(cmdpol_check(&p, &j), "no truth");
	json_decref(j.argv);
	j.argv = json_pack("[s]", "sh"); /* /usr/bin/sh -> dash */
	CHECK_STR(cmdpol_check(&p, &j), "no shells");
	json_decref(j.argv);
	j.argv = json_pack("[s]", "ls");
	CHECK_STR(cmdpol_check(&p, &j), NULL);
	json_decref(j.argv);
	cmdpol_free(&p);
}

/* The file must be root's alone: not in a world-writable directory like /tmp, not a
 * link, not group or world writable. */
static void test_load(void)
{
	char *tmp = t_tempfile("deny /usr/bin/curl no\n");
	char dir[] = "/tmp/sandbox-pol-XXXXXX", file[64], link[64];
	struct cmdpol p;
	char err[160] = "";
	FILE *f;

	if (!CHECK(tmp != NULL, "temp file"))
		return;
	CHECK_INT(cmdpol_load(tmp, &p, err, sizeof err), -1);
	CHECK_STR(err, "its directory is group or world writable");
	unlink(tmp);
	free(tmp);
	CHECK_INT(cmdpol_load("relative/policy", &p, err, sizeof err), -1);
	CHECK_STR(err, "not an absolute path");
	if (geteuid() != 0 || mkdtemp(dir) == NULL)
		return; /* the rest needs root-owned files */
	snprintf(file, sizeof file, "%s/policy", dir);
	snprintf(link, sizeof link, "%s/link", dir);
	f = fopen(file, "w");
	if (f) {
		fputs("deny /usr/bin/curl no network\n", f);
		fclose(f);
	}
	chmod(file, 0644);
	CHECK_INT(cmdpol_load(file, &p, err, sizeof err), 0);
	CHECK_INT(p.n, 1);
	cmdpol_free(&p);
	chmod(file, 0664);
	CHECK_INT(cmdpol_load(file, &p, err, sizeof err), -1);
	CHECK_STR(err, "group or world writable");
	chmod(file, 0644);
	CHECK(symlink(file, link) == 0, "symlink");
	CHECK_INT(cmdpol_load(link, &p, err, sizeof err), -1);
	CHECK_STR(err, "a symbolic link");
	CHECK(chown(file, 65534, 65534) == 0, "chown");
	CHECK_INT(cmdpol_load(file, &p, err, sizeof err), -1);
	CHECK_STR(err, "not owned by root");
	unlink(link);
	unlink(file);
	rmdir(dir);
}

void suite_policy(void)
{
	static const CU_TestInfo tests[] = { { "parse", test_parse },
					     { "refused_lines", test_refused },
					     { "too_many_rules", test_too_many },
					     { "first_word", test_first_word },
					     { "normalize", test_normalize },
					     { "path_chain", test_chain },
					     { "check_job", test_check_job },
					     { "load_trusted_file", test_load },
					     CU_TEST_INFO_NULL };

	t_register("policy", tests);
}
