/* "sandbox: " lines on stderr (see climsg.h). */
#include "climsg.h"

#include <stdarg.h>
#include <stdio.h>

#include "cliargs.h"

static void vsay(const char *fmt, va_list ap, const char *end)
	__attribute__((format(printf, 1, 0)));
static void vsay(const char *fmt, va_list ap, const char *end)
{
	fputs("sandbox: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(end, stderr);
}

void cli_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap, "\n");
	va_end(ap);
}

int cli_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap, " (see sandbox --help)\n");
	va_end(ap);
	return CLI_EXIT_USAGE;
}
