/* A session or job whose lease expired while its processes may still run (issue 25):
 * its supervisor stalled (stopped, stuck in host work) or died. The dispatcher of its
 * host finds the supervisor by its runner id, kills it and the slot's processes, and
 * marks the row lost only once the slot's lock is free and the slot cleaned: until
 * then the row stays live, so neither the slot nor the key's quota (max_sessions,
 * max_running) is given out while the old sandbox may run. */
#ifndef SANDBOX_RECLAIM_H
#define SANDBOX_RECLAIM_H

#include <stddef.h>
#include <sys/types.h>

/* N of a runner id "HOST/KIND-N/RANDOM" (KIND "slot" for a job, "session" for a
 * session) whose HOST is host, 0 <= N < max; else -1. Pure. */
int rc_slot_of(const char *runner_id, const char *host, const char *kind, long long max);
/* Whether cmdline (len bytes of /proc/PID/cmdline: NUL-separated, or one string with
 * spaces after a spare rewrote it) holds "--runner-id" followed by runner_id as a
 * whole word. Pure. */
int rc_cmdline_has(const char *cmdline, size_t len, const char *runner_id);
/* Processes of uid that have not exited yet (zombies, dead and waiting for a parent to
 * reap them, are not counted), or -1 when /proc cannot be read. */
int rc_uid_running(uid_t uid);
/* The pid of the root process (a supervisor) whose command line names runner_id, or
 * 0 when there is none. */
pid_t rc_find_supervisor(const char *runner_id);

#endif
