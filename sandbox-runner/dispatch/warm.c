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
#include "holder.h"
#include "util.h"
#include "wake.h"

#define ACK_WAIT_MS 1000
#define RESPAWN_MS 1000 /* after a holder that ended without being ready, doubled */
#define RESPAWN_MAX_MS 60000 /* while they keep failing (no agent binary, no cgroup) */
#define MSG_MAX 256

void warm_init(struct warm_pool *p, const char *config_path)
{
	memset(p, 0, sizeof *p);
	p->config_path = config_path;
}

static void drop(struct warm_pool *p, int i)
{
	close(p->fd[i]);
	p->n--;
	p->fd[i] = p->fd[p->n];
	p->slot[i] = p->slot[p->n];
	p->ready[i] = p->ready[p->n];
}

int warm_holds(const struct warm_pool *p, int slot)
{
	for (int i = 0; i < p->n; i++)
		if (p->slot[i] == slot)
			return 1;
	return 0;
}

/* sock to HOLDER_FD, lock to LOCK_FD, every other inherited descriptor closed. */
static int holder_fds(int sock, int lock)
{
	int s = fcntl(sock, F_DUPFD_CLOEXEC, 16), l = fcntl(lock, F_DUPFD_CLOEXEC, 16);

	if (s < 0 || l < 0 || dup2(s, HOLDER_FD) < 0 || dup2(l, LOCK_FD) < 0)
		return -1;
	if (syscall(SYS_close_range, LOCK_FD + 1, ~0U, 0) == 0)
		return 0;
	for (int fd = LOCK_FD + 1; fd < 65536; fd++)
		close(fd);
	return 0;
}

int warm_spawn(struct warm_pool *p, const struct cfg *cfg, int slot, int lockfd)
{
	int sv[2], st;
	pid_t pid;

	if (p->n >= WARM_MAX || util_mono_ms() < p->next_spawn)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		/* as launch() in dispatch.c: belongs to no dispatcher */
		if (setsid() < 0 || fork() != 0)
			_exit(0);
		if (holder_fds(sv[1], lockfd) < 0)
			_exit(1);
		holder_main(cfg, p->config_path, slot);
	}
	close(sv[1]);
	waitpid(pid, &st, 0);
	p->fd[p->n] = sv[0];
	p->slot[p->n] = slot;
	p->ready[p->n] = 0;
	p->n++;
	return 0;
}

/* A ready holder that stood down by itself (its sandbox died idle) closed its
 * socket: forgotten now, so its slot is prewarmed again without waiting for a job. */
void warm_prune(struct warm_pool *p)
{
	for (int i = 0; i < p->n;) {
		char c;

		if (p->ready[i] && recv(p->fd[i], &c, 1, MSG_DONTWAIT | MSG_PEEK) == 0)
			drop(p, i);
		else
			i++;
	}
}

int warm_ready(struct warm_pool *p, int slot)
{
	for (int i = 0; i < p->n; i++) {
		char c;
		ssize_t n;

		if (p->slot[i] != slot)
			continue;
		if (p->ready[i])
			return i;
		n = recv(p->fd[i], &c, 1, MSG_DONTWAIT);
		if (n == 1 && c == 'R') {
			p->ready[i] = 1;
			p->backoff_ms = 0;
			return i;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return -1;
		/* gone before it was ready (its warm_failed line says why): its slot comes
		 * free when it has cleaned up; the next try waits longer each time */
		drop(p, i);
		p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : RESPAWN_MS;
		if (p->backoff_ms > RESPAWN_MAX_MS)
			p->backoff_ms = RESPAWN_MAX_MS;
		p->next_spawn = util_mono_ms() + p->backoff_ms;
		return -1;
	}
	return -1;
}

int warm_hand(struct warm_pool *p, int i, const char *id, const char *runner_id)
{
	char buf[MSG_MAX], c;
	struct pollfd pf = { .fd = p->fd[i], .events = POLLIN };
	int n = snprintf(buf, sizeof buf, "%s %s", id, runner_id), rc = -1;

	if (n > 0 && (size_t)n < sizeof buf && send(p->fd[i], buf, (size_t)n, MSG_NOSIGNAL) == n) {
		if (poll(&pf, 1, ACK_WAIT_MS) == 0) {
			log_kv("warn", "warm_slow", "job", id, "note",
			       "no answer within 1 s; the holder has the job", (char *)NULL);
			rc = 0;
		} else {
			rc = recv(p->fd[i], &c, 1, MSG_DONTWAIT) == 1 && c == 'A' ? 0 : -1;
		}
	}
	drop(p, i);
	return rc;
}

int warm_stand_down(struct warm_pool *p)
{
	for (int i = 0; i < p->n; i++)
		if (p->ready[i]) {
			drop(p, i); /* the end of its socket */
			return 0;
		}
	return -1;
}

void warm_close_all(struct warm_pool *p)
{
	while (p->n > 0)
		drop(p, 0);
}
