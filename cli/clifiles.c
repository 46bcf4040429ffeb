/* sandbox artifacts, session ls, session cp (see clifiles.h). */
#include "clifiles.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cliargs.h"
#include "clihttp.h"
#include "climsg.h"
#include "clireq.h"
#include "cliupload.h"
#include "sha256.h"
#include "strbuf.h"
#include "util.h"

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

int cli_artifacts(int argc, char **argv)
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

int cli_session_ls(int argc, char **argv)
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

int cli_session_cp(int argc, char **argv)
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
