#include "outcome.h"

#include <signal.h>
#include <stddef.h>

static void set(struct outcome *o, const char *state, int code, int sig, const char *diag)
{
	o->state = state;
	o->exit_code = code;
	o->signal = sig;
	o->diagnostic = diag;
}

void outcome_map(const struct outcome_in *in, struct outcome *o)
{
	/* bwrap reports death by signal N as 128+N, like a shell. A command that
	 * itself exits with 129..192 is indistinguishable; we report it as a signal. */
	int sig = in->status_known && in->code > 128 && in->code <= 128 + 64 ? in->code - 128 : 0;

	switch (in->reason) {
	case STOP_WALL:
		set(o, "timed_out", 124, 0, "command timed out");
		return;
	case STOP_OUTPUT:
		set(o, "output_limit", 122, 0, "command output limit exceeded");
		return;
	case STOP_CANCEL:
		set(o, "cancelled", 128 + SIGKILL, SIGKILL, "command cancelled");
		return;
	case STOP_PIDS:
		set(o, "resource_limit", 128 + SIGKILL, SIGKILL,
		    "command exceeded pids resource limit");
		return;
	case STOP_CPU:
		set(o, "resource_limit", sig ? 128 + sig : 128 + SIGKILL, sig ? sig : SIGKILL,
		    "command exceeded cpu resource limit");
		return;
	case STOP_MEMORY:
		set(o, "resource_limit", sig ? 128 + sig : 128 + SIGKILL, sig ? sig : SIGKILL,
		    "command exceeded memory resource limit");
		return;
	case STOP_NONE:
		break;
	}
	if (!in->status_known && in->oom_kills > 0) {
		/* the OOM killer took bwrap itself (tmpfs pages cannot be reclaimed) */
		set(o, "resource_limit", 128 + SIGKILL, SIGKILL,
		    "command exceeded memory resource limit");
		return;
	}
	if (!in->status_known) {
		set(o, "error", 125, 0, "sandbox did not report an exit status");
		return;
	}
	if (in->pids_denied > 0) {
		/* A fork was refused. Even if the command's first process exited by itself,
		 * the rest of the job was killed with the sandbox: 128+N (DESIGN.md 5). */
		set(o, "resource_limit", sig ? in->code : 128 + SIGKILL, sig ? sig : SIGKILL,
		    "command exceeded pids resource limit");
		return;
	}
	if (in->oom_kills > 0) {
		/* the OOM killer hit some process of the job: report the code we saw */
		set(o, "resource_limit", in->code, sig, "command exceeded memory resource limit");
		return;
	}
	if (sig == SIGXCPU) {
		set(o, "resource_limit", in->code, sig, "command exceeded cpu resource limit");
		return;
	}
	set(o, in->code == 0 ? "succeeded" : "failed", in->code, sig, NULL);
}
