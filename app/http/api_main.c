/*
 * sandbox-api: the FastCGI side of the job API.
 *
 * Theory of operation. The master opens the FastCGI listening socket, forks
 * `api_workers` workers and then only supervises: a worker that dies is replaced
 * (with a short pause if workers die in a loop); SIGTERM/SIGINT is forwarded to every
 * worker and the master exits when the last one is gone.
 *
 * The socket is mode 0660, group `fcgi_socket_group` (nginx's workers are in it) or,
 * with the key empty, the API's own group: it is created under umask 0177 (0600) and
 * only then given its group and 0660, so it is never reachable by anyone else, not
 * even for a moment. Linux checks write permission on the socket itself at connect(2);
 * its directory stays searchable.
 *
 * Workers accept connections themselves (accept4 on the shared, non-blocking socket;
 * Linux needs no accept lock) rather than inside FCGX_Accept_r, because libfcgi has no
 * read timeout: a client that connects and then stalls would pin a worker for ever.
 * Each worker is one poll() loop over the listening socket, the connections waiting
 * for their next request (new ones, and those nginx keeps open between requests:
 * fastcgi_keep_conn, up to POOL_MAX, so a kept connection never pins the worker), its
 * wake eventfd and the connections of the long-polls it holds; it serves one request
 * at a time. A new connection gets `api_read_timeout_seconds` for its first
 * byte (measured by the loop, which keeps serving its held requests meanwhile) and the
 * same time as SO_RCVTIMEO for every later read (params and body: a slow but active
 * client is fine, a silent one is dropped); then libfcgi reads it with no listening
 * socket of its own (-1): when it gives up on a connection it returns instead of
 * blocking in its own accept(). Each drop is one log line. Every worker has its own
 * MariaDB connection, opened lazily after the fork.
 *
 * Long-poll (app/http/waiter.h): a handler that waits hands the request to the waiter; the
 * worker keeps the request (its own FCGX_Request, so libfcgi's streams stay valid),
 * watches its connection for a hang-up (POLLRDHUP: the slot is freed, nothing is
 * answered), and runs the handler again when the waiter marks it ready or its
 * deadline passes. The read timeout never applies to a held request: it is answered,
 * not read. Connections are closed by finish(), never by libfcgi's select()-based
 * close, so descriptors above FD_SETSIZE are safe. A worker's SIGTERM handler only
 * sets a flag and asks libfcgi to stop: the request in flight still completes, and
 * every held request is answered with the state as it is before the worker exits.
 */
#include <errno.h>
#include <fcgiapp.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api_routes.h"
#include "auth.h"
#include "config.h"
#include "db.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "routes.h"
#include "util.h"
#include "waiter.h"
#include "wake.h"

static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t child_flag;

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...);

static void die(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	log_kv("fatal", "startup", "error", msg, (char *)NULL);
	exit(1);
}

static void on_term(int sig)
{
	(void)sig;
	stop_flag = 1;
	FCGX_ShutdownPending();
}

static void on_child(int sig)
{
	(void)sig;
	child_flag = 1;
}

static void handle(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: accept() must see EINTR */
	sigaction(sig, &sa, NULL);
}

/* Whole milliseconds since t0 (util_mono_ms). */
static long long ms_since(double t0)
{
	return (long long)(util_mono_ms() - t0);
}

static void log_drop(const char *reason, double t0)
{
	char ms[24];

	snprintf(ms, sizeof ms, "%lld", ms_since(t0));
	log_kv("warn", "connection_dropped", "reason", reason, "ms", ms, (char *)NULL);
}

/* A new connection from the (non-blocking) listening socket, with SO_RCVTIMEO set;
 * -1 when there is none (another worker took it) or on an error. */
static int accept_one(int listen_fd, long long timeout_s)
{
	struct timeval tv = { .tv_sec = (time_t)timeout_s };
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		if (e == EINTR || e == EAGAIN || e == EWOULDBLOCK || e == ECONNABORTED)
			return -1;
		log_kv("error", "accept", "error", strerror(e), (char *)NULL);
		if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM)
			/* out of descriptors or memory for now: do not spin (nanosleep, not
			 * util_sleep_ms: SIGTERM cuts it short) */
			nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0) {
		log_kv("error", "setsockopt", "error", strerror(errno), (char *)NULL);
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads the request's params from the connection already in fr.ipcFd. libfcgi's
 * fields "below here" are used on purpose (libfcgi 2.4.2, fcgiapp.h): keepConnection
 * stops FCGX_Accept_r from closing the connection before reading it, detached makes
 * a failed connection a plain close() (without the 2 s drain a stalled client could
 * prolong). On failure libfcgi has closed the connection and fr.ipcFd is -1. */
static int read_params(FCGX_Request *fr)
{
	int rc;

	fr->keepConnection = 1;
	fr->detached = 1;
	rc = FCGX_Accept_r(fr);
	fr->detached = 0;
	if (rc < 0 && fr->ipcFd >= 0) {
		close(fr->ipcFd);
		fr->ipcFd = -1;
	}
	return rc;
}

/* One request with its own FastCGI request object: libfcgi's streams point back at
 * it, so it never moves; a deferred request keeps it (and its connection, its
 * params, its body) until the waiter answers it. */
struct held {
	FCGX_Request fr;
	struct req r;
	double t0;
};

static struct held *held_new(void)
{
	struct held *h = calloc(1, sizeof *h);

	if (h != NULL && FCGX_InitRequest(&h->fr, -1, FCGI_FAIL_ACCEPT_ON_INTR) != 0) {
		free(h);
		h = NULL;
	}
	return h;
}

/* Ends the request and, unless nginx keeps the connection, closes it. libfcgi's own
 * close waits for the peer with select(), which must never see a descriptor at or
 * above FD_SETSIZE (a worker holding many long-polls has such descriptors): the
 * request is finished with the connection kept, the little nginx may still have sent
 * (the end of stdin) is read so that close() resets nothing, then it is closed. */
static void finish(FCGX_Request *fr)
{
	int keep = fr->keepConnection, fd;
	char trash[1024];

	fr->keepConnection = 1;
	fr->detached = 1; /* should libfcgi close it (a stream error): a plain close */
	FCGX_Finish_r(fr);
	fr->detached = 0;
	fr->keepConnection = keep;
	if (keep || (fd = fr->ipcFd) < 0)
		return;
	while (recv(fd, trash, sizeof trash, MSG_DONTWAIT) > 0)
		;
	close(fd);
	fr->ipcFd = -1;
}

/* The access log line and the metrics of an answered request. */
static void done(struct api_ctx *ctx, struct held *h)
{
	char status[16], ms[24];
	double took = util_mono_ms() - h->t0;
	long tenths = took > 0 ? (long)(took * 10.0 + 0.5) : 0; /* as "%.1f", without it */

	if (ctx->mx)
		mx_record(&ctx->mx->w[ctx->slot], h->r.route, h->r.status, took);
	snprintf(status, sizeof status, "%d", h->r.status);
	snprintf(ms, sizeof ms, "%ld.%ld", tenths / 10, tenths % 10);
	log_kv("info", "request", "method", h->r.method, "path", h->r.path, "status", status, "ms",
	       ms, (char *)NULL);
	http_free(&h->r);
}

/* One request on a connection whose params were read: 1 when the handler deferred it
 * to the waiter (the worker keeps h), 0 when it was answered (or dropped). */
static int serve(struct api_ctx *ctx, struct held *h)
{
	int rc;

	h->t0 = util_mono_ms();
	rc = http_read(&h->r, &h->fr, ctx->cfg->max_body_bytes);
	if (rc == 408) {
		log_drop("body_timeout", h->t0);
		http_free(&h->r);
		return 0; /* finishing closes: the input stream is in error */
	}
	if (rc == 413)
		http_send_error(&h->r, 413, "payload_too_large", "request body too large", NULL, NULL);
	else if (rc == 414)
		http_send_error(&h->r, 414, "uri_too_long", "request path longer than 2047 bytes",
				NULL, NULL);
	else if (rc != 0)
		http_send_error(&h->r, 400, "invalid_request", "malformed request body", NULL, NULL);
	else
		routes_handle(ctx, &h->r);
	wt_unreserve(&h->r); /* a handler's reservation never outlives it */
	if (h->r.wait.deferred)
		return 1;
	done(ctx, h);
	return 0;
}

/* The requests this worker holds for the waiter. */
static struct held **waits;
static size_t nwaits, waits_cap;

static int waits_push(struct held *h)
{
	if (nwaits == waits_cap) {
		size_t cap = waits_cap ? waits_cap * 2 : 64;
		struct held **p = reallocarray(waits, cap, sizeof *p);

		if (p == NULL)
			return -1;
		waits = p;
		waits_cap = cap;
	}
	waits[nwaits++] = h;
	return 0;
}

static int pool_keep(struct held *h);

/* Answers a held request: the same handler again, told not to wait. A handler may
 * extend its wait once (wt_extend: a session request its supervisor has taken but
 * not yet answered), never while the worker stops: then it is held again. */
static void resume(struct api_ctx *ctx, struct held *h, int stopping)
{
	wt_release(&h->r);
	h->r.wait.resumed = 1;
	h->r.wait.extended |= stopping;
	h->r.wait.stopping = stopping;
	routes_handle(ctx, &h->r);
	if (h->r.wait.deferred) {
		if (waits_push(h) == 0)
			return;
		wt_release(&h->r); /* no memory to hold it: answered now */
		h->r.wait.resumed = 1;
		h->r.status = 0;
		routes_handle(ctx, &h->r);
	}
	wt_unreserve(&h->r);
	done(ctx, h);
	finish(&h->fr);
	/* A connection nginx keeps goes back to the pool: closing it could race with
	 * nginx reusing it (a request sent on it would then fail). */
	if (h->fr.ipcFd >= 0 && pool_keep(h) == 0)
		return;
	h->fr.detached = 1; /* closed plainly, no select() */
	FCGX_Free(&h->fr, 1);
	free(h);
}

/* The client went away while its request waited: free the slot, answer nothing. */
static void abandon(struct held *h)
{
	char ms[24];

	wt_release(&h->r);
	snprintf(ms, sizeof ms, "%.1f", util_mono_ms() - h->t0);
	log_kv("info", "request", "method", h->r.method, "path", h->r.path, "status", "499",
	       "ms", ms, "reason", "client_gone", (char *)NULL);
	http_free(&h->r);
	h->fr.detached = 1; /* a plain close */
	FCGX_Free(&h->fr, 1);
	free(h);
}

/* One instance-wide poll, when this worker claimed the tick. */
static void poll_waits(struct api_ctx *ctx)
{
	char err[512];

	if (ctx->db == NULL && (ctx->db = db_open(ctx->cfg, err, sizeof err)) == NULL) {
		log_kv("error", "db_connect", "error", err, (char *)NULL);
		return;
	}
	ctx->db_used = util_mono_ms();
	if (wt_poll(ctx->db) < 0) {
		char code[16];
		snprintf(code, sizeof code, "%u", db_errno(ctx->db));
		log_kv("error", "wait_poll", "errno", code, "error", db_error(ctx->db), (char *)NULL);
		if (db_gone(ctx->db)) {
			db_close(ctx->db);
			ctx->db = NULL;
		}
	}
}

/* Answers the held requests that are due (condition, deadline, stop: all of them
 * when stopping), drops those whose client hung up (pfd: their poll results). */
static int wait_due(const struct held *h, int gone, int stopping, double now)
{
	return gone || stopping || wt_is_ready(&h->r) || now >= h->r.wait.deadline_ms;
}

/* The held requests about to be answered, their jobs read into the job cache in one
 * query (routes_prefetch): a tick that ends many waits answers them without a query
 * each. Only when several are due at once. */
static void prefetch_due(struct api_ctx *ctx, const struct pollfd *pfd, int stopping,
			 double now)
{
	static struct req **due;
	static size_t due_cap;
	size_t n = 0;

	for (size_t i = 0; i < nwaits; i++) {
		int gone = pfd && (pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR));

		if (gone || !wait_due(waits[i], 0, stopping, now))
			continue;
		if (n == due_cap) {
			size_t cap = due_cap ? due_cap * 2 : 64;
			struct req **p = reallocarray(due, cap, sizeof *p);

			if (p == NULL)
				return; /* only a cache fill: the answers come anyway */
			due = p;
			due_cap = cap;
		}
		due[n++] = &waits[i]->r;
	}
	if (n > 1)
		routes_prefetch(ctx, due, n);
}

static void run_waits(struct api_ctx *ctx, const struct pollfd *pfd, int stopping)
{
	double now = util_mono_ms();

	prefetch_due(ctx, pfd, stopping, now);
	for (size_t i = nwaits; i-- > 0;) {
		struct held *h = waits[i];
		int gone = pfd && (pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR));

		if (!wait_due(h, gone, stopping, now))
			continue;
		waits[i] = waits[--nwaits];
		if (gone)
			abandon(h);
		else
			resume(ctx, h, stopping);
	}
}

static struct mx_board *mx_shared;
/* api_wake_socket (waiter.h, "Wake-up"): bound by the master, polled by every
 * worker; -1: off, the waiter only ticks. */
static int api_wake_fd = -1;

/* The connections a worker waits on for their next request: new ones (their first
 * byte within the read timeout) and those nginx keeps open between requests
 * (fastcgi_keep_conn + upstream keepalive). A worker watches all of them together
 * with the listening socket, so a kept connection never pins it: whichever has a
 * request is served, one request at a time. */
#define POOL_MAX 32

struct conn {
	struct held *h;
	double t0;   /* accepted, or its last request answered */
	int kept;    /* it has served a request: nginx keeps it, an EOF is normal */
};

static struct conn pool[POOL_MAX];
static size_t npool;

/* A kept connection whose held request was answered waits for its next request. */
static int pool_keep(struct held *h)
{
	if (npool >= POOL_MAX)
		return -1;
	pool[npool++] = (struct conn){ .h = h, .t0 = util_mono_ms(), .kept = 1 };
	return 0;
}

static void held_free(struct held *h)
{
	h->fr.detached = 1; /* a plain close, no select() */
	FCGX_Free(&h->fr, 1);
	free(h);
}

static void pool_drop(size_t i)
{
	pool[i] = pool[--npool];
}

/* Milliseconds poll() may sleep: until the first connection's read timeout, the next
 * wait poll, the first deadline of a held request, or a second. */
static int sleep_ms(double now, double timeout_ms)
{
	double at = now + 1000.0;

	for (size_t i = 0; i < npool; i++)
		if (pool[i].t0 + timeout_ms < at)
			at = pool[i].t0 + timeout_ms;
	if (wt_any_waiting() && wt_next_poll_ms() < at)
		at = wt_next_poll_ms();
	for (size_t i = 0; i < nwaits; i++)
		if (waits[i]->r.wait.deadline_ms < at)
			at = waits[i]->r.wait.deadline_ms;
	return at <= now ? 0 : (int)(at - now) + 1;
}

/* 1 when the peer closed a kept connection in its idle time (nothing to read). */
static int peer_closed(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* pool[i] has something to read: its next request, served to the end (or held for
 * the waiter, which then owns the connection). */
static void serve_conn(struct api_ctx *ctx, size_t i, long long timeout_s)
{
	struct held *h = pool[i].h;
	double t0 = pool[i].t0;

	if (pool[i].kept && peer_closed(h->fr.ipcFd)) {
		held_free(h);
		pool_drop(i);
		return;
	}
	if (read_params(&h->fr) < 0) {
		log_drop(!pool[i].kept && ms_since(t0) >= timeout_s * 1000 - 50 ? "read_timeout"
										   : "closed_or_invalid",
			 t0);
		held_free(h);
		pool_drop(i);
		return;
	}
	if (serve(ctx, h)) {
		pool_drop(i);
		if (waits_push(h) == 0)
			return;
		resume(ctx, h, 1); /* no memory to hold it: answered now */
		return;
	}
	finish(&h->fr);
	if (h->fr.ipcFd < 0) {
		held_free(h);
		pool_drop(i);
		return;
	}
	pool[i].t0 = util_mono_ms(); /* kept by nginx: wait for its next request */
	pool[i].kept = 1;
}

/* 1 when a connection has bytes waiting to be read. */
static int has_bytes(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/* Connections that sent nothing within the read timeout: a new one is logged, a kept
 * one (nginx's idle keepalive) is just closed. One whose request came while this
 * worker served another (longer than the timeout: a session request it polls for, a
 * slow client's body) is not idle: the next round serves it. */
static void pool_expire(double now, long long timeout_s)
{
	for (size_t i = npool; i-- > 0;) {
		if (now - pool[i].t0 < 1000.0 * (double)timeout_s || has_bytes(pool[i].h->fr.ipcFd))
			continue;
		if (!pool[i].kept)
			log_drop("idle", pool[i].t0);
		held_free(pool[i].h);
		pool_drop(i);
	}
}

static void pool_accept(int listen_fd, long long timeout_s)
{
	struct held *h;
	int fd;

	if (npool >= POOL_MAX || (fd = accept_one(listen_fd, timeout_s)) < 0)
		return;
	if ((h = held_new()) == NULL) {
		close(fd);
		return;
	}
	h->fr.ipcFd = fd;
	pool[npool++] = (struct conn){ .h = h, .t0 = util_mono_ms(), .kept = 0 };
}

/* db_tx's retries and losses, into this worker's /metrics row (db_tx_observe). */
static void count_tx(void *row, enum db_tx_event ev)
{
	mx_db_tx(row, ev);
}

static void worker_loop(const struct cfg *cfg, int listen_fd, struct wt_board *board, int slot)
{
	struct api_ctx ctx = { .cfg = cfg, .mx = mx_shared, .slot = slot, .stop = &stop_flag };
	long long timeout_s = cfg->api_read_timeout_seconds;
	struct pollfd *pfd = NULL;
	size_t pfd_cap = 0;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		exit(0);
	handle(SIGTERM, on_term);
	handle(SIGINT, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	wt_attach(board, slot);
	db_tx_observe(count_tx, &mx_shared->w[slot]);
	while (!stop_flag) {
		size_t pw = nwaits, pp = npool, n_fd = nwaits + npool + 3;
		int n;

		if (pfd_cap < n_fd) {
			struct pollfd *p = reallocarray(pfd, n_fd + 64, sizeof *p);
			if (p == NULL) {
				nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
				continue;
			}
			pfd = p;
			pfd_cap = n_fd + 64;
		}
		/* The waiting requests first (index = their index in waits), then the
		 * connections waiting for a request, the listening socket (while the pool
		 * has room), the wake fd, the result wake-up socket. */
		for (size_t i = 0; i < pw; i++)
			pfd[i] = (struct pollfd){ .fd = waits[i]->fr.ipcFd, .events = POLLRDHUP };
		for (size_t i = 0; i < pp; i++)
			pfd[pw + i] = (struct pollfd){ .fd = pool[i].h->fr.ipcFd, .events = POLLIN };
		pfd[pw + pp] = (struct pollfd){ .fd = pp < POOL_MAX ? listen_fd : -1,
						.events = POLLIN };
		pfd[pw + pp + 1] = (struct pollfd){ .fd = wt_wake_fd(), .events = POLLIN };
		pfd[pw + pp + 2] = (struct pollfd){ .fd = api_wake_fd, .events = POLLIN };
		n = poll(pfd, n_fd, sleep_ms(util_mono_ms(), 1000.0 * (double)timeout_s));
		if (n < 0) {
			if (errno != EINTR)
				log_kv("error", "poll", "error", strerror(errno), (char *)NULL);
			continue;
		}
		if (pfd[pw + pp + 1].revents & POLLIN)
			wt_drain_wake();
		/* every worker sees the datagram; the one that reads it nudges the poll */
		if ((pfd[pw + pp + 2].revents & POLLIN) && wake_drain(api_wake_fd) > 0)
			wt_nudge(util_mono_ms());
		if (wt_claim_tick(util_mono_ms()))
			poll_waits(&ctx);
		run_waits(&ctx, pfd, 0);
		/* Backwards: pool_drop moves the last entry, already seen, into i. */
		for (size_t i = pp; i-- > 0;)
			if (pfd[pw + i].revents & (POLLIN | POLLHUP | POLLERR))
				serve_conn(&ctx, i, timeout_s);
		pool_expire(util_mono_ms(), timeout_s);
		if (pfd[pw + pp].revents & POLLIN)
			pool_accept(listen_fd, timeout_s);
	}
	/* Stopping: every held request gets its answer (the state as it is now). */
	run_waits(&ctx, NULL, 1);
	free(waits);
	free(pfd);
	while (npool > 0) {
		held_free(pool[npool - 1].h);
		npool--;
	}
	routes_release();
	db_close(ctx.db);
	exit(0);
}

/* Each held long-poll is a descriptor: let a worker hold as many as the hard limit
 * allows (poll(), never select(), watches them). */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Refuses to steal the socket of a live instance; removes a stale one. */
static void clear_stale_socket(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa.sun_path)
		die("fcgi_socket path too long: %s", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
		die("%s: another sandbox-api is listening", path);
	close(fd);
	if (unlink(path) < 0 && errno != ENOENT)
		die("unlink %s: %s", path, strerror(errno));
}

/* The socket's group: fcgi_socket_group, or the API's own. */
static gid_t socket_gid(const struct cfg *cfg)
{
	const struct group *gr;

	if (cfg->fcgi_socket_group[0] == '\0')
		return getegid();
	errno = 0;
	gr = getgrnam(cfg->fcgi_socket_group);
	if (gr == NULL)
		die("fcgi_socket_group: no group named '%s' (%s)", cfg->fcgi_socket_group,
		    errno ? strerror(errno) : "not found");
	return gr->gr_gid;
}

static void __attribute__((noreturn, format(printf, 2, 3))) die_unlink(const char *path,
								       const char *fmt, ...);

static void die_unlink(const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	unlink(path);
	die("%s", msg);
}

/* The listening socket, mode 0660 and group `gid` (see the theory of operation). */
static int open_socket(const struct cfg *cfg, gid_t gid)
{
	const char *path = cfg->fcgi_socket;
	struct stat st;
	mode_t old;
	int fd;

	clear_stale_socket(path);
	old = umask(0177);
	fd = FCGX_OpenSocket(path, 1024);
	umask(old);
	if (fd < 0)
		die("cannot listen on %s", path);
	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		die_unlink(path, "%s: not a socket after bind", path);
	if (st.st_gid != gid && lchown(path, (uid_t)-1, gid) < 0)
		die_unlink(path, "fcgi_socket_group: cannot give %s the group '%s' (gid %ld): %s",
			   path, cfg->fcgi_socket_group[0] ? cfg->fcgi_socket_group : "(own)",
			   (long)gid, strerror(errno));
	if (chmod(path, 0660) < 0)
		die_unlink(path, "cannot chmod %s to 0660: %s", path, strerror(errno));
	/* Non-blocking: every worker polls it with its other descriptors; the one
	 * whose accept4 wins takes the connection, the others see EAGAIN. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		die_unlink(path, "fcntl O_NONBLOCK on %s: %s", path, strerror(errno));
	return fd;
}

/* The result wake-up socket (wake_listen_group); without it the waiter only ticks. */
static void open_wake(const struct cfg *cfg)
{
	char err[512];

	if (cfg->api_wake_socket[0] == '\0')
		return;
	api_wake_fd = wake_listen_group(cfg->api_wake_socket, "api_wake_socket", err, sizeof err);
	if (api_wake_fd < 0)
		log_kv("warn", "wake_socket_unavailable", "error", err, "fallback",
		       "api_wait_tick_ms", (char *)NULL);
}

static pid_t spawn(const struct cfg *cfg, int fd, struct wt_board *board, int slot,
		   const sigset_t *orig)
{
	pid_t pid = fork();

	if (pid == 0) {
		sigprocmask(SIG_SETMASK, orig, NULL);
		worker_loop(cfg, fd, board, slot);
	}
	if (pid < 0)
		log_kv("error", "fork", "error", strerror(errno), (char *)NULL);
	return pid;
}

static void write_pid(const char *path)
{
	FILE *f;

	if (path == NULL)
		return;
	f = fopen(path, "we");
	if (f == NULL)
		die("pid file %s: %s", path, strerror(errno));
	fprintf(f, "%ld\n", (long)getpid());
	fclose(f);
}

static void reap(pid_t *pids, long long n, struct wt_board *board, int *died)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (long long i = 0; i < n; i++) {
			if (pids[i] != pid)
				continue;
			char p[16], how[32];
			snprintf(p, sizeof p, "%ld", (long)pid);
			if (WIFSIGNALED(st))
				snprintf(how, sizeof how, "signal %d", WTERMSIG(st));
			else
				snprintf(how, sizeof how, "exit %d", WEXITSTATUS(st));
			if (!stop_flag)
				log_kv("warn", "worker_died", "pid", p, "status", how, (char *)NULL);
			pids[i] = 0;
			wt_release_owner(board, (int)i);
			(*died)++;
		}
	}
}

static void master(const struct cfg *cfg, int fd, struct wt_board *board)
{
	long long n = cfg->api_workers;
	pid_t pids[API_MAX_WORKERS] = { 0 };
	char num[24], gid[24], tmo[24];
	struct stat st;

	snprintf(num, sizeof num, "%lld", n);
	snprintf(gid, sizeof gid, "%ld", lstat(cfg->fcgi_socket, &st) == 0 ? (long)st.st_gid : -1L);
	snprintf(tmo, sizeof tmo, "%lld", cfg->api_read_timeout_seconds);
	log_kv("info", "started", "workers", num, "socket", cfg->fcgi_socket, "socket_mode", "0660",
	       "socket_gid", gid, "read_timeout_s", tmo, (char *)NULL);
	sigset_t block, orig;

	/* Signals stay blocked except inside sigsuspend: none can slip in between the
	 * check of the flags and the wait. */
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &orig);
	while (!stop_flag) {
		int died = 0;

		for (long long i = 0; i < n; i++)
			if (pids[i] <= 0)
				pids[i] = spawn(cfg, fd, board, (int)i, &orig);
		if (!child_flag && !stop_flag)
			sigsuspend(&orig);
		child_flag = 0;
		reap(pids, n, board, &died);
		if (died > 1 && !stop_flag)
			sleep(1); /* a crash loop must not spin the CPU */
	}
	sigprocmask(SIG_SETMASK, &orig, NULL);
	for (long long i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	log_kv("info", "stopped", (char *)NULL);
}

static void usage(void)
{
	fprintf(stderr, "usage: sandbox-api --config FILE [--pid-file FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
					      { "pid-file", required_argument, NULL, 'p' },
					      { NULL, 0, NULL, 0 } };
	const char *config = NULL, *pidfile = NULL;
	struct cfg cfg;
	struct wt_board *board;
	char err[512];
	int c, fd;

	while ((c = getopt_long(argc, argv, "c:p:", opts, NULL)) != -1) {
		if (c == 'c')
			config = optarg;
		else if (c == 'p')
			pidfile = optarg;
		else
			usage();
	}
	if (config == NULL || optind != argc)
		usage();
	log_init("sandbox-api");
	if (cfg_load(&cfg, config, err, sizeof err) < 0)
		die("config: %s", err);
	if (cfg.api_workers > API_MAX_WORKERS)
		die("api_workers must be at most %d", API_MAX_WORKERS);
	handle(SIGTERM, on_term);
	handle(SIGINT, on_term);
	handle(SIGCHLD, on_child);
	signal(SIGPIPE, SIG_IGN);
	if (FCGX_Init() != 0)
		die("FCGX_Init failed");
	/* The long-poll board (app/http/waiter.h): shared by the workers, entries of a dead
	 * worker freed by the master. */
	board = wt_board_create(cfg.api_wait_capacity, cfg.api_wait_slots_per_key,
				(int)cfg.api_workers, cfg.api_wait_tick_ms);
	if (board == NULL)
		die("wait board: %s", strerror(errno));
	raise_fd_limit();
	/* The key cache's generation (app/http/auth.h): mapped here, inherited by every
	 * worker; `sandboxctl keys revoke` bumps it. */
	if (auth_cache_init(&cfg) < 0) {
		char gp[CFG_PATH_MAX + 32];

		if (auth_gen_path(&cfg, gp, sizeof gp) < 0)
			snprintf(gp, sizeof gp, "%s", AUTH_GEN_FILE);
		die("key generation file %s: %s", gp, strerror(errno));
	}
	/* Request counters for GET /metrics: one row per worker slot, shared, kept when a
	 * worker is replaced (counters only grow). */
	mx_shared = mmap(NULL, sizeof *mx_shared, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mx_shared == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	fd = open_socket(&cfg, socket_gid(&cfg));
	open_wake(&cfg);
	write_pid(pidfile);
	master(&cfg, fd, board);
	close(fd);
	wake_close(api_wake_fd, cfg.api_wake_socket);
	unlink(cfg.fcgi_socket);
	if (pidfile)
		unlink(pidfile);
	return 0;
}
