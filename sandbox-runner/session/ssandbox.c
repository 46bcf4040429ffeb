/* A session's sandbox: its start (the workspace and the session's files, the
 * cgroup, the agent in a sealed memfd, bwrap as the slot uid with the agent as its
 * command, the network; launch.c, as a job's sandbox starts) and the session's end
 * (the commands' output kept, everything killed and cleaned up, the end recorded
 * whatever the database does meanwhile). */
#include "sesint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "artname.h"
#include "jobstate.h"
#include "sports.h"
#include "log.h"
#include "net.h"
#include "pathrules.h"
#include "retry.h"
#include "sandbox.h"
#include "scfilter.h"
#include "workspace.h"

/* ---- start */

/* Workspace (tmpfs of disk_mb) and the session's files, by fd. */
int ses_prepare_workspace(struct ses *s)
{
	char err[512];
	struct db_res *files;

	if (launch_workspace(&s->l, s->row.disk_mb) < 0)
		return -1;
	files = ses_db_ready(s) == 0 ? ss_files(s->db, s->id) : NULL;
	if (files == NULL)
		return ses_start_fail(s, STAGE_INPUT_FILES, "reading the session's files failed", "database");
	for (size_t i = 0; i < db_res_rows(files); i++) {
		const char *path = db_res_s(files, i, "path");
		if (path == NULL || pr_job_path(s->cfg, path) != NULL ||
		    ws_write_file(s->l.wsfd, path, (const unsigned char *)db_res_s(files, i, "content"),
				  db_res_l(files, i, "content"), db_res_i(files, i, "executable", 0) != 0,
				  s->l.uid, err, sizeof err) < 0) {
			db_res_free(files);
			return ses_start_fail(s, STAGE_INPUT_FILES, "writing the session's files failed",
					  path && pr_job_path(s->cfg, path) ? "invalid path" : err);
		}
	}
	db_res_free(files);
	return 0;
}

int ses_prepare_limits(struct ses *s)
{
	if (strcmp(s->cfg->runner_limits_mode, "rlimit-only") == 0)
		return 0;
	return launch_cgroup(&s->l, s->row.memory_mb << 20, s->row.pids,
			     "resource limits could not be applied");
}

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* What a network session needs from this host, checked as for a network job
 * (supervise.c's policy_check): 0, or the session ends failed at stage create
 * naming what is missing. */
int ses_net_available(struct ses *s)
{
	static const char *const why = "network access is not available on this runner";
	struct stat st;
	char err[CFG_PATH_MAX + 64];
	int trc;

	if (access(s->cfg->slirp4netns_path, X_OK) != 0) {
		snprintf(err, sizeof err, "slirp4netns_path %s: %s", s->cfg->slirp4netns_path,
			 strerror(errno));
		ses_end(s, "failed", "%s (no slirp4netns)", why);
	} else if (access(IP_PATH, X_OK) != 0) {
		snprintf(err, sizeof err, "%s: %s", IP_PATH, strerror(errno));
		ses_end(s, "failed", "%s (no %s)", why, IP_PATH);
	} else if ((trc = stat("/dev/net/tun", &st)) != 0 || !S_ISCHR(st.st_mode)) {
		snprintf(err, sizeof err, "/dev/net/tun: %s",
			 trc != 0 ? strerror(errno) : "not a character device");
		ses_end(s, "failed", "%s (no /dev/net/tun)", why);
	} else {
		return 0;
	}
	s->l.stage = STAGE_CREATE;
	s->l.instance_status = JS_INSTANCE_NOT_CREATED;
	snprintf(s->l.failure_error, sizeof s->l.failure_error, "%s", err);
	return -1;
}

/* Network sessions: bwrap is blocked before exec until slirp4netns has configured
 * tap0 in the sandbox's network namespace and the unreachable routes are in. */
static int net_setup(struct ses *s)
{
	if (launch_net_setup(&s->l, &s->statusfd, &s->l.blockfd) < 0)
		return -1;
	log_kv("info", "session_network", "session", s->id, "network",
	       "slirp4netns user-mode NAT (unprivileged, slot uid); host, private and link-local "
	       "addresses unreachable", (char *)NULL);
	return 0;
}

/* bwrap as the slot uid, the agent as its command on a socketpair (stdin and
 * stdout), its stderr on a pipe. */
int ses_start_sandbox(struct ses *s)
{
	char err[512];
	int sv[2] = { -1, -1 }, ep[2] = { -1, -1 }, st[2] = { -1, -1 }, bl[2] = { -1, -1 };
	int sc = -1, args = -1, agent;
	long long lim[LIM_COUNT] = { 0 };
	char *cmd[] = { (char *)PROF_AGENT_PATH, NULL };
	struct sb_spawn sp;
	int rc = -1;
	int *ours[] = { &sv[0], &sv[1], &ep[0], &ep[1], &st[0], &st[1], &sc, &args, &agent,
			&bl[0], &bl[1] };

	s->prof = malloc(sizeof *s->prof);
	if (s->prof == NULL || prof_load(s->cfg, s->row.profile, s->prof, err, sizeof err) < 0)
		return ses_start_fail(s, STAGE_COMMAND_START, "the session's sandbox profile is not available on this runner host",
				  s->prof ? err : "out of memory");
	if ((agent = agent_memfd(s->cfg, err, sizeof err)) < 0)
		return ses_start_fail(s, STAGE_COMMAND_START, "the sandbox agent could not be loaded", err);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(ep, O_CLOEXEC) < 0 ||
	    pipe2(st, O_CLOEXEC) < 0 || (s->row.network && pipe2(bl, O_CLOEXEC) < 0)) {
		ses_start_fail(s, STAGE_COMMAND_START, "sandbox setup failed", strerror(errno));
		goto out;
	}
	if ((sc = sc_build_fd(err, sizeof err)) < 0) {
		ses_start_fail(s, STAGE_COMMAND_START, "seccomp filter could not be built", err);
		goto out;
	}
	const struct prof_job pj = { s->l.ws_path, "", s->cfg->runner_tmp_mb, s->row.env,
				     SB_FD_SECCOMP, SB_FD_STATUS,
				     s->row.network ? SB_FD_BLOCK : -1 };
	if ((args = prof_session_args(s->cfg, &s->prof->t, &pj, SB_FD_AGENT, s->e2b, err,
				      sizeof err)) < 0) {
		ses_start_fail(s, STAGE_COMMAND_START, "sandbox setup failed", err);
		goto out;
	}
	lim[LIM_WALL_SECONDS] = s->row.max_seconds, lim[LIM_CPU_SECONDS] = s->row.cpu_seconds;
	lim[LIM_MEMORY_MB] = s->row.memory_mb, lim[LIM_PIDS] = s->row.pids;
	lim[LIM_DISK_MB] = s->row.disk_mb;
	launch_sb(&s->l, NULL, lim, cmd, &sp);
	sp.args_fd = args, sp.seccomp_fd = sc, sp.status_fd = st[1];
	sp.stdin_fd = sv[1], sp.stdout_fd = sv[1], sp.stderr_fd = ep[1], sp.block_fd = bl[0];
	sp.has_agent = 1, sp.agent_fd = agent;
	s->t0 = util_mono_ms();
	s->l.pid = launch_spawn(&s->l, &sp, 1, err, sizeof err);
	if (s->l.pid > 0) {
		s->ag = sv[0], sv[0] = -1;
		s->errfd = ep[0], ep[0] = -1;
		s->statusfd = st[0], st[0] = -1;
		/* kept open until tap0 is up: bwrap would go on at its EOF */
		s->l.blockfd = bl[1], bl[1] = -1;
		nonblock(s->ag), nonblock(s->errfd), nonblock(s->statusfd);
		s->pidfd = (int)syscall(SYS_pidfd_open, s->l.pid, 0);
		rc = 0;
	}
out:
	for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
		launch_close_fd(ours[i]);
	if (rc == 0 && s->row.network) {
		/* our end of the sandbox's pipes is closed: only bwrap holds them */
		rc = net_setup(s);
		s->t0 = util_mono_ms(); /* the agent's 10 s start when it may run */
	}
	return rc;
}

/* ---- the end */

/* The end must not be lost to a DB outage: retried until stored or no longer ours
 * (the dispatcher marks a session whose lease lapsed lost). */
static void record_end(struct ses *s)
{
	json_t *fail = launch_failure_json(&s->l);
	struct ss_end e = { s->end_status, s->end_reason, fail, s->l.cleanup_status };

	for (int attempt = 1; s->ours; attempt++) {
		int rc = ses_db_ready(s) < 0 ? -1 : ss_finish(s->db, s->id, s->runner_id, &e);
		if (rc == 0)
			break;
		if (rc == 1) {
			log_kv("warn", "session_end_discarded", "session", s->id, "reason",
			       "session no longer owned by this runner", (char *)NULL);
			break;
		}
		ses_log_attempt(s, "session_end", attempt, 0, "db", 1);
		ses_db_error_seen(s, "session_end");
		util_sleep_ms(retry_delay_ms(100, 5000, attempt));
	}
	json_decref(fail);
}

static void log_end(struct ses *s)
{
	char esc[STDERR_KEEP * 4 + 8];

	if (s->errlen) {
		an_escape(esc, sizeof esc, s->errtail); /* the agent's words: untrusted */
		log_kv("info", "agent_stderr", "session", s->id, "text", esc, (char *)NULL);
	}
	log_kv("info", "session_ended", "session", s->id, "status", s->end_status, "reason",
	       s->end_reason, "cleanup", s->l.cleanup_status, (char *)NULL);
}

/* The session's ports (sports.h): the helper, once the sandbox runs; a failure costs
 * the ports only (nginx then answers 502), never the session. */
void ses_ports_start(struct ses *s)
{
	char err[300];
	pid_t child = launch_child_pid(&s->l, &s->statusfd);

	s->ports = sp_session_start(s->cfg, s->id, child, s->l.uid, s->ports_sock,
				    sizeof s->ports_sock, err, sizeof err);
	if (s->ports < 0) {
		log_kv("warn", "session_ports", "session", s->id, "error", err, (char *)NULL);
		s->ports = 0;
	}
}

void ses_end_session(struct ses *s)
{
	sp_stop(s->ports, s->ports_sock);
	s->ports = 0;
	if (s->ag >= 0 && s->ours)
		ses_flush_all(s, 1); /* what the commands wrote before the end is kept */
	launch_close_fd(&s->ag);
	launch_close_fd(&s->errfd);
	launch_close_fd(&s->statusfd);
	launch_close_fd(&s->pidfd);
	launch_cleanup(&s->l);
	if (s->ours)
		ses_save_host_work(s);
	record_end(s);
	log_end(s);
}
