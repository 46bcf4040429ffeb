/* Per-slot cgroups (see cgroup.h). */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define ROOT "/sys/fs/cgroup"

static int write_file(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 64];
	int fd, rc = 0;
	size_t n = strlen(val);

	snprintf(path, sizeof path, "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, val, n) != (ssize_t)n)
		rc = -1;
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* isolate's cg_write: a file whose name starts with '?' is optional (a kernel or a
 * configuration may lack it): its failure is logged and the caller carries on. Any
 * other failure is logged as an error naming the file, and err (if given) says which
 * file and why: the job's limits were not applied. 0 or -1 (errno kept). */
static int cg_write(const char *dir, const char *file, char *err, size_t errlen,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int cg_write(const char *dir, const char *file, char *err, size_t errlen,
		    const char *fmt, ...)
{
	int optional = file[0] == '?', e;
	char val[64], path[PATH_MAX + 64];
	va_list ap;

	file += optional;
	va_start(ap, fmt);
	vsnprintf(val, sizeof val, fmt, ap);
	va_end(ap);
	if (write_file(dir, file, val) == 0)
		return 0;
	e = errno;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	log_kv(optional ? "warn" : "error", "cgroup_write_failed", "file", path, "error",
	       strerror(e), "required", optional ? "no" : "yes", (char *)NULL);
	if (!optional && err)
		snprintf(err, errlen, "%s: %s", file, strerror(e));
	errno = e;
	return -1;
}

static int read_file(const char *dir, const char *file, char *buf, size_t n)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof path, "%s/%s", dir, file);
	return util_read_small(path, buf, n) < 0 ? -1 : 0;
}

static long long read_ll(const char *dir, const char *file)
{
	char buf[64];

	if (read_file(dir, file, buf, sizeof buf) < 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

long long cg_key(const char *text, const char *key)
{
	size_t k = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, k) == 0 && p[k] == ' ')
			return strtoll(p + k + 1, NULL, 10);
	return -1;
}

static long long read_key(const char *dir, const char *file, const char *key)
{
	char buf[4096];

	if (read_file(dir, file, buf, sizeof buf) < 0)
		return -1;
	return cg_key(buf, key);
}

int cg_detect(void)
{
	char buf[256];

	if (read_file(ROOT, "cgroup.controllers", buf, sizeof buf) == 0 &&
	    strstr(buf, "memory") && strstr(buf, "pids"))
		return 2;
	if (access(ROOT "/memory/cgroup.procs", F_OK) == 0 &&
	    access(ROOT "/pids/cgroup.procs", F_OK) == 0)
		return 1;
	return 0;
}

const char *cg_describe(const struct cg *g)
{
	return g->version == 2 ? "cgroup v2" : g->version == 1 ? "cgroup v1" : "no cgroup";
}

static int dirs(const struct cg *g, const char **out)
{
	int n = 0;

	if (g->version == 2) {
		out[n++] = g->v2;
		return n;
	}
	out[n++] = g->mem;
	out[n++] = g->pids;
	if (g->cpu[0])
		out[n++] = g->cpu;
	if (g->freezer[0])
		out[n++] = g->freezer;
	return n;
}

int cg_nprocs(const struct cg *g)
{
	char buf[8192];
	int n = 0;

	if (read_file(g->version == 2 ? g->v2 : g->pids, "cgroup.procs", buf, sizeof buf) < 0)
		return -1;
	for (char *p = buf; *p; p++)
		n += *p == '\n';
	return n;
}

static void kill_listed(const char *dir)
{
	char buf[65536], *p = buf;

	if (read_file(dir, "cgroup.procs", buf, sizeof buf) < 0)
		return;
	while (*p) {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0)
			kill((pid_t)pid, SIGKILL);
		p = *end ? end + 1 : end;
	}
}

int cg_kill_all(const struct cg *g)
{
	struct timespec ts = { 0, 1000 * 1000 }; /* 1 ms: exiting processes go fast */

	if (g->version == 0 || cg_nprocs(g) == 0)
		return 0;
	/* v2 has cgroup.kill; v1 freezes first so a fork bomb cannot outrun the kill. */
	if (g->version == 2 && cg_write(g->v2, "?cgroup.kill", NULL, 0, "1") == 0) {
		/* done by the kernel */
	} else if (g->version == 1 && g->freezer[0]) {
		cg_write(g->freezer, "?freezer.state", NULL, 0, "FROZEN");
		kill_listed(g->freezer);
		cg_write(g->freezer, "?freezer.state", NULL, 0, "THAWED");
	}
	for (int i = 0; i < 3000; i++) { /* up to 3 s */
		int n = cg_nprocs(g);
		if (n <= 0)
			return n < 0 ? -1 : 0;
		kill_listed(g->version == 2 ? g->v2 : g->pids);
		if (g->version == 1)
			kill_listed(g->mem);
		nanosleep(&ts, NULL);
	}
	return -1;
}

static int rm_dirs(struct cg *g)
{
	const char *d[4];
	int n = dirs(g, d), rc = 0;

	for (int i = 0; i < n; i++)
		if (rmdir(d[i]) < 0 && errno != ENOENT)
			rc = -1;
	return rc;
}

int cg_destroy(struct cg *g)
{
	int rc = 0;

	if (g->version == 0)
		return 0;
	if (cg_kill_all(g) < 0)
		rc = -1;
	if (rm_dirs(g) < 0)
		rc = -1;
	return rc;
}

static int mk(const char *path, char *err, size_t errlen)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The "0::" line of /proc/self/cgroup: this process's cgroup, relative to the
 * hierarchy mounted on /sys/fs/cgroup (a cgroup namespace's root is "/"). */
int cg_v2_self(char *path, size_t n)
{
	char buf[4096], *line, *save = NULL;

	if (util_read_small("/proc/self/cgroup", buf, sizeof buf) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "0::", 3) == 0) {
			if (line[3] != '/' || strstr(line + 3, "/..") != NULL) {
				/* a cgroup namespace whose hierarchy was mounted from outside it */
				errno = EXDEV;
				return -1;
			}
			if ((size_t)snprintf(path, n, "%s", line + 3) >= n) {
				errno = ENAMETOOLONG;
				return -1;
			}
			return 0;
		}
	errno = ENOENT;
	return -1;
}

int cg_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return 1;
	return 0;
}

static int fail_v2(char *err, size_t errlen, const char *path, const char *what, int e)
{
	log_kv("error", "cgroup_write_failed", "file", path, "value", what, "error", strerror(e),
	       "required", "yes", (char *)NULL);
	snprintf(err, errlen, "%s: %s: %s%s", path, what, strerror(e),
		 e == EBUSY ? " (the cgroup holds processes: the no-internal-processes rule)"
			    : "");
	errno = e;
	return -1;
}

/* memory and pids in dir's cgroup.subtree_control, one controller per write (the
 * kernel applies a multi-controller write all or nothing, and its error would not say
 * which one failed); nothing is written where they are on already. cpu is not asked
 * for: cpu.stat's usage exists without it, and no cpu control file is used. */
static int enable_in(const char *dir, struct cg_v2_layout *l, char *err, size_t errlen)
{
	static const char *const need[] = { "memory", "pids" };
	char on[512], offered[512], path[PATH_MAX + 64], val[16];

	snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
	if (read_file(dir, "cgroup.subtree_control", on, sizeof on) < 0)
		return fail_v2(err, errlen, path, "read", errno);
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
		if (cg_has_word(on, need[i]))
			continue;
		if (read_file(dir, "cgroup.controllers", offered, sizeof offered) == 0 &&
		    !cg_has_word(offered, need[i])) {
			log_kv("error", "cgroup_not_offered", "dir", dir, "controller", need[i],
			       "offered", offered, (char *)NULL);
			snprintf(err, errlen,
				 "%s/cgroup.controllers: %s is not offered to this cgroup (its"
				 " parent does not delegate it)", dir, need[i]);
			errno = ENOENT;
			return -1;
		}
		snprintf(val, sizeof val, "+%s", need[i]);
		if (write_file(dir, "cgroup.subtree_control", val) < 0)
			return fail_v2(err, errlen, path, val, errno);
		l->writes++;
	}
	return 0;
}

/* The <own> of the first layout this process made (cg_v2_prepare), "" before: where
 * it belongs from then on, whoever moves it (an operator's echo into cgroup.procs, a
 * container manager, systemctl). The dispatcher's is inherited by what it forks
 * without exec (spares, prewarmed holders, the runtimes probe); a supervisor it
 * execs is born in its leaf (cg_v2_stay before every claim) and sets its own. */
static char home[PATH_MAX - 512];

int cg_v2_moved(const char *self, const char *own)
{
	size_t n = strlen(own);

	if (strcmp(own, "/") == 0)
		n = 0; /* the leaf of the root is "/runner" */
	return !(strncmp(self, own, n) == 0 && strcmp(self + n, "/" CG_V2_LEAF) == 0);
}

/* Back into home's leaf (made again if someone removed it): 0, or -1 with err. */
static int return_home(const char *self, char *err, size_t errlen)
{
	char leaf[PATH_MAX], pid[24];
	int e;

	if ((size_t)snprintf(leaf, sizeof leaf, ROOT "%s/" CG_V2_LEAF,
			     strcmp(home, "/") == 0 ? "" : home) >= sizeof leaf) {
		snprintf(err, errlen, "cgroup path too long: %s", home);
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	if ((mkdir(leaf, 0755) < 0 && errno != EEXIST) || write_file(leaf, "cgroup.procs", pid) < 0) {
		e = errno;
		log_kv("error", "cgroup_moved", "from", self, "leaf", leaf, "error", strerror(e),
		       "action", "could not move back", (char *)NULL);
		snprintf(err, errlen, "this process was moved out of its cgroup %s into %s and"
			 " could not move back: %s/cgroup.procs: %s", leaf, self, leaf, strerror(e));
		errno = e;
		return -1;
	}
	log_kv("warn", "cgroup_moved_back", "from", self, "to", leaf, (char *)NULL);
	return 0;
}

int cg_v2_stay(char *err, size_t errlen)
{
	char self[PATH_MAX - 512];

	if (home[0] == '\0')
		return 0; /* no v2 layout made here (v1, rlimit-only) */
	if (cg_v2_self(self, sizeof self) < 0) {
		snprintf(err, errlen, "/proc/self/cgroup: no usable 0:: line: %s", strerror(errno));
		return -1;
	}
	if (!cg_v2_moved(self, home))
		return 0;
	return return_home(self, err, errlen) < 0 ? -1 : 1;
}

int cg_v2_prepare(const char *name, struct cg_v2_layout *l, char *err, size_t errlen)
{
	char self[PATH_MAX - 512], dir[PATH_MAX], pid[24];
	size_t n;

	memset(l, 0, sizeof *l);
	/* Moved since its layout was made: back first, or its slot would go under the
	 * cgroup it was moved to, where turning controllers on fails (EBUSY: the
	 * no-internal-processes rule) for every job until a restart. */
	if (home[0] && cg_v2_stay(err, errlen) < 0)
		return -1;
	if (cg_v2_self(self, sizeof self) < 0) {
		snprintf(err, errlen, "/proc/self/cgroup: no usable 0:: line: %s%s", strerror(errno),
			 errno == EXDEV ? " (a cgroup namespace: mount cgroup2 inside it)" : "");
		return -1;
	}
	/* A supervisor (or a runner started again from the leaf) is in <own>/runner. */
	n = strlen(self);
	if (n >= sizeof CG_V2_LEAF && strcmp(self + n - (sizeof CG_V2_LEAF - 1), CG_V2_LEAF) == 0 &&
	    self[n - sizeof CG_V2_LEAF] == '/') {
		self[n - sizeof CG_V2_LEAF] = '\0';
		l->moved = 0;
	} else {
		l->moved = 1;
	}
	if (self[0] == '\0' || strcmp(self, "/") == 0)
		self[0] = '\0';
	if ((size_t)snprintf(l->own, sizeof l->own, "%s", self[0] ? self : "/") >= sizeof l->own ||
	    (size_t)snprintf(l->own_dir, sizeof l->own_dir, ROOT "%s", self) >= sizeof l->own_dir ||
	    (size_t)snprintf(l->base, sizeof l->base, "%s/%s", l->own_dir, name) >= sizeof l->base ||
	    (size_t)snprintf(l->leaf, sizeof l->leaf, "%s/" CG_V2_LEAF, l->own_dir) >=
		    sizeof l->leaf) {
		snprintf(err, errlen, "cgroup path too long: %s", self);
		errno = ENAMETOOLONG;
		return -1;
	}
	/* First out of <own> into the leaf: no controller can be enabled for <own>'s
	 * children while <own> itself holds processes (EBUSY), which is the case in a
	 * container's cgroup namespace and for a service's own cgroup. */
	if (l->moved) {
		if (mkdir(l->leaf, 0755) < 0 && errno != EEXIST)
			return fail_v2(err, errlen, l->leaf, "mkdir", errno);
		snprintf(pid, sizeof pid, "%ld", (long)getpid());
		if (write_file(l->leaf, "cgroup.procs", pid) < 0) {
			int e = errno;
			if ((size_t)snprintf(dir, sizeof dir, "%s/cgroup.procs", l->leaf) >= sizeof dir)
				snprintf(dir, sizeof dir, "%s", l->leaf);
			return fail_v2(err, errlen, dir, "move this process", e);
		}
	}
	/* Level by level from the top of what this process sees down to <own>: where
	 * the controllers are on already (systemd's Delegate=yes turns them on above the
	 * unit) nothing is written. */
	snprintf(dir, sizeof dir, ROOT);
	for (const char *p = self;;) {
		if (enable_in(dir, l, err, errlen) < 0)
			return -1;
		if (*p == '\0')
			break;
		const char *q = strchr(p + 1, '/');
		size_t len = strlen(dir), seg = q ? (size_t)(q - p) : strlen(p);
		if (len + seg >= sizeof dir) {
			snprintf(err, errlen, "cgroup path too long: %s", self);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(dir + len, p, seg);
		dir[len + seg] = '\0';
		p += seg;
	}
	if (mkdir(l->base, 0755) < 0 && errno != EEXIST)
		return fail_v2(err, errlen, l->base, "mkdir", errno);
	if (enable_in(l->base, l, err, errlen) < 0)
		return -1;
	if (home[0] == '\0' && strlen(l->own) < sizeof home)
		memcpy(home, l->own, strlen(l->own) + 1);
	return 0;
}

static int setup_v2(struct cg *g, const char *name, int slot, long long mem, long long pids,
		    char *err, size_t errlen)
{
	struct cg_v2_layout l;

	if (cg_v2_prepare(name, &l, err, errlen) < 0)
		return -1;
	if ((size_t)snprintf(g->v2, sizeof g->v2, "%s/slot-%d", l.base, slot) >= sizeof g->v2) {
		snprintf(err, errlen, "cgroup path too long: %s", l.base);
		return -1;
	}
	if (access(g->v2, F_OK) == 0)
		cg_destroy(g); /* a stale slot from a supervisor that died */
	if (mk(g->v2, err, errlen) < 0)
		return -1;
	/* without memory.swap.max = 0, memory.max is no bound (the job swaps) */
	if (cg_write(g->v2, "memory.max", err, errlen, "%lld", mem) < 0 ||
	    cg_write(g->v2, "memory.swap.max", err, errlen, "0") < 0 ||
	    cg_write(g->v2, "pids.max", err, errlen, "%lld", pids) < 0)
		return -1;
	return 0;
}

static int setup_v1(struct cg *g, const char *name, int slot, long long mem, long long pids,
		    char *err, size_t errlen)
{
	static const char *const ctl[] = { "memory", "pids", "cpuacct", "freezer" };
	char *const dst[] = { g->mem, g->pids, g->cpu, g->freezer };

	for (int i = 0; i < 4; i++) {
		char parent[PATH_MAX - 64];
		snprintf(parent, sizeof parent, ROOT "/%s", ctl[i]);
		if (access(parent, W_OK) < 0) {
			if (i < 2) {
				snprintf(err, errlen, "%s: %s", parent, strerror(errno));
				return -1;
			}
			dst[i][0] = '\0'; /* optional: cpu usage and freezing */
			continue;
		}
		snprintf(parent, sizeof parent, ROOT "/%s/%s", ctl[i], name);
		if (mk(parent, err, errlen) < 0)
			return -1;
		snprintf(dst[i], PATH_MAX, "%s/slot-%d", parent, slot);
	}
	if (access(g->pids, F_OK) == 0)
		cg_destroy(g);
	for (int i = 0; i < 4; i++)
		if (dst[i][0] && mk(dst[i], err, errlen) < 0)
			return -1;
	if (cg_write(g->mem, "memory.limit_in_bytes", err, errlen, "%lld", mem) < 0)
		return -1;
	/* memsw exists only with swap accounting; memory+swap = memory means no swap. */
	cg_write(g->mem, "?memory.memsw.limit_in_bytes", NULL, 0, "%lld", mem);
	if (cg_write(g->pids, "pids.max", err, errlen, "%lld", pids) < 0)
		return -1;
	return 0;
}

int cg_setup(struct cg *g, const char *name, int slot, long long mem_bytes, long long pids,
	     char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	g->version = cg_detect();
	if (g->version == 2)
		return setup_v2(g, name, slot, mem_bytes, pids, err, errlen);
	if (g->version == 1)
		return setup_v1(g, name, slot, mem_bytes, pids, err, errlen);
	snprintf(err, errlen, "no writable cgroup v2 or v1 memory and pids controllers");
	return -1;
}

/* A prewarmed slot's limits, from the prewarm values (the operator's maxima) down to
 * the job's; v1's memory+swap must never be below memory, so memory goes first. */
int cg_set_limits(const struct cg *g, long long mem_bytes, long long pids, char *err,
		  size_t errlen)
{
	if (g->version == 2)
		return cg_write(g->v2, "memory.max", err, errlen, "%lld", mem_bytes) < 0 ||
		       cg_write(g->v2, "pids.max", err, errlen, "%lld", pids) < 0 ? -1 : 0;
	if (cg_write(g->mem, "memory.limit_in_bytes", err, errlen, "%lld", mem_bytes) < 0)
		return -1;
	cg_write(g->mem, "?memory.memsw.limit_in_bytes", NULL, 0, "%lld", mem_bytes);
	return cg_write(g->pids, "pids.max", err, errlen, "%lld", pids);
}

int cg_enter(const struct cg *g)
{
	const char *d[4];
	char pid[24];
	int n = dirs(g, d);

	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	for (int i = 0; i < n; i++)
		if (write_file(d[i], "cgroup.procs", pid) < 0)
			return -1;
	return 0;
}

void cg_read(const struct cg *g, struct cg_usage *u)
{
	memset(u, 0, sizeof *u);
	if (g->version == 2) {
		long long usec = read_key(g->v2, "cpu.stat", "usage_usec");
		u->cpu_ns = usec < 0 ? -1 : usec * 1000;
		u->mem_peak = read_ll(g->v2, "memory.peak");
		u->oom_kills = read_key(g->v2, "memory.events", "oom_kill");
		u->pids_denied = read_key(g->v2, "pids.events", "max");
	} else if (g->version == 1) {
		u->cpu_ns = g->cpu[0] ? read_ll(g->cpu, "cpuacct.usage") : -1;
		u->mem_peak = read_ll(g->mem, "memory.max_usage_in_bytes");
		u->oom_kills = read_key(g->mem, "memory.oom_control", "oom_kill");
		u->pids_denied = read_key(g->pids, "pids.events", "max");
	} else {
		u->cpu_ns = u->mem_peak = u->oom_kills = u->pids_denied = -1;
	}
}

/* The child is born in the slot: no window in which it runs (or forks) outside its
 * limits, and no cgroup.procs write after the fork. clone3 without glibc's fork
 * handlers: the caller is single-threaded and the child only execs (or fails). */
/* How the last cg_fork in this process placed its child (set in the parent). */
static const char *last_placement = "none";

const char *cg_placement(void)
{
	return last_placement;
}

pid_t cg_fork(const struct cg *g, int *placed)
{
	pid_t child;

	*placed = 0;
#ifdef CLONE_INTO_CGROUP
	if (g && g->version == 2) {
		int fd = open(g->v2, O_RDONLY | O_DIRECTORY | O_CLOEXEC), e;
		if (fd >= 0) {
			struct clone_args a = { .flags = CLONE_INTO_CGROUP,
						.exit_signal = SIGCHLD,
						.cgroup = (unsigned long long)fd };
			long pid = syscall(SYS_clone3, &a, sizeof a);
			if (pid == 0) {
				*placed = 1;
				return 0;
			}
			e = errno;
			close(fd);
			if (pid > 0) {
				*placed = 1;
				last_placement = "clone3";
				return (pid_t)pid;
			}
			/* ENOSYS (before Linux 5.7), E2BIG, EINVAL: the fallback below
			 * writes cgroup.procs in the child, and names what fails there. */
			errno = e;
		}
	}
#endif
	child = fork();
	if (child > 0)
		last_placement = g && g->version ? "procs" : "none";
	return child;
}
