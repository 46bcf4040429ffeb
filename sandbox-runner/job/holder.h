/* A prewarm holder (holder.c): the process that holds one free job slot with a
 * running sandbox on the exec stub, until a job comes (it becomes its supervisor)
 * or it is asked to stand down. The dispatcher's side, the pool, is warm.h. */
#ifndef SANDBOX_HOLDER_H
#define SANDBOX_HOLDER_H

#include "config.h"

#define HOLDER_FD 3 /* its end of the SOCK_SEQPACKET socketpair with the dispatcher */
#define LOCK_FD 4   /* the slot's lock */

/* In the forked holder, its descriptors in place (every other one closed): never
 * returns. conf: the config file's path (for its command line). */
void holder_main(const struct cfg *cfg, const char *conf, int slot)
	__attribute__((noreturn));

#endif
