/* The typed DB layer (common/db.c) against the real MariaDB of the test stack:
 * build/db-tests --config FILE (tests/run-integration.sh runs it once the stack is up).
 * Everything happens in a TEMPORARY table of this connection, but db_tx's tests, which
 * need a second connection (a child process) and use the table dbtx_probe, dropped
 * at the end, and the runner's store_append under a real deadlock and store_finish
 * under a lock wait timeout (each with a job row and its key's storage rows of its own,
 * deleted at the end). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <fcntl.h>

#include "config.h"
#include "db.h"
#include "jobdata.h"
#include "store.h"
#include "tests.h"
#include "util.h"

static struct db *db;
static struct cfg cfg;

static void test_roundtrip(void)
{
	static const unsigned char bin[] = { 0, 1, 0xff, 0, 'x', 0x80 };
	struct db_res *r;

	CHECK_INT(db_run(db, "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, s VARCHAR(64) NULL,"
			     " b BLOB NULL, i BIGINT NULL) DEFAULT CHARSET=utf8mb4"),
		  0);
	CHECK_INT(db_exec_p(db, "INSERT INTO t VALUES (?, ?, ?, ?)", db_i64(1), db_str("eve "),
			    db_blob(bin, sizeof bin), db_i64(LLONG_MAX)),
		  1);
	CHECK_INT(db_exec_p(db, "INSERT INTO t VALUES (?, ?, ?, ?)", db_i64(2), db_str(NULL),
			    db_blob(NULL, 0), db_null_i64(5, 1)),
		  1);
	CHECK_INT(db_exec_p(db, "INSERT INTO t VALUES (?, ?, ?, ?)", db_i64(3), db_str(""),
			    db_blob("", 0), db_null_i64(LLONG_MIN, 0)),
		  1);
	r = db_query_p(db, "SELECT id, s AS name, b, i, LENGTH(b) AS n FROM t WHERE id >= ?"
			   " ORDER BY id",
		       db_i64(1));
	if (!CHECK(r != NULL, "select: %s", db_error(db)))
		return;
	CHECK_INT(db_res_rows(r), 3);
	CHECK_INT(db_res_col(r, "name"), 1);
	CHECK_INT(db_res_col(r, "s"), -1); /* the alias, not the column */
	CHECK_STR(db_res_s(r, 0, "name"), "eve ");
	CHECK_MEM(db_res_s(r, 0, "b"), db_res_l(r, 0, "b"), bin, sizeof bin);
	CHECK_INT(db_res_i(r, 0, "i", 0), LLONG_MAX);
	CHECK_INT(db_res_i(r, 0, "n", 0), 6);
	CHECK(db_res_s(r, 1, "name") == NULL, "db_str(NULL) stored SQL NULL");
	CHECK(db_res_s(r, 1, "b") == NULL, "db_blob(NULL, 0) stored SQL NULL");
	CHECK(db_res_s(r, 1, "i") == NULL, "db_null_i64(5, 1) stored SQL NULL");
	CHECK_INT(db_res_i(r, 1, "i", -7), -7);
	CHECK_STR(db_res_s(r, 2, "name"), "");
	CHECK_INT(db_res_l(r, 2, "b"), 0);
	CHECK(db_res_s(r, 2, "b") != NULL, "an empty blob is not NULL");
	CHECK_INT(db_res_i(r, 2, "i", 0), LLONG_MIN);
	CHECK(db_res_s(r, 0, "nope") == NULL, "an unknown column reads as NULL");
	CHECK_INT(db_res_i(r, 0, "nope", 42), 42);
	db_res_free(r);
}

static void test_errors(void)
{
	struct db_res *r;

	/* Too few parameters: an error, nothing executed. */
	CHECK_INT(db_exec_p(db, "UPDATE t SET s = ? WHERE id = ?", db_str("x")), -1);
	CHECK_HAS(db_error(db), "parameter count");
	CHECK_INT(db_gone(db), 1); /* a client-side error: the caller drops the connection */
	/* A server error is not "gone". */
	CHECK_INT(db_exec_p(db, "INSERT INTO t VALUES (?, NULL, NULL, NULL)", db_i64(1)), -1);
	CHECK_INT(db_errno(db), 1062);
	CHECK_INT(db_gone(db), 0);
	/* The same statement again (from the cache) still works after an error. */
	r = db_query_p(db, "SELECT COUNT(*) AS c FROM t WHERE id >= ?", db_i64(1));
	if (CHECK(r != NULL, "count: %s", db_error(db)))
		CHECK_INT(db_res_i(r, 0, "c", -1), 3);
	db_res_free(r);
}


/* ---- db_tx: the whole-transaction retry */

static unsigned tx_events[DB_TX_EV_COUNT];

static void count_event(void *arg, enum db_tx_event ev)
{
	(void)arg;
	tx_events[ev]++;
}

static long long probe_n(long long id)
{
	struct db_res *r = db_query_p(db, "SELECT n FROM dbtx_probe WHERE id = ?", db_i64(id));
	long long n = r && db_res_rows(r) == 1 ? db_res_i(r, 0, "n", -1) : -1;

	db_res_free(r);
	return n;
}

static int probe_reset(void)
{
	return db_run(db, "CREATE TABLE IF NOT EXISTS dbtx_probe (id INT PRIMARY KEY,"
			  " n INT NOT NULL) ENGINE=InnoDB") < 0 ||
			       db_run(db, "DELETE FROM dbtx_probe") < 0 ||
			       db_run(db, "INSERT INTO dbtx_probe SELECT seq, 0 FROM seq_1_to_100") < 0
		       ? -1
		       : 0;
}

/* The other side of a deadlock, in a child on its own connection: locks rows 2..100
 * (so it is the heavier transaction, and InnoDB picks the parent as the victim), says
 * so on `ready`, waits for `go`, then wants row 1, which the parent holds. Exits 0
 * once committed. */
static void deadlock_peer(int ready, int go)
{
	char err[256], c;
	struct db *d = db_open(&cfg, err, sizeof err);

	if (d == NULL || db_begin(d) < 0 ||
	    db_exec_p(d, "UPDATE dbtx_probe SET n = n + 100 WHERE id >= ?", db_i64(2)) < 0 ||
	    write(ready, "r", 1) != 1 || read(go, &c, 1) != 1 ||
	    db_exec_p(d, "UPDATE dbtx_probe SET n = n + 100 WHERE id = ?", db_i64(1)) < 0 ||
	    db_commit(d) < 0)
		_exit(1);
	_exit(0); /* never db_close(db): the parent's connection is the parent's */
}

struct deadlock_tx {
	int go;      /* write end: tells the peer to want row 1 */
	int swallow; /* the first run ignores its statement's error and asks to commit */
	int runs;
};

/* Row 1, then row 2, which the peer holds: the first run deadlocks. */
static enum db_tx_end deadlock_body(struct db *d, void *arg)
{
	struct deadlock_tx *t = arg;

	t->runs++;
	if (db_exec_p(d, "UPDATE dbtx_probe SET n = n + 1 WHERE id = ?", db_i64(1)) < 0)
		return DB_TX_ERROR;
	if (t->runs == 1 && write(t->go, "g", 1) != 1)
		return DB_TX_ERROR;
	if (db_exec_p(d, "UPDATE dbtx_probe SET n = n + 1 WHERE id = ?", db_i64(2)) < 0 &&
	    !(t->swallow && t->runs == 1))
		return DB_TX_ERROR;
	return DB_TX_COMMIT;
}

/* A real deadlock between this connection and a child's: db_tx rolls back, runs the
 * body again and commits it once; the observer saw one deadlock retry. With swallow,
 * the first run's body carries on after its statement's 1213 (a body that does not
 * check): db_tx still never commits that run. */
static void deadlock_case(int swallow)
{
	struct deadlock_tx t = { .swallow = swallow };
	int ready[2], go[2], status = -1;
	char c;
	pid_t pid;

	if (!CHECK(probe_reset() == 0, "probe table: %s", db_error(db)) ||
	    !CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipe"))
		return;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		deadlock_peer(ready[1], go[0]);
	if (!CHECK(pid > 0, "fork") || !CHECK(read(ready[0], &c, 1) == 1, "peer ready"))
		return;
	t.go = go[1];
	memset(tx_events, 0, sizeof tx_events);
	db_tx_observe(count_event, NULL);
	CHECK_INT(db_tx(db, deadlock_body, &t), 0);
	db_tx_observe(NULL, NULL);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the peer committed");
	CHECK_INT(t.runs, 2);
	CHECK_INT(tx_events[DB_TX_EV_DEADLOCK], 1);
	CHECK_INT(tx_events[DB_TX_EV_LOST], 0);
	/* one run's +1 on each row (the lost run's undone), the peer's +100 */
	CHECK_INT(probe_n(1), 101);
	CHECK_INT(probe_n(2), 101);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

static void test_tx_deadlock(void)
{
	deadlock_case(0);
}

static void test_tx_deadlock_swallowed(void)
{
	deadlock_case(1);
}

struct count_tx {
	enum db_tx_end end;
	int runs;
};

static enum db_tx_end count_body(struct db *d, void *arg)
{
	struct count_tx *t = arg;

	t->runs++;
	if (db_exec_p(d, "UPDATE dbtx_probe SET n = n + 1 WHERE id = ?", db_i64(3)) < 0)
		return DB_TX_ERROR;
	if (t->end == DB_TX_ERROR) /* a data error: 1062, not a conflict */
		return db_exec_p(d, "INSERT INTO dbtx_probe VALUES (?, 0)", db_i64(3)) < 0
			       ? DB_TX_ERROR
			       : DB_TX_COMMIT;
	return t->end;
}

/* The bound, a rollback asked for, an error that is not a conflict. */
static void test_tx_ends(void)
{
	struct count_tx retry = { DB_TX_RETRY, 0 }, back = { DB_TX_ROLLBACK, 0 },
			dup = { DB_TX_ERROR, 0 }, ok = { DB_TX_COMMIT, 0 };
	double t0;

	if (!CHECK(probe_reset() == 0, "probe table: %s", db_error(db)))
		return;
	memset(tx_events, 0, sizeof tx_events);
	db_tx_observe(count_event, NULL);
	t0 = util_mono_ms();
	CHECK_INT(db_tx(db, count_body, &retry), -1);
	CHECK(util_mono_ms() - t0 < 500, "six runs with their pauses took %.0f ms",
	      util_mono_ms() - t0);
	CHECK_INT(db_tx_lost(db), 1);
	CHECK_INT(retry.runs, DB_TX_ATTEMPTS);
	CHECK_INT(tx_events[DB_TX_EV_REQUESTED], DB_TX_ATTEMPTS - 1);
	CHECK_INT(tx_events[DB_TX_EV_LOST], 1);
	CHECK_INT(probe_n(3), 0); /* every run rolled back */
	CHECK_INT(db_tx_lost(db), 0); /* the next statement clears it */

	CHECK_INT(db_tx(db, count_body, &back), 0);
	CHECK_INT(back.runs, 1);
	CHECK_INT(probe_n(3), 0);

	CHECK_INT(db_tx(db, count_body, &dup), -1);
	CHECK_INT(db_errno(db), 1062);
	CHECK_INT(db_tx_lost(db), 0);
	CHECK_INT(dup.runs, 1);
	CHECK_INT(probe_n(3), 0);

	CHECK_INT(db_tx(db, count_body, &ok), 0);
	CHECK_INT(ok.runs, 1);
	CHECK_INT(probe_n(3), 1);
	CHECK_INT(tx_events[DB_TX_EV_DEADLOCK] + tx_events[DB_TX_EV_LOCK_WAIT], 0);
	db_tx_observe(NULL, NULL);
	CHECK_INT(db_run(db, "DROP TABLE dbtx_probe"), 0);
}

/* ---- the runner's transactions through db_tx_step: store_append under a deadlock */

#define ST_RUNNER "dbtest/slot-0/0"

/* A running job of this runner with nothing stored, its lease ending in lease_s
 * seconds (< 0: expired), and its key's storage rows. */
static int job_setup(const char *job, const char *key, long long lease_s)
{
	if (db_exec_p(db,
		      "INSERT INTO jobs (id, key_id, identity_namespace, tenant_id, subject_type,"
		      " subject_id, state, runner_id, started_at, lease_expires_at, argv_json,"
		      " env_json, stdin, metadata_json, wall_seconds, cpu_seconds, memory_mb, pids,"
		      " output_bytes, disk_mb) VALUES (?, ?, 'dbtest', 'dbtest', 'user', 'dbtest',"
		      " 'running', ?, CURRENT_TIMESTAMP(3), CURRENT_TIMESTAMP(3) + INTERVAL ? SECOND,"
		      " '[\"/bin/true\"]', '{}', '', '{}', 10, 10, 256, 64, 1048576, 64)",
		      db_str(job), db_str(key), db_str(ST_RUNNER), db_i64(lease_s)) != 1)
		return -1;
	for (int s = 0; s < JD_SHARDS; s++)
		if (db_exec_p(db, "INSERT INTO key_storage (key_id, shard, bytes) VALUES (?, ?, 0)",
			      db_str(key), db_i64(s)) != 1)
			return -1;
	return 0;
}

/* The other side: the heavier transaction (the probe's 100 rows), holding every
 * storage row of the key, which store_append's last statement wants; on `go`, after
 * 300 ms (store_append holds the job's row by then), it wants the job's row. */
static void append_peer(const char *job, const char *key, int ready, int go)
{
	char err[256], c;
	struct db *d = db_open(&cfg, err, sizeof err);
	struct db_res *r = NULL;

	if (d == NULL || db_begin(d) < 0 ||
	    db_exec_p(d, "UPDATE dbtx_probe SET n = n + 100 WHERE id >= ?", db_i64(1)) < 0 ||
	    (r = db_query_p(d, "SELECT bytes FROM key_storage WHERE key_id = ? FOR UPDATE",
			    db_str(key))) == NULL)
		_exit(1);
	db_res_free(r);
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(1);
	util_sleep_ms(300);
	r = db_query_p(d, "SELECT id FROM jobs WHERE id = ? FOR UPDATE", db_str(job));
	if (r == NULL || db_commit(d) < 0)
		_exit(1);
	_exit(0);
}

/* stderr into a temporary file until log_end, which reads it into buf: the saved fd. */
static int log_begin(int *fd)
{
	char name[] = "/tmp/dbtest-log-XXXXXX";
	int saved;

	fflush(stderr);
	*fd = mkstemp(name);
	if (*fd < 0)
		return -1;
	unlink(name);
	saved = dup(2);
	if (saved < 0 || dup2(*fd, 2) != 2) {
		close(*fd);
		return -1;
	}
	return saved;
}

static void log_end(int fd, int saved, char *buf, size_t len)
{
	ssize_t got;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	got = pread(fd, buf, len - 1, 0);
	buf[got > 0 ? got : 0] = '\0';
	close(fd);
}

static long long q_int(const char *sql, const char *id)
{
	struct db_res *r = db_query_p(db, sql, db_str(id));
	long long n = r && db_res_rows(r) == 1 ? db_res_int(r, 0, 0, -1) : -1;

	db_res_free(r);
	return n;
}

/* store_append's transaction loses a real deadlock at its last statement (the key's
 * storage): db_tx_step rolls it back and runs it again whole; the chunk is stored
 * once, the counts are the chunk's length once, the answer is "stored", and one
 * `event=tx_retry cause=deadlock step=append` line is logged (none `tx_lost`). */
static void test_append_deadlock(void)
{
	char job_id[UUID_STR_LEN], key[UUID_STR_LEN], buf[4096];
	struct job j;
	int ready[2], go[2], status = -1, fd, saved, rc;
	long long stored = -1;
	char c;
	pid_t pid;

	memset(&j, 0, sizeof j);
	if (!CHECK(util_uuid7(job_id) == 0 && util_uuid7(key) == 0, "uuid") ||
	    !CHECK(probe_reset() == 0, "probe table: %s", db_error(db)) ||
	    !CHECK(job_setup(job_id, key, 60) == 0, "setup: %s", db_error(db)) ||
	    !CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipe"))
		return;
	snprintf(j.id, sizeof j.id, "%s", job_id);
	snprintf(j.key_id, sizeof j.key_id, "%s", key);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		append_peer(job_id, key, ready[1], go[0]);
	if (!CHECK(pid > 0, "fork") || !CHECK(read(ready[0], &c, 1) == 1, "peer ready"))
		return;
	if (!CHECK((saved = log_begin(&fd)) >= 0, "log capture"))
		return;
	memset(tx_events, 0, sizeof tx_events);
	db_tx_observe(count_event, NULL);
	rc = write(go[1], "g", 1) == 1
		     ? store_append(db, &j, ST_RUNNER, JD_STDOUT, 0, "hello", 5, &stored)
		     : -9;
	db_tx_observe(NULL, NULL);
	log_end(fd, saved, buf, sizeof buf);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the peer committed");
	CHECK_INT(rc, 0);
	CHECK_INT(stored, 5);
	CHECK_INT(tx_events[DB_TX_EV_DEADLOCK], 1);
	CHECK_INT(tx_events[DB_TX_EV_LOST], 0);
	CHECK_HAS(buf, "event=tx_retry cause=deadlock step=append attempt=1");
	CHECK_LACKS(buf, "tx_lost");
	CHECK_INT(q_int("SELECT stdout_live_bytes FROM jobs WHERE id = ?", job_id), 5);
	CHECK_INT(q_int("SELECT stored_bytes FROM jobs WHERE id = ?", job_id), 5);
	CHECK_INT(q_int("SELECT COUNT(*) FROM job_output WHERE job_id = ?", job_id), 1);
	CHECK_INT(q_int("SELECT COUNT(*) FROM job_output WHERE job_id = ? AND stream = 1 AND"
			" off = 0 AND data = 'hello'", job_id), 1);
	CHECK_INT(q_int("SELECT SUM(bytes) FROM key_storage WHERE key_id = ?", key), 5);
	/* the next chunk, no conflict: stored after the first */
	CHECK_INT(store_append(db, &j, ST_RUNNER, JD_STDOUT, 5, "!", 1, &stored), 0);
	CHECK_INT(stored, 6);
	db_exec_p(db, "DELETE FROM job_output WHERE job_id = ?", db_str(job_id));
	db_exec_p(db, "DELETE FROM job_events WHERE job_id = ?", db_str(job_id));
	db_exec_p(db, "DELETE FROM jobs WHERE id = ?", db_str(job_id));
	db_exec_p(db, "DELETE FROM key_storage WHERE key_id = ?", db_str(key));
	db_run(db, "DROP TABLE dbtx_probe");
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

/* The other side of a lock wait: a result row for the job, uncommitted, for 1.5 s,
 * then rolled back. */
static void result_peer(const char *job, int ready)
{
	char err[256];
	struct db *d = db_open(&cfg, err, sizeof err);

	if (d == NULL || db_begin(d) < 0 ||
	    db_exec_p(d,
		      "INSERT INTO job_results (job_id, diagnostics_json) VALUES (?, '[]')",
		      db_str(job)) != 1 ||
	    write(ready, "r", 1) != 1)
		_exit(1);
	util_sleep_ms(1500);
	db_rollback(d);
	_exit(0);
}

/* store_finish's transaction waits past its lock wait timeout (1 s here) at its result
 * row: db_tx_step rolls the whole transaction back (a 1205 undoes only its statement)
 * and runs it again; the job ends `succeeded` once, with one result and one event,
 * and one `event=tx_retry cause=lock_wait_timeout step=finish` line is logged. (The
 * job's lease is not expired: the stack's dispatcher leaves it alone.) */
static void test_finish_lock_wait(void)
{
	char job_id[UUID_STR_LEN], key[UUID_STR_LEN], buf[4096];
	struct job_result r = { .state = JS_SUCCEEDED, .exit_code = 0, .wall_ms = -1,
				.cpu_ms = -1, .mem_peak = -1 };
	int ready[2], status = -1, fd, saved, rc;
	char c;
	pid_t pid;

	if (!CHECK(util_uuid7(job_id) == 0 && util_uuid7(key) == 0, "uuid") ||
	    !CHECK((r.diagnostics = json_array()) != NULL, "json") ||
	    !CHECK(job_setup(job_id, key, 60) == 0, "setup: %s", db_error(db)) ||
	    !CHECK(pipe(ready) == 0, "pipe"))
		return;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		result_peer(job_id, ready[1]);
	if (!CHECK(pid > 0, "fork") || !CHECK(read(ready[0], &c, 1) == 1, "peer ready") ||
	    !CHECK(db_run(db, "SET SESSION innodb_lock_wait_timeout = 1") == 0, "%s",
		   db_error(db)) ||
	    !CHECK((saved = log_begin(&fd)) >= 0, "log capture"))
		return;
	memset(tx_events, 0, sizeof tx_events);
	db_tx_observe(count_event, NULL);
	rc = store_finish(db, job_id, ST_RUNNER, &r);
	db_tx_observe(NULL, NULL);
	log_end(fd, saved, buf, sizeof buf);
	db_run(db, "SET SESSION innodb_lock_wait_timeout = 5");
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the peer ran");
	CHECK_INT(rc, 0);
	CHECK_INT(tx_events[DB_TX_EV_LOCK_WAIT], 1);
	CHECK_INT(tx_events[DB_TX_EV_LOST], 0);
	CHECK_HAS(buf, "event=tx_retry cause=lock_wait_timeout step=finish attempt=1");
	CHECK_LACKS(buf, "tx_lost");
	CHECK_INT(q_int("SELECT state = 'succeeded' FROM jobs WHERE id = ?", job_id), 1);
	CHECK_INT(q_int("SELECT COUNT(*) FROM job_results WHERE job_id = ? AND exit_code = 0",
			job_id), 1);
	CHECK_INT(q_int("SELECT COUNT(*) FROM job_events WHERE job_id = ?", job_id), 1);
	/* once only: it is no longer running, nothing written */
	CHECK_INT(store_finish(db, job_id, ST_RUNNER, &r), 1);
	json_decref(r.diagnostics);
	db_exec_p(db, "DELETE FROM job_events WHERE job_id = ?", db_str(job_id));
	db_exec_p(db, "DELETE FROM job_results WHERE job_id = ?", db_str(job_id));
	db_exec_p(db, "DELETE FROM job_callbacks WHERE job_id = ?", db_str(job_id));
	db_exec_p(db, "DELETE FROM jobs WHERE id = ?", db_str(job_id));
	db_exec_p(db, "DELETE FROM key_storage WHERE key_id = ?", db_str(key));
	close(ready[0]);
	close(ready[1]);
}

/* db_hosts (issue 22), in a child whose pid is even: db_open's first try is then entry
 * 0 (getpid() % 2), the bogus socket, and it fails over to the stack's socket. The
 * child's stderr (the log line) is captured; its exit status says it connected. */
static void test_hosts_failover(void)
{
	char list[1024], err[256], buf[8192], want[700];
	int fd, saved, st = -1;
	pid_t pid;

	snprintf(list, sizeof list, "unix:/nonexistent/sock,unix:%s", cfg.db_socket);
	if (!CHECK(cfg.db_socket[0] != '\0', "the test stack's config sets db_socket"))
		return;
	if (!CHECK((saved = log_begin(&fd)) >= 0, "log capture"))
		return;
	for (int tries = 0; tries < 20; tries++) {
		pid = fork();
		if (pid == 0) {
			struct cfg c = cfg;
			struct db *d;
			struct db_res *r;

			if (getpid() % 2 != 0)
				_exit(3);
			if (cfg_set(&c, "db_hosts", list, err, sizeof err) < 0 ||
			    (d = db_open(&c, err, sizeof err)) == NULL) {
				fprintf(stderr, "child: %s\n", err);
				_exit(1);
			}
			r = db_query_p(d, "SELECT ? AS x", db_i64(7));
			_exit(r && db_res_rows(r) == 1 ? 0 : 2);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			break;
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 3))
			break;
	}
	log_end(fd, saved, buf, sizeof buf);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "db_open over db_hosts %s: status %d, log %s",
	      list, st, buf);
	CHECK_HAS(buf, "event=db_failover");
	snprintf(want, sizeof want, "from=unix:/nonexistent/sock to=unix:%s", cfg.db_socket);
	CHECK_HAS(buf, want);
}

/* Every entry bogus: NULL, and the error names each entry with its error number. */
static void test_hosts_all_fail(void)
{
	struct cfg c = cfg;
	char err[512];
	struct db *d;

	if (!CHECK(cfg_set(&c, "db_hosts", "unix:/nonexistent/a, unix:/nonexistent/b", err,
			   sizeof err) == 0, "db_hosts: %s", err))
		return;
	d = db_open(&c, err, sizeof err);
	CHECK(d == NULL, "db_open with only bogus entries must fail");
	db_close(d);
	CHECK_HAS(err, "unix:/nonexistent/a (2002)");
	CHECK_HAS(err, "unix:/nonexistent/b (2002)");
}

static const CU_TestInfo tests[] = {
	{ "typed_roundtrip", test_roundtrip },
	{ "errors", test_errors },
	{ "tx_deadlock_retried", test_tx_deadlock },
	{ "tx_deadlock_swallowed_not_committed", test_tx_deadlock_swallowed },
	{ "tx_bound_rollback_error", test_tx_ends },
	{ "store_append_deadlock_retried", test_append_deadlock },
	{ "store_finish_lock_wait_retried", test_finish_lock_wait },
	{ "db_hosts_failover", test_hosts_failover },
	{ "db_hosts_all_fail", test_hosts_all_fail },
	CU_TEST_INFO_NULL,
};

int main(int argc, char **argv)
{
	char err[512];
	unsigned run, failed;

	if (argc != 3 || strcmp(argv[1], "--config") != 0) {
		fprintf(stderr, "usage: db-tests --config FILE\n");
		return 2;
	}
	if (cfg_load(&cfg, argv[2], err, sizeof err) < 0 ||
	    (db = db_open(&cfg, err, sizeof err)) == NULL) {
		fprintf(stderr, "db-tests: %s\n", err);
		printf("0 passed, 1 failed (no database)\n");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	t_register("db", tests);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	run = CU_get_number_of_tests_run();
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed() +
		 (CU_get_number_of_failures() && !CU_get_number_of_tests_failed());
	CU_cleanup_registry();
	db_close(db);
	printf("%u passed, %u failed\n", run - CU_get_number_of_tests_failed(), failed);
	return failed || run == 0 || t_registration_failed() ? 1 : 0;
}
