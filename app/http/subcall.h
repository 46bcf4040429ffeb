/* A sub-request: one API handler run on behalf of another request, its answer captured.
 * The request's method, path, query and body are set to the inner call's for the
 * duration of the call and its FastCGI output stream is swapped for a bounded memory
 * stream, whose HTTP answer (status, headers, body) is handed back. Waiting stays the
 * waiter's: a handler that defers marks this very request deferred (out->deferred),
 * the worker re-dispatches the outer route, which rebuilds the same sub-request and the
 * inner handler resumes from r->wait as it does for its own route. Used by MCP's
 * session tools (app/mcp) and the E2B endpoints (app/e2b): both do through the REST
 * API's own handlers exactly what the same key could do through REST. */
#ifndef SANDBOX_SUBCALL_H
#define SANDBOX_SUBCALL_H

#include <jansson.h>
#include <stddef.h>

#include "router.h"
#include "strbuf.h"

#define SUBCALL_MAX (24u << 20) /* an answer's bytes: files and output are bounded below it */

struct sub {
	int deferred;
	int status;              /* HTTP status of the answer */
	json_t *json;            /* its body when JSON */
	const char *head;        /* its header lines ("Status: ..\r\n...\r\n"), in sb */
	char *raw;               /* its body (owned by sb) */
	size_t rawlen;
	struct strbuf sb;
};

/* Runs the handler that method + path match in table[0 .. n) with query and body (a
 * JSON body: the content type is application/json) for identity who; its answer in
 * out (or out->deferred: the request is the waiter's now, answer nothing). 0, or -1
 * when no route matched (an id that cannot be one) or the answer could not be read
 * (over SUBCALL_MAX). Release out with sub_free either way. */
int subcall(struct api_ctx *ctx, struct req *r, const struct identity *who,
	    const struct route *table, size_t n, const char *method, const char *path,
	    const char *query, const void *body, size_t len, struct sub *out);
void sub_free(struct sub *s);
/* The value of header `name` (e.g. "Retry-After") in the answer, copied into buf
 * (NUL-terminated, truncated); 0, or -1 when absent. */
int sub_header(const struct sub *s, const char *name, char *buf, size_t len);

#endif
