/* The per-job limits (see joblimits.h). */
#include "joblimits.h"

#include <string.h>

const struct limit_spec limit_specs[LIM_COUNT] = {
	[LIM_WALL_SECONDS] = { "wall_seconds", 1, 10, 300, 86400 },
	[LIM_CPU_SECONDS] = { "cpu_seconds", 1, 10, 300, 86400 },
	[LIM_MEMORY_MB] = { "memory_mb", 16, 256, 4096, 1048576 },
	[LIM_PIDS] = { "pids", 1, 64, 1024, 65536 },
	[LIM_OUTPUT_BYTES] = { "output_bytes", 0, 1048576, 16777216, 1073741824 },
	[LIM_DISK_MB] = { "disk_mb", 1, 64, 1024, 1048576 },
};

int limit_lookup(const char *name)
{
	for (int i = 0; i < LIM_COUNT; i++)
		if (strcmp(limit_specs[i].name, name) == 0)
			return i;
	return -1;
}
