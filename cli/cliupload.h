/* Local files going into requests of `sandbox`: read whole (bounded: a --source
 * program, a token file), or streamed into a JSON request body as base64 through a
 * bounded buffer (clihttp's struct ch_part), never whole into memory. A file's place
 * in the JSON request is a random marker string; the dumped JSON is cut at each marker
 * and the file's base64 sent there as it is read. Standard input ("-") is first spooled
 * to an unnamed temporary file (O_TMPFILE), so that it has a size and can be re-read. */
#ifndef SANDBOX_CLIUPLOAD_H
#define SANDBOX_CLIUPLOAD_H

#include <jansson.h>

#include "strbuf.h"

/* fd's bytes up to its end appended to sb (at most 16 MiB: EFBIG). 0, or -1 with
 * errno. */
int cli_read_fd(int fd, struct strbuf *sb);

/* A local file's bytes ("-": stdin). 0, or -1 with the message printed. *exec (when
 * not NULL): the file has an execute bit. */
int cli_read_local(const char *name, struct strbuf *sb, int *exec);

/* Opens a local file to upload ("-": stdin, spooled). Its fd and size, or -1 with the
 * message printed. *exec (when not NULL): the file has an execute bit. */
int cli_open_local(const char *name, unsigned long long *size, int *exec);

/* Sets obj.key to a marker standing for the local file's base64 (kept open until
 * cli_attach_release). 0, or an exit code (error printed). */
int cli_attach_b64(json_t *obj, const char *key, const char *local, int *exec);

/* POSTs req with every attachment streamed in place of its marker: the parsed answer
 * (status ok1 or ok2), or NULL with the error printed. */
json_t *cli_post_streamed(const char *path, const json_t *req, long ok1, long ok2);

/* Closes and forgets every attachment. */
void cli_attach_release(void);

#endif
