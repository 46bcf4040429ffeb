/* Artifact names (see artname.h). */
#include "artname.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Decodes one strict UTF-8 sequence at s (n bytes left): its length, or 0 when it is
 * invalid (overlong, surrogate, above U+10FFFF, truncated). */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t need;
	uint32_t v;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 1, v = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 2, v = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 3, v = s[0] & 0x07;
	else
		return 0;
	if (n <= need)
		return 0;
	for (size_t k = 1; k <= need; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[k] & 0x3f);
	}
	if ((need == 2 && v < 0x800) || (need == 3 && v < 0x10000) || v > 0x10ffff ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return need + 1;
}

enum an_verdict an_check_name(const char *name, size_t n)
{
	const unsigned char *s = (const unsigned char *)name;
	int backslash = 0;

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = utf8_seq(s + i, n - i, &cp);

		/* C0, DEL and C1: what a terminal, a log or a line splitter acts on */
		if (k == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
			return AN_CONTROL;
		if (cp == '\\')
			backslash = 1;
		i += k;
	}
	return backslash ? AN_BACKSLASH : AN_OK;
}

static int unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

size_t an_url_len(const char *path)
{
	size_t n = 0;

	for (const unsigned char *s = (const unsigned char *)path; *s; s++)
		n += unreserved(*s) ? 1 : 3;
	return n;
}

enum an_verdict an_check_path(const char *path)
{
	if (strlen(path) > AN_PATH_MAX || an_url_len(path) > AN_URL_PATH_MAX)
		return AN_TOO_LONG;
	return AN_OK;
}

/* One byte's rendering in an_escape; returns its length. */
static size_t esc1(unsigned char c, char e[5])
{
	if (c >= 0x20 && c < 0x7f && c != '\\') {
		e[0] = (char)c, e[1] = '\0';
		return 1;
	}
	if (c == '\\') {
		memcpy(e, "\\\\", 3);
		return 2;
	}
	snprintf(e, 5, "\\x%02x", c);
	return 4;
}

void an_escape(char *out, size_t outn, const char *in)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, full = 0;
	char e[5];

	if (outn == 0)
		return;
	for (size_t i = 0; s[i]; i++)
		full += esc1(s[i], e);
	/* whole escapes only; "..." says the rest is missing */
	size_t room = full < outn ? outn - 1 : (outn > 4 ? outn - 4 : 0);
	for (size_t i = 0; s[i]; i++) {
		size_t k = esc1(s[i], e);
		if (o + k > room)
			break;
		memcpy(out + o, e, k);
		o += k;
	}
	if (full >= outn && o + 3 < outn)
		memcpy(out + o, "...", 3), o += 3;
	out[o] = '\0';
}
