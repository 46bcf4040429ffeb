/* The dispatcher's pool of forked helpers (helper.h): spares and prewarm holders
 * are forked, detached, counted ready and forgotten the same way. */
#include "helper.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

void hp_init(struct helper_pool *p, const char *config_path)
{
	memset(p, 0, sizeof *p);
	p->config_path = config_path;
}

void hp_drop(struct helper_pool *p, int i)
{
	close(p->fd[i]);
	p->n--;
	p->fd[i] = p->fd[p->n];
	p->slot[i] = p->slot[p->n];
	p->ready[i] = p->ready[p->n];
}

int hp_fork(struct helper_pool *p, const struct helper_start *h,
	    int (*place)(int sock, const struct helper_start *h),
	    void (*run)(const struct helper_start *h))
{
	int sv[2], st;
	pid_t pid;

	if (p->n >= HELPER_MAX)
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
		if (place(sv[1], h) < 0)
			_exit(1);
		run(h);
		_exit(1);
	}
	close(sv[1]);
	waitpid(pid, &st, 0);
	p->fd[p->n] = sv[0];
	p->slot[p->n] = h->slot;
	p->ready[p->n] = 0;
	p->n++;
	return 0;
}

int hp_check_ready(struct helper_pool *p, int i)
{
	char c;
	ssize_t n;

	if (p->ready[i])
		return 1;
	n = recv(p->fd[i], &c, 1, MSG_DONTWAIT);
	if (n == 1 && c == 'R')
		return p->ready[i] = 1;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	return -1;
}

void hp_prune(struct helper_pool *p, int only_ready)
{
	for (int i = 0; i < p->n;) {
		char c;

		if ((p->ready[i] || !only_ready) && recv(p->fd[i], &c, 1, MSG_DONTWAIT | MSG_PEEK) == 0)
			hp_drop(p, i);
		else
			i++;
	}
}

void hp_close_all(struct helper_pool *p)
{
	while (p->n > 0)
		hp_drop(p, 0);
}

void hp_close_from(int fd)
{
	if (syscall(SYS_close_range, fd, ~0U, 0) == 0)
		return;
	for (; fd < 65536; fd++)
		close(fd);
}
