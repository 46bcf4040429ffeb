/* Webhook delivery (issue 12) (see callback.h). */
#include "callback.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <grp.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "hooksign.h"
#include "jobs.h"
#include "log.h"
#include "netcheck.h"
#include "render.h"
#include "util.h"

struct delivery {
	char job[UUID_STR_LEN], delivery_id[UUID_STR_LEN];
	char url[NC_URL_MAX + 1];
	char secret[HS_SECRET_HEX + 1];
	struct identity who; /* the job's own scope, to read it as GET /v1/jobs/{id} does */
	int attempts;        /* before this one */
};

/* The address chosen after the check; the only one curl may connect to. */
struct pin {
	struct sockaddr_storage sa;
	socklen_t len;
	char text[INET6_ADDRSTRLEN];
};

static int same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return 0;
	if (a->sa_family == AF_INET)
		return memcmp(&((const struct sockaddr_in *)(const void *)a)->sin_addr,
			      &((const struct sockaddr_in *)(const void *)b)->sin_addr, 4) == 0;
	if (a->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr, 16) == 0;
	return 0;
}

/* curl connects through here: anything but the checked address is refused, whatever
 * curl's own resolution (or a proxy setting) would have chosen. */
static curl_socket_t open_pinned(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	const struct pin *p = arg;

	if (purpose != CURLSOCKTYPE_IPCXN || !same_addr(&a->addr, (const struct sockaddr *)&p->sa))
		return CURL_SOCKET_BAD;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static size_t discard(char *ptr, size_t size, size_t n, void *arg)
{
	size_t *seen = arg;

	(void)ptr;
	*seen += size * n;
	return *seen > CB_RESPONSE_MAX ? 0 : size * n;
}

/* Resolves u->host and checks every answer: one refused address refuses the host (a
 * name that also answers with an internal address is not sent to). NULL and p filled,
 * or the reason (into why). */
static const char *resolve_checked(const struct nc_url *u, const struct nc_allow *allow,
				   struct pin *p, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL, *ai;
	const char *bad = NULL;
	int rc;

	memset(p, 0, sizeof *p);
	rc = getaddrinfo(u->host, NULL, &hints, &res);
	if (rc != 0) {
		snprintf(why, whylen, "could not resolve host: %s", gai_strerror(rc));
		return why;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		char text[INET6_ADDRSTRLEN] = "?";
		const void *bytes;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		bytes = ai->ai_family == AF_INET
				? (const void *)&((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr
				: (const void *)&((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_addr;
		inet_ntop(ai->ai_family, bytes, text, sizeof text);
		bad = nc_check_addr(allow, u->host, ai->ai_addr);
		if (bad) {
			snprintf(why, whylen, "refused: %s (%s)", bad, text);
			break;
		}
		if (p->len == 0 && ai->ai_addrlen <= sizeof p->sa) {
			memcpy(&p->sa, ai->ai_addr, ai->ai_addrlen);
			p->len = (socklen_t)ai->ai_addrlen;
			snprintf(p->text, sizeof p->text, "%s", text);
		}
	}
	freeaddrinfo(res);
	if (bad)
		return why;
	if (p->len == 0) {
		snprintf(why, whylen, "could not resolve host: no IPv4 or IPv6 address");
		return why;
	}
	return NULL;
}

enum outcome { OUT_DELIVERED, OUT_RETRY, OUT_REFUSED };

/* An attempt's class for job_callback_attempts.outcome and GET /metrics: a fixed set,
 * never text from the receiver. */
static const char *curl_class(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST: return "dns";
	case CURLE_COULDNT_CONNECT: return "connect";
	case CURLE_OPERATION_TIMEDOUT: return "timeout";
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS: return "tls";
	default: return "other";
	}
}

/* POSTs body to d->url. *status: the HTTP status (0: none); err: the service's text;
 * *cls: the attempt's class (curl_class, "http_status", "delivered", ...). */
static enum outcome post(const struct cfg *cfg, const struct delivery *d, const char *body,
			 size_t len, long *status, char *err, size_t errlen, const char **cls)
{
	struct nc_allow allow;
	struct nc_url u;
	struct pin pin;
	const char *why = NULL;
	char sig[160], hsig[200], hdel[80], resolve[NC_HOST_MAX + 80];
	struct curl_slist *hdrs = NULL, *pins = NULL;
	size_t seen = 0;
	CURL *c = NULL;
	CURLcode rc;
	enum outcome out = OUT_RETRY;

	*status = 0;
	*cls = "other";
	if (nc_allow_parse(cfg->callback_allow, &allow, err, errlen) < 0 ||
	    nc_parse_url(d->url, &u, &why) < 0) {
		if (why)
			snprintf(err, errlen, "refused: callback_url %s", why);
		return OUT_REFUSED;
	}
	if (!u.https && !(cfg->callback_allow_http && nc_allow_has_host(&allow, u.host))) {
		/* http only to a host listed by name, or an address in a listed CIDR (below) */
		struct in6_addr a6;
		struct sockaddr_storage ss = { 0 };
		int listed = 0;
		if (cfg->callback_allow_http) {
			if (inet_pton(AF_INET, u.host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
				ss.ss_family = AF_INET;
				listed = nc_allow_has_addr(&allow, (struct sockaddr *)&ss);
			} else if (inet_pton(AF_INET6, u.host, &a6) == 1) {
				ss.ss_family = AF_INET6;
				((struct sockaddr_in6 *)&ss)->sin6_addr = a6;
				listed = nc_allow_has_addr(&allow, (struct sockaddr *)&ss);
			}
		}
		if (!listed) {
			snprintf(err, errlen, "refused: http is allowed only to allowlisted hosts");
			return OUT_REFUSED;
		}
	}
	if (resolve_checked(&u, &allow, &pin, err, errlen) != NULL) {
		*cls = "dns";
		return strncmp(err, "refused:", 8) == 0 ? OUT_REFUSED : OUT_RETRY;
	}
	*cls = "internal";
	if (hs_signature(d->secret, (long long)time(NULL), body, len, sig, sizeof sig) < 0)
		return snprintf(err, errlen, "could not sign"), OUT_RETRY;
	snprintf(hsig, sizeof hsig, "X-Sandbox-Signature: %s", sig);
	snprintf(hdel, sizeof hdel, "X-Sandbox-Delivery: %s", d->delivery_id);
	/* curl's own lookup is replaced by the checked address. */
	snprintf(resolve, sizeof resolve, "%s:%d:%s%s%s", u.host, u.port,
		 pin.sa.ss_family == AF_INET6 ? "[" : "", pin.text,
		 pin.sa.ss_family == AF_INET6 ? "]" : "");
	c = curl_easy_init();
	if (c == NULL)
		return snprintf(err, errlen, "could not start the HTTP client"), OUT_RETRY;
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "X-Sandbox-Event: job.finished");
	hdrs = curl_slist_append(hdrs, hdel);
	hdrs = curl_slist_append(hdrs, hsig);
	hdrs = curl_slist_append(hdrs, "Expect:");
	pins = u.host_is_ip6 ? NULL : curl_slist_append(NULL, resolve);
	if (hdrs == NULL || (!u.host_is_ip6 && pins == NULL)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_URL, d->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, u.https ? "https" : "http");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)CB_CONNECT_MS);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)CB_TOTAL_MS);
	curl_easy_setopt(c, CURLOPT_RESOLVE, pins);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_pinned);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &pin);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "sandbox-webhook/1");
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &seen);
	if (cfg->callback_cacert[0])
		curl_easy_setopt(c, CURLOPT_CAINFO, cfg->callback_cacert);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	if (*status >= 200 && *status < 300) {
		out = OUT_DELIVERED; /* a body past CB_RESPONSE_MAX is not our business */
		*cls = "delivered";
	} else if (*status != 0) {
		snprintf(err, errlen, "receiver answered HTTP %ld", *status);
		*cls = "http_status";
	} else {
		snprintf(err, errlen, "%s", curl_easy_strerror(rc));
		*cls = curl_class(rc);
	}
out:
	curl_slist_free_all(hdrs);
	curl_slist_free_all(pins);
	curl_easy_cleanup(c);
	return out;
}

static int load(struct db *db, const char *job, struct delivery *d)
{
	struct db_res *r = db_query_p(db,
				      "SELECT j.callback_url, j.identity_namespace, j.tenant_id,"
				      " k.webhook_secret, c.attempts, c.delivery_id"
				      " FROM job_callbacks c JOIN jobs j ON j.id = c.job_id"
				      " LEFT JOIN api_keys k ON k.id = j.key_id WHERE c.job_id = ?",
				      db_str(job));
	const char *s;
	int rc = -1;

	memset(d, 0, sizeof *d);
	if (r == NULL)
		return -1;
	if (db_res_rows(r) == 1 && db_res_s(r, 0, "callback_url")) {
		snprintf(d->job, sizeof d->job, "%s", job);
		snprintf(d->url, sizeof d->url, "%s", db_res_s(r, 0, "callback_url"));
		s = db_res_s(r, 0, "webhook_secret");
		snprintf(d->secret, sizeof d->secret, "%s", s ? s : "");
		snprintf(d->delivery_id, sizeof d->delivery_id, "%s",
			 db_res_s(r, 0, "delivery_id") ? db_res_s(r, 0, "delivery_id") : "");
		snprintf(d->who.ns, sizeof d->who.ns, "%s", db_res_s(r, 0, "identity_namespace"));
		snprintf(d->who.tenant, sizeof d->who.tenant, "%s", db_res_s(r, 0, "tenant_id"));
		d->who.tenant_admin = 1;
		d->attempts = (int)db_res_i(r, 0, "attempts", 0);
		rc = 0;
	}
	db_res_free(r);
	return rc;
}

/* The body: the job as GET /v1/jobs/{id} renders it, output cut to a preview. */
static char *job_body(struct db *db, const struct cfg *cfg, struct delivery *d, size_t *len)
{
	long long cap = cfg->inline_output_bytes < CB_BODY_PREVIEW ? cfg->inline_output_bytes
								    : CB_BODY_PREVIEW;
	struct job_set s;
	json_t *j;
	char *out = NULL;

	if (jobs_get(db, &d->who, d->job, cap, &s) != JOBS_OK)
		return NULL;
	j = render_job(&s.v[0]);
	if (j) {
		*len = json_dumpb(j, NULL, 0, JSON_COMPACT);
		out = *len ? malloc(*len + 1) : NULL;
		if (out) {
			json_dumpb(j, out, *len, JSON_COMPACT);
			out[*len] = '\0';
		}
	}
	json_decref(j);
	jobs_set_free(&s);
	return out;
}

/* What one attempt came to, for record(). */
struct attempt {
	enum outcome o;
	long status;      /* 0: no HTTP answer */
	const char *err;  /* the service's text */
	const char *cls;  /* job_callback_attempts.outcome */
	long long ms;     /* duration */
};

/* One attempt's record, the body of its transaction (db_tx_step): rc 1 recorded, 0 not
 * ours any more. */
struct record_tx {
	const struct cfg *cfg;
	const struct delivery *d;
	const struct attempt *a;
	int n, rc;
};

static enum db_tx_end record_body(struct db *db, void *arg)
{
	struct record_tx *t = arg;
	const struct delivery *d = t->d;
	const struct attempt *a = t->a;
	int n = t->n;
	long long rc;

	t->rc = 0;
	if (a->o == OUT_DELIVERED)
		rc = db_exec_p(db,
			       "UPDATE job_callbacks SET state = 'delivered', attempts = ?,"
			       " last_status = ?, last_error = NULL, delivered_at = NOW(3)"
			       " WHERE job_id = ? AND state = 'pending' AND attempts = ?",
			       db_i64(n), db_i64(a->status), db_str(d->job), db_i64(d->attempts));
	else if (a->o == OUT_REFUSED || n >= t->cfg->callback_max_attempts)
		rc = db_exec_p(db,
			       "UPDATE job_callbacks SET state = 'failed', attempts = ?,"
			       " last_status = ?, last_error = LEFT(?, 255)"
			       " WHERE job_id = ? AND state = 'pending' AND attempts = ?",
			       db_i64(n), db_null_i64(a->status, a->status == 0), db_str(a->err),
			       db_str(d->job), db_i64(d->attempts));
	else
		rc = db_exec_p(db,
			       "UPDATE job_callbacks SET attempts = ?, last_status = ?,"
			       " last_error = LEFT(?, 255),"
			       " next_attempt_at = NOW(3) + INTERVAL ? MICROSECOND"
			       " WHERE job_id = ? AND state = 'pending' AND attempts = ?",
			       db_i64(n), db_null_i64(a->status, a->status == 0), db_str(a->err),
			       db_i64(hs_backoff_ms(t->cfg->callback_backoff_ms, n) * 1000),
			       db_str(d->job), db_i64(d->attempts));
	if (rc == 1 && a->o != OUT_REFUSED)
		rc = db_exec_p(db,
			       "INSERT INTO job_callback_attempts (job_id, attempt, started_at,"
			       " http_status, error, duration_ms, outcome)"
			       " VALUES (?, ?, NOW(3) - INTERVAL ? MICROSECOND, ?, LEFT(?, 255), ?, ?)",
			       db_str(d->job), db_i64(n), db_i64(a->ms * 1000),
			       db_null_i64(a->status, a->status == 0),
			       a->o == OUT_DELIVERED ? db_str(NULL) : db_str(a->err),
			       db_i64(a->ms), db_str(a->cls));
	if (rc == 1 && a->o != OUT_REFUSED) {
		unsigned char shard = 0;
		util_random(&shard, 1);
		rc = db_exec_p(db,
			       "INSERT INTO webhook_attempt_counts (outcome, shard, n) VALUES (?, ?, 1)"
			       " ON DUPLICATE KEY UPDATE n = n + 1",
			       db_str(a->cls), db_i64(shard % 16));
		rc = rc < 0 ? -1 : 1;
	}
	if (rc < 0)
		return DB_TX_ERROR;
	if (rc == 0)
		return DB_TX_ROLLBACK;
	t->rc = 1;
	return DB_TX_COMMIT;
}

/* The summary on job_callbacks and, unless the destination was refused before any
 * connection, the attempt's own row, in one transaction (retried whole when it loses a
 * conflict). The UPDATE is guarded by the attempt count load() read: a pass whose
 * claim had expired (another pass took the row) writes nothing, so attempt n is
 * recorded once and a job holds at most callback_max_attempts rows. The log lines
 * come after the transaction, once. */
static void record(struct db *db, const struct cfg *cfg, const struct delivery *d,
		   const struct attempt *a)
{
	int n = d->attempts + (a->o == OUT_REFUSED ? 0 : 1), rc;
	struct record_tx t = { cfg, d, a, n, 0 };
	char at[16], st[16];

	rc = db_tx_step(db, "callback_record", record_body, &t) < 0 ? -1 : t.rc;
	snprintf(at, sizeof at, "%d", n);
	snprintf(st, sizeof st, "%ld", a->status);
	/* The URL stays out of the log: its query may carry the client's own secrets. */
	log_kv(a->o == OUT_DELIVERED ? "info" : "warn",
	       a->o == OUT_DELIVERED ? "callback_delivered" : "callback_failed", "job", d->job,
	       "attempt", at, "status", st, "error", a->o == OUT_DELIVERED ? "" : a->err,
	       "retry", a->o == OUT_RETRY && n < cfg->callback_max_attempts ? "yes" : "no",
	       (char *)NULL);
	if (rc < 0)
		log_kv("warn", "db_error", "step", "callback_record", "error", db_error(db),
		       (char *)NULL);
	else if (rc == 0)
		log_kv("warn", "callback_not_recorded", "job", d->job, "reason",
		       "another pass recorded this attempt first", (char *)NULL);
}

static void deliver(struct db *db, const struct cfg *cfg, const char *job)
{
	struct delivery d;
	char err[256] = "";
	struct attempt a = { .err = err, .cls = "internal" };
	double t0 = util_mono_ms();
	char *body;
	size_t len = 0;

	if (load(db, job, &d) < 0)
		return;
	if (d.secret[0] == '\0') {
		a.o = OUT_REFUSED;
		a.err = "refused: the job's key has no webhook secret"
			" (sandboxctl keys webhook-secret KEY_ID sets one)";
		record(db, cfg, &d, &a);
		return;
	}
	body = job_body(db, cfg, &d, &len);
	if (body == NULL) {
		a.o = OUT_RETRY;
		a.err = "could not render the job";
	} else {
		a.o = post(cfg, &d, body, len, &a.status, err, sizeof err, &a.cls);
		free(body);
	}
	a.ms = (long long)(util_mono_ms() - t0);
	record(db, cfg, &d, &a);
	explicit_bzero(d.secret, sizeof d.secret);
}

/* Claimed rows are ours for CB_CLAIM_SECONDS: the conditional UPDATE that moves
 * next_attempt_at succeeds for one claimer only (each its own transaction, retried
 * when it loses a conflict). */
static int claim(struct db *db, char ids[CB_PER_PASS][UUID_STR_LEN])
{
	struct db_res *r = db_query_p(db,
				      "SELECT job_id FROM job_callbacks WHERE state = 'pending'"
				      " AND next_attempt_at <= NOW(3) ORDER BY next_attempt_at"
				      " LIMIT ?",
				      db_i64(CB_PER_PASS * 2));
	int n = 0;

	if (r == NULL)
		return -1;
	for (size_t i = 0; i < db_res_rows(r) && n < CB_PER_PASS; i++) {
		const char *id = db_res_s(r, i, "job_id");
		long long got = db_tx_exec_p(db, "callback_claim",
					     "UPDATE job_callbacks SET next_attempt_at = NOW(3)"
					     " + INTERVAL ? SECOND WHERE job_id = ? AND state = 'pending'"
					     " AND next_attempt_at <= NOW(3)",
					     db_i64(CB_CLAIM_SECONDS), db_str(id));
		if (got == 1)
			snprintf(ids[n++], UUID_STR_LEN, "%s", id);
	}
	db_res_free(r);
	return n;
}

/* Runs as root in the dispatcher's child: a receiver's TLS stack or a curl bug must
 * not meet a root process. The DB connection is already open. */
static int drop_root(void)
{
	if (getuid() != 0)
		return 0;
	return setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			       setresuid(65534, 65534, 65534) < 0
		       ? -1
		       : 0;
}

int cb_pass(const struct cfg *cfg)
{
	char ids[CB_PER_PASS][UUID_STR_LEN], err[256];
	struct db *db = db_open(cfg, err, sizeof err);
	int n;

	if (db == NULL)
		return -1;
	n = claim(db, ids);
	if (n > 0 && (drop_root() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != 0)) {
		log_kv("error", "callback_setup", "error", "could not drop root or start curl",
		       (char *)NULL);
		n = -1;
	}
	for (int i = 0; i < n; i++)
		deliver(db, cfg, ids[i]);
	db_close(db);
	return n;
}
