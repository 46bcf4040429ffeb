/* The compiled-in sandbox profile (its mount table, /proc masks, namespace options,
 * environment and rlimits) and what is made from a profile's tables: the bwrap
 * arguments of a job or a session, a prewarmed job's environment, --print-profile and
 * its digest. Named profile files are read in profile_file.c, the host side (host path
 * checks, the synthesized /etc) is profile_host.c. */
#include "profile.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "joblimits.h"
#include "sbfd.h"
#include "scfilter.h"
#include "sha256.h"
#include "strbuf.h"
#include "util.h"

/* "@etc" is runner_state_dir/etc, "@ws" the job's workspace, "@home" its mount
 * point (PROF_WORKSPACE, an E2B session's PROF_E2B_HOME), "@tmp" a tmpfs of
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
	/* a named profile's read-only binds (none in "default"): before --remount-ro /,
	 * so bwrap can still make their mount points under /opt */
	{ "@extra", NULL, NULL },
	{ "--proc", NULL, "/proc" },
	{ "@masks", NULL, "/proc" },
	{ "--dev", NULL, "/dev" },
	/* bwrap's /dev is an unlimited tmpfs: shared memory gets a bounded one, and
	 * /dev itself is read-only (device nodes still work). */
	{ "--tmpfs", "@tmp", "/dev/shm" },
	{ "--remount-ro", NULL, "/dev" },
	{ "--tmpfs", "@tmp", "/tmp" },
	{ "--bind", "@ws", "@home" },
	{ "--remount-ro", NULL, "/" },
};

/* Host facts in a fresh /proc that container runtimes mask (runc's maskedPaths):
 * files get /dev/null bound read-only over them (opening one fails: bwrap mounts it
 * nodev), directories an empty read-only tmpfs. (bwrap itself already makes
 * /proc/sys, sysrq-trigger, irq and bus read-only.) Two more are a host fingerprint
 * that programs do read, so they stay readable files of the sandbox's own: the
 * kernel command line is a bare newline (a kernel booted with no arguments), boot_id
 * a fresh random UUID per sandbox (what systemd's tools and journal readers expect:
 * one UUID, the same on every read). /proc/cpuinfo, meminfo and loadavg stay as they
 * are: thread pools and build tools size themselves by them. A path the kernel lacks
 * is skipped, or bwrap would fail: the check is made on the host's procfs, which
 * shows the same kernel's entries as the job's and which no job can add to or remove
 * from; only ENOENT counts as absent. */
static const struct prof_mask masks[] = {
	{ "/proc/acpi", PROF_MASK_DIR, NULL },
	{ "/proc/asound", PROF_MASK_DIR, NULL },
	{ "/proc/scsi", PROF_MASK_DIR, NULL },
	{ "/proc/config.gz", PROF_MASK_FILE, NULL },
	{ "/proc/kcore", PROF_MASK_FILE, NULL },
	{ "/proc/keys", PROF_MASK_FILE, NULL },
	{ "/proc/key-users", PROF_MASK_FILE, NULL },
	{ "/proc/kallsyms", PROF_MASK_FILE, NULL },
	{ "/proc/latency_stats", PROF_MASK_FILE, NULL },
	{ "/proc/timer_list", PROF_MASK_FILE, NULL },
	{ "/proc/timer_stats", PROF_MASK_FILE, NULL },
	{ "/proc/sched_debug", PROF_MASK_FILE, NULL },
	{ "/proc/sysrq-trigger", PROF_MASK_FILE, NULL },
	{ "/proc/cmdline", PROF_MASK_DATA, "\n" },
	{ "/proc/sys/kernel/random/boot_id", PROF_MASK_DATA, PROF_MASK_UUID },
};

static const char *const ns_opts[] = { "--unshare-all", "--unshare-user", "--disable-userns",
				       "--die-with-parent", "--new-session", "--cap-drop",
				       "ALL", "--hostname", "sandbox", "--clearenv" };

static const char *const env_defaults[][2] = {
	{ "PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" },
	{ "HOME", "@home" },
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
	.name = PROF_DEFAULT, .ns_opts = ns_opts, .n_ns_opts = N(ns_opts), .uid = SANDBOX_UID,
	.mounts = mounts, .n_mounts = N(mounts), .masks = masks, .n_masks = N(masks),
	.env = env_defaults, .n_env = N(env_defaults), .rlimits = rlimits,
	.n_rlimits = N(rlimits), .seccomp = sc_rules, .extra = NULL, .n_extra = 0,
};

void prof_rlimit_value(const struct prof_rlimit *r, const long long *limits, int network,
		       rlim_t *soft, rlim_t *hard)
{
	long long base = r->lim < 0 ? 0 : limits[r->lim] << r->shift;
	long long net = network ? r->net_add : 0;

	*soft = (rlim_t)(base + r->soft_add + net);
	*hard = (rlim_t)(base + r->hard_add + net);
}

/* runner_env_passthrough, parsed: names only (values are read at job start). */
struct env_pass {
	char names[PROF_ENV_MAX][128];
	size_t n;
};

static int env_name_ok(const char *s)
{
	static const char first[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_";

	return *s != '\0' && strchr(first, *s) != NULL &&
	       strspn(s + 1, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_") ==
		       strlen(s + 1);
}

/* "LANG, TZ": white space around a name is ignored; an empty setting is no name. A
 * bad entry is named up to any '=' (a value typed there by mistake is not repeated). */
static int env_pass_parse(const struct cfg *cfg, struct env_pass *p, char *err, size_t errlen)
{
	const char *s = cfg->runner_env_passthrough;

	p->n = 0;
	if (s[strspn(s, " \t")] == '\0')
		return 0;
	for (;;) {
		const char *end = s + strcspn(s, ","), *a = s, *b = end;
		size_t len;

		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		len = (size_t)(b - a);
		if (p->n == PROF_ENV_MAX) {
			snprintf(err, errlen, "runner_env_passthrough: more than %d names", PROF_ENV_MAX);
			return -1;
		}
		if (len >= sizeof p->names[0])
			len = sizeof p->names[0] - 1;
		memcpy(p->names[p->n], a, len);
		p->names[p->n][len] = '\0';
		if (!env_name_ok(p->names[p->n])) {
			snprintf(err, errlen, "runner_env_passthrough: entry %zu '%.*s' is not a "
				 "variable name ([A-Za-z_][A-Za-z0-9_]*, comma-separated, names only)",
				 p->n + 1, (int)strcspn(p->names[p->n], "="), p->names[p->n]);
			return -1;
		}
		p->n++;
		if (*end == '\0')
			return 0;
		s = end + 1;
	}
}

static int env_passed(const struct env_pass *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->names[i], name) == 0)
			return 1;
	return 0;
}

int prof_check_env(const struct cfg *cfg, char *err, size_t errlen)
{
	struct env_pass p;

	return env_pass_parse(cfg, &p, err, errlen);
}

/* What build_args needs besides the tables and the job. */
struct prof_env {
	const struct env_pass *pass;
	int print; /* placeholders for the runner's values (--print-profile) */
	int e2b;   /* "@home" is PROF_E2B_HOME */
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

int prof_mask_present(const struct prof_mask *m)
{
	struct stat st;

	return !(lstat(m->path, &st) < 0 && errno == ENOENT);
}

long prof_mask_data(const struct prof_mask *m, char *buf, size_t n)
{
	unsigned char r[16];

	if (strcmp(m->data, PROF_MASK_UUID) != 0)
		return snprintf(buf, n, "%s", m->data);
	if (util_random(r, sizeof r) < 0)
		return -1;
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40); /* version 4 */
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	return snprintf(buf, n, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x"
			"%02x\n", r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
			r[11], r[12], r[13], r[14], r[15]);
}

/* A path the kernel lacks is skipped, or bwrap would fail (see masks). The k-th data
 * mask reads fd SB_FD_DATA + k, which the sandbox child fills (sandbox.c), present or
 * not, so the numbers never shift. */
static void add_masks(struct strbuf *a, const struct prof_tables *t)
{
	int k = 0;

	for (size_t i = 0; i < t->n_masks; i++) {
		const struct prof_mask *m = &t->masks[i];
		int fd = m->kind == PROF_MASK_DATA ? SB_FD_DATA + k++ : -1;

		if (!prof_mask_present(m))
			continue;
		if (m->kind == PROF_MASK_DIR) {
			arg(a, "--tmpfs"), arg(a, m->path), arg(a, "--remount-ro"), arg(a, m->path);
		} else if (m->kind == PROF_MASK_DATA) {
			arg(a, "--ro-bind-data"), arg_num(a, fd), arg(a, m->path);
		} else {
			arg(a, "--ro-bind"), arg(a, "/dev/null"), arg(a, m->path);
		}
	}
}

/* A session's agent (sandbox-agent), from a sealed memfd: a read-only file of the
 * sandbox's own tmpfs root, so no host path of the agent shows in the sandbox. It
 * goes before the root is made read-only. */
static void add_agent(struct strbuf *a, int agent_fd)
{
	arg(a, "--dir"), arg(a, PROF_AGENT_DIR);
	arg(a, "--perms"), arg(a, "0555");
	arg(a, "--ro-bind-data"), arg_num(a, agent_fd), arg(a, PROF_AGENT_PATH);
}

/* "@home" as the workspace's mount point; any other text as it is. */
static const char *home(const struct prof_env *e, const char *s)
{
	if (s == NULL || strcmp(s, "@home") != 0)
		return s;
	return e->e2b ? PROF_E2B_HOME : PROF_WORKSPACE;
}

static void add_mounts(struct strbuf *a, const struct cfg *cfg, const struct prof_tables *t,
		       const struct prof_job *j, const struct prof_env *e, int agent_fd)
{
	for (size_t i = 0; i < t->n_mounts; i++) {
		const struct prof_mount *m = &t->mounts[i];

		if (agent_fd >= 0 && strcmp(m->op, "--remount-ro") == 0 && strcmp(m->dst, "/") == 0)
			add_agent(a, agent_fd);
		if (strcmp(m->op, "@masks") == 0) {
			add_masks(a, t);
		} else if (strcmp(m->op, "@extra") == 0) {
			for (size_t k = 0; k < t->n_extra; k++)
				arg(a, t->extra[k].op), arg(a, t->extra[k].src), arg(a, t->extra[k].dst);
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
			arg(a, home(e, m->dst));
		}
	}
}

/* The profile's defaults, the runner's passed-through variables (later --setenv
 * wins in bwrap), then the job's own, minus passed-through names unless the operator
 * allows overriding them. */
static void add_env(struct strbuf *a, const struct cfg *cfg, const struct prof_tables *t,
		    const struct prof_job *j, const struct prof_env *e)
{
	const char *k;
	json_t *v;

	for (size_t i = 0; i < t->n_env; i++)
		arg(a, "--setenv"), arg(a, t->env[i][0]), arg(a, home(e, t->env[i][1]));
	for (size_t i = 0; i < e->pass->n; i++) {
		const char *name = e->pass->names[i], *val = e->print ? NULL : getenv(name);

		if (e->print) {
			arg(a, "--setenv"), arg(a, name);
			sb_addf(a, "<runner-env:%s>", name), sb_add(a, "", 1);
		} else if (val != NULL) {
			arg(a, "--setenv"), arg(a, name), arg(a, val);
		}
	}
	if (j->env)
		json_object_foreach((json_t *)j->env, k, v)
			if (cfg->runner_env_passthrough_override || !env_passed(e->pass, k))
				arg(a, "--setenv"), arg(a, k), arg(a, json_string_value(v));
}

/* The whole argument list for one job: 0, or -1 when memory ran out. */
static int build_args(struct strbuf *a, const struct cfg *cfg, const struct prof_tables *t,
		      const struct prof_job *j, const struct prof_env *e, int agent_fd)
{
	for (size_t i = 0; i < t->n_ns_opts; i++)
		arg(a, t->ns_opts[i]);
	arg(a, "--uid"), arg_num(a, t->uid), arg(a, "--gid"), arg_num(a, t->uid);
	add_mounts(a, cfg, t, j, e, agent_fd);
	if (j->block_fd >= 0)
		/* network job: the command waits until slirp4netns has configured tap0
		 * (its /etc/resolv.conf comes from prof_write_etc) */
		arg(a, "--block-fd"), arg_num(a, j->block_fd);
	add_env(a, cfg, t, j, e);
	arg(a, "--chdir");
	sb_addf(a, "%s%s%s", home(e, "@home"), *j->cwd ? "/" : "", j->cwd);
	sb_add(a, "", 1);
	arg(a, "--seccomp"), arg_num(a, j->seccomp_fd);
	arg(a, "--json-status-fd"), arg_num(a, j->status_fd);
	return a->failed ? -1 : 0;
}

/* The arguments of a job (agent_fd -1) or a session (the agent's fd) into a memfd. */
static int write_args(const struct cfg *cfg, const struct prof_tables *t, const struct prof_job *j,
		      int agent_fd, int e2b, char *err, size_t errlen)
{
	struct strbuf a = STRBUF_INIT;
	struct env_pass pass;
	const struct prof_env e = { &pass, 0, e2b };
	int fd, rc;

	if (env_pass_parse(cfg, &pass, err, errlen) < 0)
		return -1;
	fd = memfd_create("sandbox-args", MFD_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	/* The job's env and the passed-through values travel in this memfd, never on a
	 * command line: values are secrets and /proc/PID/cmdline is world-readable. */
	rc = build_args(&a, cfg, t, j, &e, agent_fd);
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

/* The environment bwrap gives the command: --clearenv, then each --setenv in order,
 * a later one replacing an earlier value in place (setenv(3) in bwrap's own
 * environment, which its execvp passes on). */
int prof_job_env(const struct cfg *cfg, const struct prof_tables *t, const struct json_t *env,
		 struct strbuf *out, char *err, size_t errlen)
{
	struct strbuf a = STRBUF_INIT;
	struct env_pass pass;
	const struct prof_env e = { &pass, 0, 0 };
	const struct prof_job j = { "", "", 0, env, -1, -1, -1 };
	const char **name = NULL, **val = NULL;
	size_t n = 0, cap = 0;
	int count = -1;

	if (env_pass_parse(cfg, &pass, err, errlen) < 0)
		return -1;
	add_env(&a, cfg, t, &j, &e);
	for (const char *p = a.buf; !a.failed && p < a.buf + a.len;) {
		const char *k = p + strlen(p) + 1, *v = k + strlen(k) + 1;
		size_t i;

		p = v + strlen(v) + 1; /* "--setenv" NAME VALUE */
		for (i = 0; i < n && strcmp(name[i], k) != 0; i++)
			;
		if (i == n && n == cap) {
			size_t c = cap ? cap * 2 : 32;
			const char **nn = reallocarray(name, c, sizeof *nn), **nv;
			if (nn == NULL)
				goto out;
			name = nn;
			if ((nv = reallocarray(val, c, sizeof *nv)) == NULL)
				goto out;
			val = nv;
			cap = c;
		}
		name[i] = k, val[i] = v;
		n += i == n;
	}
	for (size_t i = 0; i < n; i++)
		sb_addf(out, "%s=%s", name[i], val[i]), sb_add(out, "", 1);
	if (!a.failed && !out->failed)
		count = (int)n;
out:
	if (count < 0)
		snprintf(err, errlen, "building the environment: out of memory");
	explicit_bzero(a.buf, a.len); /* env values */
	sb_release(&a);
	free(name);
	free(val);
	return count;
}

int prof_job_args(const struct cfg *cfg, const struct prof_tables *t, const struct prof_job *j,
		  char *err, size_t errlen)
{
	return write_args(cfg, t, j, -1, 0, err, errlen);
}

int prof_session_args(const struct cfg *cfg, const struct prof_tables *t,
		      const struct prof_job *j, int agent_fd, int e2b, char *err, size_t errlen)
{
	if (agent_fd < 0) {
		snprintf(err, errlen, "no agent fd");
		return -1;
	}
	return write_args(cfg, t, j, agent_fd, e2b, err, errlen);
}

int prof_bwrap_args(const struct cfg *cfg, const char *workspace, const char *cwd,
		    long long tmp_mb, const json_t *env, int seccomp_fd, int status_fd,
		    int block_fd, char *err, size_t errlen)
{
	const struct prof_job j = { workspace, cwd, tmp_mb, env, seccomp_fd, status_fd,
				    block_fd };

	return prof_job_args(cfg, &prof_default, &j, err, errlen);
}

static void print_masks(FILE *f, const struct prof_tables *t)
{
	for (size_t k = 0; k < t->n_masks; k++) {
		const struct prof_mask *m = &t->masks[k];

		fprintf(f, "mask %s: ", m->path);
		if (m->kind == PROF_MASK_DIR)
			fprintf(f, "--tmpfs, --remount-ro");
		else if (m->kind == PROF_MASK_FILE)
			fprintf(f, "--ro-bind /dev/null");
		else if (strcmp(m->data, PROF_MASK_UUID) == 0)
			fprintf(f, "--ro-bind-data <a fresh random UUID per sandbox, then a newline>");
		else
			fprintf(f, "--ro-bind-data <%zu bytes%s>", strlen(m->data),
				strcmp(m->data, "\n") == 0 ? ": a newline" : "");
		fprintf(f, " (skipped where the kernel lacks it)\n");
	}
	fprintf(f, "not masked: /proc/cpuinfo, /proc/meminfo, /proc/loadavg (programs size"
		   " themselves by them)\n");
}

static void print_mounts(FILE *f, const struct cfg *cfg, const struct prof_tables *t)
{
	for (size_t i = 0; i < t->n_mounts; i++) {
		const struct prof_mount *m = &t->mounts[i];
		const char *src = m->src;

		if (strcmp(m->op, "@masks") == 0)
			print_masks(f, t);
		else if (strcmp(m->op, "@extra") == 0)
			for (size_t k = 0; k < t->n_extra; k++)
				fprintf(f, "mount %s %s %s (profile %s)\n", t->extra[k].op,
					t->extra[k].src, t->extra[k].dst, t->name);
		else if (src && strcmp(src, "@etc") == 0)
			fprintf(f, "mount %s <tmpfs sandbox-etc over %s/etc: synthesized files, "
				   "read-only> %s\n", m->op, cfg->runner_state_dir, m->dst);
		else if (src && strcmp(src, "@tmp") == 0)
			fprintf(f, "mount %s size=%lldMiB %s\n", m->op, cfg->runner_tmp_mb, m->dst);
		else if (src && strcmp(src, "@ws") == 0)
			fprintf(f, "mount %s <workspace: tmpfs of disk_mb> %s\n", m->op,
				strcmp(m->dst, "@home") == 0 ? PROF_WORKSPACE " (an E2B session: "
				PROF_E2B_HOME " instead, no " PROF_WORKSPACE ")" : m->dst);
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

/* The arguments a job gets, with its own parts and the runner's environment values
 * as placeholders. */
static void print_args(FILE *f, const struct cfg *cfg, const struct prof_tables *t,
		       const struct env_pass *pass, int network, int e2b)
{
	const struct prof_job j = { "<workspace>", "", cfg->runner_tmp_mb, NULL, SB_FD_SECCOMP,
				    SB_FD_STATUS, network ? SB_FD_BLOCK : -1 };
	const struct prof_env e = { pass, 1, e2b };
	struct strbuf a = STRBUF_INIT;

	fprintf(f, "bwrap-args%s%s (cwd \"\", no job env):", network ? " network" : "",
		e2b ? " e2b-session" : "");
	if (build_args(&a, cfg, t, &j, &e, -1) < 0)
		fprintf(f, " <out of memory>");
	for (size_t off = 0; off < a.len; off += strlen(a.buf + off) + 1)
		fprintf(f, " %s", a.buf + off);
	fprintf(f, "\n");
	sb_release(&a);
}

/* Names only: the values are the runner's, read at job start, and never printed. */
static void print_env(FILE *f, const struct cfg *cfg, const struct prof_tables *t,
		      const struct env_pass *pass)
{
	for (size_t i = 0; i < t->n_env; i++)
		fprintf(f, "env %s=%s%s\n", t->env[i][0],
			strcmp(t->env[i][1], "@home") == 0 ? PROF_WORKSPACE : t->env[i][1],
			strcmp(t->env[i][1], "@home") == 0 ? " (an E2B session: " PROF_E2B_HOME ")"
							    : "");
	for (size_t i = 0; i < pass->n; i++)
		fprintf(f, "env-passthrough %s (the runner's value at job start, if set; never "
			   "printed or logged)\n", pass->names[i]);
	fprintf(f, "env-passthrough-override %s\n",
		cfg->runner_env_passthrough_override
			? "1 (a job's env may set a passed-through name)"
			: "0 (a job's env may not set a passed-through name: the API refuses it)");
	fprintf(f, "env + the job's validated variables ([A-Za-z_][A-Za-z0-9_]*)\n");
}

void prof_print_tables(FILE *f, const struct cfg *cfg, const struct prof_tables *t)
{
	struct env_pass pass;
	char err[256];

	if (env_pass_parse(cfg, &pass, err, sizeof err) < 0) {
		fprintf(f, "INVALID %s\n", err); /* the runner refuses to start with it */
		pass.n = 0;
	}
	fprintf(f, "# sandbox profile %s (%s)\n", t->name,
		t->n_extra ? "compiled in + read-only binds of its file" : "compiled in");
	fprintf(f, "profile %s\n", t->name);
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
		cfg->slirp4netns_path, prof_net_resolv);
	print_mounts(f, cfg, t);
	print_env(f, cfg, t, &pass);
	fprintf(f, "process: setsid, rlimits (below), setresgid, setgroups(0), setresuid, "
		   "PR_SET_NO_NEW_PRIVS, fds closed\n");
	print_rlimits(f, t);
	sc_print(f, t->seccomp);
	fprintf(f, "limits mode: %s; cgroup name: %s\n", cfg->runner_limits_mode,
		cfg->runner_cgroup_name);
	for (int i = 0; i < LIM_COUNT; i++)
		fprintf(f, "limit %s default %lld max %lld\n", limit_specs[i].name,
			cfg->limit_default[i], cfg->limit_max[i]);
	print_args(f, cfg, t, &pass, 0, 0);
	print_args(f, cfg, t, &pass, 1, 0);
	print_args(f, cfg, t, &pass, 0, 1);
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
