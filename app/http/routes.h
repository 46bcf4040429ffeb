/* URL dispatch (app/http/routes.c): a worker's context, the dispatcher, and what every
 * handler shares with it (the database connection, the answer to a storage failure). */
#ifndef SANDBOX_ROUTES_H
#define SANDBOX_ROUTES_H

#include <signal.h>

#include "config.h"
#include "db.h"
#include "http.h"

#define API_MAX_WORKERS 512

struct mx_board;

struct api_ctx {
	const struct cfg *cfg;
	struct db *db;              /* NULL until first use or after a lost connection */
	double db_used;             /* util_mono_ms() of its last use */
	struct mx_board *mx;        /* request counters, shared; NULL: not counted */
	int slot;                   /* this worker's index (metrics row, wait board) */
	volatile sig_atomic_t *stop;
};

void routes_handle(struct api_ctx *ctx, struct req *r);

/* The worker's database connection, opened (again) if needed; NULL when the database
 * is unreachable (logged). A connection idle for over a second is pinged first. */
struct db *route_db(struct api_ctx *ctx);
/* A storage failure: counted, logged (errno and message, never a query's data), then a
 * 503 with Retry-After and the connection dropped when it is gone, a 503 with
 * Retry-After for a transaction that kept losing conflicts (db_tx_lost, or a last
 * error 1213/1205), else a 500. Every handler (jobs, sessions, runtimes) answers
 * through it. */
void route_db_error(struct api_ctx *ctx, struct req *r);

#endif
