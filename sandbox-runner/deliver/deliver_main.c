/* `sandbox-deliver --config FILE`: one webhook delivery pass (callback.c), exec'd by
 * the runner's dispatcher one at a time. A binary of its own so that libcurl and the
 * API's job rendering are loaded here only, never by the runner, whose binary is
 * exec'd again for every job's and every session's supervisor. */
#include <stdio.h>
#include <string.h>

#include "callback.h"
#include "config.h"
#include "log.h"

int main(int argc, char **argv)
{
	struct cfg cfg;
	char err[512];

	log_init("sandbox-deliver");
	if (argc != 3 || strcmp(argv[1], "--config") != 0) {
		fprintf(stderr, "usage: sandbox-deliver --config FILE\n");
		return 2;
	}
	if (cfg_load(&cfg, argv[2], err, sizeof err) < 0) {
		fprintf(stderr, "sandbox-deliver: %s\n", err);
		return 2;
	}
	return cb_pass(&cfg) < 0 ? 1 : 0;
}
