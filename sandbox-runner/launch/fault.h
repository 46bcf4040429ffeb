/* Fault injection for the contract suite (tests/integration/contract.sh), where
 * every error 125 path must be reached end to end. Only the test build of the runner
 * (build/fault-runner, compiled with -DSANDBOX_FAULT_INJECTION) reads SANDBOX_FAULTS:
 * in the release build fault_at is the constant 0 and fault.c is not linked, so no
 * environment variable can make a production runner fail on purpose.
 *
 *   SANDBOX_FAULTS=POINT:ERRNO[:COUNT][,POINT:ERRNO[:COUNT]...]
 *
 * POINT    where the supervisor fails as if the system call had failed:
 *          workspace   creating the slot's workspace        (failure.stage create)
 *          files       writing the input files              (input_files.write)
 *          limits      setting up the cgroup limits         (initialize)
 *          start       starting bwrap, each attempt         (command.start)
 *          cleanup     killing/removing the process group   (cleanup)
 *          ws_cleanup  removing the workspace               (cleanup)
 *          requests    a session supervisor stops itself (SIGSTOP) after reading
 *                      pending request rows, before acting on them (ERRNO unused):
 *                      srunner.sh fails one meanwhile, as the API's timeout does
 * ERRNO    a name from the table in fault.c (EAGAIN, EBUSY, EINVAL, ...)
 * COUNT    how many times it fires in each supervisor (default: every time), so
 *          start:EAGAIN:2 fails the first two attempts and lets the third start. */
#ifndef SANDBOX_FAULT_H
#define SANDBOX_FAULT_H

#include <stddef.h>

struct fault {
	char point[16];
	int err;
	int count; /* -1: every time */
};

#define FAULT_MAX 8

/* Parses spec into f (at most max entries): the number of entries, or -1 with the
 * reason in err. Pure. */
int fault_parse(const char *spec, struct fault *f, size_t max, char *err, size_t errlen);
/* The errno to fail point with (0: none), counting the use down. Pure. */
int fault_take(struct fault *f, size_t n, const char *point);

#ifdef SANDBOX_FAULT_INJECTION
/* The errno to fail point with, from SANDBOX_FAULTS (read once per process). */
int fault_at(const char *point);
#else
static inline int fault_at(const char *point)
{
	(void)point;
	return 0;
}
#endif

#endif
