/* Unit test driver: registers every suite, runs them with the basic runner in verbose
 * mode, and derives the exit status from CUnit's counters. CU_basic_run_tests()
 * returns success even when assertions fail, and CU_cleanup_registry() resets the
 * counters, so they are read in between. */
#include <stdio.h>

#include <CUnit/Basic.h>

#include "tests.h"

void suite_artname(void); /* tests/unit/test_artname.c */
void suite_dbhosts(void); /* tests/unit/test_dbhosts.c */
void suite_sfentry(void); /* tests/unit/test_sfentry.c */
void suite_e2bhome(void); /* tests/unit/test_e2bhome.c */
void suite_efs(void);     /* tests/unit/test_efs.c */
void suite_e2b(void);     /* tests/unit/test_e2b.c */


int main(void)
{
	unsigned run, tests_failed, suites_failed, asserts_failed;
	CU_ErrorCode rc;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "CU_initialize_registry: %s\n", CU_get_error_msg());
		return 1;
	}
	suite_util();
	suite_sha256();
	suite_redact();
	suite_log();
	suite_config();
	suite_validate();
	suite_render();
	suite_http_util();
	suite_outcome();
	suite_jobcache();
	suite_artname();
	suite_strbuf();
	suite_router();
	suite_pathrules();
	suite_workspace();
	suite_metrics();
	suite_bwstatus();
	suite_retry();
	suite_profile();
	suite_fault();
	suite_policy();
	suite_runtimes();
	suite_agentproto();
	suite_agent();
	suite_warm();
	suite_sfiles();
	suite_sfentry();
	suite_e2bhome();
	suite_efs();
	suite_reclaim();
	suite_waiter();
	suite_svalidate();
	suite_srender();
	suite_e2b();
	suite_cli();
	suite_mcp();
	suite_netcheck();
	suite_sreq();
	suite_dbhosts();
	suite_connect();
	suite_sports();
	if (t_registration_failed()) {
		CU_cleanup_registry();
		printf("0 passed, 0 failed (registration failed)\n");
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	rc = CU_basic_run_tests();
	run = CU_get_number_of_tests_run();
	tests_failed = CU_get_number_of_tests_failed();
	suites_failed = CU_get_number_of_suites_failed();
	asserts_failed = CU_get_number_of_failures();
	CU_cleanup_registry();

	printf("\n%u passed, %u failed\n", run - tests_failed, tests_failed);
	if (rc != CUE_SUCCESS || tests_failed != 0 || suites_failed != 0 || asserts_failed != 0)
		return 1;
	return 0;
}
