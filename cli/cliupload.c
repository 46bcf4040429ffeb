/* Local files into requests: read whole, or streamed as attachments (see cliupload.h). */
#include "cliupload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cliargs.h"
#include "clihttp.h"
#include "climsg.h"
#include "util.h"

#define FILE_MAX (16u << 20) /* what we read into memory: a --source program, a token file */

int cli_read_fd(int fd, struct strbuf *sb)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return sb->failed ? -1 : 0;
		if (sb->len + (size_t)n > FILE_MAX) {
			errno = EFBIG;
			return -1;
		}
		sb_add(sb, buf, (size_t)n);
	}
}

int cli_read_local(const char *name, struct strbuf *sb, int *exec)
{
	struct stat st;
	int fd, rc;

	if (exec)
		*exec = 0;
	if (strcmp(name, "-") == 0)
		fd = 0;
	else if ((fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		cli_say("%s: %s", name, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || (fd != 0 && !S_ISREG(st.st_mode))) {
		cli_say("%s: not a regular file", name);
		if (fd != 0)
			close(fd);
		return -1;
	}
	if (exec)
		*exec = fd != 0 && (st.st_mode & 0111);
	rc = cli_read_fd(fd, sb);
	if (rc < 0)
		cli_say("%s: %s", name, strerror(errno));
	if (fd != 0)
		close(fd);
	return rc;
}

/* The attachments of the one request being built (a command sends one). */
#define MAX_ATTACH 256

static struct attach {
	char marker[48];
	char *name;
	int fd;
	unsigned long long size;
} att[MAX_ATTACH];
static size_t natt;

void cli_attach_release(void)
{
	for (size_t i = 0; i < natt; i++) {
		if (att[i].fd >= 0)
			close(att[i].fd);
		free(att[i].name);
	}
	natt = 0;
}

/* Copies fd's bytes into an unnamed temporary file: its fd (at offset 0), or -1. */
static int spool(int fd)
{
	const char *dir = getenv("TMPDIR");
	char buf[65536];
	int t = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (t < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		while (w < n) {
			ssize_t k = write(t, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				goto fail;
			w += k;
		}
	}
	if (lseek(t, 0, SEEK_SET) == 0)
		return t;
fail:
	{
		int e = errno;

		close(t);
		errno = e;
	}
	return -1;
}

int cli_open_local(const char *name, unsigned long long *size, int *exec)
{
	struct stat st;
	int fd;

	if (exec)
		*exec = 0;
	if (strcmp(name, "-") == 0)
		fd = spool(0);
	else
		fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		cli_say("%s: %s", name, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		cli_say("%s: not a regular file", name);
		close(fd);
		return -1;
	}
	if (exec)
		*exec = strcmp(name, "-") != 0 && (st.st_mode & 0111);
	*size = (unsigned long long)st.st_size;
	return fd;
}

int cli_attach_b64(json_t *obj, const char *key, const char *local, int *exec)
{
	struct attach *a;
	unsigned char rnd[8];

	if (natt >= MAX_ATTACH)
		return cli_usage("at most %d files per request", MAX_ATTACH);
	a = &att[natt];
	if ((a->fd = cli_open_local(local, &a->size, exec)) < 0)
		return CLI_EXIT_LOCAL;
	if (util_random(rnd, sizeof rnd) < 0 || !(a->name = strdup(local))) {
		close(a->fd);
		cli_say("%s: could not prepare the upload", local);
		return CLI_EXIT_LOCAL;
	}
	snprintf(a->marker, sizeof a->marker, "sandbox-upload-%zu-%02x%02x%02x%02x%02x%02x%02x%02x",
		 natt, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	natt++;
	if (json_object_set_new(obj, key, json_string(a->marker))) {
		cli_say("%s: could not build the request", local);
		return CLI_EXIT_LOCAL;
	}
	return 0;
}

json_t *cli_post_streamed(const char *path, const json_t *req, long ok1, long ok2)
{
	char *text = json_dumps(req, JSON_COMPACT);
	struct ch_part parts[2 * MAX_ATTACH + 1];
	size_t np = 0, done = 0;
	json_t *j = NULL;

	if (!text) {
		cli_say("out of memory");
		return NULL;
	}
	/* Markers in the order they appear in the text (JSON object order is not ours). */
	while (done < strlen(text)) {
		const char *best = NULL;
		size_t bi = 0;

		for (size_t i = 0; i < natt; i++) {
			const char *m = strstr(text + done, att[i].marker);

			if (m && (!best || m < best)) {
				best = m;
				bi = i;
			}
		}
		if (!best)
			break;
		parts[np++] = (struct ch_part){ .mem = text + done, .len = (size_t)(best - (text + done)),
						.fd = -1 };
		parts[np++] = (struct ch_part){ .fd = att[bi].fd, .size = att[bi].size, .b64 = 1,
						.name = att[bi].name };
		done = (size_t)(best - text) + strlen(att[bi].marker);
	}
	if (np / 2 != natt) {
		cli_say("could not build the request (an upload marker is missing)");
		goto out;
	}
	parts[np++] = (struct ch_part){ .mem = text + done, .len = strlen(text + done), .fd = -1 };
	j = ch_json_parts("POST", path, parts, np, 600, ok1, ok2);
out:
	free(text);
	return j;
}
