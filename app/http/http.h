/* One FastCGI request: parsed CGI parameters, the body, and the response writers. */
#ifndef SANDBOX_HTTP_H
#define SANDBOX_HTTP_H

#include <fcgiapp.h>
#include <jansson.h>
#include <stddef.h>

/* Long-poll state of a request (app/http/waiter.h): set by wt_defer, kept by the worker
 * while the request waits, read by the handler on the re-dispatch. */
struct req_wait {
	int deferred;       /* the handler handed the request to the waiter: answer nothing */
	int resumed;        /* the re-dispatch after the wait: never wait again */
	int entry;          /* the board entry while deferred */
	unsigned gen;       /* its generation */
	int reserved;       /* entry/gen is a reservation (wt_reserve), not yet waiting */
	double deadline_ms; /* util_mono_ms() when the wait ends anyway */
	char id[40];        /* the id waited on */
	long long aux;      /* the handler's own value for its re-dispatch */
	int extended;       /* wt_extend used (once per request) */
	int stopping;       /* the re-dispatch of a worker that stops: never wait again */
};

/* A response streamed over many re-dispatches (envd's server streams, app/e2b): the
 * handler's state between them, released with the request (http_free). */
struct req_stream {
	void *state;
	void (*release)(void *state);
};

struct req {
	FCGX_Request *fcgi;
	const char *method;
	char path[2048];        /* raw path, query stripped, not decoded */
	const char *query;      /* after '?', "" if none */
	const char *content_type;
	const char *authorization;
	const char *idempotency_key;
	const char *remote_addr; /* REMOTE_ADDR as nginx passes it, or NULL */
	int route;              /* 1 + the matched route's index, 0: none (metrics) */
	char *body;             /* NUL-terminated; owned */
	size_t body_len;
	int status;             /* what was sent, for the access log */
	long long sent_bytes;
	struct req_wait wait;
	struct req_stream stream;
};

/* Fills r from the FastCGI params and reads the body (at most max_body bytes).
 * Returns 0, or an HTTP status (400/413) the caller should answer with, or 408 when
 * the client stopped sending the body for the connection's read timeout (answer
 * nothing: drop the connection). */
int http_read(struct req *r, FCGX_Request *f, long long max_body);
void http_free(struct req *r);

/* extra: additional header lines, each ending in "\r\n", or NULL. The JSON body is
 * released (stolen). */
void http_send_json(struct req *r, int status, json_t *body, const char *extra);
void http_send_error(struct req *r, int status, const char *code, const char *message,
		     const char *field, const char *extra);
void http_send_bytes(struct req *r, int status, const char *ctype, const void *buf,
		     size_t len, const char *extra);

/* A streamed answer: the header lines (status, content type, no buffering by nginx:
 * X-Accel-Buffering) now, the body in pieces later (http_stream_write, each flushed to
 * nginx at once). The headers are sent once per request. 0, or -1 (the connection
 * failed: answer nothing more). */
int http_stream_head(struct req *r, int status, const char *ctype);
int http_stream_write(struct req *r, const void *buf, size_t len);
/* 1 when the connection to nginx can take about `len` bytes (at most 64 KiB) without
 * blocking the worker: a client that does not read holds no worker. */
int http_stream_room(const struct req *r, size_t len);

/* The request's query string: each parameter must be one of names (NULL-terminated);
 * its value goes to vals[i] (truncated to 127 bytes) and present[i] = 1. An unknown
 * parameter or a malformed query answers 400 (naming the parameter) and gives -1. */
int http_parse_query(struct req *r, const char *const *names, char (*vals)[128], int *present);

#endif
