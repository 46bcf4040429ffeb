/* The sandbox profile: the argument vector a job gets, and a digest that changes with
 * anything that builds it. Also the cgroup "key value" readers. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "profile.h"
#include "tests.h"

/* The arguments in the memfd, as one string with '\n' for each NUL. */
static char *args_of(const struct cfg *c, const char *cwd, const json_t *env, int block_fd)
{
	char err[256], *buf = malloc(65536);
	int fd = prof_bwrap_args(c, "/ws/slot-3", cwd, 8, env, 4, 5, block_fd, err, sizeof err);
	ssize_t n;

	if (!CHECK(fd >= 0, "prof_bwrap_args: %s", err) || buf == NULL) {
		free(buf);
		return NULL;
	}
	n = read(fd, buf, 65535);
	close(fd);
	if (n < 0)
		n = 0;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = '\n';
	buf[n] = '\0';
	return buf;
}

static void test_bwrap_args(void)
{
	struct cfg c;
	json_t *env = json_pack("{s:s}", "TOKEN", "s3cret value");
	char *a, *b;
	const char *head = "--unshare-all\n--unshare-user\n--disable-userns\n--die-with-parent\n"
			   "--new-session\n--cap-drop\nALL\n--hostname\nsandbox\n--clearenv\n"
			   "--uid\n1000\n--gid\n1000\n--ro-bind\n/usr\n/usr\n"
			   "--symlink\nusr/bin\n/bin\n";
	const char *tail = "--setenv\nTOKEN\ns3cret value\n--chdir\n/workspace/src/app\n"
			   "--seccomp\n4\n--json-status-fd\n5\n";

	cfg_defaults(&c);
	snprintf(c.runner_state_dir, sizeof c.runner_state_dir, "/var/lib/sr");
	a = args_of(&c, "src/app", env, -1);
	b = args_of(&c, "", NULL, 7);
	if (a == NULL || b == NULL)
		goto out;
	CHECK(strncmp(a, head, strlen(head)) == 0, "args start with the namespace options, "
	      "uid and the first mounts; got:\n%.300s", a);
	CHECK(strlen(a) > strlen(tail) && strcmp(a + strlen(a) - strlen(tail), tail) == 0,
	      "args end with the job env, chdir, seccomp and status fds; got the end:\n%s",
	      a + (strlen(a) > 120 ? strlen(a) - 120 : 0));
	CHECK_HAS(a, "\n--ro-bind\n/var/lib/sr/etc\n/etc\n");
	CHECK_HAS(a, "\n--size\n8388608\n--tmpfs\n/tmp\n");
	CHECK_HAS(a, "\n--bind\n/ws/slot-3\n/workspace\n--remount-ro\n/\n");
	CHECK_HAS(a, "\n--setenv\nPATH\n/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin\n");
	CHECK_LACKS(a, "--block-fd");
	CHECK_LACKS(a, "--share-net");
	CHECK_HAS(b, "\n--remount-ro\n/\n--block-fd\n7\n--setenv\nPATH\n");
	CHECK_HAS(b, "\n--chdir\n/workspace\n--seccomp\n");
	CHECK_LACKS(b, "TOKEN");
out:
	free(a);
	free(b);
	json_decref(env);
}

/* The digest is the sha256 of the printout, which walks the same tables as the
 * builder: changing any entry changes it. */
static void test_digest_follows_tables(void)
{
	struct cfg c;
	struct prof_tables t = prof_default;
	char base[PROFILE_DIGEST_LEN], d[PROFILE_DIGEST_LEN];
	struct prof_mount mounts[64];
	struct prof_rlimit rl[16];
	struct sc_rule sc[128];
	const char *ns[32];
	size_t nsc = 0;

	cfg_defaults(&c);
	CHECK_INT(prof_digest(&c, base), 0);
	CHECK_INT(prof_digest_tables(&c, &prof_default, d), 0);
	CHECK_STR(d, base);
	CHECK(strncmp(base, "sha256:", 7) == 0 && strlen(base) == 71, "digest form: %s", base);

	t.uid = 1001;
	prof_digest_tables(&c, &t, d);
	CHECK(strcmp(d, base) != 0, "the sandbox uid must change the digest");
	t = prof_default;

	if (!CHECK(t.n_rlimits <= NELEM(rl), "rlimit table too large for the test"))
		return;
	memcpy(rl, t.rlimits, t.n_rlimits * sizeof *rl);
	rl[2].soft_add++; /* nofile */
	t.rlimits = rl;
	prof_digest_tables(&c, &t, d);
	CHECK(strcmp(d, base) != 0, "an rlimit entry must change the digest");
	t = prof_default;

	while (prof_default.seccomp[nsc].syscall && nsc + 1 < NELEM(sc))
		nsc++;
	memcpy(sc, prof_default.seccomp, (nsc + 1) * sizeof *sc);
	sc[nsc - 1].val ^= 1; /* the last argument rule's value */
	t.seccomp = sc;
	prof_digest_tables(&c, &t, d);
	CHECK(strcmp(d, base) != 0, "a seccomp argument rule must change the digest");
	sc[nsc - 1].val ^= 1;
	sc[0].err++;
	prof_digest_tables(&c, &t, d);
	CHECK(strcmp(d, base) != 0, "a seccomp errno must change the digest");
	t = prof_default;

	if (!CHECK(t.n_mounts <= NELEM(mounts), "mount table too large for the test"))
		return;
	memcpy(mounts, t.mounts, t.n_mounts * sizeof *mounts);
	mounts[0].dst = "/usr2";
	t.mounts = mounts;
	prof_digest_tables(&c, &t, d);
	CHECK(strcmp(d, base) != 0, "a mount must change the digest");
	t = prof_default;

	if (!CHECK(t.n_ns_opts <= NELEM(ns), "option table too large for the test"))
		return;
	memcpy(ns, t.ns_opts, t.n_ns_opts * sizeof *ns);
	t.ns_opts = ns;
	t.n_ns_opts--; /* drop --clearenv */
	prof_digest_tables(&c, &t, d);
	CHECK(strcmp(d, base) != 0, "a namespace option must change the digest");
	t = prof_default;

	c.runner_tmp_mb++;
	prof_digest_tables(&c, &t, d);
	CHECK(strcmp(d, base) != 0, "the /tmp size must change the digest");
}

/* What a job gets is in the printout: the very argument list, network or not. */
static void test_print_shows_args(void)
{
	struct cfg c;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!CHECK(f != NULL, "open_memstream"))
		return;
	cfg_defaults(&c);
	prof_print(f, &c);
	fclose(f);
	CHECK_HAS(buf, "bwrap-args (cwd \"\", no job env): --unshare-all ");
	CHECK_HAS(buf, " --uid 1000 --gid 1000 ");
	CHECK_HAS(buf, " --chdir /workspace --seccomp 4 --json-status-fd 5\n");
	CHECK_HAS(buf, "bwrap-args network (cwd \"\", no job env): ");
	CHECK_HAS(buf, " --block-fd 7 ");
	CHECK_HAS(buf, "\nrlimit nofile soft (0 << 0) + 1024 hard (0 << 0) + 1024");
	CHECK_HAS(buf, "\nrlimit cpu soft (cpu_seconds << 0) + 0 hard (cpu_seconds << 0) + 1");
	CHECK_HAS(buf, "\nseccomp deny ptrace EPERM\n");
	CHECK_HAS(buf, "\nseccomp deny clone3 ENOSYS");
	CHECK_HAS(buf, "\nseccomp deny ioctl arg1 & 0xffffffff == 0x5412 (TIOCSTI) EPERM\n");
	CHECK_HAS(buf, "\nmask /proc/kcore: --ro-bind /dev/null");
	free(buf);
}

static void test_rlimit_values(void)
{
	long long lim[LIM_COUNT] = { 10, 7, 256, 64, 1000, 32 };
	const struct prof_tables *t = &prof_default;

	for (size_t i = 0; i < t->n_rlimits; i++) {
		const struct prof_rlimit *r = &t->rlimits[i];
		rlim_t soft, hard, nsoft, nhard;

		prof_rlimit_value(r, lim, 0, &soft, &hard);
		prof_rlimit_value(r, lim, 1, &nsoft, &nhard);
		if (strcmp(r->name, "cpu") == 0)
			CHECK(soft == 7 && hard == 8, "cpu: 7/8, got %llu/%llu",
			      (unsigned long long)soft, (unsigned long long)hard);
		if (strcmp(r->name, "fsize") == 0)
			CHECK(soft == 32ULL << 20 && hard == soft, "fsize: 32 MiB");
		if (strcmp(r->name, "nproc") == 0)
			CHECK(soft == 68 && nsoft == 70 && nhard == 70 && r->only_without_cgroup,
			      "nproc: pids+4, +2 with network, rlimit-only; got %llu/%llu",
			      (unsigned long long)soft, (unsigned long long)nsoft);
		if (strcmp(r->name, "as") == 0)
			CHECK(soft == 256ULL << 20 && r->only_without_cgroup, "as: memory_mb MiB");
		if (strcmp(r->name, "core") == 0)
			CHECK(soft == 0 && hard == 0, "core: 0");
	}
}

static void test_cg_key(void)
{
	static const char events[] = "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\n"
				     "oom_group_kill 0\n";
	static const char pids[] = "max 5\n";
	static const char cpu[] = "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n"
				  "nr_periods 0\n";
	static const char stat[] = "anon 4096\nfile 8192\nkernel_stack 16384\n"
				   "file_mapped 0\n";
	static const char oom_control[] = "oom_kill_disable 0\nunder_oom 0\noom_kill 1";

	CHECK_INT(cg_key(events, "oom_kill"), 2);
	CHECK_INT(cg_key(events, "oom"), 3); /* not oom_kill's or oom_group_kill's */
	CHECK_INT(cg_key(events, "max"), 12);
	CHECK_INT(cg_key(pids, "max"), 5);
	CHECK_INT(cg_key(cpu, "usage_usec"), 123456);
	CHECK_INT(cg_key(cpu, "usage"), -1);
	CHECK_INT(cg_key(stat, "file"), 8192);
	CHECK_INT(cg_key(stat, "file_mapped"), 0);
	CHECK_INT(cg_key(oom_control, "oom_kill"), 1); /* last line without '\n' */
	CHECK_INT(cg_key(oom_control, "under_oom"), 0);
	CHECK_INT(cg_key("", "max"), -1);
	CHECK_INT(cg_key("maximum 3\n", "max"), -1);
}

void suite_profile(void)
{
	static const CU_TestInfo tests[] = { { "bwrap_args_sample_job", test_bwrap_args },
					     { "digest_follows_tables", test_digest_follows_tables },
					     { "print_shows_args", test_print_shows_args },
					     { "rlimit_values", test_rlimit_values },
					     { "cgroup_key_readers", test_cg_key },
					     CU_TEST_INFO_NULL };

	t_register("profile", tests);
}
