/* Pre-forked supervisors.
 *
 * A fresh exec of the runner per job (runner_main.c --supervise) pays for the dynamic
 * loader, four libraries, OpenSSL's initialisation (libmariadb), the config and a new
 * MariaDB connection before it can look at its job: most of the launch's own CPU and
 * a few ms of its latency. A spare is forked from the dispatcher, which has all of
 * that done, then detached exactly like a launched supervisor (double fork, setsid,
 * the dispatcher's signals ignored), so it outlives the dispatcher once it has a job.
 * It closes every descriptor it inherited but its end of a SOCK_SEQPACKET socketpair
 * (the dispatcher's DB socket is closed, never used: its session stays the
 * dispatcher's), opens its own connection, says "R" and waits.
 *
 * Hand-off, after the claim: the dispatcher sends "ID SLOT RUNNER_ID" with the slot's
 * lock descriptor (SCM_RIGHTS); the spare answers "A" before it does anything else
 * and then is that job's supervisor (supervise_run), under the same command line a
 * launched one shows (`--supervise ID ...`: tools and tests find supervisors by it).
 * A spare that died while idle fails the send or closes before "A": the dispatcher
 * tries the next one, then launches a fresh supervisor; the claimed job is never
 * dropped. A spare whose dispatcher went away reads the end of the socket and exits.
 */
#include "spare.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db.h"
#include "helper.h"
#include "log.h"
#include "store.h"
#include "supervise.h"
#include "title.h"
#include "util.h"
#include "wake.h"

#define SPARE_FD 3
#define ACK_WAIT_MS 1000   /* a live spare answers at once; it is only a scheduling delay */
#define RESPAWN_MS 1000    /* after a spare ended without ever being ready */
#define MSG_MAX 256

void spare_init(struct spare_pool *p, const char *config_path)
{
	hp_init(&p->h, config_path);
}

/* One message with the lock descriptor: 0 and *lockfd, or -1 (the dispatcher is gone,
 * or sent something else). */
static int take_job(const struct cfg *cfg, char id[UUID_STR_LEN], int *slot, char *rid,
		    size_t ridlen, int *lockfd)
{
	char buf[MSG_MAX + 1], cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { buf, MSG_MAX };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof cbuf };
	struct cmsghdr *c;
	char idb[64], ridb[MSG_MAX];
	long long s;
	ssize_t n;

	*lockfd = -1;
	do
		n = recvmsg(SPARE_FD, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(lockfd, CMSG_DATA(c), sizeof(int));
	if (*lockfd < 0 || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    sscanf(buf, "%63s %lld %255s", idb, &s, ridb) != 3 || !util_is_uuid(idb) || s < 0 ||
	    s >= cfg->runner_slots || strlen(ridb) >= ridlen) {
		if (*lockfd >= 0)
			close(*lockfd);
		return -1;
	}
	memcpy(id, idb, UUID_STR_LEN); /* a UUID: exactly UUID_STR_LEN - 1 characters */
	memcpy(rid, ridb, strlen(ridb) + 1); /* shorter than ridlen: checked above */
	*slot = (int)s;
	return 0;
}

static void __attribute__((noreturn)) spare_main(const struct cfg *cfg, const char *conf)
{
	char config_path[CFG_PATH_MAX];
	char id[UUID_STR_LEN], rid[160], err[256], slotnum[16], fdnum[16];
	int slot, lockfd, rc;
	struct db *db;

	signal(SIGTERM, SIG_IGN); /* as a launched supervisor: the job outlives the dispatcher */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	/* conf may point into the argv area that set_cmdline rewrites */
	snprintf(config_path, sizeof config_path, "%s", conf);
	log_init("sandbox-supervisor");
	/* idle: `--spare` (ps shows the pool; tests/stack.sh counts it as the runner's) */
	title_set((const char *const[]){ "sandbox-runner", "--config", config_path, "--spare",
					 NULL });
	db = db_open(cfg, err, sizeof err);
	if (db == NULL) {
		log_kv("warn", "spare_db_connect", "error", err, (char *)NULL);
		_exit(1);
	}
	if (write(SPARE_FD, "R", 1) != 1 || take_job(cfg, id, &slot, rid, sizeof rid, &lockfd) < 0) {
		db_close(db);
		_exit(0); /* the dispatcher went away: nothing was ours */
	}
	/* a supervisor from here on, by its command line too, before the dispatcher hears */
	snprintf(slotnum, sizeof slotnum, "%d", slot);
	snprintf(fdnum, sizeof fdnum, "%d", lockfd);
	title_set((const char *const[]){ "sandbox-runner", "--config", config_path,
					 "--supervise", id, "--slot", slotnum, "--runner-id",
					 rid, "--lock-fd", fdnum, NULL });
	if (write(SPARE_FD, "A", 1) != 1) {
		/* the dispatcher is gone, but the job was claimed for us: run it */
	}
	close(SPARE_FD);
	if (!store_db_fresh(db)) {
		db_close(db);
		db = NULL; /* supervise_run connects, as a launched supervisor does */
	}
	rc = supervise_run(cfg, db, id, slot, rid);
	close(lockfd); /* the slot is free: wake an idle dispatcher (wake.h) */
	wake_send(cfg->runner_wake_socket);
	exit(rc);
}

/* Every inherited descriptor but 0-2 and the spare's socket (moved to SPARE_FD). */
static int keep_only(int sock, const struct helper_start *h)
{
	(void)h;
	if (sock != SPARE_FD && dup2(sock, SPARE_FD) < 0)
		return -1;
	hp_close_from(SPARE_FD + 1);
	return 0;
}

static void spare_run(const struct helper_start *h)
{
	spare_main(h->cfg, h->config_path);
}

void spare_tend(struct spare_pool *p, const struct cfg *cfg, int want)
{
	const struct helper_start h = { cfg, p->h.config_path, -1, -1 };

	/* Spares that died while idle closed their socket: forgotten now, so the pool
	 * refills without waiting for a job to find them gone (with prewarmed
	 * sandboxes, jobs seldom come to spares). */
	hp_prune(&p->h, 0);
	if (want > SPARE_MAX)
		want = SPARE_MAX;
	if (p->h.n >= want || util_mono_ms() < p->h.next_spawn)
		return;
	if (hp_fork(&p->h, &h, keep_only, spare_run) == 0)
		p->h.next_spawn = 0;
}

/* 0 the spare answered "A", -1 it is gone without the job, 1 no answer in time (it
 * is alive and has the message: it takes the job when it runs). */
static int offer(int fd, const char *id, int slot, int lockfd, const char *runner_id)
{
	char buf[MSG_MAX], cbuf[CMSG_SPACE(sizeof(int))], c;
	struct iovec iov = { buf, 0 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof cbuf };
	struct cmsghdr *cm;
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int n = snprintf(buf, sizeof buf, "%s %d %s", id, slot, runner_id);

	if (n < 0 || (size_t)n >= sizeof buf)
		return -1;
	iov.iov_len = (size_t)n;
	memset(cbuf, 0, sizeof cbuf);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &lockfd, sizeof(int));
	if (sendmsg(fd, &m, MSG_NOSIGNAL) != n)
		return -1;
	if (poll(&pf, 1, ACK_WAIT_MS) == 0)
		return 1;
	return recv(fd, &c, 1, MSG_DONTWAIT) == 1 && c == 'A' ? 0 : -1;
}

int spare_hand(struct spare_pool *p, const char *id, int slot, int lockfd,
	       const char *runner_id)
{
	for (int i = 0; i < p->h.n;) {
		int r = hp_check_ready(&p->h, i);
		if (r == 0) {
			i++;
			continue;
		}
		if (r > 0 && (r = offer(p->h.fd[i], id, slot, lockfd, runner_id)) >= 0) {
			if (r == 1)
				log_kv("warn", "spare_slow", "job", id, "note",
				       "no answer within 1 s; the spare has the job", (char *)NULL);
			hp_drop(&p->h, i);
			return 0;
		}
		/* died while idle: it never had the job */
		hp_drop(&p->h, i);
		p->h.next_spawn = util_mono_ms() + RESPAWN_MS;
	}
	return -1;
}

void spare_close_all(struct spare_pool *p)
{
	hp_close_all(&p->h);
}
