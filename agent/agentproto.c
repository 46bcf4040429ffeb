/* The agent wire format (agentproto.h): framing and the SPAWN payload. Pure and
 * bounded: both ends parse bytes the other may have forged, so every length is
 * checked against what is there before it is used. */
#include "agentproto.h"

#include <stdlib.h>
#include <string.h>

#define SPAWN_FIXED 12 /* flags, argc, envc */

void ap_put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

uint32_t ap_get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

void ap_put_header(unsigned char *hdr, uint32_t len, uint8_t type, uint8_t stream,
		   uint32_t cid)
{
	ap_put_u32(hdr, len);
	hdr[4] = type;
	hdr[5] = stream;
	hdr[6] = 0;
	hdr[7] = 0;
	ap_put_u32(hdr + 8, cid);
}

int ap_parse(const unsigned char *buf, size_t n, struct ap_frame *f)
{
	uint32_t len;
	uint8_t type, stream;

	if (n < AP_HDR)
		return 0;
	len = ap_get_u32(buf);
	type = buf[4];
	stream = buf[5];
	if (len > AP_MAX_PAYLOAD || buf[6] != 0 || buf[7] != 0)
		return -1;
	if (type < AP_HELLO || type > AP_STDIN_GONE)
		return -1;
	if (type == AP_OUTPUT ? (stream != 1 && stream != 2) : stream != 0)
		return -1;
	if (n - AP_HDR < len)
		return 0;
	f->len = len;
	f->type = type;
	f->stream = stream;
	f->cid = ap_get_u32(buf + 8);
	f->payload = buf + AP_HDR;
	return 1;
}

int ap_frame_valid(const struct ap_frame *f)
{
	if ((f->type == AP_HELLO) != (f->cid == 0))
		return 0;
	switch (f->type) {
	case AP_HELLO:
	case AP_SIGNAL:
	case AP_STARTED:
	case AP_EXIT:
	case AP_STDIN_ACK:
		return f->len == 4;
	case AP_SPAWN:
		return f->len >= SPAWN_FIXED;
	case AP_STDIN:
	case AP_OUTPUT:
		return f->len > 0;
	case AP_STDIN_CLOSE:
	case AP_STDIN_GONE:
		return f->len == 0;
	case AP_SPAWN_FAILED:
		return f->len >= 4 && f->len <= 4 + AP_MAX_FAIL_TEXT;
	}
	return 0;
}

/* Appends s and its NUL at *off: 0, or -1 when out would overflow. */
static int put_str(unsigned char *out, size_t *off, const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > AP_MAX_PAYLOAD - *off)
		return -1;
	memcpy(out + *off, s, n);
	*off += n;
	return 0;
}

long ap_spawn_encode(unsigned char *out, uint32_t flags, const char *cwd, char *const *argv,
		     size_t argc, char *const *env, size_t envc)
{
	size_t off = SPAWN_FIXED;

	/* Never produce what ap_spawn_decode would refuse. */
	if (argc == 0 || argc > AP_MAX_ARGS || envc > AP_MAX_ARGS - argc)
		return -1;
	if ((flags & ~AP_SPAWN_STDIN) != 0 || cwd[0] != '/')
		return -1;
	ap_put_u32(out, flags);
	ap_put_u32(out + 4, (uint32_t)argc);
	ap_put_u32(out + 8, (uint32_t)envc);
	if (put_str(out, &off, cwd) < 0)
		return -1;
	for (size_t i = 0; i < argc; i++)
		if (put_str(out, &off, argv[i]) < 0)
			return -1;
	for (size_t i = 0; i < envc; i++) {
		const char *eq = strchr(env[i], '=');

		if (eq == NULL || eq == env[i] || put_str(out, &off, env[i]) < 0)
			return -1;
	}
	return (long)off;
}

/* The NUL-terminated string at p[*off, len): it, with *off moved past its NUL, or NULL
 * when no NUL comes before len. */
static const char *take_str(const unsigned char *p, size_t len, size_t *off)
{
	const unsigned char *nul;
	const char *s;

	if (*off >= len)
		return NULL;
	nul = memchr(p + *off, 0, len - *off);
	if (nul == NULL)
		return NULL;
	s = (const char *)p + *off;
	*off = (size_t)(nul - p) + 1;
	return s;
}

int ap_spawn_decode(const unsigned char *p, size_t len, struct ap_spawn *s)
{
	uint32_t argc, envc;
	size_t off = SPAWN_FIXED;

	memset(s, 0, sizeof *s);
	if (len < SPAWN_FIXED || len > AP_MAX_PAYLOAD)
		return -1;
	s->flags = ap_get_u32(p);
	argc = ap_get_u32(p + 4);
	envc = ap_get_u32(p + 8);
	/* Unknown flags are refused: an old agent must not ignore a new request. */
	if ((s->flags & ~AP_SPAWN_STDIN) != 0)
		return -1;
	if (argc == 0 || argc > AP_MAX_ARGS || envc > AP_MAX_ARGS - argc)
		return -1;
	s->cwd = take_str(p, len, &off);
	if (s->cwd == NULL || s->cwd[0] != '/')
		goto bad;
	s->argv = calloc((size_t)argc + 1, sizeof *s->argv);
	s->env = calloc((size_t)envc + 1, sizeof *s->env);
	if (s->argv == NULL || s->env == NULL)
		goto bad;
	for (uint32_t i = 0; i < argc; i++)
		if ((s->argv[i] = take_str(p, len, &off)) == NULL)
			goto bad;
	for (uint32_t i = 0; i < envc; i++) {
		const char *eq;

		if ((s->env[i] = take_str(p, len, &off)) == NULL)
			goto bad;
		eq = strchr(s->env[i], '=');
		if (eq == NULL || eq == s->env[i])
			goto bad;
	}
	if (off != len)
		goto bad;
	s->argc = argc;
	s->envc = envc;
	return 0;
bad:
	ap_spawn_free(s);
	return -1;
}

void ap_spawn_free(struct ap_spawn *s)
{
	free(s->argv);
	free(s->env);
	memset(s, 0, sizeof *s);
}
