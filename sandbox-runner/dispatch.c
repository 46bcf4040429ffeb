#include "dispatch.h"

#include <errno.h>
#include <fcntl.h>
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
#include "store.h"
#include "util.h"

#define RECOVER_EVERY_MS 1000

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

/* Double fork + setsid: the supervisor belongs to no dispatcher, so restarting or
 * killing the runner leaves running jobs alone. It is a fresh exec of the runner
 * binary at its path (after an upgrade, new jobs get the new binary). */
static int launch(struct disp *d, const char *id, int slot, int lockfd, const char *runner_id)
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
		      "--supervise", id, "--slot", s, "--runner-id", runner_id, "--lock-fd", fdnum,
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

/* Fills free slots: the number of jobs started, -1 on a DB error. */
static int fill_slots(struct disp *d)
{
	int started = 0;

	d->drained = 0;
	for (int slot = 0; slot < d->cfg->runner_slots; slot++) {
		char id[UUID_STR_LEN], runner_id[160], rnd[9];
		unsigned char r[4];
		int fd = take_slot(d->cfg, slot), rc;

		if (fd < 0)
			continue;
		util_random(r, sizeof r);
		util_hex(r, sizeof r, rnd);
		snprintf(runner_id, sizeof runner_id, "%s/slot-%d/%s", d->host, slot, rnd);
		rc = store_claim(d->db, runner_id, d->cfg->runner_lease_seconds, d->digest,
				 d->cfg->default_max_running, id);
		if (rc == 1 && launch(d, id, slot, fd, runner_id) < 0) {
			/* cannot fork: the lease will expire and the job ends as lost */
			log_kv("error", "launch_failed", "job", id, "error", strerror(errno),
			       (char *)NULL);
		}
		close(fd);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			d->drained = 1;
			break;
		}
		remember(d, id);
		started++;
		log_kv("info", "job_claimed", "job", id, "runner", runner_id, (char *)NULL);
	}
	return started;
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

int dispatch_run(const struct cfg *cfg, const struct dispatch_opts *o)
{
	struct disp d = { .cfg = cfg, .o = o };
	double deadline = util_mono_ms() + (double)o->max_seconds * 1e3, next_recover = 0;
	int queue_empty = 0;

	if (prof_digest(cfg, d.digest) < 0)
		return 1;
	gethostname(d.host, sizeof d.host - 1);
	log_kv("info", "runner_started", "mode", o->once ? "once" : "daemon", "profile", d.digest,
	       (char *)NULL);
	while (!*o->stop) {
		int started = 0;

		if (db_ready(&d) < 0) {
			nap_ms(1000);
			if (o->once && util_mono_ms() > deadline)
				break;
			continue;
		}
		if (!d.packet_ok) {
			int c = packet_check(&d);
			if (c == 0) {
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
			int n = store_recover_lost(d.db);
			if (n < 0)
				db_failed(&d, "recover_lost");
			else if (n > 0) {
				char c[16];
				snprintf(c, sizeof c, "%d", n);
				log_kv("warn", "jobs_lost", "count", c, (char *)NULL);
			}
			next_recover = util_mono_ms() + RECOVER_EVERY_MS;
		}
		if (d.db && (started = fill_slots(&d)) < 0) {
			db_failed(&d, "claim");
			started = 0;
		}
		if (o->once) {
			queue_empty = d.drained && d.db != NULL;
			if (queue_empty || util_mono_ms() > deadline)
				break;
		}
		if (started == 0)
			nap_ms((long)cfg->runner_poll_ms);
	}
	if (o->once) {
		while (!*o->stop && !all_done(&d)) {
			if (d.db && store_recover_lost(d.db) < 0)
				db_failed(&d, "recover_lost");
			nap_ms(100);
		}
	}
	free(d.launched);
	db_close(d.db);
	log_kv("info", "runner_stopped", (char *)NULL);
	return 0;
}
