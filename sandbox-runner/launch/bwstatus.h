/* bwrap's --json-status-fd: JSON objects, one per line, {"child-pid": N, ...} when
 * the sandbox's init runs, {"exit-code": N} when the command ends (128+N for signal
 * N). Read as Jansson documents, line by line, however the pipe cuts them. Pure. */
#ifndef SANDBOX_BWSTATUS_H
#define SANDBOX_BWSTATUS_H

#include <stddef.h>
#include <sys/types.h>

#include "strbuf.h"

struct bw_status {
	struct strbuf line;  /* the unfinished line */
	int overlong;        /* it is past LINE_MAX_BYTES: dropped at its end */
	int have_pid, have_exit;
	pid_t child_pid;     /* the sandbox's pid on the host */
	int exit_code;       /* 0..255 */
	size_t garbage;      /* lines that were not status objects */
};

void bws_init(struct bw_status *st);
/* Takes n more bytes of the stream. */
void bws_feed(struct bw_status *st, const char *data, size_t n);
/* End of the stream: an unfinished last line is parsed as it is. */
void bws_finish(struct bw_status *st);
void bws_release(struct bw_status *st);

#endif
