/* The per-job limits: names, hard floors, defaults and operator maxima. */
#ifndef SANDBOX_JOBLIMITS_H
#define SANDBOX_JOBLIMITS_H

enum limit_id {
	LIM_WALL_SECONDS,
	LIM_CPU_SECONDS,
	LIM_MEMORY_MB,
	LIM_PIDS,
	LIM_OUTPUT_BYTES,
	LIM_DISK_MB,
	LIM_COUNT
};

struct limit_spec {
	const char *name;
	long long min;      /* below this a job cannot run meaningfully */
	long long def;      /* compiled-in default, config `<name>_default` overrides */
	long long max;      /* compiled-in operator maximum, config `<name>_max` overrides */
	long long ceiling;  /* the most an operator may configure */
};

extern const struct limit_spec limit_specs[LIM_COUNT];

/* Index of a limit name, or -1. */
int limit_lookup(const char *name);

#endif
