/* Artifact names: which names the job may hand back, and how job-controlled text is
 * shown in diagnostics. Pure functions (unit-tested in tests/unit/test_artname.c).
 *
 * The job chooses every byte of an artifact's name. A name is collected only if the
 * API can list it (JSON: valid UTF-8) and serve it back (GET .../artifacts/{path}:
 * common/pathrules.c pr_rel_path refuses control characters and backslashes, at most
 * 1024 bytes; app/http/http.h keeps at most 2047 bytes of the raw request path), and if it
 * cannot be mistaken for service text anywhere it is shown. */
#ifndef SANDBOX_ARTNAME_H
#define SANDBOX_ARTNAME_H

#include <stddef.h>

/* The longest artifact path (bytes) the API accepts and the DB column holds. */
#define AN_PATH_MAX 1024
/* The longest percent-encoded path that fits a download request: the API keeps
 * 2047 bytes of "/v1/jobs/<36-byte id>/artifacts/<path>". */
#define AN_URL_PATH_MAX (2047 - 9 - 36 - 11)

enum an_verdict {
	AN_OK,
	AN_CONTROL,   /* a control character (C0, DEL, C1) or invalid UTF-8 */
	AN_BACKSLASH, /* the API refuses it in a download path */
	AN_TOO_LONG,  /* over AN_PATH_MAX bytes, or over AN_URL_PATH_MAX encoded */
};

/* One directory entry's name (n bytes, no NUL inside). */
enum an_verdict an_check_name(const char *name, size_t n);
/* A whole relative path (NUL-terminated) whose components passed an_check_name. */
enum an_verdict an_check_path(const char *path);
/* Length of path with every byte but A-Z a-z 0-9 - . _ ~ percent-encoded: the
 * longest request a client makes for it ('/' included, as encodeURIComponent and
 * jq's @uri do). */
size_t an_url_len(const char *path);
/* Job-controlled text for a diagnostic line: printable ASCII but backslash as is,
 * backslash as "\\", every other byte as "\xHH"; cut at a whole escape with "..."
 * when out is too small. Always NUL-terminates (outn > 0). */
void an_escape(char *out, size_t outn, const char *in);

#endif
