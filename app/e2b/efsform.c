/* envd's filesystem for E2B sandboxes, its pure parts (see efsform.h): an upload's
 * multipart/form-data body, a query parameter, an entry as EntryInfo. */
#include "efsform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "e2b.h"
#include "http_util.h"

/* ---- multipart/form-data */

/* The boundary parameter of ct into b (at most 70 bytes, RFC 2046): 0 or -1. */
static int boundary_of(const char *ct, char *b, size_t n)
{
	const char *p;
	size_t len;

	if (ct == NULL || strncasecmp(ct, "multipart/form-data", 19) != 0)
		return -1;
	for (p = ct + 19; (p = strchr(p, ';')) != NULL;) {
		p += 1 + strspn(p + 1, " \t");
		if (strncasecmp(p, "boundary=", 9) != 0)
			continue;
		p += 9;
		if (*p == '"') {
			const char *end = strchr(p + 1, '"');
			if (end == NULL)
				return -1;
			len = (size_t)(end - p - 1), p++;
		} else {
			len = strcspn(p, "; \t");
		}
		if (len == 0 || len > 70 || len >= n)
			return -1;
		memcpy(b, p, len);
		b[len] = '\0';
		return 0;
	}
	return -1;
}

/* A Content-Disposition parameter's value from v (after "name="): quoted with backslash
 * escapes, or a token; %22 %0D %0A decoded. The bytes of the header it used, or -1. */
static int param_value(const char *v, const char *end, char *out, size_t n)
{
	size_t k = 0;
	const char *p = v;

	if (p < end && *p == '"') {
		for (p++; p < end && *p != '"'; p++) {
			if (*p == '\\' && p + 1 < end)
				p++;
			if (k + 1 >= n)
				return -1;
			out[k++] = *p;
		}
		if (p == end)
			return -1;
		p++;
	} else {
		for (; p < end && *p != ';' && *p != ' ' && *p != '\t'; p++) {
			if (k + 1 >= n)
				return -1;
			out[k++] = *p;
		}
	}
	out[k] = '\0';
	for (char *s = out; (s = strchr(s, '%')) != NULL; s++) {
		const char *rep = strncasecmp(s, "%22", 3) == 0 ? "\"" :
				  strncasecmp(s, "%0D", 3) == 0 ? "\r" :
				  strncasecmp(s, "%0A", 3) == 0 ? "\n" : NULL;
		if (rep) {
			*s = *rep;
			memmove(s + 1, s + 3, strlen(s + 3) + 1);
		}
	}
	return (int)(p - v);
}

/* The Content-Disposition line [h, end) of a part: its name and filename. 0 or -1. */
static int disposition(const char *h, const char *end, struct efs_part *part)
{
	const char *p = h;

	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		int used;

		if (semi == NULL)
			break;
		p = semi + 1;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if ((size_t)(end - p) > 9 && strncasecmp(p, "filename=", 9) == 0)
			used = param_value(p + 9, end, part->filename, sizeof part->filename);
		else if ((size_t)(end - p) > 5 && strncasecmp(p, "name=", 5) == 0)
			used = param_value(p + 5, end, part->field, sizeof part->field);
		else
			continue;
		if (used < 0)
			return -1;
	}
	return 0;
}

/* The headers [h, end) of a part (CRLF-separated lines). 0 or -1. */
static int part_headers(const char *h, const char *end, struct efs_part *part)
{
	while (h < end) {
		const char *eol = memmem(h, (size_t)(end - h), "\r\n", 2);
		if (eol == NULL)
			eol = end;
		if ((size_t)(eol - h) > 20 && strncasecmp(h, "Content-Disposition:", 20) == 0 &&
		    disposition(h + 20, eol, part) < 0)
			return -1;
		h = eol + 2;
	}
	return 0;
}

int efs_multipart(const char *ct, const unsigned char *body, size_t len, struct efs_part *parts,
		  int max, const char **why)
{
	char b[80], delim[84];
	const char *s = (const char *)body, *end = s + len, *p;
	size_t dl;
	int n = 0;

	if (boundary_of(ct, b, sizeof b) < 0) {
		*why = "the upload is not multipart/form-data with a boundary";
		return -1;
	}
	dl = (size_t)snprintf(delim, sizeof delim, "\r\n--%s", b);
	/* the first delimiter may open the body (no CRLF before it) */
	if (len >= dl - 2 && memcmp(s, delim + 2, dl - 2) == 0)
		p = s + dl - 2;
	else if ((p = memmem(s, len, delim, dl)) != NULL)
		p += dl;
	else {
		*why = "the multipart body has no boundary";
		return -1;
	}
	for (;;) {
		const char *hend, *next;

		if (end - p >= 2 && p[0] == '-' && p[1] == '-')
			return n; /* the closing delimiter */
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
			break;
		p += 2;
		*why = "a part of the multipart body has no end of its headers";
		if (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
			hend = p - 2; /* no headers */
		else if ((hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4)) == NULL)
			return -1;
		*why = "a part of the multipart body has no closing boundary";
		if ((next = memmem(hend + 4, (size_t)(end - hend - 4), delim, dl)) == NULL)
			return -1;
		*why = "the upload has too many parts";
		if (n == max)
			return -1;
		memset(&parts[n], 0, sizeof parts[n]);
		*why = "a part's name or file name is too long or malformed";
		if (part_headers(p, hend, &parts[n]) < 0)
			return -1;
		parts[n].data = (const unsigned char *)hend + 4;
		parts[n].len = (size_t)(next - hend - 4);
		n++;
		p = next + dl;
	}
	*why = "the multipart body is malformed";
	return -1;
}

/* ---- the query */

int efs_query(const char *query, const char *name, char *out, size_t n)
{
	size_t nl = strlen(name);
	const char *q = query ? query : "";

	while (*q) {
		size_t len = strcspn(q, "&");
		if (len > nl && strncmp(q, name, nl) == 0 && q[nl] == '=') {
			char *raw = strndup(q + nl + 1, len - nl - 1);
			int rc;
			if (raw == NULL)
				return -1;
			for (char *c = raw; *c; c++)
				if (*c == '+')
					*c = ' ';
			rc = http_pct_decode(raw, strlen(raw), out, n) < 0 ? -1 : 1;
			free(raw);
			return rc;
		}
		if (len == nl && strncmp(q, name, nl) == 0) {
			if (n == 0)
				return -1;
			out[0] = '\0';
			return 1;
		}
		q += len + (q[len] == '&');
	}
	return 0;
}

/* ---- EntryInfo */

static const struct {
	const char *ours, *theirs;
	char letter; /* Go's FileMode.String(): its type letter, '-' for a file */
} types[] = {
	{ "file", "FILE_TYPE_FILE", '-' },
	{ "dir", "FILE_TYPE_DIRECTORY", 'd' },
	{ "symlink", "FILE_TYPE_SYMLINK", 'L' },
	{ "other", "FILE_TYPE_UNSPECIFIED", '?' },
};

/* "2026-12-07T20:01:33.123456789Z": digits and -:.TZ only, at most 40 bytes. */
static int time_ok(const char *t)
{
	size_t n = t ? strlen(t) : 0;

	return n >= 20 && n <= 40 && strspn(t, "0123456789-:.TZ") == n;
}

json_t *efs_entry_info(const json_t *e)
{
	const char *type = json_string_value(json_object_get(e, "type"));
	const char *rel = json_string_value(json_object_get(e, "path"));
	const char *mtime = json_string_value(json_object_get(e, "mtime"));
	const json_t *size = json_object_get(e, "size"), *mode = json_object_get(e, "mode");
	const json_t *target = json_object_get(e, "symlink_target");
	json_int_t m = json_integer_value(mode);
	char abs[2048], sz[32], perms[11];
	const char *owner, *group;
	size_t t;
	json_t *o;

	for (t = 0; t < sizeof types / sizeof types[0]; t++)
		if (type && strcmp(type, types[t].ours) == 0)
			break;
	if (t == sizeof types / sizeof types[0] || rel == NULL ||
	    e2b_path_abs(rel, abs, sizeof abs) < 0 || !json_is_integer(size) ||
	    json_integer_value(size) < 0 || !json_is_integer(mode) || m < 0 || m > 07777 ||
	    !time_ok(mtime) || (target && !json_is_string(target)))
		return NULL;
	snprintf(sz, sizeof sz, "%lld", (long long)json_integer_value(size));
	perms[0] = types[t].letter;
	for (int i = 0; i < 9; i++)
		perms[1 + i] = (m >> (8 - i)) & 1 ? "rwx"[i % 3] : '-';
	perms[10] = '\0';
	owner = json_integer_value(json_object_get(e, "uid")) == 1000 ? "user" : "nobody";
	group = json_integer_value(json_object_get(e, "gid")) == 1000 ? "user" : "nobody";
	o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:s, s:s}", "name",
		      strrchr(abs, '/') + 1, "type", types[t].theirs, "path", abs, "size", sz,
		      "mode", (json_int_t)(m & 0777), "permissions", perms, "owner", owner, "group",
		      group, "modifiedTime", mtime);
	if (o && target)
		json_object_set(o, "symlinkTarget", (json_t *)target);
	return o;
}
