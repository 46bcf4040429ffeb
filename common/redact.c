/* Scrubbing of secrets from text that may reach a log line (see redact.h). */
#include "redact.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static int is_tok(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.' || c == '~' || c == '+' ||
	       c == '/' || c == '=';
}

/* Replaces s[from..to) by the marker, or deletes it when the marker is longer. */
static size_t blot(char *s, size_t from, size_t to)
{
	size_t mlen = strlen(REDACTED), n = to - from;

	if (n >= mlen) {
		memcpy(s + from, REDACTED, mlen);
		memmove(s + from + mlen, s + to, strlen(s + to) + 1);
		return from + mlen;
	}
	memmove(s + from, s + to, strlen(s + to) + 1);
	return from;
}

static const char *const prefixes[] = { "Bearer ", "sbx_", "password=", "token=", "secret=",
					"passwd=" };

int redact(char *s)
{
	int found = 0;
	size_t i = 0;

	while (s[i] != '\0') {
		size_t k, plen = 0;

		for (k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++) {
			/* the first byte first: every log line's values pass here */
			if (tolower((unsigned char)s[i]) != tolower((unsigned char)prefixes[k][0]))
				continue;
			plen = strlen(prefixes[k]);
			if (strncasecmp(s + i, prefixes[k], plen) == 0)
				break;
		}
		if (k == sizeof prefixes / sizeof prefixes[0]) {
			i++;
			continue;
		}
		size_t start = i + plen, end = start;
		char quote = s[start] == '"' || s[start] == '\'' ? s[start] : 0;

		if (quote) {
			/* password="..." : everything up to the closing quote */
			start++;
			end = start;
			while (s[end] != '\0' && s[end] != quote)
				end++;
		} else {
			while (s[end] != '\0' && is_tok((unsigned char)s[end]))
				end++;
		}
		if (end == start) {
			i = start;
			continue;
		}
		found++;
		i = blot(s, start, end);
	}
	return found;
}
