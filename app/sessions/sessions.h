/* The session API (issue 9, docs/SESSIONS.md): handlers and their SQL. Every read is
 * scoped to the caller's identity (another identity's session is a 404 with the same
 * body as an unknown id); the API never talks to a runner host: commands, kills,
 * stdin, file operations and closes are session_requests rows the owning supervisor
 * answers. Handlers: sessions.c (sessions), scommands.c and soutput.c (commands),
 * sfileops.c (files); validation is app/sessions/svalidate.c, rendering
 * app/sessions/srender.c. */
#ifndef SANDBOX_SESSIONS_H
#define SANDBOX_SESSIONS_H

#include "db.h"
#include "router.h"

route_fn h_sess_create, h_sess_list, h_sess_get, h_sess_close;
route_fn h_cmd_create, h_cmd_list, h_cmd_get, h_cmd_kill, h_cmd_stdin, h_cmd_output;
route_fn h_files_list, h_file_get, h_file_put, h_file_delete;

/* Rows another subsystem adds to a new session, in the create's transaction (before
 * any runner host can claim the session): fn(db, the new session's id, arg), 0 or -1
 * (the create fails as a storage error). */
struct sess_hook {
	int (*fn)(struct db *db, const char *id, void *arg);
	void *arg;
};
/* POST /v1/sessions exactly as h_sess_create answers it, with hook (or NULL) run in
 * its transaction: the E2B control plane marks its sandboxes and stores their token
 * (app/e2b/e2bapi.c). */
void sess_create_hooked(struct api_ctx *ctx, struct req *r, const struct identity *who,
			const struct sess_hook *hook);

#endif
