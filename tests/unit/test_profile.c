/* The sandbox profile: the argument vector a job gets, and a digest that changes with
 * anything that builds it; named profile files (parser, file checks); environment
 * passthrough. Also the cgroup "key value" readers. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "profile.h"
#include "tests.h"
#include "util.h"

/* The arguments of an fd from prof_job_args, as one string with '\n' for each NUL. */
static char *args_fd(int fd, const char *err)
{
	char *buf = malloc(65536);
	ssize_t n;

	if (!CHECK(fd >= 0, "prof_bwrap_args: %s", err) || buf == NULL) {
		free(buf);
		if (fd >= 0)
			close(fd);
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

static char *args_of(const struct cfg *c, const char *cwd, const json_t *env, int block_fd)
{
	char err[256] = "";
	int fd = prof_bwrap_args(c, "/ws/slot-3", cwd, 8, env, 4, 5, block_fd, err, sizeof err);

	return args_fd(fd, err);
}

/* The same for profile t. */
static char *args_for(const struct cfg *c, const struct prof_tables *t, const json_t *env)
{
	const struct prof_job j = { "/ws/slot-3", "", 8, env, 4, 5, -1 };
	char err[256] = "";
	int fd = prof_job_args(c, t, &j, err, sizeof err);

	return args_fd(fd, err);
}

static char *print_of(const struct cfg *c, const struct prof_tables *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!CHECK(f != NULL, "open_memstream"))
		return NULL;
	prof_print_tables(f, c, t);
	fclose(f);
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
	c.runner_tmp_mb--;

	t.n_masks--; /* drop the boot_id mask */
	prof_digest_tables(&c, &t, d);
	CHECK(strcmp(d, base) != 0, "a mask must change the digest");
}

/* Host facts in /proc (issue 25): the kernel command line and boot_id are files of
 * the sandbox's own, read by bwrap from the fds the sandbox child fills; boot_id is a
 * fresh v4 UUID each time. */
static void test_data_masks(void)
{
	static const char *const want[][2] = {
		{ "/proc/cmdline", "\n" },
		{ "/proc/sys/kernel/random/boot_id", PROF_MASK_UUID },
	};
	const struct prof_tables *t = &prof_default;
	char a[64], b[64], seen = 0;
	int k = 0;
	struct cfg c;
	char *printed = NULL, *args;
	size_t len = 0;
	FILE *f;

	for (size_t i = 0; i < t->n_masks; i++) {
		const struct prof_mask *m = &t->masks[i];
		if (m->kind != PROF_MASK_DATA)
			continue;
		if (!CHECK(k < (int)NELEM(want), "more data masks than PROF_MAX_DATA_MASKS"))
			return;
		CHECK_STR(m->path, want[k][0]);
		CHECK_STR(m->data, want[k][1]);
		k++;
	}
	CHECK_INT(k, PROF_MAX_DATA_MASKS);
	for (size_t i = 0; i < t->n_masks; i++) {
		const struct prof_mask *m = &t->masks[i];
		if (m->kind != PROF_MASK_DATA || strcmp(m->data, PROF_MASK_UUID) != 0)
			continue;
		seen = 1;
		CHECK_INT(prof_mask_data(m, a, sizeof a), 37);
		CHECK_INT(prof_mask_data(m, b, sizeof b), 37);
		a[36] = b[36] = '\0';
		CHECK(util_is_uuid(a) && a[14] == '4' && strchr("89ab", a[19]) != NULL,
		      "boot_id is a v4 UUID: %s", a);
		CHECK(strcmp(a, b) != 0, "each sandbox gets a fresh boot_id: %s twice", a);
	}
	CHECK(seen, "a boot_id mask");

	cfg_defaults(&c);
	f = open_memstream(&printed, &len);
	if (!CHECK(f != NULL, "open_memstream"))
		return;
	prof_print(f, &c);
	fclose(f);
	CHECK_HAS(printed, "\nmask /proc/cmdline: --ro-bind-data <1 bytes: a newline>");
	CHECK_HAS(printed, "\nmask /proc/sys/kernel/random/boot_id: --ro-bind-data <a fresh "
			   "random UUID per sandbox, then a newline>");
	CHECK_HAS(printed, "\nnot masked: /proc/cpuinfo, /proc/meminfo, /proc/loadavg ");
	free(printed);
	{
		char err[256] = "";
		args = args_fd(prof_bwrap_args(&c, "/ws", "", 16, NULL, 4, 5, -1, err, sizeof err),
			       err);
	}
	if (args == NULL)
		return;
	/* after /proc is mounted, before anything else */
	CHECK_HAS(args, "\n--ro-bind-data\n10\n/proc/cmdline\n--ro-bind-data\n11\n"
			"/proc/sys/kernel/random/boot_id\n--dev\n");
	CHECK(strstr(args, "\n--proc\n/proc\n") < strstr(args, "/proc/cmdline"),
	      "the masks follow --proc");
	free(args);
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

/* cgroup v2 (issue 25): whether a process is still in its runner leaf <own>/runner,
 * or was moved (then it moves back before it makes a slot or claims a job). */
static void test_cg_moved(void)
{
	static const struct {
		const char *self, *own;
		int moved;
	} rows[] = {
		{ "/runner", "/", 0 },
		{ "/system.slice/sandbox-runner.service/runner", "/system.slice/sandbox-runner.service", 0 },
		{ "/system.slice/sandbox-runner.service", "/system.slice/sandbox-runner.service", 1 },
		{ "/system.slice/other.service", "/system.slice/sandbox-runner.service", 1 },
		{ "/system.slice/sandbox-runner.service/sandbox/slot-0",
		  "/system.slice/sandbox-runner.service", 1 },
		{ "/elsewhere/runner", "/", 1 },  /* a leaf named runner, but not ours */
		{ "/ctr/runner", "/ctr", 0 },
		{ "/ctr2/runner", "/ctr", 1 },    /* a prefix, not a parent */
		{ "/ctr/runner/x", "/ctr", 1 },
		{ "/", "/", 1 },
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_INT_AT(rows[i].self, cg_v2_moved(rows[i].self, rows[i].own), rows[i].moved);
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


/* ---- named profiles */

static void test_profile_parse_accepts(void)
{
	struct cfg c;
	struct prof_named *p = malloc(sizeof *p);
	char err[1024] = "", base[PROFILE_DIGEST_LEN], d[PROFILE_DIGEST_LEN], *a = NULL, *pr = NULL;
	const char *text = "# python data science\n\n  # indented comment\n"
			   "ro-bind /usr/share/doc /opt/doc\n"
			   "ro-bind\t/usr/lib  /usr/lib\r\n"
			   "   \n";

	if (!CHECK(p != NULL, "malloc"))
		return;
	cfg_defaults(&c);
	if (!CHECK(prof_parse(&c, "python-data", text, p, err, sizeof err) == 0,
		   "accepted lines parse; got: %s", err))
		goto out;
	CHECK_INT(p->t.n_extra, 2);
	CHECK_STR(p->t.name, "python-data");
	CHECK_STR(p->t.extra[0].op, "--ro-bind");
	CHECK_STR(p->t.extra[0].src, "/usr/share/doc");
	CHECK_STR(p->t.extra[0].dst, "/opt/doc");
	CHECK_STR(p->t.extra[1].src, "/usr/lib");
	CHECK_STR(p->t.extra[1].dst, "/usr/lib");
	a = args_for(&c, &p->t, NULL);
	pr = print_of(&c, &p->t);
	if (a == NULL || pr == NULL)
		goto out;
	/* appended by the table walker, before /proc and long before --remount-ro / */
	CHECK_HAS(a, "\n--ro-bind\n/etc/alternatives\n/etc/alternatives\n--ro-bind\n"
		     "/usr/share/doc\n/opt/doc\n--ro-bind\n/usr/lib\n/usr/lib\n--proc\n/proc\n");
	CHECK_HAS(pr, "# sandbox profile python-data ");
	CHECK_HAS(pr, "\nmount --ro-bind /usr/share/doc /opt/doc (profile python-data)\n");
	CHECK_HAS(pr, " --ro-bind /usr/share/doc /opt/doc --ro-bind /usr/lib /usr/lib --proc ");
	prof_digest(&c, base);
	prof_digest_tables(&c, &p->t, d);
	CHECK(strcmp(d, base) != 0, "a named profile has its own digest (both %s)", d);
	CHECK_INT(prof_parse(&c, "python-data", "# nothing\n", p, err, sizeof err), 0);
	CHECK_INT(p->t.n_extra, 0);
	prof_digest_tables(&c, &p->t, d);
	CHECK(strcmp(d, base) != 0, "the name alone changes the digest");
out:
	free(a);
	free(pr);
	free(p);
}

static void test_profile_parse_refuses(void)
{
	static const struct {
		const char *text, *why;
	} rows[] = {
		{ "bind /usr/share /usr/share\n", "'bind' is refused (nothing writable" },
		{ "rw-bind /usr/share /opt/s\n", "'rw-bind' is refused (nothing writable" },
		{ "tmpfs /opt/t\n", "'tmpfs' is refused (nothing writable" },
		{ "dev-bind /dev /dev\n", "'dev-bind' is refused (no device" },
		{ "dev /dev\n", "'dev' is refused (no device" },
		{ "proc /opt/proc\n", "'proc' is refused" },
		{ "ro-bind /proc /opt/proc\n", "source /proc: /proc is never bound" },
		{ "ro-bind /proc/1 /opt/proc\n", "source /proc/1: /proc is never bound" },
		{ "ro-bind /sys/fs /opt/sys\n", "source /sys/fs: /sys is never bound" },
		{ "ro-bind /dev/shm /opt/shm\n", "source /dev/shm: no device" },
		{ "ro-bind /usr/share /proc/x\n", "destination /proc/x: /proc is never bound" },
		{ "ro-bind /etc /opt/etc\n", "source /etc: must be a directory under /usr or /opt" },
		{ "ro-bind /home /opt/home\n", "source /home: must be a directory under /usr or /opt" },
		{ "ro-bind /usr /opt/usr\n", "source /usr: must be a directory under /usr or /opt" },
		{ "ro-bind /usr/share /workspace/x\n", "destination /workspace/x: must be a directory" },
		{ "ro-bind /usr/share /etc/x\n", "destination /etc/x: must be a directory" },
		{ "ro-bind usr/share /opt/x\n", "source usr/share: must be a directory under" },
		{ "ro-bind /usr/share/../lib /opt/x\n", "source /usr/share/../lib: must be normalized" },
		{ "ro-bind /usr//share /opt/x\n", "must be normalized" },
		{ "ro-bind /usr/share/ /opt/x\n", "must be normalized" },
		{ "ro-bind /usr/share /opt/x/.\n", "destination /opt/x/.: must be normalized" },
		{ "ro-bind /usr/no-such-dir-here /opt/x\n", "source /usr/no-such-dir-here: "
							   "/usr/no-such-dir-here: No such file" },
		{ "ro-bind /usr/bin/env /opt/x\n", "/usr/bin/env is not a directory" },
		{ "ro-bind /usr/share /usr/no-such-dir-here\n", "destination /usr/no-such-dir-here: "
							       "/usr/no-such-dir-here: No such" },
		{ "ro-bind /usr/share /opt/x\nro-bind /usr/lib /opt/x\n",
		  "line 2: destination /opt/x is bound twice" },
		{ "ro-bind /usr/share\n", "line 1: expected 'ro-bind SRC DST'" },
		{ "ro-bind /usr/share /opt/x extra\n", "expected 'ro-bind SRC DST'" },
		{ "--ro-bind /usr/share /opt/x\n", "unknown directive '--ro-bind'" },
		{ "include /etc/passwd\n", "unknown directive 'include'" },
		{ "ro-bind-try /usr/share /opt/x\n", "'ro-bind-try' is refused" },
		{ "# ok\nsymlink /usr/bin /opt/b\n", "line 2: 'symlink' is refused" },
		{ "ro-bind /opt/st /opt/x\n", "source /opt/st: must not contain or lie under "
					      "runner_state_dir" },
		{ "ro-bind /opt/st/etc /opt/x\n", "must not contain or lie under runner_state_dir" },
		{ "ro-bind /opt /opt/x\n", "source /opt: must be a directory under /usr or /opt" },
		{ "ro-bind /opt/db /opt/x\n", "must not contain or lie under db_socket" },
	};
	struct prof_named *p = malloc(sizeof *p);
	struct cfg c;

	if (!CHECK(p != NULL, "malloc"))
		return;
	cfg_defaults(&c);
	snprintf(c.runner_state_dir, sizeof c.runner_state_dir, "/opt/st");
	snprintf(c.db_socket, sizeof c.db_socket, "/opt/db/mysqld.sock");
	for (size_t i = 0; i < NELEM(rows); i++) {
		char err[1024] = "", ctx[160];
		int rc = prof_parse(&c, "t", rows[i].text, p, err, sizeof err);

		snprintf(ctx, sizeof ctx, "row %zu (%.60s)", i, rows[i].text);
		CHECK(rc == -1, "%s: refused; got rc %d", ctx, rc);
		CHECK_HAS_AT(ctx, err, rows[i].why);
	}
	{
		/* more binds than PROF_MAX_BINDS */
		char text[4096] = "";
		size_t n = 0;
		char err[1024] = "";

		for (int i = 0; i <= PROF_MAX_BINDS; i++)
			n += (size_t)snprintf(text + n, sizeof text - n, "ro-bind /usr/share /opt/x%d\n", i);
		CHECK_INT(prof_parse(&c, "t", text, p, err, sizeof err), -1);
		CHECK_HAS(err, "more than 16 binds");
	}
	free(p);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!CHECK(f != NULL, "fopen %s: %s", path, strerror(errno)))
		return;
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

/* A profile file must be a regular file owned by root, writable by root only; its
 * name is [a-z0-9][a-z0-9_-]*; "default" cannot be redefined. (As another user,
 * every file fails the owner check: that is what is tested then.) */
static void test_profile_files(void)
{
	char dir[] = "/tmp/sbx-prof-XXXXXX", path[256], link[256], err[1024];
	struct prof_named *p = malloc(sizeof *p);
	struct cfg c;
	int root = geteuid() == 0;

	if (!CHECK(p != NULL && mkdtemp(dir) != NULL, "mkdtemp"))
		goto out;
	chmod(dir, 0755);
	cfg_defaults(&c);
	CHECK_INT(prof_load(&c, "default", p, err, sizeof err), 0);
	CHECK(p->t.n_extra == 0 && p->t.mounts == prof_default.mounts, "default: compiled in");
	CHECK_INT(prof_load(&c, "python-data", p, err, sizeof err), -1);
	CHECK_HAS(err, "profile 'python-data' is not defined on this runner host "
		       "(runner_profiles_dir is not set)");
	CHECK_INT(prof_check_profiles(&c, err, sizeof err), 0);
	snprintf(c.runner_profiles_dir, sizeof c.runner_profiles_dir, "%s", dir);
	snprintf(path, sizeof path, "%s/python-data.profile", dir);
	write_file(path, "ro-bind /usr/share/doc /opt/doc\n", 0644);
	if (root) {
		CHECK(prof_load(&c, "python-data", p, err, sizeof err) == 0, "load: %s", err);
		CHECK_INT(p->t.n_extra, 1);
		CHECK(prof_check_profiles(&c, err, sizeof err) == 0, "check: %s", err);
	} else {
		CHECK_INT(prof_load(&c, "python-data", p, err, sizeof err), -1);
		CHECK_HAS(err, "python-data.profile must be a regular file owned by root");
	}
	CHECK_INT(prof_load(&c, "nope", p, err, sizeof err), -1);
	CHECK_HAS(err, "profile 'nope' is not defined on this runner host (no ");
	CHECK_INT(prof_load(&c, "../etc", p, err, sizeof err), -1);
	CHECK_HAS(err, "profile name '../etc' is not [a-z0-9][a-z0-9_-]*");
	CHECK_INT(prof_load(&c, "", p, err, sizeof err), -1);
	CHECK_INT(prof_load(&c, "Upper", p, err, sizeof err), -1);

	chmod(path, 0664);
	CHECK_INT(prof_load(&c, "python-data", p, err, sizeof err), -1);
	CHECK_HAS(err, "python-data.profile must be a regular file owned by root and not group "
		       "or world writable");
	CHECK_INT(prof_check_profiles(&c, err, sizeof err), -1);
	CHECK_HAS(err, "python-data.profile must be a regular file owned by root and not group");
	chmod(path, 0646);
	CHECK_INT(prof_load(&c, "python-data", p, err, sizeof err), -1);
	chmod(path, 0644);

	snprintf(link, sizeof link, "%s/linked.profile", dir);
	CHECK(symlink(path, link) == 0, "symlink");
	CHECK_INT(prof_load(&c, "linked", p, err, sizeof err), -1);
	CHECK_HAS(err, "linked.profile: is a symbolic link");
	unlink(link);

	snprintf(link, sizeof link, "%s/default.profile", dir);
	write_file(link, "ro-bind /usr/share/doc /opt/doc\n", 0644);
	if (root) {
		CHECK_INT(prof_check_profiles(&c, err, sizeof err), -1);
		CHECK_HAS(err, "default.profile: 'default' is the compiled-in profile");
	}
	unlink(link);
	snprintf(link, sizeof link, "%s/Bad Name.profile", dir);
	write_file(link, "", 0644);
	CHECK_INT(prof_check_profiles(&c, err, sizeof err), -1);
	CHECK_HAS(err, "Bad Name.profile: a profile's name must be [a-z0-9][a-z0-9_-]*");
	unlink(link);
	snprintf(link, sizeof link, "%s/bad.profile", dir);
	write_file(link, "ro-bind /etc /opt/etc\n", 0644);
	if (root) {
		CHECK_INT(prof_check_profiles(&c, err, sizeof err), -1);
		CHECK_HAS(err, "bad.profile: line 1: source /etc: must be a directory under");
	}
	unlink(link);

	chmod(dir, 0775);
	CHECK_INT(prof_load(&c, "python-data", p, err, sizeof err), -1);
	CHECK_HAS(err, "must be owned by root and not group or world writable");
	chmod(dir, 0755);
	unlink(path);
	rmdir(dir);
out:
	free(p);
}

/* ---- environment passthrough */

static void test_env_passthrough(void)
{
	struct cfg c;
	json_t *env = json_pack("{s:s, s:s}", "SBX_T_PASS", "from-job", "OTHER", "x");
	char err[512] = "", base[PROFILE_DIGEST_LEN], d[PROFILE_DIGEST_LEN];
	char *a = NULL, *b = NULL, *pr = NULL;

	cfg_defaults(&c);
	prof_digest(&c, base);
	setenv("SBX_T_PASS", "host-value", 1);
	setenv("SBX_T_SECRET", "hunter2", 1);
	unsetenv("SBX_T_UNSET");
	snprintf(c.runner_env_passthrough, sizeof c.runner_env_passthrough,
		 " SBX_T_PASS ,SBX_T_UNSET");
	CHECK(prof_check_env(&c, err, sizeof err) == 0, "a good list: %s", err);
	a = args_for(&c, &prof_default, env);
	c.runner_env_passthrough_override = 1;
	b = args_for(&c, &prof_default, env);
	c.runner_env_passthrough_override = 0;
	pr = print_of(&c, &prof_default);
	if (a == NULL || b == NULL || pr == NULL)
		goto out;
	CHECK_HAS(a, "\n--setenv\nSHELL\n/bin/sh\n--setenv\nSBX_T_PASS\nhost-value\n"
		     "--setenv\nOTHER\nx\n--chdir\n");
	CHECK_LACKS(a, "from-job");
	CHECK_LACKS(a, "SBX_T_UNSET");
	CHECK_LACKS(a, "hunter2");
	CHECK_LACKS(a, "SBX_T_SECRET");
	/* override: the job's value comes after the host's, and bwrap keeps the last */
	CHECK_HAS(b, "\n--setenv\nSBX_T_PASS\nhost-value\n");
	CHECK_HAS(b, "\n--setenv\nSBX_T_PASS\nfrom-job\n");
	CHECK(strstr(b, "from-job") > strstr(b, "host-value"), "override: the job's value last");
	CHECK_HAS(pr, "\nenv-passthrough SBX_T_PASS (");
	CHECK_HAS(pr, "\nenv-passthrough SBX_T_UNSET (");
	CHECK_HAS(pr, "\nenv-passthrough-override 0 ");
	CHECK_HAS(pr, " --setenv SBX_T_PASS <runner-env:SBX_T_PASS> ");
	CHECK_LACKS(pr, "host-value");
	CHECK_LACKS(pr, "hunter2");
	prof_digest(&c, d);
	CHECK(strcmp(d, base) != 0, "the passthrough list changes the digest");
	memcpy(base, d, sizeof d);
	setenv("SBX_T_PASS", "another-host-value", 1);
	prof_digest(&c, d);
	CHECK_STR(d, base); /* values are not part of it */
	c.runner_env_passthrough_override = 1;
	prof_digest(&c, d);
	CHECK(strcmp(d, base) != 0, "the override setting changes the digest");
out:
	unsetenv("SBX_T_PASS");
	unsetenv("SBX_T_SECRET");
	free(a);
	free(b);
	free(pr);
	json_decref(env);
}

static void test_env_passthrough_refused(void)
{
	static const struct {
		const char *list, *why;
	} rows[] = {
		{ "LANG,1BAD", "entry 2 '1BAD' is not a variable name" },
		{ "LANG,,TZ", "entry 2 '' is not a variable name" },
		{ "LANG,", "entry 2 '' is not a variable name" },
		{ "LANG TZ", "entry 1 'LANG TZ' is not a variable name" },
		{ "A-B", "entry 1 'A-B'" },
		{ "TOKEN=s3cret", "entry 1 'TOKEN' is not a variable name" },
	};
	struct cfg c;

	cfg_defaults(&c);
	for (size_t i = 0; i < NELEM(rows); i++) {
		char err[512] = "";

		snprintf(c.runner_env_passthrough, sizeof c.runner_env_passthrough, "%s",
			 rows[i].list);
		CHECK(prof_check_env(&c, err, sizeof err) == -1, "'%s' refused", rows[i].list);
		CHECK_HAS_AT(rows[i].list, err, rows[i].why);
		CHECK_LACKS_AT(rows[i].list, err, "s3cret");
		CHECK_INT_AT(rows[i].list, prof_bwrap_args(&c, "/ws", "", 8, NULL, 4, 5, -1, err,
							   sizeof err), -1);
	}
	snprintf(c.runner_env_passthrough, sizeof c.runner_env_passthrough, "  ");
	CHECK_INT(prof_check_env(&c, NULL, 0), 0);
}

void suite_profile(void)
{
	static const CU_TestInfo tests[] = { { "bwrap_args_sample_job", test_bwrap_args },
					     { "digest_follows_tables", test_digest_follows_tables },
					     { "print_shows_args", test_print_shows_args },
					     { "data_masks", test_data_masks },
					     { "rlimit_values", test_rlimit_values },
					     { "cgroup_key_readers", test_cg_key },
					     { "cgroup_v2_moved", test_cg_moved },
					     { "profile_file_accepts", test_profile_parse_accepts },
					     { "profile_file_refuses", test_profile_parse_refuses },
					     { "profile_file_checks", test_profile_files },
					     { "env_passthrough", test_env_passthrough },
					     { "env_passthrough_refused",
					       test_env_passthrough_refused },
					     CU_TEST_INFO_NULL };

	t_register("profile", tests);
}
