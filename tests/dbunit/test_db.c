/* The typed DB layer (common/db.c) against the real MariaDB of the test stack:
 * build/db-tests --config FILE (tests/run-integration.sh runs it once the stack is up).
 * Everything happens in a TEMPORARY table of this connection. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "config.h"
#include "db.h"
#include "tests.h"

static struct db *db;

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

static const CU_TestInfo tests[] = {
	{ "typed_roundtrip", test_roundtrip },
	{ "errors", test_errors },
	CU_TEST_INFO_NULL,
};

int main(int argc, char **argv)
{
	struct cfg cfg;
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
