/* MariaDB access: one connection per process, prepared statements only.
 *
 * Parameters are typed values the compiler checks (db_str, db_blob, db_i64,
 * db_null_i64), counted by the db_exec_p / db_query_p macros: there is no format
 * string to get wrong. Every result column is fetched as bytes (NUL-terminated for
 * convenience) and read by name (db_res_s / db_res_i / db_res_l: the column name or
 * its alias) or by index. Dates are best selected with DATE_FORMAT. */
#ifndef SANDBOX_DB_H
#define SANDBOX_DB_H

#include <stddef.h>

#include "config.h"

struct db;
struct db_res;

/* Opens a connection (utf8mb4, UTC session time zone, timeouts from cfg, no
 * auto-reconnect). NULL with a message in err. With db_hosts set, tries its entries
 * in turn from a per-process start (getpid() % n, then the entry that last answered),
 * each within db_connect_timeout, and keeps the first that connects and answers a
 * query; logs `event=db_failover from=<entry> to=<entry>` when that is not the first
 * tried; when none does, err names every entry with its MariaDB error number. */
struct db *db_open(const struct cfg *cfg, char *err, size_t errlen);
void db_close(struct db *db);

struct db_param {
	char type;        /* 's' string, 'b' bytes, 'i' integer: set by the constructors */
	const void *p;    /* 's': const char *, 'b': bytes */
	size_t len;       /* 'b' */
	long long i;      /* 'i' */
	int null;         /* 'i': bind SQL NULL */
};

/* Typed parameters, checked by the compiler (prefer them to the type strings):
 *   db_exec_p(db, "UPDATE t SET a = ? WHERE id = ?", db_i64(n), db_str(id));
 * db_str(NULL) and db_blob(NULL, 0) bind SQL NULL; db_null_i64 binds NULL when its
 * second argument is non-zero. */
static inline struct db_param db_str(const char *s)
{
	return (struct db_param){ .type = 's', .p = s };
}
static inline struct db_param db_blob(const void *p, size_t n)
{
	return (struct db_param){ .type = 'b', .p = p, .len = n };
}
static inline struct db_param db_i64(long long v)
{
	return (struct db_param){ .type = 'i', .i = v };
}
static inline struct db_param db_null_i64(long long v, int is_null)
{
	return (struct db_param){ .type = 'i', .i = v, .null = is_null != 0 };
}
#define DB_PARAMS(...)                                        \
	(const struct db_param[]){ __VA_ARGS__ },              \
		sizeof((const struct db_param[]){ __VA_ARGS__ }) / sizeof(struct db_param)
#define db_exec_p(db, sql, ...) db_execa((db), (sql), DB_PARAMS(__VA_ARGS__))
#define db_query_p(db, sql, ...) db_querya((db), (sql), DB_PARAMS(__VA_ARGS__))

/* Affected rows, or -1 on error. Prefer db_exec_p below (typed, counted). */
long long db_execa(struct db *db, const char *sql, const struct db_param *p, size_t n);
/* All rows of a SELECT, or NULL on error. Prefer db_query_p. */
struct db_res *db_querya(struct db *db, const char *sql, const struct db_param *p, size_t n);


unsigned long long db_insert_id(struct db *db);

/* 0 when the server answers (no reconnect: the caller decides). */
int db_ping(struct db *db);
int db_begin(struct db *db);
int db_commit(struct db *db);
void db_rollback(struct db *db);
/* A random number drawn when a transaction begins (db_begin, db_tx), the same for
 * every statement of that transaction: jd_add_stored picks a key's storage shard with
 * it, so a transaction locks one shard row of a key however many jobs it charges
 * (two transactions that each locked several, in random orders, deadlocked). */
unsigned db_tx_salt(const struct db *db);
/* Runs SQL text with no parameters (DDL, migrations): 0 or -1. */
int db_run(struct db *db, const char *sql);

/* The last error: server/client errno (0 if none), and its redacted message. */
unsigned db_errno(const struct db *db);
const char *db_error(const struct db *db);
/* The last error means the connection is gone: close it and reconnect later. */
int db_conn_lost(const struct db *db);
/* The connection is gone or unusable (lost, any client-side error, or a Galera node
 * out of the Primary component: 1047, 1180): close it. */
int db_gone(const struct db *db);
/* The last error was a deadlock or lock-wait timeout: retry the transaction. */
int db_retryable(const struct db *db);

/* ---- One transaction, retried whole when it loses a conflict (db_tx).
 *
 * db_tx(db, body, arg) runs body(db, arg) between START TRANSACTION and COMMIT and,
 * when the transaction loses a conflict, rolls it back and runs the body again from
 * the start in a new transaction: a deadlock (1213) or a lock wait timeout (1205) at
 * any statement of the body or at COMMIT, or the body's own DB_TX_RETRY. At most
 * DB_TX_ATTEMPTS runs, none begun more than DB_TX_BUDGET_MS after the first; before
 * run k+1 a pause drawn at random from 1 ms to min(2^k, 50) ms, so that the losers of
 * one conflict do not meet again.
 *
 * The body's contract:
 * - It may run several times: it starts each run from its inputs and writes its
 *   results (ids, counts, the answer to give) into arg afresh on every run; nothing a
 *   failed run read or made is kept. Nothing outside the database (a wake-up, a log
 *   line, a per-process cache) belongs in it unless repeating it is harmless: do
 *   those after db_tx returns 0.
 * - It checks every statement and returns DB_TX_ERROR at the first that fails
 *   (db_errno tells which). Under Galera a statement's 1213 has already rolled the
 *   transaction back and a COMMIT after it would succeed: db_tx remembers a conflict
 *   met by any statement of the run and never commits after one, but a body that
 *   carries on after an error is wrong anyway.
 * - It never begins, commits or rolls back itself. It returns:
 *     DB_TX_COMMIT    its work stands (committed);
 *     DB_TX_ROLLBACK  its answer is a refusal: what it did is undone, not an error;
 *     DB_TX_ERROR     a statement failed: rolled back; run again if a conflict;
 *     DB_TX_RETRY     rolled back and run again (a unique key a concurrent
 *                     transaction inserted first: the next run finds its row).
 *
 * db_tx returns 0 once the last run was committed (or rolled back at the body's
 * request), -1 when the transaction failed: rolled back, db_errno/db_error give the
 * cause. Then db_tx_lost(db) is 1 when the cause was a conflict still lost after the
 * bound (answer 503 with Retry-After: it is the moment, not the request), and
 * db_conn_lost(db) when the connection went (never retried here: the caller closes
 * it and reconnects; a COMMIT whose connection dropped has an unknown outcome).
 *
 *   struct cancel_tx t = { .id = id };
 *   if (db_tx(db, cancel_body, &t) < 0)
 *           return db_tx_lost(db) ? ... 503 ... : ... 500 / reconnect ...;
 *   use t.state;
 */
enum db_tx_end { DB_TX_COMMIT, DB_TX_ROLLBACK, DB_TX_ERROR, DB_TX_RETRY };
#define DB_TX_ATTEMPTS 10 /* 6 lost ~1% of submits of one key from 3 Galera nodes */
#define DB_TX_BUDGET_MS 6000 /* one lock wait timeout (5 s) leaves room for one more run */
#define DB_TX_PAUSE_MAX_MS 50
int db_tx(struct db *db, enum db_tx_end (*body)(struct db *db, void *arg), void *arg);
/* db_tx for a process without /metrics (the runner): the same runs, and a log line
 * for each retry, `event=tx_retry cause=deadlock|lock_wait_timeout|requested
 * step=STEP attempt=N`, and for a loss after the bound, `event=tx_lost cause=...
 * step=STEP attempts=N`. step is a fixed name of the transaction, never a value. */
int db_tx_step(struct db *db, const char *step, enum db_tx_end (*body)(struct db *db, void *arg),
	       void *arg);
/* One statement as a transaction of its own through db_tx_step (retried when it loses
 * a conflict): its affected rows, or -1 (db_tx_lost, db_errno as for db_tx).
 *   db_tx_exec_p(db, "claim", "UPDATE t SET a = ? WHERE id = ?", db_i64(n), db_str(id)); */
long long db_tx_execa(struct db *db, const char *step, const char *sql,
		      const struct db_param *p, size_t n);
#define db_tx_exec_p(db, step, sql, ...) \
	db_tx_execa((db), (step), (sql), DB_PARAMS(__VA_ARGS__))
/* The last db_tx failed because it kept losing conflicts (deadlocks, lock wait
 * timeouts, the body's DB_TX_RETRY) until its bound; cleared by the next statement. */
int db_tx_lost(const struct db *db);

/* What db_tx reports, for metrics: one event per retry, by its cause, and one per
 * transaction that lost after the bound. */
enum db_tx_event {
	DB_TX_EV_DEADLOCK,  /* 1213 */
	DB_TX_EV_LOCK_WAIT, /* 1205 */
	DB_TX_EV_REQUESTED, /* the body's DB_TX_RETRY */
	DB_TX_EV_LOST,      /* the bound reached: db_tx failed */
	DB_TX_EV_COUNT
};
/* Every db_tx of this process reports to fn(arg, event) (NULL: nobody). The API's
 * workers count them into their /metrics row; set it after fork. */
void db_tx_observe(void (*fn)(void *arg, enum db_tx_event ev), void *arg);

size_t db_res_rows(const struct db_res *r);
/* Cell as NUL-terminated bytes; NULL when the value is SQL NULL. */
const char *db_res_str(const struct db_res *r, size_t row, size_t col);
size_t db_res_len(const struct db_res *r, size_t row, size_t col);
long long db_res_int(const struct db_res *r, size_t row, size_t col, long long dflt);
/* Columns by name (the SELECT's column name or alias): index, or -1 if absent. */
long db_res_col(const struct db_res *r, const char *name);
/* By name; an unknown name reads as SQL NULL (str NULL, len 0, int dflt). */
const char *db_res_s(const struct db_res *r, size_t row, const char *name);
size_t db_res_l(const struct db_res *r, size_t row, const char *name);
long long db_res_i(const struct db_res *r, size_t row, const char *name, long long dflt);
void db_res_free(struct db_res *r);

#endif
