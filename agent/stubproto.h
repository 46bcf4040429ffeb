/* The exec stub of a prewarmed sandbox (warm.h, stub.c): what the holder sends it
 * once, and the only thing it can send back.
 *
 * Spec (host -> stub, one stream, then the host shuts its side down):
 *   struct stub_hdr, nrl x struct stub_rl, then strbytes bytes of NUL-terminated
 *   strings: the cwd (absolute, in the sandbox), argc argv strings, envc
 *   "NAME=value" strings, in that order.
 * Answer (stub -> host): nothing when the command was exec'd (the stub's end is
 * close-on-exec, so the host reads EOF), else one struct stub_fail: a step code and
 * an errno, never text. The host turns it into the words a cold launch gives. */
#ifndef SANDBOX_STUBPROTO_H
#define SANDBOX_STUBPROTO_H

#include <stdint.h>

#define STUB_MAGIC "SBSTUB1"  /* 8 bytes with its NUL */
#define STUB_SPEC_MAX (4u << 20) /* bytes of one spec: execve's own limit is lower */
#define STUB_RL_MAX 16
#define STUB_ARG_MAX 65536    /* argv + env strings */
#define STUB_ARG0 "--exec-stub" /* sandbox-agent's argv[1] for this mode */
#define STUB_FD_EXE 8         /* the stub's own memfd (sandbox.h SB_FD_AGENT) */
#define STUB_FD_CTL 9         /* the spec socket (sandbox.h SB_FD_CTL) */

struct stub_hdr {
	char magic[8];
	uint32_t nrl, argc, envc, strbytes;
};

struct stub_rl {
	int32_t res;
	uint32_t pad;
	uint64_t soft, hard;
};

enum stub_step {
	STUB_STEP_SPEC = 1,   /* the spec did not parse (a host bug) */
	STUB_STEP_RLIMIT = 2, /* setrlimit */
	STUB_STEP_CHDIR = 3,  /* chdir to the cwd */
	STUB_STEP_EXEC = 4,   /* execvp of argv[0] */
};

struct stub_fail {
	int32_t step, err;
};

#endif
