/* The API's routes, in one table: X(method, pattern, handler, is_public). Expanded
 * by app/http/routes.c into its dispatch table, and by tests/unit/test_router.c to test
 * the same table. Order matters only for the Allow header (table order). */
#ifndef SANDBOX_API_ROUTES_H
#define SANDBOX_API_ROUTES_H

#include "mcp.h"      /* POST /v1/mcp */
#include "sessions.h" /* the session handlers (the job handlers are routes.c's own) */

/* GET /v1/runtimes (app/jobs/runtimes.c) */
route_fn h_runtimes;

#define API_ROUTES(X)                                                    \
	X("GET", "/v1/health", h_health, 1)                              \
	X("GET", "/metrics", h_metrics, 1)                               \
	X("GET", "/v1/identity", h_identity, 0)                          \
	X("GET", "/v1/runtimes", h_runtimes, 0)                          \
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
	X("POST", "/v1/mcp", h_mcp, 0)

#endif
