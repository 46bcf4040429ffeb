/* The dispatcher (see dispatch.h). */
#include "dispatch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "jobdata.h"
#include "log.h"
#include "profile.h"
#include "rtprobe.h"
#include "sstore.h"
#include "store.h"
#include "util.h"
#include "wake.h"
#include "workspace.h"
#include "cgroup.h"
#include "sandbox.h"
#include "reclaim.h"
#include "spare.h"
#include "warm.h"

#define RECOVER_EVERY_MS 1000
#define HOST_BEAT_MS 5000
#define DELIVER_EVERY_MS 500
#define DELIVER_STOP_MS 3000    /* a pass still running at the dispatcher's exit: TERM, then KILL */
#define DELIVER_FINISH_MS 45000 /* ... at the end of a --once run: first let it finish */

struct disp {
	const struct cfg *cfg;
	const struct dispatch_opts *o;
	struct db *db;
	char digest[PROFILE_DIGEST_LEN];
	char host[64];
	char (*launched)[UUID_STR_LEN];
	size_t nlaunched, caplaunched;
	int drained; /* the last claim found the queue empty */
	int packet_ok; /* max_allowed_packet was checked against what we store */
	pid_t deliverer; /* the running webhook pass (callback.c), 0: none */
	double next_deliver;
	int wakefd; /* runner_wake_socket (wake.h), -1: polling only */
	int wake_warned; /* wake_socket_unavailable was logged */
	struct spare_pool spares; /* pre-forked supervisors (daemon only) */
	struct warm_pool warm;    /* prewarmed sandboxes (daemon only) */
	int cg_refused;           /* moved out of its cgroup and could not go back: no claims */
	int probe_wanted;         /* the runtimes probe found every slot taken */
	double probe_stand_down;  /* no holder asked to stand down for it before */
};

/* Unlike util_sleep_ms, a signal ends the wait: SIGTERM sets *o->stop and the loop
 * looks at it at once instead of after up to a second. */
static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int db_ready(struct disp *d)
{
	char err[256];

	if (d->db)
		return 0;
	d->db = db_open(d->cfg, err, sizeof err);
	if (d->db == NULL) {
		log_kv("warn", "db_connect", "error", err, "retry", "yes", (char *)NULL);
		return -1;
	}
	return 0;
}

/* Every row the service writes is bounded: output and artifacts go in chunks of
 * JD_CHUNK_BYTES, inputs are bounded by max_files_bytes. A server whose
 * max_allowed_packet cannot carry them would refuse results: refuse to start instead,
 * naming the setting. 1 ok, 0 refused, -1 DB error. */
static int packet_check(struct disp *d)
{
	struct db_res *res = db_querya(d->db, "SELECT @@max_allowed_packet", NULL, 0);
	long long have, need = d->cfg->max_files_bytes > JD_CHUNK_BYTES ? d->cfg->max_files_bytes
									  : JD_CHUNK_BYTES;
	char h[24], n[24];

	if (res == NULL)
		return -1;
	have = db_res_int(res, 0, 0, 0);
	db_res_free(res);
	need += JD_PACKET_OVERHEAD;
	if (have >= need)
		return 1;
	snprintf(h, sizeof h, "%lld", have);
	snprintf(n, sizeof n, "%lld", need);
	log_kv("error", "config_refused", "setting", "max_allowed_packet", "server_value", h,
	       "needed", n, "reason",
	       "the MariaDB server's max_allowed_packet cannot carry one output chunk or one"
	       " job input of max_files_bytes; raise it on the server or lower max_files_bytes",
	       (char *)NULL);
	return 0;
}

static void db_failed(struct disp *d, const char *step)
{
	log_kv("warn", "db_error", "step", step, "error", db_error(d->db), "retry", "yes",
	       (char *)NULL);
	if (db_gone(d->db)) {
		db_close(d->db);
		d->db = NULL;
	}
}

/* A slot is a lock file held by the supervisor running in it, so the slot count
 * is host-wide however many dispatchers run. -1 when busy. */
static int take_slot(const struct cfg *cfg, int slot)
{
	char path[CFG_PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof path, "%s/slots/%d.lock", cfg->runner_state_dir, slot);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The runtimes probe (rtprobe.h) in the first free job slot: 0 started, -1 none free
 * (tried again soon). */
static int probe_runtimes(struct disp *d)
{
	for (int slot = 0; slot < d->cfg->runner_slots; slot++) {
		int fd = take_slot(d->cfg, slot), rc;
		if (fd < 0)
			continue;
		rc = rtp_launch(d->cfg, d->host, slot);
		close(fd);
		return rc;
	}
	return -1;
}

/* The idle wait between claim passes: runner_poll_ms, ended early by a wake-up from
 * the API (a job or session committed on this host) or from a supervisor that gave
 * its slot back. Polling stays: runners of other hosts get no wake-up. */
static void idle_wait(struct disp *d)
{
	if (d->wakefd >= 0)
		wake_wait(d->wakefd, (long)d->cfg->runner_poll_ms);
	else
		nap_ms((long)d->cfg->runner_poll_ms);
}

/* Only a daemon listens: a --once runner started beside it must not take its socket.
 * Checked once a second: the socket's directory may be recreated (the API's
 * RuntimeDirectory when the API restarts), then it is bound again; a failure is
 * logged once, until it works again. */
static void wake_keep(struct disp *d)
{
	char err[512];

	if (d->o->once || d->cfg->runner_wake_socket[0] == '\0')
		return;
	if (d->wakefd >= 0 && wake_bound(d->cfg->runner_wake_socket))
		return;
	if (d->wakefd >= 0) {
		close(d->wakefd);
		d->wakefd = -1;
	}
	d->wakefd = wake_listen(d->cfg->runner_wake_socket, err, sizeof err);
	if (d->wakefd < 0 && !d->wake_warned)
		log_kv("warn", "wake_socket_unavailable", "error", err, "fallback",
		       "polling every runner_poll_ms", (char *)NULL);
	d->wake_warned = d->wakefd < 0;
}

/* cgroup v2: every supervisor, spare and prewarmed holder starts in the dispatcher's
 * cgroup, so the dispatcher must still be in its leaf when it claims: moved elsewhere
 * (an operator, a container manager), it moves back (cg_v2_stay logs it); if it
 * cannot, it claims nothing, says so once, and tries again every pass. 1: go on. */
static int cgroup_ok(struct disp *d)
{
	char err[1024];

	if (cg_v2_stay(err, sizeof err) >= 0) {
		if (d->cg_refused)
			log_kv("info", "runner_cgroup_restored", "action", "claiming again",
			       (char *)NULL);
		d->cg_refused = 0;
		return 1;
	}
	if (!d->cg_refused)
		log_kv("error", "runner_cgroup_moved", "error", err, "action",
		       "claiming nothing until the runner is back in its cgroup (retried every"
		       " pass; or restart it)", (char *)NULL);
	d->cg_refused = 1;
	return 0;
}

/* Double fork + setsid: the supervisor belongs to no dispatcher, so restarting or
 * killing the runner leaves running jobs alone. It is a fresh exec of the runner
 * binary at its path (after an upgrade, new jobs get the new binary). */
static int launch(struct disp *d, const char *mode, const char *id, int slot, int lockfd,
		  const char *runner_id)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		char s[16];
		if (setsid() < 0 || fork() != 0)
			_exit(0);
		/* the lock travels with the supervisor */
		fcntl(lockfd, F_SETFD, 0);
		snprintf(s, sizeof s, "%d", slot);
		char fdnum[16];
		snprintf(fdnum, sizeof fdnum, "%d", lockfd);
		execl(d->o->self_path, "sandbox-runner", "--config", d->o->config_path,
		      mode, id, "--slot", s, "--runner-id", runner_id, "--lock-fd", fdnum,
		      (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return 0;
}

static void remember(struct disp *d, const char *id)
{
	if (!d->o->once)
		return;
	if (d->nlaunched == d->caplaunched) {
		size_t cap = d->caplaunched ? d->caplaunched * 2 : 64;
		void *n = reallocarray(d->launched, cap, sizeof *d->launched);
		if (n == NULL)
			return;
		d->launched = n;
		d->caplaunched = cap;
	}
	snprintf(d->launched[d->nlaunched++], UUID_STR_LEN, "%s", id);
}

/* A slot whose holder died with the job handed over but before it answered: its
 * lock comes free once it has cleaned the slot. Waits up to 10 s for it. */
static int wait_slot(struct disp *d, int slot)
{
	for (int i = 0; i < 2000; i++) {
		int fd = take_slot(d->cfg, slot);
		if (fd >= 0)
			return fd;
		nap_ms(5);
	}
	return -1;
}

/* Claims one job for slot and starts it: in the ready holder warm (>= 0, the slot
 * is its), else with the slot's lock fd (a spare, or a fresh exec). 1 started, 0
 * queue empty, -1 DB error. */
static int fill_one(struct disp *d, int slot, int fd, int warm)
{
	char id[UUID_STR_LEN], runner_id[160], rnd[9], claimed_us[24];
	const char *via;
	unsigned char r[4];
	struct timespec tc;
	int rc, own = -1;

	util_random(r, sizeof r);
	util_hex(r, sizeof r, rnd);
	snprintf(runner_id, sizeof runner_id, "%s/slot-%d/%s", d->host, slot, rnd);
	rc = store_claim(d->db, runner_id, d->cfg->runner_lease_seconds, d->digest,
			 d->cfg->default_max_running, id);
	/* the claim's µs wall time, for make bench's job-start figure */
	clock_gettime(CLOCK_REALTIME, &tc);
	snprintf(claimed_us, sizeof claimed_us, "%lld",
		 (long long)tc.tv_sec * 1000000 + tc.tv_nsec / 1000);
	if (rc != 1)
		return rc;
	via = "warm";
	if (warm >= 0 && warm_hand(&d->warm, warm, id, runner_id) < 0) {
		/* the holder was gone: the same slot, cold, once it is clean */
		warm = -1;
		fd = own = wait_slot(d, slot);
	}
	if (warm < 0) {
		via = "spare";
		if (fd < 0 || spare_hand(&d->spares, id, slot, fd, runner_id) < 0) {
			via = "exec"; /* no spare ready: a fresh supervisor */
			if (fd < 0 || launch(d, "--supervise", id, slot, fd, runner_id) < 0)
				/* cannot fork: the lease will expire and the job ends as lost */
				log_kv("error", "launch_failed", "job", id, "error",
				       fd < 0 ? "the slot stayed busy" : strerror(errno),
				       (char *)NULL);
		}
	}
	if (own >= 0)
		close(own); /* the supervisor has its copy */
	remember(d, id);
	log_kv("info", "job_claimed", "job", id, "runner", runner_id, "claimed_us",
	       claimed_us, "supervisor", via, (char *)NULL);
	return 1;
}

/* Whether any job is queued (a --once runner that found no free slot: every slot
 * busy, e.g. held by a daemon's prewarmed sandboxes, which take the queue anyway). */
static int queue_empty(struct disp *d)
{
	struct db_res *res = db_querya(d->db, "SELECT 1 FROM jobs WHERE state = 'queued' LIMIT 1",
				       NULL, 0);
	int empty;

	if (res == NULL)
		return 0;
	empty = db_res_rows(res) == 0;
	db_res_free(res);
	return empty;
}

/* Fills slots, prewarmed ones first: the number of jobs started, -1 on a DB error. */
static int fill_slots(struct disp *d)
{
	int started = 0, tried = 0, rc;

	d->drained = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int slot = 0; slot < d->cfg->runner_slots; slot++) {
			int fd = -1, w = -1;

			if (pass == 0 && (w = warm_ready(&d->warm, slot)) < 0)
				continue;
			if (pass == 1 && (fd = take_slot(d->cfg, slot)) < 0)
				continue;
			tried = 1;
			rc = fill_one(d, slot, fd, w);
			if (fd >= 0)
				close(fd);
			if (rc < 0)
				return -1;
			if (rc == 0) {
				d->drained = 1;
				return started;
			}
			started++;
		}
	if (!tried && d->o->once && queue_empty(d))
		d->drained = 1;
	return started;
}

/* One more holder for a free job slot while fewer than runner_warm_sandboxes are
 * there (one fork per pass; none while the runtimes probe waits for a slot). */
static void warm_tend(struct disp *d)
{
	long long want = d->cfg->runner_warm_sandboxes;

	/* rlimit-only mode has no cgroup whose limits could be set at assignment */
	if (d->o->once || want <= 0 || strcmp(d->cfg->runner_limits_mode, "cgroup") != 0)
		return;
	warm_prune(&d->warm);
	if (d->warm.h.n >= want || d->probe_wanted)
		return;
	for (int slot = 0; slot < d->cfg->runner_slots; slot++) {
		int fd;

		if (warm_holds(&d->warm, slot) || (fd = take_slot(d->cfg, slot)) < 0)
			continue;
		warm_spawn(&d->warm, d->cfg, slot, fd);
		close(fd);
		return;
	}
}

/* ---- sessions: slots CFG_SESSION_SLOT_BASE + N, N < runner_max_sessions */

static int session_slot(int n)
{
	return CFG_SESSION_SLOT_BASE + n;
}

/* Every process of a slot: the slot uid's, and its cgroup's (killed and removed). */
static void kill_slot(struct disp *d, int slot)
{
	char err[256];
	struct cg g;

	sb_kill_uid((uid_t)(d->cfg->runner_uid_base + slot));
	if (strcmp(d->cfg->runner_limits_mode, "rlimit-only") != 0 &&
	    cg_setup(&g, d->cfg->runner_cgroup_name, slot, 64LL << 20, 16, err, sizeof err) == 0)
		cg_destroy(&g);
}

/* What a dead session supervisor left in its slot (we hold the slot's lock): its
 * processes (the slot uid), its cgroup, its workspace. */
static void clean_slot(struct disp *d, int slot)
{
	char path[CFG_PATH_MAX + 64];
	struct stat st;

	snprintf(path, sizeof path, "%s/work/slot-%d", d->cfg->runner_state_dir, slot);
	if (lstat(path, &st) < 0)
		return; /* a slot never used since the last clean start */
	kill_slot(d, slot);
	if (ws_destroy(path) < 0)
		log_kv("warn", "slot_clean_failed", "slot", path, "error", strerror(errno),
		       (char *)NULL);
}

/* At start: sessions of this host whose supervisor is gone (the slot lock is free,
 * e.g. after a reboot) are lost, and every free session slot is cleaned. */
static void recover_host_sessions(struct disp *d)
{
	struct db_res *res = ss_host_sessions(d->db, d->host);

	for (size_t i = 0; res && i < db_res_rows(res); i++) {
		const char *id = db_res_s(res, i, "id"), *rid = db_res_s(res, i, "runner_id");
		const char *p = rid ? strstr(rid, "/session-") : NULL;
		long long n = -1;
		int fd;

		if (p) {
			char num[16];
			snprintf(num, sizeof num, "%.*s", (int)strcspn(p + 9, "/"), p + 9);
			if (util_parse_ll(num, 0, d->cfg->runner_max_sessions - 1, &n) < 0)
				n = -1;
		}
		if (n < 0) {
			ss_mark_lost(d->db, id, rid, "runner restarted: the session's slot is unknown");
			continue;
		}
		fd = take_slot(d->cfg, session_slot((int)n));
		if (fd < 0)
			continue; /* its supervisor lives on */
		clean_slot(d, session_slot((int)n)); /* what it left dies before the quota frees */
		if (ss_mark_lost(d->db, id, rid,
				 "runner host restarted: the session's supervisor was gone") == 1)
			log_kv("warn", "session_lost", "session", id, "reason", "supervisor gone",
			       (char *)NULL);
		close(fd);
	}
	db_res_free(res);
	for (int n = 0; n < d->cfg->runner_max_sessions; n++) {
		int fd = take_slot(d->cfg, session_slot(n));
		if (fd < 0)
			continue;
		clean_slot(d, session_slot(n));
		close(fd);
	}
}

/* Claims starting sessions into free session slots, oldest first: the number
 * started, or -1 on a DB error. */
static int fill_sessions(struct disp *d)
{
	char ids[SS_CANDIDATES][UUID_STR_LEN];
	int nc = -2, next = 0, started = 0;

	for (int n = 0; n < d->cfg->runner_max_sessions; n++) {
		char runner_id[160], rnd[9];
		unsigned char r[4];
		int slot = session_slot(n), fd, rc = 0;

		if ((fd = take_slot(d->cfg, slot)) < 0)
			continue;
		if (nc == -2 && (nc = ss_candidates(d->db, ids, SS_CANDIDATES)) < 0) {
			close(fd);
			return -1;
		}
		util_random(r, sizeof r);
		util_hex(r, sizeof r, rnd);
		snprintf(runner_id, sizeof runner_id, "%s/session-%d/%s", d->host, n, rnd);
		while (next < nc && (rc = ss_claim(d->db, ids[next], runner_id, d->host,
						   d->cfg->runner_lease_seconds)) == 0)
			next++;
		if (rc == 1) {
			if (launch(d, "--supervise-session", ids[next], slot, fd, runner_id) < 0)
				log_kv("error", "launch_failed", "session", ids[next], "error",
				       strerror(errno), (char *)NULL);
			else
				log_kv("info", "session_claimed", "session", ids[next], "runner",
				       runner_id, (char *)NULL);
			next++;
			started++;
		}
		close(fd);
		if (rc < 0)
			return -1;
		if (next >= nc)
			break;
	}
	return started;
}

/* Free session slots with a workspace left (a supervisor that was killed): cleaned
 * now rather than at the slot's next use. A live supervisor holds its slot's lock
 * and removes its own workspace before it lets go. */
static void clean_free_slots(struct disp *d)
{
	for (int n = 0; n < d->cfg->runner_max_sessions; n++) {
		char path[CFG_PATH_MAX + 64];
		struct stat st;
		int fd;

		snprintf(path, sizeof path, "%s/work/slot-%d", d->cfg->runner_state_dir,
			 session_slot(n));
		if (lstat(path, &st) < 0 || (fd = take_slot(d->cfg, session_slot(n))) < 0)
			continue;
		clean_slot(d, session_slot(n));
		close(fd);
	}
}

/* An expired lease of this host in slot (reclaim.h): 1 when nothing of it can run
 * any more and it may be marked lost (the slot was free, now cleaned; or the slot is
 * another claim's, whose supervisor cleaned it when it took it), 0 when not yet: its
 * supervisor is alive but stalled, and is killed with the slot's processes now; the
 * slot's lock comes free when it is gone and a later pass (a second) cleans the slot
 * and marks the row. Until then the row stays live: the slot and the key's quota
 * are not given out again while the old sandbox may run. */
static int reclaim_slot(struct disp *d, int slot, const char *kind, const char *id,
			const char *runner_id)
{
	int fd = take_slot(d->cfg, slot);
	pid_t sup;
	char pidtext[16];

	if (fd >= 0) {
		clean_slot(d, slot);
		/* SIGKILL is not instant: dying processes are waited for (a later pass) */
		if (rc_uid_running((uid_t)(d->cfg->runner_uid_base + slot)) != 0) {
			kill_slot(d, slot);
			close(fd);
			return 0;
		}
		close(fd);
		return 1;
	}
	sup = runner_id ? rc_find_supervisor(runner_id) : 0;
	if (sup <= 0)
		return 1;
	kill(sup, SIGKILL);
	kill_slot(d, slot);
	snprintf(pidtext, sizeof pidtext, "%d", (int)sup);
	log_kv("warn", "lease_expired_supervisor_killed", kind, id, "runner", runner_id,
	       "supervisor", pidtext, (char *)NULL);
	return 0;
}

/* Whether an expired lease may be marked lost now (see reclaim_slot): this host's
 * only once its slot is reclaimed, another live host's never (its own dispatcher
 * does it, after killing what runs there), a dead host's at once. */
static int may_mark_lost(struct disp *d, const char *kind, const char *slot_kind,
			 int slot_base, long long max, const char *id, const char *runner_id,
			 const char *host, int host_live)
{
	int n;

	if (host == NULL || strcmp(host, d->host) != 0)
		return !host_live;
	n = rc_slot_of(runner_id, d->host, slot_kind, max);
	if (n < 0)
		return 1; /* not a slot of ours: nothing to kill */
	return reclaim_slot(d, slot_base + n, kind, id, runner_id);
}

/* Once a second: running jobs whose lease expired -> lost, after their slot is
 * reclaimed. The count, or -1. */
static int recover_jobs(struct disp *d)
{
	struct db_res *res = store_expired(d->db, SS_HOST_LIVE_SECONDS);
	int count = 0;

	if (res == NULL)
		return -1;
	for (size_t i = 0; i < db_res_rows(res); i++) {
		const char *id = db_res_s(res, i, "id"), *rid = db_res_s(res, i, "runner_id");

		if (may_mark_lost(d, "job", "slot", 0, d->cfg->runner_slots, id, rid,
				  db_res_s(res, i, "host"), db_res_i(res, i, "host_live", 0) != 0) &&
		    store_mark_lost(d->db, id, rid) == 1)
			count++;
	}
	db_res_free(res);
	return count;
}

/* Sessions whose lease expired -> lost, after their slot is reclaimed: count, or -1. */
static int recover_lost_sessions(struct disp *d)
{
	struct db_res *res = ss_expired(d->db);
	int count = 0;

	if (res == NULL)
		return -1;
	for (size_t i = 0; i < db_res_rows(res); i++) {
		const char *id = db_res_s(res, i, "id"), *rid = db_res_s(res, i, "runner_id");

		if (may_mark_lost(d, "session", "session", CFG_SESSION_SLOT_BASE,
				  d->cfg->runner_max_sessions, id, rid,
				  db_res_s(res, i, "runner_host"),
				  db_res_i(res, i, "host_live", 0) != 0) &&
		    ss_mark_lost(d->db, id, rid,
				 "lease expired: the session's supervisor stopped renewing it") == 1)
			count++;
	}
	db_res_free(res);
	return count;
}

/* Once a second: expired leases -> lost, sessions nobody took -> failed, dead
 * supervisors' slots cleaned. */
static void recover_sessions(struct disp *d)
{
	int n = recover_lost_sessions(d), m;
	char c[16];

	if (n < 0) {
		db_failed(d, "session_recover_lost");
		return;
	}
	if (n > 0) {
		snprintf(c, sizeof c, "%d", n);
		log_kv("warn", "sessions_lost", "count", c, (char *)NULL);
	}
	clean_free_slots(d);
	m = ss_fail_unclaimed(d->db, d->cfg->session_start_timeout_seconds);
	if (m < 0)
		db_failed(d, "session_fail_unclaimed");
	else if (m > 0) {
		snprintf(c, sizeof c, "%d", m);
		log_kv("warn", "sessions_unclaimed", "count", c, (char *)NULL);
	}
}

static int all_done(struct disp *d)
{
	for (size_t i = 0; i < d->nlaunched; i++) {
		enum job_state state;
		if (db_ready(d) < 0 || store_state(d->db, d->launched[i], &state) < 0)
			return 0;
		if (state == JS_RUNNING)
			return 0;
	}
	return 1;
}

/* A delivery pass that could not be exec'd (127), failed (1: no database, 2: config)
 * or died of a signal: webhooks are not going out. One line a minute at most, naming
 * the binary, so a missing runner_deliver_path does not go unnoticed nor flood. */
static void deliver_reaped(const struct cfg *cfg, int st)
{
	static double last_ms = -1e12;
	char how[32];

	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	if (util_mono_ms() - last_ms < 60000)
		return;
	last_ms = util_mono_ms();
	if (WIFEXITED(st))
		snprintf(how, sizeof how, "exit %d", WEXITSTATUS(st));
	else
		snprintf(how, sizeof how, "signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	log_kv("error", "callback_pass_failed", "runner_deliver_path", cfg->runner_deliver_path,
	       "status", how, "hint",
	       WIFEXITED(st) && WEXITSTATUS(st) == 127
		       ? "the delivery binary could not be executed: webhooks are not sent"
		       : "the delivery pass did not finish: see its own log lines",
	       (char *)NULL);
}

/* Webhooks go out from a child process (runner_deliver_path), one pass at a time: a
 * receiver that takes
 * its full 10 s (times CB_PER_PASS) delays only the next pass, never a claim, a
 * heartbeat or a lease recovery. The child opens its own DB connection and never
 * touches the dispatcher's. */
static void deliver_tick(struct disp *d)
{
	pid_t pid;

	if (d->deliverer > 0) {
		int st;
		pid_t r = waitpid(d->deliverer, &st, WNOHANG);
		if (r == 0)
			return;
		d->deliverer = 0;
		if (r > 0)
			deliver_reaped(d->cfg, st);
	}
	if (util_mono_ms() < d->next_deliver)
		return;
	d->next_deliver = util_mono_ms() + DELIVER_EVERY_MS;
	pid = fork();
	if (pid < 0) {
		log_kv("warn", "callback_fork", "error", strerror(errno), (char *)NULL);
		return;
	}
	if (pid == 0) {
		/* a binary of its own (deliver_main.c): libcurl is loaded there only; its own
		 * process group, so that deliver_stop reaches whatever it starts */
		setpgid(0, 0);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		execl(d->cfg->runner_deliver_path, "sandbox-deliver", "--config", d->o->config_path,
		      (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	d->deliverer = pid;
}

/* The dispatcher is leaving: a delivery pass still running is its child in the unit's
 * cgroup, which systemd's KillMode=process does not signal. At the end of a --once run
 * (no signal) the pass may finish for up to DELIVER_FINISH_MS (its CB_PER_PASS receivers
 * at 10 s each); on a stop or restart it gets TERM at once. Then KILL for its group after
 * DELIVER_STOP_MS, or as soon as the pass has ended (whatever it left behind), and the
 * pass is reaped: nothing outlives the dispatcher. It stays unreaped until the KILL, so
 * its group id cannot have been reused. A delivery cut short stays claimed until its
 * claim expires and a later pass sends it again (receivers dedupe on X-Sandbox-Delivery). */
static void deliver_stop(struct disp *d, int finish)
{
	double until = util_mono_ms() + (finish ? DELIVER_FINISH_MS : 0);
	int termed = 0;
	char ms[16];

	if (d->deliverer <= 0)
		return;
	for (;;) {
		siginfo_t si = { 0 };
		if (waitid(P_PID, (id_t)d->deliverer, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
		    si.si_pid == d->deliverer)
			break;
		if (util_mono_ms() >= until) {
			if (termed) {
				snprintf(ms, sizeof ms, "%d", DELIVER_STOP_MS);
				log_kv("warn", "callback_pass_killed", "after_term_ms", ms,
				       (char *)NULL);
				break;
			}
			kill(-d->deliverer, SIGTERM);
			termed = 1;
			until = util_mono_ms() + DELIVER_STOP_MS;
		}
		nap_ms(20);
	}
	kill(-d->deliverer, SIGKILL);
	waitpid(d->deliverer, NULL, 0);
	d->deliverer = 0;
}

int dispatch_run(const struct cfg *cfg, const struct dispatch_opts *o)
{
	struct disp d = { .cfg = cfg, .o = o, .wakefd = -1 };
	double deadline = util_mono_ms() + (double)o->max_seconds * 1e3, next_recover = 0;
	double next_beat = 0, next_probe = 0;
	int queue_empty = 0, host_recovered = 0;

	if (prof_digest(cfg, d.digest) < 0)
		return 1;
	/* runner_host names this runner host when several share a machine (or a name) */
	if (cfg->runner_host[0] != '\0')
		snprintf(d.host, sizeof d.host, "%s", cfg->runner_host);
	else
		gethostname(d.host, sizeof d.host - 1);
	spare_init(&d.spares, o->config_path);
	warm_init(&d.warm, o->config_path);
	log_kv("info", "runner_started", "mode", o->once ? "once" : "daemon", "profile", d.digest,
	       (char *)NULL);
	while (!*o->stop) {
		int started = 0, in_cg;

		if (db_ready(&d) < 0) {
			nap_ms(1000);
			if (o->once && util_mono_ms() > deadline)
				break;
			continue;
		}
		if (!d.packet_ok) {
			int c = packet_check(&d);
			if (c == 0) {
				wake_close(d.wakefd, cfg->runner_wake_socket);
				db_close(d.db);
				return 2;
			}
			if (c < 0) {
				db_failed(&d, "packet_check");
				nap_ms(1000);
				continue;
			}
			d.packet_ok = 1;
		}
		if (util_mono_ms() >= next_recover) {
			int n = recover_jobs(&d);
			if (n < 0)
				db_failed(&d, "recover_lost");
			else if (n > 0) {
				char c[16];
				snprintf(c, sizeof c, "%d", n);
				log_kv("warn", "jobs_lost", "count", c, (char *)NULL);
			}
			if (d.db)
				recover_sessions(&d);
			wake_keep(&d);
			next_recover = util_mono_ms() + RECOVER_EVERY_MS;
		}
		if (d.db && !host_recovered) {
			recover_host_sessions(&d);
			host_recovered = 1;
		}
		if (d.db && util_mono_ms() >= next_beat) {
			if (ss_host_beat(d.db, d.host, cfg->runner_slots, cfg->runner_max_sessions) < 0)
				db_failed(&d, "host_heartbeat");
			next_beat = util_mono_ms() + HOST_BEAT_MS;
		}
		/* what starts a process in a slot waits while the cgroup is wrong */
		in_cg = cgroup_ok(&d);
		if (d.db && in_cg && util_mono_ms() >= next_probe) {
			/* a cron run (--once) probes only when the last probe is stale */
			int rc = o->once && !rtp_due(cfg, d.db, d.host) ? 0 : probe_runtimes(&d);
			/* every slot taken, some by idle holders: one gives its slot back (one
			 * a second: it needs a moment to clean up, and a claim may take it) */
			if (rc == 0)
				d.probe_wanted = 0;
			else if (util_mono_ms() >= d.probe_stand_down &&
				 warm_stand_down(&d.warm) == 0) {
				d.probe_wanted = 1;
				d.probe_stand_down = util_mono_ms() + 1000;
			}
			next_probe = util_mono_ms() + (rc == 0 ? RTP_EVERY_MS : d.probe_wanted ? 20 : 5000);
		}
		if (d.db && in_cg && !o->once) {
			int ns = fill_sessions(&d);
			if (ns < 0)
				db_failed(&d, "session_claim");
			else
				started += ns;
		}
		if (d.db && in_cg) {
			int nj = fill_slots(&d);
			if (nj < 0)
				db_failed(&d, "claim");
			else
				started += nj;
		}
		if (d.db)
			deliver_tick(&d);
		/* --once runners (cron) launch fresh supervisors: no spare outlives them idle */
		if (d.db && in_cg)
			warm_tend(&d);
		if (d.db && in_cg && !o->once)
			spare_tend(&d.spares, cfg, (int)(cfg->runner_spare_supervisors <
								 cfg->runner_slots
							 ? cfg->runner_spare_supervisors
							 : cfg->runner_slots));
		if (o->once) {
			queue_empty = d.drained && d.db != NULL;
			if (queue_empty || util_mono_ms() > deadline)
				break;
		}
		if (started == 0)
			idle_wait(&d);
	}
	if (o->once) {
		while (!*o->stop && !all_done(&d)) {
			if (d.db && recover_jobs(&d) < 0)
				db_failed(&d, "recover_lost");
			nap_ms(100);
		}
	}
	deliver_stop(&d, o->once && !*o->stop);
	free(d.launched);
	spare_close_all(&d.spares);
	warm_close_all(&d.warm);
	wake_close(d.wakefd, cfg->runner_wake_socket);
	db_close(d.db);
	log_kv("info", "runner_stopped", (char *)NULL);
	return 0;
}
