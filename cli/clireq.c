/* Arguments into requests, shared by the commands (see clireq.h). */
#include "clireq.h"

#include <stdio.h>
#include <string.h>

#include "cliargs.h"
#include "clihttp.h"
#include "climsg.h"
#include "cliupload.h"
#include "cliwait.h"
#include "util.h"

const char *cli_jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

int cli_created_id(const json_t *answer, const char *what, char id[64])
{
	const char *s = cli_jstr(answer, "id");

	if (!s || !cli_is_id(s)) {
		cli_say("the API's answer has no %s id", what);
		return CLI_EXIT_API;
	}
	snprintf(id, 64, "%s", s);
	return 0;
}

int cli_need_id(const char *cmd, const char *id)
{
	if (!id)
		return cli_usage("%s: missing ID", cmd);
	if (!cli_is_id(id))
		return cli_usage("%s: not a job or session id (a lower-case UUID)", cmd);
	return 0;
}

int cli_parse_limit_into(json_t *req, const char *val)
{
	char name[64];
	long long v;
	const char *why;
	json_t *lim = json_object_get(req, "limits");

	if (cli_parse_limit(val, name, &v, &why) < 0)
		return cli_usage("--limit %s: %s", val, why);
	if (!lim) {
		lim = json_object();
		json_object_set_new(req, "limits", lim);
	}
	json_object_set_new(lim, name, json_integer(v));
	return 0;
}

int cli_common_opt(json_t *req, const char *opt, const char *val, int *used)
{
	*used = 1;
	if (strcmp(opt, "--env") == 0) {
		const char *why;
		size_t n;
		json_t *env = json_object_get(req, "env");
		char name[256];

		if (cli_parse_env(val, &n, &why) < 0)
			return cli_usage("--env: %s", why);
		if (!env) {
			env = json_object();
			json_object_set_new(req, "env", env);
		}
		memcpy(name, val, n);
		name[n] = '\0';
		if (json_object_set_new(env, name, json_string(val + n + 1)))
			return cli_usage("--env %s: the value must be UTF-8 text", name);
		return 0;
	}
	if (strcmp(opt, "--stdin") == 0)
		return cli_attach_b64(req, "stdin_base64", val, NULL);
	if (strcmp(opt, "--cwd") == 0) {
		json_object_set_new(req, "cwd", json_string(val));
		return 0;
	}
	*used = 0;
	return 0;
}

json_t *cli_argv_array(int argc, char **argv)
{
	json_t *a = json_array();

	for (int i = 0; a && i < argc; i++)
		if (json_array_append_new(a, json_string(argv[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

int cli_submit_opts(const struct cli_submit *s, int argc, char **argv, int i, json_t *req,
		    int *detach, int *rc)
{
	*rc = 0;
	for (; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int used;

		if (strcmp(o, "--") == 0)
			return i + 1;
		if (o[0] != '-')
			break;
		if (s->network && strcmp(o, "--network") == 0) {
			json_object_set_new(req, "network", json_true());
			continue;
		}
		if (strcmp(o, "--detach") == 0) {
			*detach = 1;
			continue;
		}
		if (strcmp(o, "-v") == 0) {
			cli_verbose = 1;
			continue;
		}
		if (!v) {
			*rc = cli_usage("%s: %s needs a value", s->cmd, o);
			return -1;
		}
		i++;
		if ((*rc = s->own(req, o, v)) == -1 &&
		    (*rc = cli_common_opt(req, o, v, &used)) == 0 && !used)
			*rc = cli_usage("%s: unknown option %s", s->cmd, o);
		if (*rc)
			return -1;
	}
	return i;
}

int cli_page_opt(const char *cmd, int argc, char **argv, int *i, struct cli_page *p)
{
	const char *o = argv[*i];

	if (*i + 1 >= argc)
		return 0;
	if (strcmp(o, "--limit") == 0) {
		if (util_parse_ll(argv[++*i], 1, 100, &p->limit) < 0) {
			cli_usage("%s: --limit takes 1..100", cmd);
			return -1;
		}
	} else if (strcmp(o, "--status") == 0) {
		p->status = argv[++*i];
	} else if (strcmp(o, "--cursor") == 0) {
		p->cursor = argv[++*i];
	} else {
		return 0;
	}
	return 1;
}

void cli_page_path(struct strbuf *sb, const char *path, const struct cli_page *p)
{
	sb_addf(sb, "%s?limit=%lld", path, p->limit);
	if (p->status) {
		sb_adds(sb, "&status=");
		ch_escape(sb, p->status, 0);
	}
	if (p->cursor) {
		sb_adds(sb, "&cursor=");
		ch_escape(sb, p->cursor, 0);
	}
}

int cli_post_id(const char *cmd, int argc, char **argv, const char *base, const char *verb,
		long timeout_s, long ok2)
{
	char path[128];
	json_t *j;

	if (argc != 2)
		return cli_usage("%s: expected exactly one ID", cmd);
	if (cli_need_id(cmd, argv[1]))
		return CLI_EXIT_USAGE;
	snprintf(path, sizeof path, "%s/%s/%s", base, argv[1], verb);
	if (!(j = ch_json("POST", path, NULL, timeout_s, 200, ok2)))
		return CLI_EXIT_API;
	printf("%s\t%s\n", argv[1], cli_jstr(j, "status"));
	json_decref(j);
	return 0;
}
