/* The job's byte streams: stdout and stderr read into capped buffers, stdin fed from
 * the job's input. Non-blocking fds; the supervisor's loop calls these when poll says
 * so.
 *
 * An output buffer holds only what is not stored yet: bytes [base, base + len) of the
 * stream. The supervisor stores them while the job runs (live output) and hands them
 * on with the result at the end; once stored they leave memory (pump_consume), so a
 * job's output costs memory only while the database lags behind it. The first
 * PUMP_HEAD bytes stay in `head` for the diagnostics of a sandbox that failed to
 * start (bwrap's own words on stderr). */
#ifndef SANDBOX_PUMP_H
#define SANDBOX_PUMP_H

#include <stddef.h>

#define PUMP_HEAD 200

struct pump_out {
	unsigned char *data;      /* pending bytes, not yet stored */
	size_t len, cap;
	size_t base;              /* bytes before data[0]: already stored */
	size_t limit;             /* the job's output_bytes: base + len never passes it */
	double since;             /* monotonic ms when the oldest pending byte came; 0: none */
	unsigned char head[PUMP_HEAD];
	size_t head_len;
	int trunc, eof;
};

/* Reads what fd has now into o, keeping at most o->limit bytes of the stream; at EOF
 * closes *fd and sets it to -1. 1 when this call hit the cap (or ran out of memory):
 * the caller stops the job (output_limit); 0 otherwise. */
int pump_drain(int *fd, struct pump_out *o);
/* The first n pending bytes are stored: they leave the buffer and base moves on. */
void pump_consume(struct pump_out *o, size_t n);
/* Bytes of the stream kept so far (stored + pending). */
size_t pump_total(const struct pump_out *o);
/* Writes what fd takes of in[*off, len); closes *fd (-1) when all is written or the
 * reader is gone. */
void pump_feed(int *fd, const unsigned char *in, size_t len, size_t *off);
void pump_free(struct pump_out *o);

#endif
