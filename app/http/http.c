/* One FastCGI request: its CGI parameters and body read, its answer written. */
#include "http.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_util.h"
#include "strbuf.h"

static const char *param(FCGX_Request *f, const char *name)
{
	return FCGX_GetParam(name, f->envp);
}

int http_read(struct req *r, FCGX_Request *f, long long max_body)
{
	const char *uri, *q;
	long long clen;
	size_t plen;

	memset(r, 0, sizeof *r);
	r->fcgi = f;
	r->method = param(f, "REQUEST_METHOD");
	if (r->method == NULL)
		r->method = "GET";
	uri = param(f, "REQUEST_URI");
	if (uri == NULL)
		uri = "/";
	q = strchr(uri, '?');
	plen = q ? (size_t)(q - uri) : strlen(uri);
	r->query = q ? q + 1 : "";
	if (plen >= sizeof r->path) {
		/* Never truncate: a cut path could name another resource (an artifact
		 * whose path is a prefix of the requested one). */
		snprintf(r->path, sizeof r->path, "(too long)");
		return 414;
	}
	memcpy(r->path, uri, plen);
	r->path[plen] = '\0';
	r->content_type = param(f, "CONTENT_TYPE");
	r->authorization = param(f, "HTTP_AUTHORIZATION");
	r->idempotency_key = param(f, "HTTP_IDEMPOTENCY_KEY");
	r->remote_addr = param(f, "REMOTE_ADDR");
	if (http_content_length(param(f, "CONTENT_LENGTH"), &clen) < 0)
		return 400;
	if (clen > max_body)
		return 413;
	r->body = malloc((size_t)clen + 1);
	if (r->body == NULL)
		return 413;
	while (r->body_len < (size_t)clen) {
		int n = FCGX_GetStr(r->body + r->body_len, (int)((size_t)clen - r->body_len), f->in);
		if (n <= 0)
			break;
		r->body_len += (size_t)n;
	}
	r->body[r->body_len] = '\0';
	if (r->body_len != (size_t)clen) {
		/* The connection's SO_RCVTIMEO (api_read_timeout_seconds) ran out. */
		int e = FCGX_GetError(f->in);
		return e == EAGAIN || e == EWOULDBLOCK ? 408 : 400;
	}
	return 0;
}

void http_free(struct req *r)
{
	free(r->body);
	r->body = NULL;
	if (r->stream.release != NULL && r->stream.state != NULL)
		r->stream.release(r->stream.state);
	r->stream.state = NULL;
	r->stream.release = NULL;
}

int http_stream_head(struct req *r, int status, const char *ctype)
{
	char head[512];
	int n = snprintf(head, sizeof head,
			 "Status: %d %s\r\nContent-Type: %s\r\nCache-Control: no-store\r\n"
			 "X-Content-Type-Options: nosniff\r\nX-Accel-Buffering: no\r\n\r\n",
			 status, http_reason(status), ctype);

	r->status = status;
	if (n < 0 || (size_t)n >= sizeof head || FCGX_PutStr(head, n, r->fcgi->out) < 0 ||
	    FCGX_FFlush(r->fcgi->out) < 0)
		return -1;
	return 0;
}

int http_stream_write(struct req *r, const void *buf, size_t len)
{
	if (len > (1u << 30) || FCGX_PutStr(buf, (int)len, r->fcgi->out) < 0 ||
	    FCGX_FFlush(r->fcgi->out) < 0)
		return -1;
	r->sent_bytes += (long long)len;
	return 0;
}

/* poll(2) says writable when a Unix socket's queue holds under a quarter of its send
 * buffer (a TCP one: a third free): the bytes asked for (<= 64 KiB, a quarter of the
 * default 208 KiB buffer) then fit. */
int http_stream_room(const struct req *r, size_t len)
{
	struct pollfd p = { .fd = r->fcgi->ipcFd, .events = POLLOUT };

	if (len > 65536 || r->fcgi->ipcFd < 0)
		return 0;
	return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) && !(p.revents & (POLLERR | POLLHUP));
}

void http_send_bytes(struct req *r, int status, const char *ctype, const void *buf,
		     size_t len, const char *extra)
{
	char head[1024];
	int n;

	n = snprintf(head, sizeof head,
		     "Status: %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n%s\r\n",
		     status, http_reason(status), ctype, len, extra ? extra : "");
	if (n < 0 || (size_t)n >= sizeof head)
		n = snprintf(head, sizeof head, "Status: 500 Internal Server Error\r\n\r\n");
	FCGX_PutStr(head, n, r->fcgi->out);
	/* FCGX_PutStr takes an int: write large bodies in pieces. */
	for (size_t off = 0; off < len;) {
		size_t chunk = len - off > (1u << 30) ? (1u << 30) : len - off;
		if (FCGX_PutStr((const char *)buf + off, (int)chunk, r->fcgi->out) < 0)
			break;
		off += chunk;
	}
	r->status = status;
	r->sent_bytes = (long long)len;
}

#define OUT_KEEP_BYTES 65536

static struct strbuf out = STRBUF_INIT;

static int to_strbuf(const char *buf, size_t size, void *sb)
{
	return sb_add(sb, buf, size);
}

void http_send_json(struct req *r, int status, json_t *body, const char *extra)
{
	if (body == NULL) {
		http_send_error(r, 500, "internal_error", "could not render the response", NULL,
				NULL);
		return;
	}
	/* One pass into the worker's buffer (json_dumpb would serialize twice: once to
	 * learn the length); a buffer grown by a big answer is not kept. */
	sb_reset(&out);
	if (json_dump_callback(body, to_strbuf, &out, JSON_COMPACT) < 0 ||
	    sb_add(&out, "\n", 1) < 0) {
		json_decref(body);
		sb_release(&out);
		http_send_bytes(r, 500, "application/json", "{}", 2, NULL);
		return;
	}
	json_decref(body);
	http_send_bytes(r, status, "application/json", out.buf, out.len, extra);
	if (out.alloc > OUT_KEEP_BYTES)
		sb_release(&out);
}

void http_send_error(struct req *r, int status, const char *code, const char *message,
		     const char *field, const char *extra)
{
	json_t *b = http_error_body(code, message, field);

	if (b == NULL) {
		http_send_bytes(r, 500, "application/json", "{}", 2, NULL);
		return;
	}
	http_send_json(r, status, b, extra);
}

int http_parse_query(struct req *r, const char *const *names, char (*vals)[128], int *present)
{
	const char *q = r->query;
	char key[64], val[128];
	int rc;

	while ((rc = http_query_next(&q, key, sizeof key, val, sizeof val)) == 1) {
		int i;
		for (i = 0; names[i] != NULL; i++)
			if (strcmp(key, names[i]) == 0)
				break;
		if (names[i] == NULL) {
			char msg[160];
			snprintf(msg, sizeof msg, "unknown query parameter '%.60s'", key);
			http_send_error(r, 400, "invalid_request", msg, key, NULL);
			return -1;
		}
		snprintf(vals[i], 128, "%s", val);
		present[i] = 1;
	}
	if (rc < 0) {
		http_send_error(r, 400, "invalid_request", "malformed query string", NULL, NULL);
		return -1;
	}
	return 0;
}
