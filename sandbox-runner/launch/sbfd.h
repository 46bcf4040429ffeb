/* The descriptor numbers a sandbox's bwrap finds its inputs at (sandbox.c places
 * them in the child; the profile's arguments name them): a header of their own, so
 * that the profile need not include the spawner. */
#ifndef SANDBOX_SBFD_H
#define SANDBOX_SBFD_H

/* Where the child finds its fds when bwrap starts (the args memfd names 4 and 5). */
#define SB_FD_ARGS 3
#define SB_FD_SECCOMP 4
#define SB_FD_STATUS 5
#define SB_FD_BLOCK 7 /* network jobs: bwrap waits on it before exec */
#define SB_FD_AGENT 8 /* sessions: the agent binary (prof_session_args); a prewarmed
		       * sandbox: the exec stub, run as /proc/self/fd/8 (holder.c) */
#define SB_FD_CTL 9   /* a prewarmed sandbox: the stub's end of its spec socket */
#define SB_FD_DATA 10 /* the profile's data masks, one memfd each (PROF_MAX_DATA_MASKS):
		       * bwrap copies each into a file of its own and closes it */

#endif
