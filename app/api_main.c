/*
 * sandbox-api: the FastCGI side of the job API.
 *
 * Theory of operation. The master opens the FastCGI listening socket (umask 0111:
 * nginx workers run as another user), forks `api_workers` workers and then only
 * supervises: a worker that dies is replaced (with a short pause if workers die
 * in a loop); SIGTERM/SIGINT is forwarded to every worker and the master exits when
 * the last one is gone. Workers block in FCGX_Accept_r on the shared socket (Linux
 * needs no accept lock), each with its own MariaDB connection opened lazily after
 * the fork. A worker's SIGTERM handler only sets a flag and asks libfcgi to stop
 * accepting: the request in flight still completes. A shared-memory board records
 * which workers are long-polling so waits never occupy the whole pool.
 */
#include <errno.h>
#include <fcgiapp.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "db.h"
#include "http.h"
#include "jobcache.h"
#include "log.h"
#include "routes.h"

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

static void worker_loop(const struct cfg *cfg, int listen_fd, struct wait_board *board,
			int slot)
{
	FCGX_Request fr;
	struct api_ctx ctx = { .cfg = cfg, .board = board, .slot = slot, .stop = &stop_flag };

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		exit(0);
	handle(SIGTERM, on_term);
	handle(SIGINT, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (FCGX_InitRequest(&fr, listen_fd, FCGI_FAIL_ACCEPT_ON_INTR) != 0)
		exit(1);
	while (!stop_flag) {
		struct req r;
		struct timespec t0, t1;
		char status[16], ms[24];
		int rc = FCGX_Accept_r(&fr);

		if (rc < 0) {
			if (stop_flag || rc == -EINTR)
				continue;
			snprintf(status, sizeof status, "%d", rc);
			log_kv("error", "accept", "rc", status, (char *)NULL);
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = http_read(&r, &fr, cfg->max_body_bytes);
		if (rc == 413)
			http_send_error(&r, 413, "payload_too_large", "request body too large", NULL,
					NULL);
		else if (rc != 0)
			http_send_error(&r, 400, "invalid_request", "malformed request body", NULL,
					NULL);
		else
			routes_handle(&ctx, &r);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		snprintf(status, sizeof status, "%d", r.status);
		snprintf(ms, sizeof ms, "%.1f",
			 (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
		log_kv("info", "request", "method", r.method, "path", r.path, "status", status, "ms",
		       ms, (char *)NULL);
		http_free(&r);
		FCGX_Finish_r(&fr);
	}
	FCGX_Free(&fr, 1);
	jc_clear();
	db_close(ctx.db);
	exit(0);
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

static pid_t spawn(const struct cfg *cfg, int fd, struct wait_board *board, int slot,
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

static void reap(pid_t *pids, long long n, struct wait_board *board, int *died)
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
			board->waiting[i] = 0;
			(*died)++;
		}
	}
}

static void master(const struct cfg *cfg, int fd, struct wait_board *board)
{
	long long n = cfg->api_workers;
	pid_t pids[API_MAX_WORKERS] = { 0 };
	char num[24];

	snprintf(num, sizeof num, "%lld", n);
	log_kv("info", "started", "workers", num, "socket", cfg->fcgi_socket, (char *)NULL);
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
	struct wait_board *board;
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
	board = mmap(NULL, sizeof *board, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (board == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(board, 0, sizeof *board);
	clear_stale_socket(cfg.fcgi_socket);
	umask(0111);
	fd = FCGX_OpenSocket(cfg.fcgi_socket, 1024);
	umask(0022);
	if (fd < 0)
		die("cannot listen on %s", cfg.fcgi_socket);
	write_pid(pidfile);
	master(&cfg, fd, board);
	close(fd);
	unlink(cfg.fcgi_socket);
	if (pidfile)
		unlink(pidfile);
	return 0;
}
