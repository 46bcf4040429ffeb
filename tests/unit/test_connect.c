/* app/e2b/connect: Connect envelopes (one request envelope exactly; compressed and
 * trailing bytes refused; the end-of-stream envelope with and without an error), the
 * stream headers' values, and envd's process events (start, data in base64, end as Go
 * prints a process state, keepalive), signal names. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "tests.h"

static char *dump(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(o);
	return s;
}

static void test_unframe(void)
{
	static const unsigned char ok[] = "\x00\x00\x00\x00\x0b{\"a\":[1,2]}";
	static const struct { const char *name; const char *b; size_t n; const char *why; } bad[] = {
		{ "short", "\x00\x00\x00", 3, "the request is not a Connect envelope (flags, length, message)" },
		{ "compressed", "\x01\x00\x00\x00\x02{}", 7, "compressed messages are not accepted" },
		{ "end flag", "\x02\x00\x00\x00\x02{}", 7, "the request envelope's flags must be 0" },
		{ "trailing", "\x00\x00\x00\x00\x02{}x", 8, "the request must be exactly one envelope" },
		{ "short body", "\x00\x00\x00\x00\x03{}", 7, "the request must be exactly one envelope" },
		{ "huge", "\x00\x7f\x00\x00\x00{}", 7, "the request message is too large" },
		{ "array", "\x00\x00\x00\x00\x02[]", 7, "the request message is not a JSON object" },
		{ "dup keys", "\x00\x00\x00\x00\x0d{\"a\":1,\"a\":2}", 18,
		  "the request message is not a JSON object" },
	};
	const char *why = NULL;
	json_t *j = NULL;
	char *s;

	CHECK_INT(cx_unframe_json(ok, sizeof ok - 1, &j, &why), 0);
	s = dump(j);
	CHECK_STR(s, "{\"a\":[1,2]}");
	free(s);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		CHECK_INT_AT(bad[i].name, cx_unframe_json(bad[i].b, bad[i].n, &j, &why), -1);
		CHECK_STR_AT(bad[i].name, why, bad[i].why);
		CHECK(j == NULL, "%s: no message", bad[i].name);
	}
}

static void test_frame(void)
{
	struct strbuf sb = STRBUF_INIT;

	CHECK_INT(cx_frame_json(&sb, 0, json_pack("{s:i}", "a", 1)), 0);
	CHECK_MEM(sb.buf, sb.len, "\x00\x00\x00\x00\x07{\"a\":1}", 12);
	sb_reset(&sb);
	CHECK_INT(cx_frame_end(&sb, NULL, NULL), 0);
	CHECK_MEM(sb.buf, sb.len, "\x02\x00\x00\x00\x02{}", 7);
	sb_reset(&sb);
	CHECK_INT(cx_frame_end(&sb, "deadline_exceeded", "late"), 0);
	CHECK_MEM(sb.buf, sb.len,
		  "\x02\x00\x00\x00\x37{\"error\":{\"code\":\"deadline_exceeded\",\"message\":\"late\"}}",
		  60);
	sb_release(&sb);
}

static void test_headers(void)
{
	CHECK_INT(cx_timeout_ms("60000"), 60000);
	CHECK_INT(cx_timeout_ms(NULL), -1);
	CHECK_INT(cx_timeout_ms(""), -1);
	CHECK_INT(cx_timeout_ms("-5"), -1);
	CHECK_INT(cx_timeout_ms("0"), -1);
	CHECK_INT(cx_timeout_ms("12345678901"), -1);
	CHECK_INT(cx_timeout_ms("1e3"), -1);
	CHECK_INT(cx_keepalive_s("50", 7), 50);
	CHECK_INT(cx_keepalive_s("0", 7), 7);
	CHECK_INT(cx_keepalive_s("x", 7), 7);
	CHECK_INT(cx_keepalive_s("3601", 7), 7);
	CHECK_INT(cx_keepalive_s(NULL, 7), 7);
}

static void test_events(void)
{
	static const struct { const char *name; const char *status; long long code; int sig;
			      const char *why; const char *want; } ends[] = {
		{ "exit 0", "succeeded", 0, 0, NULL,
		  "{\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status 0\"}}}" },
		{ "exit 3", "failed", 3, 0, NULL,
		  "{\"event\":{\"end\":{\"error\":\"exit status 3\",\"exitCode\":3,\"exited\":true,"
		  "\"status\":\"exit status 3\"}}}" },
		{ "kill", "killed", -1, SIGKILL, NULL,
		  "{\"event\":{\"end\":{\"error\":\"signal: killed\",\"exitCode\":-1,\"exited\":false,"
		  "\"status\":\"signal: killed\"}}}" },
		{ "term", "killed", -1, SIGTERM, NULL,
		  "{\"event\":{\"end\":{\"error\":\"signal: terminated\",\"exitCode\":-1,\"exited\":false,"
		  "\"status\":\"signal: terminated\"}}}" },
		{ "lost", "lost", -1, 0, "the sandbox ended",
		  "{\"event\":{\"end\":{\"error\":\"the sandbox ended\",\"exitCode\":-1,\"exited\":false,"
		  "\"status\":\"lost\"}}}" },
	};
	char *s, buf[32];

	s = dump(cx_ev_start(7));
	CHECK_STR(s, "{\"event\":{\"start\":{\"pid\":7}}}");
	free(s);
	s = dump(cx_ev_data(0, (const unsigned char *)"hi\n", 3));
	CHECK_STR(s, "{\"event\":{\"data\":{\"stdout\":\"aGkK\"}}}");
	free(s);
	s = dump(cx_ev_data(1, (const unsigned char *)"\x00\xff", 2));
	CHECK_STR(s, "{\"event\":{\"data\":{\"stderr\":\"AP8=\"}}}");
	free(s);
	s = dump(cx_ev_keepalive());
	CHECK_STR(s, "{\"event\":{\"keepalive\":{}}}");
	free(s);
	for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
		s = dump(cx_ev_end(ends[i].status, ends[i].code, ends[i].sig, ends[i].why));
		CHECK_STR_AT(ends[i].name, s, ends[i].want);
		free(s);
	}
	CHECK_STR(cx_signal_text(SIGINT, buf, sizeof buf), "interrupt");
	CHECK_STR(cx_signal_text(40, buf, sizeof buf), "signal 40");
}

static void test_signals(void)
{
	json_t *k = json_string("SIGNAL_SIGKILL"), *t = json_string("SIGNAL_SIGTERM"),
	       *n = json_integer(9), *u = json_string("SIGNAL_UNSPECIFIED"), *x = json_string("KILL");

	CHECK_STR(cx_signal_name(k), "KILL");
	CHECK_STR(cx_signal_name(t), "TERM");
	CHECK_STR(cx_signal_name(n), "KILL");
	CHECK(cx_signal_name(u) == NULL, "unspecified is refused");
	CHECK(cx_signal_name(x) == NULL, "only envd's names");
	CHECK(cx_signal_name(NULL) == NULL, "absent is refused");
	json_decref(k);
	json_decref(t);
	json_decref(n);
	json_decref(u);
	json_decref(x);
}

void suite_connect(void)
{
	static const CU_TestInfo tests[] = {
		{ "unframe", test_unframe },
		{ "frame", test_frame },
		{ "headers", test_headers },
		{ "events", test_events },
		{ "signals", test_signals },
		CU_TEST_INFO_NULL,
	};
	t_register("connect", tests);
}
