/* sandbox-runner --check: the preflight. One line per item, ok / warn / fail, with the
 * fix; `--json` for scripts. It runs what the runner will need, the way the runner
 * needs it (a user namespace made as a slot uid, a tmpfs mounted in a private mount
 * namespace, the seccomp filter built, the database asked for its packet size), so a
 * host that passes can run jobs and one that fails says which piece is missing.
 * isolate's isolate-check-environment is the anchor; this is more precise about
 * cgroup v2 delegation and about what the service stores. */
#include "check.h"
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db.h"
#include "jobdata.h"
#include "log.h"
#include "scfilter.h"
#include "strbuf.h"
#include "util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

enum level { L_OK, L_WARN, L_FAIL };
static const char *const level_names[] = { "ok", "warn", "fail" };

struct checker {
	json_t *items;
	int fails, warns;
	enum check_out out;
};

static void item(struct checker *c, const char *name, enum level lv, const char *fix,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void item(struct checker *c, const char *name, enum level lv, const char *fix,
		 const char *fmt, ...)
{
	char detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	c->fails += lv == L_FAIL;
	c->warns += lv == L_WARN;
	if (c->out == CHECK_LOG) {
		if (lv != L_OK)
			log_kv(lv == L_FAIL ? "error" : "warn", "preflight", "item", name, "status",
			       level_names[lv], "detail", detail, "fix", fix ? fix : "-",
			       (char *)NULL);
		return;
	}
	if (c->out == CHECK_JSON) {
		json_array_append_new(c->items,
				      json_pack("{s:s, s:s, s:s, s:s?}", "item", name, "status",
						level_names[lv], "detail", detail, "fix",
						lv == L_OK ? NULL : fix));
		return;
	}
	printf("%-4s  %-14s %s\n", level_names[lv], name, detail);
	if (lv != L_OK && fix)
		printf("      %-14s fix: %s\n", "", fix);
}

/* A one-value proc/sysfs file, without its trailing newlines. */
static int read_text(const char *path, char *buf, size_t n)
{
	long r = util_read_small(path, buf, n);

	if (r < 0)
		return -1;
	while (r > 0 && buf[r - 1] == '\n')
		buf[--r] = '\0';
	return 0;
}

static void check_root(struct checker *c)
{
	if (geteuid() == 0)
		item(c, "root", L_OK, NULL, "running as root (workspaces are mounted, cgroups"
					    " managed, each job dropped to its slot uid)");
	else
		item(c, "root", L_FAIL, "run sandbox-runner as root (systemd/sandbox-runner.service)",
		     "running as uid %u: the runner mounts workspaces and manages cgroups",
		     (unsigned)geteuid());
}

/* A root-owned, not group/world-writable regular file, and what it prints for
 * --version (argv only, no shell). */
static void check_binary(struct checker *c, const char *name, const char *path, int required)
{
	struct stat st;
	int pipefd[2];
	char out[128] = "";
	pid_t pid;

	if (stat(path, &st) < 0) {
		item(c, name, required ? L_FAIL : L_WARN,
		     required ? "apt-get install bubblewrap (or set bwrap_path)"
			      : "apt-get install slirp4netns (or set slirp4netns_path); until then"
				" jobs with network: true end error 125",
		     "%s: %s", path, strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) || !(st.st_mode & 0111)) {
		item(c, name, L_FAIL, "use a root-owned executable that only root can write",
		     "%s is not a root-owned executable file writable only by root (mode %04o,"
		     " uid %u)",
		     path, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		return;
	}
	if (pipe2(pipefd, O_CLOEXEC) == 0 && (pid = fork()) >= 0) {
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR);
			dup2(null, 0);
			dup2(pipefd[1], 1);
			dup2(null, 2);
			execl(path, path, "--version", (char *)NULL);
			_exit(127);
		}
		close(pipefd[1]);
		ssize_t r = read(pipefd[0], out, sizeof out - 1);
		out[r > 0 ? r : 0] = '\0';
		out[strcspn(out, "\n")] = '\0';
		close(pipefd[0]);
		waitpid(pid, NULL, 0);
	}
	item(c, name, L_OK, NULL, "%s (%s)", path, out[0] ? out : "version not reported");
}

/* A child that becomes the slot-0 uid and makes a user namespace, as bwrap will. */
static void check_userns(struct checker *c, const struct cfg *cfg)
{
	char v[32];
	pid_t pid;
	int status;

	if (read_text("/proc/sys/kernel/unprivileged_userns_clone", v, sizeof v) == 0 &&
	    strcmp(v, "0") == 0) {
		item(c, "userns", L_FAIL, "sysctl -w kernel.unprivileged_userns_clone=1",
		     "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone"
		     " = 0): bwrap runs as an unprivileged slot uid and needs them");
		return;
	}
	if (read_text("/proc/sys/user/max_user_namespaces", v, sizeof v) == 0 &&
	    strcmp(v, "0") == 0) {
		item(c, "userns", L_FAIL, "sysctl -w user.max_user_namespaces=15000",
		     "user.max_user_namespaces = 0");
		return;
	}
	pid = fork();
	if (pid == 0) {
		gid_t g = (gid_t)cfg->runner_uid_base;
		uid_t u = (uid_t)cfg->runner_uid_base;
		if (setgroups(0, NULL) < 0 || setresgid(g, g, g) < 0 || setresuid(u, u, u) < 0)
			_exit(2);
		_exit(unshare(CLONE_NEWUSER) < 0 ? 3 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
		item(c, "userns", L_FAIL, NULL, "could not run the probe: %s", strerror(errno));
		return;
	}
	if (WEXITSTATUS(status) == 0)
		item(c, "userns", L_OK, NULL,
		     "uid %lld (slot 0) can create a user namespace", cfg->runner_uid_base);
	else if (WEXITSTATUS(status) == 3)
		item(c, "userns", L_FAIL,
		     "allow unprivileged user namespaces (sysctl, AppArmor"
		     " kernel.apparmor_restrict_unprivileged_userns=0, container seccomp)",
		     "uid %lld could not create a user namespace", cfg->runner_uid_base);
	else
		item(c, "userns", L_FAIL, NULL, "could not drop to uid %lld", cfg->runner_uid_base);
}

/* v2: the real thing, not a guess: the layout the runner uses (cgroup.h) is made
 * here as it is at start-up, so a failure names the very write that failed. This
 * process moves into <own>/runner: run the check where the runner runs (the unit,
 * or systemd-run -p Delegate=yes), not from a login shell's scope. */
static void check_v2_delegation(struct checker *c, const struct cfg *cfg)
{
	struct cg_v2_layout l;
	char err[1024];
	const char *fix;

	if (cg_v2_prepare(cfg->runner_cgroup_name, &l, err, sizeof err) == 0) {
		if (c->out == CHECK_LOG) { /* the runner's start: where everything went */
			char w[16];
			snprintf(w, sizeof w, "%d", l.writes);
			log_kv("info", "cgroup_v2_layout", "own", l.own, "leaf", l.leaf, "slots",
			       l.base, "subtree_control_writes", w, (char *)NULL);
		}
		item(c, "cgroup", L_OK, NULL,
		     "cgroup v2: runner in %s, slots under %s, memory and pids enabled"
		     " (%d cgroup.subtree_control writes now)", l.leaf, l.base, l.writes);
		return;
	}
	switch (errno) {
	case EBUSY:
		fix = "start the runner in a cgroup of its own: the unit (Delegate=yes), or"
		      " systemd-run -p Delegate=yes --wait --pipe -- sandbox-runner --check;"
		      " in a container, move its other processes out of the namespace's root"
		      " cgroup into a leaf first";
		break;
	case ENOENT:
		fix = "under systemd: Delegate=yes in the unit (systemd/sandbox-runner.service);"
		      " by hand: enable +memory +pids in every cgroup.subtree_control from the"
		      " root down to the runner's cgroup";
		break;
	case EXDEV:
		fix = "mount cgroup2 on /sys/fs/cgroup inside the cgroup namespace";
		break;
	default:
		fix = "run as root with /sys/fs/cgroup writable, under systemd with Delegate=yes";
	}
	item(c, "cgroup", L_FAIL, fix, "cgroup v2: %s", err);
}

static void check_cgroups(struct checker *c, const struct cfg *cfg)
{
	struct statfs fs;
	char ctl[512], file[1200];

	if (strcmp(cfg->runner_limits_mode, "rlimit-only") == 0) {
		item(c, "cgroup", L_WARN,
		     "set runner_limits_mode = cgroup and run --check again",
		     "runner_limits_mode = rlimit-only: memory and pids are limited by rlimits"
		     " only (RLIMIT_AS, RLIMIT_NPROC), as every job's diagnostics say");
		return;
	}
	if (statfs("/sys/fs/cgroup", &fs) < 0) {
		item(c, "cgroup", L_FAIL, "mount cgroup2 on /sys/fs/cgroup",
		     "/sys/fs/cgroup: %s", strerror(errno));
		return;
	}
	if (fs.f_type == CGROUP2_SUPER_MAGIC) {
		if (read_text("/sys/fs/cgroup/cgroup.controllers", ctl, sizeof ctl) < 0) {
			item(c, "cgroup", L_FAIL, NULL, "cgroup v2, but cgroup.controllers is"
							" unreadable: %s", strerror(errno));
			return;
		}
		if ((!cg_has_word(ctl, "memory") || !cg_has_word(ctl, "pids")) &&
		    access("/sys/fs/cgroup/cgroup.type", F_OK) == 0) {
			/* only a non-root cgroup has cgroup.type: this is a cgroup
			 * namespace's root (a container), offered what its host delegates */
			item(c, "cgroup", L_FAIL,
			     "on the host: turn memory and pids on in the cgroup.subtree_control"
			     " of the container's parent cgroup (systemd: Delegate=yes on its unit)",
			     "cgroup v2 in a cgroup namespace whose root is offered \"%s\": memory"
			     " and pids are not delegated to it", ctl);
			return;
		}
		if (!cg_has_word(ctl, "memory") || !cg_has_word(ctl, "pids")) {
			item(c, "cgroup", L_FAIL,
			     "boot with the memory and pids controllers (not disabled by"
			     " cgroup_disable=), or set runner_limits_mode = rlimit-only",
			     "cgroup v2: the root offers \"%s\"; memory and pids are required", ctl);
			return;
		}
		check_v2_delegation(c, cfg);
		return;
	}
	/* v1 (or hybrid): separate hierarchies. */
	{
		static const char *const need[] = { "memory", "pids", "cpuacct", "freezer" };
		struct strbuf missing = STRBUF_INIT;

		for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
			snprintf(file, sizeof file, "/sys/fs/cgroup/%s", need[i]);
			if (access(file, W_OK) < 0)
				sb_addf(&missing, "%s%s", missing.len ? " " : "", need[i]);
		}
		if (missing.len) {
			item(c, "cgroup", L_FAIL,
			     "mount the cgroup v1 hierarchies, boot with the unified hierarchy, or"
			     " set runner_limits_mode = rlimit-only",
			     "cgroup v1: hierarchies missing or not writable: %s", missing.buf);
			sb_release(&missing);
			return;
		}
		sb_release(&missing);
		if (access("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes", F_OK) < 0)
			item(c, "cgroup", L_WARN, "boot with swapaccount=1",
			     "cgroup v1 (memory, pids, cpuacct, freezer); no swap accounting:"
			     " the memory limit does not cover swap");
		else
			item(c, "cgroup", L_OK, NULL,
			     "cgroup v1 (memory with swap accounting, pids, cpuacct, freezer)");
	}
}

/* Slot uids must be nobody's: the runner kills everything they run. */
static void check_slot_uids(struct checker *c, const struct cfg *cfg)
{
	for (long long i = 0; i < cfg->runner_slots; i++) {
		struct passwd *pw = getpwuid((uid_t)(cfg->runner_uid_base + i));
		if (pw != NULL) {
			item(c, "slot-uids", L_FAIL,
			     "set runner_uid_base to a range no account uses",
			     "uid %lld (slot %lld) belongs to the account '%s': the runner kills"
			     " every process of a slot uid",
			     cfg->runner_uid_base + i, i, pw->pw_name);
			return;
		}
	}
	item(c, "slot-uids", L_OK, NULL, "uids %lld..%lld (%lld slots) belong to no account",
	     cfg->runner_uid_base, cfg->runner_uid_base + cfg->runner_slots - 1,
	     cfg->runner_slots);
}

/* Session slots (CFG_SESSION_SLOT_BASE + N) are killed wholesale like job slots. */
static void check_session_uids(struct checker *c, const struct cfg *cfg)
{
	long long first = cfg->runner_uid_base + CFG_SESSION_SLOT_BASE;

	for (long long i = 0; i < cfg->runner_max_sessions; i++) {
		struct passwd *pw = getpwuid((uid_t)(first + i));
		if (pw != NULL) {
			item(c, "session-uids", L_FAIL,
			     "set runner_uid_base to a range no account uses (sessions use base+1000"
			     " .. base+1000+runner_max_sessions-1)",
			     "uid %lld (session slot %lld) belongs to the account '%s': the runner"
			     " kills every process of a slot uid",
			     first + i, CFG_SESSION_SLOT_BASE + i, pw->pw_name);
			return;
		}
	}
	item(c, "session-uids", L_OK, NULL, "uids %lld..%lld (%lld session slots) belong to no account",
	     first, first + cfg->runner_max_sessions - 1, cfg->runner_max_sessions);
}

/* The agent runs inside every session's sandbox: a file only root can change, and
 * a static ELF (the sandbox has no host libraries it could count on). */
static void check_agent(struct checker *c, const struct cfg *cfg)
{
	static const char fix[] = "build it: make (build/sandbox-agent) or set runner_agent_path";
	unsigned char hdr[4] = { 0 };
	struct stat st;
	int fd;

	if (cfg->runner_max_sessions == 0) {
		item(c, "session-agent", L_OK, NULL, "sessions disabled (runner_max_sessions = 0)");
		return;
	}
	fd = open(cfg->runner_agent_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		item(c, "session-agent", L_FAIL, fix, "%s: %s", cfg->runner_agent_path,
		     strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) || !(st.st_mode & 0100))
		item(c, "session-agent", L_FAIL, fix,
		     "%s must be a regular executable file owned by root, not group or world"
		     " writable", cfg->runner_agent_path);
	else if (read(fd, hdr, sizeof hdr) != (ssize_t)sizeof hdr || memcmp(hdr, "\177ELF", 4) != 0)
		item(c, "session-agent", L_FAIL, fix, "%s is not an ELF binary",
		     cfg->runner_agent_path);
	else
		item(c, "session-agent", L_OK, NULL, "%s (root-owned ELF, %lld bytes)",
		     cfg->runner_agent_path, (long long)st.st_size);
	close(fd);
}

/* The webhook delivery pass the dispatcher execs (runner_deliver_path): without it no
 * job's callback_url is ever called, though jobs run: a warning, not a refusal. */
static void check_deliver(struct checker *c, const struct cfg *cfg)
{
	static const char fix[] = "build it: make (build/sandbox-deliver) or set runner_deliver_path";
	struct stat st;

	if (stat(cfg->runner_deliver_path, &st) < 0)
		item(c, "webhooks", L_WARN, fix, "%s: %s (webhooks are not delivered)",
		     cfg->runner_deliver_path, strerror(errno));
	else if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) ||
		 !(st.st_mode & 0100))
		item(c, "webhooks", L_WARN, fix,
		     "%s must be a regular executable file owned by root, not group or world"
		     " writable", cfg->runner_deliver_path);
	else
		item(c, "webhooks", L_OK, NULL, "%s", cfg->runner_deliver_path);
}

static void check_state_dir(struct checker *c, const struct cfg *cfg)
{
	struct stat st;

	if (lstat(cfg->runner_state_dir, &st) < 0) {
		item(c, "state-dir", errno == ENOENT ? L_OK : L_FAIL, NULL, "%s: %s",
		     cfg->runner_state_dir,
		     errno == ENOENT ? "absent (created root-owned at start)" : strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		item(c, "state-dir", L_FAIL,
		     "make it a root-owned directory that only root can write (not a symlink)",
		     "%s is not a root-owned directory writable only by root (mode %04o, uid %u%s)",
		     cfg->runner_state_dir, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
		     S_ISLNK(st.st_mode) ? ", a symlink" : "");
	else
		item(c, "state-dir", L_OK, NULL, "%s", cfg->runner_state_dir);
}

/* A size-limited tmpfs in a private mount namespace, as every workspace is. */
static void check_tmpfs(struct checker *c)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(2);
		_exit(mount("sandbox-check", "/mnt", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0
			      ? 3
			      : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		item(c, "tmpfs", L_FAIL,
		     "run as root without a seccomp/MAC policy that forbids mount (CAP_SYS_ADMIN)",
		     "could not mount a size-limited tmpfs in a private mount namespace"
		     " (step %d)", pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	else
		item(c, "tmpfs", L_OK, NULL, "size-limited tmpfs in a private mount namespace");
}

static void check_seccomp(struct checker *c)
{
	char err[256], status[4096], *p, *end = NULL;
	int fd = sc_build_fd(err, sizeof err);
	long mode = 0;

	if (fd < 0) {
		item(c, "seccomp", L_FAIL, "apt-get install libseccomp2", "the job filter could not"
									 " be built: %s", err);
		return;
	}
	close(fd);
	if (util_read_small("/proc/self/status", status, sizeof status) < 0)
		status[0] = '\0';
	p = strstr(status, "\nSeccomp:");
	if (p)
		mode = strtol(p + 9, &end, 10);
	if (p && end != p + 9 && mode != 0)
		item(c, "seccomp", L_WARN,
		     "remove RestrictNamespaces=/SystemCallFilter= for unshare/clone/mount from the"
		     " runner's unit",
		     "the job filter builds, but the runner itself runs under a seccomp filter"
		     " (mode %ld): if it denies namespaces or mount, bwrap cannot start",
		     mode);
	else
		item(c, "seccomp", L_OK, NULL, "the job filter builds (libseccomp); the runner is"
					      " not itself filtered");
}

/* A Galera cluster (systemd/README.md "Several hosts"): the node this process reached,
 * the cluster's size, whether it is Primary, and this connection's wsrep_sync_wait
 * (db_sync_wait). A single server says so. */
static void check_cluster(struct checker *c, struct db *db)
{
	struct db_res *r = db_querya(db, "SELECT @@wsrep_on, @@session.wsrep_sync_wait", NULL, 0);
	const char *size = NULL, *status = NULL, *state = NULL, *ready = NULL;
	long long sync;

	if (r == NULL || db_res_rows(r) == 0 || db_res_int(r, 0, 0, 0) != 1) {
		db_res_free(r);
		item(c, "db-cluster", L_OK, NULL, "a single server (no Galera)");
		return;
	}
	sync = db_res_int(r, 0, 1, 0);
	db_res_free(r);
	r = db_querya(db, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_size',"
			  " 'wsrep_cluster_status', 'wsrep_local_state_comment', 'wsrep_ready')",
		      NULL, 0);
	for (size_t i = 0; r != NULL && i < db_res_rows(r); i++) {
		const char *k = db_res_str(r, i, 0), *v = db_res_str(r, i, 1);
		if (k == NULL || v == NULL)
			continue;
		if (strcmp(k, "wsrep_cluster_size") == 0)
			size = v;
		else if (strcmp(k, "wsrep_cluster_status") == 0)
			status = v;
		else if (strcmp(k, "wsrep_local_state_comment") == 0)
			state = v;
		else if (strcmp(k, "wsrep_ready") == 0)
			ready = v;
	}
	if (status != NULL && strcmp(status, "Primary") == 0 && ready != NULL &&
	    strcmp(ready, "ON") == 0)
		item(c, "db-cluster", L_OK, NULL,
		     "Galera: this node %s, cluster size %s, Primary; wsrep_sync_wait %lld"
		     " (db_sync_wait)", state ? state : "?", size ? size : "?", sync);
	else
		item(c, "db-cluster", L_FAIL, "the node is outside the Primary component: list the"
		     " other nodes in db_hosts (systemd/README.md \"Several hosts\")",
		     "Galera: this node %s, cluster size %s, status %s, ready %s",
		     state ? state : "?", size ? size : "?", status ? status : "?",
		     ready ? ready : "?");
	db_res_free(r);
}

static void check_database(struct checker *c, const struct cfg *cfg)
{
	char err[512];
	struct db *db = db_open(cfg, err, sizeof err);
	struct db_res *r;
	long long have, need;

	if (db == NULL) {
		/* At the runner's start an outage is waited out (the dispatcher retries);
		 * --check reports it as a failure. */
		item(c, "database", c->out == CHECK_LOG ? L_WARN : L_FAIL,
		     "check db_socket / db_host, db_user and db_password_file in the config",
		     "cannot connect: %s%s", err,
		     c->out == CHECK_LOG ? " (the runner keeps retrying)" : "");
		return;
	}
	r = db_querya(db, "SELECT VERSION(), @@max_allowed_packet, (SELECT COUNT(*) FROM"
			  " schema_migrations WHERE version = '003_tenancy.sql')", NULL, 0);
	if (r == NULL) {
		item(c, "database", L_FAIL, "sandboxctl --config FILE migrate",
		     "connected, but: %s", db_error(db));
		db_close(db);
		return;
	}
	have = db_res_int(r, 0, 1, 0);
	need = (cfg->max_files_bytes > JD_CHUNK_BYTES ? cfg->max_files_bytes : JD_CHUNK_BYTES) +
	       JD_PACKET_OVERHEAD;
	item(c, "database", L_OK, NULL, "MariaDB %s reachable", db_res_str(r, 0, 0));
	if (have < need)
		item(c, "db-packet", L_FAIL,
		     "raise max_allowed_packet on the server, or lower max_files_bytes",
		     "max_allowed_packet %lld < %lld needed (one 1 MiB output chunk, one input of"
		     " max_files_bytes %lld, and the statement around it)",
		     have, need, cfg->max_files_bytes);
	else
		item(c, "db-packet", L_OK, NULL, "max_allowed_packet %lld >= %lld needed", have,
		     need);
	if (db_res_int(r, 0, 2, 0) != 1)
		item(c, "db-schema", L_FAIL, "sandboxctl --config FILE migrate",
		     "migration 003_tenancy.sql is not applied");
	else
		item(c, "db-schema", L_OK, NULL, "migrations applied");
	db_res_free(r);
	check_cluster(c, db);
	db_close(db);
}

int runner_check(const struct cfg *cfg, enum check_out out)
{
	struct checker c = { .out = out, .items = out == CHECK_JSON ? json_array() : NULL };

	check_root(&c);
	check_binary(&c, "bwrap", cfg->bwrap_path, 1);
	check_userns(&c, cfg);
	check_cgroups(&c, cfg);
	/* At start-up the runner refuses these itself, naming them ("refusing to start:
	 * ..."), before it touches the state directory. */
	if (out != CHECK_LOG) {
		check_slot_uids(&c, cfg);
		check_state_dir(&c, cfg);
	}
	check_tmpfs(&c);
	check_seccomp(&c);
	check_binary(&c, "slirp4netns", cfg->slirp4netns_path, 0);
	check_session_uids(&c, cfg);
	check_agent(&c, cfg);
	check_deliver(&c, cfg);
	/* At start-up the dispatcher checks the database itself (it waits out an outage
	 * and refuses a too small max_allowed_packet, naming it). */
	if (out != CHECK_LOG)
		check_database(&c, cfg);
	if (out == CHECK_JSON) {
		json_t *o = json_pack("{s:o, s:i, s:i, s:b}", "items", c.items, "fail", c.fails,
				      "warn", c.warns, "ok", c.fails == 0);
		char *s = json_dumps(o, JSON_COMPACT);
		printf("%s\n", s ? s : "{}");
		free(s);
		json_decref(o);
	} else if (out == CHECK_TEXT) {
		printf("%s: %d failed, %d warnings\n", c.fails ? "FAIL" : "OK", c.fails, c.warns);
	}
	return c.fails ? 1 : 0;
}
