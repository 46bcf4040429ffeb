/* envd's filesystem for E2B sandboxes, its pure parts (efsform.c, unit-tested): the
 * multipart/form-data body of an upload, a query parameter as envd reads it, and a
 * supervisor's entry (docs/SESSIONS.md "Entries") as envd's EntryInfo. The handlers
 * are efs.c. */
#ifndef SANDBOX_EFSFORM_H
#define SANDBOX_EFSFORM_H

#include <jansson.h>
#include <stddef.h>

#define EFS_PARTS_MAX 100  /* files in one upload (the runner's SF_PUT_MANY_MAX) */
#define EFS_NAME_MAX 1100  /* a part's field name or file name, decoded */

struct efs_part {
	char field[64];               /* the form field's name ("file") */
	char filename[EFS_NAME_MAX];  /* "" when the part has none */
	const unsigned char *data;    /* into the body */
	size_t len;
};

/* The parts of a multipart/form-data body whose Content-Type is ct (its boundary
 * parameter, quoted or not). Names are read from Content-Disposition's name= and
 * filename= (quoted: backslash escapes, then %22 %0D %0A as the HTML form encoding
 * writes '"', CR and LF); filename*= is not read. The count (0..max), or -1 with why
 * (static text): not multipart, no boundary, a part without its headers' end or its
 * closing boundary, more than max parts, a name too long. */
int efs_multipart(const char *ct, const unsigned char *body, size_t len, struct efs_part *parts,
		  int max, const char **why);

/* Query parameter name of a raw query string as envd (Go's url.ParseQuery) reads it:
 * '+' is a space, then percent-decoding. 1 found (the first), 0 absent, -1 malformed
 * or longer than n - 1. */
int efs_query(const char *query, const char *name, char *out, size_t n);

/* envd's EntryInfo of an entry: name (the last component of the E2B path, "user" for
 * the home), type FILE_TYPE_FILE | FILE_TYPE_DIRECTORY | FILE_TYPE_SYMLINK |
 * FILE_TYPE_UNSPECIFIED ("other": a fifo, socket or device, which the SDKs drop),
 * path (absolute: /home/user/...), size (int64: a string), mode (the permission bits),
 * permissions ("drwxr-xr-x", as Go's FileMode prints), owner and group ("user" for the
 * sandbox's user, uid 1000, else "nobody"), modifiedTime (RFC 3339), symlinkTarget
 * (links). NULL when the entry is malformed. */
json_t *efs_entry_info(const json_t *e);

#endif
