/* Sessions and session commands as the API's JSON (srender.h), in render.h's
 * vocabulary; env values never reach a view, a session shows only its env names. */
#include "srender.h"

#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "util.h"

/* Parsed JSON text of the given type from the DB, else `fallback` (stolen). */
static json_t *stored(const char *text, json_type type, json_t *fallback)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;

	if (v == NULL || json_typeof(v) != type) {
		json_decref(v);
		return fallback;
	}
	json_decref(fallback);
	return v;
}

/* env_meta_json ([{name, size, sha256}]) -> ["NAME", ...]: names only. */
static json_t *env_names(const char *meta)
{
	json_t *arr = stored(meta, JSON_ARRAY, json_array()), *names = json_array(), *e;
	size_t i;

	json_array_foreach(arr, i, e) {
		json_t *n = json_object_get(e, "name");
		if (json_is_string(n))
			json_array_append(names, n);
	}
	json_decref(arr);
	return names;
}

json_t *srender_session(const struct sess_view *v)
{
	json_t *limits = json_object(), *o;

	if (limits == NULL)
		return NULL;
	for (int i = 0; i < SV_LIMIT_COUNT; i++)
		json_object_set_new(limits, sv_limit_names[i], json_integer(v->limits[i]));
	o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b,"
		      " s:o, s:I, s:I, s:o, s:o, s:o, s:b}",
		      "id", render_str_or_null(v->id), "status", render_str_or_null(v->status),
		      "identity",
		      render_identity(v->ns, v->tenant, v->subject_type, v->subject_id,
				      v->actor_type, v->actor_id),
		      "created_at", render_time(v->created_at), "ready_at",
		      render_time(v->ready_at), "expires_at", render_time(v->expires_at),
		      "last_activity_at", render_time(v->last_activity_at), "ended_at",
		      render_time(v->ended_at),
		      "runtime_id", render_str_or_null(v->runner_id), "profile",
		      render_str_or_null(v->profile_name), "profile_digest",
		      render_str_or_null(v->profile_digest), "limits", limits, "metadata",
		      stored(v->metadata_json, JSON_OBJECT, json_object()), "network", v->network,
		      "env_names", env_names(v->env_meta_json), "idle_seconds",
		      (json_int_t)v->idle_seconds, "max_seconds", (json_int_t)v->max_seconds,
		      "failure", stored(v->failure_json, JSON_OBJECT, json_null()), "end_reason",
		      render_str_or_null(v->end_reason), "cleanup_status",
		      render_str_or_null(v->cleanup_status), "close_requested", v->close_requested);
	if (o != NULL)
		json_object_set_new(o, "host_work",
				    json_pack("{s:I, s:I}", "read_bytes",
					      (json_int_t)v->host_read_bytes, "cpu_ms",
					      (json_int_t)v->host_cpu_ms));
	return o;
}

json_t *srender_command(const struct cmd_view *v)
{
	return json_pack("{s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
			 " s:I, s:I, s:b, s:b, s:o, s:I, s:I, s:b}",
			 "id", render_str_or_null(v->id), "pid", (json_int_t)v->pid, "session_id",
			 render_str_or_null(v->session_id), "status", render_str_or_null(v->status),
			 "tag", render_str_or_null(v->tag), "command",
			 render_str_or_null(v->command),
			 "argv", stored(v->argv_json, JSON_ARRAY, json_null()), "cwd",
			 json_string(v->cwd ? v->cwd : ""), "exit_code",
			 render_int_or_null(v->exit_code), "signal", render_int_or_null(v->signal),
			 "created_at", render_time(v->created_at), "started_at",
			 render_time(v->started_at), "finished_at", render_time(v->finished_at),
			 "stdout_bytes", (json_int_t)v->stdout_bytes, "stderr_bytes",
			 (json_int_t)v->stderr_bytes, "stdout_truncated", v->stdout_truncated,
			 "stderr_truncated", v->stderr_truncated, "diagnostics",
			 stored(v->diagnostics_json, JSON_ARRAY, json_array()), "timeout_seconds",
			 (json_int_t)v->timeout_seconds, "output_bytes",
			 (json_int_t)v->output_bytes, "stdin_open", v->stdin_open);
}

static json_t *session_at(const void *v, size_t i)
{
	return srender_session(&((const struct sess_view *)v)[i]);
}

json_t *srender_session_list(const struct sess_view *v, size_t n, const char *next_cursor)
{
	return render_list("sessions", session_at, v, n, next_cursor);
}

static json_t *command_at(const void *v, size_t i)
{
	return srender_command(&((const struct cmd_view *)v)[i]);
}

json_t *srender_command_list(const struct cmd_view *v, size_t n, const char *next_cursor)
{
	return render_list("commands", command_at, v, n, next_cursor);
}

json_t *srender_output(const char *stream, long long off, const unsigned char *data, size_t len,
		       long long total, int terminal, int want_b64)
{
	size_t n = len;
	int b64 = want_b64;
	json_t *o;

	if (!b64) {
		/* A live stream may end inside a character: stop before it. */
		if (!terminal || off + (long long)len < total) {
			size_t cut = render_utf8_cut(data, len);
			if (cut > 0)
				n = cut;
		}
		b64 = !util_utf8_valid(data, n) || memchr(data, '\0', n) != NULL;
		if (b64)
			n = len;
	}
	o = json_pack("{s:s, s:I, s:I, s:I, s:b}", "stream", stream, "offset", (json_int_t)off,
		      "next_offset", (json_int_t)(off + (long long)n), "total_bytes",
		      (json_int_t)total, "eof", terminal && off + (long long)n >= total);
	if (o == NULL)
		return NULL;
	if (b64) {
		char *enc = util_b64_encode(data, n);
		if (enc == NULL || json_object_set_new(o, "data_base64", json_string(enc)) < 0) {
			free(enc);
			json_decref(o);
			return NULL;
		}
		free(enc);
	} else if (json_object_set_new(o, "data", json_stringn((const char *)data, n)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}
