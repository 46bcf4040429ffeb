/* Small pure helpers shared by every binary: randomness, ids, encodings, UTF-8. */
#ifndef SANDBOX_UTIL_H
#define SANDBOX_UTIL_H

#include <stddef.h>
#include <sys/stat.h>

#define UUID_STR_LEN 37 /* 36 chars + NUL */

/* Fills buf from the kernel CSPRNG; -1 (errno set) only if getrandom fails. */
int util_random(void *buf, size_t n);
/* UUIDv7: 48-bit ms timestamp then 74 random bits: unguessable, index-friendly. */
int util_uuid7(char out[UUID_STR_LEN]);
/* Lower-case canonical 8-4-4-4-12 hex form only. */
int util_is_uuid(const char *s);
void util_hex(const unsigned char *in, size_t n, char *out /* 2n+1 */);

/* Strict RFC 4648 base64 with padding; no whitespace. Returns malloc'd bytes
 * (NUL-terminated for convenience) or NULL on bad input (errno EINVAL) or ENOMEM. */
unsigned char *util_b64_decode(const char *in, size_t len, size_t *outlen);
char *util_b64_encode(const unsigned char *in, size_t len);

/* Well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
int util_utf8_valid(const unsigned char *s, size_t n);
/* 1 when s starts or ends with white space (ASCII, Unicode space separators, line and
 * paragraph separators, NEL, BOM). */
int util_edge_space(const char *s);
/* CLOCK_MONOTONIC in milliseconds. */
double util_mono_ms(void);
/* Reads at most n - 1 bytes of a small file (proc, sysfs) into buf, NUL-terminated:
 * its length, or -1 with errno. */
long util_read_small(const char *path, char *buf, size_t n);
/* Sleeps ms milliseconds, resuming after signals (EINTR). */
void util_sleep_ms(long ms);
/* "30d", "12h", "90m", "3600s", or a plain number of days -> seconds; -1 if malformed
 * or over 100 years. */
long long util_parse_duration(const char *s);

/* strtoll with full-string, range and overflow checks: 0 ok, -1 bad. */
int util_parse_ll(const char *s, long long min, long long max, long long *out);

/* Reads a whole small file; NUL-terminated; NULL (errno) on error or if > max. */
char *util_read_file(const char *path, size_t max, size_t *len);

/* Why an operator file (want_dir 0) or its directory (1) is not to be trusted: not of
 * that type, not owned by root, or group/world writable; NULL when it is fine. */
const char *util_untrusted(const struct stat *st, int want_dir);

#endif
