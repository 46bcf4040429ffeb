/* Which runtimes of runner_runtimes_file this runner host's sandbox provides
 * (issue 12 point 1). The dispatcher calls rtp_launch at start and every
 * RTP_EVERY_MS with a free job slot it holds: a detached process (double fork, its
 * own database connection) checks each runtime and replaces this host's rows of
 * runner_runtimes in one transaction, then exits, which frees the slot.
 *
 * A runtime is provided when each program it names (version, compile, run argv[0];
 * not the job's own ./prog) is found along the sandbox's PATH (/usr/local/bin,
 * /usr/bin, /bin: the profile binds the host's /usr read-only) as an executable
 * regular file, and its version argv, if it has one, exits 0 within
 * runner_runtime_probe_seconds (default 2; wall and CPU) when run
 * exactly as a job is (supervise_capture: the slot's uid, cgroup, rlimits, seccomp
 * and the default bwrap profile; no shell). The version is the first non-empty line
 * of its stdout (else stderr), at most 200 bytes of printable ASCII. */
#ifndef SANDBOX_RTPROBE_H
#define SANDBOX_RTPROBE_H

#include "config.h"

struct db;

#define RTP_EVERY_MS (3 * 60 * 1000)
#define RTP_STAMP "runtimes.probed" /* in runner_state_dir: the file's digest probed last */

/* For --once (cron) runs, which must not probe every time: 1 when this host's rows
 * of runner_runtimes are older than RTP_EVERY_MS (database clock; without rows, the
 * stamp file's time), or the runtimes file's content is not what the last probe on
 * this host read (runner_state_dir/RTP_STAMP holds its SHA-256), or there is no
 * stamp. 0 otherwise, and on a database error (logged): a cron run stays cheap. */
int rtp_due(const struct cfg *cfg, struct db *db, const char *host);

/* Call holding slot's lock fd: the probe process inherits it, so the slot stays
 * taken until the probe ends; the caller closes its own copy either way. 0 when the
 * probe process was started, -1 if fork failed. */
int rtp_launch(const struct cfg *cfg, const char *host, int slot);

#endif
