/* key=value log lines on stderr (see log.h). */
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

/* What snprintf(buf + pos, n - pos, "%s", s) would do with s of len bytes (pos < n):
 * copies what fits, terminates, and returns pos + len, the untruncated end. Every
 * request writes a line, and snprintf's format parsing was most of its cost. */
static size_t put(char *buf, size_t n, size_t pos, const char *s, size_t len)
{
	size_t room = n - pos - 1, k = len < room ? len : room;

	memcpy(buf + pos, s, k);
	buf[pos + k] = '\0';
	return pos + len;
}

/* put() of a NUL-terminated string, once pos reached n nothing more (the line is
 * truncated there, as one snprintf of the whole would have). */
static size_t puts_(char *buf, size_t n, size_t pos, const char *s)
{
	return pos < n ? put(buf, n, pos, s, strlen(s)) : pos;
}

/* "ts=YYYY-MM-DDTHH:MM:SS" of the current second, formatted once per second. */
static const char *ts_second(time_t sec)
{
	static time_t at = (time_t)-1;
	static char ts[40];
	struct tm tm;

	if (sec != at) {
		gmtime_r(&sec, &tm);
		memcpy(ts, "ts=", 3);
		if (strftime(ts + 3, sizeof ts - 3, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
			ts[3] = '\0';
		at = sec;
	}
	return ts;
}

/* Decimal digits of v >= 0 into d (at least 24 bytes), at least `width` of them. */
static const char *digits(long v, int width, char *d, size_t len)
{
	char *p = d + len - 1;

	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
		width--;
	} while ((v > 0 || width > 0) && p > d);
	return p;
}

int log_format(char *buf, size_t n, const char *level, const char *event,
	       const char *const *kv, size_t nkv)
{
	char num[24];
	struct timespec now;
	size_t pos = 0;
	long pid = (long)getpid();

	if (n == 0)
		return 0;
	clock_gettime(CLOCK_REALTIME, &now);
	/* as snprintf(buf, n, "ts=%s.%03ldZ level=%s prog=%s pid=%ld event=%s", ...) */
	buf[0] = '\0';
	pos = puts_(buf, n, pos, ts_second(now.tv_sec));
	pos = puts_(buf, n, pos, ".");
	pos = puts_(buf, n, pos, digits(now.tv_nsec / 1000000, 3, num, sizeof num));
	pos = puts_(buf, n, pos, "Z level=");
	pos = puts_(buf, n, pos, level);
	pos = puts_(buf, n, pos, " prog=");
	pos = puts_(buf, n, pos, log_prog);
	pos = puts_(buf, n, pos, " pid=");
	pos = puts_(buf, n, pos, pid < 0 ? "-1" : digits(pid, 1, num, sizeof num));
	pos = puts_(buf, n, pos, " event=");
	pos = puts_(buf, n, pos, event);
	if (pos >= n)
		pos = n - 1;
	for (size_t i = 0; i + 1 < nkv; i += 2) {
		char val[1024];
		const char *v = kv[i + 1] ? kv[i + 1] : "-";
		size_t vl = strnlen(v, sizeof val - 1);

		memcpy(val, v, vl); /* at most 1023 bytes, as snprintf into val did */
		val[vl] = '\0';
		redact(val);
		pos = put(buf, n, pos, " ", 1);
		if (pos < n)
			pos = put(buf, n, pos, kv[i], strlen(kv[i]));
		if (pos < n)
			pos = put(buf, n, pos, "=", 1);
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
