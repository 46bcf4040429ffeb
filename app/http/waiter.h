/* Long-poll (`?wait=S`) without holding a worker: the waiter.
 *
 * Interface for a handler. A handler that would wait calls
 *
 *     if (wt_defer(r, who->key_id, &(struct wt_cond){ WT_JOB_DONE, id, 0, 0 }, wait))
 *             return;            // deferred: answer nothing now
 *     ... answer with the current state ...
 *
 * wt_defer takes a slot on the instance's wait board and marks the request deferred;
 * the worker keeps the request (its FastCGI connection) and goes on accepting others.
 * When the condition holds, the deadline passes, the client hangs up (then nothing is
 * answered) or the worker is told to stop, the worker dispatches the same request
 * through the router again with r->wait.resumed set: wt_defer then returns 0, so the
 * final answer comes from the same handler code, with the state as it is then.
 * wt_defer returns 0 too when waiting is impossible (no free slot on the board, the
 * key holds its share, or the request is a re-dispatch): the handler answers at once.
 * r->wait.id (the condition's id) and r->wait.aux (the handler's own value, set
 * before wt_defer) survive until the re-dispatch: a handler whose first run had a
 * side effect (POST /v1/jobs?wait=S created the job) resumes from them.
 *
 * Conditions (enum wt_kind), one row each:
 *   WT_JOB_DONE        jobs.state is terminal
 *   WT_JOB_OUTPUT      job output `stream` has more than `baseline` bytes, or the job ended
 *   WT_SESSION_READY   sessions.status is not 'starting'
 *   WT_COMMAND_DONE    session_commands.status is neither 'queued' nor 'running'
 *   WT_COMMAND_OUTPUT  session_commands.stdout_bytes/stderr_bytes (stream 1/2; 3: their
 *                      sum) > `baseline`, or ended
 *   WT_SESSION_ENDED   sessions.status is neither 'starting' nor 'ready' (close)
 *   WT_REQUEST_DONE    session_requests.state is neither 'pending' nor 'taken' (kill,
 *                      stdin, file_*: answered or failed);
 *                      its id is the request's BIGINT id in decimal, canonical (no sign,
 *                      no leading zero), bound as an integer in the batched query
 * A row that does not exist (deleted, wrong id) satisfies every condition: the
 * re-dispatch answers it (404).
 *
 * How. The board is shared memory (all workers of one instance): api_wait_capacity
 * entries {condition, owner worker, key tag, generation}, a robust process-shared
 * mutex, and the time of the next poll. Every tick (api_wait_tick_ms) one worker of
 * the instance -- whichever claims the tick first -- reads the conditions of every
 * waiting entry with one batched query per source table (`... WHERE id IN (?,...)`,
 * ids sorted and deduplicated, padded to 1, 8, 64 or 512 parameters so that a few
 * prepared statements serve every size), marks the entries whose condition holds
 * and wakes their owners through their eventfd. Queries per second depend on the
 * tick and the tables being waited on, not on how many wait, nor on the number of
 * workers. Nothing here runs in a thread: each worker is one event loop.
 *
 * Wake-up. A tick alone makes every answer wait up to api_wait_tick_ms after the
 * commit. A local supervisor sends one datagram to api_wake_socket after it commits
 * a job's result (common/wake.h); every worker polls that socket, the one that reads
 * a datagram calls wt_nudge, which brings the instance's next poll forward (at most
 * one poll per WT_NUDGE_MIN_US however many datagrams come). The datagram is never
 * read as data. Results committed on other hosts still wait for the tick.
 *
 * Fairness. One key may hold api_wait_slots_per_key entries (0: half the capacity);
 * a request that finds the board full, or its key at its share, is answered at once.
 */
#ifndef SANDBOX_WAITER_H
#define SANDBOX_WAITER_H

#include <stddef.h>

struct db;
struct req;

#define WT_ID_MAX 40
#define WT_MAX_WORKERS 512
#define WT_MAX_SECONDS 30

enum wt_kind {
	WT_JOB_DONE,
	WT_JOB_OUTPUT,
	WT_SESSION_READY,
	WT_COMMAND_DONE,
	WT_COMMAND_OUTPUT,
	WT_SESSION_ENDED,
	WT_REQUEST_DONE,
	WT_KINDS
};

/* The table read for a kind: kinds on one source share its query. */
enum wt_source { WS_JOBS, WS_JOB_OUTPUT, WS_SESSIONS, WS_COMMANDS, WS_REQUESTS, WS_SOURCES };

struct wt_cond {
	enum wt_kind kind;
	const char *id;     /* the row's id (copied; at most WT_ID_MAX - 1 bytes) */
	int stream;         /* *_OUTPUT: 1 stdout, 2 stderr, 3 both (WT_COMMAND_OUTPUT) */
	long long baseline; /* *_OUTPUT: bytes the client has; more is the condition */
};

/* In a handler: wait for c up to `seconds` (1..WT_MAX_SECONDS) for the key key_id.
 * 1: deferred (answer nothing); 0: answer now. */
int wt_defer(struct req *r, const char *key_id, const struct wt_cond *c, long long seconds);

/* A wait whose condition is known only after a side effect (a session request: its
 * row id comes from the INSERT) reserves its entry first, so that a request the board
 * has no room for is refused before anything is done:
 *
 *     switch (wt_reserve(r, who->key_id)) { case WT_NO_ROOM: ... 503; WT_KEY_SHARE: 429 }
 *     ... insert ...       (on failure: wt_unreserve(r))
 *     if (wt_defer_reserved(r, &cond, seconds)) return;
 *
 * A reserved entry counts against the capacity and the key's share like a waiting
 * one but is never polled. wt_reserve: WT_RESERVED, WT_KEY_SHARE (the key holds its
 * share), WT_NO_ROOM (the board is full) or WT_NO_BOARD (api_wait_capacity 0, or not
 * in a worker: the caller waits in the worker, bounded). wt_defer_reserved: 1
 * deferred; 0 (no reservation) answer now. wt_unreserve gives a reservation back (a
 * no-op without one; the worker calls it after every handler, as a safety net). */
/* In a re-dispatch (r->wait.resumed): wait once more, up to `seconds`, for c (a
 * session request its supervisor has taken and not yet answered: the action is
 * under way, and the client should learn its outcome). Once per request, never while
 * the worker stops. 1: deferred again (answer nothing); 0: answer now. */
int wt_extend(struct req *r, const char *key_id, const struct wt_cond *c, long long seconds);

/* A streamed answer (app/e2b: envd's server streams) waits between its pieces: any
 * number of times, re-dispatch or not, for c up to ms (1..WT_MAX_SECONDS * 1000), the
 * same board entry rules as wt_defer (the key's share bounds its open streams). Never
 * while the worker stops (r->wait.stopping). 1: deferred; 0: no room, end the stream. */
int wt_stream(struct req *r, const char *key_id, const struct wt_cond *c, long long ms);

/* 1 when this worker has a board with room for waits at all (api_wait_capacity > 0). */
int wt_enabled(void);
enum wt_reserve_rc { WT_RESERVED = 1, WT_KEY_SHARE = 0, WT_NO_ROOM = -1, WT_NO_BOARD = -2 };
enum wt_reserve_rc wt_reserve(struct req *r, const char *key_id);
int wt_defer_reserved(struct req *r, const struct wt_cond *c, long long seconds);
void wt_unreserve(struct req *r);

/* A group (POST /v1/jobs/batch?wait=S): wait until the condition `kind` (not an
 * *_OUTPUT kind) holds for every one of ids[0 .. n), 1 <= n <= WT_GROUP_MAX. It
 * takes n entries of the board, linked, that count against the key's share as n
 * requests would; when the board or the share has no room for all of them, none is
 * taken and 0 is returned (answer now). The request is ready when every entry is;
 * each entry leaves the poll once its own row satisfies it. r->wait.id is ids[0]. */
#define WT_GROUP_MAX 100
int wt_defer_all(struct req *r, const char *key_id, enum wt_kind kind, const char *const *ids,
		 size_t n, long long seconds);

/* ---- the worker's side (app/http/api_main.c) ---- */

struct wt_board;

/* In the master, before forking: the shared board with `capacity` entries (0: no
 * waiting at all), per_key entries a key may hold (0: half), and one wake eventfd
 * per worker slot. NULL with errno set. */
struct wt_board *wt_board_create(long long capacity, long long per_key, int workers,
				 long long tick_ms);
/* In a worker: the board this process uses, and its slot. */
void wt_attach(struct wt_board *b, int slot);
/* The worker's wake fd (readable when one of its entries became ready): poll it,
 * then call wt_drain_wake. */
int wt_wake_fd(void);
void wt_drain_wake(void);
/* 1 when some worker of the instance holds a waiting entry. */
int wt_any_waiting(void);
/* Milliseconds (util_mono_ms clock) of the next instance-wide poll. */
double wt_next_poll_ms(void);
/* 1 when this worker claimed the tick due at `now` and must run wt_poll. */
int wt_claim_tick(double now);
/* A wake-up (api_wake_socket: a local supervisor committed a result): brings the
 * next poll forward to now, but never sooner than WT_NUDGE_MIN_US after the last one
 * began, so a flood of wake-ups costs at most one poll per millisecond; the tick
 * stays for results committed on other hosts. */
#define WT_NUDGE_MIN_US 1000
void wt_nudge(double now);
/* Its pure part: when the next poll is due (us), given now, the last poll's start
 * and the poll due so far. */
long long wt_nudge_at(long long now_us, long long last_us, long long next_us);
/* Reads every waiting entry's condition (one query per source), marks and wakes the
 * ready ones. 0, or -1 after a database error (db_gone tells whether to reconnect). */
int wt_poll(struct db *db);
/* The state of a deferred request's entry: 1 ready, 0 still waiting. */
int wt_is_ready(const struct req *r);
/* Gives a deferred request's entry back (before the re-dispatch or on hang-up). */
void wt_release(struct req *r);
/* In the master, for a worker that died: frees its entries. */
void wt_release_owner(struct wt_board *b, int slot);
/* Counters since start: polls run and queries they sent (bench, tests). */
void wt_stats(unsigned long long *polls, unsigned long long *queries, long long *waiting);

/* ---- pure parts (unit-tested) ---- */

enum wt_source wt_source_of(enum wt_kind k);
/* 1 when a source's ids are integers (bound as BIGINT, given as canonical decimal). */
int wt_source_numeric(enum wt_source s);
/* 1 when id is a valid id for kind k's source (numeric ones: canonical decimal,
 * 1..2^63-1). */
int wt_id_ok(enum wt_kind k, const char *id);

/* What one row says. found 0: no such row. */
struct wt_row {
	int found;
	const char *state; /* jobs.state, sessions.status, session_commands.status or
			    * session_requests.state */
	long long n1, n2;  /* stdout and stderr bytes (output kinds) */
};
/* 1 when row satisfies c. */
int wt_cond_ready(const struct wt_cond *c, const struct wt_row *row);

/* The IN-list size a batch of n ids is padded to: 1, 8, 64 or 512 (n <= 512). */
size_t wt_pad_size(size_t n);
/* The query of a source for n (a wt_pad_size) ids; columns id, st, n1, n2. Written
 * into buf; -1 if it does not fit. */
int wt_query_text(enum wt_source s, size_t n, char *buf, size_t len);

/* A board in plain memory for tests and the master: take and give back entries. */
int wt_board_take(struct wt_board *b, int owner, int tag, const struct wt_cond *c,
		  unsigned *gen);
/* n entries (c[0 .. n)) at once or none: the first's index and generation (gen), the
 * others linked behind it, or -1. */
int wt_board_take_all(struct wt_board *b, int owner, int tag, const struct wt_cond *c,
		      size_t n, unsigned *gen);
/* One entry reserved (no condition yet, never polled): its index and generation,
 * or -1 (the board is full) or -2 (the key holds its share). */
int wt_board_reserve(struct wt_board *b, int owner, int tag, unsigned *gen);
/* Gives reserved entry (generation gen) its condition: it waits from now on. 0, or -1
 * (not that reservation any more). */
int wt_board_arm(struct wt_board *b, int entry, unsigned gen, const struct wt_cond *c);
/* Gives back entry and, for a group, the entries linked behind it. */
void wt_board_give(struct wt_board *b, int entry, unsigned gen);
void wt_board_destroy(struct wt_board *b);
/* A key's mark on the board (FNV-1a of the key id, non-zero). */
int wt_key_tag(const char *key_id);

#endif
