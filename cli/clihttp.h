/* The client side of the HTTP API for `sandbox` (cli/sandbox.c): one libcurl handle
 * with the bearer header, JSON errors printed as "sandbox: ..." lines, and the live
 * output follower (two long-polls in flight at once, one per stream).
 *
 * The token lives only in the Authorization header list built here; nothing in this
 * file prints a header, a request body or the token (no CURLOPT_VERBOSE). */
#ifndef SANDBOX_CLIHTTP_H
#define SANDBOX_CLIHTTP_H

#include <signal.h>
#include <stddef.h>

#include <jansson.h>

#include "strbuf.h"

struct resp {
	long status;
	struct strbuf body; /* the response body (or, with fd >= 0, a non-200 one) */
	int fd;             /* >= 0: a 200 body is written here instead */
	int werr;           /* errno of a failed write to fd */
	unsigned long long written;
	void *sha;          /* struct sha256 * or NULL: fed with what went to fd */
	void *curl;         /* the handle (the write callback asks it for the status) */
};

/* Base URL (https only), CA file (NULL: the system's), token. 0, or -1 with a message
 * printed (never the token). */
int ch_init(const char *url, const char *cacert, const char *token);
void ch_cleanup(void);

/* One request. path starts with '/' and is already percent-encoded. body NULL: none
 * (a POST then sends an empty body); ctype names its type. 0 when an HTTP answer came
 * (any status), -1 on a transport error (printed). Call resp_init first; resp_release
 * after. */
void resp_init(struct resp *r);
void resp_release(struct resp *r);
int ch_request(const char *method, const char *path, const void *body, size_t len,
	       const char *ctype, long timeout_s, struct resp *r);

/* A request body sent piece by piece, so that no upload is ever held in memory: each
 * part is either len bytes at mem, or (fd >= 0) the next size bytes of fd, sent as they
 * are or base64-encoded (b64), read through a bounded buffer as libcurl asks for them.
 * A file that ends before size bytes aborts the request (it changed while being sent);
 * bytes past size are not sent. A part's fd is the caller's, read from offset 0 (a
 * resend rewinds it there). */
struct ch_part {
	const char *mem;
	size_t len;
	int fd;
	unsigned long long size;
	int b64;
	const char *name; /* the file's name, for messages */
};

/* The body's exact length (base64 of n bytes is 4 * ceil(n / 3)). */
unsigned long long ch_parts_length(const struct ch_part *parts, size_t n);
/* ch_request with a body made of parts. */
int ch_request_parts(const char *method, const char *path, const struct ch_part *parts,
		     size_t nparts, const char *ctype, long timeout_s, struct resp *r);

/* Prints the API's JSON error (code, message, field) or what came instead as a
 * "sandbox: " line; returns CLI_EXIT_API. */
int ch_print_error(const char *what, const struct resp *r);

/* A download: GET path with a 200 body written to r->fd as it arrives (r->sha fed
 * with it). 0, or the exit code to leave with (error printed): CLI_EXIT_LOCAL when
 * writing to the fd failed, else CLI_EXIT_API. */
int ch_download(const char *path, struct resp *r);

/* Request + status check + JSON parse: the parsed body (caller decrefs) when the
 * status is one of ok1/ok2 (0: unused), else NULL with the error printed. */
json_t *ch_json(const char *method, const char *path, const json_t *body, long timeout_s,
		long ok1, long ok2);

/* ch_json with a JSON body made of parts (see struct ch_part). */
json_t *ch_json_parts(const char *method, const char *path, const struct ch_part *parts,
		      size_t nparts, long timeout_s, long ok1, long ok2);

/* Appends s percent-encoded (unreserved bytes kept; '/' kept when keep_slash). */
int ch_escape(struct strbuf *sb, const char *s, int keep_slash);

/* Follows both output streams from offset 0 until each is at eof, writing their bytes
 * to fds 1 and 2 as they arrive. fmt is the path of one range read with the
 * placeholders filled by ch_follow: it is called with (stream, offset, wait) through
 * url_of. 0, or the exit code to leave with (error printed). */
typedef int (*ch_url_fn)(struct strbuf *sb, const void *ctx, const char *stream,
			 long long offset, int wait);
int ch_follow(ch_url_fn url_of, const void *ctx);

/* ch_follow for some streams (streams: 1 stdout, 2 stderr, 3 both), each from its
 * offset in off[] (stdout, stderr). follow 0: copy what is stored now and return (each
 * stream until a read brings no bytes or its end), without waiting. */
int ch_follow_from(ch_url_fn url_of, const void *ctx, int streams, const long long off[2],
		   int follow);

/* Set by the SIGINT/SIGTERM handler; ch_follow returns early (-2) when it is set. */
extern volatile sig_atomic_t ch_interrupted;

#endif
