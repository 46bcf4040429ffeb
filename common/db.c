/* MariaDB access (see db.h). */
#include "db.h"

#include <errno.h>
#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "redact.h"
#include "util.h"

#define DB_MAX_PARAMS 128
#define DB_MAX_CELL (256u << 20) /* a cell larger than this is refused, not fetched */

#define DB_STMT_CACHE 48

/* Prepared statements are kept per connection, keyed by their SQL text: a query
 * then costs one round trip instead of three (prepare, execute, close). */
struct db_stmt {
	char *sql;
	MYSQL_STMT *st;
	unsigned long long used; /* for eviction of the least recently used */
};

struct db {
	MYSQL *my;
	unsigned err;
	char msg[512];
	struct db_stmt cache[DB_STMT_CACHE];
	unsigned long long clock;
	unsigned tx_salt;     /* db_tx_salt */
	unsigned tx_conflict; /* 1213 or 1205 met since the transaction began, else 0 */
	int tx_lost;          /* db_tx_lost */
};

struct cell {
	char *data;
	size_t len;
	bool null;
};

struct db_res {
	size_t rows, cols, cap;
	struct cell *cells;
	char **names; /* cols column names (aliases) */
};

static void set_err(struct db *db, unsigned code, const char *msg)
{
	db->err = code;
	/* Remembered until the next BEGIN: under Galera the transaction is already
	 * rolled back, and a COMMIT after it would report success (db_tx). */
	if (code == ER_LOCK_DEADLOCK || code == ER_LOCK_WAIT_TIMEOUT)
		db->tx_conflict = code;
	snprintf(db->msg, sizeof db->msg, "%s", msg);
	redact(db->msg);
}

static void stmt_err(struct db *db, MYSQL_STMT *st)
{
	set_err(db, mysql_stmt_errno(st), mysql_stmt_error(st));
}

#define DB_INIT "SET time_zone='+00:00', innodb_lock_wait_timeout=5"

/* A new handle with the session's options (utf8mb4, UTC, timeouts, no reconnect, and
 * db_sync_wait as wsrep_sync_wait: on a Galera node, a read waits until the node has
 * applied what the cluster committed before it, so that a GET on one node sees a POST
 * committed through another). */
static MYSQL *db_handle(const struct cfg *cfg)
{
	MYSQL *my = mysql_init(NULL);
	unsigned timeout = (unsigned)cfg->db_connect_timeout, rw = timeout * 5;
	my_bool off = 0;
	char init[96];

	if (my == NULL)
		return NULL;
	if (cfg->db_sync_wait > 0)
		snprintf(init, sizeof init, "%s, wsrep_sync_wait=%lld", DB_INIT, cfg->db_sync_wait);
	else
		snprintf(init, sizeof init, "%s", DB_INIT);
	mysql_options(my, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_options(my, MYSQL_OPT_READ_TIMEOUT, &rw);
	mysql_options(my, MYSQL_OPT_WRITE_TIMEOUT, &rw);
	mysql_options(my, MYSQL_OPT_RECONNECT, &off);
	mysql_options(my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	mysql_options(my, MYSQL_INIT_COMMAND, init);
	return my;
}

/* The db_hosts entry this process tries first (-1: not chosen yet). It starts at
 * getpid() % n, so that many workers spread over the nodes, and then follows the
 * entry that last answered; after a round where none did, it moves one on. */
static int db_start = -1;

/* db_hosts: each entry in turn from db_start; the first that connects and answers
 * a query (a Galera node that is not Primary connects but refuses it with 1047). */
static MYSQL *db_connect_list(const struct cfg *cfg, const char *pw, char *err,
			      size_t errlen)
{
	int n = cfg->db_host_count, start;
	char tried[1024] = "", last[256] = "";
	size_t used = 0;

	if (db_start < 0 || db_start >= n)
		db_start = (int)(getpid() % n);
	start = db_start;
	for (int i = 0; i < n; i++) {
		const struct cfg_db_host *h = &cfg->db_host_list[(start + i) % n];
		MYSQL *my = db_handle(cfg);
		unsigned code;
		int w;

		if (my == NULL) {
			snprintf(err, errlen, "mysql_init failed");
			return NULL;
		}
		if (mysql_real_connect(my, h->socket[0] ? NULL : h->host, cfg->db_user, pw,
				       cfg->db_name,
				       (unsigned)(h->port ? h->port : cfg->db_port),
				       h->socket[0] ? h->socket : NULL, 0) != NULL &&
		    mysql_query(my, "SELECT 1") == 0) {
			MYSQL_RES *r = mysql_store_result(my);

			mysql_free_result(r);
			if (i > 0)
				log_kv("warn", "db_failover", "from",
				       cfg->db_host_list[start].entry, "to", h->entry, (char *)NULL);
			db_start = (start + i) % n;
			return my;
		}
		code = mysql_errno(my);
		snprintf(last, sizeof last, "%s", mysql_error(my));
		mysql_close(my);
		w = snprintf(tried + used, sizeof tried - used, "%s%s (%u)", used ? ", " : "",
			     h->entry, code);
		if (w > 0)
			used = used + (size_t)w < sizeof tried ? used + (size_t)w : sizeof tried - 1;
	}
	db_start = (start + 1) % n;
	redact(last);
	snprintf(err, errlen, "connect: no db_hosts entry answered: %s; last: %s", tried, last);
	return NULL;
}

struct db *db_open(const struct cfg *cfg, char *err, size_t errlen)
{
	struct db *db = calloc(1, sizeof *db);
	char pw[256], perr[256];

	if (db == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (cfg_db_password(cfg, pw, sizeof pw, perr, sizeof perr) < 0) {
		snprintf(err, errlen, "%s", perr);
		free(db);
		return NULL;
	}
	if (cfg->db_host_count > 0) {
		db->my = db_connect_list(cfg, pw, err, errlen);
		explicit_bzero(pw, sizeof pw);
		if (db->my == NULL) {
			free(db);
			return NULL;
		}
		return db;
	}
	db->my = db_handle(cfg);
	if (db->my == NULL) {
		snprintf(err, errlen, "mysql_init failed");
		explicit_bzero(pw, sizeof pw);
		free(db);
		return NULL;
	}
	if (mysql_real_connect(db->my, cfg->db_socket[0] ? NULL : cfg->db_host, cfg->db_user, pw,
			       cfg->db_name, (unsigned)cfg->db_port,
			       cfg->db_socket[0] ? cfg->db_socket : NULL, 0) == NULL) {
		char m[512];
		snprintf(m, sizeof m, "%s", mysql_error(db->my));
		redact(m);
		snprintf(err, errlen, "connect: %s (%u)", m, mysql_errno(db->my));
		explicit_bzero(pw, sizeof pw);
		mysql_close(db->my);
		free(db);
		return NULL;
	}
	explicit_bzero(pw, sizeof pw);
	return db;
}

void db_close(struct db *db)
{
	if (db == NULL)
		return;
	for (int i = 0; i < DB_STMT_CACHE; i++) {
		if (db->cache[i].st)
			mysql_stmt_close(db->cache[i].st);
		free(db->cache[i].sql);
	}
	mysql_close(db->my);
	free(db);
}

unsigned db_errno(const struct db *db)
{
	return db->err;
}

const char *db_error(const struct db *db)
{
	return db->msg;
}

int db_conn_lost(const struct db *db)
{
	switch (db->err) {
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
	case CR_SERVER_LOST_EXTENDED:
	case CR_COMMANDS_OUT_OF_SYNC:
	case ER_CONNECTION_KILLED:
	case ER_SERVER_SHUTDOWN:
	case 4031: /* ER_CLIENT_INTERACTION_TIMEOUT */
		return 1;
	default:
		return 0;
	}
}

int db_gone(const struct db *db)
{
	/* 1047 (ER_UNKNOWN_COM_ERROR: "WSREP has not yet prepared node for application
	 * use") and 1180 (ER_ERROR_DURING_COMMIT, quorum lost) come from a Galera node
	 * that left the Primary component: reopen, so db_open fails over (db_hosts). */
	return db_conn_lost(db) || db->err >= 2000 || db->err == ER_UNKNOWN_COM_ERROR ||
	       db->err == ER_ERROR_DURING_COMMIT;
}

int db_retryable(const struct db *db)
{
	return db->err == ER_LOCK_DEADLOCK || db->err == ER_LOCK_WAIT_TIMEOUT;
}

static int bind_params(struct db *db, MYSQL_STMT *st, const struct db_param *p, size_t n,
		       MYSQL_BIND *b, long long *ints, unsigned long *lens, my_bool *nulls)
{
	if (n > DB_MAX_PARAMS || n != mysql_stmt_param_count(st)) {
		set_err(db, CR_UNKNOWN_ERROR, "parameter count mismatch");
		return -1;
	}
	memset(b, 0, n * sizeof *b);
	for (size_t i = 0; i < n; i++) {
		nulls[i] = 0;
		b[i].is_null = &nulls[i];
		switch (p[i].type) {
		case 's':
		case 'b':
			b[i].buffer_type = p[i].type == 's' ? MYSQL_TYPE_STRING : MYSQL_TYPE_BLOB;
			b[i].buffer = (void *)p[i].p;
			lens[i] = p[i].p == NULL ? 0
				  : p[i].type == 's' ? (unsigned long)strlen(p[i].p)
						     : (unsigned long)p[i].len;
			b[i].length = &lens[i];
			nulls[i] = p[i].p == NULL;
			break;
		case 'i':
			ints[i] = p[i].i;
			b[i].buffer_type = MYSQL_TYPE_LONGLONG;
			b[i].buffer = &ints[i];
			nulls[i] = p[i].null != 0;
			break;
		default:
			set_err(db, CR_UNKNOWN_ERROR, "bad parameter type");
			return -1;
		}
	}
	if (n > 0 && mysql_stmt_bind_param(st, b)) {
		stmt_err(db, st);
		return -1;
	}
	return 0;
}

static void cache_drop(struct db *db, MYSQL_STMT *st)
{
	for (int i = 0; i < DB_STMT_CACHE; i++) {
		if (db->cache[i].st == st) {
			mysql_stmt_close(st);
			free(db->cache[i].sql);
			memset(&db->cache[i], 0, sizeof db->cache[i]);
			return;
		}
	}
	mysql_stmt_close(st);
}

/* The cached statement for sql, prepared on first use. */
static MYSQL_STMT *cache_get(struct db *db, const char *sql)
{
	int victim = 0;
	MYSQL_STMT *st;
	char *copy;

	for (int i = 0; i < DB_STMT_CACHE; i++) {
		if (db->cache[i].sql && strcmp(db->cache[i].sql, sql) == 0) {
			db->cache[i].used = ++db->clock;
			return db->cache[i].st;
		}
		if (db->cache[i].used < db->cache[victim].used)
			victim = i;
	}
	st = mysql_stmt_init(db->my);
	copy = strdup(sql);
	if (st == NULL || copy == NULL) {
		set_err(db, CR_OUT_OF_MEMORY, "out of memory");
		if (st)
			mysql_stmt_close(st);
		free(copy);
		return NULL;
	}
	if (mysql_stmt_prepare(st, sql, strlen(sql))) {
		stmt_err(db, st);
		mysql_stmt_close(st);
		free(copy);
		return NULL;
	}
	if (db->cache[victim].st) {
		mysql_stmt_close(db->cache[victim].st);
		free(db->cache[victim].sql);
	}
	db->cache[victim] = (struct db_stmt){ copy, st, ++db->clock };
	return st;
}

static MYSQL_STMT *prepare_exec(struct db *db, const char *sql, const struct db_param *p,
				size_t n)
{
	MYSQL_BIND b[DB_MAX_PARAMS];
	long long ints[DB_MAX_PARAMS];
	unsigned long lens[DB_MAX_PARAMS];
	my_bool nulls[DB_MAX_PARAMS];
	MYSQL_STMT *st;

	db->tx_lost = 0; /* it describes the last error only */
	for (int attempt = 0; attempt < 2; attempt++) {
		db->err = 0;
		db->msg[0] = '\0';
		st = cache_get(db, sql);
		if (st == NULL)
			return NULL;
		if (bind_params(db, st, p, n, b, ints, lens, nulls) == 0 && mysql_stmt_execute(st) == 0)
			return st;
		if (db->err == 0)
			stmt_err(db, st);
		cache_drop(db, st);
		/* 1615: the table changed under a cached statement: prepare it anew. */
		if (db->err != ER_NEED_REPREPARE)
			break;
	}
	return NULL;
}

/* A cached statement is kept; its result set is released for the next use. */
static void stmt_done(MYSQL_STMT *st)
{
	mysql_stmt_free_result(st);
}

long long db_execa(struct db *db, const char *sql, const struct db_param *p, size_t n)
{
	MYSQL_STMT *st = prepare_exec(db, sql, p, n);
	long long rows;

	if (st == NULL)
		return -1;
	rows = (long long)mysql_stmt_affected_rows(st);
	stmt_done(st);
	return rows;
}

unsigned long long db_insert_id(struct db *db)
{
	return mysql_insert_id(db->my);
}

static struct cell *res_add_row(struct db_res *r)
{
	if (r->rows == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;
		struct cell *c = reallocarray(r->cells, cap * r->cols, sizeof *c);
		if (c == NULL)
			return NULL;
		r->cells = c;
		r->cap = cap;
	}
	memset(&r->cells[r->rows * r->cols], 0, r->cols * sizeof(struct cell));
	return &r->cells[r->rows++ * r->cols];
}

/* Copies every column of the fetched row, pulling long values in full. */
static int fetch_row(struct db *db, MYSQL_STMT *st, struct db_res *r, MYSQL_BIND *b,
		     unsigned long *lens, my_bool *nulls)
{
	struct cell *row = res_add_row(r);

	if (row == NULL) {
		set_err(db, CR_OUT_OF_MEMORY, "out of memory");
		return -1;
	}
	for (size_t c = 0; c < r->cols; c++) {
		if (nulls[c]) {
			row[c].null = true;
			continue;
		}
		if (lens[c] > DB_MAX_CELL) {
			set_err(db, CR_UNKNOWN_ERROR, "result cell too large");
			return -1;
		}
		row[c].data = malloc(lens[c] + 1);
		if (row[c].data == NULL) {
			set_err(db, CR_OUT_OF_MEMORY, "out of memory");
			return -1;
		}
		row[c].len = lens[c];
		if (lens[c] > 0) {
			MYSQL_BIND one;
			memset(&one, 0, sizeof one);
			one.buffer_type = MYSQL_TYPE_BLOB;
			one.buffer = row[c].data;
			one.buffer_length = lens[c];
			if (mysql_stmt_fetch_column(st, &one, (unsigned)c, 0)) {
				stmt_err(db, st);
				return -1;
			}
		}
		row[c].data[lens[c]] = '\0';
		(void)b;
	}
	return 0;
}

static int column_names(MYSQL_STMT *st, struct db_res *r)
{
	MYSQL_RES *meta = mysql_stmt_result_metadata(st);
	MYSQL_FIELD *f;

	if (meta == NULL)
		return 0;
	r->names = calloc(r->cols, sizeof *r->names);
	f = mysql_fetch_fields(meta);
	for (size_t c = 0; r->names && c < r->cols; c++) {
		r->names[c] = strdup(f[c].name ? f[c].name : "");
		if (r->names[c] == NULL)
			break;
	}
	mysql_free_result(meta);
	for (size_t c = 0; r->names && c < r->cols; c++)
		if (r->names[c] == NULL)
			return -1;
	return r->names ? 0 : -1;
}

static struct db_res *collect(struct db *db, MYSQL_STMT *st)
{
	struct db_res *r = calloc(1, sizeof *r);
	MYSQL_BIND *b = NULL;
	unsigned long *lens = NULL;
	my_bool *nulls = NULL;
	int rc;

	if (r == NULL)
		goto oom;
	r->cols = mysql_stmt_field_count(st);
	if (r->cols == 0)
		return r;
	b = calloc(r->cols, sizeof *b);
	lens = calloc(r->cols, sizeof *lens);
	nulls = calloc(r->cols, sizeof *nulls);
	if (b == NULL || lens == NULL || nulls == NULL)
		goto oom;
	/* Zero-length buffers: each fetch reports lengths, then fetch_column copies. */
	for (size_t c = 0; c < r->cols; c++) {
		b[c].buffer_type = MYSQL_TYPE_BLOB;
		b[c].length = &lens[c];
		b[c].is_null = &nulls[c];
	}
	if (column_names(st, r) < 0)
		goto oom;
	if (mysql_stmt_bind_result(st, b) || mysql_stmt_store_result(st)) {
		stmt_err(db, st);
		goto fail;
	}
	while ((rc = mysql_stmt_fetch(st)) == 0 || rc == MYSQL_DATA_TRUNCATED) {
		if (fetch_row(db, st, r, b, lens, nulls) < 0)
			goto fail;
	}
	if (rc != MYSQL_NO_DATA) {
		stmt_err(db, st);
		goto fail;
	}
	free(b);
	free(lens);
	free(nulls);
	return r;
oom:
	set_err(db, CR_OUT_OF_MEMORY, "out of memory");
fail:
	free(b);
	free(lens);
	free(nulls);
	db_res_free(r);
	return NULL;
}

struct db_res *db_querya(struct db *db, const char *sql, const struct db_param *p, size_t n)
{
	MYSQL_STMT *st = prepare_exec(db, sql, p, n);
	struct db_res *r;

	if (st == NULL)
		return NULL;
	r = collect(db, st);
	if (r == NULL)
		cache_drop(db, st);
	else
		stmt_done(st);
	return r;
}

int db_run(struct db *db, const char *sql)
{
	db->err = 0;
	db->tx_lost = 0;
	if (mysql_query(db->my, sql)) {
		set_err(db, mysql_errno(db->my), mysql_error(db->my));
		return -1;
	}
	/* Drain any result sets (multi statements are off: at most one). */
	MYSQL_RES *res = mysql_store_result(db->my);
	if (res != NULL)
		mysql_free_result(res);
	return 0;
}

int db_ping(struct db *db)
{
	if (mysql_ping(db->my) != 0) {
		set_err(db, mysql_errno(db->my), mysql_error(db->my));
		return -1;
	}
	return 0;
}

int db_begin(struct db *db)
{
	if (util_random(&db->tx_salt, sizeof db->tx_salt) < 0)
		db->tx_salt = (unsigned)db->clock;
	db->tx_conflict = 0;
	return db_run(db, "START TRANSACTION");
}

unsigned db_tx_salt(const struct db *db)
{
	return db->tx_salt;
}

int db_commit(struct db *db)
{
	return db_run(db, "COMMIT");
}

void db_rollback(struct db *db)
{
	unsigned e = db->err;
	char m[sizeof db->msg];

	/* Keep the error that caused the rollback, not the rollback's own. */
	memcpy(m, db->msg, sizeof m);
	if (mysql_query(db->my, "ROLLBACK") == 0) {
		MYSQL_RES *res = mysql_store_result(db->my);
		if (res != NULL)
			mysql_free_result(res);
	}
	db->err = e;
	memcpy(db->msg, m, sizeof m);
}

size_t db_res_rows(const struct db_res *r)
{
	return r->rows;
}

const char *db_res_str(const struct db_res *r, size_t row, size_t col)
{
	if (row >= r->rows || col >= r->cols)
		return NULL;
	return r->cells[row * r->cols + col].null ? NULL : r->cells[row * r->cols + col].data;
}

size_t db_res_len(const struct db_res *r, size_t row, size_t col)
{
	if (row >= r->rows || col >= r->cols)
		return 0;
	return r->cells[row * r->cols + col].len;
}

long long db_res_int(const struct db_res *r, size_t row, size_t col, long long dflt)
{
	const char *s = db_res_str(r, row, col);
	char *end;
	long long v;

	if (s == NULL || *s == '\0')
		return dflt;
	errno = 0;
	v = strtoll(s, &end, 10);
	return (errno || *end) ? dflt : v;
}

long db_res_col(const struct db_res *r, const char *name)
{
	for (size_t c = 0; r->names && c < r->cols; c++)
		if (r->names[c] && strcmp(r->names[c], name) == 0)
			return (long)c;
	return -1;
}

const char *db_res_s(const struct db_res *r, size_t row, const char *name)
{
	long c = db_res_col(r, name);

	return c < 0 ? NULL : db_res_str(r, row, (size_t)c);
}

size_t db_res_l(const struct db_res *r, size_t row, const char *name)
{
	long c = db_res_col(r, name);

	return c < 0 ? 0 : db_res_len(r, row, (size_t)c);
}

long long db_res_i(const struct db_res *r, size_t row, const char *name, long long dflt)
{
	long c = db_res_col(r, name);

	return c < 0 ? dflt : db_res_int(r, row, (size_t)c, dflt);
}

void db_res_free(struct db_res *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->rows * r->cols; i++)
		free(r->cells[i].data);
	for (size_t c = 0; r->names && c < r->cols; c++)
		free(r->names[c]);
	free(r->names);
	free(r->cells);
	free(r);
}

static void (*tx_observer)(void *arg, enum db_tx_event ev);
static void *tx_observer_arg;

void db_tx_observe(void (*fn)(void *arg, enum db_tx_event ev), void *arg)
{
	tx_observer = fn;
	tx_observer_arg = arg;
}

static void tx_report(enum db_tx_event ev)
{
	if (tx_observer)
		tx_observer(tx_observer_arg, ev);
}

int db_tx_lost(const struct db *db)
{
	return db->tx_lost;
}

/* A random pause before run `next` (2, 3, ...): 1 ms to min(2^(next-1), 50) ms. */
static void tx_pause(int next)
{
	long cap = next - 1 >= 6 ? DB_TX_PAUSE_MAX_MS : 1L << (next - 1);
	unsigned r = 0;

	if (cap > DB_TX_PAUSE_MAX_MS)
		cap = DB_TX_PAUSE_MAX_MS;
	(void)util_random(&r, sizeof r); /* on failure r stays 0: the shortest pause */
	util_sleep_ms(1 + (long)(r % (unsigned)cap));
}

/* One run of the body in its own transaction: its end as the body gave it, or
 * DB_TX_ERROR when BEGIN or COMMIT failed. A conflict met by any statement of the run
 * is its cause, whatever the body did after it. Rolled back unless committed. */
static enum db_tx_end tx_run(struct db *db, enum db_tx_end (*body)(struct db *, void *),
			     void *arg)
{
	enum db_tx_end end;

	if (db_begin(db) < 0)
		return DB_TX_ERROR;
	end = body(db, arg);
	if (end != DB_TX_RETRY && db->tx_conflict && !db_conn_lost(db)) {
		/* The body carried on after a statement lost: never commit it. */
		if (db->err != db->tx_conflict)
			set_err(db, db->tx_conflict, "a statement of the transaction lost a conflict");
		end = DB_TX_ERROR;
	}
	if (end == DB_TX_COMMIT && db_commit(db) == 0)
		return DB_TX_COMMIT;
	if (end == DB_TX_COMMIT)
		end = DB_TX_ERROR;
	db_rollback(db); /* also after 1205, which undid only its statement */
	return end;
}

/* The name of an event in db_tx_step's log lines. */
static const char *tx_cause(enum db_tx_event ev)
{
	return ev == DB_TX_EV_DEADLOCK ? "deadlock"
	       : ev == DB_TX_EV_LOCK_WAIT ? "lock_wait_timeout"
					  : "requested";
}

/* db_tx's loop; step non-NULL: each retry and a loss are also logged under it. */
static int tx_loop(struct db *db, const char *step,
		   enum db_tx_end (*body)(struct db *db, void *arg), void *arg)
{
	double t0 = util_mono_ms();
	char n[16];

	db->tx_lost = 0;
	for (int run = 1;; run++) {
		enum db_tx_end end = tx_run(db, body, arg);
		enum db_tx_event ev;

		if (end == DB_TX_COMMIT || end == DB_TX_ROLLBACK)
			return 0;
		if (end == DB_TX_RETRY)
			ev = DB_TX_EV_REQUESTED;
		else if (!db_conn_lost(db) && db->err == ER_LOCK_DEADLOCK)
			ev = DB_TX_EV_DEADLOCK;
		else if (!db_conn_lost(db) && db->err == ER_LOCK_WAIT_TIMEOUT)
			ev = DB_TX_EV_LOCK_WAIT;
		else
			return -1; /* not a conflict: the same run would fail again */
		snprintf(n, sizeof n, "%d", run);
		if (run >= DB_TX_ATTEMPTS || util_mono_ms() - t0 > DB_TX_BUDGET_MS) {
			db->tx_lost = 1;
			tx_report(DB_TX_EV_LOST);
			if (step)
				log_kv("warn", "tx_lost", "cause", tx_cause(ev), "step", step,
				       "attempts", n, (char *)NULL);
			return -1;
		}
		tx_report(ev);
		if (step)
			log_kv("info", "tx_retry", "cause", tx_cause(ev), "step", step, "attempt", n,
			       (char *)NULL);
		tx_pause(run + 1);
	}
}

int db_tx(struct db *db, enum db_tx_end (*body)(struct db *db, void *arg), void *arg)
{
	return tx_loop(db, NULL, body, arg);
}

int db_tx_step(struct db *db, const char *step, enum db_tx_end (*body)(struct db *db, void *arg),
	       void *arg)
{
	return tx_loop(db, step, body, arg);
}

struct exec_tx {
	const char *sql;
	const struct db_param *p;
	size_t n;
	long long rows;
};

static enum db_tx_end exec_body(struct db *db, void *arg)
{
	struct exec_tx *t = arg;

	t->rows = db_execa(db, t->sql, t->p, t->n);
	return t->rows < 0 ? DB_TX_ERROR : DB_TX_COMMIT;
}

long long db_tx_execa(struct db *db, const char *step, const char *sql,
		      const struct db_param *p, size_t n)
{
	struct exec_tx t = { sql, p, n, -1 };

	return tx_loop(db, step, exec_body, &t) < 0 ? -1 : t.rows;
}
