/* The dispatcher's forked helpers, one pool for both kinds: pre-forked supervisors
 * (spare.h) and prewarm holders (warm.h). A helper is forked from the dispatcher
 * (no exec), detached like a launched supervisor (double fork, setsid: it belongs
 * to no dispatcher), keeps only the descriptors it is given, and talks over its end
 * of a SOCK_SEQPACKET socketpair: "R" when it is ready; the end of the socket, read
 * by it, says the dispatcher went away or wants it gone. */
#ifndef SANDBOX_HELPER_H
#define SANDBOX_HELPER_H

#include "config.h"

#define HELPER_MAX 256

struct helper_pool {
	int fd[HELPER_MAX];    /* the dispatcher's end of each helper's socketpair */
	int slot[HELPER_MAX];  /* the job slot a holder holds (a spare: -1) */
	int ready[HELPER_MAX]; /* it said "R": it waits */
	int n;
	double next_spawn;     /* monotonic ms: no fork before */
	const char *config_path;
};

/* What a forked helper starts from. */
struct helper_start {
	const struct cfg *cfg;
	const char *config_path;
	int slot;   /* a holder's job slot; a spare: -1 */
	int lockfd; /* a holder: the slot's lock (the caller closes its own); a spare: -1 */
};

void hp_init(struct helper_pool *p, const char *config_path);
/* Forgets helper i (closing our end: an idle helper reads the end and exits). */
void hp_drop(struct helper_pool *p, int i);
/* Forks one helper: in it, place(sock, h) puts its descriptors where it wants them
 * (every other one closed: hp_close_from) and run(h) never returns. 0 (added, not
 * ready yet), or -1. */
int hp_fork(struct helper_pool *p, const struct helper_start *h,
	    int (*place)(int sock, const struct helper_start *h),
	    void (*run)(const struct helper_start *h));
/* Reads helper i's "R" without waiting: 1 ready, 0 not yet, -1 gone. */
int hp_check_ready(struct helper_pool *p, int i);
/* Forgets the helpers (only the ready ones, with only_ready) that closed their
 * socket: they died while idle. */
void hp_prune(struct helper_pool *p, int only_ready);
/* The dispatcher stops: every idle helper sees the end of its socket. */
void hp_close_all(struct helper_pool *p);
/* In a helper: closes every descriptor from fd on. */
void hp_close_from(int fd);

#endif
