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
	char key_id[40];          /* whose stored bytes the job's output counts against */
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
	json_t *compile_argv;     /* a compiled runtime's compile step (schema 008), or NULL */
};

struct job_result {
	enum job_state state;     /* terminal */
	int exit_code;            /* -1: NULL */
	int signal;               /* 0: NULL */
	/* What of each stream is not stored yet: bytes [out_off, out_off + out_len) of
	 * stdout (the supervisor stored [0, out_off) while the job ran, store_append),
	 * the same for stderr. out_off + out_len is the stream's total. */
	const unsigned char *out, *err;
	size_t out_len, err_len;
	long long out_off, err_off;
	int live;                 /* store_append was tried for this job: read what it stored */
	int out_trunc, err_trunc;
	json_t *diagnostics;      /* array of strings (borrowed) */
	json_t *failure;          /* object or NULL (borrowed) */
	long long wall_ms, cpu_ms, mem_peak; /* -1: NULL */
	const struct artifact *artifacts;
	size_t nartifacts;
	json_t *compile;          /* result.compile (borrowed), NULL: no compile step */
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
/* Stores one chunk (at most JD_CHUNK_BYTES) of a running job's stdout (1) or stderr
 * (2) at offset off, in one transaction with the stream's stored length
 * (jobs.stdout_live_bytes/stderr_live_bytes, which must be off) and the job's and its
 * key's stored bytes. 0: stored, *stored = off + len. 1: the job is not ours any more
 * (nothing written). 2: the stored length is not off (*stored says what it is: a
 * chunk whose COMMIT answer was lost did commit; nothing written). -1: DB error (the
 * outcome of a failed COMMIT is unknown: the next call finds out). */
int store_append(struct db *db, const struct job *j, const char *runner_id, int stream,
		 long long off, const void *data, size_t len, long long *stored);
/* The server's max_allowed_packet for this connection, or -1. */
long long store_max_packet(struct db *db);
/* Terminal state + result + artifacts + event, in one transaction: 0, 1 (not ours
 * any more: nothing written), -1 (DB error: retry). Only the part of the output not
 * stored yet is written (r->out_off, r->live); the totals go to job_results. */
int store_finish(struct db *db, const char *id, const char *runner_id,
		 const struct job_result *r);
/* The digest of the profile the job runs under, while it is ours: 0, or -1. */
int store_set_profile(struct db *db, const char *id, const char *runner_id,
		      const char *digest);
/* Running jobs whose lease expired (id, runner_id, host: runner_id's part before
 * its first '/', host_live: 1 while that host's dispatcher is seen within
 * live_s), at most 50, or NULL. The dispatcher marks them lost, its own host's once
 * their slot is reclaimed (reclaim.h), another host's once it is no longer live. */
struct db_res *store_expired(struct db *db, long long live_s);
/* Marks one running job whose lease expired lost: 1, 0 (no longer so), -1. A lost
 * job keeps the output its supervisor stored while it ran (its stored bytes and
 * result say so). */
int store_mark_lost(struct db *db, const char *id, const char *runner_id);
/* State of a job, for --once waiting: 0 and state filled, -1. */
int store_state(struct db *db, const char *id, enum job_state *state);
/* Whether a connection opened a while ago (a spare's, a holder's) still has the
 * server's global max_allowed_packet (else the caller opens a new one before its
 * job). */
int store_db_fresh(struct db *db);

#endif
