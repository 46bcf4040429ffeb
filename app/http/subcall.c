/* A sub-request (app/http/subcall.h): an API handler run for another request, its
 * answer captured in memory. */
#include "subcall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http.h"

/* ------------------------------------------------------------------ capture */

struct capture {
	FCGX_Stream s;
	unsigned char buf[16384];
	struct strbuf sb;
	int over;
};

static void cap_empty(FCGX_Stream *s, int do_close)
{
	struct capture *c = s->data;
	size_t n = (size_t)(s->wrNext - c->buf);

	(void)do_close;
	if (c->over || c->sb.len + n > SUBCALL_MAX || sb_add(&c->sb, c->buf, n) < 0) {
		c->over = 1;
		s->isClosed = 1;
	}
	s->wrNext = c->buf;
}

static void cap_init(struct capture *c)
{
	memset(c, 0, sizeof *c);
	sb_init(&c->sb);
	c->s.wrNext = c->buf;
	c->s.stop = c->buf + sizeof c->buf;
	c->s.rdNext = c->s.stop;
	c->s.emptyBuffProc = cap_empty;
	c->s.data = c;
}

void sub_free(struct sub *s)
{
	json_decref(s->json);
	sb_release(&s->sb);
	memset(s, 0, sizeof *s);
}

int subcall(struct api_ctx *ctx, struct req *r, const struct identity *who,
	    const struct route *table, size_t n, const char *method, const char *path,
	    const char *query, const void *body, size_t len, struct sub *out)
{
	struct req saved = *r;
	struct capture *cap = malloc(sizeof *cap);
	FCGX_Stream *real_out = r->fcgi->out;
	const struct route *rt;
	struct route_args a;
	char allow[64], *text, *end;
	struct req_wait w;
	int rc = -1;

	memset(out, 0, sizeof *out);
	sb_init(&out->sb);
	if (cap == NULL)
		return -1;
	text = malloc(len + 1);
	if (text == NULL) {
		free(cap);
		return -1;
	}
	memcpy(text, body, len);
	text[len] = '\0';
	cap_init(cap);
	snprintf(r->path, sizeof r->path, "%s", path);
	rt = router_match(table, n, method, r->path, &a, allow, sizeof allow);
	if (rt != NULL) {
		r->method = method;
		r->query = query;
		r->content_type = "application/json";
		r->body = text;
		r->body_len = len;
		r->idempotency_key = NULL;
		r->fcgi->out = &cap->s;
		rt->handler(ctx, r, who, &a);
		cap_empty(&cap->s, 1);
		r->fcgi->out = real_out;
	}
	w = r->wait;
	*r = saved;
	r->wait = w;
	free(text);
	if (rt == NULL)
		goto out;
	out->deferred = w.deferred;
	if (out->deferred) {
		rc = 0;
		goto out;
	}
	out->sb = cap->sb;
	sb_init(&cap->sb);
	if (cap->over || strncmp(out->sb.buf, "Status: ", 8) != 0)
		goto out;
	out->status = (int)strtol(out->sb.buf + 8, &end, 10);
	text = strstr(out->sb.buf, "\r\n\r\n");
	if (text == NULL)
		goto out;
	out->head = out->sb.buf;
	out->raw = text + 4;
	out->rawlen = out->sb.len - (size_t)(out->raw - out->sb.buf);
	if (strstr(out->sb.buf, "Content-Type: application/json") != NULL &&
	    strstr(out->sb.buf, "Content-Type: application/json") < text)
		out->json = json_loadb(out->raw, out->rawlen, 0, NULL);
	rc = 0;
out:
	sb_release(&cap->sb);
	free(cap);
	return rc;
}


int sub_header(const struct sub *s, const char *name, char *buf, size_t len)
{
	size_t nl = strlen(name);
	const char *p = s->head, *end = s->raw;

	if (p == NULL || end == NULL || len == 0)
		return -1;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			break;
		if ((size_t)(eol - p) > nl + 1 && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1;
			size_t k;
			while (v < eol && *v == ' ')
				v++;
			k = (size_t)(eol - v);
			if (k > 0 && v[k - 1] == '\r')
				k--;
			if (k >= len)
				k = len - 1;
			memcpy(buf, v, k);
			buf[k] = '\0';
			return 0;
		}
		p = eol + 1;
	}
	return -1;
}
