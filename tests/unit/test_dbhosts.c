/* The db_hosts parser (common/config.c: cfg_db_hosts_parse, and cfg_set's use of it):
 * good lists, and each kind of bad entry with its exact error text. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "tests.h"

void suite_dbhosts(void);

static void test_good(void)
{
	struct cfg_db_host h[CFG_DB_HOSTS_MAX];
	char err[256] = "";
	int n = -1;

	CHECK_INT(cfg_db_hosts_parse("", h, &n, err, sizeof err), 0);
	CHECK_INT(n, 0);
	CHECK_INT(cfg_db_hosts_parse("  ", h, &n, err, sizeof err), 0);
	CHECK_INT(n, 0);
	CHECK_INT(cfg_db_hosts_parse("db1:3307, db2 ,unix:/run/mysqld/mysqld.sock,10.0.0.4:1",
				     h, &n, err, sizeof err), 0);
	CHECK_STR(err, "");
	if (!CHECK_INT(n, 4))
		return;
	CHECK_STR(h[0].entry, "db1:3307");
	CHECK_STR(h[0].host, "db1");
	CHECK_INT(h[0].port, 3307);
	CHECK_STR(h[0].socket, "");
	CHECK_STR(h[1].entry, "db2");
	CHECK_STR(h[1].host, "db2");
	CHECK_INT(h[1].port, 0); /* db_port */
	CHECK_STR(h[2].host, "");
	CHECK_STR(h[2].socket, "/run/mysqld/mysqld.sock");
	CHECK_STR(h[3].host, "10.0.0.4");
	CHECK_INT(h[3].port, 1);
	CHECK_INT(cfg_db_hosts_parse("a,b,c,d,e,f,g,h", h, &n, err, sizeof err), 0);
	CHECK_INT(n, 8);
}

static const struct bad_row {
	const char *value, *err;
} bad[] = {
	{ "db1:0", "db_hosts: entry 'db1:0': port must be an integer from 1 to 65535" },
	{ "db1:65536", "db_hosts: entry 'db1:65536': port must be an integer from 1 to 65535" },
	{ "db1:33o6", "db_hosts: entry 'db1:33o6': port must be an integer from 1 to 65535" },
	{ "db1:", "db_hosts: entry 'db1:': port must be an integer from 1 to 65535" },
	{ "db1,,db2", "db_hosts: empty entry 2" },
	{ "db1,", "db_hosts: empty entry 2" },
	{ "a,b,c,d,e,f,g,h,i", "db_hosts: more than 8 entries" },
	{ "tcp:db1", "db_hosts: entry 'tcp:db1': unknown scheme 'tcp' (expected host:port,"
		     " host or unix:/path)" },
	{ "mysql://db1:3306", "db_hosts: entry 'mysql://db1:3306': unknown scheme 'mysql'"
			      " (expected host:port, host or unix:/path)" },
	{ "unix:run/x.sock", "db_hosts: entry 'unix:run/x.sock': a socket must be an absolute"
			     " path shorter than 108 bytes" },
	{ "db 1", "db_hosts: entry 'db 1': expected a host name or IPv4 address" },
};

static void test_bad(void)
{
	struct cfg_db_host h[CFG_DB_HOSTS_MAX];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char err[256] = "";
		int n = -1;

		CHECK_INT_AT(bad[i].value, cfg_db_hosts_parse(bad[i].value, h, &n, err, sizeof err),
			     -1);
		CHECK_STR_AT(bad[i].value, err, bad[i].err);
		CHECK_INT_AT(bad[i].value, n, 0);
	}
}

/* Through cfg_set, as cfg_load does for a line: the parsed list is kept in the cfg. */
static void test_cfg_set(void)
{
	struct cfg c;
	char err[256] = "";

	cfg_defaults(&c);
	CHECK_INT(c.db_host_count, 0);
	CHECK_INT(cfg_set(&c, "db_hosts", "db1:3307,unix:/tmp/m.sock", err, sizeof err), 0);
	CHECK_INT(c.db_host_count, 2);
	CHECK_INT(cfg_set(&c, "db_hosts", "db1:x", err, sizeof err), -1);
	CHECK_STR(err, "db_hosts: entry 'db1:x': port must be an integer from 1 to 65535");
}

static const CU_TestInfo tests[] = {
	{ "good_lists", test_good },
	{ "bad_entries", test_bad },
	{ "cfg_set", test_cfg_set },
	CU_TEST_INFO_NULL,
};

void suite_dbhosts(void)
{
	t_register("dbhosts", tests);
}
