/* A session's sandbox ports: the port helper process (see sports.h). */
#include "sports.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/nsfs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

#define BUF 65536

/* ------------------------------------------------------------------ the head */

int sp_head_port(const char *buf, size_t len, int *port, size_t *head_len)
{
	const char *end = NULL, *p, *eol;
	static const char name[] = "x-sandbox-port:";
	int found = 0;

	*head_len = 0;
	for (size_t i = 0; i + 3 < len; i++)
		if (memcmp(buf + i, "\r\n\r\n", 4) == 0) {
			end = buf + i + 4;
			break;
		}
	if (end == NULL)
		return len >= SP_HEAD_MAX ? -1 : 0;
	if ((size_t)(end - buf) > SP_HEAD_MAX || memchr(buf, '\0', (size_t)(end - buf)) != NULL)
		return -1;
	*head_len = (size_t)(end - buf);
	p = memchr(buf, '\n', (size_t)(end - buf));
	/* the header lines after the request line */
	for (p = p ? p + 1 : end; p < end - 2; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			return -1;
		if ((size_t)(eol - p) > sizeof name - 1 && strncasecmp(p, name, sizeof name - 1) == 0) {
			const char *v = p + sizeof name - 1;
			long n = 0;
			int digits = 0;

			if (found++)
				return -2;
			while (*v == ' ' || *v == '\t')
				v++;
			for (; *v >= '0' && *v <= '9' && digits < 6; v++, digits++)
				n = n * 10 + (*v - '0');
			while (*v == ' ' || *v == '\t')
				v++;
			if (digits == 0 || (*v != '\r' && *v != '\n') || n < 1 || n > 65535 ||
			    n == SP_ENVD_PORT)
				return -2;
			*port = (int)n;
		}
	}
	return found == 1 ? 1 : -2;
}

/* ------------------------------------------------------------------ the helper */

struct half {
	char buf[BUF];
	size_t len, off;
	int eof;   /* the source ended: shut the destination's write side once drained */
	int shut;
};

struct conn {
	int c, s;           /* nginx's side, the sandbox's side (-1: not yet) */
	int connecting;
	int port;
	struct half up;     /* c -> s (first the head) */
	struct half down;   /* s -> c */
	double last;
	double head_until;  /* reading the head until then (0: read) */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void say(int fd, int status, const char *reason, const char *sid, int port,
		const char *msg)
{
	char body[512], out[1024];
	int bn = snprintf(body, sizeof body,
			  "{\"code\":%d,\"message\":\"%s\",\"sandboxId\":\"%s\",\"port\":%d}", status,
			  msg, sid, port);
	int n = snprintf(out, sizeof out,
			 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
			 "Connection: close\r\nCache-Control: no-store\r\n\r\n%s",
			 status, reason, bn, body);

	if (n > 0 && (size_t)n < sizeof out && send(fd, out, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return;
}

static void conn_close(struct conn *k)
{
	if (k->c >= 0)
		close(k->c);
	if (k->s >= 0)
		close(k->s);
	k->c = k->s = -1;
}

/* Moves what h holds to fd; reads more from src when h is empty. -1: this connection
 * is over. */
static int pump(struct half *h, int src, int dst, short rev_src, short rev_dst)
{
	ssize_t n;

	if (h->len == h->off && !h->eof && (rev_src & (POLLIN | POLLHUP | POLLERR))) {
		n = recv(src, h->buf, sizeof h->buf, MSG_DONTWAIT);
		if (n > 0) {
			h->len = (size_t)n;
			h->off = 0;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			h->eof = 1;
	}
	if (h->off < h->len && (rev_dst & POLLOUT)) {
		n = send(dst, h->buf + h->off, h->len - h->off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0)
			h->off += (size_t)n;
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
	}
	if (h->eof && h->off == h->len && !h->shut) {
		shutdown(dst, SHUT_WR);
		h->shut = 1;
	}
	return 0;
}

static void start_connect(struct conn *k, const char *sid)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)k->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	k->s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (k->s < 0) {
		say(k->c, 503, "Service Unavailable", sid, k->port, "no socket for the port");
		conn_close(k);
		return;
	}
	if (connect(k->s, (struct sockaddr *)&a, sizeof a) == 0)
		k->connecting = 0;
	else if (errno == EINPROGRESS)
		k->connecting = 1;
	else {
		say(k->c, 502, "Bad Gateway", sid, k->port,
		    "The sandbox is running but port is not open");
		conn_close(k);
	}
}

/* One step of a connection after poll: rc (revents) of its two descriptors. */
static void step(struct conn *k, short rc, short rs, const char *sid, double t)
{
	if (k->head_until > 0) {
		ssize_t n = 0;
		size_t hl;
		int r;

		if (rc & (POLLIN | POLLHUP | POLLERR))
			n = recv(k->c, k->up.buf + k->up.len, SP_HEAD_MAX - k->up.len, MSG_DONTWAIT);
		if (n > 0)
			k->up.len += (size_t)n;
		else if (n == 0 && (rc & (POLLIN | POLLHUP))) {
			conn_close(k);
			return;
		}
		r = sp_head_port(k->up.buf, k->up.len, &k->port, &hl);
		if (r == 0 && t < k->head_until)
			return;
		if (r != 1) {
			say(k->c, 400, "Bad Request", sid, 0, "a request head naming its port");
			conn_close(k);
			return;
		}
		k->head_until = 0;
		k->last = t;
		start_connect(k, sid);
		return;
	}
	if (k->connecting) {
		int e = 0;
		socklen_t el = sizeof e;

		if (!(rs & (POLLOUT | POLLERR | POLLHUP)))
			return;
		if (getsockopt(k->s, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e != 0) {
			say(k->c, 502, "Bad Gateway", sid, k->port,
			    "The sandbox is running but port is not open");
			conn_close(k);
			return;
		}
		k->connecting = 0;
		rs = POLLOUT;
	}
	if (rc | rs)
		k->last = t;
	if (pump(&k->up, k->c, k->s, rc, rs) < 0 || pump(&k->down, k->s, k->c, rs, rc) < 0 ||
	    (k->up.shut && k->down.shut))
		conn_close(k);
}

static void __attribute__((noreturn)) helper(const struct sp_conf *c, int lfd)
{
	struct conn *k = calloc((size_t)c->max_conns, sizeof *k);
	struct pollfd *p = calloc((size_t)c->max_conns * 2 + 1, sizeof *p);
	int n = 0;

	if (k == NULL || p == NULL)
		_exit(1);
	for (;;) {
		double t = now_ms();
		int np = 0, wait = 1000;

		p[np++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (int i = 0; i < n; i++) {
			struct conn *x = &k[i];
			short ec = 0, es = 0;

			if (x->head_until > 0)
				ec = POLLIN;
			else if (x->connecting)
				es = POLLOUT;
			else {
				if (x->up.off == x->up.len && !x->up.eof)
					ec |= POLLIN;
				if (x->down.off < x->down.len)
					ec |= POLLOUT;
				if (x->down.off == x->down.len && !x->down.eof)
					es |= POLLIN;
				if (x->up.off < x->up.len)
					es |= POLLOUT;
			}
			p[np++] = (struct pollfd){ .fd = x->c, .events = ec };
			p[np++] = (struct pollfd){ .fd = x->s, .events = es };
		}
		if (poll(p, (nfds_t)np, wait) < 0 && errno != EINTR)
			_exit(1);
		t = now_ms();
		for (int i = 0; i < n; i++) {
			struct conn *x = &k[i];

			step(x, p[1 + 2 * i].revents, x->s >= 0 ? p[2 + 2 * i].revents : 0, c->sid, t);
			if (x->c >= 0 && ((x->head_until > 0 && t >= x->head_until) ||
					  t - x->last > (double)c->idle_ms))
				conn_close(x);
		}
		for (int i = n; i-- > 0;)
			if (k[i].c < 0)
				k[i] = k[--n];
		if (p[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd >= 0 && n == c->max_conns) {
				say(fd, 503, "Service Unavailable", c->sid, 0,
				    "too many connections to this sandbox's ports");
				close(fd);
			} else if (fd >= 0) {
				memset(&k[n], 0, sizeof k[n]);
				k[n].c = fd;
				k[n].s = -1;
				k[n].last = t;
				k[n].head_until = t + SP_HEAD_MS;
				n++;
			}
		}
	}
}

/* In the child, root: join the sandbox's network namespace (owned by the slot uid's
 * user namespace), then drop everything. 0 or -1. */
static int enter(const struct sp_conf *c)
{
	char path[64];
	int netns, userns;
	uid_t owner;

	snprintf(path, sizeof path, "/proc/%ld/ns/net", (long)c->child);
	if ((netns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if ((userns = ioctl(netns, NS_GET_USERNS)) < 0 ||
	    ioctl(userns, NS_GET_OWNER_UID, &owner) < 0 || owner != c->uid ||
	    setns(netns, CLONE_NEWNET) < 0)
		return -1;
	close(userns);
	close(netns);
	for (int cap = 0; prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0; cap++)
		;
	if (chdir("/") < 0 || setgroups(0, NULL) < 0 || setresgid(c->uid, c->uid, c->uid) < 0 ||
	    setresuid(c->uid, c->uid, c->uid) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0)
		return -1;
	return 0;
}

pid_t sp_start(const struct sp_conf *c, char *err, size_t n)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int lfd, st[2];
	mode_t old;
	pid_t pid, parent;
	char ok = 0;

	if (strlen(c->sock_path) >= sizeof a.sun_path) {
		snprintf(err, n, "session_ports_dir: the socket path is too long");
		return -1;
	}
	memcpy(a.sun_path, c->sock_path, strlen(c->sock_path) + 1);
	unlink(c->sock_path);
	if ((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
		snprintf(err, n, "ports socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0177);
	if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 64) < 0 ||
	    chown(c->sock_path, 0, c->sock_gid) < 0 || chmod(c->sock_path, 0660) < 0) {
		umask(old);
		snprintf(err, n, "ports socket %s: %s", c->sock_path, strerror(errno));
		close(lfd);
		unlink(c->sock_path);
		return -1;
	}
	umask(old);
	if (pipe2(st, O_CLOEXEC) < 0) {
		snprintf(err, n, "pipe: %s", strerror(errno));
		close(lfd);
		unlink(c->sock_path);
		return -1;
	}
	parent = getpid();
	pid = fork();
	if (pid == 0) {
		signal(SIGPIPE, SIG_IGN);
		/* the parent-death signal after the uid change: a change of credentials
		 * clears it (and the parent may be gone by then: checked after) */
		if (enter(c) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		close(st[0]);
		if (write(st[1], "1", 1) != 1)
			_exit(126);
		close(st[1]);
		helper(c, lfd);
	}
	close(st[1]);
	close(lfd);
	if (pid > 0 && read(st[0], &ok, 1) == 1 && ok == '1') {
		close(st[0]);
		return pid;
	}
	close(st[0]);
	snprintf(err, n, "the port helper could not join the sandbox's network namespace");
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	unlink(c->sock_path);
	return -1;
}

void sp_stop(pid_t helper_pid, const char *sock_path)
{
	if (helper_pid > 0) {
		kill(helper_pid, SIGKILL);
		waitpid(helper_pid, NULL, 0);
	}
	if (sock_path != NULL && *sock_path)
		unlink(sock_path);
}

pid_t sp_session_start(const struct cfg *cfg, const char *sid, pid_t child, uid_t uid,
		       char *sock, size_t socklen, char *err, size_t n)
{
	struct sp_conf c = { .sock_path = sock, .child = child, .uid = uid, .sid = sid,
			     .max_conns = (int)cfg->session_port_connections,
			     .idle_ms = cfg->session_port_idle_seconds * 1000 };
	const struct group *gr;

	sock[0] = '\0';
	if (cfg->session_ports_dir[0] == '\0')
		return 0;
	if (child <= 0) {
		snprintf(err, n, "the sandbox's pid is unknown");
		return -1;
	}
	if (mkdir(cfg->session_ports_dir, 0711) < 0 && errno != EEXIST) {
		snprintf(err, n, "session_ports_dir %s: %s", cfg->session_ports_dir, strerror(errno));
		return -1;
	}
	c.sock_gid = getegid();
	if (cfg->fcgi_socket_group[0] != '\0') {
		if ((gr = getgrnam(cfg->fcgi_socket_group)) == NULL) {
			snprintf(err, n, "fcgi_socket_group: no group named '%s'", cfg->fcgi_socket_group);
			return -1;
		}
		c.sock_gid = gr->gr_gid;
	}
	if ((size_t)snprintf(sock, socklen, "%s/%s.sock", cfg->session_ports_dir, sid) >= socklen) {
		snprintf(err, n, "session_ports_dir: the socket path is too long");
		sock[0] = '\0';
		return -1;
	}
	return sp_start(&c, err, n);
}
