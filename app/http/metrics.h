/* Prometheus text exposition (GET /metrics): the API's own request counters, kept
 * per worker in shared memory (each worker writes only its own row, so no lock),
 * and the service's job figures read from the database at scrape time. Tenant data
 * never appears in a label: only states, routes, status codes and runner hosts. */
#ifndef SANDBOX_METRICS_H
#define SANDBOX_METRICS_H

#include <stddef.h>

#include "db.h"
#include "strbuf.h"

#define MX_MAX_WORKERS 512
#define MX_ROUTES 24  /* 0: no route matched (404/405, errors before routing) */
#define MX_STATUSES 16
#define MX_BUCKETS 12

struct mx_worker {
	unsigned long long req[MX_ROUTES][MX_STATUSES];
	unsigned long long lat[MX_ROUTES][MX_BUCKETS]; /* per bucket, not cumulative */
	double lat_sum_s[MX_ROUTES];
	unsigned long long db_errors;
	/* db_tx (common/db.h): retries by cause (deadlock, lock wait timeout, the body's
	 * own request), and transactions that lost after the bound */
	unsigned long long tx_retries[DB_TX_EV_LOST];
	unsigned long long tx_lost;
};

struct mx_board {
	struct mx_worker w[MX_MAX_WORKERS];
};

/* One answered request: route index (0 = none), HTTP status, duration. */
void mx_record(struct mx_worker *w, int route, int status, double ms);
void mx_db_error(struct mx_worker *w);
/* One db_tx event (a retry by its cause, or a transaction lost after the bound). */
void mx_db_tx(struct mx_worker *w, enum db_tx_event ev);

/* Appends the request metrics of workers [0, n) ; route_names[i] names route i
 * ("GET /v1/jobs/{id}"), i in 1..nroutes. */
void mx_render_requests(struct strbuf *out, const struct mx_board *b, size_t n,
			const char *const *route_names, size_t nroutes);

/* Webhooks (GET /metrics): deliveries by state (job_callbacks, a gauge) and attempts
 * by outcome class since the start (webhook_attempt_counts, schema 009, a counter),
 * read from the database at scrape time. Only these fixed names become label values: a name read from the
 * database that is not in the list is not shown. */
#define MX_HOOK_STATES 3   /* pending, delivered, failed */
#define MX_HOOK_OUTCOMES 8 /* delivered, http_status, dns, connect, tls, timeout, other, internal */
struct mx_hooks {
	long long state[MX_HOOK_STATES];
	long long outcome[MX_HOOK_OUTCOMES];
};
/* Adds n to the named state ("pending") or outcome ("tls"); unknown names are ignored. */
void mx_hooks_add_state(struct mx_hooks *h, const char *state, long long n);
void mx_hooks_add_outcome(struct mx_hooks *h, const char *outcome, long long n);
void mx_render_webhooks(struct strbuf *out, const struct mx_hooks *h);

/* A histogram of the jobs finished in a window (GET /metrics: the last 5 minutes).
 * le[k] are the upper bounds in seconds, ascending; cum[k] how many jobs are at or
 * under le[k] (cumulative, as SQL's SUM(x <= b) counts them); count all of them;
 * sum_us their total in microseconds. Rendered as a Prometheus histogram: HELP, TYPE
 * histogram, a _bucket per bound, le="+Inf" (= count), _sum in seconds, _count. A
 * bucket read out of order is raised to the one before it and capped at count, so
 * the text stays a valid histogram whatever the query returned. */
struct mx_window {
	const char *name, *help;
	const double *le;
	const long long *cum;
	size_t n;
	long long count, sum_us;
};
void mx_render_window(struct strbuf *out, const struct mx_window *w);

/* 1 when addr (dotted IPv4 or IPv6 text, as nginx sends REMOTE_ADDR) is in list:
 * comma-separated addresses or IPv4 CIDRs ("127.0.0.1,10.1.0.0/16,::1"). */
int mx_addr_allowed(const char *list, const char *addr);

#endif
