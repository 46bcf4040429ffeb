/* Rendering of a stored job as the API's job object (pure: no I/O). */
#ifndef SANDBOX_RENDER_H
#define SANDBOX_RENDER_H

#include <jansson.h>
#include <stddef.h>

#include "joblimits.h"
#include "jobstate.h"

/* Everything as read from the database: strings may be NULL for SQL NULL. */
struct job_view {
	const char *id;
	enum job_state state;
	const char *created_at, *started_at, *finished_at;
	const char *ns, *tenant, *subject_type, *subject_id, *actor_type, *actor_id;
	const char *command, *argv_json, *cwd, *artifacts_dir, *metadata_json, *profile;
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
	json_t *artifacts; /* borrowed array of {path,size,sha256}, or NULL */
};

/* "2026-11-29T10:00:00.123456Z" (DB, microseconds) -> "...:00.123Z"; NULL stays NULL. */
json_t *render_time(const char *db_time);
/* n, less an incomplete UTF-8 sequence at the end of b. */
size_t render_utf8_cut(const unsigned char *b, size_t n);
/* New reference, or NULL on allocation failure. */
json_t *render_job(const struct job_view *v);

#endif
