/* The session supervisor's own state and steps, shared by its files: session.c (the
 * loop, request rows, limits and lease, the entry point), sagent.c (the agent
 * protocol: frames both ways, commands and their output) and ssandbox.c (the
 * sandbox's start and the session's end). Not for other modules: they call
 * session.h. */
#ifndef SANDBOX_SESINT_H
#define SANDBOX_SESINT_H

#include <jansson.h>
#include <stdint.h>

#include "agentproto.h"
#include "launch.h"
#include "profile.h"
#include "sstore.h"
#include "strbuf.h"
#include "util.h"

#define FLUSH_MS 50          /* a command's pending output older than this is stored */
#define STDERR_KEEP 2048     /* the agent's stderr we keep for the log */

enum why { WHY_NONE, WHY_KILL, WHY_TIMEOUT, WHY_OUTPUT };

struct stream {
	unsigned char *buf;
	size_t len;
	long long stored; /* bytes in job_output */
	int trunc;
	double last;      /* when it was last stored (0: never) */
};

/* A command the agent was asked to start. */
struct scmd {
	struct scmd *next;
	char id[UUID_STR_LEN];
	uint32_t cid;
	int started, stdin_open, want_stdin;
	unsigned char *stdin0; /* initial stdin, sent from STARTED on, paced by the window */
	size_t stdin0_len, stdin0_off;
	int stdin0_pending;    /* stdin0 (then STDIN_CLOSE if not stdin_open) not all sent */
	size_t stdin_inflight; /* sent, not yet acknowledged (STDIN_ACK): <= AP_STDIN_WINDOW */
	int stdin_gone;        /* STDIN_GONE came */
	long long stdin_lost;  /* bytes the agent discarded (STDIN_GONE): a diagnostic */
	enum why why;
	int sig;               /* the signal a kill request sent */
	double deadline;       /* 0: none */
	long long cap, timeout_s;
	struct stream io[2];   /* stdout, stderr */
};

struct ses {
	const struct cfg *cfg;
	struct db *db;
	const char *id, *runner_id;
	struct launch l;       /* the slot and its sandbox (launch.h); l.blockfd: network,
				* bwrap's --block-fd, written once tap0 is up */
	struct ss_session row;
	struct prof_named *prof;
	int ag, errfd, statusfd, pidfd;
	unsigned char *in;     /* agent bytes not yet parsed */
	size_t inlen;
	struct strbuf outq;    /* frames for the agent */
	size_t outoff;
	char errtail[STDERR_KEEP];
	size_t errlen;
	struct scmd *cmds;
	int ready, ours;
	int e2b;               /* an E2B sandbox: the workspace is /home/user (PROF_E2B_HOME) */
	pid_t ports;           /* the port helper (sports.h), 0: none */
	char ports_sock[CFG_PATH_MAX + 48];
	double t0, last_busy, last_cmd_end, next_beat, next_req, next_cg, beat_at;
	struct ss_beat beat;
	/* The host's own work for the session's file requests (issue 25): bytes read,
	 * hashed or written and this process's CPU time; charged to the session's
	 * cpu_seconds and stored on its row (host_read_bytes, host_cpu_ms). */
	long long host_bytes, host_cpu_us, saved_bytes, saved_cpu_us;
	/* the end (its failure facts are l's) */
	const char *end_status;        /* NULL: still running */
	char end_reason[300];
};

/* session.c */
int ses_db_ready(struct ses *s);
/* A DB error: a connection that is gone is dropped and reopened at the next use. */
void ses_db_error_seen(struct ses *s, const char *step);
/* The first reason to end wins; the rest of the loop winds down. */
void ses_end(struct ses *s, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The service failed at stage (launch_fail); the session ends failed. -1. */
int ses_start_fail(struct ses *s, enum job_stage stage, const char *what, const char *error);
void ses_log_attempt(const struct ses *s, const char *step, int attempt, int max,
		     const char *type, int retry);
/* The session's cgroup: a limit hit ends the whole session (failed, named). */
void ses_check_limits(struct ses *s);
/* The host work done since the last save, onto the session's row. */
void ses_save_host_work(struct ses *s);

/* sagent.c: frames to the agent (queued in outq, sent as the socket takes them) */
void ses_send_frame(struct ses *s, uint8_t type, uint32_t cid, const void *p, size_t len);
void ses_send_u32(struct ses *s, uint8_t type, uint32_t cid, uint32_t v);
void ses_send_stdin(struct ses *s, struct scmd *c, const unsigned char *d, size_t n);
void ses_stdin_closed(struct ses *s, struct scmd *c);
size_t ses_outq_pending(const struct ses *s);
void ses_flush_outq(struct ses *s);
/* The session's commands, by the agent's id or the row's. */
struct scmd *ses_find_cmd(struct ses *s, uint32_t cid);
struct scmd *ses_find_cmd_id(struct ses *s, const char *id);
void ses_unlink_cmd(struct ses *s, struct scmd *c);
/* Stores the commands' pending output (force: all of it, now). */
void ses_flush_all(struct ses *s, int force);
/* A command the agent could not be asked to start ends with why. */
void ses_command_error(struct ses *s, const char *cid, const char *why);
/* What the agent sent: every whole frame handled (a broken one ends the session). */
void ses_read_agent(struct ses *s);
/* The agent's stderr: kept (bounded) for the log. */
void ses_read_stderr(struct ses *s);

/* ssextra.c: sessions.e2b (0 or -1); idle_seconds now (0 or -1, *idle kept when the
 * row is gone); the lifetime expires_at - created_at in whole seconds as the API last
 * set it (-1 on error). */
int ss_load_e2b(struct db *db, const char *id, int *e2b);
int ss_idle_seconds(struct db *db, const char *id, long long *idle);
long long ss_lifetime(struct db *db, const char *id);

/* ssandbox.c: the start, each 0 or -1 (the session ends failed, recorded) */
int ses_net_available(struct ses *s);
int ses_prepare_workspace(struct ses *s);
int ses_prepare_limits(struct ses *s);
int ses_start_sandbox(struct ses *s);
/* The port helper once the sandbox runs (sports.h); stopped by ses_end_session. */
void ses_ports_start(struct ses *s);
/* Output kept, every process killed, the slot cleaned, the end recorded and logged. */
void ses_end_session(struct ses *s);

#endif
