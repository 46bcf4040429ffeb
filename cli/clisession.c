/* sandbox session create, list, close and the subcommand table (see clisession.h). */
#include "clisession.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cliargs.h"
#include "cliexec.h"
#include "clifiles.h"
#include "clihttp.h"
#include "climsg.h"
#include "clireq.h"
#include "cliwait.h"
#include "strbuf.h"
#include "util.h"

/* A session that is no longer starting (a missing status counts as that too). */
static int not_starting(const char *st)
{
	return !st || strcmp(st, "starting") != 0;
}

static int session_create(int argc, char **argv)
{
	json_t *req = json_object(), *s = NULL;
	int rc = 0, nowait = 0, used;
	const char *st;
	char id[64], path[128];

	for (int i = 1; i < argc && !rc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long long n;

		if (strcmp(o, "--network") == 0) {
			json_object_set_new(req, "network", json_true());
		} else if (strcmp(o, "--no-wait") == 0) {
			nowait = 1;
		} else if (!v) {
			rc = cli_usage("session create: unexpected argument %s", o);
		} else if (i++, strcmp(o, "--limit") == 0) {
			rc = cli_parse_limit_into(req, v);
		} else if (strcmp(o, "--idle") == 0 || strcmp(o, "--max") == 0) {
			if (util_parse_ll(v, 1, 1LL << 40, &n) < 0)
				rc = cli_usage("session create: %s takes a number of seconds", o);
			else
				json_object_set_new(req, o[2] == 'i' ? "idle_seconds" : "max_seconds",
						    json_integer(n));
		} else if (strcmp(o, "--env") != 0 ||
			   (rc = cli_common_opt(req, o, v, &used)) != 0 || !used) {
			if (!rc)
				rc = cli_usage("session create: unknown option %s", o);
		}
	}
	if (rc)
		goto out;
	if (!(s = ch_json("POST", "/v1/sessions", req, 60, 201, 0))) {
		rc = CLI_EXIT_API;
		goto out;
	}
	if ((rc = cli_created_id(s, "session", id)) != 0)
		goto out;
	printf("%s\n", id);
	fflush(stdout);
	if (!nowait) {
		snprintf(path, sizeof path, "/v1/sessions/%s?wait=30", id);
		if (!(s = cli_wait_status(path, s, not_starting, 4, 0))) {
			rc = CLI_EXIT_API;
			goto out;
		}
	}
	st = cli_jstr(s, "status");
	if (!nowait && (!st || strcmp(st, "ready") != 0)) {
		cli_say("session %s is %s%s%s", cli_jstr(s, "id"), st ? st : "?",
			cli_jstr(s, "end_reason") ? ": " : "",
			cli_jstr(s, "end_reason") ? cli_jstr(s, "end_reason") : "");
		rc = CLI_EXIT_API;
	}
out:
	json_decref(s);
	json_decref(req);
	return rc;
}

static int session_list(int argc, char **argv)
{
	struct strbuf path = STRBUF_INIT;
	struct cli_page pg = { .limit = 20 };
	int all = 0, rc = 0;
	char *next = NULL;

	for (int i = 1; i < argc; i++) {
		int r = cli_page_opt("session list", argc, argv, &i, &pg);

		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r == 0 && strcmp(argv[i], "--all") == 0)
			all = 1;
		else if (r == 0)
			return cli_usage("session list: unexpected argument %s", argv[i]);
	}
	for (int page = 0; page < 100000; page++) {
		json_t *j, *one;
		size_t k;

		sb_reset(&path);
		cli_page_path(&path, "/v1/sessions", &pg);
		if (!(j = ch_json("GET", path.buf, NULL, 60, 200, 0))) {
			rc = CLI_EXIT_API;
			break;
		}
		json_array_foreach(json_object_get(j, "sessions"), k, one)
			printf("%s\t%s\t%s\n", cli_jstr(one, "id") ? cli_jstr(one, "id") : "?",
			       cli_jstr(one, "status") ? cli_jstr(one, "status") : "?",
			       cli_jstr(one, "created_at") ? cli_jstr(one, "created_at") : "-");
		free(next);
		next = cli_jstr(j, "next_cursor") ? strdup(cli_jstr(j, "next_cursor")) : NULL;
		json_decref(j);
		pg.cursor = next;
		if (!next)
			break;
		if (!all) {
			/* stderr: stdout stays one line per session */
			cli_say("more: sandbox session list --cursor %s", next);
			break;
		}
	}
	fflush(stdout);
	free(next);
	sb_release(&path);
	return rc;
}

static int session_close(int argc, char **argv)
{
	return cli_post_id("session close", argc, argv, "/v1/sessions", "close", 120, 202);
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
} subcommands[] = {
	{ "create", session_create },
	{ "exec", cli_session_exec },
	{ "ls", cli_session_ls },
	{ "cp", cli_session_cp },
	{ "close", session_close },
	{ "list", session_list },
	{ "kill", cli_session_kill },
	{ "output", cli_session_output },
};

int cli_session(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage("session: expected create, list, exec, output, kill, ls, cp or close");
	for (size_t k = 0; k < sizeof subcommands / sizeof subcommands[0]; k++)
		if (strcmp(argv[1], subcommands[k].name) == 0)
			return subcommands[k].fn(argc - 1, argv + 1);
	return cli_usage("session: unknown subcommand %s", argv[1]);
}
