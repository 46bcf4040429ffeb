/* Pure HTTP helpers (no FastCGI) (see http_util.h). */
#include "http_util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 413: return "Payload Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 507: return "Insufficient Storage";
	default: return "Unknown";
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int http_pct_decode(const char *in, size_t n, char *out, size_t outn)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		if (c == '%') {
			int hi, lo;
			if (i + 2 >= n)
				return -1;
			hi = hexval(in[i + 1]);
			lo = hexval(in[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -1;
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (o + 1 >= outn)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int http_query_next(const char **q, char *key, size_t kn, char *val, size_t vn)
{
	const char *s = *q, *amp, *eq;

	while (*s == '&')
		s++;
	if (*s == '\0') {
		*q = s;
		return 0;
	}
	amp = s + strcspn(s, "&");
	eq = memchr(s, '=', (size_t)(amp - s));
	*q = amp;
	if (eq == NULL) {
		if (http_pct_decode(s, (size_t)(amp - s), key, kn) < 0)
			return -1;
		val[0] = '\0';
		return 1;
	}
	if (http_pct_decode(s, (size_t)(eq - s), key, kn) < 0 ||
	    http_pct_decode(eq + 1, (size_t)(amp - eq - 1), val, vn) < 0)
		return -1;
	return 1;
}

int http_is_json_type(const char *ct)
{
	size_t n = strlen("application/json");

	if (ct == NULL || strncasecmp(ct, "application/json", n) != 0)
		return 0;
	ct += n;
	while (*ct == ' ')
		ct++;
	return *ct == '\0' || *ct == ';';
}

const char *http_bearer(const char *a)
{
	if (a == NULL || strncasecmp(a, "Bearer ", 7) != 0)
		return NULL;
	a += 7;
	while (*a == ' ')
		a++;
	return *a ? a : NULL;
}

int http_content_length(const char *s, long long *out)
{
	char *end;

	*out = 0;
	if (s == NULL || *s == '\0')
		return 0;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno ? -1 : 0;
}

json_t *http_error_body(const char *code, const char *message, const char *field)
{
	json_t *e = json_pack("{s:s, s:s}", "code", code, "message", message);

	if (e != NULL && field != NULL && *field != '\0')
		json_object_set_new(e, "field", json_string(field));
	return json_pack("{s:o}", "error", e);
}
