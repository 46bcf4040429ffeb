/* sandbox: the command-line client of the job API (issue 12, point 5).
 *
 * Theory of operation: configuration comes from the environment (SANDBOX_URL,
 * SANDBOX_CACERT, and the token from SANDBOX_TOKEN or the file SANDBOX_TOKEN_FILE;
 * never from argv, so it never shows in ps). Each command is one or a few HTTPS
 * requests (cli/clihttp.c). `run` and `session exec` submit an argv array as given
 * (no shell string is ever built from the arguments), then follow both output
 * streams with long-polls and exit with the command's exit code. Downloads are
 * written under the chosen directory by fd, never through a symlink, never over an
 * existing file. Diagnostics go to stderr prefixed "sandbox: " (cli/climsg.c). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cliargs.h"
#include "clihttp.h"
#include "climsg.h"
#include "sha256.h"
#include "strbuf.h"
#include "util.h"

/* ------------------------------------------------------------------ cliupload */

#define FILE_MAX (16u << 20) /* what we read into memory: a --source program, a token file */

static int cli_read_fd(int fd, struct strbuf *sb)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return sb->failed ? -1 : 0;
		if (sb->len + (size_t)n > FILE_MAX) {
			errno = EFBIG;
			return -1;
		}
		sb_add(sb, buf, (size_t)n);
	}
}

static int cli_read_local(const char *name, struct strbuf *sb, int *exec)
{
	struct stat st;
	int fd, rc;

	if (exec)
		*exec = 0;
	if (strcmp(name, "-") == 0)
		fd = 0;
	else if ((fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		cli_say("%s: %s", name, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || (fd != 0 && !S_ISREG(st.st_mode))) {
		cli_say("%s: not a regular file", name);
		if (fd != 0)
			close(fd);
		return -1;
	}
	if (exec)
		*exec = fd != 0 && (st.st_mode & 0111);
	rc = cli_read_fd(fd, sb);
	if (rc < 0)
		cli_say("%s: %s", name, strerror(errno));
	if (fd != 0)
		close(fd);
	return rc;
}

/* The attachments of the one request being built (a command sends one). */
#define MAX_ATTACH 256

static struct attach {
	char marker[48];
	char *name;
	int fd;
	unsigned long long size;
} att[MAX_ATTACH];
static size_t natt;

static void cli_attach_release(void)
{
	for (size_t i = 0; i < natt; i++) {
		if (att[i].fd >= 0)
			close(att[i].fd);
		free(att[i].name);
	}
	natt = 0;
}

/* Copies fd's bytes into an unnamed temporary file: its fd (at offset 0), or -1. */
static int spool(int fd)
{
	const char *dir = getenv("TMPDIR");
	char buf[65536];
	int t = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (t < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		while (w < n) {
			ssize_t k = write(t, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				goto fail;
			w += k;
		}
	}
	if (lseek(t, 0, SEEK_SET) == 0)
		return t;
fail:
	{
		int e = errno;

		close(t);
		errno = e;
	}
	return -1;
}

static int cli_open_local(const char *name, unsigned long long *size, int *exec)
{
	struct stat st;
	int fd;

	if (exec)
		*exec = 0;
	if (strcmp(name, "-") == 0)
		fd = spool(0);
	else
		fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		cli_say("%s: %s", name, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		cli_say("%s: not a regular file", name);
		close(fd);
		return -1;
	}
	if (exec)
		*exec = strcmp(name, "-") != 0 && (st.st_mode & 0111);
	*size = (unsigned long long)st.st_size;
	return fd;
}

static int cli_attach_b64(json_t *obj, const char *key, const char *local, int *exec)
{
	struct attach *a;
	unsigned char rnd[8];

	if (natt >= MAX_ATTACH)
		return cli_usage("at most %d files per request", MAX_ATTACH);
	a = &att[natt];
	if ((a->fd = cli_open_local(local, &a->size, exec)) < 0)
		return CLI_EXIT_LOCAL;
	if (util_random(rnd, sizeof rnd) < 0 || !(a->name = strdup(local))) {
		close(a->fd);
		cli_say("%s: could not prepare the upload", local);
		return CLI_EXIT_LOCAL;
	}
	snprintf(a->marker, sizeof a->marker, "sandbox-upload-%zu-%02x%02x%02x%02x%02x%02x%02x%02x",
		 natt, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	natt++;
	if (json_object_set_new(obj, key, json_string(a->marker))) {
		cli_say("%s: could not build the request", local);
		return CLI_EXIT_LOCAL;
	}
	return 0;
}

static json_t *cli_post_streamed(const char *path, const json_t *req, long ok1, long ok2)
{
	char *text = json_dumps(req, JSON_COMPACT);
	struct ch_part parts[2 * MAX_ATTACH + 1];
	size_t np = 0, done = 0;
	json_t *j = NULL;

	if (!text) {
		cli_say("out of memory");
		return NULL;
	}
	/* Markers in the order they appear in the text (JSON object order is not ours). */
	while (done < strlen(text)) {
		const char *best = NULL;
		size_t bi = 0;

		for (size_t i = 0; i < natt; i++) {
			const char *m = strstr(text + done, att[i].marker);

			if (m && (!best || m < best)) {
				best = m;
				bi = i;
			}
		}
		if (!best)
			break;
		parts[np++] = (struct ch_part){ .mem = text + done, .len = (size_t)(best - (text + done)),
						.fd = -1 };
		parts[np++] = (struct ch_part){ .fd = att[bi].fd, .size = att[bi].size, .b64 = 1,
						.name = att[bi].name };
		done = (size_t)(best - text) + strlen(att[bi].marker);
	}
	if (np / 2 != natt) {
		cli_say("could not build the request (an upload marker is missing)");
		goto out;
	}
	parts[np++] = (struct ch_part){ .mem = text + done, .len = strlen(text + done), .fd = -1 };
	j = ch_json_parts("POST", path, parts, np, 600, ok1, ok2);
out:
	free(text);
	return j;
}

/* ------------------------------------------------------------------ cliwait */

static int cli_verbose;

static volatile sig_atomic_t got_signal;
static void on_signal(int sig)
{
	got_signal = sig;
	ch_interrupted = 1;
}

static void cli_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int cli_settled(const char *st)
{
	return st && strcmp(st, "queued") != 0 && strcmp(st, "running") != 0;
}

static const char *status_of(const json_t *o)
{
	return json_string_value(json_object_get(o, "status"));
}

static json_t *cli_wait_status(const char *path, json_t *cur,
			       int (*ended)(const char *status), int tries, int pause_ms)
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

static int cli_follow_end(ch_url_fn url_of, const void *ctx,
			  int (*interrupted)(const void *ctx), int (*outcome)(const void *ctx))
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

static void cli_print_diagnostics(const json_t *list, const char *status)
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

static int cli_exit_code(const json_t *holder, const char *what, const char *id, const char *status)
{
	const json_t *ec = json_object_get(holder, "exit_code");

	if (!json_is_integer(ec))
		cli_say("%s %s ended %s without an exit code", what, id, status ? status : "?");
	return cli_exit_for(json_is_integer(ec), json_integer_value(ec));
}

/* ------------------------------------------------------------------ clireq */

/* ---- what the commands share (clireq) */

struct cli_submit {
	const char *cmd; /* "run", "session exec" */
	int network;     /* --network is one of its flags */
	int (*own)(json_t *req, const char *opt, const char *val);
};

struct cli_page {
	long long limit;
	const char *status, *cursor;
};

static const char *cli_jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static int cli_created_id(const json_t *answer, const char *what, char id[64])
{
	const char *s = cli_jstr(answer, "id");

	if (!s || !cli_is_id(s)) {
		cli_say("the API's answer has no %s id", what);
		return CLI_EXIT_API;
	}
	snprintf(id, 64, "%s", s);
	return 0;
}

static int cli_need_id(const char *cmd, const char *id)
{
	if (!id)
		return cli_usage("%s: missing ID", cmd);
	if (!cli_is_id(id))
		return cli_usage("%s: not a job or session id (a lower-case UUID)", cmd);
	return 0;
}

static int cli_parse_limit_into(json_t *req, const char *val)
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

static int cli_common_opt(json_t *req, const char *opt, const char *val, int *used)
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

static json_t *cli_argv_array(int argc, char **argv)
{
	json_t *a = json_array();

	for (int i = 0; a && i < argc; i++)
		if (json_array_append_new(a, json_string(argv[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static int cli_submit_opts(const struct cli_submit *s, int argc, char **argv, int i,
			   json_t *req, int *detach, int *rc)
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

static int cli_page_opt(const char *cmd, int argc, char **argv, int *i, struct cli_page *p)
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

static void cli_page_path(struct strbuf *sb, const char *path, const struct cli_page *p)
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

static int cli_post_id(const char *cmd, int argc, char **argv, const char *base,
		       const char *verb, long timeout_s, long ok2)
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

/* ------------------------------------------------------------------ clirun */

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
			size_t n;
			unsigned char *b = util_b64_decode(cli_jstr(c, b64), strlen(cli_jstr(c, b64)), &n);

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
			cli_jstr(fail, "stage") ? cli_jstr(fail, "stage") : "?", cli_jstr(fail, "error"));
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

static int cli_run(int argc, char **argv)
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

/* ------------------------------------------------------------------ clijobs */

static int cli_get(int argc, char **argv)
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

static int cli_list(int argc, char **argv)
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

static int cli_cancel(int argc, char **argv)
{
	return cli_post_id("cancel", argc, argv, "/v1/jobs", "cancel", 30, 0);
}

static int cli_runtimes(int argc, char **argv)
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

/* ------------------------------------------------------------------ clifiles */

/* ---- artifacts: created under dirfd by fd, never through a link */

/* Opens (creating) the parent directories of rel under dfd without following a link;
 * the fd of the last one, or -1 with errno. *last points at the final component. */
static int open_parents(int dfd, const char *rel, const char **last)
{
	int cur = dup(dfd);
	const char *p = rel;

	if (cur < 0)
		return -1;
	for (;;) {
		const char *slash = strchr(p, '/');
		char comp[4096];
		int next;

		if (!slash) {
			*last = p;
			return cur;
		}
		if ((size_t)(slash - p) >= sizeof comp) {
			close(cur);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, p, (size_t)(slash - p));
		comp[slash - p] = '\0';
		if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST) {
			int e = errno;

			close(cur);
			errno = e;
			return -1;
		}
		next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int e = errno;

			close(cur);
			errno = e == ELOOP ? ELOOP : e;
			return -1;
		}
		close(cur);
		cur = next;
		p = slash + 1;
	}
}

static int fetch_artifact(int dfd, const char *outdir, const char *id, const json_t *a)
{
	const char *name = cli_jstr(a, "path"), *last, *why, *want_sha = cli_jstr(a, "sha256");
	struct strbuf path = STRBUF_INIT;
	struct resp r;
	struct sha256 sha;
	unsigned char dig[32];
	char hex[65];
	int pfd = -1, fd = -1, rc = CLI_EXIT_LOCAL;

	resp_init(&r);
	if (!name || (why = cli_rel_path(name))) {
		cli_say("artifacts: refusing the artifact name %s: %s", name ? name : "(none)",
		    name ? why : "missing");
		goto out;
	}
	if ((pfd = open_parents(dfd, name, &last)) < 0 ||
	    (fd = openat(pfd, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			 0644)) < 0) {
		cli_say("artifacts: %s/%s: %s%s", outdir, name, strerror(errno),
		    errno == EEXIST ? " (never overwritten, never followed)"
		    : errno == ELOOP ? " (a symlink is never followed)" : "");
		goto out;
	}
	sb_addf(&path, "/v1/jobs/%s/artifacts/", id);
	ch_escape(&path, name, 1);
	sha256_init(&sha);
	r.fd = fd;
	r.sha = &sha;
	if ((rc = ch_download(path.buf, &r)) != 0)
		goto fail;
	sha256_final(&sha, dig);
	util_hex(dig, 32, hex);
	if ((json_is_integer(json_object_get(a, "size")) &&
	     (unsigned long long)json_integer_value(json_object_get(a, "size")) != r.written) ||
	    (want_sha && strcmp(want_sha, hex) != 0)) {
		cli_say("artifacts: %s: the bytes do not match the listed size and sha256", name);
		rc = CLI_EXIT_API;
		goto fail;
	}
	if (fsync(fd) < 0 && errno != EINVAL) {
		cli_say("artifacts: %s/%s: %s", outdir, name, strerror(errno));
		rc = CLI_EXIT_LOCAL;
		goto fail;
	}
	printf("%s/%s\n", outdir, name);
	rc = 0;
	goto out;
fail:
	unlinkat(pfd, last, 0); /* the file we created, by name under our own fd */
out:
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	sb_release(&path);
	resp_release(&r);
	return rc;
}

static int cli_artifacts(int argc, char **argv)
{
	const char *id = NULL, *out = ".";
	char path[128];
	json_t *list, *a;
	size_t k;
	int dfd, rc = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (!id && argv[i][0] != '-')
			id = argv[i];
		else
			return cli_usage("artifacts: unexpected argument %s", argv[i]);
	}
	if (cli_need_id("artifacts", id))
		return CLI_EXIT_USAGE;
	snprintf(path, sizeof path, "/v1/jobs/%s/artifacts", id);
	if (!(list = ch_json("GET", path, NULL, 60, 200, 0)))
		return CLI_EXIT_API;
	if (mkdir(out, 0755) < 0 && errno != EEXIST) {
		cli_say("artifacts: %s: %s", out, strerror(errno));
		json_decref(list);
		return CLI_EXIT_LOCAL;
	}
	if ((dfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		cli_say("artifacts: %s: %s", out, strerror(errno));
		json_decref(list);
		return CLI_EXIT_LOCAL;
	}
	json_array_foreach(list, k, a) {
		int r = fetch_artifact(dfd, out, id, a);

		if (r && !rc)
			rc = r;
	}
	close(dfd);
	json_decref(list);
	return rc;
}

static int cli_session_ls(int argc, char **argv)
{
	struct strbuf path = STRBUF_INIT;
	json_t *j, *f;
	size_t k;

	if (argc < 2 || argc > 3)
		return cli_usage("session ls: expected ID [DIR]");
	if (cli_need_id("session ls", argv[1]))
		return CLI_EXIT_USAGE;
	sb_addf(&path, "/v1/sessions/%s/files?recursive=true", argv[1]);
	if (argc == 3 && argv[2][0]) {
		sb_adds(&path, "&root=");
		ch_escape(&path, argv[2], 0);
	}
	j = ch_json("GET", path.buf, NULL, 60, 200, 0);
	sb_release(&path);
	if (!j)
		return CLI_EXIT_API;
	json_array_foreach(json_object_get(j, "files"), k, f)
		printf("%lld\t%s\n", (long long)json_integer_value(json_object_get(f, "size")),
		       cli_jstr(f, "path"));
	if (json_is_true(json_object_get(j, "truncated")))
		cli_say("the listing is truncated (the service's session_list_max_files)");
	json_decref(j);
	return 0;
}

static int cp_up(const char *local, const char *sid, const char *rpath)
{
	struct strbuf path = STRBUF_INIT;
	struct resp r;
	struct ch_part part = { .name = local };
	int exec, rc = CLI_EXIT_LOCAL;

	resp_init(&r);
	/* Streamed from the file as it is sent: never the whole file in memory. */
	if ((part.fd = cli_open_local(local, &part.size, &exec)) < 0)
		goto out;
	sb_addf(&path, "/v1/sessions/%s/files/", sid);
	ch_escape(&path, rpath, 1);
	if (exec)
		sb_adds(&path, "?mode=0755");
	rc = CLI_EXIT_API;
	if (ch_request_parts("PUT", path.buf, &part, 1, "application/octet-stream", 600, &r) < 0)
		goto out;
	if (r.status != 200 && r.status != 201) {
		ch_print_error(path.buf, &r);
		goto out;
	}
	rc = 0;
out:
	if (part.fd >= 0)
		close(part.fd);
	resp_release(&r);
	sb_release(&path);
	return rc;
}

/* Downloads stream to LOCAL as they arrive (the body is never held in memory). LOCAL
 * is never reached through a symlink (O_NOFOLLOW); it is created if missing (and
 * removed again if the download fails), else written from the start and cut to the
 * download's size only once it succeeded: a failed request leaves it as it was. */
static int cp_down(const char *sid, const char *rpath, const char *local)
{
	struct strbuf path = STRBUF_INIT;
	struct resp r;
	int fd, created = 0, rc = CLI_EXIT_LOCAL;

	resp_init(&r);
	if (strcmp(local, "-") == 0) {
		fd = dup(1);
	} else {
		fd = open(local, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			created = 1;
		else if (errno == EEXIST)
			fd = open(local, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		cli_say("%s: %s%s", local, strerror(errno),
		    errno == ELOOP ? " (a symlink is never followed)" : "");
		goto out;
	}
	sb_addf(&path, "/v1/sessions/%s/files/", sid);
	ch_escape(&path, rpath, 1);
	r.fd = fd;
	if ((rc = ch_download(path.buf, &r)) != 0)
		goto fail;
	if (strcmp(local, "-") != 0 && ftruncate(fd, (off_t)r.written) < 0 && errno != EINVAL) {
		cli_say("%s: %s", local, strerror(errno));
		rc = CLI_EXIT_LOCAL;
		goto fail;
	}
	if (close(fd) < 0) {
		cli_say("%s: %s", local, strerror(errno));
		rc = CLI_EXIT_LOCAL;
	}
	fd = -1;
	goto out;
fail:
	if (created)
		unlink(local); /* the file we created: nothing of it is ours to keep */
out:
	if (fd >= 0)
		close(fd);
	resp_release(&r);
	sb_release(&path);
	return rc;
}

static int cli_session_cp(int argc, char **argv)
{
	char id[37];
	const char *rp;

	if (argc != 3)
		return cli_usage("session cp: expected LOCAL ID:PATH or ID:PATH LOCAL");
	if (cli_remote_spec(argv[2], id, &rp) && !cli_remote_spec(argv[1], id, &rp)) {
		cli_remote_spec(argv[2], id, &rp);
		if (cli_rel_path(rp))
			return cli_usage("session cp: the session PATH must be relative and normalized");
		return cp_up(argv[1], id, rp);
	}
	if (cli_remote_spec(argv[1], id, &rp) && !cli_remote_spec(argv[2], id, &rp)) {
		cli_remote_spec(argv[1], id, &rp);
		if (cli_rel_path(rp))
			return cli_usage("session cp: the session PATH must be relative and normalized");
		return cp_down(id, rp, argv[2]);
	}
	return cli_usage("session cp: exactly one of the two must be ID:PATH");
}

/* ------------------------------------------------------------------ cliexec */

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

static int cli_session_exec(int argc, char **argv)
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

static int cli_session_kill(int argc, char **argv)
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

static int cli_session_output(int argc, char **argv)
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
	if ((rc = resolve_cmd("session output", "ID PID [--follow] [--offset N]", sid, ref, cid)) != 0)
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

/* ------------------------------------------------------------------ clisession */

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

static int cli_session(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage("session: expected create, list, exec, output, kill, ls, cp or close");
	for (size_t k = 0; k < sizeof subcommands / sizeof subcommands[0]; k++)
		if (strcmp(argv[1], subcommands[k].name) == 0)
			return subcommands[k].fn(argc - 1, argv + 1);
	return cli_usage("session: unknown subcommand %s", argv[1]);
}

/* ------------------------------------------------------------------ main */

/* ------------------------------------------------------------------ help */

static const char help_main[] =
"NAME\n"
"    sandbox - run commands in the sandboxed job service\n"
"\n"
"SYNOPSIS\n"
"    sandbox [--url URL] [--cacert FILE] COMMAND [OPTIONS] [ARGS]\n"
"    sandbox COMMAND --help\n"
"\n"
"COMMANDS\n"
"    run [OPTIONS] -- CMD [ARGS...]   run a job, stream its output, exit with its code\n"
"    run --runtime NAME --source FILE run a program in a runtime (python3, c, ...)\n"
"    runtimes                         list the runtimes jobs may name\n"
"    get ID [--wait S]                print a job as JSON\n"
"    list [--limit N] [--status S] [--cursor C]\n"
"                                     list your jobs, newest first\n"
"    cancel ID                        cancel a job\n"
"    artifacts ID [--out DIR]         download a job's artifacts into DIR\n"
"    session create|list|exec|output|kill|ls|cp|close\n"
"                                     work in a persistent session (sandbox session --help)\n"
"\n"
"ENVIRONMENT\n"
"    SANDBOX_URL        the API's base URL (https://host:port); --url overrides it\n"
"    SANDBOX_CACERT     a CA certificate file to verify the server with; --cacert\n"
"                       overrides it (unset: the system's CAs)\n"
"    SANDBOX_TOKEN      the API key. It is read only from the environment or from\n"
"    SANDBOX_TOKEN_FILE a file (first line), never from a command-line flag, so it\n"
"                       never appears in ps; sandbox never prints it.\n"
"    `make up` writes these to var/env: `set -a; . var/env; set +a`.\n"
"\n"
"EXIT STATUS\n"
"    run and session exec exit with the command's exit code: its own, 128+N when\n"
"    killed by signal N, 124 timed out, 122 output limit, 126 blocked by policy,\n"
"    125 the service failed or the job never ran (lost, cancelled before it started).\n"
"    Otherwise, and when sandbox itself fails:\n"
"      0  success\n"
"      2  usage error: bad arguments, missing SANDBOX_URL or token\n"
"      3  the API answered an error (its code, message and field are printed), or\n"
"         the connection failed\n"
"      4  a local file could not be read or written (e.g. a download would overwrite\n"
"         a file or follow a symlink)\n"
"      130 interrupted (run and session exec cancel the job / kill the command first)\n"
"\n"
"EXAMPLES\n"
"    set -a; . var/env; set +a\n"
"    sandbox run -- echo hello\n"
"    sandbox run -f main.py --limit wall_seconds=5 -- python3 main.py\n"
"    sandbox run --runtime python3 --source main.py\n"
"    id=$(sandbox session create --idle 600)\n"
"    sandbox session cp data.bin $id:in/data.bin\n"
"    sandbox session exec $id -- sha256sum in/data.bin\n"
"    pid=$(sandbox session exec --detach $id -- make -j2)\n"
"    sandbox session output $id $pid --follow\n"
"    sandbox session close $id\n";

static const char help_run[] =
"NAME\n"
"    sandbox run - run one job and stream its output live\n"
"\n"
"SYNOPSIS\n"
"    sandbox run [-f FILE[:PATH]]... [--limit NAME=VALUE]... [--env NAME=VALUE]...\n"
"                [--network] [--stdin FILE|-] [--cwd DIR] [--artifacts DIR]\n"
"                [--detach] [-v] -- CMD [ARGS...]\n"
"    sandbox run --runtime NAME --source FILE|- [OPTIONS]\n"
"\n"
"DESCRIPTION\n"
"    Submits CMD and ARGS as the job's argv (exactly as given: no shell is involved\n"
"    unless CMD is one), then copies the job's stdout and stderr to sandbox's own,\n"
"    byte for byte, while the job runs, and exits with the job's exit code. The\n"
"    job's diagnostics (e.g. \"command timed out\") are printed after its output on\n"
"    stderr, prefixed \"sandbox: \". Ctrl-C cancels the job.\n"
"\n"
"OPTIONS\n"
"    -f, --file FILE[:PATH]  upload the local FILE as PATH in the job's workspace\n"
"                            (default: FILE's last component); executable when FILE is.\n"
"                            Files are streamed into the request, never read whole\n"
"                            into memory (the service's body limit still applies)\n"
"    --runtime NAME          run --source in the runtime NAME (see sandbox runtimes)\n"
"                            instead of a command; a compiled runtime's compiler\n"
"                            output is printed on stderr after the program's output\n"
"    --source FILE|-         the program's text (UTF-8) for --runtime\n"
"    --limit NAME=VALUE      a job limit: wall_seconds, cpu_seconds, memory_mb, pids,\n"
"                            output_bytes, disk_mb (the API checks names and ranges)\n"
"    --env NAME=VALUE        an environment variable for the job\n"
"    --network               ask for network access (the key must permit it)\n"
"    --stdin FILE|-          the job's stdin: FILE's bytes, or sandbox's own stdin\n"
"    --cwd DIR               the job's working directory, relative to the workspace\n"
"    --artifacts DIR         collect the workspace directory DIR as artifacts\n"
"    --detach                print the job id and exit 0 without waiting\n"
"    -v                      say the job's id on stderr, and show every diagnostic\n"
"                            (by default only those of a job that did not end on\n"
"                            its own: timed out, output limit, resource limit, ...)\n";

static const char help_get[] =
"NAME\n    sandbox get - print a job as JSON\n\n"
"SYNOPSIS\n    sandbox get ID [--wait S]\n\n"
"DESCRIPTION\n    Prints the job object (status, result, output inline, diagnostics).\n"
"    --wait S waits up to S (0..30) seconds for the job to end first.\n";
static const char help_list[] =
"NAME\n    sandbox list - list your jobs, newest first\n\n"
"SYNOPSIS\n    sandbox list [--limit N] [--status STATUS] [--cursor CURSOR]\n\n"
"DESCRIPTION\n    One line per job: id, status, exit code (- while none), created_at.\n"
"    When there are more, a line on stderr gives the --cursor of the next page.\n";
static const char help_runtimes[] =
"NAME\n    sandbox runtimes - list the runtimes a job may name\n\n"
"SYNOPSIS\n    sandbox runtimes\n\n"
"DESCRIPTION\n    One line per runtime the runner hosts provide (GET /v1/runtimes): name,\n"
"    version (- when it has none), aliases (comma-separated, - when none), the file\n"
"    name the source is written to, and compiled or interpreted. Run one with\n"
"    sandbox run --runtime NAME --source FILE.\n";
static const char help_cancel[] =
"NAME\n    sandbox cancel - cancel a job\n\n"
"SYNOPSIS\n    sandbox cancel ID\n\n"
"DESCRIPTION\n    A queued job is cancelled at once, a running one is killed by its runner;\n"
"    an ended job is left as it is. Prints the id and the status after the request.\n";
static const char help_artifacts[] =
"NAME\n    sandbox artifacts - download a job's artifacts\n\n"
"SYNOPSIS\n    sandbox artifacts ID [--out DIR]\n\n"
"DESCRIPTION\n    Writes each artifact under DIR (default: the current directory), creating\n"
"    its parent directories, and prints the paths written. A name that is absolute\n"
"    or has a '..' component is refused; a file is only ever created, never\n"
"    overwritten, and no symlink under DIR is followed (exit 4). Each file's size and\n"
"    sha256 are checked against the listing.\n";
static const char help_session[] =
"NAME\n    sandbox session - work in a persistent sandbox session\n\n"
"SYNOPSIS\n"
"    sandbox session create [--limit NAME=VALUE]... [--idle S] [--max S] [--network]\n"
"                           [--env NAME=VALUE]... [--no-wait]\n"
"    sandbox session list [--status STATUS] [--limit N] [--cursor CURSOR] [--all]\n"
"    sandbox session exec ID [--env NAME=VALUE]... [--cwd DIR] [--stdin FILE|-]\n"
"                           [--timeout S] [--detach] [-v] -- CMD [ARGS...]\n"
"    sandbox session output ID PID [--follow] [--offset N] [--stream stdout|stderr]\n"
"    sandbox session kill ID PID [--signal NAME]\n"
"    sandbox session ls ID [DIR]\n"
"    sandbox session cp LOCAL ID:PATH\n"
"    sandbox session cp ID:PATH LOCAL\n"
"    sandbox session close ID\n\n"
"DESCRIPTION\n"
"    create   starts a session and prints its id; waits until it is ready unless\n"
"             --no-wait. Limits: memory_mb, pids, cpu_seconds, disk_mb; --idle and\n"
"             --max are idle_seconds and max_seconds.\n"
"    list     one line per session of yours, newest first: id, status, created_at.\n"
"             A next page's --cursor is printed on stderr; --all follows every page.\n"
"    exec     runs CMD ARGS as an argv command in the session, streams its output live\n"
"             and exits with its exit code (as run does). --detach prints the\n"
"             command's pid (1, 2, ...) instead and exits 0: the command runs on.\n"
"    output   replays the command PID's stdout and stderr (to sandbox's own) from\n"
"             byte offset N of each (default 0): what is stored now, or with --follow\n"
"             everything until the command ends, then exits with its exit code.\n"
"             PID is the pid exec --detach printed, or the command's id.\n"
"    kill     sends a signal (TERM unless --signal: KILL, INT, HUP, QUIT, USR1,\n"
"             USR2, or a number) to the running command PID; prints its id and status.\n"
"    ls       lists the regular files under DIR (default: the workspace): size, path.\n"
"    cp       uploads LOCAL ('-': stdin) to PATH, streamed (never whole in memory),\n"
"             or downloads PATH to LOCAL ('-': stdout). A download never follows a\n"
"             symlink at LOCAL.\n"
"    close    ends the session (every process killed, the workspace removed).\n";

static int want_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ main */

static const struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} commands[] = {
	{ "run", cli_run, help_run },
	{ "get", cli_get, help_get },
	{ "list", cli_list, help_list },
	{ "cancel", cli_cancel, help_cancel },
	{ "artifacts", cli_artifacts, help_artifacts },
	{ "session", cli_session, help_session },
	{ "runtimes", cli_runtimes, help_runtimes },
};

/* The token: SANDBOX_TOKEN, else the first line of SANDBOX_TOKEN_FILE. malloc'd, or
 * NULL with the reason printed (never the token). */
static char *load_token(void)
{
	const char *env = getenv("SANDBOX_TOKEN"), *file = getenv("SANDBOX_TOKEN_FILE");
	struct strbuf sb = STRBUF_INIT;
	size_t n;

	if (env && *env) {
		sb_adds(&sb, env);
	} else if (file && *file) {
		int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);

		if (fd < 0 || cli_read_fd(fd, &sb) < 0) {
			cli_say("SANDBOX_TOKEN_FILE %s: %s", file, strerror(errno));
			if (fd >= 0)
				close(fd);
			sb_release(&sb);
			return NULL;
		}
		close(fd);
		sb.len = strcspn(sb.buf, "\r\n");
		sb.buf[sb.len] = '\0';
	} else {
		cli_say("no API token: set SANDBOX_TOKEN or SANDBOX_TOKEN_FILE "
			"(e.g. `set -a; . var/env; set +a`)");
		return NULL;
	}
	n = sb.len;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)sb.buf[i] <= 0x20 || (unsigned char)sb.buf[i] >= 0x7f) {
			cli_say("the API token has characters a bearer token cannot have");
			explicit_bzero(sb.buf, sb.len);
			sb_release(&sb);
			return NULL;
		}
	if (n == 0 || n > 4096) {
		cli_say("the API token is empty or too long");
		sb_release(&sb);
		return NULL;
	}
	return sb_detach(&sb, NULL);
}

int main(int argc, char **argv)
{
	const char *url = getenv("SANDBOX_URL"), *cacert = getenv("SANDBOX_CACERT");
	const struct command *cmd = NULL;
	char *token;
	int i = 1, rc;

	signal(SIGPIPE, SIG_IGN);
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
			url = argv[++i];
		else if (strcmp(argv[i], "--cacert") == 0 && i + 1 < argc)
			cacert = argv[++i];
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(help_main, stdout);
			return 0;
		} else if (strcmp(argv[i], "--token") == 0)
			return cli_usage("there is no --token: the token comes from SANDBOX_TOKEN or "
				     "SANDBOX_TOKEN_FILE only, so it never shows in ps");
		else
			break;
	}
	if (i >= argc) {
		fputs(help_main, stderr);
		return CLI_EXIT_USAGE;
	}
	for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
		if (strcmp(argv[i], commands[k].name) == 0)
			cmd = &commands[k];
	if (!cmd)
		return cli_usage("unknown command %s", argv[i]);
	if (want_help(argc - i, argv + i)) {
		fputs(cmd->help, stdout);
		return 0;
	}
	if (!url || !*url)
		return cli_usage("no API URL: set SANDBOX_URL or pass --url");
	if (!(token = load_token()))
		return CLI_EXIT_USAGE;
	rc = ch_init(url, cacert, token);
	explicit_bzero(token, strlen(token));
	free(token);
	if (rc < 0) {
		ch_cleanup();
		return CLI_EXIT_USAGE;
	}
	rc = cmd->fn(argc - i, argv + i);
	fflush(stdout);
	ch_cleanup();
	return rc;
}
