/* The runner's side of the database: claims, leases, results. */
#ifndef SANDBOX_STORE_H
#define SANDBOX_STORE_H

#include <jansson.h>
#include <stddef.h>

#include "db.h"
#include "jobstate.h"
#include "joblimits.h"
#include "util.h"
#include "workspace.h"

struct job_file_in {
	char *path;
	unsigned char *data;
	size_t len;
	int executable;
};

struct job {
	char id[UUID_STR_LEN];
	char *command;            /* NULL when argv */
	json_t *argv;             /* NULL when command */
	json_t *env;
	unsigned char *stdin_buf;
	size_t stdin_len;
	char *cwd;
	char *artifacts_dir;      /* NULL: none */
	int network;
	char *profile;            /* the sandbox profile the job named */
	long long limits[LIM_COUNT];
	struct job_file_in *files;
	size_t nfiles;
};

struct job_result {
	enum job_state state;     /* terminal */
	int exit_code;            /* -1: NULL */
	int signal;               /* 0: NULL */
	const unsigned char *out, *err;
	size_t out_len, err_len;
	int out_trunc, err_trunc;
	json_t *diagnostics;      /* array of strings (borrowed) */
	json_t *failure;          /* object or NULL (borrowed) */
	long long wall_ms, cpu_ms, mem_peak; /* -1: NULL */
	const struct artifact *artifacts;
	size_t nartifacts;
};

/* Claims the next queued job, fair across tenants, skipping keys at their running
 * cap (default_max_running for keys without one, 0 = none): 1 (id filled), 0 (none
 * claimable), -1 (DB error). */
int store_claim(struct db *db, const char *runner_id, long long lease_s, const char *digest,
		long long default_max_running, char id[UUID_STR_LEN]);
int store_load(struct db *db, const char *id, struct job *j);
void store_job_free(struct job *j);
/* Renews the lease and reads the cancel flag: 0, 1 (the job is no longer ours), -1. */
int store_heartbeat(struct db *db, const char *id, const char *runner_id, long long lease_s,
		    int *cancel);
/* Terminal state + result + artifacts + event, in one transaction: 0, 1 (not ours
 * any more: nothing written), -1 (DB error: retry). */
int store_finish(struct db *db, const char *id, const char *runner_id,
		 const struct job_result *r);
/* The digest of the profile the job runs under, while it is ours: 0, or -1. */
int store_set_profile(struct db *db, const char *id, const char *runner_id,
		      const char *digest);
/* Marks running jobs whose lease expired as lost: count, or -1. */
int store_recover_lost(struct db *db);
/* State of a job, for --once waiting: 0 and state filled, -1. */
int store_state(struct db *db, const char *id, enum job_state *state);

#endif
