/* A growable byte string with git strbuf's invariants: buf is never NULL and always
 * NUL-terminated (len bytes, then '\0'), so it can be passed as a C string at any
 * time. Appends never truncate: on allocation failure the buffer keeps what it had
 * and `failed` is set, so a caller may append many times and check once. */
#ifndef SANDBOX_STRBUF_H
#define SANDBOX_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t len, alloc; /* alloc 0: buf points at a shared empty string */
	int failed;
};

extern char strbuf_empty[];
#define STRBUF_INIT { strbuf_empty, 0, 0, 0 }

void sb_init(struct strbuf *sb);
/* Room for `extra` more bytes (plus the NUL): 0, or -1 and failed set. */
int sb_grow(struct strbuf *sb, size_t extra);
int sb_add(struct strbuf *sb, const void *data, size_t n);
int sb_adds(struct strbuf *sb, const char *s);
int sb_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void sb_reset(struct strbuf *sb);
/* Frees the buffer; sb is empty again (and usable). */
void sb_release(struct strbuf *sb);
/* The malloc'd string (caller frees; never NULL unless allocation fails); sb is empty
 * again. */
char *sb_detach(struct strbuf *sb, size_t *len);

#endif
