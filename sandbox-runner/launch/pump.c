/* A sandbox's byte streams (see pump.h). */
#include "pump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* A buffer this large is given back once it is empty (a burst the database lagged
 * behind, or a large output of a job that stored it live). */
#define KEEP_CAP (256 * 1024)

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

static void keep_head(struct pump_out *o, const unsigned char *p, size_t n)
{
	size_t room = PUMP_HEAD - o->head_len;

	if (n > room)
		n = room;
	memcpy(o->head + o->head_len, p, n);
	o->head_len += n;
}

int pump_drain(int *fd, struct pump_out *o)
{
	unsigned char tmp[65536];
	int hit = 0;

	for (;;) {
		ssize_t r = read(*fd, tmp, sizeof tmp);
		size_t keep, total = pump_total(o);

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
		if (total + keep > o->limit) {
			keep = o->limit - total;
			o->trunc = 1;
			hit = 1;
		}
		if (keep == 0)
			continue;
		if (reserve(o, keep) < 0)
			return 1;
		if (o->len == 0)
			o->since = util_mono_ms();
		keep_head(o, tmp, keep);
		memcpy(o->data + o->len, tmp, keep);
		o->len += keep;
	}
}

void pump_consume(struct pump_out *o, size_t n)
{
	if (n > o->len)
		n = o->len;
	memmove(o->data, o->data + n, o->len - n);
	o->len -= n;
	o->base += n;
	/* What is left came no earlier than the oldest byte did: `since` stays, so it is
	 * flushed no later than that byte would have been. */
	if (o->len > 0)
		return;
	o->since = 0;
	if (o->cap > KEEP_CAP) {
		free(o->data);
		o->data = NULL;
		o->cap = 0;
	}
}

size_t pump_total(const struct pump_out *o)
{
	return o->base + o->len;
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
