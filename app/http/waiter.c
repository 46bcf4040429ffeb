/* The waiter: see the theory of operation in waiter.h. The board is shared by the
 * workers of one instance (MAP_SHARED, created by the master); each worker process
 * is single-threaded, so the module's own state (the board pointer, the slot, the
 * poll's scratch arrays) needs no lock. The board's mutex is process-shared and
 * robust: a worker that dies holding it cannot wedge the others. */
#include "waiter.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "db.h"
#include "http.h"
#include "jobstate.h"
#include "log.h"
#include "util.h"

#define WT_BATCH_MAX 512

enum { E_FREE, E_WAITING, E_READY, E_RESERVED };

struct wt_entry {
	int state; /* E_*, read without the lock by the owner (atomic loads) */
	int owner;
	int tag;
	unsigned gen;
	int kind;
	int stream;
	long long baseline;
	char id[WT_ID_MAX];
	int next;          /* a group (wt_defer_all): the next entry, -1: the last */
	unsigned next_gen; /* its generation */
};

struct wt_board {
	pthread_mutex_t lock;
	long long next_poll_us; /* atomic: util_mono_ms() * 1000 of the next poll */
	long long tick_us;
	long long last_poll_us; /* atomic: the start of the last claimed poll */
	long long capacity;
	long long per_key;
	long long waiting; /* entries not free; atomic reads outside the lock */
	unsigned long long polls, queries;
	int workers;
	int wake[WT_MAX_WORKERS];
	size_t map_len;
	struct wt_entry e[];
};

static struct wt_board *board;
static int my_slot = -1;

/* ---------------------------------------------------------------- pure parts */

enum wt_source wt_source_of(enum wt_kind k)
{
	switch (k) {
	case WT_JOB_DONE:
		return WS_JOBS;
	case WT_JOB_OUTPUT:
		return WS_JOB_OUTPUT;
	case WT_SESSION_READY:
	case WT_SESSION_ENDED:
		return WS_SESSIONS;
	case WT_REQUEST_DONE:
		return WS_REQUESTS;
	case WT_COMMAND_DONE:
	case WT_COMMAND_OUTPUT:
	default:
		return WS_COMMANDS;
	}
}

int wt_source_numeric(enum wt_source s)
{
	return s == WS_REQUESTS;
}

/* Canonical decimal of 1..LLONG_MAX: what CAST(id AS CHAR) gives back, so that the
 * poll matches result rows to entries by their text. */
static int canonical_id(const char *id)
{
	size_t n = strlen(id);
	long long v;

	if (n == 0 || n > 19 || id[0] == '0' || strspn(id, "0123456789") != n)
		return 0;
	return util_parse_ll(id, 1, 0x7fffffffffffffffLL, &v) == 0;
}

int wt_id_ok(enum wt_kind k, const char *id)
{
	size_t n;

	if (id == NULL || (unsigned)k >= WT_KINDS)
		return 0;
	n = strlen(id);
	if (n == 0 || n >= WT_ID_MAX)
		return 0;
	return !wt_source_numeric(wt_source_of(k)) || canonical_id(id);
}

static int command_ended(const char *st)
{
	return strcmp(st, "queued") != 0 && strcmp(st, "running") != 0;
}

static int job_ended(const char *st)
{
	int s = js_parse(st);

	return s < 0 || js_is_terminal((enum job_state)s); /* unknown: let the handler say */
}

int wt_cond_ready(const struct wt_cond *c, const struct wt_row *row)
{
	const char *st = row->state ? row->state : "";
	long long have = c->stream == 2 ? row->n2 : c->stream == 3 ? row->n1 + row->n2 : row->n1;

	if (!row->found)
		return 1;
	switch (c->kind) {
	case WT_JOB_DONE:
		return job_ended(st);
	case WT_JOB_OUTPUT:
		return job_ended(st) || have > c->baseline;
	case WT_SESSION_READY:
		return strcmp(st, "starting") != 0;
	case WT_SESSION_ENDED:
		return strcmp(st, "starting") != 0 && strcmp(st, "ready") != 0;
	case WT_REQUEST_DONE:
		return strcmp(st, "pending") != 0 && strcmp(st, "taken") != 0;
	case WT_COMMAND_DONE:
		return command_ended(st);
	case WT_COMMAND_OUTPUT:
		return command_ended(st) || have > c->baseline;
	default:
		return 1;
	}
}

size_t wt_pad_size(size_t n)
{
	static const size_t sizes[] = { 1, 8, 64, WT_BATCH_MAX };

	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		if (n <= sizes[i])
			return sizes[i];
	return WT_BATCH_MAX;
}

int wt_query_text(enum wt_source s, size_t n, char *buf, size_t len)
{
	static const char *const head[WS_SOURCES] = {
		[WS_JOBS] = "SELECT id, state AS st, 0 AS n1, 0 AS n2 FROM jobs WHERE id IN (",
		[WS_JOB_OUTPUT] =
			/* the live lengths the runner advances with each stored chunk
			 * (schema 006), final once the job ended */
			"SELECT id, state AS st, stdout_live_bytes AS n1, stderr_live_bytes AS n2"
			" FROM jobs WHERE id IN (",
		[WS_SESSIONS] = "SELECT id, status AS st, 0 AS n1, 0 AS n2 FROM sessions WHERE id IN (",
		[WS_COMMANDS] = "SELECT id, status AS st, stdout_bytes AS n1, stderr_bytes AS n2"
				" FROM session_commands WHERE id IN (",
		/* BIGINT ids: bound as integers (an index lookup), given back as the
		 * text the entries hold */
		[WS_REQUESTS] = "SELECT CAST(id AS CHAR) AS id, state AS st, 0 AS n1, 0 AS n2"
				" FROM session_requests WHERE id IN (",
	};
	size_t used;

	if ((unsigned)s >= WS_SOURCES || n == 0 || n > WT_BATCH_MAX)
		return -1;
	used = strlen(head[s]);
	/* "?" then n - 1 times ",?" then ")" and the NUL */
	if (used + 2 * n + 1 > len)
		return -1;
	memcpy(buf, head[s], used);
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf[used++] = ',';
		buf[used++] = '?';
	}
	buf[used++] = ')';
	buf[used] = '\0';
	return 0;
}

int wt_key_tag(const char *key_id)
{
	unsigned h = 2166136261u; /* FNV-1a */

	for (const char *p = key_id; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return (int)(h & 0x3fffffff) | 1;
}

/* ---------------------------------------------------------------- the board */

static void lock(struct wt_board *b)
{
	if (pthread_mutex_lock(&b->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&b->lock); /* a dead worker's entries: see reap */
}

static void unlock(struct wt_board *b)
{
	pthread_mutex_unlock(&b->lock);
}

struct wt_board *wt_board_create(long long capacity, long long per_key, int workers,
				 long long tick_ms)
{
	size_t len = sizeof(struct wt_board);
	pthread_mutexattr_t ma;
	struct wt_board *b;

	if (capacity < 0 || workers < 0 || workers > WT_MAX_WORKERS || tick_ms <= 0) {
		errno = EINVAL;
		return NULL;
	}
	len += (size_t)capacity * sizeof(struct wt_entry);
	b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		return NULL;
	memset(b, 0, len);
	b->map_len = len;
	b->capacity = capacity;
	b->per_key = per_key > 0 ? per_key : (capacity / 2 > 0 ? capacity / 2 : 1);
	b->tick_us = tick_ms * 1000;
	b->workers = workers;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&b->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	for (int i = 0; i < WT_MAX_WORKERS; i++)
		b->wake[i] = -1;
	for (int i = 0; i < workers; i++) {
		b->wake[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (b->wake[i] < 0) {
			int e = errno;
			wt_board_destroy(b);
			errno = e;
			return NULL;
		}
	}
	return b;
}

void wt_board_destroy(struct wt_board *b)
{
	if (b == NULL)
		return;
	for (int i = 0; i < b->workers; i++)
		if (b->wake[i] >= 0)
			close(b->wake[i]);
	pthread_mutex_destroy(&b->lock);
	munmap(b, b->map_len);
}

/* With the lock held: entry i, free, becomes a waiting entry for c (NULL: a
 * reservation, not polled until armed); its generation. */
static unsigned fill_locked(struct wt_board *b, long long i, int owner, int tag,
			    const struct wt_cond *c)
{
	struct wt_entry *e = &b->e[i];

	e->owner = owner;
	e->tag = tag;
	e->gen++;
	e->kind = c ? c->kind : 0;
	e->stream = c ? c->stream : 0;
	e->baseline = c ? c->baseline : 0;
	e->next = -1;
	e->next_gen = 0;
	snprintf(e->id, sizeof e->id, "%s", c ? c->id : "");
	__atomic_store_n(&e->state, c ? E_WAITING : E_RESERVED, __ATOMIC_RELEASE);
	__atomic_add_fetch(&b->waiting, 1, __ATOMIC_RELAXED);
	return e->gen;
}

/* With the lock held: one entry for key tag, as fill_locked; its index, or -1 (the
 * board is full) or -2 (the key holds its share). */
static int take_locked(struct wt_board *b, int owner, int tag, const struct wt_cond *c,
		       unsigned *gen)
{
	long long mine = 0, free_at = -1;

	if (b->waiting >= b->capacity)
		return -1;
	for (long long i = 0; i < b->capacity; i++) {
		if (b->e[i].state == E_FREE) {
			if (free_at < 0)
				free_at = i;
		} else if (b->e[i].tag == tag) {
			mine++;
		}
	}
	if (mine >= b->per_key)
		return -2;
	if (free_at < 0)
		return -1;
	*gen = fill_locked(b, free_at, owner, tag, c);
	return (int)free_at;
}

int wt_board_take(struct wt_board *b, int owner, int tag, const struct wt_cond *c,
		  unsigned *gen)
{
	int idx;

	lock(b);
	idx = take_locked(b, owner, tag, c, gen);
	unlock(b);
	return idx < 0 ? -1 : idx;
}

int wt_board_reserve(struct wt_board *b, int owner, int tag, unsigned *gen)
{
	int idx;

	lock(b);
	idx = take_locked(b, owner, tag, NULL, gen);
	unlock(b);
	return idx;
}

int wt_board_arm(struct wt_board *b, int entry, unsigned gen, const struct wt_cond *c)
{
	int rc = -1;

	if (entry < 0 || entry >= b->capacity || c == NULL)
		return -1;
	lock(b);
	if (b->e[entry].gen == gen && b->e[entry].state == E_RESERVED) {
		struct wt_entry *e = &b->e[entry];

		e->kind = c->kind;
		e->stream = c->stream;
		e->baseline = c->baseline;
		snprintf(e->id, sizeof e->id, "%s", c->id);
		__atomic_store_n(&e->state, E_WAITING, __ATOMIC_RELEASE);
		rc = 0;
	}
	unlock(b);
	return rc;
}

int wt_board_take_all(struct wt_board *b, int owner, int tag, const struct wt_cond *c,
		      size_t n, unsigned *gen)
{
	long long mine = 0, nfree = 0, at = -1, head = -1;
	unsigned head_gen = 0;

	if (n == 0 || n > WT_GROUP_MAX)
		return -1;
	lock(b);
	for (long long i = 0; i < b->capacity; i++) {
		if (b->e[i].state == E_FREE)
			nfree++;
		else if (b->e[i].tag == tag)
			mine++;
	}
	if (nfree < (long long)n || mine + (long long)n > b->per_key)
		goto out;
	/* taken from the last condition to the first, each entry linked to the one
	 * taken before it: the head is c[0]'s */
	for (size_t k = n, i = (size_t)b->capacity; k-- > 0;) {
		while (i-- > 0 && b->e[i].state != E_FREE)
			;
		at = (long long)i;
		head_gen = fill_locked(b, at, owner, tag, &c[k]);
		b->e[at].next = (int)head;
		b->e[at].next_gen = *gen;
		head = at;
		*gen = head_gen;
	}
out:
	unlock(b);
	return (int)head;
}

/* With the lock held. */
static void give_locked(struct wt_board *b, long long i)
{
	if (b->e[i].state == E_FREE)
		return;
	__atomic_store_n(&b->e[i].state, E_FREE, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&b->waiting, 1, __ATOMIC_RELAXED);
}

void wt_board_give(struct wt_board *b, int entry, unsigned gen)
{
	lock(b);
	/* a group's entries one after the other, while each is still the one taken */
	while (entry >= 0 && entry < b->capacity && b->e[entry].gen == gen &&
	       b->e[entry].state != E_FREE) {
		int next = b->e[entry].next;

		gen = b->e[entry].next_gen;
		give_locked(b, entry);
		entry = next;
	}
	unlock(b);
}

void wt_release_owner(struct wt_board *b, int slot)
{
	if (b == NULL)
		return;
	lock(b);
	for (long long i = 0; i < b->capacity; i++)
		if (b->e[i].owner == slot)
			give_locked(b, i);
	unlock(b);
}

/* ---------------------------------------------------------------- a worker's side */

void wt_attach(struct wt_board *b, int slot)
{
	board = b;
	my_slot = slot;
}

int wt_wake_fd(void)
{
	return board && my_slot >= 0 && my_slot < WT_MAX_WORKERS ? board->wake[my_slot] : -1;
}

void wt_drain_wake(void)
{
	unsigned long long v;
	int fd = wt_wake_fd();

	if (fd >= 0 && read(fd, &v, sizeof v) < 0 && errno != EAGAIN)
		log_kv("warn", "wait_wake", "error", strerror(errno), (char *)NULL);
}

int wt_any_waiting(void)
{
	return board && __atomic_load_n(&board->waiting, __ATOMIC_RELAXED) > 0;
}

double wt_next_poll_ms(void)
{
	return board ? (double)__atomic_load_n(&board->next_poll_us, __ATOMIC_ACQUIRE) / 1000.0 : 0;
}

int wt_claim_tick(double now)
{
	long long cur, t = (long long)(now * 1000.0);

	if (!wt_any_waiting())
		return 0;
	cur = __atomic_load_n(&board->next_poll_us, __ATOMIC_ACQUIRE);
	if (t < cur)
		return 0;
	if (!__atomic_compare_exchange_n(&board->next_poll_us, &cur, t + board->tick_us, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	__atomic_store_n(&board->last_poll_us, t, __ATOMIC_RELEASE);
	return 1;
}

long long wt_nudge_at(long long now_us, long long last_us, long long next_us)
{
	long long want = now_us > last_us + WT_NUDGE_MIN_US ? now_us : last_us + WT_NUDGE_MIN_US;

	return want < next_us ? want : next_us;
}

void wt_nudge(double now)
{
	long long cur, want, t = (long long)(now * 1000.0);

	if (!wt_any_waiting())
		return;
	cur = __atomic_load_n(&board->next_poll_us, __ATOMIC_ACQUIRE);
	do {
		want = wt_nudge_at(t, __atomic_load_n(&board->last_poll_us, __ATOMIC_ACQUIRE), cur);
		if (want >= cur)
			return; /* a poll is due as soon already */
	} while (!__atomic_compare_exchange_n(&board->next_poll_us, &cur, want, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
}

static int valid_cond(const struct wt_cond *c)
{
	if (c == NULL || !wt_id_ok(c->kind, c->id))
		return 0;
	if (c->kind == WT_JOB_OUTPUT || c->kind == WT_COMMAND_OUTPUT)
		return (c->stream == 1 || c->stream == 2 ||
			(c->stream == 3 && c->kind == WT_COMMAND_OUTPUT)) && c->baseline >= 0;
	return 1;
}

/* The request waits on board entry idx (generation gen) for ms at most. */
static int arm_ms(struct req *r, int idx, unsigned gen, long long ms, const char *id)
{
	if (ms > WT_MAX_SECONDS * 1000LL)
		ms = WT_MAX_SECONDS * 1000LL;
	r->wait.deferred = 1;
	r->wait.entry = idx;
	r->wait.gen = gen;
	r->wait.deadline_ms = util_mono_ms() + (double)ms;
	snprintf(r->wait.id, sizeof r->wait.id, "%s", id);
	return 1;
}

static int arm(struct req *r, int idx, unsigned gen, long long seconds, const char *id)
{
	return arm_ms(r, idx, gen, seconds > WT_MAX_SECONDS ? WT_MAX_SECONDS * 1000LL
							     : seconds * 1000LL, id);
}

/* An entry for c, waited on for ms: 1, or 0 (no board, nothing to wait for, no room). */
static int take(struct req *r, const char *key_id, const struct wt_cond *c, long long ms)
{
	unsigned gen;
	int idx;

	if (board == NULL || ms <= 0 || !valid_cond(c))
		return 0;
	idx = wt_board_take(board, my_slot, wt_key_tag(key_id), c, &gen);
	return idx >= 0 && arm_ms(r, idx, gen, ms, c->id);
}

int wt_defer(struct req *r, const char *key_id, const struct wt_cond *c, long long seconds)
{
	return !r->wait.resumed && seconds > 0 &&
	       take(r, key_id, c, seconds > WT_MAX_SECONDS ? WT_MAX_SECONDS * 1000LL
							   : seconds * 1000LL);
}

int wt_extend(struct req *r, const char *key_id, const struct wt_cond *c, long long seconds)
{
	if (!r->wait.resumed || r->wait.extended)
		return 0;
	r->wait.extended = 1;
	r->wait.resumed = 0;
	if (wt_defer(r, key_id, c, seconds))
		return 1;
	r->wait.resumed = 1;
	return 0;
}

int wt_stream(struct req *r, const char *key_id, const struct wt_cond *c, long long ms)
{
	return !r->wait.stopping && take(r, key_id, c, ms);
}

int wt_enabled(void)
{
	return board != NULL && board->capacity > 0;
}

enum wt_reserve_rc wt_reserve(struct req *r, const char *key_id)
{
	unsigned gen;
	int idx;

	if (!wt_enabled() || r->wait.resumed || r->wait.reserved)
		return WT_NO_BOARD;
	idx = wt_board_reserve(board, my_slot, wt_key_tag(key_id), &gen);
	if (idx < 0)
		return idx == -2 ? WT_KEY_SHARE : WT_NO_ROOM;
	r->wait.reserved = 1;
	r->wait.entry = idx;
	r->wait.gen = gen;
	return WT_RESERVED;
}

int wt_defer_reserved(struct req *r, const struct wt_cond *c, long long seconds)
{
	if (board == NULL || !r->wait.reserved)
		return 0;
	if (seconds <= 0 || !valid_cond(c) ||
	    wt_board_arm(board, r->wait.entry, r->wait.gen, c) < 0) {
		wt_unreserve(r);
		return 0;
	}
	r->wait.reserved = 0;
	return arm(r, r->wait.entry, r->wait.gen, seconds, c->id);
}

void wt_unreserve(struct req *r)
{
	if (board != NULL && r->wait.reserved)
		wt_board_give(board, r->wait.entry, r->wait.gen);
	r->wait.reserved = 0;
}

int wt_defer_all(struct req *r, const char *key_id, enum wt_kind kind, const char *const *ids,
		 size_t n, long long seconds)
{
	struct wt_cond c[WT_GROUP_MAX];
	unsigned gen = 0;
	int idx;

	if (r->wait.resumed || board == NULL || seconds <= 0 || n == 0 || n > WT_GROUP_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		c[i] = (struct wt_cond){ kind, ids[i], 0, 0 };
		if (!valid_cond(&c[i]) || kind == WT_JOB_OUTPUT || kind == WT_COMMAND_OUTPUT)
			return 0;
	}
	idx = wt_board_take_all(board, my_slot, wt_key_tag(key_id), c, n, &gen);
	return idx >= 0 && arm(r, idx, gen, seconds, ids[0]);
}

int wt_is_ready(const struct req *r)
{
	int idx = r->wait.entry;
	unsigned gen = r->wait.gen;

	if (board == NULL)
		return 1;
	/* a group is ready when each of its entries is (one entry: next is -1) */
	while (idx >= 0 && idx < board->capacity) {
		const struct wt_entry *e = &board->e[idx];

		if (__atomic_load_n(&e->gen, __ATOMIC_ACQUIRE) != gen)
			return 1; /* given back: nothing left to wait for */
		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == E_WAITING)
			return 0;
		idx = e->next;
		gen = e->next_gen;
	}
	return 1;
}

void wt_release(struct req *r)
{
	if (board != NULL && r->wait.deferred)
		wt_board_give(board, r->wait.entry, r->wait.gen);
	r->wait.deferred = 0;
}

void wt_stats(unsigned long long *polls, unsigned long long *queries, long long *waiting)
{
	*polls = board ? __atomic_load_n(&board->polls, __ATOMIC_RELAXED) : 0;
	*queries = board ? __atomic_load_n(&board->queries, __ATOMIC_RELAXED) : 0;
	*waiting = board ? __atomic_load_n(&board->waiting, __ATOMIC_RELAXED) : 0;
}

/* ---------------------------------------------------------------- the poll */

struct snap {
	long long idx;
	unsigned gen;
	int owner;
	int ready;
	int seen;
	struct wt_cond c;
	char id[WT_ID_MAX];
};

static int snap_cmp(const void *a, const void *b)
{
	const struct snap *x = a, *y = b;
	int sx = wt_source_of(x->c.kind), sy = wt_source_of(y->c.kind);

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Copies the waiting entries, sorted by (source, id); their count. */
static size_t snapshot(struct snap *s)
{
	size_t n = 0;

	lock(board);
	for (long long i = 0; i < board->capacity; i++) {
		const struct wt_entry *e = &board->e[i];

		if (e->state != E_WAITING)
			continue;
		s[n] = (struct snap){ .idx = i, .gen = e->gen, .owner = e->owner };
		memcpy(s[n].id, e->id, sizeof s[n].id);
		s[n].c = (struct wt_cond){ (enum wt_kind)e->kind, s[n].id, e->stream, e->baseline };
		n++;
	}
	unlock(board);
	qsort(s, n, sizeof *s, snap_cmp);
	for (size_t i = 0; i < n; i++)
		s[i].c.id = s[i].id; /* qsort moved them */
	return n;
}

/* Applies one result row to every snapshot entry in [lo, hi) with its id. */
static void apply_row(struct snap *s, size_t lo, size_t hi, const struct db_res *res, size_t row)
{
	const char *id = db_res_s(res, row, "id");
	struct wt_row w = { 1, db_res_s(res, row, "st"), db_res_i(res, row, "n1", 0),
			    db_res_i(res, row, "n2", 0) };
	size_t a = lo, b = hi;

	if (id == NULL)
		return;
	while (a < b) { /* lower bound of id */
		size_t mid = a + (b - a) / 2;
		if (strcmp(s[mid].id, id) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t i = a; i < hi && strcmp(s[i].id, id) == 0; i++) {
		s[i].seen = 1;
		s[i].ready = wt_cond_ready(&s[i].c, &w);
	}
}

/* Queries one source's entries s[lo, hi) in batches of distinct ids. */
static int poll_source(struct db *db, struct snap *s, size_t lo, size_t hi)
{
	static struct db_param p[WT_BATCH_MAX];
	char sql[8192];
	enum wt_source src = wt_source_of(s[lo].c.kind);
	int numeric = wt_source_numeric(src);
	size_t i = lo;

	while (i < hi) {
		size_t n = 0, start = i, pad;
		struct db_res *res;

		for (; i < hi && n < WT_BATCH_MAX; i++)
			if (i == start || strcmp(s[i].id, s[i - 1].id) != 0)
				p[n++] = numeric ? db_i64(strtoll(s[i].id, NULL, 10))
						 : db_str(s[i].id);
		/* i stops after the last entry of the last id taken */
		while (i < hi && strcmp(s[i].id, s[i - 1].id) == 0)
			i++;
		pad = wt_pad_size(n);
		for (size_t k = n; k < pad; k++)
			p[k] = p[n - 1];
		if (wt_query_text(src, pad, sql, sizeof sql) < 0)
			return -1;
		res = db_querya(db, sql, p, pad);
		__atomic_add_fetch(&board->queries, 1, __ATOMIC_RELAXED);
		if (res == NULL)
			return -1;
		for (size_t r = 0; r < db_res_rows(res); r++)
			apply_row(s, start, i, res, r);
		db_res_free(res);
	}
	return 0;
}

int wt_poll(struct db *db)
{
	static struct snap *s;
	unsigned char woke[WT_MAX_WORKERS] = { 0 };
	size_t n, lo;
	int rc = 0;

	if (board == NULL || board->capacity == 0)
		return 0;
	if (s == NULL && (s = calloc((size_t)board->capacity, sizeof *s)) == NULL)
		return -1;
	n = snapshot(s);
	__atomic_add_fetch(&board->polls, 1, __ATOMIC_RELAXED);
	for (lo = 0; lo < n && rc == 0;) {
		size_t hi = lo;
		while (hi < n && wt_source_of(s[hi].c.kind) == wt_source_of(s[lo].c.kind))
			hi++;
		rc = poll_source(db, s, lo, hi);
		lo = hi;
	}
	if (rc < 0)
		return -1;
	lock(board);
	for (size_t i = 0; i < n; i++) {
		struct wt_entry *e = &board->e[s[i].idx];

		/* no row at all: ready too (the handler answers 404) */
		if (s[i].seen && !s[i].ready)
			continue;
		if (e->gen != s[i].gen || e->state != E_WAITING)
			continue;
		__atomic_store_n(&e->state, E_READY, __ATOMIC_RELEASE);
		if (e->owner >= 0 && e->owner < WT_MAX_WORKERS)
			woke[e->owner] = 1;
	}
	unlock(board);
	for (int w = 0; w < board->workers; w++) {
		unsigned long long one = 1;
		if (woke[w] && board->wake[w] >= 0 && write(board->wake[w], &one, sizeof one) < 0 &&
		    errno != EAGAIN)
			log_kv("warn", "wait_wake", "error", strerror(errno), (char *)NULL);
	}
	return 0;
}
