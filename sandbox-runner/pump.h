/* The job's byte streams: stdout and stderr read into capped buffers, stdin fed from
 * the job's input. Non-blocking fds; the supervisor's loop calls these when poll says
 * so. */
#ifndef SANDBOX_PUMP_H
#define SANDBOX_PUMP_H

#include <stddef.h>

struct pump_out {
	unsigned char *data;
	size_t len, cap;
	size_t limit;       /* the job's output_bytes */
	int trunc, eof;
};

/* Reads what fd has now into o, keeping at most o->limit bytes; at EOF closes *fd and
 * sets it to -1. 1 when this call hit the cap (or ran out of memory): the caller
 * stops the job (output_limit); 0 otherwise. */
int pump_drain(int *fd, struct pump_out *o);
/* Writes what fd takes of in[*off, len); closes *fd (-1) when all is written or the
 * reader is gone. */
void pump_feed(int *fd, const unsigned char *in, size_t len, size_t *off);
void pump_free(struct pump_out *o);

#endif
