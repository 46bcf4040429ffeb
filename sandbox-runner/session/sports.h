/* A session's sandbox ports (issue 23, docs/E2B.md "Ports"): HTTP and WebSocket to a TCP
 * port a command listens on inside the session, never through a port of the host.
 *
 * nginx -> <session_ports_dir>/<session id>.sock (a Unix socket, mode 0660, the group
 * nginx's workers are in) -> the port helper, one process per session forked by its
 * supervisor once the sandbox runs -> 127.0.0.1:<port> inside the sandbox's own network
 * namespace. nginx has already authenticated the request (an auth subrequest to the
 * API: the sandbox's traffic token or its owner's key, unless the creator made its
 * ports public) and names the port in the request's head (X-Sandbox-Port, set by nginx
 * from the host name <port>-<id>.<domain>; a client's own is replaced). The helper:
 *   - binds the socket while root, then joins the sandbox's network namespace (that of
 *     bwrap's child, owned by the slot uid's user namespace: checked) and drops to the
 *     slot uid with no capability, no_new_privs, not dumpable; it opens nothing else;
 *   - reads one request head (at most SP_HEAD_MAX bytes, within SP_HEAD_MS), connects to
 *     127.0.0.1:<port> in the sandbox (never the host's loopback: another namespace),
 *     sends the head and relays both ways until either side ends (half-close passed
 *     on), so a WebSocket upgrade simply goes through; a port nobody listens on is a
 *     502 in E2B's shape;
 *   - holds at most max_conns connections (more: 503), each idle at most idle_ms;
 *   - dies with its supervisor (parent-death signal) and is killed, its socket
 *     removed, when the session ends (sp_stop). */
#ifndef SANDBOX_SPORTS_H
#define SANDBOX_SPORTS_H

#include <stddef.h>
#include <sys/types.h>

#define SP_HEAD_MAX 16384
#define SP_HEAD_MS 10000
#define SP_ENVD_PORT 49983 /* E2B's envd port: served by the API, never proxied */

struct sp_conf {
	const char *sock_path;  /* <session_ports_dir>/<id>.sock */
	gid_t sock_gid;         /* the socket's group (nginx's workers are in it) */
	pid_t child;            /* bwrap's child: the sandbox's namespaces */
	uid_t uid;              /* the slot uid: owns the sandbox's user namespace */
	const char *sid;        /* for the 502 body */
	int max_conns;
	long long idle_ms;
};

/* Forks the helper; its pid, or -1 with err (nothing left behind). */
pid_t sp_start(const struct sp_conf *c, char *err, size_t n);
/* Kills and reaps the helper (pid > 0) and removes its socket. */
void sp_stop(pid_t helper, const char *sock_path);

struct cfg;
/* A session's helper: its socket <session_ports_dir>/<sid>.sock (the directory made
 * 0711 when missing: nginx needs to search it, nobody to list it) with the group of
 * fcgi_socket_group (nginx's workers; empty: ours), the connection bounds of cfg. The
 * socket's path in sock. Its pid, or -1 with err; 0 when ports are off
 * (session_ports_dir ""). */
pid_t sp_session_start(const struct cfg *cfg, const char *sid, pid_t child, uid_t uid,
		       char *sock, size_t socklen, char *err, size_t n);

/* ---- pure (unit-tested) ---- */

/* A request head: buf[0 .. len) ends with the blank line at *head_len (else 0:
 * incomplete, keep reading; -1: over SP_HEAD_MAX or malformed). Its X-Sandbox-Port
 * header (exactly one, case-insensitive name, 1..65535 and not SP_ENVD_PORT) in *port;
 * -2 when it is missing or bad. */
int sp_head_port(const char *buf, size_t len, int *port, size_t *head_len);

#endif
