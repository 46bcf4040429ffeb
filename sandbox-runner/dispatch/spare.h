/* Pre-forked supervisors (issue 11 point 3): a few processes forked from the warm
 * dispatcher (libraries loaded, no exec), detached like any supervisor, each holding
 * its own MariaDB connection and waiting for one claimed job. */
#ifndef SANDBOX_SPARE_H
#define SANDBOX_SPARE_H

#include "config.h"
#include "helper.h"

#define SPARE_MAX 64

struct spare_pool {
	struct helper_pool h; /* the spares (slot[] unused: a spare takes any slot) */
};

void spare_init(struct spare_pool *p, const char *config_path);
/* Forks one spare when fewer than want are there (rate-limited). */
void spare_tend(struct spare_pool *p, const struct cfg *cfg, int want);
/* Hands a claimed job and its slot lock to a ready spare: 0 a spare took it, -1 none
 * did (none ready, or each had died: the caller launches a fresh supervisor). */
int spare_hand(struct spare_pool *p, const char *id, int slot, int lockfd,
	       const char *runner_id);
/* The dispatcher stops: idle spares see the end of their socket and exit. */
void spare_close_all(struct spare_pool *p);

#endif
