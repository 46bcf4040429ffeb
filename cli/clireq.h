/* What the commands of `sandbox` share to turn arguments into requests: id checks,
 * the options of run and session exec (--env, --stdin, --cwd, --limit, --detach, -v),
 * the argv array, the paging options of the list commands, and the one-ID POST of
 * cancel and session close. */
#ifndef SANDBOX_CLIREQ_H
#define SANDBOX_CLIREQ_H

#include <jansson.h>

#include "strbuf.h"

/* A string member of o, or NULL. */
const char *cli_jstr(const json_t *o, const char *k);

/* The id of what a POST created (what: "job", "command", "session") copied into id:
 * 0, or CLI_EXIT_API when the answer has none (error printed). */
int cli_created_id(const json_t *answer, const char *what, char id[64]);

/* 0 when id is a job or session id, else the usage error (printed, naming cmd). */
int cli_need_id(const char *cmd, const char *id);

/* --limit NAME=VALUE into req.limits. 0, or the usage error (printed). */
int cli_parse_limit_into(json_t *req, const char *val);

/* --env NAME=VALUE, --stdin FILE|-, --cwd DIR into req: *used 0 when opt is none of
 * them. 0, or an exit code (error printed). */
int cli_common_opt(json_t *req, const char *opt, const char *val, int *used);

/* argc strings as a JSON array, or NULL (one is not UTF-8). */
json_t *cli_argv_array(int argc, char **argv);

/* The options of run and session exec, from argv[i] on: the flags --detach, -v (and
 * --network where the command has it), the value options of the command's own
 * callback (it returns -1 for an option not its own, else 0 or an exit code), then
 * --env, --stdin, --cwd. Stops after "--" or at the first word that is not an option.
 * The index of the command's first word, or -1 with *rc the exit code (error printed,
 * the message naming cmd). */
struct cli_submit {
	const char *cmd; /* "run", "session exec" */
	int network;     /* --network is one of its flags */
	int (*own)(json_t *req, const char *opt, const char *val);
};
int cli_submit_opts(const struct cli_submit *s, int argc, char **argv, int i, json_t *req,
		    int *detach, int *rc);

/* The paging options of a list command: --limit N (1..100), --status S, --cursor C. */
struct cli_page {
	long long limit;
	const char *status, *cursor;
};

/* argv[*i] as a paging option: 1 when it is one (*i moved past its value), 0 when it
 * is not, -1 on a bad value (the usage error printed, naming cmd). */
int cli_page_opt(const char *cmd, int argc, char **argv, int *i, struct cli_page *p);

/* path?limit=N[&status=S][&cursor=C], the values percent-encoded, appended to sb. */
void cli_page_path(struct strbuf *sb, const char *path, const struct cli_page *p);

/* cancel ID, session close ID: POST base/ID/verb (answered ok1 or ok2), then
 * "ID<TAB>status" on stdout. 0, or an exit code (error printed). */
int cli_post_id(const char *cmd, int argc, char **argv, const char *base, const char *verb,
		long timeout_s, long ok2);

#endif
