/* Network jobs: slirp4netns user-mode NAT for the sandbox's network namespace, run
 * as the slot's unprivileged uid in a root of its own, and the routes that keep the
 * job away from the host and private networks. */
#ifndef SANDBOX_NET_H
#define SANDBOX_NET_H

#include <stddef.h>
#include <sys/types.h>

#include "config.h"

#define IP_PATH "/usr/sbin/ip" /* iproute2: routes inside a network job's namespace */

/* Starts slirp4netns for the sandbox whose init is child (a host pid), as uid; it
 * writes to ready_fd once tap0 is configured. Its pid, or -1 with err when it could
 * not get as far as exec. */
pid_t net_slirp_start(const struct cfg *cfg, pid_t child, uid_t uid, int ready_fd, char *err,
		      size_t errlen);
/* Installs the unreachable routes in child's network namespace (root, iproute2). */
int net_restrict(const struct cfg *cfg, pid_t child, char *err, size_t errlen);

#endif
