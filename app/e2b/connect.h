/* The Connect protocol's framing with the JSON codec (connectrpc.com/docs/protocol), as
 * envd's clients speak it (../shared/reference/e2b-wire-protocol.md, section 3), and
 * the process events the E2B SDK reads. Pure: unit-tested (tests/unit/test_connect.c).
 *
 * A server stream's request body is one envelope: a flags byte (0: a plain message;
 * 0x01 compressed, refused), a big-endian uint32 length, that many bytes of JSON. The
 * answer is 200 application/connect+json and a run of such envelopes, ending with one
 * whose flags are 0x02 (end of stream) holding {} or {"error":{"code","message"}}: a
 * stream's errors travel there, never as an HTTP status. */
#ifndef SANDBOX_CONNECT_H
#define SANDBOX_CONNECT_H

#include <jansson.h>
#include <stddef.h>

#include "strbuf.h"

#define CX_FLAG_COMPRESSED 0x01u
#define CX_FLAG_END 0x02u
#define CX_CTYPE_STREAM "application/connect+json"
#define CX_MSG_MAX (1u << 20) /* a request message: envd's requests are small */

/* The request body of a server stream: exactly one envelope, flags 0, its length the
 * rest of the body (at most CX_MSG_MAX), its message a JSON object (*out, a new
 * reference). 0, or -1 with a message for the client in *why. */
int cx_unframe_json(const void *body, size_t len, json_t **out, const char **why);
/* Appends one envelope with flags and msg (compact JSON; msg is released). 0 or -1. */
int cx_frame_json(struct strbuf *sb, unsigned flags, json_t *msg);
/* The end-of-stream envelope: {} (code NULL) or {"error":{"code","message"}}. */
int cx_frame_end(struct strbuf *sb, const char *code, const char *message);

/* The header values a stream's client sends: Connect-Timeout-Ms (at most 10 digits,
 * else -1: absent or malformed means none) and Keepalive-Ping-Interval (seconds,
 * 1..3600, else def). */
long long cx_timeout_ms(const char *v);
long long cx_keepalive_s(const char *v, long long def);

/* process.Process events, each {"event":{...}} (envd's ProcessEvent):
 * start {pid}; data {stdout|stderr: base64}; keepalive {}; end {exitCode (omitted when
 * 0), exited, status, error?}. */
json_t *cx_ev_start(long long pid);
json_t *cx_ev_data(int stderr_stream, const unsigned char *d, size_t n);
json_t *cx_ev_keepalive(void);
/* The end of a command as envd reports a Go ProcessState: exited normally -> exitCode,
 * exited true, "exit status N"; killed by signal S -> exitCode -1, exited false,
 * "signal: <name>"; a command of ours that ended otherwise (lost with its session,
 * timed out, never started) -> exitCode -1, exited false, status = our status, error
 * = why (service text). error is also set as envd sets it (cmd.Wait()'s error, the
 * status text) for every end but exit status 0. status is session_commands.status, code its exit_code (-1:
 * NULL), signo its signal (0: NULL), why its diagnostic or NULL. */
json_t *cx_ev_end(const char *status, long long code, int signo, const char *why);
/* Go's name of a signal ("killed", "terminated", "interrupt", ...), as ProcessState
 * prints it; "signal N" style for others. Written into buf. */
const char *cx_signal_text(int signo, char *buf, size_t n);
/* envd's Signal enum name ("SIGNAL_SIGKILL", "SIGNAL_SIGTERM", "SIGNAL_SIGINT",
 * "SIGNAL_SIGHUP", "SIGNAL_SIGQUIT", "SIGNAL_SIGUSR1", "SIGNAL_SIGUSR2", also the
 * numbers) to our kill body's name ("KILL", ...); NULL when unknown. */
const char *cx_signal_name(const json_t *v);

#endif
