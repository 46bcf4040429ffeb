/* Rendering of stored sessions and session commands as the API's JSON (pure: no
 * I/O). app/sessions/sessions.c reads rows into these views; nothing here knows SQL. Env
 * values never reach a view: a session shows its env names (from env_meta_json). */
#ifndef SANDBOX_SRENDER_H
#define SANDBOX_SRENDER_H

#include <jansson.h>
#include <stddef.h>

#include "svalidate.h"

/* As read from the database: strings may be NULL for SQL NULL. */
struct sess_view {
	const char *id, *status;
	const char *created_at, *ready_at, *expires_at, *last_activity_at, *ended_at;
	const char *ns, *tenant, *subject_type, *subject_id, *actor_type, *actor_id;
	const char *runner_id, *profile_name, *profile_digest;
	const char *metadata_json, *env_meta_json, *failure_json, *end_reason, *cleanup_status;
	long long limits[SV_LIMIT_COUNT];
	long long idle_seconds, max_seconds;
	int network, close_requested;
	long long host_read_bytes, host_cpu_ms; /* the host's work on its behalf */
};

struct cmd_view {
	const char *id, *session_id, *status, *tag;
	const char *command, *argv_json, *cwd;
	const char *exit_code, *signal; /* decimal or NULL */
	const char *diagnostics_json;
	const char *created_at, *started_at, *finished_at;
	long long pid, timeout_seconds, output_bytes, stdout_bytes, stderr_bytes;
	int stdout_truncated, stderr_truncated, stdin_open;
};

/* New references, or NULL on allocation failure. */
json_t *srender_session(const struct sess_view *v);
/* {"sessions": [...], "next_cursor": next or null} */
json_t *srender_session_list(const struct sess_view *v, size_t n, const char *next_cursor);
json_t *srender_command(const struct cmd_view *v);
/* {"commands": [...], "next_cursor": next or null} */
json_t *srender_command_list(const struct cmd_view *v, size_t n, const char *next_cursor);
/* A slice [off, off + len) of a command's stream: {stream, offset, next_offset,
 * total_bytes, eof, data | data_base64}. Text (data) unless base64 is asked for or the
 * bytes are not valid UTF-8 or hold a NUL; a slice of a stream that may still grow
 * ends before an incomplete UTF-8 sequence at its end (the rest comes next time), so
 * a live reader of text never gets base64 only because a character was split.
 * terminal: the command has ended (eof when next_offset reaches total). */
json_t *srender_output(const char *stream, long long off, const unsigned char *data, size_t len,
		       long long total, int terminal, int want_b64);

#endif
