#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static int setup_v2(struct cg *g, const char *name, int slot, long long mem, long long pids,
		    char *err, size_t errlen)
{
	char parent[PATH_MAX - 64];

	snprintf(parent, sizeof parent, ROOT "/%s", name);
	snprintf(g->v2, sizeof g->v2, "%s/slot-%d", parent, slot);
	if (mk(parent, err, errlen) < 0)
		return -1;
	/* Without the controllers in the slot, memory.max and pids.max do not exist;
	 * without memory.swap.max = 0, memory.max is no bound (the job swaps). */
	if (cg_write(parent, "cgroup.subtree_control", err, errlen, "+memory +pids +cpu") < 0)
		return -1;
	if (access(g->v2, F_OK) == 0)
		cg_destroy(g); /* a stale slot from a supervisor that died */
	if (mk(g->v2, err, errlen) < 0)
		return -1;
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
