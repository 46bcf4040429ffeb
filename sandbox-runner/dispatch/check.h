/* The runner's preflight (`sandbox-runner --check [--json]`). */
#ifndef SANDBOX_CHECK_H
#define SANDBOX_CHECK_H

#include "config.h"

enum check_out {
	CHECK_TEXT, /* one line per item on stdout, then a summary */
	CHECK_JSON, /* one JSON object on stdout */
	CHECK_LOG   /* a log line per warning or failure (the runner's start-up) */
};

/* 0 when nothing failed, 1 otherwise. */
int runner_check(const struct cfg *cfg, enum check_out out);

#endif
