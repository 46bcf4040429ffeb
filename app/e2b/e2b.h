/* E2B compatibility (docs/E2B.md; the wire facts: ../shared/reference/e2b-wire-protocol.md).
 *
 * The unmodified E2B SDKs drive sessions through three surfaces, all in this folder:
 *   - the control plane (e2bapi.c): POST /sandboxes and /v2/sandboxes, GET/DELETE
 *     /sandboxes/{id}, GET /v2/sandboxes, POST .../timeout, .../connect, .../pause,
 *     authenticated by X-API-KEY (one of our API keys), errors {"code":N,"message"};
 *   - envd's Connect RPC, JSON codec: process.Process methods (eprocess.c, streams through
 *     the waiter) and filesystem.Filesystem methods (efs.c), unary errors
 *     {"code":"not_found","message"}, stream errors in the end-of-stream envelope;
 *   - envd's plain HTTP: GET/POST /files, GET /health (efs.c).
 * A sandbox is a session with `e2b` set; its envd tokens are in e2b_tokens, hashed
 * (schema/012_e2b.sql). Every call is carried out
 * through the session API's own handlers (app/http/subcall.h) under the identity of the
 * sandbox's key: an E2B call can do exactly what the same key can do through REST. */
#ifndef SANDBOX_E2B_H
#define SANDBOX_E2B_H

#include <stddef.h>

#include "auth.h"
#include "http.h"
#include "routes.h"

/* What the control plane advertises: the SDK gates features on it (octet-stream upload
 * from 0.5.7, closeStdin from 0.5.2). */
#define E2B_ENVD_VERSION "0.5.7"
/* The sandbox's home: its workspace, the commands' HOME and default cwd. */
#define E2B_HOME "/home/user"
/* The envd port of a host name "49983-<id>.<domain>". */
#define E2B_ENVD_PORT 49983

/* ---- answers (eauth.c; the tables: e2butil.c, pure) ---- */

/* The control plane's error: status with {"code":status,"message":message} (the SDK
 * reads the code in the body: 404 -> SandboxNotFoundError, kill() -> false). extra:
 * header lines ("Retry-After: 1\r\n") or NULL. */
void e2b_send_error(struct req *r, int status, const char *message, const char *extra);
/* envd's Connect unary error: {"code":code,"message":message} with the HTTP status
 * Connect gives the code (envd_http_of_code). */
void envd_send_error(struct req *r, const char *code, const char *message);
/* Connect's table (connectrpc.com/docs/protocol, "Error codes"): code -> HTTP status:
 * canceled 499, invalid_argument 400, deadline_exceeded 504, not_found 404,
 * already_exists 409, permission_denied 403, resource_exhausted 429,
 * failed_precondition 400, aborted 409, out_of_range 400, unimplemented 501,
 * unavailable 503, unauthenticated 401; internal, unknown, data_loss and anything else
 * 500. Pure. */
int envd_http_of_code(const char *code);
/* Our answer's HTTP status (a session handler's, e.g. from a sub-request) as a Connect
 * code: 400/413 invalid_argument, 401 unauthenticated, 403 permission_denied, 404
 * not_found, 409 failed_precondition (a state conflict in our API: session not ready,
 * stdin closed), 429 resource_exhausted, 503 unavailable, 504 deadline_exceeded, else
 * internal. Pure. */
const char *envd_code_of_http(int status);

/* ---- paths (e2butil.c, pure) ---- */

/* An E2B path as a path relative to the session's workspace: absolute paths must be
 * E2B_HOME or under it ("/home/user" -> "", "/home/user/a/b" -> "a/b"); a relative path
 * is relative to E2B_HOME; "." and ".." segments and repeated slashes resolved
 * lexically, never above E2B_HOME. 0, or -1 (outside the home, empty, NUL, too long
 * for n) with a message for the client in why (static text). */
int e2b_path_rel(const char *path, char *out, size_t n, const char **why);
/* The reverse: a workspace-relative path ("" the home) as the E2B path. 0 or -1. */
int e2b_path_abs(const char *rel, char *out, size_t n);

/* ---- who is calling (eauth.c) ---- */

/* A control-plane call: X-API-KEY (one of our API keys, as the bearer token would be)
 * to its identity. 0, or -1 after answering (401 {"code":401,...}; 503 with
 * Retry-After when the database is unreachable). */
int e2b_authenticate(struct api_ctx *ctx, struct req *r, struct identity *who);

/* An envd call's sandbox and the identity it acts as (its key's, as the key is now: a
 * revoked key's sandbox answers unauthenticated). */
struct envd_caller {
	char sid[40];          /* the session id */
	struct identity who;
};
/* Why an envd call was refused (not answered yet: the caller answers in its form, a
 * unary error, an end-of-stream envelope or /files' JSON). */
struct envd_err {
	int http;              /* 401, 404, 503, 500 */
	const char *code;      /* Connect code: "unauthenticated", "not_found", "unavailable" */
	char msg[200];
};
/* The sandbox of an envd request, in this order: the host name "49983-<id>.<domain>"
 * (nginx passes <id> as the FastCGI param E2B_HOST_SANDBOX), the E2b-Sandbox-Id header,
 * else the X-Access-Token header alone (the Python SDK after connect). The token must
 * be the sandbox's (SHA-256 compared in constant time): a missing or wrong token, an
 * unknown sandbox, a sandbox that is not an E2B one, all answer alike to a caller
 * without the right token. 0, or -1 with e filled (nothing answered). */
int envd_resolve(struct api_ctx *ctx, struct req *r, struct envd_caller *c, struct envd_err *e);
/* A server stream refused before it started: 200 application/connect+json and the
 * end-of-stream envelope with the error (Connect: a stream's errors never travel as an
 * HTTP status). eprocess.c. */
void envd_stream_refuse(struct req *r, const char *code, const char *message);
/* filesystem.Filesystem/WatchDir for the resolved caller c (ewatch.c): a stream,
 * first run and re-dispatches alike (r->stream). */
void envd_watch(struct api_ctx *ctx, struct req *r, const struct envd_caller *c);

/* A FastCGI param / request header of r ("HTTP_X_ACCESS_TOKEN"), or NULL. */
const char *e2b_param(const struct req *r, const char *name);

#endif
