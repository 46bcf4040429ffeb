/* Assertion helpers: every failure message says what was expected and what was got,
 * so a red run needs no debugger to read. */
#include "tests.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int registration_failed;

void t_register(const char *suite, const CU_TestInfo *tests)
{
	CU_pSuite s = CU_add_suite(suite, NULL, NULL);

	if (s == NULL) {
		fprintf(stderr, "cannot add suite %s: %s\n", suite, CU_get_error_msg());
		registration_failed = 1;
		return;
	}
	for (const CU_TestInfo *t = tests; t->pName != NULL; t++) {
		if (CU_add_test(s, t->pName, t->pTestFunc) == NULL) {
			fprintf(stderr, "cannot add test %s.%s: %s\n", suite, t->pName,
				CU_get_error_msg());
			registration_failed = 1;
		}
	}
}

int t_registration_failed(void)
{
	return registration_failed;
}

int t_check(int ok, const char *file, unsigned line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (ok) {
		CU_assertImplementation(CU_TRUE, line, "ok", file, "", CU_FALSE);
		return 1;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	CU_assertImplementation(CU_FALSE, line, msg, file, "", CU_FALSE);
	return 0;
}

const char *t_show(const void *p, size_t n, char *buf, size_t bn)
{
	const unsigned char *s = p;
	size_t i, o = 0;

	if (p == NULL) {
		snprintf(buf, bn, "(null)");
		return buf;
	}
	/* Room for one escape (4) plus "..." and the NUL (4). */
	for (i = 0; i < n && o + 8 < bn; i++) {
		unsigned char c = s[i];
		if (c == '\n')
			o += (size_t)snprintf(buf + o, bn - o, "\\n");
		else if (c == '"' || c == '\\')
			o += (size_t)snprintf(buf + o, bn - o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, bn - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	if (i < n)
		o += (size_t)snprintf(buf + o, bn - o, "...");
	buf[o] = '\0';
	return buf;
}

int t_check_str(const char *ctx, const char *got, const char *exp, const char *file,
		unsigned line)
{
	char g[300], e[300];
	int ok = (got == NULL || exp == NULL) ? got == exp : strcmp(got, exp) == 0;

	return t_check(ok, file, line, "%s: expected \"%s\", got \"%s\"", ctx,
		       t_show(exp, exp ? strlen(exp) : 0, e, sizeof e),
		       t_show(got, got ? strlen(got) : 0, g, sizeof g));
}

int t_check_ll(const char *ctx, long long got, long long exp, const char *file, unsigned line)
{
	return t_check(got == exp, file, line, "%s: expected %lld, got %lld", ctx, exp, got);
}

int t_check_mem(const char *ctx, const void *got, size_t glen, const void *exp, size_t elen,
		const char *file, unsigned line)
{
	char g[300], e[300];
	int ok = glen == elen && (elen == 0 || (got != NULL && memcmp(got, exp, elen) == 0));

	return t_check(ok, file, line, "%s: expected %zu bytes \"%s\", got %zu bytes \"%s\"", ctx,
		       elen, t_show(exp, elen, e, sizeof e), glen, t_show(got, glen, g, sizeof g));
}

int t_check_has(const char *ctx, const char *hay, const char *needle, int want,
		const char *file, unsigned line)
{
	char h[400];
	int has = hay != NULL && strstr(hay, needle) != NULL;

	return t_check(has == want, file, line, "%s: expected %s \"%s\", got \"%s\"", ctx,
		       want ? "to contain" : "not to contain", needle,
		       t_show(hay, hay ? strlen(hay) : 0, h, sizeof h));
}

char *t_tempfile(const char *content)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	size_t n = strlen(content);
	int fd;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	if (asprintf(&path, "%s/sandbox-unit-XXXXXX", dir) < 0)
		return NULL;
	fd = mkstemp(path);
	if (fd < 0) {
		free(path);
		return NULL;
	}
	if (write(fd, content, n) != (ssize_t)n) {
		close(fd);
		unlink(path);
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}
