/* Rendering of stored jobs as the API's JSON (pure: no I/O). app/jobs/jobs.c reads the rows
 * into these views; nothing here knows SQL, nothing there knows JSON. The shared
 * vocabulary of the API's JSON (times, nullable strings and numbers, list pages) is
 * here too; app/sessions/srender.c renders sessions with it. */
#ifndef SANDBOX_RENDER_H
#define SANDBOX_RENDER_H

#include <jansson.h>
#include <stddef.h>

#include "joblimits.h"
#include "jobstate.h"

/* One stored artifact of a job. */
struct art_view {
	const char *job_id;
	const char *path;
	size_t path_len;
	long long size;
	const char *sha256;
};

/* Everything as read from the database: strings may be NULL for SQL NULL. */
struct job_view {
	const char *id;
	enum job_state state;
	const char *created_at, *started_at, *finished_at;
	const char *ns, *tenant, *subject_type, *subject_id, *actor_type, *actor_id;
	const char *command, *argv_json, *cwd, *artifacts_dir, *metadata_json;
	const char *profile;      /* the digest of what the runner used, "sha256:..." */
	const char *profile_name; /* the profile the job named */
	long long limits[LIM_COUNT];
	int network, cancel_requested;
	int has_result;
	const char *exit_code, *signal; /* decimal or NULL */
	const unsigned char *out, *err; /* the inline part (a prefix), may be NULL */
	size_t out_len, err_len;
	long long out_total, err_total; /* stored size of each stream */
	int out_trunc, err_trunc;
	const char *diagnostics_json, *failure_json;
	const char *wall_ms, *cpu_ms, *memory_peak_bytes; /* decimal or NULL */
	/* webhook (schema 007): cb_url NULL = none; cb_state NULL = not ended yet */
	const char *cb_url, *cb_state, *cb_attempts, *cb_last_status, *cb_last_error,
		*cb_delivered_at;
	const char *cb_attempts_log; /* JSON array text (schema 009), NULL = none */
	const struct art_view *arts; /* the job's artifacts, ordered by path */
	size_t narts;
	const char *compile_json; /* a compiled runtime's compile step, NULL for none */
};

/* "2026-11-29T10:00:00.123456Z" (DB, microseconds) -> "...:00.123Z"; NULL stays NULL. */
json_t *render_time(const char *db_time);
/* n, less an incomplete UTF-8 sequence at the end of b. */
size_t render_utf8_cut(const unsigned char *b, size_t n);
/* A DB string as JSON: the string, or null for SQL NULL. */
json_t *render_str_or_null(const char *s);
/* A DB decimal as JSON: the integer, or null for SQL NULL, "" or a non-number. */
json_t *render_int_or_null(const char *s);
/* {identity_namespace, tenant_id, subject_type, subject_id, actor_type, actor_id}, each
 * a string or null: who a job or a session belongs to and who made it. */
json_t *render_identity(const char *ns, const char *tenant, const char *subject_type,
			const char *subject_id, const char *actor_type, const char *actor_id);
/* {name: [item(v, 0) .. item(v, n - 1)], "next_cursor": next_cursor or null}: the
 * shape of every list answer (jobs, sessions, commands). NULL on allocation failure. */
json_t *render_list(const char *name, json_t *(*item)(const void *v, size_t i), const void *v,
		    size_t n, const char *next_cursor);
/* New reference, or NULL on allocation failure. */
json_t *render_job(const struct job_view *v);
/* [{path,size,sha256}, ...] */
json_t *render_artifacts(const struct art_view *a, size_t n);
/* {"jobs": [...], "next_cursor": next_cursor or null} */
json_t *render_job_list(const struct job_view *v, size_t n, const char *next_cursor);

#endif
