/* The service configuration file (see config.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netcheck.h"
#include "util.h"

/* api_wake_socket when the file does not set it (no config line can hold it) */
#define API_WAKE_BESIDE "\001beside"

enum kind { K_STR, K_INT };

struct key {
	const char *name;
	enum kind kind;
	size_t off;
	size_t size;     /* K_STR: buffer size */
	long long min, max;
};

#define S(f) #f, K_STR, offsetof(struct cfg, f), sizeof(((struct cfg *)0)->f), 0, 0
#define I(f, lo, hi) #f, K_INT, offsetof(struct cfg, f), 0, lo, hi

static const struct key keys[] = {
	{ S(db_socket) },
	{ S(db_host) },
	{ I(db_port, 1, 65535) },
	{ S(db_hosts) },
	{ S(db_name) },
	{ S(db_user) },
	{ S(db_password_file) },
	{ I(db_connect_timeout, 1, 60) },
	{ I(db_sync_wait, 0, 15) },
	{ S(fcgi_socket) },
	{ I(api_workers, 1, 512) },
	{ S(schema_dir) },
	{ I(max_body_bytes, 1024, 1073741824) },
	{ I(max_files, 0, 10000) },
	{ I(max_files_bytes, 0, 1073741824) },
	{ I(max_path_bytes, 1, 1024) },
	{ I(max_metadata_bytes, 0, 65536) },
	{ I(max_env, 0, 4096) },
	{ I(max_batch_jobs, 1, 100) },
	{ I(default_max_queued, 1, 1000000) },
	{ I(default_max_stored_mb, 1, 100000000) },
	{ I(default_max_running, 0, 1000000) },
	{ I(retention_days, 1, 36500) },
	{ I(inline_output_bytes, 0, 16777216) },
	{ I(list_preview_bytes, 0, 65536) },
	{ S(fcgi_socket_group) },
	{ I(api_read_timeout_seconds, 1, 3600) },
	{ I(api_wait_slots_per_key, 0, 512) },
	{ I(api_wait_capacity, 0, 65536) },
	{ I(api_wait_tick_ms, 5, 60000) },
	{ S(api_wake_socket) },
	{ S(metrics_allow) },
	{ S(callback_allow) },
	{ I(callback_allow_http, 0, 1) },
	{ I(callback_max_attempts, 1, 20) },
	{ I(callback_backoff_ms, 1, 600000) },
	{ S(callback_cacert) },
	{ I(runner_slots, 0, 256) },
	{ I(runner_uid_base, 1000, 2000000000) },
	{ S(runner_state_dir) },
	{ I(runner_lease_seconds, 5, 3600) },
	{ I(runner_poll_ms, 5, 10000) },
	{ S(runner_wake_socket) },
	{ I(runner_spare_supervisors, 0, 64) },
	{ I(runner_warm_sandboxes, 0, 256) },
	{ I(runner_runtime_probe_seconds, 1, 60) },
	{ S(runner_limits_mode) },
	{ S(runner_cgroup_name) },
	{ S(runner_host) },
	{ I(runner_tmp_mb, 1, 65536) },
	{ I(runner_max_artifact_files, 0, 100000) },
	{ I(runner_max_artifact_bytes, 0, 1073741824) },
	{ I(runner_max_artifacts_bytes, 0, 1073741824) },
	{ I(runner_start_attempts, 1, 20) },
	{ I(runner_start_backoff_ms, 1, 1000) },
	{ S(runner_env_passthrough) },
	{ I(runner_env_passthrough_override, 0, 1) },
	{ S(runner_command_policy) },
	{ S(runner_profiles_dir) },
	{ S(runner_runtimes_file) },
	{ I(runner_max_sessions, 0, 10000) },
	{ I(default_max_sessions, 0, 100000) },
	{ I(session_idle_seconds_default, 1, 31536000) },
	{ I(session_idle_seconds_max, 1, 31536000) },
	{ I(session_max_seconds_default, 1, 31536000) },
	{ I(session_max_seconds_max, 1, 31536000) },
	{ I(session_cpu_seconds_default, 1, 31536000) },
	{ I(session_cpu_seconds_max, 1, 31536000) },
	{ I(session_start_timeout_seconds, 1, 3600) },
	{ I(session_request_timeout_ms, 100, 30000) }, /* the waiter's longest wait */
	{ I(session_file_max_bytes, 0, 1073741824) },
	{ I(session_list_max_files, 1, 1000000) },
	{ I(session_host_bytes, 1048576, 68719476736LL) }, /* one file request's host bytes */
	{ I(session_host_ms, 10, 60000) },                  /* ... and wall time */
	{ S(session_ports_dir) },                           /* sandbox ports' sockets */
	{ I(session_port_connections, 1, 4096) },
	{ I(session_port_idle_seconds, 1, 86400) },
	{ S(runner_agent_path) },
	{ S(runner_deliver_path) },
	{ S(bwrap_path) },
	{ S(slirp4netns_path) },
};

void cfg_defaults(struct cfg *c)
{
	memset(c, 0, sizeof *c);
	snprintf(c->db_host, sizeof c->db_host, "127.0.0.1");
	c->db_port = 3306;
	snprintf(c->db_name, sizeof c->db_name, "sandbox");
	snprintf(c->db_user, sizeof c->db_user, "sandbox");
	c->db_connect_timeout = 2;
	snprintf(c->fcgi_socket, sizeof c->fcgi_socket, "/run/sandbox/api.sock");
	c->api_workers = 8;
	snprintf(c->schema_dir, sizeof c->schema_dir, "/usr/share/sandbox/schema");
	c->max_body_bytes = 10485760;
	c->max_files = 100;
	c->max_files_bytes = 8388608;
	c->max_path_bytes = 255;
	c->max_metadata_bytes = 4096;
	c->max_env = 64;
	c->max_batch_jobs = 20;
	c->callback_max_attempts = 8;
	c->callback_backoff_ms = 10000;
	c->default_max_queued = 100;
	c->default_max_stored_mb = 1024;
	c->default_max_running = 0;
	c->retention_days = 30;
	c->inline_output_bytes = 1048576;
	c->list_preview_bytes = 1024;
	c->api_read_timeout_seconds = 10;
	c->api_wait_slots_per_key = 0;
	c->api_wait_capacity = 1024;
	c->api_wait_tick_ms = 10;
	/* not set: beside fcgi_socket (resolved by cfg_check) */
	snprintf(c->api_wake_socket, sizeof c->api_wake_socket, "%s", API_WAKE_BESIDE);
	snprintf(c->metrics_allow, sizeof c->metrics_allow, "127.0.0.1,::1");
	c->runner_slots = 0; /* resolved by cfg_check: two per online CPU */
	c->runner_uid_base = 200000;
	snprintf(c->runner_state_dir, sizeof c->runner_state_dir, "/var/lib/sandbox-runner");
	c->runner_lease_seconds = 30;
	c->runner_poll_ms = 10;
	snprintf(c->runner_wake_socket, sizeof c->runner_wake_socket,
		 "/run/sandbox/runner-wake.sock");
	c->runner_spare_supervisors = 2;
	c->runner_warm_sandboxes = 0;
	c->runner_runtime_probe_seconds = 2;
	snprintf(c->runner_limits_mode, sizeof c->runner_limits_mode, "cgroup");
	snprintf(c->runner_runtimes_file, sizeof c->runner_runtimes_file,
		 "/etc/sandbox/runtimes.conf");
	snprintf(c->runner_cgroup_name, sizeof c->runner_cgroup_name, "sandbox");
	c->runner_tmp_mb = 64;
	c->runner_max_artifact_files = 100;
	c->runner_max_artifact_bytes = 16777216;
	c->runner_max_artifacts_bytes = 33554432;
	c->runner_start_attempts = 6;   /* the reference SDK's default */
	c->runner_start_backoff_ms = 100;
	c->runner_max_sessions = 32;
	c->default_max_sessions = 8;
	c->session_idle_seconds_default = 600;
	c->session_idle_seconds_max = 3600;
	c->session_max_seconds_default = 3600;
	c->session_max_seconds_max = 86400;
	c->session_cpu_seconds_default = 600;
	c->session_cpu_seconds_max = 86400;
	c->session_start_timeout_seconds = 30;
	c->session_request_timeout_ms = 10000;
	c->session_file_max_bytes = 8388608;
	c->session_list_max_files = 10000;
	c->session_host_bytes = 268435456;
	c->session_host_ms = 2000;
	snprintf(c->session_ports_dir, sizeof c->session_ports_dir, "/run/sandbox-ports");
	c->session_port_connections = 32;
	c->session_port_idle_seconds = 3600;
	snprintf(c->runner_agent_path, sizeof c->runner_agent_path,
		 "/usr/lib/sandbox/sandbox-agent");
	snprintf(c->runner_deliver_path, sizeof c->runner_deliver_path,
		 "/usr/lib/sandbox/sandbox-deliver");
	snprintf(c->bwrap_path, sizeof c->bwrap_path, "/usr/bin/bwrap");
	snprintf(c->slirp4netns_path, sizeof c->slirp4netns_path, "/usr/bin/slirp4netns");
	for (int i = 0; i < LIM_COUNT; i++) {
		c->limit_default[i] = limit_specs[i].def;
		c->limit_max[i] = limit_specs[i].max;
	}
}

/* `<limit>_default` / `<limit>_max` keys. */
static int set_limit(struct cfg *c, const char *key, const char *value, char *err,
		     size_t errlen)
{
	char name[64];
	const char *us = strrchr(key, '_');
	long long v;
	int id;

	if (us == NULL || (size_t)(us - key) >= sizeof name)
		return 1;
	memcpy(name, key, (size_t)(us - key));
	name[us - key] = '\0';
	id = limit_lookup(name);
	if (id < 0 || (strcmp(us, "_default") != 0 && strcmp(us, "_max") != 0))
		return 1;
	if (util_parse_ll(value, limit_specs[id].min, limit_specs[id].ceiling, &v) < 0) {
		snprintf(err, errlen, "%s: expected an integer from %lld to %lld", key,
			 limit_specs[id].min, limit_specs[id].ceiling);
		return -1;
	}
	if (strcmp(us, "_default") == 0)
		c->limit_default[id] = v;
	else
		c->limit_max[id] = v;
	return 0;
}

int cfg_set(struct cfg *c, const char *key, const char *value, char *err, size_t errlen)
{
	int r;

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const struct key *k = &keys[i];
		char *field = (char *)c + k->off;

		if (strcmp(k->name, key) != 0)
			continue;
		if (k->kind == K_STR) {
			if ((size_t)snprintf(field, k->size, "%s", value) >= k->size) {
				snprintf(err, errlen, "%s: value too long", key);
				return -1;
			}
			if (k->off == offsetof(struct cfg, db_hosts))
				return cfg_db_hosts_parse(value, c->db_host_list,
							  &c->db_host_count, err, errlen);
			return 0;
		}
		if (util_parse_ll(value, k->min, k->max, (long long *)(void *)field) < 0) {
			snprintf(err, errlen, "%s: expected an integer from %lld to %lld", key,
				 k->min, k->max);
			return -1;
		}
		return 0;
	}
	r = set_limit(c, key, value, err, errlen);
	if (r <= 0)
		return r;
	snprintf(err, errlen, "unknown key '%s'", key);
	return -1;
}

/* One db_hosts entry, spaces trimmed, into h. */
static int db_host_parse(const char *e, size_t len, struct cfg_db_host *h, char *err,
			 size_t errlen)
{
	const char *colon;

	memset(h, 0, sizeof *h);
	if (len >= sizeof h->entry) {
		snprintf(err, errlen, "db_hosts: entry '%.40s...' too long", e);
		return -1;
	}
	memcpy(h->entry, e, len);
	h->entry[len] = '\0';
	if (strncmp(h->entry, "unix:", 5) == 0) {
		const char *path = h->entry + 5;

		if (path[0] != '/' || strlen(path) >= sizeof h->socket) {
			snprintf(err, errlen, "db_hosts: entry '%s': a socket must be an absolute"
				 " path shorter than 108 bytes", h->entry);
			return -1;
		}
		snprintf(h->socket, sizeof h->socket, "%s", path);
		return 0;
	}
	colon = strchr(h->entry, ':');
	if (colon != NULL && colon > h->entry &&
	    strspn(h->entry, "abcdefghijklmnopqrstuvwxyz") == (size_t)(colon - h->entry) &&
	    !(colon[1] >= '0' && colon[1] <= '9')) {
		/* "tcp:x", "mysql://x": a scheme this key does not know */
		snprintf(err, errlen, "db_hosts: entry '%s': unknown scheme '%.*s' (expected"
			 " host:port, host or unix:/path)", h->entry, (int)(colon - h->entry),
			 h->entry);
		return -1;
	}
	if (colon != NULL && util_parse_ll(colon + 1, 1, 65535, &h->port) < 0) {
		snprintf(err, errlen, "db_hosts: entry '%s': port must be an integer from 1 to"
			 " 65535", h->entry);
		return -1;
	}
	len = colon ? (size_t)(colon - h->entry) : strlen(h->entry);
	if (len == 0 || len >= sizeof h->host ||
	    strspn(h->entry, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") <
		    len) {
		snprintf(err, errlen, "db_hosts: entry '%s': expected a host name or IPv4"
			 " address", h->entry);
		return -1;
	}
	memcpy(h->host, h->entry, len);
	h->host[len] = '\0';
	return 0;
}

int cfg_db_hosts_parse(const char *value, struct cfg_db_host *out, int *n, char *err,
		       size_t errlen)
{
	const char *p = value;
	int count = 0;

	*n = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0')
		return 0;
	for (;;) {
		const char *end = strchr(p, ','), *e;
		size_t len;

		if (end == NULL)
			end = p + strlen(p);
		e = p;
		while (e < end && (*e == ' ' || *e == '\t'))
			e++;
		len = (size_t)(end - e);
		while (len > 0 && (e[len - 1] == ' ' || e[len - 1] == '\t'))
			len--;
		if (len == 0) {
			snprintf(err, errlen, "db_hosts: empty entry %d", count + 1);
			return -1;
		}
		if (count == CFG_DB_HOSTS_MAX) {
			snprintf(err, errlen, "db_hosts: more than %d entries", CFG_DB_HOSTS_MAX);
			return -1;
		}
		if (db_host_parse(e, len, &out[count], err, errlen) < 0)
			return -1;
		count++;
		if (*end == '\0')
			break;
		p = end + 1;
	}
	*n = count;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int cfg_check(struct cfg *c, char *err, size_t errlen)
{
	struct nc_allow allow;

	if (nc_allow_parse(c->callback_allow, &allow, err, errlen) < 0)
		return -1;
	if (c->runner_slots == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		c->runner_slots = n < 1 ? 2 : n * 2 > 256 ? 256 : n * 2;
	}
	if (c->runner_warm_sandboxes > c->runner_slots) {
		snprintf(err, errlen, "runner_warm_sandboxes (%lld) must not exceed runner_slots "
			 "(%lld): a prewarmed sandbox holds a job slot", c->runner_warm_sandboxes,
			 c->runner_slots);
		return -1;
	}
	if (c->session_idle_seconds_default > c->session_idle_seconds_max ||
	    c->session_max_seconds_default > c->session_max_seconds_max ||
	    c->session_cpu_seconds_default > c->session_cpu_seconds_max) {
		snprintf(err, errlen, "session_*_default must not exceed session_*_max");
		return -1;
	}
	/* a UNIX socket path: absolute (the API and the runner start in other
	 * directories) and within sun_path */
	if (strcmp(c->api_wake_socket, API_WAKE_BESIDE) == 0) {
		const char *slash = strrchr(c->fcgi_socket, '/');
		int dir = slash ? (int)(slash - c->fcgi_socket) : 0;

		if (slash == NULL || snprintf(c->api_wake_socket, sizeof c->api_wake_socket,
					      "%.*s/api-wake.sock", dir, c->fcgi_socket) >=
					     (int)sizeof c->api_wake_socket)
			c->api_wake_socket[0] = '\0'; /* a relative fcgi_socket: off */
	}
	if (c->api_wake_socket[0] &&
	    (c->api_wake_socket[0] != '/' || strlen(c->api_wake_socket) >= 108)) {
		snprintf(err, errlen, "api_wake_socket must be an absolute path shorter than"
				      " 108 bytes (or empty: no wake-up, the waiter only ticks)");
		return -1;
	}
	if (c->runner_wake_socket[0] &&
	    (c->runner_wake_socket[0] != '/' || strlen(c->runner_wake_socket) >= 108)) {
		snprintf(err, errlen, "runner_wake_socket must be an absolute path shorter than"
				      " 108 bytes (or empty: no wake-up, the runner only polls)");
		return -1;
	}
	if (strcmp(c->runner_limits_mode, "cgroup") != 0 &&
	    strcmp(c->runner_limits_mode, "rlimit-only") != 0) {
		snprintf(err, errlen, "runner_limits_mode must be 'cgroup' or 'rlimit-only'");
		return -1;
	}
	for (const char *p = c->runner_cgroup_name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		      *p == '_')) {
			snprintf(err, errlen, "runner_cgroup_name must be [a-z0-9_-]+");
			return -1;
		}
	/* the first field of a runner id (host/slot-N/random): no '/' */
	for (const char *p = c->runner_host; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.')) {
			snprintf(err, errlen, "runner_host must be [A-Za-z0-9._-]+ (or empty: the"
					      " host name)");
			return -1;
		}
	for (int i = 0; i < LIM_COUNT; i++) {
		if (c->limit_default[i] > c->limit_max[i]) {
			snprintf(err, errlen, "%s_default (%lld) exceeds %s_max (%lld)",
				 limit_specs[i].name, c->limit_default[i], limit_specs[i].name,
				 c->limit_max[i]);
			return -1;
		}
	}
	return 0;
}

int cfg_load(struct cfg *c, const char *path, char *err, size_t errlen)
{
	FILE *f;
	char line[1024], msg[256];
	int lineno = 0, rc = 0;

	cfg_defaults(c);
	f = fopen(path, "re");
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		char *s, *eq;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, errlen, "%s:%d: line too long", path, lineno);
			rc = -1;
			break;
		}
		s = trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (eq == NULL) {
			snprintf(err, errlen, "%s:%d: expected 'key = value'", path, lineno);
			rc = -1;
			break;
		}
		*eq = '\0';
		if (cfg_set(c, trim(s), trim(eq + 1), msg, sizeof msg) < 0) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
			rc = -1;
			break;
		}
	}
	fclose(f);
	if (rc == 0 && cfg_check(c, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "%s: %s", path, msg);
		rc = -1;
	}
	return rc;
}

int cfg_db_password(const struct cfg *c, char *buf, size_t n, char *err, size_t errlen)
{
	char *data;
	size_t len;

	buf[0] = '\0';
	if (c->db_password_file[0] == '\0')
		return 0;
	data = util_read_file(c->db_password_file, 4096, &len);
	if (data == NULL) {
		snprintf(err, errlen, "db_password_file %s: %s", c->db_password_file,
			 strerror(errno));
		return -1;
	}
	data[strcspn(data, "\r\n")] = '\0';
	if ((size_t)snprintf(buf, n, "%s", data) >= n) {
		snprintf(err, errlen, "db_password_file %s: password too long",
			 c->db_password_file);
		explicit_bzero(data, len);
		free(data);
		return -1;
	}
	explicit_bzero(data, len);
	free(data);
	return 0;
}
