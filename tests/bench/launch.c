/*
 * bench-launch: what one job's launch costs, against two baselines, in one process.
 *
 * Three variants run /bin/true, interleaved within every iteration (the order
 * rotates: ABC, BCA, CAB, ...) so that drift on a noisy machine hits all of them:
 *
 *   A spawn   posix_spawn("/bin/true") as root, stdio on /dev/null, waitpid.
 *   B bwrap   fork; the child drops to an unprivileged uid the way sandbox.c does
 *             (setresgid, setgroups(0), setresuid, no_new_privs) and execs
 *             bwrap --unshare-all --die-with-parent --new-session + the profile's
 *             own mounts (taken from prof_bwrap_args, so they stay in step)
 *             -- /bin/true; waitpid.
 *   C runner  the supervisor's own code (supervise_local): policy check, workspace,
 *             cgroup, seccomp, bwrap arguments, spawn, the run loop, usage,
 *             artifacts, cleanup; each step timed through its probe.
 *
 * What C leaves out is the per-job work around the launch (the supervisor's exec,
 * its DB connection, load, heartbeat, result): the end-to-end figures cover that.
 *
 * Everything private: a fresh runner_state_dir under /tmp (its /etc written by
 * prof_prepare_etc), its own cgroup name and uid base, refused if any process
 * already runs as those uids (kill_job kills every process of the slot uid).
 *
 * Output: one JSON object per sample on stdout, a summary on stderr.
 * Exit 0, or 1 when a variant has no successful sample or setup failed.
 *
 * --serve: the same setup, then one request per stdin line, one JSON line answered
 * on stdout each, so that a driver (measure.py) interleaves these limits with its
 * own samples (A B A B ...):
 *   bare            one bare bwrap launch (variant B): total_ms, cpu_ns (user+sys
 *                   of everything it started: getrusage of the reaped children)
 *   spawn           one posix_spawn of /bin/true (variant A): total_ms, cpu_ns
 *   ceiling N S     the bare-bwrap throughput ceiling: N parallel loops, each as
 *                   its own unprivileged uid with its own workspace, launching bare
 *                   bwraps back to back for S seconds: launches, seconds, per_s,
 *                   cpu_ns
 * EOF or "quit" ends it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <grp.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "config.h"
#include "profile.h"
#include "sandbox.h"
#include "scfilter.h"
#include "store.h"
#include "supervise.h"
#include "util.h"
#include "workspace.h"

#define WALL_LIMIT_MS 10000.0 /* a /bin/true that takes this long is a failed sample */
#define CG_CHECK_MS 50        /* run_loop's poll timeout while the job runs */
#define EXITED_POLL_MS 20     /* ... and once it has exited */
#define MAX_ARGS 256
#define SLOT 0                /* C runs in slot 0 (uid base+0); B runs as uid base+1 */

enum variant { V_SPAWN, V_BWRAP, V_RUNNER, V_COUNT };
static const char *const vname[V_COUNT] = { "spawn", "bwrap", "runner" };

/* The steps supervise.c reports through its probe (struct sup_probe), in order. */
enum phase {
	P_WS_CREATE, P_CG_SETUP, P_PIPES, P_SECCOMP, P_BWRAP_ARGS, P_SPAWN, P_RUN,
	P_KILL_EXITED, P_DRAIN, P_CG_READ, P_ARTIFACTS, P_CLOSE, P_KILL_CLEANUP, P_CG_DESTROY,
	P_WS_DESTROY, P_COUNT
};
static const char *const pname[P_COUNT] = {
	"ws_create", "cg_setup", "pipes", "sc_build_fd", "prof_bwrap_args", "sb_spawn",
	"run", "kill_after_exit", "drain_after_exit", "cg_read", "artifacts", "close_fds",
	"cleanup_kill", "cg_destroy", "ws_destroy"
};

struct bench {
	struct cfg cfg;
	uid_t uid_runner, uid_bare;
	int use_cg;
	int devnull;
	char *bare_argv[MAX_ARGS];
	size_t bare_argc;
	char *bare_buf;                   /* backing store of bare_argv */
	char work[CFG_PATH_MAX + 16];     /* <state>/work */
	char bare_ws[CFG_PATH_MAX + 32];  /* B's /workspace source */
	int made_state;                   /* we created the state dir: remove it */
};

struct sample {
	int ok;
	double total;
	double cpu; /* user+sys ms of this process and its reaped children */
	double phase[P_COUNT];
	double phase_cpu[P_COUNT]; /* user+sys ms, ours and reaped children's */
	char err[640];
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* user+sys of the reaped children so far, ns */
static long long children_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		return -1;
	return ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       ((long long)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

/* user+sys of this process and its reaped children, ns */
static long long all_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return -1;
	return children_cpu_ns() +
	       ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       ((long long)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

/* bwrap's pid-1 process (--unshare-pid) outlives the bwrap we wait for by a moment
 * and is reparented to the nearest subreaper. We are one (main), so it is reaped
 * here and its CPU counted in this launch, as the runner's supervisor (a subreaper
 * too) counts it in a job's: without this the bare bwrap's inner process (its mounts,
 * /proc, seccomp) went to init uncounted and the previous runner sample's cleanup
 * reaped the rest. Blocks until no child is left. */
static void reap_all(void)
{
	for (;;) {
		if (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
			continue;
		return; /* ECHILD */
	}
}

/* ------------------------------------------------------------------ variant A */

static void run_spawn(struct bench *b, struct sample *s)
{
	char *argv[] = { (char *)"/bin/true", NULL };
	char *envp[] = { NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st = 0, rc;
	double t0 = now_ms();

	posix_spawn_file_actions_init(&fa);
	for (int fd = 0; fd < 3; fd++)
		posix_spawn_file_actions_adddup2(&fa, b->devnull, fd);
	rc = posix_spawn(&pid, "/bin/true", &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		snprintf(s->err, sizeof s->err, "posix_spawn: %s", strerror(rc));
		return;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	s->total = now_ms() - t0;
	s->ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (!s->ok)
		snprintf(s->err, sizeof s->err, "/bin/true: wait status %d", st);
}

/* ------------------------------------------------------------------ variant B */

static void __attribute__((noreturn)) bare_child(const struct bench *b, uid_t uid,
						 char *const *argv)
{
	char *envp[] = { NULL };

	if (dup2(b->devnull, 0) < 0 || dup2(b->devnull, 1) < 0 || dup2(b->devnull, 2) < 0)
		_exit(125);
	if (setresgid(uid, uid, uid) < 0 || setgroups(0, NULL) < 0 ||
	    setresuid(uid, uid, uid) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(125);
	syscall(SYS_close_range, 3, ~0U, 0);
	/* the profile's data masks (/proc/cmdline, boot_id): one small memfd each at the
	 * fd the profile names, as the runner's sandbox child fills them */
	for (int i = 0; argv[i] != NULL && argv[i + 1] != NULL; i++) {
		long want;
		int m;

		if (strcmp(argv[i], "--ro-bind-data") != 0)
			continue;
		want = strtol(argv[i + 1], NULL, 10);
		m = memfd_create("mask", 0);
		if (want < 3 || want > 1000 || m < 0 || write(m, "\n", 1) != 1 ||
		    lseek(m, 0, SEEK_SET) < 0 || (m != want && dup2(m, (int)want) < 0))
			_exit(125);
		if (m != want)
			close(m);
	}
	execve(b->cfg.bwrap_path, argv, envp);
	_exit(127);
}

static void run_bare(struct bench *b, struct sample *s)
{
	int st = 0;
	double t0 = now_ms();
	pid_t pid = fork();

	if (pid < 0) {
		snprintf(s->err, sizeof s->err, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0)
		bare_child(b, b->uid_bare, b->bare_argv);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	s->total = now_ms() - t0;
	reap_all(); /* its pid-1 process: CPU counted, not timed (as the runner's cleanup) */
	s->ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (!s->ok)
		snprintf(s->err, sizeof s->err, "bare bwrap: wait status %d", st);
}

/* bwrap options and how many values follow each. Mount options are what B keeps;
 * the rest is the runner's own hardening, which the bare baseline leaves out. An
 * option not listed here stops the bench: the profile changed, look again. */
static const struct opt {
	const char *name;
	int nargs, mount;
} bwrap_opts[] = {
	{ "--ro-bind", 2, 1 }, { "--bind", 2, 1 }, { "--dev-bind", 2, 1 },
	{ "--ro-bind-try", 2, 1 }, { "--bind-try", 2, 1 }, { "--symlink", 2, 1 },
	{ "--proc", 1, 1 }, { "--dev", 1, 1 }, { "--tmpfs", 1, 1 }, { "--size", 1, 1 },
	{ "--perms", 1, 1 }, { "--mqueue", 1, 1 }, { "--dir", 1, 1 },
	{ "--remount-ro", 1, 1 }, { "--chmod", 2, 1 },
	{ "--unshare-all", 0, 0 }, { "--unshare-user", 0, 0 }, { "--disable-userns", 0, 0 },
	{ "--die-with-parent", 0, 0 }, { "--new-session", 0, 0 }, { "--cap-drop", 1, 0 },
	{ "--hostname", 1, 0 }, { "--clearenv", 0, 0 }, { "--uid", 1, 0 }, { "--gid", 1, 0 },
	{ "--setenv", 2, 0 }, { "--chdir", 1, 0 }, { "--seccomp", 1, 0 },
	{ "--json-status-fd", 1, 0 }, { "--block-fd", 1, 0 }, { "--ro-bind-data", 2, 1 },
};

static const struct opt *find_opt(const char *name)
{
	for (size_t i = 0; i < sizeof bwrap_opts / sizeof bwrap_opts[0]; i++)
		if (strcmp(bwrap_opts[i].name, name) == 0)
			return &bwrap_opts[i];
	return NULL;
}

static int add_arg(struct bench *b, char *a)
{
	if (b->bare_argc + 1 >= MAX_ARGS) {
		fprintf(stderr, "bench-launch: too many bwrap arguments\n");
		return -1;
	}
	b->bare_argv[b->bare_argc++] = a;
	b->bare_argv[b->bare_argc] = NULL;
	return 0;
}

/* Reads the whole args memfd into b->bare_buf; its length, or -1. */
static ssize_t read_args_fd(struct bench *b, int fd)
{
	size_t cap = 65536, len = 0;
	ssize_t r;

	b->bare_buf = malloc(cap + 1);
	if (b->bare_buf == NULL)
		return -1;
	while ((r = read(fd, b->bare_buf + len, cap - len)) > 0)
		len += (size_t)r;
	if (r < 0 || len == cap)
		return -1;
	b->bare_buf[len] = '\0';
	return (ssize_t)len;
}

/* B's argv: the namespace options the issue names, then the profile's mounts. */
static int build_bare_argv(struct bench *b)
{
	static char *const head[] = { (char *)"bwrap", (char *)"--unshare-all",
				      (char *)"--die-with-parent", (char *)"--new-session" };
	char err[512];
	json_t *env = json_object();
	int fd = prof_bwrap_args(&b->cfg, b->bare_ws, "", b->cfg.runner_tmp_mb, env,
				 SB_FD_SECCOMP, SB_FD_STATUS, -1, err, sizeof err);
	ssize_t len;

	json_decref(env);
	if (fd < 0) {
		fprintf(stderr, "bench-launch: prof_bwrap_args: %s\n", err);
		return -1;
	}
	len = read_args_fd(b, fd);
	close(fd);
	if (len < 0) {
		fprintf(stderr, "bench-launch: cannot read the bwrap arguments\n");
		return -1;
	}
	for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
		if (add_arg(b, head[i]) < 0)
			return -1;
	for (char *p = b->bare_buf; p < b->bare_buf + len;) {
		const struct opt *o = find_opt(p);
		if (o == NULL) {
			fprintf(stderr, "bench-launch: unknown bwrap option %s in the profile\n", p);
			return -1;
		}
		for (int k = 0; k <= o->nargs; k++) {
			if (p >= b->bare_buf + len) {
				fprintf(stderr, "bench-launch: %s lacks its values\n", o->name);
				return -1;
			}
			if (o->mount && add_arg(b, p) < 0)
				return -1;
			p += strlen(p) + 1;
		}
	}
	if (add_arg(b, (char *)"--") < 0 || add_arg(b, (char *)"/bin/true") < 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ variant C */

/* supervise.c's kill_job: the cgroup, the process group, then every process of
 * the slot uid. */
/* C: the runner's own execution path (supervise_local: the supervisor's code minus
 * the database), with every step's time taken through its probe. */
struct probe_ctx {
	struct sample *s;
	double last;
	long long last_cpu;
};

static void on_mark(void *ctx, const char *step)
{
	struct probe_ctx *p = ctx;
	double now = now_ms();
	long long cpu = all_cpu_ns();

	for (int i = 0; i < P_COUNT; i++) {
		if (strcmp(pname[i], step) == 0) {
			p->s->phase[i] += now - p->last;
			p->s->phase_cpu[i] += (double)(cpu - p->last_cpu) / 1e6;
			break;
		}
	}
	p->last = now;
	p->last_cpu = cpu;
}

static void run_runner(struct bench *b, struct sample *s)
{
	struct job j;
	struct probe_ctx pc = { s, 0, all_cpu_ns() };
	struct sup_probe probe = { on_mark, &pc };
	enum job_state state = JS_ERROR;
	int code = -1;
	double t0 = now_ms();

	memset(&j, 0, sizeof j);
	util_uuid7(j.id);
	j.argv = json_pack("[s]", "/bin/true");
	j.env = json_object();
	j.stdin_buf = (unsigned char *)calloc(1, 1);
	j.cwd = strdup("");
	memcpy(j.limits, b->cfg.limit_default, sizeof j.limits);
	pc.last = t0;
	if (j.argv == NULL || j.env == NULL || j.stdin_buf == NULL || j.cwd == NULL) {
		snprintf(s->err, sizeof s->err, "out of memory");
	} else if (supervise_local(&b->cfg, &j, SLOT, &probe, &state, &code) < 0 ||
		   state != JS_SUCCEEDED || code != 0) {
		snprintf(s->err, sizeof s->err, "/bin/true through the runner: %s, exit %d",
			 js_name(state), code);
	} else {
		s->ok = 1;
	}
	s->total = now_ms() - t0;
	store_job_free(&j);
}

/* ------------------------------------------------------------------ setup */

/* The pid of a live process that has uid as its real, effective, saved or fs uid,
 * else 0 (-1 when /proc cannot be read). */
static long uid_user(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long busy = 0;

	if (d == NULL)
		return -1;
	while (!busy && (e = readdir(d)) != NULL) {
		char path[300], line[256];
		unsigned long u[4];
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue; /* gone meanwhile */
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "Uid: %lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
				for (int i = 0; i < 4; i++)
					if (u[i] == (unsigned long)uid)
						busy = strtol(e->d_name, NULL, 10);
				break;
			}
		fclose(f);
	}
	closedir(d);
	return busy;
}

static int uid_busy(uid_t uid)
{
	return uid_user(uid) != 0;
}

static int rm_entry(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (type == FTW_DP)
		return rmdir(p) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(p) < 0 && errno != ENOENT ? -1 : 0;
}

/* The state dir holds only what prof_prepare_etc and we made; never cross into a
 * mount (a workspace tmpfs left mounted is unmounted by ws_destroy first). */
static void remove_state(struct bench *b)
{
	char ws[CFG_PATH_MAX + 64];
	static const char *const ctl[] = { "", "memory/", "pids/", "cpuacct/", "freezer/" };

	snprintf(ws, sizeof ws, "%s/slot-%d", b->work, SLOT);
	ws_destroy(ws);
	if (b->made_state && nftw(b->cfg.runner_state_dir, rm_entry, 16,
				  FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		fprintf(stderr, "bench-launch: could not remove %s\n", b->cfg.runner_state_dir);
	for (size_t i = 0; i < sizeof ctl / sizeof ctl[0]; i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof p, "/sys/fs/cgroup/%s%s", ctl[i], b->cfg.runner_cgroup_name);
		rmdir(p);
	}
}

static int mkdir_owned(const char *p, mode_t mode, uid_t uid)
{
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return -1;
	return chown(p, uid, uid) < 0 || chmod(p, mode) < 0 ? -1 : 0;
}

static int setup(struct bench *b)
{
	char err[512];

	if (uid_busy(b->uid_runner) || uid_busy(b->uid_bare)) {
		fprintf(stderr, "bench-launch: uid %u or %u is in use: choose another --uid-base\n",
			(unsigned)b->uid_runner, (unsigned)b->uid_bare);
		return -1;
	}
	if (prof_prepare_etc(&b->cfg, err, sizeof err) < 0) {
		fprintf(stderr, "bench-launch: prof_prepare_etc: %s\n", err);
		return -1;
	}
	snprintf(b->work, sizeof b->work, "%s/work", b->cfg.runner_state_dir);
	snprintf(b->bare_ws, sizeof b->bare_ws, "%s/bare", b->work);
	if (mkdir_owned(b->work, 0711, 0) < 0 || mkdir_owned(b->bare_ws, 0700, b->uid_bare) < 0) {
		fprintf(stderr, "bench-launch: %s: %s\n", b->work, strerror(errno));
		return -1;
	}
	b->use_cg = strcmp(b->cfg.runner_limits_mode, "rlimit-only") != 0;
	b->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (b->devnull < 0 || build_bare_argv(b) < 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ output */

static void print_sample(enum variant v, long iter, const struct sample *s)
{
	json_t *o = json_pack("{s:s, s:I, s:b, s:f, s:f}", "variant", vname[v], "iter",
			      (json_int_t)iter, "ok", s->ok, "total_ms", s->total, "cpu_ms", s->cpu);

	if (v == V_RUNNER) {
		json_t *ph = json_object();
		for (int p = 0; p < P_COUNT; p++)
			json_object_set_new(ph, pname[p], json_real(s->phase[p]));
		json_object_set_new(o, "phases_ms", ph);
		ph = json_object();
		for (int p = 0; p < P_COUNT; p++)
			json_object_set_new(ph, pname[p], json_real(s->phase_cpu[p]));
		json_object_set_new(o, "phases_cpu_ms", ph);
	}
	if (!s->ok)
		json_object_set_new(o, "error", json_string(s->err));
	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	json_decref(o);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ------------------------------------------------------------------ --serve */

#define CEIL_MAX 16

/* One ceiling loop: bare bwraps back to back as uid until the deadline; ok and
 * failed counts written to fd. */
static void __attribute__((noreturn)) ceil_loop(struct bench *b, uid_t uid, char *const *argv,
						double deadline, int fd)
{
	long cnt[2] = { 0, 0 };

	/* each loop reaps its own launches' pid-1 processes, as a runner slot does */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	while (now_ms() < deadline && !stop_flag) {
		int st = 0;
		pid_t pid = fork();

		if (pid < 0)
			break;
		if (pid == 0)
			bare_child(b, uid, argv);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		cnt[WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1]++;
		reap_all();
	}
	_exit(write(fd, cnt, sizeof cnt) == (ssize_t)sizeof cnt ? 0 : 1);
}

/* N parallel loops for secs seconds; one JSON line. */
static void serve_ceiling(struct bench *b, int n, double secs)
{
	char *argv[CEIL_MAX][MAX_ARGS];
	char ws[CEIL_MAX][CFG_PATH_MAX + 48];
	pid_t pids[CEIL_MAX];
	int pfd[2], started = 0;
	long ok = 0, failed = 0;
	long long c0 = children_cpu_ns();
	double t0, t1;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		printf("{\"ok\":false,\"error\":\"pipe\"}\n");
		return;
	}
	for (int k = 0; k < n; k++) {
		uid_t uid = b->uid_bare + 1 + (uid_t)k;
		long user = uid_user(uid);
		/* the last round's sandboxes may still be going away */
		for (int t = 0; t < 200 && user > 0; t++) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			user = uid_user(uid);
		}
		snprintf(ws[k], sizeof ws[k], "%s/ceil-%d", b->work, k);
		if (user != 0) {
			printf("{\"ok\":false,\"error\":\"uid %u is in use (pid %ld)\"}\n",
			       (unsigned)uid, user);
			close(pfd[0]), close(pfd[1]);
			return;
		}
		if (mkdir_owned(ws[k], 0700, uid) < 0) {
			printf("{\"ok\":false,\"error\":\"%s: %s\"}\n", ws[k], strerror(errno));
			close(pfd[0]), close(pfd[1]);
			return;
		}
		for (size_t i = 0; i <= b->bare_argc; i++)
			argv[k][i] = b->bare_argv[i] && strcmp(b->bare_argv[i], b->bare_ws) == 0 ?
					     ws[k] : b->bare_argv[i];
	}
	t0 = now_ms();
	for (int k = 0; k < n; k++) {
		pid_t pid = fork();
		if (pid == 0)
			ceil_loop(b, b->uid_bare + 1 + (uid_t)k, argv[k], t0 + secs * 1e3, pfd[1]);
		if (pid > 0)
			pids[started++] = pid;
	}
	close(pfd[1]);
	for (int k = 0; k < started; k++) {
		long cnt[2];
		if (read(pfd[0], cnt, sizeof cnt) == (ssize_t)sizeof cnt)
			ok += cnt[0], failed += cnt[1];
	}
	for (int k = 0; k < started; k++)
		while (waitpid(pids[k], NULL, 0) < 0 && errno == EINTR)
			;
	t1 = now_ms();
	close(pfd[0]);
	printf("{\"ok\":%s,\"loops\":%d,\"launches\":%ld,\"failed\":%ld,"
	       "\"seconds\":%.6f,\"per_s\":%.3f,\"cpu_ns\":%lld}\n",
	       started == n && ok > 0 ? "true" : "false", started, ok, failed,
	       (t1 - t0) / 1e3, ok / ((t1 - t0) / 1e3), children_cpu_ns() - c0);
}

static int serve(struct bench *b)
{
	char line[128];

	printf("{\"ready\":true}\n");
	fflush(stdout);
	while (!stop_flag && fgets(line, sizeof line, stdin)) {
		struct sample smp;
		int n;
		double secs;
		long long c0 = children_cpu_ns();

		memset(&smp, 0, sizeof smp);
		if (strcmp(line, "bare\n") == 0 || strcmp(line, "spawn\n") == 0) {
			if (line[0] == 'b')
				run_bare(b, &smp);
			else
				run_spawn(b, &smp);
			printf("{\"ok\":%s,\"total_ms\":%.6f,\"cpu_ns\":%lld}\n",
			       smp.ok ? "true" : "false", smp.total, children_cpu_ns() - c0);
		} else if (sscanf(line, "ceiling %d %lf", &n, &secs) == 2 && n >= 1 &&
			   n <= CEIL_MAX && secs > 0 && secs <= 600) {
			serve_ceiling(b, n, secs);
		} else if (strcmp(line, "quit\n") == 0) {
			break;
		} else {
			printf("{\"ok\":false,\"error\":\"unknown request\"}\n");
		}
		fflush(stdout);
	}
	return 0;
}

/* ------------------------------------------------------------------ main */

struct opts {
	long iterations, warmup;
	const char *config, *state_dir, *cgroup_name;
	long long uid_base;
	int serve;
	int only; /* a variant + 1, or 0 for all three */
};

static void usage(void)
{
	fprintf(stderr,
		"usage: bench-launch [--iterations N] [--warmup N] [--config FILE]\n"
		"                    [--state-dir DIR] [--cgroup-name NAME] [--uid-base UID]\n"
		"                    [--serve] [--variant spawn|bwrap|runner]\n"
		"  --config: a sandbox.conf for bwrap_path, runner_tmp_mb, limits and limits\n"
		"  mode; its runner_state_dir, runner_cgroup_name and runner_uid_base are\n"
		"  replaced by private ones. Must run as root.\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "iterations", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "cgroup-name", required_argument, NULL, 'g' },
		{ "uid-base", required_argument, NULL, 'u' },
		{ "serve", no_argument, NULL, 'S' },
		{ "variant", required_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	long long v;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
		case 'w':
			if (util_parse_ll(optarg, c == 'n' ? 1 : 0, 1000000, &v) < 0)
				usage();
			*(c == 'n' ? &o->iterations : &o->warmup) = (long)v;
			break;
		case 'c': o->config = optarg; break;
		case 's': o->state_dir = optarg; break;
		case 'g': o->cgroup_name = optarg; break;
		case 'S': o->serve = 1; break;
		case 'V':
			for (int vi = 0; vi < V_COUNT; vi++)
				if (strcmp(optarg, vname[vi]) == 0)
					o->only = vi + 1;
			if (o->only == 0)
				usage();
			break;
		case 'u':
			if (util_parse_ll(optarg, 1000, 2000000000, &o->uid_base) < 0)
				usage();
			break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
}

static int configure(struct bench *b, const struct opts *o)
{
	char err[512];
	struct cfg *c = &b->cfg;

	cfg_defaults(c);
	if (o->config && cfg_load(c, o->config, err, sizeof err) < 0) {
		fprintf(stderr, "bench-launch: config: %s\n", err);
		return -1;
	}
	if (o->state_dir) {
		snprintf(c->runner_state_dir, sizeof c->runner_state_dir, "%s", o->state_dir);
	} else {
		char tmpl[] = "/tmp/sandbox-bench-launch.XXXXXX";
		if (mkdtemp(tmpl) == NULL) {
			fprintf(stderr, "bench-launch: mkdtemp: %s\n", strerror(errno));
			return -1;
		}
		snprintf(c->runner_state_dir, sizeof c->runner_state_dir, "%s", tmpl);
		b->made_state = 1;
	}
	if (o->cgroup_name)
		snprintf(c->runner_cgroup_name, sizeof c->runner_cgroup_name, "%s",
			 o->cgroup_name);
	else
		snprintf(c->runner_cgroup_name, sizeof c->runner_cgroup_name,
			 "sandbox-bench-%ld", (long)getpid());
	/* Below the stacks' range (300000 + ...) and clear of the default 200000. */
	c->runner_uid_base = o->uid_base ? o->uid_base : 260000 + (getpid() % 1000) * 32;
	b->uid_runner = (uid_t)(c->runner_uid_base + SLOT);
	b->uid_bare = b->uid_runner + 1;
	return 0;
}

static void one(struct bench *b, enum variant v, struct sample *s)
{
	long long c0 = all_cpu_ns();

	memset(s, 0, sizeof *s);
	if (v == V_SPAWN)
		run_spawn(b, s);
	else if (v == V_BWRAP)
		run_bare(b, s);
	else
		run_runner(b, s);
	s->cpu = (double)(all_cpu_ns() - c0) / 1e6;
}

/* Interleaved iterations; the samples after the warm-up are printed. */
static int run_all(struct bench *b, const struct opts *o)
{
	double *tot[V_COUNT];
	size_t nok[V_COUNT] = { 0 }, nfail[V_COUNT] = { 0 };
	int rc = 0;

	for (int v = 0; v < V_COUNT; v++)
		tot[v] = calloc((size_t)o->iterations, sizeof *tot[v]);
	for (long i = 0; i < o->warmup + o->iterations && !stop_flag; i++) {
		for (int k = 0; k < V_COUNT; k++) {
			enum variant v = (enum variant)((i + k) % V_COUNT);
			struct sample s;
			if (o->only && (int)v != o->only - 1)
				continue;
			one(b, v, &s);
			if (i < o->warmup)
				continue;
			print_sample(v, i - o->warmup, &s);
			if (s.ok)
				tot[v][nok[v]++] = s.total;
			else
				nfail[v]++;
		}
	}
	fflush(stdout);
	for (int v = 0; v < V_COUNT; v++) {
		fprintf(stderr, "bench-launch: %-6s median %8.3f ms  (%zu ok, %zu failed)\n",
			vname[v], median(tot[v], nok[v]), nok[v], nfail[v]);
		if (nok[v] == 0 && (!o->only || v == o->only - 1))
			rc = -1;
		free(tot[v]);
	}
	return stop_flag ? -1 : rc;
}

int main(int argc, char **argv)
{
	struct opts o = { .iterations = 200, .warmup = 5 };
	struct bench b;
	struct sigaction sa;
	int rc = 1;

	memset(&b, 0, sizeof b);
	b.devnull = -1;
	parse(argc, argv, &o);
	if (geteuid() != 0) {
		fprintf(stderr, "bench-launch: must run as root (like the runner)\n");
		return 1;
	}
	umask(022);
	/* orphans of our launches (bwrap's pid-1 process) come to us: reap_all */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (configure(&b, &o) < 0)
		return 1;
	fprintf(stderr, "bench-launch: state %s, cgroup %s, uids %u (runner) %u (bare bwrap)\n",
		b.cfg.runner_state_dir, b.cfg.runner_cgroup_name, (unsigned)b.uid_runner,
		(unsigned)b.uid_bare);
	if (setup(&b) == 0 && (o.serve ? serve(&b) : run_all(&b, &o)) == 0)
		rc = 0;
	remove_state(&b);
	free(b.bare_buf);
	if (b.devnull >= 0)
		close(b.devnull);
	return rc;
}
