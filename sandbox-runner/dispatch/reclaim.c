/* Finding a lost lease's supervisor (reclaim.h). A supervisor's command line is
 * `sandbox-runner --config F --supervise[-session] ID --slot N --runner-id R ...`
 * (an exec'd one: NUL-separated words; a spare or prewarmed holder rewrites its argv
 * area to the same words joined by spaces). The runner id is unique per claim, so it
 * names one supervisor; only root's processes are looked at (a sandbox's processes
 * run as slot uids and cannot pose as one). */
#include "reclaim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define CMDLINE_MAX 4096

int rc_slot_of(const char *runner_id, const char *host, const char *kind, long long max)
{
	size_t hl = strlen(host), kl = strlen(kind);
	const char *p;
	char num[16];
	size_t n;
	long long v;

	if (runner_id == NULL || hl == 0 || strncmp(runner_id, host, hl) != 0 ||
	    runner_id[hl] != '/')
		return -1;
	p = runner_id + hl + 1;
	if (strncmp(p, kind, kl) != 0 || p[kl] != '-')
		return -1;
	p += kl + 1;
	n = strcspn(p, "/");
	if (n == 0 || n >= sizeof num || p[n] != '/')
		return -1;
	memcpy(num, p, n);
	num[n] = '\0';
	if (util_parse_ll(num, 0, max - 1, &v) < 0)
		return -1;
	return (int)v;
}

int rc_cmdline_has(const char *cmdline, size_t len, const char *runner_id)
{
	static const char opt[] = "--runner-id";
	size_t ol = sizeof opt - 1, rl = strlen(runner_id);

	if (rl == 0)
		return 0;
	for (size_t i = 0; i + ol + 1 + rl <= len; i++) {
		const char *p = cmdline + i;
		char sep = p[ol], end;

		if ((i > 0 && cmdline[i - 1] != '\0' && cmdline[i - 1] != ' ') ||
		    memcmp(p, opt, ol) != 0 || (sep != '\0' && sep != ' ') ||
		    memcmp(p + ol + 1, runner_id, rl) != 0)
			continue;
		end = i + ol + 1 + rl < len ? p[ol + 1 + rl] : '\0';
		if (end == '\0' || end == ' ')
			return 1;
	}
	return 0;
}

/* /proc/PID/cmdline of a root process: its length, or -1. */
static ssize_t root_cmdline(int procfd, const char *pid, char *buf, size_t n)
{
	struct stat st;
	char path[300];
	ssize_t r;
	int fd;

	if (fstatat(procfd, pid, &st, 0) < 0 || st.st_uid != 0)
		return -1;
	snprintf(path, sizeof path, "%s/cmdline", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	close(fd);
	return r;
}

/* 1 when /proc/PID/stat says the process has exited (zombie or dead). */
static int exited(int procfd, const char *pid)
{
	char path[300], buf[512], *p;
	ssize_t r;
	int fd;

	snprintf(path, sizeof path, "%s/stat", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1; /* gone meanwhile */
	r = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (r <= 0)
		return 1;
	buf[r] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold anything */
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

int rc_uid_running(uid_t uid)
{
	struct dirent *de;
	struct stat st;
	int n = 0, procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = procfd >= 0 ? fdopendir(procfd) : NULL;

	if (d == NULL) {
		if (procfd >= 0)
			close(procfd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		long long pid;

		if (util_parse_ll(de->d_name, 1, 1LL << 30, &pid) < 0 ||
		    fstatat(dirfd(d), de->d_name, &st, 0) < 0 || st.st_uid != uid)
			continue;
		if (!exited(dirfd(d), de->d_name))
			n++;
	}
	closedir(d);
	return n;
}

pid_t rc_find_supervisor(const char *runner_id)
{
	char buf[CMDLINE_MAX];
	struct dirent *de;
	pid_t found = 0, self = getpid();
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = procfd >= 0 ? fdopendir(procfd) : NULL;

	if (d == NULL) {
		if (procfd >= 0)
			close(procfd);
		return 0;
	}
	while (found == 0 && (de = readdir(d)) != NULL) {
		long long pid;
		ssize_t n;

		if (util_parse_ll(de->d_name, 1, 1LL << 30, &pid) < 0 || pid == self)
			continue;
		n = root_cmdline(dirfd(d), de->d_name, buf, sizeof buf);
		if (n > 0 && rc_cmdline_has(buf, (size_t)n, runner_id))
			found = (pid_t)pid;
	}
	closedir(d);
	return found;
}
