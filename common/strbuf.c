/* A growable byte string with git strbuf's invariants (see strbuf.h). */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char strbuf_empty[1];

void sb_init(struct strbuf *sb)
{
	sb->buf = strbuf_empty;
	sb->len = sb->alloc = 0;
	sb->failed = 0;
}

int sb_grow(struct strbuf *sb, size_t extra)
{
	size_t want, cap;
	char *n;

	if (extra > (size_t)-1 / 2 - sb->len - 1)
		goto fail;
	want = sb->len + extra + 1;
	if (want <= sb->alloc)
		return 0;
	cap = sb->alloc ? sb->alloc : 64;
	while (cap < want)
		cap = cap / 2 * 3 + 16;
	n = realloc(sb->alloc ? sb->buf : NULL, cap);
	if (n == NULL)
		goto fail;
	if (sb->alloc == 0)
		n[0] = '\0';
	sb->buf = n;
	sb->alloc = cap;
	return 0;
fail:
	sb->failed = 1;
	return -1;
}

int sb_add(struct strbuf *sb, const void *data, size_t n)
{
	if (sb_grow(sb, n) < 0)
		return -1;
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
	return 0;
}

int sb_adds(struct strbuf *sb, const char *s)
{
	return sb_add(sb, s, strlen(s));
}

int sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc ? sb->alloc - sb->len : 0, fmt, ap);
	if (n < 0) {
		va_end(again);
		sb->failed = 1;
		return -1;
	}
	if (sb->alloc == 0 || (size_t)n >= sb->alloc - sb->len) {
		if (sb_grow(sb, (size_t)n) < 0) {
			va_end(again);
			if (sb->alloc)
				sb->buf[sb->len] = '\0';
			return -1;
		}
		vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, again);
	}
	va_end(again);
	sb->len += (size_t)n;
	return 0;
}

int sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = sb_vaddf(sb, fmt, ap);
	va_end(ap);
	return rc;
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

void sb_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	sb_init(sb);
}

char *sb_detach(struct strbuf *sb, size_t *len)
{
	char *s;

	if (sb->alloc == 0 && sb_grow(sb, 0) < 0)
		return NULL;
	s = sb->buf;
	if (len)
		*len = sb->len;
	sb_init(sb);
	return s;
}
