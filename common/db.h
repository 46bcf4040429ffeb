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
 * auto-reconnect). NULL with a message in err. */
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
/* Runs SQL text with no parameters (DDL, migrations): 0 or -1. */
int db_run(struct db *db, const char *sql);

/* The last error: server/client errno (0 if none), and its redacted message. */
unsigned db_errno(const struct db *db);
const char *db_error(const struct db *db);
/* The last error means the connection is gone: close it and reconnect later. */
int db_conn_lost(const struct db *db);
/* The connection is gone or unusable (lost, or any client-side error): close it. */
int db_gone(const struct db *db);
/* The last error was a deadlock or lock-wait timeout: retry the transaction. */
int db_retryable(const struct db *db);

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
