/* Request routing from one table of {method, pattern, handler}, pure (see router.h). */
#include "router.h"

#include <stdio.h>
#include <string.h>

/* 1 when path matches pattern, captures in a. */
static int match_one(const char *pat, const char *path, struct route_args *a)
{
	a->id[0] = '\0';
	a->rest = NULL;
	while (*pat) {
		const char *close;
		size_t n;

		if (*pat != '{') {
			if (*pat++ != *path++)
				return 0;
			continue;
		}
		close = strchr(pat, '}');
		if (close == NULL)
			return 0;
		n = close[-1] == '*' ? strlen(path) : strcspn(path, "/");
		if (n == 0)
			return 0;
		if (strncmp(pat, "{id}", 4) == 0) {
			if (n >= sizeof a->id)
				return 0;
			memcpy(a->id, path, n);
			a->id[n] = '\0';
		} else {
			a->rest = path;
		}
		path += n;
		pat = close + 1;
	}
	return *path == '\0';
}

const struct route *router_match(const struct route *table, size_t n, const char *method,
				 const char *path, struct route_args *a, char *allow,
				 size_t allow_len)
{
	size_t used = 0;

	if (allow_len > 0)
		allow[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		struct route_args got;

		if (!match_one(table[i].pattern, path, &got))
			continue;
		if (strcmp(table[i].method, method) == 0) {
			*a = got;
			return &table[i];
		}
		if (used < allow_len) {
			int w = snprintf(allow + used, allow_len - used, "%s%s", used ? ", " : "",
					 table[i].method);
			used = w < 0 ? allow_len : used + (size_t)w;
		}
	}
	return NULL;
}
