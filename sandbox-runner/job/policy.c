/* What the runner refuses before it creates anything for a job: the path re-check and the
 * operator's command policy (see policy.h). */
#include "policy.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pathrules.h"

const char *pol_paths(const struct cfg *cfg, const struct job *j, char *why, size_t whylen)
{
	const char *r;

	if (*j->cwd && (r = pr_job_path(cfg, j->cwd)) != NULL) {
		snprintf(why, whylen, "cwd %s", r);
		return why;
	}
	if (j->artifacts_dir && (r = pr_job_path(cfg, j->artifacts_dir)) != NULL) {
		snprintf(why, whylen, "artifacts %s", r);
		return why;
	}
	for (size_t i = 0; i < j->nfiles; i++)
		if ((r = pr_job_path(cfg, j->files[i].path)) != NULL) {
			snprintf(why, whylen, "file path %s", r);
			return why;
		}
	return NULL;
}

/* ---- the operator's command policy */

/*
 * The command policy file (runner_command_policy), one rule a line:
 *
 *   # comment
 *   deny /usr/bin/curl network tools are not allowed here
 *   deny /usr/bin/wget network tools are not allowed here
 *
 * "deny", one or more spaces or tabs, an absolute normalized path (no ".", "..",
 * "//" or trailing "/", at most 255 bytes), one or more spaces or tabs, and the reason
 * (printable ASCII, 1..200 bytes, trailing blanks dropped) that the refused job's
 * diagnostic quotes: "blocked by local-process policy: <reason>". Blank lines and
 * lines whose first non-blank byte is '#' are ignored; anything else is an error
 * naming the line, and the runner refuses to start. At most 256 rules in 64 KiB.
 *
 * A rule matches the job's executable: argv[0], or the first word of a shell
 * `command` (after NAME=value assignments), looked up like the sandbox's PATH
 * (/usr/local/bin:/usr/bin:/bin) and followed through symbolic links while they stay
 * inside /usr: `curl`, `/usr/bin/curl` and `/bin/curl` all meet `deny /usr/bin/curl`;
 * `deny /usr/bin/dash` also refuses `sh`. It refuses honest mistakes before anything
 * is created; it is not the security boundary (a job can still reach a binary through
 * an interpreter or a copy): the sandbox profile is.
 */

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && blank(*p))
		p++;
	return p;
}

/* An absolute path already in normal form. */
static int canonical_path(const char *p)
{
	char norm[POL_PATH_MAX];

	return p[0] == '/' && pol_normalize(p, norm, sizeof norm) == 0 && strcmp(p, norm) == 0;
}

/* One non-comment line [p, end): a rule into r, or a message. */
static const char *parse_rule(const char *p, const char *end, struct cmdpol_rule *r)
{
	const char *w = p;
	size_t n;

	while (p < end && !blank(*p))
		p++;
	if ((size_t)(p - w) != 4 || memcmp(w, "deny", 4) != 0)
		return "a rule starts with deny";
	w = p = skip_blanks(p, end);
	while (p < end && !blank(*p))
		p++;
	n = (size_t)(p - w);
	if (n == 0)
		return "deny needs a path and a reason";
	if (n >= sizeof r->path)
		return "path longer than 255 bytes";
	memcpy(r->path, w, n);
	r->path[n] = '\0';
	if (!canonical_path(r->path))
		return "path must be absolute and normalized";
	w = skip_blanks(p, end);
	while (end > w && blank(end[-1]))
		end--;
	n = (size_t)(end - w);
	if (n == 0)
		return "a rule needs a reason";
	if (n > POL_REASON_MAX)
		return "reason longer than 200 bytes";
	for (size_t i = 0; i < n; i++)
		if (w[i] < 0x20 || w[i] > 0x7e)
			return "reason must be printable ASCII";
	memcpy(r->reason, w, n);
	r->reason[n] = '\0';
	return NULL;
}

int cmdpol_parse(const char *text, size_t len, struct cmdpol *p, char *err, size_t errlen)
{
	const char *s = text, *end = text + len;
	unsigned line = 0;

	p->rules = NULL;
	p->n = 0;
	if (len > POL_FILE_MAX) {
		snprintf(err, errlen, "longer than %d bytes", POL_FILE_MAX);
		return -1;
	}
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *eol = nl ? nl : end;
		const char *b = skip_blanks(s, eol), *why;

		line++;
		s = nl ? nl + 1 : end;
		if (b == eol || *b == '#')
			continue;
		if (memchr(b, '\0', (size_t)(eol - b)) != NULL) {
			snprintf(err, errlen, "line %u: NUL byte", line);
			goto fail;
		}
		if (p->n == POL_MAX_RULES) {
			snprintf(err, errlen, "line %u: more than %d rules", line, POL_MAX_RULES);
			goto fail;
		}
		if (p->rules == NULL && (p->rules = calloc(POL_MAX_RULES, sizeof *p->rules)) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		if ((why = parse_rule(b, eol, &p->rules[p->n])) != NULL) {
			snprintf(err, errlen, "line %u: %s", line, why);
			goto fail;
		}
		p->n++;
	}
	return 0;
fail:
	cmdpol_free(p);
	return -1;
}

void cmdpol_free(struct cmdpol *p)
{
	free(p->rules);
	p->rules = NULL;
	p->n = 0;
}


static int load_fail(char *err, size_t errlen, const char *why, int e)
{
	snprintf(err, errlen, "%s%s%s", why, e ? ": " : "", e ? strerror(e) : "");
	return -1;
}

int cmdpol_load(const char *path, struct cmdpol *p, char *err, size_t errlen)
{
	char dir[CFG_PATH_MAX], *buf = NULL, *slash;
	struct stat st;
	const char *why;
	ssize_t r;
	size_t n = 0;
	int fd, rc;

	p->rules = NULL, p->n = 0;
	if (path[0] != '/' || strlen(path) >= sizeof dir)
		return load_fail(err, errlen, "not an absolute path", 0);
	snprintf(dir, sizeof dir, "%s", path);
	slash = strrchr(dir, '/');
	slash[slash == dir ? 1 : 0] = '\0';
	if (stat(dir, &st) < 0)
		return load_fail(err, errlen, "its directory", errno);
	if ((why = util_untrusted(&st, 1)) != NULL)
		return load_fail(err, errlen, why, 0);
	/* never through a link: only root decides what the file says */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return load_fail(err, errlen, errno == ELOOP ? "a symbolic link" : "open",
				 errno == ELOOP ? 0 : errno);
	if (fstat(fd, &st) < 0 || (why = util_untrusted(&st, 0)) != NULL ||
	    st.st_size > POL_FILE_MAX || (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		int e = errno;
		close(fd);
		if (why)
			return load_fail(err, errlen, why, 0);
		return load_fail(err, errlen, st.st_size > POL_FILE_MAX ? "larger than 64 KiB" : "read",
				 st.st_size > POL_FILE_MAX ? 0 : e);
	}
	while (n < (size_t)st.st_size && ((r = read(fd, buf + n, (size_t)st.st_size - n)) > 0 ||
					  (r < 0 && errno == EINTR)))
		n += r > 0 ? (size_t)r : 0;
	close(fd);
	rc = cmdpol_parse(buf, n, p, err, errlen);
	free(buf);
	return rc;
}

/* Bytes that end a simple shell word (or make it something else than a plain name). */
static int word_end(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\n' || strchr(";&|<>()`$\"'\\", c);
}

/* NAME=... : a valid shell name before '='. */
static int assignment(const char *w, size_t n)
{
	size_t i = 0;

	if (n == 0 || !(w[0] == '_' || (w[0] >= 'A' && w[0] <= 'Z') || (w[0] >= 'a' && w[0] <= 'z')))
		return 0;
	while (i < n && (w[i] == '_' || (w[i] >= 'A' && w[i] <= 'Z') ||
			 (w[i] >= 'a' && w[i] <= 'z') || (w[i] >= '0' && w[i] <= '9')))
		i++;
	return i < n && w[i] == '=';
}

void pol_first_word(const char *command, char *out, size_t outlen)
{
	const char *p = command;

	out[0] = '\0';
	for (;;) {
		const char *w;
		size_t n;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		w = p;
		while (!word_end(*p))
			p++;
		n = (size_t)(p - w);
		if (assignment(w, n)) {
			/* an assignment's value may hold anything: only a plain one is skipped */
			if (!(*p == '\0' || *p == ' ' || *p == '\t'))
				return;
			continue;
		}
		if (n == 0 || n >= outlen)
			return;
		memcpy(out, w, n);
		out[n] = '\0';
		return;
	}
}

int pol_normalize(const char *in, char *out, size_t outlen)
{
	size_t o = 0;

	if (in[0] != '/' || outlen < 2)
		return -1;
	for (const char *p = in; *p;) {
		const char *c;
		size_t n;

		while (*p == '/')
			p++;
		c = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - c);
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* the slash */
			continue;
		}
		if (o + 1 + n >= outlen)
			return -1;
		out[o++] = '/';
		memcpy(out + o, c, n);
		o += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

/* The path p's first symbolic link leads to, when it stays inside /usr: 1 (next
 * filled), 0 (no link, or one leading elsewhere: not followed). */
static int follow_once(const char *p, char next[POL_PATH_MAX])
{
	char prefix[POL_PATH_MAX], target[POL_PATH_MAX], joined[2 * POL_PATH_MAX + 2];
	size_t len = strlen(p);

	for (size_t i = 1; i <= len; i++) {
		struct stat st;
		ssize_t n;

		if (i < len && p[i] != '/')
			continue;
		memcpy(prefix, p, i);
		prefix[i] = '\0';
		if (lstat(prefix, &st) < 0)
			return 0;
		if (!S_ISLNK(st.st_mode))
			continue;
		n = readlink(prefix, target, sizeof target - 1);
		if (n <= 0)
			return 0;
		target[n] = '\0';
		if (target[0] == '/')
			snprintf(joined, sizeof joined, "%s%s", target, p + i);
		else {
			char *slash = strrchr(prefix, '/');
			slash[1] = '\0';
			snprintf(joined, sizeof joined, "%s%s%s", prefix, target, p + i);
		}
		if (pol_normalize(joined, next, POL_PATH_MAX) < 0 || strncmp(next, "/usr/", 5) != 0)
			return 0;
		return 1;
	}
	return 0;
}

size_t pol_exec_chain(const char *word, char chain[][POL_PATH_MAX], size_t max)
{
	static const char *const path[] = { "/usr/local/bin", "/usr/bin", "/bin" };
	size_t n = 0;

	if (max == 0 || word[0] == '\0')
		return 0;
	if (strchr(word, '/')) {
		if (word[0] != '/' || pol_normalize(word, chain[0], POL_PATH_MAX) < 0)
			return 0; /* relative: a file of the job's own workspace */
	} else {
		size_t i;
		for (i = 0; i < sizeof path / sizeof path[0]; i++) {
			int w = snprintf(chain[0], POL_PATH_MAX, "%s/%s", path[i], word);
			if (w > 0 && w < POL_PATH_MAX && access(chain[0], F_OK) == 0)
				break;
		}
		if (i == sizeof path / sizeof path[0])
			return 0;
	}
	for (n = 1; n < max && follow_once(chain[n - 1], chain[n]); n++)
		;
	return n;
}

const char *cmdpol_match(const struct cmdpol *p, char chain[][POL_PATH_MAX], size_t n)
{
	for (size_t r = 0; r < p->n; r++)
		for (size_t i = 0; i < n; i++)
			if (strcmp(p->rules[r].path, chain[i]) == 0)
				return p->rules[r].reason;
	return NULL;
}

const char *cmdpol_check(const struct cmdpol *p, const struct job *j)
{
	char word[POL_PATH_MAX], chain[POL_CHAIN_MAX][POL_PATH_MAX];
	const char *a0;
	size_t n;

	if (p->n == 0)
		return NULL;
	if (j->argv) {
		a0 = json_string_value(json_array_get(j->argv, 0));
		if (a0 == NULL || strlen(a0) >= sizeof word)
			return NULL; /* no path a rule can name */
		snprintf(word, sizeof word, "%s", a0);
	} else {
		pol_first_word(j->command ? j->command : "", word, sizeof word);
	}
	n = pol_exec_chain(word, chain, POL_CHAIN_MAX);
	return cmdpol_match(p, chain, n);
}
