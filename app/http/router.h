/* Request routing from one table of {method, pattern, handler} (pure: unit-tested).
 * A pattern is literal text with captures: "{id}" one path segment (copied, shorter
 * than ROUTE_ID_MAX), "{name}" one more segment and "{name*}" the non-empty rest of
 * the path (both pointed at in the request path: the last capture). A path that some
 * pattern matches but not with this method is a 405 whose Allow header lists the
 * methods of every matching entry, in table order; no pattern at all is a 404. */
#ifndef SANDBOX_ROUTER_H
#define SANDBOX_ROUTER_H

#include <stddef.h>

#define ROUTE_ID_MAX 64

struct api_ctx;
struct req;
struct identity;

struct route_args {
	char id[ROUTE_ID_MAX]; /* {id}, or "" */
	const char *rest;      /* the last other capture, or NULL */
};

/* who is NULL for a public route. */
typedef void route_fn(struct api_ctx *ctx, struct req *r, const struct identity *who,
		      const struct route_args *a);

struct route {
	const char *method;
	const char *pattern;
	route_fn *handler;
	const char *name;  /* the handler's name, for tests and logs */
	int is_public;     /* answered without authentication */
};

/* The entry for method and path, with its captures in a; else NULL, and allow is ""
 * (404) or the allowed methods ("GET, POST": 405). */
const struct route *router_match(const struct route *table, size_t n, const char *method,
				 const char *path, struct route_args *a, char *allow,
				 size_t allow_len);

#endif
