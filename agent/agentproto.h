/* The wire between a session's supervisor (host, trusted) and its agent (the first
 * process inside the session's sandbox, untrusted like everything in there).
 *
 * One SOCK_STREAM socketpair, inherited by bwrap as the agent's stdin and stdout
 * (a socket cannot be reopened through /proc/PID/fd the way a pipe can, and the
 * agent sets itself non-dumpable, so a command in the sandbox cannot forge frames
 * short of owning the agent, which buys it nothing the sandbox did not give it).
 *
 * Frame: a fixed 12-byte header, then `len` payload bytes.
 *   u32 len      payload length, at most AP_MAX_PAYLOAD
 *   u8  type     enum ap_type
 *   u8  stream   AP_OUTPUT: 1 stdout, 2 stderr; else 0
 *   u16 zero     must be 0
 *   u32 cid      the command (its session pid); 0 for HELLO
 * integers little-endian. The host treats a frame that breaks any rule (length,
 * type, stream, cid unknown or not running, payload shape) as a protocol violation:
 * the session ends `failed` ("sandbox agent protocol violation"), never a crash,
 * never a read past a buffer.
 *
 * Host -> agent
 *   SPAWN  payload: u32 flags (AP_SPAWN_STDIN: the command's stdin is a pipe fed
 *          by STDIN frames until STDIN_CLOSE; without it stdin is /dev/null),
 *          u32 argc, u32 envc,
 *          then argc + envc + 1 NUL-terminated strings: cwd (absolute, inside the
 *          sandbox), argv[0..argc), env "NAME=value" [0..envc) that are added to
 *          (override) the agent's own environment. argc >= 1.
 *   STDIN  payload: bytes for the command's stdin (0 < len)
 *   STDIN_CLOSE  no payload
 *   SIGNAL payload: u32 signal number; the agent signals the command's process
 *          group (every command is its own session: setsid)
 * Agent -> host
 *   HELLO  payload: u32 AP_VERSION. First frame; the session is `ready` when it
 *          arrives.
 *   STARTED payload: u32 the command's pid inside the sandbox (informational)
 *   SPAWN_FAILED payload: u32 errno, then up to 200 bytes of text (the step)
 *   OUTPUT payload: bytes the command wrote to stream (1..AP_MAX_PAYLOAD)
 *   EXIT   payload: u32 the raw wait status of the command's first process. Sent
 *          after the first process was reaped and what its pipes held then was
 *          sent; the agent then SIGKILLs the command's process group (a command's
 *          left-over processes end with it, as a job's do) and closes its pipes.
 *          No frame for cid follows EXIT.
 *   STDIN_ACK payload: u32 n: n more bytes of the command's stdin (in the order the
 *          host sent them) were written to its pipe. The host's count of bytes in
 *          flight (sent, not acknowledged) drops by n; n past that count is a
 *          protocol violation. Sent at least every 64 KiB written and whenever the
 *          queue empties, so a command that reads its stdin frees the window.
 *   STDIN_GONE no payload: the command's stdin is closed for good (the command
 *          closed its end, or the agent could not queue the bytes): what was in
 *          flight was discarded. Once per command, only after its stdin was open
 *          (SPAWN with AP_SPAWN_STDIN); the host's stdin_open becomes false. Not
 *          sent for a stdin the host closed itself (STDIN_CLOSE) once it drained.
 */
#ifndef SANDBOX_AGENTPROTO_H
#define SANDBOX_AGENTPROTO_H

#include <stddef.h>
#include <stdint.h>

#define AP_VERSION 1
#define AP_HDR 12
#define AP_MAX_PAYLOAD 65536
#define AP_MAX_ARGS 4096     /* argc + envc */
#define AP_SPAWN_STDIN 1u
#define AP_MAX_FAIL_TEXT 200 /* SPAWN_FAILED text after its errno */
/* The most stdin bytes the host may have sent one command that the agent has not yet
 * written to the command's pipe (acknowledged with STDIN_ACK): the host refuses a
 * stdin write past it (429 stdin_backlog_full), so the agent's queue never holds
 * more and nothing acknowledged to a client is ever dropped for room. */
#define AP_STDIN_WINDOW (4u << 20)

enum ap_type {
	AP_HELLO = 1,
	AP_SPAWN = 2,
	AP_STDIN = 3,
	AP_STDIN_CLOSE = 4,
	AP_SIGNAL = 5,
	AP_STARTED = 6,
	AP_SPAWN_FAILED = 7,
	AP_OUTPUT = 8,
	AP_EXIT = 9,
	AP_STDIN_ACK = 10,
	AP_STDIN_GONE = 11,
};

struct ap_frame {
	uint32_t len;
	uint8_t type, stream;
	uint32_t cid;
	const unsigned char *payload; /* len bytes, inside the caller's buffer */
};

/* Writes the header of a frame into hdr (AP_HDR bytes). */
void ap_put_header(unsigned char *hdr, uint32_t len, uint8_t type, uint8_t stream,
		   uint32_t cid);

/* Looks for one whole frame at the start of buf[0, n): 1 and *f filled (the frame
 * is AP_HDR + f->len bytes), 0 when more bytes are needed, -1 when the header is
 * invalid (len over AP_MAX_PAYLOAD, reserved bits set, unknown type, stream not
 * 0/1/2 or not matching the type). Pure. */
int ap_parse(const unsigned char *buf, size_t n, struct ap_frame *f);

/* The payload shape of a frame ap_parse returned: 1 when its length fits its type
 * (HELLO, STARTED, SIGNAL, EXIT, STDIN_ACK: 4; STDIN, OUTPUT: > 0; STDIN_CLOSE,
 * STDIN_GONE: 0; SPAWN: >= 12;
 * SPAWN_FAILED: 4 + at most AP_MAX_FAIL_TEXT) and cid is 0 exactly for HELLO, else 0.
 * Direction (which side may send a type) is the caller's check. Pure. */
int ap_frame_valid(const struct ap_frame *f);

/* A SPAWN payload into out (at most AP_MAX_PAYLOAD bytes): its length, or -1 when it
 * does not fit. env entries are "NAME=value". Also -1 for what ap_spawn_decode would
 * refuse (argc 0, counts over AP_MAX_ARGS, unknown flags, cwd not absolute, an env
 * entry without a name and '='). Pure. */
long ap_spawn_encode(unsigned char *out, uint32_t flags, const char *cwd, char *const *argv,
		     size_t argc, char *const *env, size_t envc);

struct ap_spawn {
	uint32_t flags;
	const char *cwd;
	size_t argc, envc;
	const char **argv, **env; /* malloc'd arrays (NULL-terminated) into the payload */
};
/* Decodes a SPAWN payload: 0, or -1 when malformed (counts over AP_MAX_ARGS or not
 * matching the strings present, argc 0, a string not NUL-terminated, trailing
 * bytes, an env entry without '=' or with an empty name, flags other than
 * AP_SPAWN_STDIN, cwd not starting with '/'). On -1 nothing is left allocated.
 * ap_spawn_free releases the arrays. */
int ap_spawn_decode(const unsigned char *p, size_t len, struct ap_spawn *s);
void ap_spawn_free(struct ap_spawn *s);

/* u32 payloads (HELLO, STARTED, SIGNAL, EXIT, SPAWN_FAILED's first word). */
void ap_put_u32(unsigned char *p, uint32_t v);
uint32_t ap_get_u32(const unsigned char *p);

#endif
