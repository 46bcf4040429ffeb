/* How `sandbox` waits for a job or a session command to end: the long-poll of its
 * status, following its output to the end with Ctrl-C as a way out, and what is said
 * when it has ended (its diagnostics, -v, the exit code to leave with). */
#ifndef SANDBOX_CLIWAIT_H
#define SANDBOX_CLIWAIT_H

#include <jansson.h>

#include "clihttp.h"

/* -v of run and session exec: every diagnostic is shown, not only a failure's. */
extern int cli_verbose;

/* SIGINT and SIGTERM stop a follow (ch_interrupted) instead of the process. */
void cli_catch_signals(void);

/* A status that has ended: neither queued nor running (a missing one has not). */
int cli_settled(const char *status);

/* GETs path (a long-poll, "?wait=30") until ended(the answer's status), at most tries
 * times. cur is the answer in hand (NULL: none yet) and is consumed: when its status
 * has ended, no request is made. pause_ms > 0: a pause after each answer that has not
 * ended (no long-poll slot was free: do not spin). The last answer (caller decrefs),
 * or NULL with the error printed. */
json_t *cli_wait_status(const char *path, json_t *cur, int (*ended)(const char *status),
			int tries, int pause_ms);

/* Follows a job's or command's output to its end (ch_follow), then returns
 * outcome(ctx); interrupted by a signal: interrupted(ctx) instead; a failed follow:
 * its exit code. */
int cli_follow_end(ch_url_fn url_of, const void *ctx, int (*interrupted)(const void *ctx),
		   int (*outcome)(const void *ctx));

/* The diagnostics say why a job or command ended as it did; those of one that
 * exited on its own (succeeded, failed) are shown with -v only. */
void cli_print_diagnostics(const json_t *list, const char *status);

/* The exit code to leave with for an ended job or command (what: "job", "command";
 * holder: the object with its exit_code), with a line when it has none. */
int cli_exit_code(const json_t *holder, const char *what, const char *id, const char *status);

#endif
