/* The API's routes, in one table: X(method, pattern, handler, is_public). Expanded
 * by app/http/routes.c into its dispatch table, and by tests/unit/test_router.c to test
 * the same table. Order matters only for the Allow header (table order).
 *
 * A handler lives with its subsystem: the job routes in app/jobs (jobroutes.c,
 * joblist.c, batch.c, outputs.c, identity.c, runtimes.c), the session routes in
 * app/sessions, MCP in app/mcp, health and metrics in routes.c. The E2B control plane
 * (app/e2b) is public here because it authenticates its own header (X-API-KEY, with
 * E2B-shaped errors: e2b_authenticate). Each is declared here,
 * from the table itself, as a route_fn: the dispatcher includes no subsystem's
 * header, the subsystems include app/http's (one direction). So are the three other
 * calls the worker makes into the job routes (app/jobs/jobroutes.c, identity.c). */
#ifndef SANDBOX_API_ROUTES_H
#define SANDBOX_API_ROUTES_H

#include <stddef.h>

#include "router.h"

#define API_ROUTES(X)                                                    \
	X("GET", "/v1/health", h_health, 1)                              \
	X("GET", "/metrics", h_metrics, 1)                               \
	X("GET", "/v1/identity", h_identity, 0)                          \
	X("GET", "/v1/runtimes", h_runtimes, 0)                          \
	X("POST", "/sandboxes", h_e2b_create, 1)                         \
	X("POST", "/v2/sandboxes", h_e2b_create, 1)                      \
	X("GET", "/sandboxes", h_e2b_list, 1)                            \
	X("GET", "/v2/sandboxes", h_e2b_list, 1)                         \
	X("GET", "/sandboxes/{id}", h_e2b_get, 1)                        \
	X("DELETE", "/sandboxes/{id}", h_e2b_kill, 1)                    \
	X("POST", "/sandboxes/{id}/timeout", h_e2b_timeout, 1)           \
	X("POST", "/sandboxes/{id}/connect", h_e2b_connect, 1)           \
	X("POST", "/v2/sandboxes/{id}/connect", h_e2b_connect, 1)        \
	X("POST", "/sandboxes/{id}/pause", h_e2b_pause, 1)               \
	X("POST", "/sandboxes/{id}/resume", h_e2b_resume, 1)             \
	X("POST", "/filesystem.Filesystem/{method}", h_envd_fs, 1)       \
	X("GET", "/files", h_envd_file_get, 1)                           \
	X("POST", "/files", h_envd_file_post, 1)                         \
	X("GET", "/health", h_envd_health, 1)                            \
	X("GET", "/v1/jobs", h_list, 0)                                  \
	X("POST", "/v1/jobs", h_submit, 0)                               \
	X("POST", "/v1/jobs/batch", h_batch, 0)                          \
	X("GET", "/v1/jobs/{id}", h_get, 0)                              \
	X("POST", "/v1/jobs/{id}/cancel", h_cancel, 0)                   \
	X("GET", "/v1/jobs/{id}/artifacts", h_artifacts, 0)              \
	X("GET", "/v1/jobs/{id}/artifacts/{path*}", h_artifact, 0)       \
	X("GET", "/v1/jobs/{id}/output/{stream}", h_output, 0)          \
	X("GET", "/v1/sessions", h_sess_list, 0)                         \
	X("POST", "/v1/sessions", h_sess_create, 0)                      \
	X("GET", "/v1/sessions/{id}", h_sess_get, 0)                     \
	X("POST", "/v1/sessions/{id}/close", h_sess_close, 0)            \
	X("GET", "/v1/sessions/{id}/commands", h_cmd_list, 0)            \
	X("POST", "/v1/sessions/{id}/commands", h_cmd_create, 0)         \
	X("GET", "/v1/sessions/{id}/commands/{cid}", h_cmd_get, 0)       \
	X("POST", "/v1/sessions/{id}/commands/{cid}/kill", h_cmd_kill, 0) \
	X("POST", "/v1/sessions/{id}/commands/{cid}/stdin", h_cmd_stdin, 0) \
	X("GET", "/v1/sessions/{id}/commands/{cid}/output", h_cmd_output, 0) \
	X("GET", "/v1/sessions/{id}/files", h_files_list, 0)             \
	X("GET", "/v1/sessions/{id}/files/{path*}", h_file_get, 0)       \
	X("PUT", "/v1/sessions/{id}/files/{path*}", h_file_put, 0)       \
	X("DELETE", "/v1/sessions/{id}/files/{path*}", h_file_delete, 0) \
	X("GET", "/v1/mcp", h_mcp, 1)                                   \
	X("POST", "/v1/mcp", h_mcp, 0)                                  \
	X("POST", "/process.Process/{id}", h_envd_process, 1)           \
	X("GET", "/_sandbox/port-auth", h_port_auth, 1)                  \
	X("GET", "/v1/sessions/{id}/ports/{port}", h_sess_port, 0)

#define API_ROUTE_DECL(method, pattern, handler, is_public) route_fn handler;
API_ROUTES(API_ROUTE_DECL)
#undef API_ROUTE_DECL

/* Before a worker answers several held long-polls at once (a tick that found many
 * jobs ended): the finished jobs they name, read in one scoped query per key into the
 * worker's job cache, so that each answer needs no query of its own. Only a cache
 * fill: every request is then answered by routes_handle as before. */
void routes_prefetch(struct api_ctx *ctx, struct req *const *rs, size_t n);
/* The RateLimit header lines of an authenticated request, ahead of its handler's. */
void routes_ratelimit(struct api_ctx *ctx, struct req *r, const struct identity *who);
/* A worker that exits releases what the job routes keep (its job cache). */
void routes_release(void);

#endif
