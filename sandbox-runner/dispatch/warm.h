/* Prewarmed sandboxes (runner_warm_sandboxes, daemon only): a holder per free job
 * slot, forked from the dispatcher like a spare (spare.h), holding the slot's lock,
 * with the slot prepared and bwrap started on the exec stub (holder.h, stub.c), in
 * one pool of forked helpers with the spares' (helper.h). A claimed job goes to a
 * ready holder, which becomes its supervisor; each sandbox serves one job and is
 * never reused. */
#ifndef SANDBOX_WARM_H
#define SANDBOX_WARM_H

#include "config.h"
#include "helper.h"

#define WARM_MAX HELPER_MAX

struct warm_pool {
	struct helper_pool h; /* the holders: slot[] is the job slot each holds */
	double backoff_ms;    /* the wait after the last failed holder, 0: none failed */
};

void warm_init(struct warm_pool *p, const char *config_path);
/* Whether a holder of ours holds slot. */
int warm_holds(const struct warm_pool *p, int slot);
/* Forks a holder for slot, whose lock the caller took (lockfd: the holder keeps a
 * copy; the caller closes its own). 0, or -1 (rate-limited or fork failed). */
int warm_spawn(struct warm_pool *p, const struct cfg *cfg, int slot, int lockfd);
/* The index of a ready holder of slot, or -1 (none, not ready yet, or gone: a gone
 * one is forgotten). */
int warm_ready(struct warm_pool *p, int slot);
/* Forgets ready holders that have ended by themselves (a sandbox that died idle). */
void warm_prune(struct warm_pool *p);
/* Hands a claimed job to holder i: 0 it took it, -1 it was gone (its slot comes free
 * once it has cleaned up: the caller runs the job cold there). The holder is
 * forgotten either way. */
int warm_hand(struct warm_pool *p, int i, const char *id, const char *runner_id);
/* Asks one holder to give its slot back (the runtimes probe needs a free slot): 0,
 * or -1 when there is none. */
int warm_stand_down(struct warm_pool *p);
/* The dispatcher stops: idle holders see the end of their socket, kill their
 * sandbox, clean their slot and exit. */
void warm_close_all(struct warm_pool *p);

#endif
