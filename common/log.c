#include "log.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redact.h"

static const char *log_prog = "sandbox";

void log_init(const char *prog)
{
	log_prog = prog;
}

/* Appends value, quoted when it holds a space, quote, '=' or control byte. */
static size_t put_value(char *buf, size_t pos, size_t n, const char *v)
{
	int quote = v[0] == '\0' || strpbrk(v, " \"=\\") != NULL;

	for (const char *p = v; *p && !quote; p++)
		quote = (unsigned char)*p < 0x20 || *p == 0x7f;
	if (quote && pos + 1 < n)
		buf[pos++] = '"';
	for (const char *p = v; *p && pos + 4 < n; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\') {
			buf[pos++] = '\\';
			buf[pos++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			pos += (size_t)snprintf(buf + pos, n - pos, "\\x%02x", c);
		} else {
			buf[pos++] = (char)c;
		}
	}
	if (quote && pos + 1 < n)
		buf[pos++] = '"';
	buf[pos < n ? pos : n - 1] = '\0';
	return pos < n ? pos : n - 1;
}

int log_format(char *buf, size_t n, const char *level, const char *event,
	       const char *const *kv, size_t nkv)
{
	char ts[32];
	struct timespec now;
	struct tm tm;
	size_t pos;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
	pos = (size_t)snprintf(buf, n, "ts=%s.%03ldZ level=%s prog=%s pid=%ld event=%s", ts,
			       now.tv_nsec / 1000000, level, log_prog, (long)getpid(), event);
	if (pos >= n)
		pos = n - 1;
	for (size_t i = 0; i + 1 < nkv; i += 2) {
		char val[1024];

		snprintf(val, sizeof val, "%s", kv[i + 1] ? kv[i + 1] : "-");
		redact(val);
		pos += (size_t)snprintf(buf + pos, n - pos, " %s=", kv[i]);
		if (pos >= n) {
			pos = n - 1;
			break;
		}
		pos = put_value(buf, pos, n, val);
	}
	return (int)pos;
}

void log_kv(const char *level, const char *event, ...)
{
	const char *kv[32];
	size_t nkv = 0;
	char line[4096];
	va_list ap;

	va_start(ap, event);
	while (nkv + 2 <= sizeof kv / sizeof kv[0]) {
		const char *k = va_arg(ap, const char *);
		if (k == NULL)
			break;
		kv[nkv++] = k;
		kv[nkv++] = va_arg(ap, const char *);
	}
	va_end(ap);
	log_format(line, sizeof line, level, event, kv, nkv);
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
}
