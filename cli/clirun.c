/* sandbox run (see clirun.h). */
#include "clirun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cliargs.h"
#include "clihttp.h"
#include "climsg.h"
#include "clireq.h"
#include "cliupload.h"
#include "cliwait.h"
#include "strbuf.h"
#include "util.h"

static int job_url(struct strbuf *sb, const void *ctx, const char *stream, long long off,
		   int wait)
{
	sb_addf(sb, "/v1/jobs/%s/output/%s?offset=%lld&limit=1048576&encoding=base64&wait=%d",
		(const char *)ctx, stream, off, wait);
	return sb->failed ? -1 : 0;
}

/* A compiled runtime's compile step (result.compile): the compiler's own output on
 * stderr (it came before the program's, which was streamed live), and a line when the
 * step failed (the program then did not run). */
static void print_compile(const json_t *c)
{
	static const char *const names[] = { "stdout", "stderr" };

	if (!json_is_object(c))
		return;
	for (int i = 0; i < 2; i++) {
		char b64[32];
		const json_t *t = json_object_get(c, names[i]);

		snprintf(b64, sizeof b64, "%s_base64", names[i]);
		if (json_is_string(t)) {
			fwrite(json_string_value(t), 1, json_string_length(t), stderr);
		} else if (cli_jstr(c, b64)) {
			const char *text = cli_jstr(c, b64);
			size_t n;
			unsigned char *b = util_b64_decode(text, strlen(text), &n);

			if (b)
				fwrite(b, 1, n, stderr);
			free(b);
		}
		if (json_is_true(json_object_get(c, i ? "stderr_truncated" : "stdout_truncated")))
			cli_say("(the compile step's %s is truncated)", names[i]);
	}
	if (json_is_integer(json_object_get(c, "exit_code")) &&
	    json_integer_value(json_object_get(c, "exit_code")) != 0)
		cli_say("compile step failed (exit code %lld)",
			(long long)json_integer_value(json_object_get(c, "exit_code")));
}

/* Waits for the job's end and returns the exit code run leaves with. */
static int job_outcome(const void *ctx)
{
	const char *id = ctx;
	char path[128];
	json_t *job, *res, *fail;
	const char *st;
	int rc;

	snprintf(path, sizeof path, "/v1/jobs/%s?wait=30", id);
	if (!(job = cli_wait_status(path, NULL, cli_settled, 1000, 200)))
		return CLI_EXIT_API;
	res = json_object_get(job, "result");
	fail = json_object_get(job, "failure");
	st = cli_jstr(job, "status");
	print_compile(json_object_get(res, "compile"));
	cli_print_diagnostics(json_object_get(res, "diagnostics"), st);
	if (json_is_object(fail) && cli_jstr(fail, "error"))
		cli_say("job failed in the service (stage %s): %s",
			cli_jstr(fail, "stage") ? cli_jstr(fail, "stage") : "?",
			cli_jstr(fail, "error"));
	rc = cli_exit_code(res, "job", id, st);
	json_decref(job);
	return rc;
}

static int interrupted_job(const void *ctx)
{
	const char *id = ctx;
	char path[128];
	json_t *j;

	snprintf(path, sizeof path, "/v1/jobs/%s/cancel", id);
	j = ch_json("POST", path, NULL, 30, 200, 0);
	cli_say("interrupted: job %s %s", id, j ? "cancelled" : "may still be running");
	json_decref(j);
	return 130;
}

/* --source FILE|-: the program's text (a JSON string: UTF-8 without NUL), bounded by
 * what one request body may carry anyway. */
#define SOURCE_MAX (10u << 20)

static int set_source(json_t *req, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = CLI_EXIT_LOCAL;

	if (cli_read_local(name, &sb, NULL) < 0)
		goto out;
	if (sb.len > SOURCE_MAX) {
		cli_say("--source %s: larger than %u bytes", name, SOURCE_MAX);
		goto out;
	}
	if (memchr(sb.buf, '\0', sb.len) ||
	    json_object_set_new(req, "source", json_stringn(sb.buf, sb.len))) {
		rc = cli_usage("--source %s: the program must be UTF-8 text without NUL bytes", name);
		goto out;
	}
	rc = 0;
out:
	sb_release(&sb);
	return rc;
}

static int add_file(json_t *req, const char *arg)
{
	const char *path, *why;
	size_t flen;
	char *local;
	int exec, rc = CLI_EXIT_LOCAL;
	json_t *files = json_object_get(req, "files"), *f;
	struct stat st;

	/* A whole argument that names a file is the file, even with a ':' in it. */
	if (stat(arg, &st) == 0 && strchr(arg, ':')) {
		const char *slash = strrchr(arg, '/');

		flen = strlen(arg);
		path = slash ? slash + 1 : arg;
		if (cli_rel_path(path))
			return cli_usage("-f %s: name the sandbox PATH", arg);
	} else if (cli_split_file(arg, &flen, &path, &why) < 0) {
		return cli_usage("-f %s: %s", arg, why);
	}
	if (!(local = strndup(arg, flen)))
		return CLI_EXIT_LOCAL;
	if (!files) {
		files = json_array();
		json_object_set_new(req, "files", files);
	}
	f = json_pack("{s:s}", "path", path);
	if (!f || json_array_append_new(files, f)) {
		cli_say("-f %s: could not build the request", local);
		goto out;
	}
	if ((rc = cli_attach_b64(f, "content_base64", local, &exec)) != 0)
		goto out;
	if (exec && json_object_set_new(f, "executable", json_true())) {
		rc = CLI_EXIT_LOCAL;
		goto out;
	}
	rc = 0;
out:
	free(local);
	return rc;
}

/* The value options of run's own (the shared ones are clireq's). */
static int run_opt(json_t *req, const char *o, const char *v)
{
	if (strcmp(o, "-f") == 0 || strcmp(o, "--file") == 0)
		return add_file(req, v);
	if (strcmp(o, "--runtime") == 0) {
		json_object_set_new(req, "runtime", json_string(v));
		return 0;
	}
	if (strcmp(o, "--source") == 0)
		return set_source(req, v);
	if (strcmp(o, "--limit") == 0)
		return cli_parse_limit_into(req, v);
	if (strcmp(o, "--artifacts") == 0) {
		json_object_set_new(req, "artifacts", json_string(v));
		return 0;
	}
	return -1;
}

static const struct cli_submit run_opts = { "run", 1, run_opt };

int cli_run(int argc, char **argv)
{
	json_t *req = json_object(), *job = NULL, *av;
	int i, rc = 0, detach = 0;
	char id[64];

	if ((i = cli_submit_opts(&run_opts, argc, argv, 1, req, &detach, &rc)) < 0)
		goto out;
	if (json_object_get(req, "runtime") && i < argc) {
		rc = cli_usage("run: --runtime runs --source; it takes no command");
		goto out;
	}
	if (json_object_get(req, "source") && !json_object_get(req, "runtime")) {
		rc = cli_usage("run: --source needs --runtime (sandbox runtimes lists them)");
		goto out;
	}
	if (json_object_get(req, "runtime") && !json_object_get(req, "source")) {
		rc = cli_usage("run: --runtime needs --source FILE|-");
		goto out;
	}
	if (i >= argc && !json_object_get(req, "runtime")) {
		rc = cli_usage("run: no command (sandbox run [OPTIONS] -- CMD [ARGS...])");
		goto out;
	}
	if (i < argc &&
	    (!(av = cli_argv_array(argc - i, argv + i)) || json_object_set_new(req, "argv", av))) {
		rc = cli_usage("run: the command's arguments must be UTF-8 text");
		goto out;
	}
	if (!(job = cli_post_streamed("/v1/jobs", req, 202, 200))) {
		rc = CLI_EXIT_API;
		goto out;
	}
	if ((rc = cli_created_id(job, "job", id)) != 0)
		goto out;
	if (detach) {
		printf("%s\n", id);
		goto out;
	}
	if (cli_verbose)
		cli_say("job %s", id);
	rc = cli_follow_end(job_url, id, interrupted_job, job_outcome);
out:
	cli_attach_release();
	json_decref(job);
	json_decref(req);
	return rc;
}
