/* Paths a job names (input files, cwd, artifacts directory): the one rule the API
 * enforces on submission and the runner re-checks before it touches the host. Pure. */
#ifndef SANDBOX_PATHRULES_H
#define SANDBOX_PATHRULES_H

#include <stddef.h>

#include "config.h"

/* A relative, normalized path: no leading '/', no empty, '.' or '..' component, no
 * control byte or backslash, at most max bytes. NULL if fine, else the reason. */
const char *pr_rel_path(const char *p, size_t max);
/* pr_rel_path with the configured limit (max_path_bytes), the same for every kind
 * of job path and on both sides. */
const char *pr_job_path(const struct cfg *cfg, const char *p);

#endif
