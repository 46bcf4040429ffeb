/* Small pure helpers shared by every binary (see util.h). */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int util_random(void *buf, size_t n)
{
	unsigned char *p = buf;

	while (n > 0) {
		ssize_t r = getrandom(p, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int util_uuid7(char out[UUID_STR_LEN])
{
	unsigned char b[16];
	struct timespec ts;
	uint64_t ms;
	char hex[33];

	if (util_random(b, sizeof b) < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	for (int i = 0; i < 6; i++)
		b[i] = (unsigned char)(ms >> (8 * (5 - i)));
	b[6] = (unsigned char)(0x70 | (b[6] & 0x0f));
	b[8] = (unsigned char)(0x80 | (b[8] & 0x3f));
	util_hex(b, sizeof b, hex);
	snprintf(out, UUID_STR_LEN, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12,
		 hex + 16, hex + 20);
	return 0;
}

int util_is_uuid(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
			return 0;
		}
	}
	return i == 36;
}

void util_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static const char b64chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

unsigned char *util_b64_decode(const char *in, size_t len, size_t *outlen)
{
	unsigned char *out;
	size_t o = 0, pad = 0;

	if (len % 4 != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (len >= 1 && in[len - 1] == '=')
		pad++;
	if (len >= 2 && in[len - 2] == '=')
		pad++;
	out = malloc(len / 4 * 3 + 1);
	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		int last = (i + 4 == len);

		for (int k = 0; k < 4; k++) {
			unsigned char c = (unsigned char)in[i + k];
			if (c == '=' && last && k >= 4 - (int)pad) {
				v[k] = 0;
				continue;
			}
			v[k] = b64val(c);
			if (v[k] < 0)
				goto bad;
		}
		/* Non-canonical encodings (stray bits under the padding) are refused. */
		if (last && pad == 2 && (v[1] & 0x0f) != 0)
			goto bad;
		if (last && pad == 1 && (v[2] & 0x03) != 0)
			goto bad;
		out[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (!(last && pad == 2))
			out[o++] = (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
		if (!(last && pad >= 1))
			out[o++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
	}
	out[o] = '\0';
	*outlen = o;
	return out;
bad:
	free(out);
	errno = EINVAL;
	return NULL;
}

char *util_b64_encode(const unsigned char *in, size_t len)
{
	size_t n = (len + 2) / 3 * 4;
	char *out = malloc(n + 1), *p = out;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)in[i] << 16;
		if (i + 1 < len)
			v |= (unsigned)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		*p++ = b64chars[v >> 18 & 63];
		*p++ = b64chars[v >> 12 & 63];
		*p++ = i + 1 < len ? b64chars[v >> 6 & 63] : '=';
		*p++ = i + 2 < len ? b64chars[v & 63] : '=';
	}
	*p = '\0';
	return out;
}

int util_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		uint32_t cp;
		size_t need;

		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (n - i <= need)
			return 0;
		for (size_t k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

int util_parse_ll(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	/* strtoll would skip any leading white space and accept a sign: digits only
	 * (and a leading '-' when negative values are in range). */
	if (s == NULL || !(isdigit((unsigned char)*s) || (*s == '-' && min < 0)))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

char *util_read_file(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	char *buf = NULL;
	size_t n = 0;
	struct stat st;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		close(fd);
		errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		close(fd);
		return NULL;
	}
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

/* Length of a white-space character (ASCII or Unicode Zs/line separators, BOM) at p,
 * or 0. */
static size_t space_at(const unsigned char *p, size_t left)
{
	if (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		return 1;
	if (left >= 2 && p[0] == 0xC2 && (p[1] == 0xA0 || p[1] == 0x85))
		return 2;
	if (left >= 3 && p[0] == 0xE1 && p[1] == 0x9A && p[2] == 0x80)
		return 3; /* U+1680 */
	if (left >= 3 && p[0] == 0xE2 && p[1] == 0x80 &&
	    (p[2] <= 0x8B || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF))
		return 3; /* U+2000..U+200B, U+2028, U+2029, U+202F */
	if (left >= 3 && p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0x9F)
		return 3; /* U+205F */
	if (left >= 3 && p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80)
		return 3; /* U+3000 */
	if (left >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF)
		return 3; /* U+FEFF */
	return 0;
}

/* Leading or trailing white space (identities compare byte for byte: "eve" and
 * "eve " would be two identities that look like one). */
int util_edge_space(const char *v)
{
	const unsigned char *p = (const unsigned char *)v;
	size_t n = strlen(v);

	if (n == 0)
		return 0;
	if (space_at(p, n))
		return 1;
	for (size_t back = 1; back <= 3 && back <= n; back++)
		if (space_at(p + n - back, back) == back)
			return 1;
	return 0;
}

/* "30d", "12h", "90m", "3600s" or a plain number of days -> seconds; -1 if bad. */
long long util_parse_duration(const char *s)
{
	char *end;
	long long n, mult = 86400;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	n = strtoll(s, &end, 10);
	if (end[0] != '\0') {
		if (end[1] != '\0')
			return -1;
		switch (end[0]) {
		case 's': mult = 1; break;
		case 'm': mult = 60; break;
		case 'h': mult = 3600; break;
		case 'd': mult = 86400; break;
		default: return -1;
		}
	}
	if (n < 0 || n > 100LL * 365 * 86400 / mult)
		return -1;
	return n * mult;
}

double util_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void util_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

long util_read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;
	int e;

	if (fd < 0)
		return -1;
	r = read(fd, buf, n - 1);
	e = errno;
	close(fd);
	errno = e;
	if (r < 0)
		return -1;
	buf[r] = '\0';
	return (long)r;
}

const char *util_untrusted(const struct stat *st, int want_dir)
{
	if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return want_dir ? "its directory is not a directory" : "not a regular file";
	if (st->st_uid != 0)
		return want_dir ? "its directory is not owned by root" : "not owned by root";
	if (st->st_mode & 022)
		return want_dir ? "its directory is group or world writable"
				: "group or world writable";
	return NULL;
}
