/* A stored job as the API's JSON (render.h), and the JSON vocabulary every answer
 * shares: times, nullable strings and numbers, identity, list pages. */
#include "render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

json_t *render_time(const char *t)
{
	char buf[32];
	size_t n;

	if (t == NULL)
		return json_null();
	n = strlen(t);
	/* YYYY-MM-DDTHH:MM:SS.ffffffZ: keep milliseconds. */
	if (n == 27 && t[19] == '.' && t[26] == 'Z') {
		memcpy(buf, t, 23);
		buf[23] = 'Z';
		buf[24] = '\0';
		return json_string(buf);
	}
	return json_string(t);
}

json_t *render_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *render_int_or_null(const char *s)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0')
		return json_null();
	v = strtoll(s, &end, 10);
	return *end ? json_null() : json_integer(v);
}

/* Parsed JSON text from the DB, or `fallback` (new reference) if absent/corrupt. */
static json_t *stored_json(const char *text, json_t *fallback)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;

	if (v == NULL)
		return fallback;
	json_decref(fallback);
	return v;
}

/* Length of b without an incomplete UTF-8 sequence at its end (a prefix cut by the
 * inline cap must not turn valid text into base64). */
size_t render_utf8_cut(const unsigned char *b, size_t n)
{
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		unsigned char c = b[n - back];
		size_t need;

		if ((c & 0xC0) == 0x80)
			continue; /* continuation byte: look further back */
		need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
		return need > back ? n - back : n;
	}
	return n;
}

/* stdout/stderr: text when valid UTF-8, else `<name>_base64`; `<name>_bytes` is the
 * stored size and `<name>_inline_truncated` says the inline text is a prefix of it. */
static int put_output(json_t *o, const char *name, const unsigned char *b, size_t n,
		      long long total)
{
	char key[48];

	snprintf(key, sizeof key, "%s_bytes", name);
	if (json_object_set_new(o, key, json_integer(total)) < 0)
		return -1;
	if (b != NULL && (long long)n < total)
		n = render_utf8_cut(b, n);
	snprintf(key, sizeof key, "%s_inline_truncated", name);
	if (json_object_set_new(o, key, json_boolean((long long)n < total)) < 0)
		return -1;
	if (b == NULL || n == 0)
		return json_object_set_new(o, name, json_string(""));
	if (util_utf8_valid(b, n) && memchr(b, '\0', n) == NULL)
		return json_object_set_new(o, name, json_stringn((const char *)b, n));
	char *enc = util_b64_encode(b, n);
	if (enc == NULL)
		return -1;
	snprintf(key, sizeof key, "%s_base64", name);
	int rc = json_object_set_new(o, key, json_string(enc));
	free(enc);
	return rc;
}

json_t *render_artifacts(const struct art_view *a, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_pack("{s:s%, s:I, s:s}", "path", a[i].path,
						     a[i].path_len, "size", (json_int_t)a[i].size,
						     "sha256", a[i].sha256));
	return arr;
}

static json_t *render_result(const struct job_view *v)
{
	json_t *r, *usage;

	usage = json_pack("{s:o, s:o, s:o}", "wall_ms", render_int_or_null(v->wall_ms), "cpu_ms",
			  render_int_or_null(v->cpu_ms), "memory_peak_bytes",
			  render_int_or_null(v->memory_peak_bytes));
	r = json_pack("{s:o, s:o, s:b, s:b, s:o, s:o, s:o}", "exit_code",
		      render_int_or_null(v->exit_code), "signal", render_int_or_null(v->signal),
		      "stdout_truncated", v->out_trunc, "stderr_truncated", v->err_trunc,
		      "diagnostics", stored_json(v->diagnostics_json, json_array()), "usage",
		      usage, "artifacts", render_artifacts(v->arts, v->narts));
	if (r == NULL || put_output(r, "stdout", v->out, v->out_len, v->out_total) < 0 ||
	    put_output(r, "stderr", v->err, v->err_len, v->err_total) < 0) {
		json_decref(r);
		return NULL;
	}
	if (v->compile_json)
		json_object_set_new(r, "compile", stored_json(v->compile_json, json_null()));
	return r;
}

static json_t *dec_or_null(const char *dec)
{
	char *end;
	long long n;

	if (dec == NULL)
		return json_null();
	n = strtoll(dec, &end, 10);
	return end != dec && *end == '\0' ? json_integer(n) : json_null();
}

/* [{attempt, at, status, error, duration_ms, outcome}, ...] in attempt order, from
 * the database's JSON text; `at` in the API's millisecond form. */
static json_t *render_attempts_log(const char *text)
{
	json_t *log = stored_json(text, json_array()), *e;
	size_t i;

	if (!json_is_array(log)) {
		json_decref(log);
		return json_array();
	}
	json_array_foreach(log, i, e)
		json_object_set_new(e, "at", render_time(json_string_value(json_object_get(e, "at"))));
	return log;
}

/* null without a callback_url; before the job ends there is no delivery row yet: a
 * pending delivery with no attempt. last_error is the service's own text. */
static json_t *render_callback(const struct job_view *v)
{
	if (v->cb_url == NULL)
		return json_null();
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "url", v->cb_url, "state",
			 v->cb_state ? v->cb_state : "pending", "attempts",
			 v->cb_attempts ? dec_or_null(v->cb_attempts) : json_integer(0),
			 "last_status", dec_or_null(v->cb_last_status), "last_error",
			 render_str_or_null(v->cb_last_error), "delivered_at",
			 render_time(v->cb_delivered_at), "attempts_log",
			 render_attempts_log(v->cb_attempts_log));
}

json_t *render_job(const struct job_view *v)
{
	json_t *j, *limits = json_object(), *identity, *result = json_null();

	for (int i = 0; i < LIM_COUNT; i++)
		json_object_set_new(limits, limit_specs[i].name, json_integer(v->limits[i]));
	identity = render_identity(v->ns, v->tenant, v->subject_type, v->subject_id, v->actor_type,
				   v->actor_id);
	if (v->has_result && js_is_terminal(v->state)) {
		json_decref(result);
		result = render_result(v);
	}
	j = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:b, s:o, s:o, s:o,"
		      " s:s, s:b, s:o, s:o, s:o}",
		      "id", v->id, "status", js_name(v->state), "created_at", render_time(v->created_at),
		      "started_at", render_time(v->started_at), "finished_at",
		      render_time(v->finished_at), "identity", identity, "command",
		      render_str_or_null(v->command), "argv", stored_json(v->argv_json, json_null()),
		      "cwd", v->cwd ? v->cwd : "", "limits", limits, "network", v->network,
		      "artifacts", render_str_or_null(v->artifacts_dir), "metadata",
		      stored_json(v->metadata_json, json_object()), "profile",
		      render_str_or_null(v->profile), "profile_name",
		      v->profile_name ? v->profile_name : "default", "cancel_requested",
		      v->cancel_requested,
		      "result", result ? result : json_null(), "failure",
		      stored_json(v->failure_json, json_null()), "callback", render_callback(v));
	return j;
}

json_t *render_identity(const char *ns, const char *tenant, const char *subject_type,
			const char *subject_id, const char *actor_type, const char *actor_id)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "identity_namespace",
			 render_str_or_null(ns), "tenant_id", render_str_or_null(tenant),
			 "subject_type", render_str_or_null(subject_type), "subject_id",
			 render_str_or_null(subject_id), "actor_type",
			 render_str_or_null(actor_type), "actor_id", render_str_or_null(actor_id));
}

json_t *render_list(const char *name, json_t *(*item)(const void *v, size_t i), const void *v,
		    size_t n, const char *next_cursor)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		json_t *o = item(v, i);
		if (o == NULL || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	if (arr == NULL)
		return NULL;
	return json_pack("{s:o, s:o}", name, arr, "next_cursor", render_str_or_null(next_cursor));
}

static json_t *job_at(const void *v, size_t i)
{
	return render_job(&((const struct job_view *)v)[i]);
}

json_t *render_job_list(const struct job_view *v, size_t n, const char *next_cursor)
{
	return render_list("jobs", job_at, v, n, next_cursor);
}
