/* The service configuration file: `key = value` lines, `#` comments. */
#ifndef SANDBOX_CONFIG_H
#define SANDBOX_CONFIG_H

#include <stddef.h>

#include "joblimits.h"

#define CFG_PATH_MAX 512
/* Session N of a runner host uses slot CFG_SESSION_SLOT_BASE + N: uid
 * runner_uid_base + that, workspace work/slot-that, cgroup slot-that, lock
 * slots/that.lock. Job slots stay below it (runner_slots <= 256). */
#define CFG_SESSION_SLOT_BASE 1000

/* db_hosts: the database nodes db_open tries in turn (issue 22) */
#define CFG_DB_HOSTS_MAX 8
struct cfg_db_host {
	char entry[CFG_PATH_MAX + 8]; /* as written: for logs and errors (no secrets) */
	char host[256];               /* "" for a unix socket */
	char socket[108];             /* "" for TCP */
	long long port;               /* 0: db_port */
};

struct cfg {
	char db_socket[CFG_PATH_MAX];
	char db_host[256];
	long long db_port;
	/* "host:port, host, unix:/path" in order; empty = db_socket or db_host/db_port */
	char db_hosts[1024];
	struct cfg_db_host db_host_list[CFG_DB_HOSTS_MAX]; /* db_hosts parsed */
	int db_host_count;
	char db_name[64];
	char db_user[64];
	char db_password_file[CFG_PATH_MAX];
	long long db_connect_timeout;
	long long db_sync_wait;        /* Galera: wsrep_sync_wait for each session, 0 = not set */
	char fcgi_socket[CFG_PATH_MAX];
	long long api_workers;
	char schema_dir[CFG_PATH_MAX];
	long long max_body_bytes;
	long long max_files;
	long long max_files_bytes;
	long long max_path_bytes;
	long long max_metadata_bytes;
	long long max_env;
	long long max_batch_jobs;        /* items of one POST /v1/jobs/batch */
	long long default_max_queued;
	long long default_max_stored_mb; /* per key: output + artifacts + inputs */
	long long default_max_running;   /* per key running jobs, 0 = no cap */
	long long retention_days;        /* sandboxctl purge without --older-than */
	long long inline_output_bytes;   /* stdout/stderr inline in GET /v1/jobs/{id} */
	long long list_preview_bytes;    /* stdout/stderr inline in list items */
	char fcgi_socket_group[64];      /* group of the FastCGI socket (mode 0660) */
	long long api_read_timeout_seconds; /* a request that sends nothing is dropped */
	long long api_wait_slots_per_key;   /* long-poll slots one key may hold, 0 = half */
	long long api_wait_capacity;        /* concurrent long-polls per API instance */
	long long api_wait_tick_ms;         /* how often the waiter reads waited-on rows */
	/* host-local result wake-up (waiter.h): a supervisor's datagram after it commits
	 * a result; default api-wake.sock beside fcgi_socket, "" = off (the tick only) */
	char api_wake_socket[CFG_PATH_MAX];
	char metrics_allow[512];            /* GET /metrics: REMOTE_ADDRs / IPv4 CIDRs */
	/* webhooks (issue 12): destinations allowed even if not public (host names, CIDRs) */
	char callback_allow[1024];
	long long callback_allow_http;      /* 1: http:// for allowlisted hosts */
	long long callback_max_attempts;    /* then the delivery is failed */
	long long callback_backoff_ms;      /* first retry wait, doubled, cap 10 min */
	char callback_cacert[CFG_PATH_MAX]; /* CA bundle for receivers, "" = the system's */
	/* runner */
	long long runner_slots;
	long long runner_uid_base;
	char runner_state_dir[CFG_PATH_MAX];
	long long runner_lease_seconds;
	long long runner_poll_ms;
	/* host-local claim wake-up (wake.h): the API's datagram after a commit, "" = off */
	char runner_wake_socket[CFG_PATH_MAX];
	long long runner_spare_supervisors; /* pre-forked supervisors waiting (spare.h), 0 = off */
	long long runner_warm_sandboxes; /* prewarmed sandboxes in free job slots (warm.h), 0 = off */
	long long runner_runtime_probe_seconds; /* wall and CPU of a runtime's version command (rtprobe.h) */
	char runner_limits_mode[16];   /* "cgroup" or "rlimit-only" */
	char runner_cgroup_name[64];
	char runner_host[64];          /* this runner host's name in runner ids, "" = gethostname */
	long long runner_tmp_mb;
	long long runner_max_artifact_files;
	long long runner_max_artifact_bytes;
	long long runner_max_artifacts_bytes;
	long long runner_start_attempts;     /* sandbox start attempts (transient errors) */
	long long runner_start_backoff_ms;   /* first wait between them, doubled, cap 1 s */
	char runner_env_passthrough[1024];   /* host variables jobs receive: "LANG,TZ" */
	long long runner_env_passthrough_override; /* 1: a job's env may override them */
	char runner_command_policy[CFG_PATH_MAX]; /* root-owned policy file, "" = none */
	char runner_profiles_dir[CFG_PATH_MAX];   /* named profiles, "" = only "default" */
	char runner_runtimes_file[CFG_PATH_MAX];  /* root-owned runtimes file (runtimes.h) */
	/* sessions (issue 9) */
	long long runner_max_sessions;       /* sessions this runner host keeps at once */
	long long default_max_sessions;      /* live sessions per key unless the key says */
	long long session_idle_seconds_default, session_idle_seconds_max;
	long long session_max_seconds_default, session_max_seconds_max;
	long long session_cpu_seconds_default, session_cpu_seconds_max; /* whole session */
	long long session_start_timeout_seconds; /* not ready by then: failed */
	long long session_request_timeout_ms;    /* API waits this long for a file answer */
	long long session_file_max_bytes;        /* one file through the file API */
	long long session_list_max_files;        /* entries in one file listing */
	/* what one file request may make the host read, hash or write (logical bytes: a
	 * sparse file costs its size) and how long it may take (capped at a tenth of
	 * runner_lease_seconds): the supervisor serves nothing else meanwhile */
	long long session_host_bytes, session_host_ms;
	/* sandbox ports (sandbox-runner/session/sports.h): the directory of the sessions'
	 * port sockets (the API and nginx read it, the runner makes them; "" turns ports
	 * off), connections one session's ports hold at once, and their idle limit */
	char session_ports_dir[CFG_PATH_MAX];
	long long session_port_connections, session_port_idle_seconds;
	char runner_agent_path[CFG_PATH_MAX];    /* the static sandbox-agent binary */
	char runner_deliver_path[CFG_PATH_MAX];  /* the webhook delivery pass binary */
	char bwrap_path[CFG_PATH_MAX];
	char slirp4netns_path[CFG_PATH_MAX];
	long long limit_default[LIM_COUNT];
	long long limit_max[LIM_COUNT];
};

void cfg_defaults(struct cfg *c);
/* Parses one `key = value` pair into c; -1 with a message in err. */
int cfg_set(struct cfg *c, const char *key, const char *value, char *err, size_t errlen);
/* Defaults, then the file; -1 with "path:line: reason" in err. Unknown keys are
 * errors: a typo must never silently fall back to a default. */
int cfg_load(struct cfg *c, const char *path, char *err, size_t errlen);
/* Parses a db_hosts value (comma-separated `host:port`, `host` or `unix:/path`, at
 * most CFG_DB_HOSTS_MAX) into out; *n = 0 for an empty value. -1 with a message
 * naming the key and the entry in err. */
int cfg_db_hosts_parse(const char *value, struct cfg_db_host *out, int *n, char *err,
		       size_t errlen);
/* Reads the DB password file into buf (first line). -1 with err. */
int cfg_db_password(const struct cfg *c, char *buf, size_t n, char *err, size_t errlen);

#endif
