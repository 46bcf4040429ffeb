/* One session's supervisor (sandbox-runner --supervise-session): builds the
 * sandbox once with the agent as its first process, serves the session's request
 * rows, stores command output as it arrives, enforces the session's limits, idle
 * time and lifetime, and ends the session in a definite state. */
#ifndef SANDBOX_SESSION_H
#define SANDBOX_SESSION_H

#include "config.h"

/* Runs the session until it ends; the slot lock (inherited) is held for the whole
 * life. 0 when the end was recorded (or the session was no longer ours), 1 when
 * the session could not even be loaded (its lease then expires: lost). */
int session_main(const struct cfg *cfg, const char *session_id, int slot,
		 const char *runner_id);

#endif
