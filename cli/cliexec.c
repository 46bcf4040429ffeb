/* sandbox session exec, output, kill (see cliexec.h). */
#include "cliexec.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cliargs.h"
#include "clihttp.h"
#include "climsg.h"
#include "clireq.h"
#include "cliupload.h"
#include "cliwait.h"
#include "strbuf.h"
#include "util.h"

struct cmd_ref {
	const char *sid, *cid;
};

static int cmd_url(struct strbuf *sb, const void *ctx, const char *stream, long long off,
		   int wait)
{
	const struct cmd_ref *c = ctx;

	sb_addf(sb, "/v1/sessions/%s/commands/%s/output?stream=%s&offset=%lld&limit=1048576"
		"&encoding=base64&wait=%d", c->sid, c->cid, stream, off, wait);
	return sb->failed ? -1 : 0;
}

/* Waits for the command's end and returns the exit code to leave with. */
static int command_outcome(const void *ctx)
{
	const struct cmd_ref *c = ctx;
	char path[192];
	json_t *cmd;
	const char *st;
	int rc;

	snprintf(path, sizeof path, "/v1/sessions/%s/commands/%s?wait=30", c->sid, c->cid);
	if (!(cmd = cli_wait_status(path, NULL, cli_settled, 1000, 200)))
		return CLI_EXIT_API;
	st = cli_jstr(cmd, "status");
	cli_print_diagnostics(json_object_get(cmd, "diagnostics"), st);
	rc = cli_exit_code(cmd, "command", c->cid, st);
	json_decref(cmd);
	return rc;
}

static int interrupted_command(const void *ctx)
{
	const struct cmd_ref *c = ctx;
	char path[192];
	json_t *j, *body = json_pack("{s:s}", "signal", "KILL");

	snprintf(path, sizeof path, "/v1/sessions/%s/commands/%s/kill", c->sid, c->cid);
	j = ch_json("POST", path, body, 30, 202, 0);
	cli_say("interrupted: command %s %s", c->cid, j ? "killed" : "may still be running");
	json_decref(j);
	json_decref(body);
	return 130;
}

/* The value option of session exec's own (the shared ones are clireq's). */
static int exec_opt(json_t *req, const char *o, const char *v)
{
	long long n;

	if (strcmp(o, "--timeout") != 0)
		return -1;
	if (util_parse_ll(v, 0, 1LL << 40, &n) < 0)
		return cli_usage("session exec: --timeout takes seconds");
	json_object_set_new(req, "timeout_seconds", json_integer(n));
	return 0;
}

static const struct cli_submit exec_opts = { "session exec", 0, exec_opt };

int cli_session_exec(int argc, char **argv)
{
	json_t *req = json_object(), *cmd = NULL, *av;
	const char *sid;
	struct cmd_ref c;
	char path[128], cid[64];
	int i = 1, rc = 0, detach = 0;

	/* The flags without a value may also come before the ID. */
	for (; i < argc && (strcmp(argv[i], "--detach") == 0 || strcmp(argv[i], "-v") == 0); i++)
		*(argv[i][1] == 'v' ? &cli_verbose : &detach) = 1;
	sid = i < argc ? argv[i] : NULL;
	if (cli_need_id("session exec", sid)) {
		json_decref(req);
		return CLI_EXIT_USAGE;
	}
	if ((i = cli_submit_opts(&exec_opts, argc, argv, i + 1, req, &detach, &rc)) < 0)
		goto out;
	if (i >= argc) {
		rc = cli_usage("session exec: no command (sandbox session exec ID -- CMD [ARGS...])");
		goto out;
	}
	if (!(av = cli_argv_array(argc - i, argv + i)) || json_object_set_new(req, "argv", av)) {
		rc = cli_usage("session exec: the command's arguments must be UTF-8 text");
		goto out;
	}
	snprintf(path, sizeof path, "/v1/sessions/%s/commands", sid);
	if (!(cmd = cli_post_streamed(path, req, 202, 0))) {
		rc = CLI_EXIT_API;
		goto out;
	}
	if ((rc = cli_created_id(cmd, "command", cid)) != 0)
		goto out;
	if (detach) {
		/* The pid names the command to session output / kill; -v adds its id. */
		if (!json_is_integer(json_object_get(cmd, "pid"))) {
			cli_say("the API's answer has no pid");
			rc = CLI_EXIT_API;
			goto out;
		}
		printf("%lld\n", (long long)json_integer_value(json_object_get(cmd, "pid")));
		if (cli_verbose)
			cli_say("command %s", cid);
		goto out;
	}
	c.sid = sid;
	c.cid = cid;
	rc = cli_follow_end(cmd_url, &c, interrupted_command, command_outcome);
out:
	cli_attach_release();
	json_decref(cmd);
	json_decref(req);
	return rc;
}

/* The session ID and command PID that cmd (session kill, session output) names: the
 * session id checked, the command named by its pid (1, 2, ...) or its id, its id into
 * cid. 0, or an exit code (error printed; a missing PID's message shows synopsis). */
static int resolve_cmd(const char *cmd, const char *synopsis, const char *sid,
		       const char *ref, char cid[64])
{
	char path[160];
	long long pid;
	json_t *j, *first;

	if (cli_need_id(cmd, sid))
		return CLI_EXIT_USAGE;
	if (!ref)
		return cli_usage("%s: expected %s", cmd, synopsis);
	if (cli_is_id(ref)) {
		snprintf(cid, 64, "%s", ref);
		return 0;
	}
	if (util_parse_ll(ref, 1, 2147483647, &pid) < 0)
		return cli_usage("PID must be a command's pid (1, 2, ...) or its id");
	snprintf(path, sizeof path, "/v1/sessions/%s/commands?pid=%lld", sid, pid);
	if (!(j = ch_json("GET", path, NULL, 60, 200, 0)))
		return CLI_EXIT_API;
	first = json_array_get(json_object_get(j, "commands"), 0);
	if (!cli_jstr(first, "id") || !cli_is_id(cli_jstr(first, "id"))) {
		cli_say("session %s has no command with pid %lld", sid, pid);
		json_decref(j);
		return CLI_EXIT_API;
	}
	snprintf(cid, 64, "%s", cli_jstr(first, "id"));
	json_decref(j);
	return 0;
}

int cli_session_kill(int argc, char **argv)
{
	const char *sid = NULL, *ref = NULL, *sig = "TERM";
	char path[192], cid[64];
	json_t *body, *j;
	long long n;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--signal") == 0 && i + 1 < argc)
			sig = argv[++i];
		else if (!sid && argv[i][0] != '-')
			sid = argv[i];
		else if (!ref && argv[i][0] != '-')
			ref = argv[i];
		else
			return cli_usage("session kill: unexpected argument %s", argv[i]);
	}
	if ((rc = resolve_cmd("session kill", "ID PID [--signal NAME]", sid, ref, cid)) != 0)
		return rc;
	/* A number is a signal number; a name goes as it is (the API names the valid ones). */
	body = util_parse_ll(sig, 1, 64, &n) == 0 ? json_pack("{s:I}", "signal", (json_int_t)n)
						  : json_pack("{s:s}", "signal", sig);
	snprintf(path, sizeof path, "/v1/sessions/%s/commands/%s/kill", sid, cid);
	j = body ? ch_json("POST", path, body, 60, 202, 0) : NULL;
	json_decref(body);
	if (!j)
		return CLI_EXIT_API;
	printf("%s\t%s\n", cid, cli_jstr(j, "status") ? cli_jstr(j, "status") : "?");
	json_decref(j);
	return 0;
}

int cli_session_output(int argc, char **argv)
{
	const char *sid = NULL, *ref = NULL;
	long long off[2] = { 0, 0 }, n;
	int follow = 0, streams = 3, rc;
	char cid[64];
	struct cmd_ref c;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--follow") == 0 || strcmp(argv[i], "-F") == 0) {
			follow = 1;
		} else if (strcmp(argv[i], "--offset") == 0 && i + 1 < argc) {
			if (util_parse_ll(argv[++i], 0, 1LL << 50, &n) < 0)
				return cli_usage("session output: --offset takes a byte offset (0 or more)");
			off[0] = off[1] = n;
		} else if (strcmp(argv[i], "--stream") == 0 && i + 1 < argc) {
			i++;
			if (strcmp(argv[i], "stdout") == 0)
				streams = 1;
			else if (strcmp(argv[i], "stderr") == 0)
				streams = 2;
			else
				return cli_usage("session output: --stream is stdout or stderr");
		} else if (!sid && argv[i][0] != '-') {
			sid = argv[i];
		} else if (!ref && argv[i][0] != '-') {
			ref = argv[i];
		} else {
			return cli_usage("session output: unexpected argument %s", argv[i]);
		}
	}
	if ((rc = resolve_cmd("session output", "ID PID [--follow] [--offset N]", sid, ref,
			      cid)) != 0)
		return rc;
	c.sid = sid;
	c.cid = cid;
	if (follow)
		cli_catch_signals();
	rc = ch_follow_from(cmd_url, &c, streams, off, follow);
	if (rc == -2)
		return 130; /* interrupted: the command goes on (it was not ours) */
	if (rc == 0 && follow)
		rc = command_outcome(&c);
	return rc;
}
