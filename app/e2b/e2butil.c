/* E2B's pure pieces (app/e2b/e2b.h), linked into the unit tests: the Connect code <->
 * HTTP status tables of envd's errors, and E2B paths (/home/user/...) as
 * workspace-relative paths and back. (The answers that use them, e2b_send_error and
 * envd_send_error, write to the request: app/e2b/eauth.c.) */
#include "e2b.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *code;
	int http;
} connect_codes[] = {
	{ "canceled", 499 },          { "invalid_argument", 400 },  { "deadline_exceeded", 504 },
	{ "not_found", 404 },         { "already_exists", 409 },    { "permission_denied", 403 },
	{ "resource_exhausted", 429 }, { "failed_precondition", 400 }, { "aborted", 409 },
	{ "out_of_range", 400 },      { "unimplemented", 501 },     { "unavailable", 503 },
	{ "unauthenticated", 401 },
};

int envd_http_of_code(const char *code)
{
	for (size_t i = 0; code && i < sizeof connect_codes / sizeof connect_codes[0]; i++)
		if (strcmp(code, connect_codes[i].code) == 0)
			return connect_codes[i].http;
	return 500;
}

const char *envd_code_of_http(int status)
{
	switch (status) {
	case 400:
	case 413:
		return "invalid_argument";
	case 401:
		return "unauthenticated";
	case 403:
		return "permission_denied";
	case 404:
		return "not_found";
	case 409:
		return "failed_precondition";
	case 429:
		return "resource_exhausted";
	case 503:
		return "unavailable";
	case 504:
		return "deadline_exceeded";
	default:
		return "internal";
	}
}

int e2b_path_rel(const char *path, char *out, size_t n, const char **why)
{
	static const char home[] = E2B_HOME;
	const size_t hl = sizeof home - 1;
	const char *p = path;
	size_t len = 0;

	*why = "the path is empty";
	if (n == 0)
		return -1;
	out[0] = '\0';
	if (path == NULL || *path == '\0')
		return -1;
	if (*p == '/') {
		*why = "the path is outside " E2B_HOME " (this sandbox's files live there)";
		if (strncmp(p, home, hl) != 0 || (p[hl] != '\0' && p[hl] != '/'))
			return -1;
		p += hl;
	}
	while (*p) {
		const char *seg;
		size_t sl;

		while (*p == '/')
			p++;
		seg = p;
		sl = strcspn(p, "/");
		p += sl;
		if (sl == 0 || (sl == 1 && seg[0] == '.'))
			continue;
		if (sl == 2 && seg[0] == '.' && seg[1] == '.') {
			*why = "the path leaves " E2B_HOME " (\"..\" above it)";
			if (len == 0)
				return -1;
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--; /* the slash before the dropped segment */
			out[len] = '\0';
			continue;
		}
		*why = "the path is too long";
		if (len + (len > 0) + sl + 1 > n)
			return -1;
		if (len > 0)
			out[len++] = '/';
		memcpy(out + len, seg, sl);
		len += sl;
		out[len] = '\0';
	}
	*why = NULL;
	return 0;
}

int e2b_path_abs(const char *rel, char *out, size_t n)
{
	int k = snprintf(out, n, "%s%s%s", E2B_HOME, *rel ? "/" : "", rel);

	return k < 0 || (size_t)k >= n ? -1 : 0;
}
