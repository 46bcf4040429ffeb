/* The runner's preflight (`sandbox-runner --check [--json]`). */
#ifndef SANDBOX_CHECK_H
#define SANDBOX_CHECK_H

#include "config.h"

/* Prints one line per item (or one JSON object); 0 when nothing failed, 1 otherwise. */
int runner_check(const struct cfg *cfg, int json);

#endif
