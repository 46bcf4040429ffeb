/* Waiting for a job's or command's end (see cliwait.h). */
#include "cliwait.h"

#include <signal.h>
#include <string.h>

#include "cliargs.h"
#include "climsg.h"
#include "util.h"

int cli_verbose;

static volatile sig_atomic_t got_signal;
static void on_signal(int sig)
{
	got_signal = sig;
	ch_interrupted = 1;
}

void cli_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int cli_settled(const char *st)
{
	return st && strcmp(st, "queued") != 0 && strcmp(st, "running") != 0;
}

static const char *status_of(const json_t *o)
{
	return json_string_value(json_object_get(o, "status"));
}

json_t *cli_wait_status(const char *path, json_t *cur, int (*ended)(const char *status),
			int tries, int pause_ms)
{
	for (int n = 0; n < tries && !(cur && ended(status_of(cur))); n++) {
		json_decref(cur);
		if (!(cur = ch_json("GET", path, NULL, 60, 200, 0)))
			return NULL;
		if (pause_ms > 0 && !ended(status_of(cur)))
			util_sleep_ms(pause_ms); /* no long-poll slot was free: do not spin */
	}
	return cur;
}

int cli_follow_end(ch_url_fn url_of, const void *ctx, int (*interrupted)(const void *ctx),
		   int (*outcome)(const void *ctx))
{
	int rc;

	cli_catch_signals();
	rc = ch_follow(url_of, ctx);
	if (rc == -2)
		return interrupted(ctx);
	if (rc == 0)
		return outcome(ctx);
	return rc;
}

void cli_print_diagnostics(const json_t *list, const char *status)
{
	size_t i;
	json_t *d;

	if (!cli_verbose && status &&
	    (strcmp(status, "succeeded") == 0 || strcmp(status, "failed") == 0))
		return;
	json_array_foreach(list, i, d)
		if (json_is_string(d))
			cli_say("%s", json_string_value(d));
}

int cli_exit_code(const json_t *holder, const char *what, const char *id, const char *status)
{
	const json_t *ec = json_object_get(holder, "exit_code");

	if (!json_is_integer(ec))
		cli_say("%s %s ended %s without an exit code", what, id, status ? status : "?");
	return cli_exit_for(json_is_integer(ec), json_integer_value(ec));
}
