/* app/jobs/render: the job object the API returns, built from a stored row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joblimits.h"
#include "render.h"
#include "tests.h"

/* Checks a member is a string with the given value (or JSON null when want is NULL). */
static void check_str_member(json_t *o, const char *key, const char *want, const char *file,
			     unsigned line)
{
	json_t *v = json_object_get(o, key);

	if (want == NULL) {
		t_check(v != NULL && json_is_null(v), file, line,
			"%s: expected null, got %s", key,
			v == NULL ? "no member" : json_is_string(v) ? json_string_value(v) : "non-null");
		return;
	}
	if (!t_check(json_is_string(v), file, line, "%s: expected string \"%s\", got %s", key,
		     want, v == NULL ? "no member" : "another type"))
		return;
	t_check_str(key, json_string_value(v), want, file, line);
}

#define CHECK_MEMBER(o, key, want) check_str_member((o), (key), (want), __FILE__, __LINE__)

static void check_int_member(json_t *o, const char *key, long long want, const char *file,
			     unsigned line)
{
	json_t *v = json_object_get(o, key);

	if (t_check(json_is_integer(v), file, line, "%s: expected integer %lld, got %s", key,
		    want, v == NULL ? "no member" : "another type"))
		t_check_ll(key, json_integer_value(v), want, file, line);
}

#define CHECK_INT_MEMBER(o, key, want) check_int_member((o), (key), (want), __FILE__, __LINE__)

static void check_bool_member(json_t *o, const char *key, int want, const char *file,
			      unsigned line)
{
	json_t *v = json_object_get(o, key);

	if (t_check(json_is_boolean(v), file, line, "%s: expected boolean, got %s", key,
		    v == NULL ? "no member" : "another type"))
		t_check_ll(key, json_is_true(v), want, file, line);
}

#define CHECK_BOOL_MEMBER(o, key, want) check_bool_member((o), (key), (want), __FILE__, __LINE__)

static void queued_view(struct job_view *v)
{
	memset(v, 0, sizeof *v);
	v->id = "0190a5c8-7b2e-7c3d-8e4f-0123456789ab";
	v->state = JS_QUEUED;
	v->created_at = "2026-11-29T10:00:00.123456Z";
	v->ns = "example";
	v->tenant = "acme";
	v->subject_type = "user";
	v->subject_id = "u-1";
	v->argv_json = "[\"python3\",\"-c\",\"print(1)\"]";
	v->cwd = "src";
	v->metadata_json = "{\"ticket\":\"T-1\"}";
	for (int i = 0; i < LIM_COUNT; i++)
		v->limits[i] = limit_specs[i].def;
	v->limits[LIM_MEMORY_MB] = 512;
}

static void test_render_time(void)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{ "2026-11-29T10:00:00.123456Z", "2026-11-29T10:00:00.123Z" },
		{ "2026-11-29T10:00:00.999999Z", "2026-11-29T10:00:00.999Z" }, /* cut, not rounded */
		{ "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000Z" },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		json_t *t = render_time(rows[i].in);
		CHECK_STR_AT(rows[i].in, json_string_value(t), rows[i].out);
		json_decref(t);
	}
	json_t *t = render_time(NULL);
	CHECK(t != NULL && json_is_null(t), "render_time(NULL) must be JSON null");
	json_decref(t);
}

static void test_queued_job(void)
{
	struct job_view v;
	json_t *j, *id, *lim, *argv, *md;

	queued_view(&v);
	j = render_job(&v);
	if (!CHECK(j != NULL && json_is_object(j), "render_job returned NULL"))
		return;
	CHECK_MEMBER(j, "id", "0190a5c8-7b2e-7c3d-8e4f-0123456789ab");
	CHECK_MEMBER(j, "status", "queued");
	CHECK_MEMBER(j, "created_at", "2026-11-29T10:00:00.123Z");
	CHECK_MEMBER(j, "started_at", NULL);
	CHECK_MEMBER(j, "finished_at", NULL);
	CHECK_MEMBER(j, "command", NULL);
	CHECK_MEMBER(j, "cwd", "src");
	CHECK_MEMBER(j, "artifacts", NULL);
	CHECK_MEMBER(j, "profile", NULL);
	CHECK_BOOL_MEMBER(j, "network", 0);
	CHECK_BOOL_MEMBER(j, "cancel_requested", 0);
	CHECK(json_is_null(json_object_get(j, "result")), "result must be null while queued");
	CHECK(json_is_null(json_object_get(j, "failure")), "failure must be null");

	id = json_object_get(j, "identity");
	if (CHECK(json_is_object(id), "identity must be an object")) {
		CHECK_INT(json_object_size(id), 6);
		CHECK_MEMBER(id, "identity_namespace", "example");
		CHECK_MEMBER(id, "tenant_id", "acme");
		CHECK_MEMBER(id, "subject_type", "user");
		CHECK_MEMBER(id, "subject_id", "u-1");
		CHECK_MEMBER(id, "actor_type", NULL);
		CHECK_MEMBER(id, "actor_id", NULL);
	}
	lim = json_object_get(j, "limits");
	if (CHECK(json_is_object(lim), "limits must be an object")) {
		CHECK_INT(json_object_size(lim), 6);
		CHECK_INT_MEMBER(lim, "wall_seconds", 10);
		CHECK_INT_MEMBER(lim, "cpu_seconds", 10);
		CHECK_INT_MEMBER(lim, "memory_mb", 512);
		CHECK_INT_MEMBER(lim, "pids", 64);
		CHECK_INT_MEMBER(lim, "output_bytes", 1048576);
		CHECK_INT_MEMBER(lim, "disk_mb", 64);
	}
	argv = json_object_get(j, "argv");
	if (CHECK(json_is_array(argv) && json_array_size(argv) == 3, "argv must be a 3-array")) {
		CHECK_STR(json_string_value(json_array_get(argv, 0)), "python3");
		CHECK_STR(json_string_value(json_array_get(argv, 2)), "print(1)");
	}
	md = json_object_get(j, "metadata");
	if (CHECK(json_is_object(md), "metadata must be an object")) {
		CHECK_INT(json_object_size(md), 1);
		CHECK_MEMBER(md, "ticket", "T-1");
	}
	/* Every documented field is present, and only those. */
	static const char *const fields[] = { "id", "status", "created_at", "started_at",
					      "finished_at", "identity", "command", "argv", "cwd",
					      "limits", "network", "artifacts", "metadata", "profile",
					      "profile_name",
					      "cancel_requested", "result", "failure", "callback" };
	for (size_t i = 0; i < NELEM(fields); i++)
		CHECK(json_object_get(j, fields[i]) != NULL, "missing field %s", fields[i]);
	CHECK_INT(json_object_size(j), NELEM(fields));
	json_decref(j);
}

/* Non-terminal states never show a result, even when a row exists. */
static void test_running_has_no_result(void)
{
	struct job_view v;
	json_t *j;

	queued_view(&v);
	v.state = JS_RUNNING;
	v.has_result = 1;
	v.cancel_requested = 1;
	v.command = "sleep 10";
	v.argv_json = NULL;
	v.metadata_json = NULL;
	v.actor_type = "service";
	v.actor_id = "ci-bot";
	j = render_job(&v);
	if (!CHECK(j != NULL, "render_job returned NULL"))
		return;
	CHECK(json_is_null(json_object_get(j, "result")), "result must be null while running");
	CHECK_BOOL_MEMBER(j, "cancel_requested", 1);
	CHECK_MEMBER(j, "command", "sleep 10");
	CHECK(json_is_null(json_object_get(j, "argv")), "argv must be null without argv_json");
	CHECK(json_is_object(json_object_get(j, "metadata")) &&
		      json_object_size(json_object_get(j, "metadata")) == 0,
	      "metadata must be {} without metadata_json");
	CHECK_MEMBER(json_object_get(j, "identity"), "actor_type", "service");
	CHECK_MEMBER(json_object_get(j, "identity"), "actor_id", "ci-bot");
	json_decref(j);
}

static void terminal_view(struct job_view *v)
{
	queued_view(v);
	v->state = JS_SUCCEEDED;
	v->started_at = "2026-11-29T10:00:00.456789Z";
	v->finished_at = "2026-11-29T10:00:00.789012Z";
	v->profile = "sha256:00";
	v->artifacts_dir = "out";
	v->has_result = 1;
	v->exit_code = "0";
	v->signal = NULL;
	v->out = (const unsigned char *)"1\n\xc3\xa9";
	v->out_len = 4;
	v->out_total = 4;
	v->err = (const unsigned char *)"";
	v->err_len = 0;
	v->diagnostics_json = "[\"first line\",\"second line\"]";
	v->wall_ms = "12";
	v->cpu_ms = "9";
	v->memory_peak_bytes = "2097152";
}

static void test_terminal_utf8(void)
{
	struct job_view v;
	json_t *j, *r, *u, *d;

	terminal_view(&v);
	j = render_job(&v);
	if (!CHECK(j != NULL, "render_job returned NULL"))
		return;
	CHECK_MEMBER(j, "started_at", "2026-11-29T10:00:00.456Z");
	CHECK_MEMBER(j, "finished_at", "2026-11-29T10:00:00.789Z");
	CHECK_MEMBER(j, "artifacts", "out");
	CHECK_MEMBER(j, "profile", "sha256:00");
	r = json_object_get(j, "result");
	if (!CHECK(json_is_object(r), "result must be an object for a terminal job")) {
		json_decref(j);
		return;
	}
	CHECK_MEMBER(r, "stdout", "1\n\xc3\xa9");
	CHECK_MEMBER(r, "stderr", "");
	CHECK(json_object_get(r, "stdout_base64") == NULL, "no stdout_base64 for UTF-8 output");
	CHECK(json_object_get(r, "stderr_base64") == NULL, "no stderr_base64 for UTF-8 output");
	CHECK_INT_MEMBER(r, "exit_code", 0);
	CHECK(json_is_null(json_object_get(r, "signal")), "signal must be null");
	CHECK_BOOL_MEMBER(r, "stdout_truncated", 0);
	CHECK_BOOL_MEMBER(r, "stderr_truncated", 0);
	CHECK_INT_MEMBER(r, "stdout_bytes", 4);
	CHECK_BOOL_MEMBER(r, "stdout_inline_truncated", 0);
	CHECK_BOOL_MEMBER(r, "stderr_inline_truncated", 0);
	u = json_object_get(r, "usage");
	if (CHECK(json_is_object(u), "usage must be an object")) {
		CHECK_INT_MEMBER(u, "wall_ms", 12);
		CHECK_INT_MEMBER(u, "cpu_ms", 9);
		CHECK_INT_MEMBER(u, "memory_peak_bytes", 2097152);
	}
	d = json_object_get(r, "diagnostics");
	if (CHECK(json_is_array(d) && json_array_size(d) == 2, "diagnostics must be a 2-array")) {
		CHECK_STR(json_string_value(json_array_get(d, 0)), "first line");
		CHECK_STR(json_string_value(json_array_get(d, 1)), "second line");
	}
	CHECK(json_is_array(json_object_get(r, "artifacts")) &&
		      json_array_size(json_object_get(r, "artifacts")) == 0,
	      "artifacts must be [] when none are given");
	json_decref(j);
}

static void test_terminal_binary(void)
{
	struct job_view v;
	json_t *j, *r;
	static const struct art_view arts[] = {
		{ "0190a5c8-7b2e-7c3d-8e4f-0123456789ab", "out/a.txt", 9, 3, "ba78" },
	};

	terminal_view(&v);
	v.state = JS_FAILED;
	v.exit_code = "137";
	v.signal = "9";
	v.out = (const unsigned char *)"\xff\x00\xfe";
	v.out_len = 3;
	v.err = (const unsigned char *)"a\0b"; /* valid UTF-8 but with a NUL */
	v.err_len = 3;
	v.out_trunc = 1;
	v.diagnostics_json = NULL;
	v.wall_ms = NULL;
	v.cpu_ms = "";
	v.memory_peak_bytes = "12x";
	v.arts = arts;
	v.narts = NELEM(arts);
	j = render_job(&v);
	if (!CHECK(j != NULL, "render_job returned NULL"))
		return;
	r = json_object_get(j, "result");
	if (CHECK(json_is_object(r), "result must be an object for a failed job")) {
		CHECK_MEMBER(r, "stdout_base64", "/wD+");
		CHECK(json_object_get(r, "stdout") == NULL, "no stdout key for non-UTF-8 output");
		CHECK_MEMBER(r, "stderr_base64", "YQBi");
		CHECK(json_object_get(r, "stderr") == NULL, "no stderr key for output with NUL");
		CHECK_INT_MEMBER(r, "exit_code", 137);
		CHECK_INT_MEMBER(r, "signal", 9);
		CHECK_BOOL_MEMBER(r, "stdout_truncated", 1);
		CHECK_BOOL_MEMBER(r, "stderr_truncated", 0);
		json_t *u = json_object_get(r, "usage");
		CHECK(json_is_null(json_object_get(u, "wall_ms")), "wall_ms NULL -> null");
		CHECK(json_is_null(json_object_get(u, "cpu_ms")), "cpu_ms \"\" -> null");
		CHECK(json_is_null(json_object_get(u, "memory_peak_bytes")), "\"12x\" -> null");
		json_t *d = json_object_get(r, "diagnostics");
		CHECK(json_is_array(d) && json_array_size(d) == 0, "diagnostics must default to []");
		json_t *a = json_object_get(r, "artifacts");
		if (CHECK(json_is_array(a) && json_array_size(a) == 1, "artifacts must be 1-array")) {
			CHECK_MEMBER(json_array_get(a, 0), "path", "out/a.txt");
			CHECK_INT_MEMBER(json_array_get(a, 0), "size", 3);
			CHECK_MEMBER(json_array_get(a, 0), "sha256", "ba78");
			CHECK_INT(json_object_size(json_array_get(a, 0)), 3);
		}
	}
	json_decref(j);
}

/* A path is rendered by its length (the view does not rely on a NUL). */
static void test_artifacts(void)
{
	static const struct art_view a[] = {
		{ "j", "out/a.txt+junk", 9, 0, "e3b0" },
		{ "j", "out/b", 5, 1048576, "ffff" },
	};
	json_t *arr = render_artifacts(a, NELEM(a));

	if (!CHECK(json_is_array(arr) && json_array_size(arr) == 2, "expected a 2-array"))
		goto out;
	CHECK_MEMBER(json_array_get(arr, 0), "path", "out/a.txt");
	CHECK_INT_MEMBER(json_array_get(arr, 1), "size", 1048576);
	CHECK_MEMBER(json_array_get(arr, 1), "sha256", "ffff");
out:
	json_decref(arr);
	arr = render_artifacts(NULL, 0);
	CHECK(json_is_array(arr) && json_array_size(arr) == 0, "no artifacts: []");
	json_decref(arr);
}

/* A page renders each view in order; next_cursor is given or null. */
static void test_job_list(void)
{
	struct job_view v[2];
	json_t *l, *jobs;

	queued_view(&v[0]);
	terminal_view(&v[1]);
	v[1].id = "0190a5c8-7b2e-7c3d-8e4f-000000000002";
	l = render_job_list(v, 2, v[1].id);
	jobs = json_object_get(l, "jobs");
	if (CHECK(json_is_array(jobs) && json_array_size(jobs) == 2, "expected 2 jobs")) {
		CHECK_MEMBER(json_array_get(jobs, 0), "status", "queued");
		CHECK_MEMBER(json_array_get(jobs, 1), "status", "succeeded");
		CHECK(json_is_object(json_object_get(json_array_get(jobs, 1), "result")),
		      "a finished item carries its result");
	}
	CHECK_MEMBER(l, "next_cursor", "0190a5c8-7b2e-7c3d-8e4f-000000000002");
	CHECK_INT(json_object_size(l), 2);
	json_decref(l);
	l = render_job_list(NULL, 0, NULL);
	CHECK(json_is_array(json_object_get(l, "jobs")) &&
		      json_array_size(json_object_get(l, "jobs")) == 0,
	      "an empty page: jobs []");
	CHECK_MEMBER(l, "next_cursor", NULL);
	json_decref(l);
}

static void test_failure_json(void)
{
	struct job_view v;
	json_t *j, *f;

	terminal_view(&v);
	v.state = JS_ERROR;
	v.failure_json = "{\"stage\":\"setup\",\"instance_status\":null,"
			 "\"cleanup_status\":\"ok\",\"error\":\"no bwrap\"}";
	j = render_job(&v);
	if (!CHECK(j != NULL, "render_job returned NULL"))
		return;
	f = json_object_get(j, "failure");
	if (CHECK(json_is_object(f), "failure must be parsed")) {
		CHECK_MEMBER(f, "stage", "setup");
		CHECK_MEMBER(f, "error", "no bwrap");
	}
	json_decref(j);
}

/* status is the state's name; only a terminal state shows its stored result. */
static void test_status_and_result(void)
{
	for (int st = 0; st < JS_COUNT; st++) {
		struct job_view v;
		json_t *j;

		terminal_view(&v);
		v.state = (enum job_state)st;
		j = render_job(&v);
		if (!CHECK(j != NULL, "render_job(%s) returned NULL", js_name(v.state)))
			continue;
		CHECK_STR_AT(js_name(v.state), json_string_value(json_object_get(j, "status")),
			     js_name(v.state));
		CHECK(json_is_object(json_object_get(j, "result")) == (st >= JS_SUCCEEDED),
		      "%s: result must be %s", js_name(v.state),
		      st >= JS_SUCCEEDED ? "an object" : "null");
		json_decref(j);
	}
}

/* An inline prefix (the GET cap, the list preview) that cuts a UTF-8 sequence stays
 * text: it ends before the cut sequence, and says it is a prefix of the stored size. */
static void test_inline_prefix(void)
{
	struct job_view v;
	json_t *j, *r;

	terminal_view(&v);
	v.out = (const unsigned char *)"ab\xc3\xa9\xe2\x82"; /* "abé" + 2 of 3 bytes of "€" */
	v.out_len = 6;
	v.out_total = 5000;
	j = render_job(&v);
	r = json_object_get(j, "result");
	if (CHECK(json_is_object(r), "result must be an object")) {
		CHECK_MEMBER(r, "stdout", "ab\xc3\xa9");
		CHECK(json_object_get(r, "stdout_base64") == NULL, "a cut prefix stays text");
		CHECK_INT_MEMBER(r, "stdout_bytes", 5000);
		CHECK_BOOL_MEMBER(r, "stdout_inline_truncated", 1);
		CHECK_BOOL_MEMBER(r, "stdout_truncated", 0);
	}
	json_decref(j);
}

static void test_utf8_cut(void)
{
	static const struct {
		const char *in;
		size_t n, want;
	} rows[] = {
		{ "abc", 3, 3 },            /* ASCII: nothing to cut */
		{ "a\xc3", 2, 1 },          /* lead byte of 2 without its continuation */
		{ "a\xc3\xa9", 3, 3 },      /* complete 2-byte sequence */
		{ "a\xe2\x82", 3, 1 },      /* 2 of 3 */
		{ "a\xe2\x82\xac", 4, 4 },  /* complete 3-byte */
		{ "\xf0\x9f\x98", 3, 0 },   /* 3 of 4 */
		{ "\xf0\x9f\x98\x80", 4, 4 },
		{ "", 0, 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++)
		CHECK_INT_AT(rows[i].in, (long long)render_utf8_cut((const unsigned char *)rows[i].in,
								   rows[i].n),
			     (long long)rows[i].want);
}

static const CU_TestInfo tests[] = {
	{ "render_time", test_render_time },
	{ "inline_prefix", test_inline_prefix },
	{ "utf8_cut", test_utf8_cut },
	{ "queued_job", test_queued_job },
	{ "running_has_no_result", test_running_has_no_result },
	{ "terminal_utf8", test_terminal_utf8 },
	{ "terminal_binary", test_terminal_binary },
	{ "failure_json", test_failure_json },
	{ "status_and_result", test_status_and_result },
	{ "artifacts", test_artifacts },
	{ "job_list", test_job_list },
	CU_TEST_INFO_NULL,
};

void suite_render(void)
{
	t_register("render", tests);
}
