/* Retrying transient faults (DESIGN.md section 5): which errors are worth another
 * attempt, and the capped exponential backoff between attempts. Pure. */
#ifndef SANDBOX_RETRY_H
#define SANDBOX_RETRY_H

/* 1 for an errno that says the host was short of something for a moment (EAGAIN,
 * ENOMEM, EINTR, EBUSY, ENFILE); 0 for the rest, which another attempt would meet
 * again. */
int retry_transient(int err);
/* "EAGAIN" for EAGAIN (the error type in retry log lines and diagnostics: a class,
 * never a message that could quote a path or a job's data); "errno N" if unnamed. */
const char *retry_errname(int err);
/* The wait after attempt (1, 2, ...): first_ms doubled per attempt, at most cap_ms. */
long retry_delay_ms(long first_ms, long cap_ms, int attempt);

#endif
