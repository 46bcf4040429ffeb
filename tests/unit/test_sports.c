/* sandbox-runner/session/sports: the port helper's reading of a request head: complete
 * or not, the one X-Sandbox-Port header nginx sets (case-insensitive name, 1..65535,
 * never envd's 49983, never twice), over-long or NUL-holding heads refused. */
#include <string.h>

#include "sports.h"
#include "tests.h"

static void test_head(void)
{
	static const struct { const char *name, *head; int rc, port; size_t len; } rows[] = {
		{ "plain", "GET / HTTP/1.1\r\nHost: x\r\nX-Sandbox-Port: 8000\r\n\r\n", 1, 8000, 49 },
		{ "body after the head", "POST / HTTP/1.1\r\nx-sandbox-port:  80 \r\n\r\nabc", 1, 80, 41 },
		{ "incomplete", "GET / HTTP/1.1\r\nX-Sandbox-Port: 8000\r\n", 0, 0, 0 },
		{ "missing", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", -2, 0, 27 },
		{ "twice", "GET / HTTP/1.1\r\nX-Sandbox-Port: 1\r\nX-Sandbox-Port: 2\r\n\r\n", -2, 0, 56 },
		{ "zero", "GET / HTTP/1.1\r\nX-Sandbox-Port: 0\r\n\r\n", -2, 0, 37 },
		{ "too big", "GET / HTTP/1.1\r\nX-Sandbox-Port: 65536\r\n\r\n", -2, 0, 41 },
		{ "envd", "GET / HTTP/1.1\r\nX-Sandbox-Port: 49983\r\n\r\n", -2, 0, 41 },
		{ "junk", "GET / HTTP/1.1\r\nX-Sandbox-Port: 80x\r\n\r\n", -2, 0, 39 },
		{ "sign", "GET / HTTP/1.1\r\nX-Sandbox-Port: -80\r\n\r\n", -2, 0, 39 },
		{ "in the request line only", "GET /X-Sandbox-Port: 80 HTTP/1.1\r\n\r\n", -2, 0, 36 },
		{ "other name", "GET / HTTP/1.1\r\nX-Sandbox-Ports: 80\r\n\r\n", -2, 0, 39 },
	};

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int port = 0;
		size_t len = 99;
		int rc = sp_head_port(rows[i].head, strlen(rows[i].head), &port, &len);

		CHECK_INT_AT(rows[i].name, rc, rows[i].rc);
		if (rc == 1)
			CHECK_INT_AT(rows[i].name, port, rows[i].port);
		CHECK_INT_AT(rows[i].name, (long long)len, (long long)rows[i].len);
	}
}

static void test_limits(void)
{
	static char big[SP_HEAD_MAX + 64];
	const char nul[] = "GET / HTTP/1.1\r\nX-Sandbox-Port: 80\r\nA: \0\r\n\r\n";
	int port = 0;
	size_t len;

	memset(big, 'a', sizeof big);
	CHECK_INT(sp_head_port(big, SP_HEAD_MAX - 1, &port, &len), 0);
	CHECK_INT(sp_head_port(big, SP_HEAD_MAX, &port, &len), -1);
	memcpy(big + SP_HEAD_MAX + 10, "\r\n\r\n", 4);
	CHECK_INT(sp_head_port(big, sizeof big, &port, &len), -1);
	CHECK_INT(sp_head_port(nul, sizeof nul - 1, &port, &len), -1);
}

void suite_sports(void)
{
	static const CU_TestInfo tests[] = {
		{ "head", test_head },
		{ "limits", test_limits },
		CU_TEST_INFO_NULL,
	};
	t_register("sports", tests);
}
