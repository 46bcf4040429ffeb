/*
 * sandbox-runner: runs queued jobs in bubblewrap.
 *
 * Theory of operation. The dispatcher (daemon, or --once for cron) polls MariaDB
 * every runner_poll_ms, or sooner when the API's datagram on runner_wake_socket says
 * a job or session was committed (wake.h; the daemon only),
 * recovers jobs whose lease expired (-> lost), and for every free slot claims the
 * oldest queued job with a conditional UPDATE (atomic across runners and hosts).
 * A slot is a flock()ed file under runner_state_dir/slots; slot N also owns host
 * uid runner_uid_base+N, workspace work/slot-N and cgroup <name>/slot-N, so stale
 * leftovers of a dead supervisor are cleaned when the slot is next used.
 *
 * Each claimed job gets a supervisor: a double-forked, setsid'd process holding the
 * slot lock, with its own DB connection: a pre-forked spare (spare.c: forked from the
 * dispatcher, connected, waiting on a socketpair for the job and the lock fd), or,
 * when none is ready or in --once mode, a fresh exec of this binary (--supervise). It
 * mounts a size-limited tmpfs workspace, writes the inputs without following
 * links, sets up the cgroup, builds the seccomp BPF and the bwrap arguments in
 * memfds, and forks a child that joins the cgroup, sets rlimits, drops to the
 * slot's uid (never root), sets no_new_privs and execs bwrap. The supervisor
 * pumps stdin/stdout/stderr, enforces wall clock, output caps, pids/cpu/memory,
 * renews the lease and checks cancellation every 500 ms, then kills whatever is
 * left, collects artifacts (openat2, no symlinks), unmounts and stores the result
 * in one transaction, retrying until the database takes it.
 *
 * Sessions (docs/SESSIONS.md) use slots CFG_SESSION_SLOT_BASE + N (N below
 * runner_max_sessions), with the same lock files, uids, workspaces and cgroups. The
 * dispatcher claims `starting` sessions (conditional UPDATE of runner_id), marks
 * expired session leases lost, fails sessions no host took in time, heartbeats
 * runner_hosts, and at start marks this host's sessions whose slot lock is free
 * (no supervisor: a reboot, a crash) lost and cleans every free session slot. Each
 * claimed session gets a supervisor (--supervise-session ID, session.c), launched
 * like a job's and holding the slot lock for the session's life. It builds the
 * sandbox once: bwrap (as the slot uid) runs the agent (runner_agent_path, copied
 * into a sealed memfd and bound read-only at /.sandbox/agent) with a socketpair as
 * its stdin and stdout and a pipe as its stderr. The supervisor polls that socket,
 * the pipe, a pidfd of bwrap and the session's request rows; it spawns, feeds,
 * signals and reaps commands through the agent (every frame validated), stores
 * their output in chunks as it arrives, renews the lease every 2 s, and ends the
 * session (closed, expired, failed) with a cleanup and one transaction.
 *
 * Runtimes (rtprobe.h): the dispatcher lends a free job slot to a detached probe
 * that checks which runtimes of runner_runtimes_file this host's sandbox provides
 * and replaces the host's runner_runtimes rows: a daemon at start and every 3
 * minutes, a --once run only when those rows are 3 minutes old or the file's
 * content changed since the last probe here (rtp_due), so cron runs stay cheap and
 * still claim jobs while the probe runs.
 */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "check.h"
#include "dispatch.h"
#include "log.h"
#include "policy.h"
#include "profile.h"
#include "session.h"
#include "spare.h"
#include "supervise.h"
#include "title.h"
#include "util.h"
#include "wake.h"

static volatile sig_atomic_t stop_flag;

static void on_term(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "sandbox-runner: %s\n", msg);
	log_kv("fatal", "startup", "error", msg, (char *)NULL);
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: sandbox-runner [--config FILE] [--once [--max-seconds N]]\n"
			"       sandbox-runner [--config FILE] --print-profile [NAME]\n"
			"       sandbox-runner [--config FILE] --check [--json]\n"
			"       (internal) --supervise JOB | --supervise-session SESSION --slot N"
			" --runner-id R --lock-fd FD\n");
	exit(2);
}

struct args {
	const char *config, *job, *session, *runner_id, *profile;
	int once, print, check, json, slot, lockfd;
	long long max_seconds;
};

static void parse(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "once", no_argument, NULL, 'o' },
		{ "max-seconds", required_argument, NULL, 'm' },
		{ "print-profile", optional_argument, NULL, 'p' },
		{ "check", no_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "supervise", required_argument, NULL, 's' },
		{ "supervise-session", required_argument, NULL, 'S' },
		{ "slot", required_argument, NULL, 'n' },
		{ "runner-id", required_argument, NULL, 'r' },
		{ "lock-fd", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 }
	};
	long long v;
	int c;

	memset(a, 0, sizeof *a);
	a->config = "/etc/sandbox/sandbox.conf";
	a->max_seconds = 50;
	a->slot = -1;
	a->lockfd = -1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': a->config = optarg; break;
		case 'o': a->once = 1; break;
		case 'p': a->print = 1, a->profile = optarg; break;
		case 'k': a->check = 1; break;
		case 'j': a->json = 1; break;
		case 's': a->job = optarg; break;
		case 'S': a->session = optarg; break;
		case 'r': a->runner_id = optarg; break;
		case 'm':
			if (util_parse_ll(optarg, 1, 86400, &a->max_seconds) < 0)
				die("--max-seconds must be 1..86400");
			break;
		case 'n':
			/* job slots 0..255, session slots from CFG_SESSION_SLOT_BASE */
			if (util_parse_ll(optarg, 0, CFG_SESSION_SLOT_BASE + 10000, &v) < 0 ||
			    (v > 255 && v < CFG_SESSION_SLOT_BASE))
				die("--slot must be 0..255 or %d..%d", CFG_SESSION_SLOT_BASE,
				    CFG_SESSION_SLOT_BASE + 10000);
			a->slot = (int)v;
			break;
		case 'l':
			if (util_parse_ll(optarg, 3, 65535, &v) < 0)
				die("--lock-fd must be 3..65535");
			a->lockfd = (int)v;
			break;
		default: usage();
		}
	}
	/* --print-profile NAME as well as --print-profile=NAME */
	if (a->print && a->profile == NULL && optind + 1 == argc)
		a->profile = argv[optind++];
	if (optind != argc || (a->json && !a->check))
		usage();
}

/* --print-profile [NAME]: the profile as the runner would use it, and its digest;
 * exit 2 when the runner would refuse it. */
static int print_profile(const struct cfg *cfg, const char *name)
{
	struct prof_named *p = malloc(sizeof *p);
	char digest[PROFILE_DIGEST_LEN], err[1024];

	if (p == NULL)
		die("out of memory");
	if (prof_check_env(cfg, err, sizeof err) < 0 ||
	    prof_load(cfg, name ? name : PROF_DEFAULT, p, err, sizeof err) < 0 ||
	    prof_digest_tables(cfg, &p->t, digest) < 0) {
		fprintf(stderr, "sandbox-runner: --print-profile: %s\n", err);
		free(p);
		return 2;
	}
	prof_print_tables(stdout, cfg, &p->t);
	printf("digest %s\n", digest);
	free(p);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a;
	struct cfg cfg;
	struct sigaction sa;
	char err[512];

	title_init(argv);
	parse(argc, argv, &a);
	log_init(a.job ? "sandbox-supervisor" : a.session ? "sandbox-session" : "sandbox-runner");
	if (cfg_load(&cfg, a.config, err, sizeof err) < 0)
		die("config: %s", err);
	if (a.print)
		return print_profile(&cfg, a.profile);
	if (a.check)
		return runner_check(&cfg, a.json ? CHECK_JSON : CHECK_TEXT);
	if (geteuid() != 0)
		die("must run as root: it mounts workspaces, manages cgroups and drops each "
		    "job to an unprivileged uid (bwrap itself never runs as root)");
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	umask(022);
	if (a.job) {
		if (a.slot < 0 || a.runner_id == NULL || !util_is_uuid(a.job) || a.lockfd < 0)
			usage();
		/* A supervisor ignores the dispatcher's signals: the job outlives it. */
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		int rc = supervise_main(&cfg, a.job, a.slot, a.runner_id);
		/* the slot is free once its lock is: tell an idle dispatcher of this host
		 * (wake.h) rather than leave the next queued job to its next poll */
		close(a.lockfd);
		wake_send(cfg.runner_wake_socket);
		return rc;
	}
	if (a.session) {
		if (a.slot < CFG_SESSION_SLOT_BASE || a.runner_id == NULL ||
		    !util_is_uuid(a.session) || a.lockfd < 0 || a.job)
			usage();
		/* like a job's supervisor: the session outlives the dispatcher */
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		return session_main(&cfg, a.session, a.slot, a.runner_id);
	}
	/* The preflight (sandbox-runner --check) before anything is claimed: a missing
	 * piece is named in the log and no job is taken. */
	if (runner_check(&cfg, CHECK_LOG) != 0) {
		log_kv("error", "runner_refused", "reason",
		       "a preflight item failed (see the preflight lines above, or run"
		       " sandbox-runner --check)",
		       (char *)NULL);
		return 2;
	}
	if (prof_prepare_etc(&cfg, err, sizeof err) < 0)
		die("refusing to start: %s", err);
	/* Slot uids are killed wholesale (kill(-1) as that uid): none may be a real
	 * account's. */
	for (long long i = 0; i < cfg.runner_slots; i++) {
		struct passwd *pw = getpwuid((uid_t)(cfg.runner_uid_base + i));
		if (pw != NULL)
			die("refusing to start: slot uid %lld belongs to user %s (set runner_uid_base "
			    "to an unused range)", cfg.runner_uid_base + i, pw->pw_name);
	}
	if (prof_check_host(&cfg, err, sizeof err) < 0)
		die("refusing to start: %s", err);
	if (cfg.runner_command_policy[0]) {
		/* trusted like the runner's other host paths; each supervisor re-reads it */
		struct cmdpol pol;
		char rules[16];
		if (cmdpol_load(cfg.runner_command_policy, &pol, err, sizeof err) < 0)
			die("refusing to start: runner_command_policy %s: %s",
			    cfg.runner_command_policy, err);
		snprintf(rules, sizeof rules, "%zu", pol.n);
		log_kv("info", "command_policy", "path", cfg.runner_command_policy, "rules", rules,
		       (char *)NULL);
		cmdpol_free(&pol);
	}
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0 || (size_t)n >= sizeof self - 1)
		die("cannot resolve /proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	struct dispatch_opts o = { .config_path = a.config, .self_path = self, .once = a.once,
				   .max_seconds = a.max_seconds, .stop = &stop_flag };
	return dispatch_run(&cfg, &o);
}
