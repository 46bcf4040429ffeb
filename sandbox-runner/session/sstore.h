/* The runner's side of sessions in the database: claims and recovery for the
 * dispatcher, and the supervisor's reads and writes (requests, commands, output,
 * the end). Every write that depends on ownership names runner_id. */
#ifndef SANDBOX_SSTORE_H
#define SANDBOX_SSTORE_H

#include <jansson.h>
#include <stddef.h>

#include "db.h"
#include "util.h"

#define SS_CANDIDATES 8

/* ---- dispatcher */

/* Ids of sessions waiting for a host, oldest first: count (<= max), or -1. */
int ss_candidates(struct db *db, char ids[][UUID_STR_LEN], int max);
/* Claims one: 1 ours, 0 someone else's, -1 DB error. */
int ss_claim(struct db *db, const char *id, const char *runner_id, const char *host,
	     long long lease_s);
/* A runner host is live while its dispatcher's runner_hosts row is this fresh (the
 * API's capacity count uses the same window). */
#define SS_HOST_LIVE_SECONDS 15
/* Starting/ready sessions whose lease expired (id, runner_id, runner_host, host_live:
 * 1 while that host's dispatcher is seen), at most 50, or NULL. The dispatcher marks
 * them lost (ss_mark_lost), its own host's once their slot is reclaimed (reclaim.h),
 * another host's only once that host is no longer live. */
struct db_res *ss_expired(struct db *db);
/* Sessions no host took within timeout_s -> failed: count, or -1. */
int ss_fail_unclaimed(struct db *db, long long timeout_s);
/* Marks one live session lost (its runner_id must still be runner_id). 1, 0, -1. */
int ss_mark_lost(struct db *db, const char *id, const char *runner_id, const char *error);
/* runner_hosts heartbeat. 0 or -1. */
int ss_host_beat(struct db *db, const char *host, long long slots, long long max_sessions);
/* Live sessions of host (id, runner_id columns), or NULL. */
struct db_res *ss_host_sessions(struct db *db, const char *host);

/* ---- supervisor */

struct ss_session {
	char id[UUID_STR_LEN], key_id[UUID_STR_LEN];
	long long memory_mb, pids, cpu_seconds, disk_mb, idle_seconds, max_seconds;
	int network;
	json_t *env;       /* object of strings */
	char profile[72];
	char status[16];
};

/* The session row, while it is ours: 0, 1 (not ours / not starting), -1. */
int ss_load(struct db *db, const char *id, const char *runner_id, struct ss_session *s);
void ss_session_free(struct ss_session *s);
/* Its session_files rows (path, content, executable), or NULL. */
struct db_res *ss_files(struct db *db, const char *id);
/* starting -> ready, erases session_files: 0, 1 (not ours), -1. */
int ss_set_ready(struct db *db, const char *id, const char *runner_id);

struct ss_beat {
	int ours, close_requested;
	long long idle_ms;       /* now - last_activity_at */
	long long expires_in_ms; /* expires_at - now */
};
/* Renews the lease and reads what the API may have changed: 0 or -1. */
int ss_heartbeat(struct db *db, const char *id, const char *runner_id, long long lease_s,
		 struct ss_beat *b);

/* The host's work for the session so far (totals, schema 010): 0 or -1. */
int ss_host_work(struct db *db, const char *id, const char *runner_id, long long bytes,
		 long long cpu_ms);

/* Pending requests, oldest first (id, kind, command_id, args_json, data), or NULL. */
struct db_res *ss_requests(struct db *db, const char *id, int max);
/* The answer to a request the supervisor claimed (sreq_claim): done with result
 * (NULL: none) and result_data, or failed with an answer code of common/sreq.c's
 * table (its HTTP status comes from there). The payload is erased (sreq.h). */
int ss_req_done(struct db *db, long long req, const json_t *result, const void *data,
		size_t len);
int ss_req_fail(struct db *db, long long req, const char *code, const char *msg);

struct ss_cmd {
	char id[UUID_STR_LEN];
	long long pid;
	char status[16];
	char *command;            /* NULL: argv */
	json_t *argv, *env;       /* argv NULL: command */
	char *cwd;
	unsigned char *stdin_buf;
	size_t stdin_len;
	int stdin_open;
	long long timeout_s, output_bytes;
};
/* The command's stdin is closed (a close request, or the command closed it): its
 * row's stdin_open says so. 0 or -1. */
int ss_cmd_stdin_closed(struct db *db, const char *session_id, const char *cid);
/* The command row of this session: 0, 1 (not there), -1. */
int ss_cmd_load(struct db *db, const char *session_id, const char *cid, struct ss_cmd *c);
void ss_cmd_free(struct ss_cmd *c);
/* queued -> running, started_at. */
int ss_cmd_started(struct db *db, const char *cid);

struct ss_end_cmd {
	const char *status;       /* terminal */
	int exit_code, signal;    /* signal 0: NULL */
	int out_trunc, err_trunc;
	json_t *diagnostics;      /* array of strings, borrowed */
};
/* A command's terminal row; env and stdin erased. */
int ss_cmd_finish(struct db *db, const char *cid, const struct ss_end_cmd *e);
/* One chunk of output at off (the stream's stored length before it), its count,
 * the session's and the key's stored bytes, in one transaction. 0 or -1. */
int ss_output(struct db *db, const char *session_id, const char *key_id, const char *cid,
	      int stream, long long off, const void *data, size_t len);

struct ss_end {
	const char *status;       /* closed expired failed */
	const char *end_reason;
	json_t *failure;          /* NULL: none (borrowed) */
	const char *cleanup_status;
};
/* The session's end: its row, its unfinished commands cancelled (137), its pending
 * requests failed (410), its env erased. One transaction: 0, 1 (not ours), -1. */
int ss_finish(struct db *db, const char *id, const char *runner_id, const struct ss_end *e);

#endif
