/* Paths a job names (input files, cwd, artifacts directory) (see pathrules.h). */
#include "pathrules.h"

#include <string.h>

#include "util.h"

const char *pr_rel_path(const char *p, size_t max)
{
	const char *c = p;

	if (*p == '\0')
		return "must not be empty";
	if (strlen(p) > max)
		return "is too long";
	/* first: a request path is percent-decoded and may hold any byte; nothing that is
	 * not UTF-8 goes on to JSON, SQL or the runner */
	if (!util_utf8_valid((const unsigned char *)p, strlen(p)))
		return "must be valid UTF-8";
	if (*p == '/')
		return "must be relative";
	for (const char *s = p; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '\\')
			return "must not contain control characters or backslashes";
	while (*c) {
		size_t n = strcspn(c, "/");
		if (n == 0)
			return "must not contain empty components";
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return "must not contain '.' or '..' components";
		c += n;
		if (*c == '/') {
			c++;
			if (*c == '\0')
				return "must not end with '/'";
		}
	}
	return NULL;
}

const char *pr_job_path(const struct cfg *cfg, const char *p)
{
	return pr_rel_path(p, (size_t)cfg->max_path_bytes);
}
