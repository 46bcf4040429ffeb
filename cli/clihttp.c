/* The client side of the HTTP API for `sandbox` (cli/sandbox.c) (see clihttp.h). */
#include "clihttp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cliargs.h"
#include "climsg.h"
#include "sha256.h"
#include "util.h"

volatile sig_atomic_t ch_interrupted;

static struct {
	char *base;                 /* the URL without a trailing '/' */
	char *cacert;
	struct curl_slist *hdr;     /* Authorization (+ Expect:) */
	struct curl_slist *hdr_json, *hdr_bin;
	CURL *h;
} C;

static struct curl_slist *hdrs_with(const char *auth, const char *extra)
{
	struct curl_slist *l = NULL, *t;

	if (!(t = curl_slist_append(l, auth)))
		return NULL;
	l = t;
	/* No "100 Continue" round trip on uploads. */
	if (!(t = curl_slist_append(l, "Expect:")))
		goto fail;
	l = t;
	if (extra) {
		if (!(t = curl_slist_append(l, extra)))
			goto fail;
		l = t;
	}
	return l;
fail:
	curl_slist_free_all(l);
	return NULL;
}

static CURL *new_handle(void)
{
	CURL *h = curl_easy_init();

	if (!h)
		return NULL;
	if (curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_USERAGENT, "sandbox-cli/1") != CURLE_OK ||
	    (C.cacert && curl_easy_setopt(h, CURLOPT_CAINFO, C.cacert) != CURLE_OK)) {
		curl_easy_cleanup(h);
		return NULL;
	}
	return h;
}

int ch_init(const char *url, const char *cacert, const char *token)
{
	struct strbuf auth = STRBUF_INIT;
	size_t n = strlen(url);

	if (strncmp(url, "https://", 8) != 0 || n <= 8) {
		cli_say("the API URL must start with https:// (SANDBOX_URL or --url)");
		return -1;
	}
	while (n > 8 && url[n - 1] == '/')
		n--;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		cli_say("libcurl initialisation failed");
		return -1;
	}
	C.base = strndup(url, n);
	C.cacert = cacert && *cacert ? strdup(cacert) : NULL;
	sb_addf(&auth, "Authorization: Bearer %s", token);
	if (!C.base || (cacert && *cacert && !C.cacert) || auth.failed ||
	    !(C.hdr = hdrs_with(auth.buf, NULL)) ||
	    !(C.hdr_json = hdrs_with(auth.buf, "Content-Type: application/json")) ||
	    !(C.hdr_bin = hdrs_with(auth.buf, "Content-Type: application/octet-stream")) ||
	    !(C.h = new_handle())) {
		explicit_bzero(auth.buf, auth.len);
		sb_release(&auth);
		cli_say("out of memory");
		return -1;
	}
	explicit_bzero(auth.buf, auth.len);
	sb_release(&auth);
	return 0;
}

void ch_cleanup(void)
{
	if (C.h)
		curl_easy_cleanup(C.h);
	curl_slist_free_all(C.hdr);
	curl_slist_free_all(C.hdr_json);
	curl_slist_free_all(C.hdr_bin);
	free(C.base);
	free(C.cacert);
	memset(&C, 0, sizeof C);
	curl_global_cleanup();
}

void resp_init(struct resp *r)
{
	memset(r, 0, sizeof *r);
	sb_init(&r->body);
	r->fd = -1;
}

void resp_release(struct resp *r)
{
	sb_release(&r->body);
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *ud)
{
	struct resp *r = ud;
	size_t n = size * nmemb;
	long code = 0;

	if (r->fd >= 0 && r->curl)
		curl_easy_getinfo((CURL *)r->curl, CURLINFO_RESPONSE_CODE, &code);
	if (r->fd >= 0 && code == 200) {
		size_t done = 0;

		while (done < n) {
			ssize_t w = write(r->fd, p + done, n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				r->werr = w < 0 ? errno : EIO;
				return 0; /* aborts the transfer */
			}
			done += (size_t)w;
		}
		if (r->sha)
			sha256_update(r->sha, p, n);
		r->written += n;
		return n;
	}
	/* An error body (or a JSON answer) is small; refuse to buffer a flood. */
	if (r->body.len + n > (64u << 20) || sb_add(&r->body, p, n) < 0)
		return 0;
	return n;
}

/* ---- streamed request bodies (struct ch_part) */

#define UP_CHUNK 49152 /* raw bytes per read: a multiple of 3, so base64 joins up */

struct upload {
	const struct ch_part *p;
	size_t n, i;                 /* parts, the current one */
	size_t moff;                 /* offset in a memory part */
	unsigned long long left;     /* bytes of the current file part still to read */
	int started;                 /* the current file part has begun */
	char *stage;                 /* encoded bytes waiting to be sent (malloc'd) */
	size_t slen, spos;
	unsigned char raw[UP_CHUNK];
	int err;                     /* errno of a failed read, or EIO for a short file */
	const char *err_name;
};

unsigned long long ch_parts_length(const struct ch_part *parts, size_t n)
{
	unsigned long long t = 0;

	for (size_t i = 0; i < n; i++)
		t += parts[i].fd < 0 ? parts[i].len
		     : parts[i].b64 ? (parts[i].size + 2) / 3 * 4 : parts[i].size;
	return t;
}

/* Reads want bytes of the current file part into u->raw: the count, or -1. */
static ssize_t up_fill(struct upload *u, size_t want)
{
	const struct ch_part *p = &u->p[u->i];
	size_t got = 0;

	while (got < want) {
		ssize_t k = read(p->fd, u->raw + got, want - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			u->err = k < 0 ? errno : EIO; /* EIO: it ended early: it changed */
			u->err_name = p->name;
			return -1;
		}
		got += (size_t)k;
	}
	return (ssize_t)got;
}

static size_t on_read(char *buf, size_t size, size_t nitems, void *ud)
{
	struct upload *u = ud;
	size_t room = size * nitems, out = 0;

	while (out < room && u->i < u->n) {
		const struct ch_part *p = &u->p[u->i];
		size_t k;

		if (u->spos < u->slen) {            /* staged bytes first */
			k = u->slen - u->spos < room - out ? u->slen - u->spos : room - out;
			memcpy(buf + out, u->stage + u->spos, k);
			u->spos += k;
			out += k;
			continue;
		}
		if (p->fd < 0) {                      /* a memory part */
			k = p->len - u->moff < room - out ? p->len - u->moff : room - out;
			memcpy(buf + out, p->mem + u->moff, k);
			u->moff += k;
			out += k;
			if (u->moff == p->len) {
				u->i++;
				u->moff = 0;
			}
			continue;
		}
		if (!u->started) {
			u->started = 1;
			u->left = p->size;
		}
		if (u->left == 0) {
			u->i++;
			u->started = 0;
			continue;
		}
		k = u->left < UP_CHUNK ? (size_t)u->left : UP_CHUNK;
		if (up_fill(u, k) < 0)
			return CURL_READFUNC_ABORT;
		u->left -= k;
		free(u->stage);
		u->stage = NULL;
		u->slen = u->spos = 0;
		if (p->b64) {
			if (!(u->stage = util_b64_encode(u->raw, k))) {
				u->err = ENOMEM;
				u->err_name = p->name;
				return CURL_READFUNC_ABORT;
			}
			u->slen = strlen(u->stage);
		} else {
			if (!(u->stage = malloc(k))) {
				u->err = ENOMEM;
				u->err_name = p->name;
				return CURL_READFUNC_ABORT;
			}
			memcpy(u->stage, u->raw, k);
			u->slen = k;
		}
	}
	return out;
}

/* libcurl rewinds a body to resend it (a reused connection that had closed). */
static int on_seek(void *ud, curl_off_t offset, int origin)
{
	struct upload *u = ud;

	if (offset != 0 || origin != SEEK_SET)
		return CURL_SEEKFUNC_CANTSEEK;
	for (size_t i = 0; i < u->n; i++)
		if (u->p[i].fd >= 0 && lseek(u->p[i].fd, 0, SEEK_SET) < 0)
			return CURL_SEEKFUNC_CANTSEEK;
	free(u->stage);
	u->stage = NULL;
	u->slen = u->spos = u->moff = u->i = 0;
	u->started = 0;
	return CURL_SEEKFUNC_OK;
}

static int setup(CURL *h, const char *method, const char *path, const void *body,
		 size_t len, const char *ctype, long timeout_s, struct resp *r,
		 char *errbuf, struct upload *up)
{
	struct strbuf url = STRBUF_INIT;
	struct curl_slist *hdr = C.hdr;
	int rc = -1;

	if (ctype && strcmp(ctype, "application/json") == 0)
		hdr = C.hdr_json;
	else if (ctype)
		hdr = C.hdr_bin;
	sb_adds(&url, C.base);
	sb_adds(&url, path);
	if (url.failed)
		goto out;
	curl_easy_reset(h);
	r->curl = h;
	if (curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_USERAGENT, "sandbox-cli/1") != CURLE_OK ||
	    (C.cacert && curl_easy_setopt(h, CURLOPT_CAINFO, C.cacert) != CURLE_OK) ||
	    curl_easy_setopt(h, CURLOPT_URL, url.buf) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_WRITEDATA, r) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK)
		goto out;
	if (up) {
		/* POSTFIELDSIZE with a read function: libcurl asks on_read for exactly
		 * that many bytes; PUT goes the same way with CUSTOMREQUEST. */
		if (curl_easy_setopt(h, CURLOPT_POST, 1L) != CURLE_OK ||
		    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK ||
		    curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read) != CURLE_OK ||
		    curl_easy_setopt(h, CURLOPT_READDATA, up) != CURLE_OK ||
		    curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek) != CURLE_OK ||
		    curl_easy_setopt(h, CURLOPT_SEEKDATA, up) != CURLE_OK ||
		    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				     (curl_off_t)ch_parts_length(up->p, up->n)) != CURLE_OK)
			goto out;
	} else if (strcmp(method, "GET") != 0) {
		if (curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK ||
		    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "") != CURLE_OK ||
		    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				     (curl_off_t)(body ? len : 0)) != CURLE_OK)
			goto out;
	}
	rc = 0;
out:
	sb_release(&url);
	return rc;
}

static int perform(const char *method, const char *path, const void *body, size_t len,
		   const char *ctype, long timeout_s, struct resp *r, struct upload *up)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	CURLcode cc;

	if (setup(C.h, method, path, body, len, ctype, timeout_s, r, errbuf, up) < 0) {
		cli_say("could not set up the request");
		return -1;
	}
	cc = curl_easy_perform(C.h);
	curl_easy_getinfo(C.h, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_setopt(C.h, CURLOPT_ERRORBUFFER, NULL);
	if (cc != CURLE_OK) {
		if (up && up->err)
			cli_say("%s: %s", up->err_name ? up->err_name : "upload",
				up->err == EIO ? "the file changed (shrank) while it was sent"
				: strerror(up->err));
		else if (r->werr)
			cli_say("%s %s: writing the download failed: %s", method, path,
				strerror(r->werr));
		else
			cli_say("%s %s: %s", method, path, errbuf[0] ? errbuf : curl_easy_strerror(cc));
		return -1;
	}
	return 0;
}

int ch_request(const char *method, const char *path, const void *body, size_t len,
	       const char *ctype, long timeout_s, struct resp *r)
{
	return perform(method, path, body, len, ctype, timeout_s, r, NULL);
}

int ch_request_parts(const char *method, const char *path, const struct ch_part *parts,
		     size_t nparts, const char *ctype, long timeout_s, struct resp *r)
{
	struct upload *u = calloc(1, sizeof *u);
	int rc;

	if (!u) {
		cli_say("out of memory");
		return -1;
	}
	u->p = parts;
	u->n = nparts;
	rc = perform(method, path, NULL, 0, ctype, timeout_s, r, u);
	free(u->stage);
	free(u);
	return rc;
}

int ch_print_error(const char *what, const struct resp *r)
{
	json_t *j = json_loadb(r->body.buf, r->body.len, 0, NULL);
	json_t *e = j ? json_object_get(j, "error") : NULL;
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *msg = json_string_value(json_object_get(e, "message"));
	const char *field = json_string_value(json_object_get(e, "field"));

	if (code)
		fprintf(stderr, "sandbox: %s: HTTP %ld %s: %s%s%s%s\n", what, r->status, code,
			msg ? msg : "", field ? " (field: " : "", field ? field : "",
			field ? ")" : "");
	else
		fprintf(stderr, "sandbox: %s: HTTP %ld with no JSON error (%zu bytes)\n", what,
			r->status, r->body.len);
	json_decref(j);
	return CLI_EXIT_API;
}

int ch_download(const char *path, struct resp *r)
{
	if (ch_request("GET", path, NULL, 0, NULL, 600, r) < 0)
		return r->werr ? CLI_EXIT_LOCAL : CLI_EXIT_API;
	if (r->status != 200)
		return ch_print_error(path, r);
	return 0;
}

static json_t *json_answer(const char *method, const char *path, const char *text,
			   const struct ch_part *parts, size_t nparts, long timeout_s, long ok1,
			   long ok2)
{
	struct resp r;
	json_t *j = NULL;
	json_error_t err;
	struct strbuf what = STRBUF_INIT;

	resp_init(&r);
	sb_addf(&what, "%s %s", method, path);
	if (parts ? ch_request_parts(method, path, parts, nparts, "application/json", timeout_s,
				     &r) < 0
		  : ch_request(method, path, text, text ? strlen(text) : 0,
			       text ? "application/json" : NULL, timeout_s, &r) < 0)
		goto out;
	if (r.status != ok1 && (ok2 == 0 || r.status != ok2)) {
		ch_print_error(what.buf, &r);
		goto out;
	}
	if (!(j = json_loadb(r.body.buf, r.body.len, 0, &err)))
		cli_say("%s: the answer is not JSON (%s)", what.buf, err.text);
out:
	sb_release(&what);
	resp_release(&r);
	return j;
}

json_t *ch_json(const char *method, const char *path, const json_t *body, long timeout_s,
		long ok1, long ok2)
{
	char *text = NULL;
	json_t *j;

	if (body && !(text = json_dumps(body, JSON_COMPACT))) {
		cli_say("out of memory");
		return NULL;
	}
	j = json_answer(method, path, text, NULL, 0, timeout_s, ok1, ok2);
	free(text);
	return j;
}

json_t *ch_json_parts(const char *method, const char *path, const struct ch_part *parts,
		      size_t nparts, long timeout_s, long ok1, long ok2)
{
	return json_answer(method, path, NULL, parts, nparts, timeout_s, ok1, ok2);
}

int ch_escape(struct strbuf *sb, const char *s, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned char c = *p;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
			sb_add(sb, &c, 1);
		} else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };

			sb_add(sb, e, 3);
		}
	}
	return sb->failed ? -1 : 0;
}

/* ---- live output: one long-poll per stream in flight, through a multi handle */

struct stream {
	const char *name;
	int fd;
	long long off;
	int eof, busy, retries, follow;
	double started, not_before;
	CURL *h;
	struct resp r;
	char errbuf[CURL_ERROR_SIZE];
	struct strbuf path;
};

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One finished range read: its bytes to the stream's fd. 0, or an exit code. */
static int take_slice(struct stream *s)
{
	json_t *j = json_loadb(s->r.body.buf, s->r.body.len, 0, NULL);
	const char *b64 = json_string_value(json_object_get(j, "data_base64"));
	const char *txt = json_string_value(json_object_get(j, "data"));
	json_t *next = json_object_get(j, "next_offset");
	unsigned char *bytes = NULL;
	size_t n = 0;
	int rc = CLI_EXIT_API;

	/* Rate limit, no database for a moment, a gateway hiccup: the stored bytes are
	 * still there, so read the same range again a little later. */
	if ((s->r.status == 429 || s->r.status == 502 || s->r.status == 503 ||
	     s->r.status == 504) && s->retries < 30) {
		s->retries++;
		s->not_before = util_mono_ms() + 1000;
		rc = 0;
		goto out;
	}
	if (s->r.status != 200) {
		rc = ch_print_error(s->path.buf, &s->r);
		goto out;
	}
	s->retries = 0;
	if (!json_is_integer(next) || json_integer_value(next) < s->off) {
		cli_say("%s: the answer has no usable next_offset", s->name);
		goto out;
	}
	if (b64 && !(bytes = util_b64_decode(b64, strlen(b64), &n))) {
		cli_say("%s: bad base64 in the answer", s->name);
		goto out;
	}
	if (!b64 && txt) {
		n = json_string_length(json_object_get(j, "data"));
		if (!(bytes = malloc(n + 1)))
			goto out;
		memcpy(bytes, txt, n);
	}
	if (n && write_all(s->fd, bytes, n) < 0) {
		cli_say("writing the job's %s failed: %s", s->name, strerror(errno));
		rc = CLI_EXIT_LOCAL;
		goto out;
	}
	s->eof = json_is_true(json_object_get(j, "eof")) || (!s->follow && n == 0);
	/* No bytes and no end came back at once: no long-poll slot was free for the
	 * key. Do not spin on it. */
	if (!n && !s->eof && util_mono_ms() - s->started < 200)
		s->not_before = util_mono_ms() + 250;
	s->off = json_integer_value(next);
	rc = 0;
out:
	free(bytes);
	json_decref(j);
	return rc;
}

static int start_read(CURLM *m, struct stream *s, ch_url_fn url_of, const void *ctx)
{
	sb_reset(&s->path);
	sb_reset(&s->r.body);
	s->r.status = 0;
	if (url_of(&s->path, ctx, s->name, s->off, s->follow ? 20 : 0) < 0 ||
	    setup(s->h, "GET", s->path.buf, NULL, 0, NULL, 60, &s->r, s->errbuf, NULL) < 0 ||
	    curl_multi_add_handle(m, s->h) != CURLM_OK) {
		cli_say("could not set up the output request");
		return -1;
	}
	s->busy = 1;
	s->started = util_mono_ms();
	return 0;
}

static int follow_loop(CURLM *m, struct stream *st, ch_url_fn url_of, const void *ctx)
{
	while (!(st[0].eof && st[1].eof)) {
		int running = 0, left = 0;
		CURLMsg *msg;
		double now = util_mono_ms();

		if (ch_interrupted)
			return -2;
		for (int i = 0; i < 2; i++)
			if (!st[i].eof && !st[i].busy && now >= st[i].not_before &&
			    start_read(m, &st[i], url_of, ctx) < 0)
				return CLI_EXIT_API;
		if (curl_multi_perform(m, &running) != CURLM_OK)
			return CLI_EXIT_API;
		while ((msg = curl_multi_info_read(m, &left))) {
			struct stream *s = msg->easy_handle == st[0].h ? &st[0] : &st[1];
			int rc;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_multi_remove_handle(m, s->h);
			s->busy = 0;
			if (msg->data.result != CURLE_OK) {
				cli_say("%s: %s", s->path.buf, s->errbuf[0] ? s->errbuf
						: curl_easy_strerror(msg->data.result));
				return CLI_EXIT_API;
			}
			curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &s->r.status);
			if ((rc = take_slice(s)))
				return rc;
		}
		curl_multi_poll(m, NULL, 0, 50, NULL);
	}
	return 0;
}

int ch_follow(ch_url_fn url_of, const void *ctx)
{
	static const long long zero[2] = { 0, 0 };

	return ch_follow_from(url_of, ctx, 3, zero, 1);
}

int ch_follow_from(ch_url_fn url_of, const void *ctx, int streams, const long long off[2],
		   int follow)
{
	struct stream st[2] = {
		{ .name = "stdout", .fd = 1, .off = off[0], .eof = !(streams & 1),
		  .follow = follow },
		{ .name = "stderr", .fd = 2, .off = off[1], .eof = !(streams & 2),
		  .follow = follow },
	};
	CURLM *m = curl_multi_init();
	int rc = CLI_EXIT_API;

	for (int i = 0; i < 2; i++) {
		resp_init(&st[i].r);
		sb_init(&st[i].path);
		st[i].h = new_handle();
	}
	if (!m || !st[0].h || !st[1].h) {
		cli_say("out of memory");
		goto out;
	}
	rc = follow_loop(m, st, url_of, ctx);
out:
	for (int i = 0; i < 2; i++) {
		if (st[i].h) {
			if (st[i].busy && m)
				curl_multi_remove_handle(m, st[i].h);
			curl_easy_cleanup(st[i].h);
		}
		resp_release(&st[i].r);
		sb_release(&st[i].path);
	}
	if (m)
		curl_multi_cleanup(m);
	return rc;
}
