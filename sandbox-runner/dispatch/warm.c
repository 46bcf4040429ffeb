/* Prewarmed sandboxes, the dispatcher's side: the pool of holders (holder.h: a
 * holder's life), one per free job slot.
 *
 * A holder is forked from the dispatcher like a spare (spare.c: no exec, double
 * fork, setsid, every inherited descriptor closed but its end of a SOCK_SEQPACKET
 * socketpair at fd 3 and the slot's lock at fd 4); it says "R" once its sandbox is
 * up. A claimed job is handed to a ready holder ("ID RUNNER_ID", answered "A"); the
 * end of its socket asks it to stand down. One that stood down by itself (its
 * sandbox died idle) is forgotten, and the dispatcher forks a new holder for a free
 * slot. A holder that was handed a job and died before "A" never had it: the
 * dispatcher waits for the slot's lock and runs the job cold there. */
#include "warm.h"

#include <errno.h>
#include <fcntl.h>
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
#include "log.h"
#include "helper.h"
#include "holder.h"
#include "util.h"
#include "wake.h"

#define ACK_WAIT_MS 1000
#define RESPAWN_MS 1000 /* after a holder that ended without being ready, doubled */
#define RESPAWN_MAX_MS 60000 /* while they keep failing (no agent binary, no cgroup) */
#define MSG_MAX 256

void warm_init(struct warm_pool *p, const char *config_path)
{
	hp_init(&p->h, config_path);
	p->backoff_ms = 0;
}

int warm_holds(const struct warm_pool *p, int slot)
{
	for (int i = 0; i < p->h.n; i++)
		if (p->h.slot[i] == slot)
			return 1;
	return 0;
}

/* sock to HOLDER_FD, lock to LOCK_FD, every other inherited descriptor closed. */
static int holder_fds(int sock, const struct helper_start *h)
{
	int s = fcntl(sock, F_DUPFD_CLOEXEC, 16), l = fcntl(h->lockfd, F_DUPFD_CLOEXEC, 16);

	if (s < 0 || l < 0 || dup2(s, HOLDER_FD) < 0 || dup2(l, LOCK_FD) < 0)
		return -1;
	hp_close_from(LOCK_FD + 1);
	return 0;
}

static void holder_run(const struct helper_start *h)
{
	holder_main(h->cfg, h->config_path, h->slot);
}

int warm_spawn(struct warm_pool *p, const struct cfg *cfg, int slot, int lockfd)
{
	const struct helper_start h = { cfg, p->h.config_path, slot, lockfd };

	if (p->h.n >= WARM_MAX || util_mono_ms() < p->h.next_spawn)
		return -1;
	return hp_fork(&p->h, &h, holder_fds, holder_run);
}

/* A ready holder that stood down by itself (its sandbox died idle) closed its
 * socket: forgotten now, so its slot is prewarmed again without waiting for a job. */
void warm_prune(struct warm_pool *p)
{
	hp_prune(&p->h, 1);
}

int warm_ready(struct warm_pool *p, int slot)
{
	for (int i = 0; i < p->h.n; i++) {
		int r;

		if (p->h.slot[i] != slot)
			continue;
		if (p->h.ready[i])
			return i;
		r = hp_check_ready(&p->h, i);
		if (r > 0) {
			p->backoff_ms = 0;
			return i;
		}
		if (r == 0)
			return -1;
		/* gone before it was ready (its warm_failed line says why): its slot comes
		 * free when it has cleaned up; the next try waits longer each time */
		hp_drop(&p->h, i);
		p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : RESPAWN_MS;
		if (p->backoff_ms > RESPAWN_MAX_MS)
			p->backoff_ms = RESPAWN_MAX_MS;
		p->h.next_spawn = util_mono_ms() + p->backoff_ms;
		return -1;
	}
	return -1;
}

int warm_hand(struct warm_pool *p, int i, const char *id, const char *runner_id)
{
	char buf[MSG_MAX], c;
	struct pollfd pf = { .fd = p->h.fd[i], .events = POLLIN };
	int n = snprintf(buf, sizeof buf, "%s %s", id, runner_id), rc = -1;

	if (n > 0 && (size_t)n < sizeof buf && send(p->h.fd[i], buf, (size_t)n, MSG_NOSIGNAL) == n) {
		if (poll(&pf, 1, ACK_WAIT_MS) == 0) {
			log_kv("warn", "warm_slow", "job", id, "note",
			       "no answer within 1 s; the holder has the job", (char *)NULL);
			rc = 0;
		} else {
			rc = recv(p->h.fd[i], &c, 1, MSG_DONTWAIT) == 1 && c == 'A' ? 0 : -1;
		}
	}
	hp_drop(&p->h, i);
	return rc;
}

int warm_stand_down(struct warm_pool *p)
{
	for (int i = 0; i < p->h.n; i++)
		if (p->h.ready[i]) {
			hp_drop(&p->h, i); /* the end of its socket */
			return 0;
		}
	return -1;
}

void warm_close_all(struct warm_pool *p)
{
	hp_close_all(&p->h);
}
