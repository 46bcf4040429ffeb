#include "pump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Room for n more bytes: 0, or -1 when memory ran out. */
static int reserve(struct pump_out *o, size_t n)
{
	size_t cap = o->cap ? o->cap : 65536;
	unsigned char *p;

	if (o->len + n <= o->cap)
		return 0;
	while (cap < o->len + n)
		cap *= 2;
	p = realloc(o->data, cap);
	if (p == NULL)
		return -1;
	o->data = p;
	o->cap = cap;
	return 0;
}

int pump_drain(int *fd, struct pump_out *o)
{
	unsigned char tmp[65536];
	int hit = 0;

	for (;;) {
		ssize_t r = read(*fd, tmp, sizeof tmp);
		size_t keep;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return hit; /* EAGAIN: nothing more for now */
		if (r == 0) {
			o->eof = 1;
			close_fd(fd);
			return hit;
		}
		keep = (size_t)r;
		if (o->len + keep > o->limit) {
			keep = o->limit - o->len;
			o->trunc = 1;
			hit = 1;
		}
		if (reserve(o, keep) < 0)
			return 1;
		memcpy(o->data + o->len, tmp, keep);
		o->len += keep;
	}
}

void pump_feed(int *fd, const unsigned char *in, size_t len, size_t *off)
{
	ssize_t w = write(*fd, in + *off, len - *off);

	if (w > 0)
		*off += (size_t)w;
	if ((w < 0 && errno != EAGAIN && errno != EINTR) || *off == len)
		close_fd(fd);
}

void pump_free(struct pump_out *o)
{
	free(o->data);
	memset(o, 0, sizeof *o);
}
