#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "joblimits.h"
#include "sandbox.h"
#include "scfilter.h"
#include "sha256.h"
#include "strbuf.h"

/* "@etc" is runner_state_dir/etc, "@ws" the job's workspace, "@tmp" a tmpfs of
 * runner_tmp_mb. Nothing else from the host is visible: no /home, /root, /var,
 * /run, /sys, no DB socket, no runner config. "@etc" is bound from a fresh tmpfs
 * that sb_spawn mounts over it in the child's own mount namespace (prof_write_etc):
 * a bind from the host's disk would show its host path in /proc/self/mountinfo. */
static const struct prof_mount mounts[] = {
	{ "--ro-bind", "/usr", "/usr" },
	{ "--symlink", "usr/bin", "/bin" },
	{ "--symlink", "usr/sbin", "/sbin" },
	{ "--symlink", "usr/lib", "/lib" },
	{ "--symlink", "usr/lib64", "/lib64" },
	{ "--ro-bind", "@etc", "/etc" },
	/* the symlinks behind /usr/bin/awk, editor, ... (root-owned, read-only) */
	{ "--ro-bind", "/etc/alternatives", "/etc/alternatives" },
	{ "--proc", NULL, "/proc" },
	{ "@masks", NULL, "/proc" },
	{ "--dev", NULL, "/dev" },
	/* bwrap's /dev is an unlimited tmpfs: shared memory gets a bounded one, and
	 * /dev itself is read-only (device nodes still work). */
	{ "--tmpfs", "@tmp", "/dev/shm" },
	{ "--remount-ro", NULL, "/dev" },
	{ "--tmpfs", "@tmp", "/tmp" },
	{ "--bind", "@ws", "/workspace" },
	{ "--remount-ro", NULL, "/" },
};

/* Host facts in a fresh /proc that container runtimes mask (runc's maskedPaths):
 * files get /dev/null bound read-only over them, directories an empty read-only
 * tmpfs. (bwrap itself already makes /proc/sys, sysrq-trigger, irq and bus
 * read-only.) A path the kernel lacks is skipped, or bwrap would fail: the check is
 * made on the host's procfs, which shows the same kernel's entries as the job's
 * and which no job can add to or remove from; only ENOENT counts as absent. */
static const struct prof_mask masks[] = {
	{ "/proc/acpi", 1 },         { "/proc/asound", 1 },       { "/proc/scsi", 1 },
	{ "/proc/config.gz", 0 },    { "/proc/kcore", 0 },        { "/proc/keys", 0 },
	{ "/proc/key-users", 0 },    { "/proc/kallsyms", 0 },     { "/proc/latency_stats", 0 },
	{ "/proc/timer_list", 0 },   { "/proc/timer_stats", 0 },  { "/proc/sched_debug", 0 },
	{ "/proc/sysrq-trigger", 0 },
};

static const char *const ns_opts[] = { "--unshare-all", "--unshare-user", "--disable-userns",
				       "--die-with-parent", "--new-session", "--cap-drop",
				       "ALL", "--hostname", "sandbox", "--clearenv" };

static const char *const env_defaults[][2] = {
	{ "PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" },
	{ "HOME", "/workspace" },
	{ "TMPDIR", "/tmp" },
	{ "LANG", "C.UTF-8" },
	{ "USER", "sandbox" },
	{ "LOGNAME", "sandbox" },
	{ "SHELL", "/bin/sh" },
};

/* SIGXCPU at the cpu limit, SIGKILL one second later. NPROC is per uid, and the uid
 * is the slot's own: bwrap's two helpers + the job (+2 for a network job:
 * slirp4netns runs as the slot uid too). Without a memory cgroup, address space is
 * the only memory bound. */
static const struct prof_rlimit rlimits[] = {
	{ RLIMIT_CPU, "cpu", LIM_CPU_SECONDS, 0, 0, 1, 0, 0 },
	{ RLIMIT_FSIZE, "fsize", LIM_DISK_MB, 20, 0, 0, 0, 0 },
	{ RLIMIT_NOFILE, "nofile", -1, 0, 1024, 1024, 0, 0 },
	{ RLIMIT_CORE, "core", -1, 0, 0, 0, 0, 0 },
	{ RLIMIT_NPROC, "nproc", LIM_PIDS, 0, 4, 4, 2, 1 },
	{ RLIMIT_AS, "as", LIM_MEMORY_MB, 20, 0, 0, 0, 1 },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

const struct prof_tables prof_default = {
	ns_opts, N(ns_opts), SANDBOX_UID, mounts, N(mounts), masks, N(masks),
	env_defaults, N(env_defaults), rlimits, N(rlimits), sc_rules,
};

void prof_rlimit_value(const struct prof_rlimit *r, const long long *limits, int network,
		       rlim_t *soft, rlim_t *hard)
{
	long long base = r->lim < 0 ? 0 : limits[r->lim] << r->shift;
	long long net = network ? r->net_add : 0;

	*soft = (rlim_t)(base + r->soft_add + net);
	*hard = (rlim_t)(base + r->hard_add + net);
}

static const char *const etc_files[][2] = {
	{ "passwd", "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
		    "sandbox:x:1000:1000:sandbox:/workspace:/bin/sh\n"
		    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" },
	{ "group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n" },
	{ "hosts", "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost\n" },
	{ "nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n" },
	/* "alternatives" is a directory, created by prof_prepare_etc (mount point) */
	{ "resolv.conf", "# no network by default\n" },
	{ "hostname", "sandbox\n" },
};

/* A network job's /etc/resolv.conf: slirp4netns forwards 10.0.2.3 to the host's
 * resolver. */
static const char net_resolv[] = "nameserver 10.0.2.3\n";

static int check_path(const char *p, int want_dir, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(p, &st) < 0) {
		snprintf(err, errlen, "profile path %s: %s", p, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, errlen, "profile path %s is a symbolic link", p);
		return -1;
	}
	if ((want_dir && !S_ISDIR(st.st_mode)) || (!want_dir && !S_ISREG(st.st_mode))) {
		snprintf(err, errlen, "profile path %s has the wrong type", p);
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & 022) != 0) {
		snprintf(err, errlen, "profile path %s must be owned by root and not group or "
				      "world writable", p);
		return -1;
	}
	return 0;
}

int prof_check_host(const struct cfg *cfg, char *err, size_t errlen)
{
	char etc[CFG_PATH_MAX + 8];

	snprintf(etc, sizeof etc, "%s/etc", cfg->runner_state_dir);
	if (check_path("/usr", 1, err, errlen) < 0 || check_path("/usr/bin", 1, err, errlen) < 0 ||
	    check_path("/etc/alternatives", 1, err, errlen) < 0 ||
	    check_path("/usr/lib", 1, err, errlen) < 0 ||
	    check_path(cfg->runner_state_dir, 1, err, errlen) < 0 ||
	    check_path(etc, 1, err, errlen) < 0 || check_path(cfg->bwrap_path, 0, err, errlen) < 0)
		return -1;
	static const char *const subdirs[] = { "etc-net", "slots", "work" };
	for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
		snprintf(etc, sizeof etc, "%s/%s", cfg->runner_state_dir, subdirs[i]);
		if (check_path(etc, 1, err, errlen) < 0)
			return -1;
	}
	snprintf(etc, sizeof etc, "%s/etc", cfg->runner_state_dir);
	for (size_t i = 0; i < sizeof etc_files / sizeof etc_files[0]; i++) {
		char p[CFG_PATH_MAX + 64];
		snprintf(p, sizeof p, "%s/%s", etc, etc_files[i][0]);
		if (check_path(p, 0, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* A root-owned directory, not a link, writable by root only: created if missing,
 * opened without following links. The state directory is trusted with mounts and
 * with the sandbox's /etc: anything else there must stop the runner. */
static int safe_dir(int parent, const char *path, mode_t mode, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkdirat(parent, path, mode) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	fd = openat(parent, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 errno == ELOOP || errno == ENOTDIR ? "is a symbolic link or not a directory"
							    : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022) != 0) {
		snprintf(err, errlen, "%s must be owned by root and not group or world writable",
			 path);
		close(fd);
		return -1;
	}
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode) < 0) {
		snprintf(err, errlen, "chmod %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Replaces dir/name atomically unless it already holds data; never follows a link,
 * and a private temporary name lets several runners start at once. */
static int write_etc(int dir, const char *name, const char *data, char *err, size_t errlen)
{
	char tmp[96], cur[512];
	size_t n = strlen(data);
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t r = read(fd, cur, sizeof cur);
		struct stat st;
		int same = r == (ssize_t)n && memcmp(cur, data, n) == 0 && fstat(fd, &st) == 0 &&
			   S_ISREG(st.st_mode) && st.st_uid == 0 && (st.st_mode & 07777) == 0644;
		close(fd);
		if (same)
			return 0;
	}
	snprintf(tmp, sizeof tmp, ".%s.%ld.tmp", name, (long)getpid());
	unlinkat(dir, tmp, 0);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "write %s: %s", name, strerror(errno));
		return -1;
	}
	if (write(fd, data, n) != (ssize_t)n || fchmod(fd, 0644) < 0) {
		snprintf(err, errlen, "write %s: %s", name, strerror(errno));
		close(fd);
		unlinkat(dir, tmp, 0);
		return -1;
	}
	if (close(fd) < 0 || renameat(dir, tmp, dir, name) < 0) {
		snprintf(err, errlen, "write %s: %s", name, strerror(errno));
		unlinkat(dir, tmp, 0);
		return -1;
	}
	return 0;
}

int prof_prepare_etc(const struct cfg *cfg, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		mode_t mode;
	} subdirs[] = { { "etc", 0755 }, { "etc-net", 0755 }, { "slots", 0711 }, { "work", 0711 } };
	int state, fds[4] = { -1, -1, -1, -1 }, rc = -1;

	state = safe_dir(AT_FDCWD, cfg->runner_state_dir, 0711, err, errlen);
	if (state < 0)
		return -1;
	for (int i = 0; i < 4; i++)
		if ((fds[i] = safe_dir(state, subdirs[i].name, subdirs[i].mode, err, errlen)) < 0)
			goto out;
	if (mkdirat(fds[0], "alternatives", 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir etc/alternatives: %s", strerror(errno));
		goto out;
	}
	/* etc is the mount point of each sandbox's private /etc (sandbox.c), etc-net
	 * that of slirp4netns's private root (net.c); the files here are what a bare
	 * bwrap would see (tests/bench). */
	for (size_t i = 0; i < sizeof etc_files / sizeof etc_files[0]; i++)
		if (write_etc(fds[0], etc_files[i][0], etc_files[i][1], err, errlen) < 0)
			goto out;
	rc = 0;
out:
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(state);
	return rc;
}

/* One job's side of the bwrap arguments. */
struct prof_job {
	const char *workspace, *cwd;
	long long tmp_mb;
	const json_t *env; /* NULL: none */
	int seccomp_fd, status_fd, block_fd;
};

/* Arguments are NUL-terminated strings back to back, as bwrap's --args reads them. */
static void arg(struct strbuf *a, const char *s)
{
	sb_add(a, s, strlen(s) + 1);
}

static void arg_num(struct strbuf *a, long long v)
{
	sb_addf(a, "%lld", v);
	sb_add(a, "", 1);
}

/* A path the kernel lacks is skipped, or bwrap would fail (see masks). */
static void add_masks(struct strbuf *a, const struct prof_tables *t)
{
	for (size_t i = 0; i < t->n_masks; i++) {
		struct stat st;
		const char *p = t->masks[i].path;

		if (lstat(p, &st) < 0 && errno == ENOENT)
			continue;
		if (t->masks[i].dir) {
			arg(a, "--tmpfs"), arg(a, p), arg(a, "--remount-ro"), arg(a, p);
		} else {
			arg(a, "--ro-bind"), arg(a, "/dev/null"), arg(a, p);
		}
	}
}

static void add_mounts(struct strbuf *a, const struct cfg *cfg, const struct prof_tables *t,
		       const struct prof_job *j)
{
	for (size_t i = 0; i < t->n_mounts; i++) {
		const struct prof_mount *m = &t->mounts[i];

		if (strcmp(m->op, "@masks") == 0) {
			add_masks(a, t);
		} else if (m->src && strcmp(m->src, "@tmp") == 0) {
			arg(a, "--size"), arg_num(a, j->tmp_mb * 1024 * 1024);
			arg(a, m->op), arg(a, m->dst);
		} else {
			arg(a, m->op);
			if (m->src && strcmp(m->src, "@etc") == 0)
				sb_addf(a, "%s/etc", cfg->runner_state_dir), sb_add(a, "", 1);
			else if (m->src && strcmp(m->src, "@ws") == 0)
				arg(a, j->workspace);
			else if (m->src)
				arg(a, m->src);
			arg(a, m->dst);
		}
	}
}

/* The whole argument list for one job: 0, or -1 when memory ran out. */
static int build_args(struct strbuf *a, const struct cfg *cfg, const struct prof_tables *t,
		      const struct prof_job *j)
{
	const char *k;
	json_t *v;

	for (size_t i = 0; i < t->n_ns_opts; i++)
		arg(a, t->ns_opts[i]);
	arg(a, "--uid"), arg_num(a, t->uid), arg(a, "--gid"), arg_num(a, t->uid);
	add_mounts(a, cfg, t, j);
	if (j->block_fd >= 0)
		/* network job: the command waits until slirp4netns has configured tap0
		 * (its /etc/resolv.conf comes from prof_write_etc) */
		arg(a, "--block-fd"), arg_num(a, j->block_fd);
	for (size_t i = 0; i < t->n_env; i++)
		arg(a, "--setenv"), arg(a, t->env[i][0]), arg(a, t->env[i][1]);
	if (j->env)
		json_object_foreach((json_t *)j->env, k, v)
			arg(a, "--setenv"), arg(a, k), arg(a, json_string_value(v));
	arg(a, "--chdir");
	sb_addf(a, "/workspace%s%s", *j->cwd ? "/" : "", j->cwd);
	sb_add(a, "", 1);
	arg(a, "--seccomp"), arg_num(a, j->seccomp_fd);
	arg(a, "--json-status-fd"), arg_num(a, j->status_fd);
	return a->failed ? -1 : 0;
}

int prof_bwrap_args(const struct cfg *cfg, const char *workspace, const char *cwd,
		    long long tmp_mb, const json_t *env, int seccomp_fd, int status_fd,
		    int block_fd, char *err, size_t errlen)
{
	const struct prof_job j = { workspace, cwd, tmp_mb, env, seccomp_fd, status_fd,
				    block_fd };
	struct strbuf a = STRBUF_INIT;
	int fd = memfd_create("sandbox-args", MFD_CLOEXEC), rc;

	if (fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	/* The job's env travels in this memfd, never on a command line: values are
	 * secrets and /proc/PID/cmdline is world-readable. */
	rc = build_args(&a, cfg, &prof_default, &j);
	if (rc == 0 && write(fd, a.buf, a.len) != (ssize_t)a.len)
		rc = -1;
	explicit_bzero(a.buf, a.len); /* env values */
	sb_release(&a);
	if (rc != 0 || lseek(fd, 0, SEEK_SET) < 0) {
		snprintf(err, errlen, "writing bwrap arguments: %s",
			 rc != 0 && errno == 0 ? "out of memory" : strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void print_mounts(FILE *f, const struct cfg *cfg, const struct prof_tables *t)
{
	for (size_t i = 0; i < t->n_mounts; i++) {
		const struct prof_mount *m = &t->mounts[i];
		const char *src = m->src;

		if (strcmp(m->op, "@masks") == 0)
			for (size_t k = 0; k < t->n_masks; k++)
				fprintf(f, "mask %s: %s (skipped where the kernel lacks it)\n",
					t->masks[k].path,
					t->masks[k].dir ? "--tmpfs, --remount-ro" : "--ro-bind /dev/null");
		else if (src && strcmp(src, "@etc") == 0)
			fprintf(f, "mount %s <tmpfs sandbox-etc over %s/etc: synthesized files, "
				   "read-only> %s\n", m->op, cfg->runner_state_dir, m->dst);
		else if (src && strcmp(src, "@tmp") == 0)
			fprintf(f, "mount %s size=%lldMiB %s\n", m->op, cfg->runner_tmp_mb, m->dst);
		else if (src && strcmp(src, "@ws") == 0)
			fprintf(f, "mount %s <workspace: tmpfs of disk_mb> %s\n", m->op, m->dst);
		else
			fprintf(f, "mount %s %s%s%s\n", m->op, src ? src : "", src ? " " : "",
				m->dst);
	}
}

static void print_rlimits(FILE *f, const struct prof_tables *t)
{
	for (size_t i = 0; i < t->n_rlimits; i++) {
		const struct prof_rlimit *r = &t->rlimits[i];
		const char *lim = r->lim >= 0 ? limit_specs[r->lim].name : "0";

		fprintf(f, "rlimit %s soft (%s << %u) + %lld hard (%s << %u) + %lld, network + "
			   "%lld%s\n", r->name, lim, r->shift, r->soft_add, lim, r->shift,
			r->hard_add, r->net_add, r->only_without_cgroup ? " (rlimit-only mode)" : "");
	}
}

/* The arguments a job gets, with its own parts as placeholders. */
static void print_args(FILE *f, const struct cfg *cfg, const struct prof_tables *t,
		       int network)
{
	const struct prof_job j = { "<workspace>", "", cfg->runner_tmp_mb, NULL, SB_FD_SECCOMP,
				    SB_FD_STATUS, network ? SB_FD_BLOCK : -1 };
	struct strbuf a = STRBUF_INIT;

	fprintf(f, "bwrap-args%s (cwd \"\", no job env):", network ? " network" : "");
	if (build_args(&a, cfg, t, &j) < 0)
		fprintf(f, " <out of memory>");
	for (size_t off = 0; off < a.len; off += strlen(a.buf + off) + 1)
		fprintf(f, " %s", a.buf + off);
	fprintf(f, "\n");
	sb_release(&a);
}

void prof_print_tables(FILE *f, const struct cfg *cfg, const struct prof_tables *t)
{
	fprintf(f, "# sandbox profile (compiled in)\n");
	fprintf(f, "runner uid: unprivileged per slot, host uid %lld + slot; in sandbox %d\n",
		cfg->runner_uid_base, t->uid);
	for (size_t i = 0; i < t->n_ns_opts; i++)
		fprintf(f, "namespace-option %s\n", t->ns_opts[i]);
	fprintf(f, "network: own empty network namespace (loopback only); never --share-net\n");
	fprintf(f, "network (key permits it, job asks): same namespace plus slirp4netns (%s) "
		   "--configure --disable-host-loopback --enable-seccomp --userns-path "
		   "--netns-type=path, run as the slot uid with no capability, no_new_privs, in "
		   "a private read-only root (/usr, /etc/resolv.conf, its own /dev/net/tun, the "
		   "job's namespace files); routes in the job's namespace make private, "
		   "link-local and the host's own addresses unreachable; /etc/resolv.conf: %s",
		cfg->slirp4netns_path, net_resolv);
	print_mounts(f, cfg, t);
	for (size_t i = 0; i < t->n_env; i++)
		fprintf(f, "env %s=%s\n", t->env[i][0], t->env[i][1]);
	fprintf(f, "env + the job's validated variables ([A-Za-z_][A-Za-z0-9_]*)\n");
	fprintf(f, "process: setsid, rlimits (below), setresgid, setgroups(0), setresuid, "
		   "PR_SET_NO_NEW_PRIVS, fds closed\n");
	print_rlimits(f, t);
	sc_print(f, t->seccomp);
	fprintf(f, "limits mode: %s; cgroup name: %s\n", cfg->runner_limits_mode,
		cfg->runner_cgroup_name);
	for (int i = 0; i < LIM_COUNT; i++)
		fprintf(f, "limit %s default %lld max %lld\n", limit_specs[i].name,
			cfg->limit_default[i], cfg->limit_max[i]);
	print_args(f, cfg, t, 0);
	print_args(f, cfg, t, 1);
}

void prof_print(FILE *f, const struct cfg *cfg)
{
	prof_print_tables(f, cfg, &prof_default);
}

int prof_digest_tables(const struct cfg *cfg, const struct prof_tables *t,
		       char out[PROFILE_DIGEST_LEN])
{
	char *buf = NULL, hex[65];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return -1;
	prof_print_tables(f, cfg, t);
	if (fclose(f) != 0) {
		free(buf);
		return -1;
	}
	sha256_hex(buf, len, hex);
	free(buf);
	snprintf(out, PROFILE_DIGEST_LEN, "sha256:%s", hex);
	return 0;
}

int prof_digest(const struct cfg *cfg, char out[PROFILE_DIGEST_LEN])
{
	return prof_digest_tables(cfg, &prof_default, out);
}

/* Plain writes into the fresh tmpfs of the child's own mount namespace: nothing else
 * is in it, so no link to avoid and no atomic replace needed. */
static int write_new(int dir, const char *name, const char *data)
{
	size_t n = strlen(data);
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	if (write(fd, data, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

int prof_write_etc(int dir, int network)
{
	if (mkdirat(dir, "alternatives", 0755) < 0)
		return -1;
	for (size_t i = 0; i < sizeof etc_files / sizeof etc_files[0]; i++) {
		const char *data = etc_files[i][1];
		if (network && strcmp(etc_files[i][0], "resolv.conf") == 0)
			data = net_resolv;
		if (write_new(dir, etc_files[i][0], data) < 0)
			return -1;
	}
	return 0;
}
