/* The exec stub mode of sandbox-agent (stubproto.h). */
#ifndef SANDBOX_STUB_H
#define SANDBOX_STUB_H

/* Never returns: the command is exec'd, or the stub exits 0 (no spec) or 1. */
int stub_main(void) __attribute__((noreturn));

#endif
