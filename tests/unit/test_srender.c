/* app/sessions/srender: session and command objects from rows (env names only, never values;
 * corrupt stored JSON falls back), lists, and output slices (text, base64, a split
 * character at the end of a live stream, eof). */
#include <stdlib.h>
#include <string.h>

#include "srender.h"
#include "tests.h"

static char *dump(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(o);
	return s;
}

static void test_session(void)
{
	struct sess_view v;
	json_t *o;
	char *s;

	memset(&v, 0, sizeof v);
	v.id = "01900000-0000-7000-8000-000000000000";
	v.status = "ready";
	v.created_at = "2026-12-01T10:00:00.123456Z";
	v.expires_at = "2026-12-01T11:00:00.123456Z";
	v.last_activity_at = v.created_at;
	v.ns = "ns";
	v.tenant = "t";
	v.subject_type = "user";
	v.subject_id = "u";
	v.profile_name = "default";
	v.metadata_json = "{\"k\":\"v\"}";
	v.env_meta_json = "[{\"name\":\"TOKEN\",\"size\":6,\"sha256\":\"ab\"}]";
	v.failure_json = "not json";
	v.limits[SV_MEMORY_MB] = 256;
	v.limits[SV_CPU_SECONDS] = 600;
	v.idle_seconds = 600;
	v.max_seconds = 3600;
	o = srender_session(&v);
	if (!CHECK(o != NULL, "rendered"))
		return;
	CHECK_STR(json_string_value(json_object_get(o, "created_at")), "2026-12-01T10:00:00.123Z");
	CHECK(json_is_null(json_object_get(o, "ready_at")), "ready_at null");
	CHECK(json_is_null(json_object_get(o, "failure")), "corrupt failure_json: null");
	CHECK(json_is_null(json_object_get(json_object_get(o, "identity"), "actor_id")), "actor null");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "limits"), "cpu_seconds")), 600);
	s = dump(json_incref(json_object_get(o, "env_names")));
	CHECK_STR(s, "[\"TOKEN\"]");
	free(s);
	s = dump(o);
	CHECK_LACKS(s, "sha256");
	CHECK_HAS(s, "\"metadata\":{\"k\":\"v\"}");
	free(s);

	v.env_meta_json = NULL;
	v.metadata_json = "[1]"; /* not an object: {} */
	s = dump(srender_session(&v));
	CHECK_HAS(s, "\"env_names\":[]");
	CHECK_HAS(s, "\"metadata\":{}");
	free(s);
	s = dump(srender_session_list(&v, 1, v.id));
	CHECK_HAS(s, "\"next_cursor\":\"01900000-0000-7000-8000-000000000000\"");
	free(s);
	s = dump(srender_session_list(NULL, 0, NULL));
	CHECK_STR(s, "{\"next_cursor\":null,\"sessions\":[]}");
	free(s);
}

static void test_command(void)
{
	struct cmd_view v;
	json_t *o;

	memset(&v, 0, sizeof v);
	v.id = "c";
	v.session_id = "s";
	v.status = "killed";
	v.pid = 3;
	v.argv_json = "[\"sleep\",\"9\"]";
	v.exit_code = "137";
	v.signal = "9";
	v.diagnostics_json = "[\"killed by request\"]";
	v.created_at = "2026-12-01T10:00:00.000000Z";
	v.stdout_bytes = 5;
	o = srender_command(&v);
	if (!CHECK(o != NULL, "rendered"))
		return;
	CHECK_INT(json_integer_value(json_object_get(o, "pid")), 3);
	CHECK_INT(json_integer_value(json_object_get(o, "exit_code")), 137);
	CHECK_INT(json_integer_value(json_object_get(o, "signal")), 9);
	CHECK(json_is_null(json_object_get(o, "command")), "command null with argv");
	CHECK_INT(json_array_size(json_object_get(o, "argv")), 2);
	CHECK_STR(json_string_value(json_object_get(o, "cwd")), "");
	CHECK(json_object_get(o, "env") == NULL && json_object_get(o, "stdin") == NULL,
	      "no env or stdin member");
	json_decref(o);
	v.diagnostics_json = "{}";
	v.exit_code = "x1";
	o = srender_command(&v);
	CHECK_INT(json_array_size(json_object_get(o, "diagnostics")), 0);
	CHECK(json_is_null(json_object_get(o, "exit_code")), "garbage exit_code: null");
	json_decref(o);
}

static void test_output(void)
{
	static const struct {
		const char *name;
		const char *data;
		size_t len;
		long long off, total;
		int terminal, b64;
		const char *want; /* compact, sorted */
	} rows[] = {
		{ "text", "hello", 5, 0, 5, 0, 0,
		  "{\"data\":\"hello\",\"eof\":false,\"next_offset\":5,\"offset\":0,\"stream\":\"stdout\",\"total_bytes\":5}" },
		{ "ended: eof", "lo", 2, 3, 5, 1, 0,
		  "{\"data\":\"lo\",\"eof\":true,\"next_offset\":5,\"offset\":3,\"stream\":\"stdout\",\"total_bytes\":5}" },
		{ "ended, more to read: no eof", "he", 2, 0, 5, 1, 0,
		  "{\"data\":\"he\",\"eof\":false,\"next_offset\":2,\"offset\":0,\"stream\":\"stdout\",\"total_bytes\":5}" },
		{ "base64 asked", "hi", 2, 0, 2, 1, 1,
		  "{\"data_base64\":\"aGk=\",\"eof\":true,\"next_offset\":2,\"offset\":0,\"stream\":\"stdout\",\"total_bytes\":2}" },
		{ "NUL: base64", "a\0b", 3, 0, 3, 0, 0,
		  "{\"data_base64\":\"YQBi\",\"eof\":false,\"next_offset\":3,\"offset\":0,\"stream\":\"stdout\",\"total_bytes\":3}" },
		{ "live split character: cut", "A\xc3", 2, 0, 2, 0, 0,
		  "{\"data\":\"A\",\"eof\":false,\"next_offset\":1,\"offset\":0,\"stream\":\"stdout\",\"total_bytes\":2}" },
		{ "ended on a broken character: base64, eof", "A\xc3", 2, 0, 2, 1, 0,
		  "{\"data_base64\":\"QcM=\",\"eof\":true,\"next_offset\":2,\"offset\":0,\"stream\":\"stdout\",\"total_bytes\":2}" },
		{ "only a split character: base64", "\xc3", 1, 0, 1, 0, 0,
		  "{\"data_base64\":\"ww==\",\"eof\":false,\"next_offset\":1,\"offset\":0,\"stream\":\"stdout\",\"total_bytes\":1}" },
		{ "empty", "", 0, 7, 7, 0, 0,
		  "{\"data\":\"\",\"eof\":false,\"next_offset\":7,\"offset\":7,\"stream\":\"stdout\",\"total_bytes\":7}" },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		char *s = dump(srender_output("stdout", rows[i].off,
					      (const unsigned char *)rows[i].data, rows[i].len,
					      rows[i].total, rows[i].terminal, rows[i].b64));
		CHECK_STR_AT(rows[i].name, s, rows[i].want);
		free(s);
	}
}

void suite_srender(void)
{
	static const CU_TestInfo tests[] = {
		{ "session", test_session },
		{ "command", test_command },
		{ "output", test_output },
		CU_TEST_INFO_NULL,
	};
	t_register("srender", tests);
}
