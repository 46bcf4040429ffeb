/* Host-local claim wake-up (issue 11).
 *
 * The API, after it commits a new job or session, sends one datagram to
 * runner_wake_socket; the dispatcher poll()s that socket with runner_poll_ms as its
 * timeout, so a job on an idle host is claimed at once instead of at the next poll. A
 * job's supervisor sends one too when it gives its slot back. The datagram carries
 * nothing: its content is never read, and a wake-up only ends early a wait that would
 * end anyway (a runner on another host, or one whose socket is gone, still polls).
 *
 * Who can send: the socket is mode 0200 and belongs to the owner of its directory
 * (in production /run/sandbox, the API's RuntimeDirectory, owned by the API's user),
 * so that user and root can send and nobody else. */
#ifndef SANDBOX_WAKE_H
#define SANDBOX_WAKE_H

#include <stddef.h>

/* One datagram to path, never blocking; 0, or -1 with errno (no listener, queue
 * full, path "" = off). Callers ignore failures: polling covers them. */
int wake_send(const char *path);
/* Binds path for the dispatcher: the fd (nonblocking, close-on-exec), or -1 with a
 * message in err (the caller logs it and polls only). A live socket of another
 * dispatcher at path is left alone (-1); a stale one is replaced. */
int wake_listen(const char *path, char *err, size_t errlen);
/* The API's result wake-up (api_wake_socket, app/http/waiter.h): binds path like
 * wake_listen, but the socket is mode 0220 and gets the group of its directory
 * (which the operator sets up: owned by the API's user, group of the runner's user,
 * not world-writable), so the API's user, that group and root can send. key names
 * the setting in err. The caller (the API master) must belong to that group. */
int wake_listen_group(const char *path, const char *key, char *err, size_t errlen);
/* Discards the queued datagrams of fd (at most a few thousand, never blocking);
 * how many. */
int wake_drain(int fd);
/* Waits up to ms for a wake-up on fd and discards every queued datagram; 1 woken,
 * 0 timed out or interrupted by a signal. */
int wake_wait(int fd, long ms);
/* 1 while the socket file wake_listen created is still at path (the API's
 * RuntimeDirectory is recreated when the API restarts: the dispatcher binds again). */
int wake_bound(const char *path);
/* Removes the socket if it is still the one wake_listen bound on fd. */
void wake_close(int fd, const char *path);

#endif
