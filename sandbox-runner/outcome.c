#include "outcome.h"

#include <signal.h>
#include <stddef.h>

/* The row for a job that ran (or was stopped). */
static enum job_outcome run_row(const struct outcome_in *in)
{
	int sig = in->status_known && in->code > 128 && in->code <= 128 + 64 ? in->code - 128 : 0;

	switch (in->reason) {
	case STOP_WALL: return JO_TIMED_OUT;
	case STOP_OUTPUT: return JO_OUTPUT_LIMIT;
	case STOP_CANCEL: return JO_CANCELLED;
	case STOP_PIDS: return JO_PIDS;
	case STOP_CPU: return JO_CPU;
	case STOP_MEMORY: return JO_MEMORY;
	case STOP_NONE: break;
	}
	if (!in->status_known)
		/* with an OOM kill, it took bwrap itself (tmpfs pages cannot be reclaimed) */
		return in->oom_kills > 0 ? JO_MEMORY : JO_NO_STATUS;
	/* A fork was refused. Even if the command's first process exited by itself,
	 * the rest of the job was killed with the sandbox: 128+N (DESIGN.md 5). */
	if (in->pids_denied > 0)
		return JO_PIDS_SEEN;
	/* the OOM killer hit some process of the job: report the code we saw */
	if (in->oom_kills > 0)
		return JO_MEMORY_SEEN;
	if (sig == SIGXCPU)
		return JO_CPU;
	return in->code == 0 ? JO_SUCCEEDED : JO_FAILED;
}

static void fill(struct outcome *o, enum job_outcome row, const struct outcome_in *in)
{
	o->state = js_outcome(row)->state;
	o->diagnostic = js_outcome(row)->diagnostic;
	js_exit_code(row, in->status_known, in->code, &o->exit_code, &o->signal);
}

void outcome_map(const struct outcome_in *in, struct outcome *o)
{
	if (in->stage != STAGE_NONE) {
		fill(o, in->stage == STAGE_POLICY ? JO_BLOCKED : JO_SETUP_FAILED, in);
		o->diagnostic = NULL;
		return;
	}
	fill(o, run_row(in), in);
	if (in->cleanup_failed) {
		/* the run's own diagnostic still stands; the job is an error */
		const char *d = o->diagnostic;
		fill(o, JO_CLEANUP_FAILED, in);
		o->diagnostic = d;
	}
}
