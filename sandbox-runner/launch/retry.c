/* Retrying transient faults (DESIGN.md section 5) (see retry.h). */
#include "retry.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int retry_transient(int err)
{
	switch (err) {
	case EAGAIN:
	case ENOMEM:
	case EINTR:
	case EBUSY:
	case ENFILE:
		return 1;
	default:
		return 0;
	}
}

long retry_delay_ms(long first_ms, long cap_ms, int attempt)
{
	long d = first_ms;

	for (int i = 1; i < attempt && d < cap_ms; i++)
		d *= 2;
	return d < cap_ms ? d : cap_ms;
}

const char *retry_errname(int err)
{
	static char buf[24];
	const char *n = err ? strerrorname_np(err) : NULL;

	if (n)
		return n;
	snprintf(buf, sizeof buf, "errno %d", err);
	return buf;
}
