/* URL dispatch and the endpoint handlers. */
#ifndef SANDBOX_ROUTES_H
#define SANDBOX_ROUTES_H

#include <signal.h>

#include "config.h"
#include "db.h"
#include "http.h"

/* Shared by all workers (MAP_SHARED): who is long-polling, so waits never take the
 * whole pool. Indexed by worker slot; the master clears the slot of a dead worker. */
#define API_MAX_WORKERS 512
struct wait_board {
	volatile sig_atomic_t waiting[API_MAX_WORKERS];
};

struct mx_board;

struct api_ctx {
	const struct cfg *cfg;
	struct db *db;              /* NULL until first use or after a lost connection */
	double db_used;             /* util_mono_ms() of its last use */
	struct wait_board *board;
	struct mx_board *mx;        /* request counters, shared; NULL: not counted */
	int slot;                   /* this worker's index in board */
	volatile sig_atomic_t *stop;
};

void routes_handle(struct api_ctx *ctx, struct req *r);

#endif
