/* sandbox get, list, cancel, runtimes (see clijobs.h). */
#include "clijobs.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cliargs.h"
#include "clihttp.h"
#include "climsg.h"
#include "clireq.h"
#include "strbuf.h"
#include "util.h"

int cli_get(int argc, char **argv)
{
	char path[128];
	long wait = -1;
	json_t *j;
	const char *id = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
			long long w;

			if (util_parse_ll(argv[++i], 0, 30, &w) < 0)
				return cli_usage("get: --wait takes 0..30 seconds");
			wait = (long)w;
		} else if (!id && argv[i][0] != '-') {
			id = argv[i];
		} else {
			return cli_usage("get: unexpected argument %s", argv[i]);
		}
	}
	if (cli_need_id("get", id))
		return CLI_EXIT_USAGE;
	if (wait >= 0)
		snprintf(path, sizeof path, "/v1/jobs/%s?wait=%ld", id, wait);
	else
		snprintf(path, sizeof path, "/v1/jobs/%s", id);
	if (!(j = ch_json("GET", path, NULL, 60, 200, 0)))
		return CLI_EXIT_API;
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	putchar('\n');
	json_decref(j);
	return 0;
}

int cli_list(int argc, char **argv)
{
	struct strbuf path = STRBUF_INIT;
	struct cli_page pg = { .limit = 20 };
	json_t *j, *jobs, *job;
	size_t k;

	for (int i = 1; i < argc; i++) {
		int r = cli_page_opt("list", argc, argv, &i, &pg);

		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r == 0)
			return cli_usage("list: unexpected argument %s", argv[i]);
	}
	cli_page_path(&path, "/v1/jobs", &pg);
	j = ch_json("GET", path.buf, NULL, 60, 200, 0);
	sb_release(&path);
	if (!j)
		return CLI_EXIT_API;
	jobs = json_object_get(j, "jobs");
	json_array_foreach(jobs, k, job) {
		json_t *ec = json_object_get(json_object_get(job, "result"), "exit_code");

		if (json_is_integer(ec))
			printf("%s\t%s\t%lld\t%s\n", cli_jstr(job, "id"), cli_jstr(job, "status"),
			       (long long)json_integer_value(ec), cli_jstr(job, "created_at"));
		else
			printf("%s\t%s\t-\t%s\n", cli_jstr(job, "id"), cli_jstr(job, "status"),
			       cli_jstr(job, "created_at"));
	}
	if (cli_jstr(j, "next_cursor"))
		cli_say("more: sandbox list --cursor %s", cli_jstr(j, "next_cursor"));
	json_decref(j);
	return 0;
}

int cli_cancel(int argc, char **argv)
{
	return cli_post_id("cancel", argc, argv, "/v1/jobs", "cancel", 30, 0);
}

int cli_runtimes(int argc, char **argv)
{
	json_t *j, *rt, *al;
	size_t k, m;

	(void)argv;
	if (argc != 1)
		return cli_usage("runtimes: takes no arguments");
	if (!(j = ch_json("GET", "/v1/runtimes", NULL, 60, 200, 0)))
		return CLI_EXIT_API;
	/* name, version (- when none), aliases (comma-separated, - when none), source
	 * file name, compiled or interpreted */
	json_array_foreach(json_object_get(j, "runtimes"), k, rt) {
		printf("%s	%s	", cli_jstr(rt, "name") ? cli_jstr(rt, "name") : "?",
		       cli_jstr(rt, "version") ? cli_jstr(rt, "version") : "-");
		if (json_array_size(json_object_get(rt, "aliases")) == 0)
			fputs("-", stdout);
		json_array_foreach(json_object_get(rt, "aliases"), m, al)
			printf("%s%s", m ? "," : "", json_string_value(al) ? json_string_value(al) : "?");
		printf("\t%s\t%s\n", cli_jstr(rt, "file") ? cli_jstr(rt, "file") : "-",
		       json_is_true(json_object_get(rt, "compiled")) ? "compiled" : "interpreted");
	}
	json_decref(j);
	return 0;
}
