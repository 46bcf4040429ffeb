/* SANDBOX_FAULTS for the test build of the runner (fault.h). Linked into
 * build/fault-runner and the unit tests only, never into build/sandbox-runner. */
#include "fault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "retry.h"

static const struct {
	const char *name;
	int err;
} errnames[] = {
	{ "EAGAIN", EAGAIN }, { "EBUSY", EBUSY },   { "EINTR", EINTR },   { "ENOMEM", ENOMEM },
	{ "ENFILE", ENFILE }, { "EINVAL", EINVAL }, { "ENOENT", ENOENT }, { "EPERM", EPERM },
	{ "EACCES", EACCES }, { "EIO", EIO },       { "ENOSPC", ENOSPC }, { "EMFILE", EMFILE },
};

static const char *const points[] = { "workspace", "files",      "limits",  "start",
				       "cleanup",   "ws_cleanup", "requests" };

static int known_point(const char *p)
{
	for (size_t i = 0; i < sizeof points / sizeof points[0]; i++)
		if (strcmp(points[i], p) == 0)
			return 1;
	return 0;
}

static int errno_named(const char *name)
{
	for (size_t i = 0; i < sizeof errnames / sizeof errnames[0]; i++)
		if (strcmp(errnames[i].name, name) == 0)
			return errnames[i].err;
	return 0;
}

/* One POINT:ERRNO[:COUNT] item (NUL-terminated, writable). */
static int parse_item(char *item, struct fault *f, char *err, size_t errlen)
{
	char *point = item, *name = strchr(item, ':'), *count, *end;
	long c = -1;

	if (name == NULL) {
		snprintf(err, errlen, "%s: want POINT:ERRNO[:COUNT]", item);
		return -1;
	}
	*name++ = '\0';
	if ((count = strchr(name, ':')) != NULL) {
		*count++ = '\0';
		errno = 0;
		c = strtol(count, &end, 10);
		if (errno || end == count || *end || c < 1 || c > 1000) {
			snprintf(err, errlen, "%s: COUNT must be 1..1000", point);
			return -1;
		}
	}
	if (!known_point(point) || strlen(point) >= sizeof f->point) {
		snprintf(err, errlen, "%s: unknown fault point", point);
		return -1;
	}
	if ((f->err = errno_named(name)) == 0) {
		snprintf(err, errlen, "%s: unknown errno name %s", point, name);
		return -1;
	}
	snprintf(f->point, sizeof f->point, "%s", point);
	f->count = (int)c;
	return 0;
}

int fault_parse(const char *spec, struct fault *f, size_t max, char *err, size_t errlen)
{
	char buf[256], *save = NULL;
	size_t n = 0;

	if (strlen(spec) >= sizeof buf) {
		snprintf(err, errlen, "too long");
		return -1;
	}
	snprintf(buf, sizeof buf, "%s", spec);
	for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			snprintf(err, errlen, "more than %zu faults", max);
			return -1;
		}
		if (parse_item(it, &f[n], err, errlen) < 0)
			return -1;
		n++;
	}
	return (int)n;
}

int fault_take(struct fault *f, size_t n, const char *point)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(f[i].point, point) != 0 || f[i].count == 0)
			continue;
		if (f[i].count > 0)
			f[i].count--;
		return f[i].err;
	}
	return 0;
}

#ifdef SANDBOX_FAULT_INJECTION
int fault_at(const char *point)
{
	static struct fault f[FAULT_MAX];
	static int n = -2; /* not read yet */
	char err[160];
	int e;

	if (n == -2) {
		const char *spec = getenv("SANDBOX_FAULTS");
		n = spec ? fault_parse(spec, f, FAULT_MAX, err, sizeof err) : 0;
		if (n < 0) {
			/* a test's typo must not pass as "no fault" */
			log_kv("error", "fault_spec", "error", err, (char *)NULL);
			abort();
		}
	}
	e = fault_take(f, (size_t)n, point);
	if (e)
		log_kv("warn", "fault_injected", "point", point, "errno", retry_errname(e),
		       (char *)NULL);
	return e;
}
#endif
