/* The dispatcher: recovers expired leases, claims queued jobs into free slots and
 * starts a detached supervisor for each. */
#ifndef SANDBOX_DISPATCH_H
#define SANDBOX_DISPATCH_H

#include <signal.h>

#include "config.h"

struct dispatch_opts {
	const char *config_path;
	const char *self_path;   /* this binary, for the supervisors' exec */
	int once;
	long long max_seconds;   /* --once budget for claiming */
	volatile sig_atomic_t *stop;
};

int dispatch_run(const struct cfg *cfg, const struct dispatch_opts *o);

#endif
