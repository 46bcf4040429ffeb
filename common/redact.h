/* Scrubbing of secrets from text that may reach a log line.
 * The first defence is never to pass a secret to the logger at all; this catches
 * what slips through in free text (client-supplied strings, library messages). */
#ifndef SANDBOX_REDACT_H
#define SANDBOX_REDACT_H

#include <stddef.h>

#define REDACTED "[REDACTED]"

/* Rewrites s in place (it only ever shrinks or keeps length: the marker replaces
 * at least as many characters, else the secret is cut to nothing). Redacts our
 * token format `sbx_...`, `Bearer ...`, and `password=`/`token=`/`secret=` values.
 * Returns how many secrets were found. */
int redact(char *s);

#endif
