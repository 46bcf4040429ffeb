/* Pure HTTP helpers (no FastCGI): status text, query strings, headers. */
#ifndef SANDBOX_HTTP_UTIL_H
#define SANDBOX_HTTP_UTIL_H

#include <jansson.h>
#include <stddef.h>

const char *http_reason(int status);
/* Percent-decodes in[0..n) into out (NUL-terminated); '+' stays '+'. -1 on a bad
 * escape, an encoded NUL, or if out is too small. */
int http_pct_decode(const char *in, size_t n, char *out, size_t outn);
/* Iterates `k=v&k2=v2`: fills key and value (decoded) and advances *q. 1 while
 * there is a pair, 0 at the end, -1 on a malformed or oversized pair. */
int http_query_next(const char **q, char *key, size_t kn, char *val, size_t vn);
/* application/json, optionally with parameters. */
int http_is_json_type(const char *content_type);
/* The token of `Bearer <token>` (scheme case-insensitive), or NULL. */
const char *http_bearer(const char *authorization);
/* CONTENT_LENGTH: "" or NULL is 0; digits only. -1 on junk. */
int http_content_length(const char *s, long long *out);
/* {"error":{"code":...,"message":...,"field":...}} (field omitted when NULL/""). */
json_t *http_error_body(const char *code, const char *message, const char *field);

#endif
