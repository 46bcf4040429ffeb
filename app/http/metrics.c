/* Prometheus text exposition (GET /metrics) (see metrics.h). */
#include "metrics.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int statuses[MX_STATUSES - 1] = { 200, 202, 400, 401, 403, 404, 405, 409,
					       413, 414, 415, 429, 500, 503, 504 };
/* Upper bounds in milliseconds; the last bucket is +Inf. */
static const double bounds_ms[MX_BUCKETS - 1] = { 1, 2.5, 5, 10, 25, 50, 100, 250, 1000,
						  5000, 30000 };

static int status_index(int status)
{
	for (int i = 0; i < MX_STATUSES - 1; i++)
		if (statuses[i] == status)
			return i;
	return MX_STATUSES - 1; /* other */
}

void mx_record(struct mx_worker *w, int route, int status, double ms)
{
	int b = 0;

	if (w == NULL)
		return;
	if (route < 0 || route >= MX_ROUTES)
		route = 0;
	while (b < MX_BUCKETS - 1 && ms > bounds_ms[b])
		b++;
	w->req[route][status_index(status)]++;
	w->lat[route][b]++;
	w->lat_sum_s[route] += ms / 1000.0;
}

void mx_db_error(struct mx_worker *w)
{
	if (w)
		w->db_errors++;
}

void mx_db_tx(struct mx_worker *w, enum db_tx_event ev)
{
	if (w == NULL)
		return;
	if (ev == DB_TX_EV_LOST)
		w->tx_lost++;
	else if ((int)ev >= 0 && ev < DB_TX_EV_LOST)
		w->tx_retries[ev]++;
}

/* The label of each retry cause, indexed by enum db_tx_event. */
static const char *const tx_causes[DB_TX_EV_LOST] = { "deadlock", "lock_wait_timeout",
						      "requested" };

static void render_tx(struct strbuf *out, const struct mx_board *b, size_t n)
{
	unsigned long long lost = 0;

	sb_adds(out, "# HELP sandbox_api_tx_retries_total Write transactions the API ran again"
		     " whole after losing a conflict, by cause (requested: a concurrent insert"
		     " of the same idempotency key).\n"
		     "# TYPE sandbox_api_tx_retries_total counter\n");
	for (int c = 0; c < DB_TX_EV_LOST; c++) {
		unsigned long long sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += b->w[i].tx_retries[c];
		sb_addf(out, "sandbox_api_tx_retries_total{cause=\"%s\"} %llu\n", tx_causes[c], sum);
	}
	for (size_t i = 0; i < n; i++)
		lost += b->w[i].tx_lost;
	sb_addf(out, "# HELP sandbox_api_tx_lost_total Write transactions that still lost a"
		     " conflict after every retry (answered 503 with Retry-After).\n"
		     "# TYPE sandbox_api_tx_lost_total counter\nsandbox_api_tx_lost_total %llu\n",
		lost);
}

static const char *route_label(const char *const *names, size_t nroutes, size_t r)
{
	return r == 0 || r > nroutes ? "none" : names[r];
}

void mx_render_requests(struct strbuf *out, const struct mx_board *b, size_t n,
			const char *const *route_names, size_t nroutes)
{
	unsigned long long db = 0;

	if (n > MX_MAX_WORKERS)
		n = MX_MAX_WORKERS;
	sb_adds(out, "# HELP sandbox_api_requests_total Requests answered by the API, by route"
		     " and status.\n# TYPE sandbox_api_requests_total counter\n");
	for (size_t r = 0; r <= nroutes && r < MX_ROUTES; r++)
		for (int s = 0; s < MX_STATUSES; s++) {
			unsigned long long c = 0;
			for (size_t i = 0; i < n; i++)
				c += b->w[i].req[r][s];
			if (c == 0)
				continue;
			if (s == MX_STATUSES - 1)
				sb_addf(out, "sandbox_api_requests_total{route=\"%s\",status=\"other\"}"
					" %llu\n", route_label(route_names, nroutes, r), c);
			else
				sb_addf(out, "sandbox_api_requests_total{route=\"%s\",status=\"%d\"}"
					" %llu\n", route_label(route_names, nroutes, r), statuses[s], c);
		}
	sb_adds(out, "# HELP sandbox_api_request_duration_seconds Time from the request read to"
		     " the answer sent, by route.\n"
		     "# TYPE sandbox_api_request_duration_seconds histogram\n");
	for (size_t r = 0; r <= nroutes && r < MX_ROUTES; r++) {
		unsigned long long cum = 0, counts[MX_BUCKETS] = { 0 };
		double sum = 0;
		const char *name = route_label(route_names, nroutes, r);

		for (size_t i = 0; i < n; i++) {
			for (int k = 0; k < MX_BUCKETS; k++)
				counts[k] += b->w[i].lat[r][k];
			sum += b->w[i].lat_sum_s[r];
		}
		for (int k = 0; k < MX_BUCKETS; k++)
			cum += counts[k];
		if (cum == 0)
			continue;
		cum = 0;
		for (int k = 0; k < MX_BUCKETS; k++) {
			cum += counts[k];
			if (k < MX_BUCKETS - 1)
				sb_addf(out, "sandbox_api_request_duration_seconds_bucket{route=\"%s\","
					"le=\"%g\"} %llu\n", name, bounds_ms[k] / 1000.0, cum);
			else
				sb_addf(out, "sandbox_api_request_duration_seconds_bucket{route=\"%s\","
					"le=\"+Inf\"} %llu\n", name, cum);
		}
		sb_addf(out, "sandbox_api_request_duration_seconds_sum{route=\"%s\"} %.6f\n", name,
			sum);
		sb_addf(out, "sandbox_api_request_duration_seconds_count{route=\"%s\"} %llu\n", name,
			cum);
	}
	for (size_t i = 0; i < n; i++)
		db += b->w[i].db_errors;
	sb_addf(out, "# HELP sandbox_api_db_errors_total Database errors met by API requests.\n"
		     "# TYPE sandbox_api_db_errors_total counter\nsandbox_api_db_errors_total %llu\n",
		db);
	render_tx(out, b, n);
}

static const char *const hook_states[MX_HOOK_STATES] = { "pending", "delivered", "failed" };
static const char *const hook_outcomes[MX_HOOK_OUTCOMES] = {
	"delivered", "http_status", "dns", "connect", "tls", "timeout", "other", "internal"
};

static void hooks_add(long long *v, const char *const *names, int n, const char *name,
		      long long add)
{
	for (int i = 0; name && i < n; i++)
		if (strcmp(names[i], name) == 0)
			v[i] += add;
}

void mx_hooks_add_state(struct mx_hooks *h, const char *state, long long n)
{
	hooks_add(h->state, hook_states, MX_HOOK_STATES, state, n);
}

void mx_hooks_add_outcome(struct mx_hooks *h, const char *outcome, long long n)
{
	hooks_add(h->outcome, hook_outcomes, MX_HOOK_OUTCOMES, outcome, n);
}

void mx_render_webhooks(struct strbuf *out, const struct mx_hooks *h)
{
	long long total = 0;

	sb_adds(out, "# HELP sandbox_webhook_deliveries Webhook deliveries in the database, by"
		     " state.\n# TYPE sandbox_webhook_deliveries gauge\n");
	for (int i = 0; i < MX_HOOK_STATES; i++)
		sb_addf(out, "sandbox_webhook_deliveries{state=\"%s\"} %lld\n", hook_states[i],
			h->state[i]);
	sb_adds(out, "# HELP sandbox_webhook_attempts_total Webhook delivery attempts, by outcome"
		     " class; all but delivered are failures.\n"
		     "# TYPE sandbox_webhook_attempts_total counter\n");
	for (int i = 0; i < MX_HOOK_OUTCOMES; i++) {
		sb_addf(out, "sandbox_webhook_attempts_total{outcome=\"%s\"} %lld\n",
			hook_outcomes[i], h->outcome[i]);
		total += h->outcome[i];
	}
	sb_addf(out, "# HELP sandbox_webhook_attempts_all_total Webhook delivery attempts, all"
		     " outcomes.\n# TYPE sandbox_webhook_attempts_all_total counter\n"
		     "sandbox_webhook_attempts_all_total %lld\n",
		total);
}

void mx_render_window(struct strbuf *out, const struct mx_window *w)
{
	long long prev = 0, sum = w->sum_us < 0 ? -w->sum_us : w->sum_us;

	sb_addf(out, "# HELP %s %s\n# TYPE %s histogram\n", w->name, w->help, w->name);
	for (size_t k = 0; k < w->n; k++) {
		long long c = w->cum[k] < prev ? prev : w->cum[k];

		if (c > w->count)
			c = w->count;
		sb_addf(out, "%s_bucket{le=\"%g\"} %lld\n", w->name, w->le[k], c);
		prev = c;
	}
	sb_addf(out, "%s_bucket{le=\"+Inf\"} %lld\n%s_sum %s%lld.%06lld\n%s_count %lld\n",
		w->name, w->count, w->name, w->sum_us < 0 ? "-" : "", sum / 1000000,
		sum % 1000000, w->name, w->count);
}

static int match_one(const char *rule, const char *addr)
{
	char net[64];
	const char *slash = strchr(rule, '/');
	struct in_addr a, n;
	long bits;
	char *end;

	if (slash == NULL)
		return strcmp(rule, addr) == 0;
	if ((size_t)(slash - rule) >= sizeof net)
		return 0;
	memcpy(net, rule, (size_t)(slash - rule));
	net[slash - rule] = '\0';
	bits = strtol(slash + 1, &end, 10);
	if (*end != '\0' || bits < 0 || bits > 32 || inet_pton(AF_INET, net, &n) != 1 ||
	    inet_pton(AF_INET, addr, &a) != 1)
		return 0;
	if (bits == 0)
		return 1;
	unsigned mask = bits == 32 ? 0xffffffffu : ~(0xffffffffu >> bits);
	return (ntohl(a.s_addr) & mask) == (ntohl(n.s_addr) & mask);
}

int mx_addr_allowed(const char *list, const char *addr)
{
	char rule[96];
	const char *p = list;

	if (addr == NULL || *addr == '\0')
		return 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n > 0 && n < sizeof rule) {
			memcpy(rule, p, n);
			rule[n] = '\0';
			/* trim spaces */
			char *s = rule, *e = rule + strlen(rule);
			while (*s == ' ')
				s++;
			while (e > s && e[-1] == ' ')
				*--e = '\0';
			if (*s && match_one(s, addr))
				return 1;
		}
		p += n + (p[n] == ',');
	}
	return 0;
}
