/* The runner's re-check of what the API validated (it trusts no row blindly): the
 * job's paths under the same rule and limit (common/pathrules.h). Pure. */
#ifndef SANDBOX_POLICY_H
#define SANDBOX_POLICY_H

#include <stddef.h>

#include "config.h"
#include "store.h"

/* NULL if every path of j is fine, else the reason ("cwd is too long", ...) in why. */
const char *pol_paths(const struct cfg *cfg, const struct job *j, char *why, size_t whylen);

#endif
