/* The command line a process forked from the dispatcher shows (a spare, a prewarm
 * holder: the command line of the supervisor it becomes): written over the area of
 * the dispatcher's own argv and environment strings. */
#include "title.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command line shown in /proc/PID/cmdline (ps, pgrep -f, tests/stack.sh): the
 * area of the dispatcher's own argv and environment strings, which are contiguous
 * after exec; the environment strings move to the heap first (title_init), as
 * nginx and PostgreSQL do. One string joined by spaces: written past the end of the
 * original argv, the kernel shows it up to its first NUL. Tools only. */
static char *title_area;
static size_t title_len;

void title_init(char **argv)
{
	extern char **environ;
	char *end;

	if (argv == NULL || argv[0] == NULL)
		return;
	end = argv[0] + strlen(argv[0]) + 1;
	for (size_t i = 1; argv[i] && argv[i] == end; i++)
		end += strlen(argv[i]) + 1;
	for (size_t i = 0; environ && environ[i] && environ[i] == end; i++) {
		char *copy = strdup(environ[i]);
		if (copy == NULL)
			break;
		end += strlen(environ[i]) + 1;
		environ[i] = copy;
	}
	title_area = argv[0];
	title_len = (size_t)(end - argv[0]);
}

void title_set(const char *const *argv)
{
	size_t off = 0;

	if (title_area == NULL || title_len < 2)
		return;
	memset(title_area, 0, title_len);
	for (size_t i = 0; argv[i] && off + 1 < title_len; i++) {
		int n = snprintf(title_area + off, title_len - off, "%s%s", i ? " " : "", argv[i]);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	title_area[title_len - 1] = '\0';
}
