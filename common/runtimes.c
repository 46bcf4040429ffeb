/* The operator's runtimes file (runner_runtimes_file) (see runtimes.h). */
#include "runtimes.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pathrules.h"
#include "sha256.h"

#define LINE_MAX_BYTES 4096

static int perr(char *err, size_t errlen, const char *fname, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int perr(char *err, size_t errlen, const char *fname, size_t line, const char *fmt, ...)
{
	char why[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s:%zu: %s", fname, line, why);
	return -1;
}

static void free_argv(char **v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > RT_NAME_MAX || !((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || strchr("+._-", *s)))
			return 0;
	return 1;
}

/* "a,b\,c" -> {"a", "b,c", NULL}; NULL with why set. */
static char **split_argv(const char *s, const char **why)
{
	char **v = calloc(RT_MAX_ARGV + 1, sizeof *v);
	size_t n = 0, len = strlen(s);
	char *cur = malloc(len + 1);
	size_t k = 0;

	*why = "out of memory";
	if (v == NULL || cur == NULL)
		goto fail;
	for (size_t i = 0;; i++) {
		char c = s[i];
		if (c == '\\') {
			c = s[++i];
			if (c != ',' && c != '\\' && c != 's') {
				*why = "unknown escape (only \\, \\s \\\\)";
				goto fail;
			}
			cur[k++] = c == 's' ? ' ' : c;
			continue;
		}
		if (c != ',' && c != '\0') {
			if (c == '{') {
				*why = "'{' outside a whole {file} element";
				if (strncmp(s + i, RT_PLACEHOLDER, 6) != 0 || k != 0 ||
				    (s[i + 6] != ',' && s[i + 6] != '\0'))
					goto fail;
			}
			if ((unsigned char)c < 0x21 || c == 0x7f) {
				*why = "control character";
				goto fail;
			}
			cur[k++] = c;
			continue;
		}
		cur[k] = '\0';
		*why = "empty argv element";
		if (k == 0)
			goto fail;
		*why = "more than 32 argv elements";
		if (n == RT_MAX_ARGV)
			goto fail;
		*why = "out of memory";
		if ((v[n++] = strdup(cur)) == NULL)
			goto fail;
		k = 0;
		if (c == '\0')
			break;
	}
	free(cur);
	return v;
fail:
	free(cur);
	free_argv(v);
	return NULL;
}

static int taken(const struct rt_set *set, const char *name)
{
	return rt_find(set, name) != NULL;
}

static int set_argv(char ***dst, const char *val, const char *key, const char *fname,
		    size_t line, char *err, size_t errlen)
{
	const char *why;

	if (*dst != NULL)
		return perr(err, errlen, fname, line, "%s given twice", key);
	if ((*dst = split_argv(val, &why)) == NULL)
		return perr(err, errlen, fname, line, "%s: %s", key, why);
	return 0;
}

static int set_aliases(struct rt_set *set, struct rt_entry *e, char *val, const char *fname,
		       size_t line, char *err, size_t errlen)
{
	char *save = NULL;

	if (e->naliases)
		return perr(err, errlen, fname, line, "aliases given twice");
	for (char *a = strtok_r(val, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		if (!name_ok(a))
			return perr(err, errlen, fname, line, "bad alias '%.40s'", a);
		if (e->naliases == RT_MAX_ALIASES)
			return perr(err, errlen, fname, line, "more than %d aliases", RT_MAX_ALIASES);
		if (taken(set, a) || strcmp(a, e->name) == 0)
			return perr(err, errlen, fname, line, "'%s' names two runtimes", a);
		for (size_t i = 0; i < e->naliases; i++)
			if (strcmp(e->aliases[i], a) == 0)
				return perr(err, errlen, fname, line, "'%s' given twice", a);
		snprintf(e->aliases[e->naliases++], RT_NAME_MAX + 1, "%s", a);
	}
	return 0;
}

static int parse_kv(struct rt_set *set, struct rt_entry *e, char *kv, const char *fname,
		    size_t line, char *err, size_t errlen)
{
	char *eq = strchr(kv, '=');
	const char *why;

	if (eq == NULL)
		return perr(err, errlen, fname, line, "'%.40s' is not key=value", kv);
	*eq = '\0';
	char *val = eq + 1;
	if (strcmp(kv, "aliases") == 0)
		return set_aliases(set, e, val, fname, line, err, errlen);
	if (strcmp(kv, "file") == 0) {
		if (e->file[0])
			return perr(err, errlen, fname, line, "file given twice");
		if ((why = pr_rel_path(val, RT_FILE_MAX)) != NULL)
			return perr(err, errlen, fname, line, "file %s", why);
		snprintf(e->file, sizeof e->file, "%s", val);
		return 0;
	}
	if (strcmp(kv, "version") == 0)
		return set_argv(&e->version, val, kv, fname, line, err, errlen);
	if (strcmp(kv, "compile") == 0)
		return set_argv(&e->compile, val, kv, fname, line, err, errlen);
	if (strcmp(kv, "run") == 0)
		return set_argv(&e->run, val, kv, fname, line, err, errlen);
	return perr(err, errlen, fname, line, "unknown key '%.40s'", kv);
}

static int parse_line(struct rt_set *set, char *l, const char *fname, size_t line, char *err,
		      size_t errlen)
{
	char *save = NULL, *w = strtok_r(l, " \t", &save);
	struct rt_entry *e;

	if (w == NULL || *w == '#')
		return 0;
	if (strcmp(w, "runtime") != 0)
		return perr(err, errlen, fname, line, "unknown directive '%.40s'", w);
	if ((w = strtok_r(NULL, " \t", &save)) == NULL || !name_ok(w))
		return perr(err, errlen, fname, line, "runtime needs a name of 1 to %d [a-z0-9+._-]",
			    RT_NAME_MAX);
	if (taken(set, w))
		return perr(err, errlen, fname, line, "'%s' names two runtimes", w);
	if (set->n == RT_MAX)
		return perr(err, errlen, fname, line, "more than %d runtimes", RT_MAX);
	e = &set->e[set->n];
	memset(e, 0, sizeof *e);
	snprintf(e->name, sizeof e->name, "%s", w);
	set->n++; /* from here rt_free releases it */
	while ((w = strtok_r(NULL, " \t", &save)) != NULL)
		if (parse_kv(set, e, w, fname, line, err, errlen) < 0)
			return -1;
	if (!e->file[0])
		return perr(err, errlen, fname, line, "runtime %s has no file=", e->name);
	if (e->run == NULL)
		return perr(err, errlen, fname, line, "runtime %s has no run=", e->name);
	return 0;
}

int rt_parse(const char *text, size_t len, const char *fname, struct rt_set *set, char *err,
	     size_t errlen)
{
	char buf[LINE_MAX_BYTES + 1];
	size_t line = 0;

	set->n = 0;
	set->e = calloc(RT_MAX, sizeof *set->e);
	if (set->e == NULL)
		return perr(err, errlen, fname, 0, "out of memory");
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = (nl ? (size_t)(nl - text) : len) - off;

		line++;
		if (n > LINE_MAX_BYTES || memchr(text + off, '\0', n)) {
			rt_free(set);
			return perr(err, errlen, fname, line, n > LINE_MAX_BYTES ? "line too long"
										 : "NUL byte");
		}
		memcpy(buf, text + off, n);
		buf[n] = '\0';
		if (n && buf[n - 1] == '\r')
			buf[n - 1] = '\0';
		off += n + 1;
		if (parse_line(set, buf, fname, line, err, errlen) < 0) {
			rt_free(set);
			return -1;
		}
	}
	return 0;
}

void rt_free(struct rt_set *set)
{
	for (size_t i = 0; set->e && i < set->n; i++) {
		free_argv(set->e[i].version);
		free_argv(set->e[i].compile);
		free_argv(set->e[i].run);
	}
	free(set->e);
	set->e = NULL;
	set->n = 0;
}


int rt_load(const char *path, struct rt_set *set, char *err, size_t errlen)
{
	return rt_load_sum(path, set, NULL, err, errlen);
}

int rt_load_sum(const char *path, struct rt_set *set, char sum[65], char *err, size_t errlen)
{
	char dir[4096], *buf = NULL, *slash;
	const char *why = NULL;
	struct stat st;
	size_t n = 0;
	ssize_t r;
	int fd, rc;

	set->e = NULL, set->n = 0;
	if (path[0] != '/' || strlen(path) >= sizeof dir)
		return perr(err, errlen, path, 0, "not an absolute path");
	snprintf(dir, sizeof dir, "%s", path);
	slash = strrchr(dir, '/');
	slash[slash == dir ? 1 : 0] = '\0';
	if (stat(dir, &st) < 0 || (why = util_untrusted(&st, 1)) != NULL)
		return perr(err, errlen, path, 0, "%s", why ? why : strerror(errno));
	/* never through a link: only root decides what the file says */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return perr(err, errlen, path, 0, "%s",
			    errno == ELOOP ? "a symbolic link" : strerror(errno));
	if (fstat(fd, &st) < 0 || (why = util_untrusted(&st, 0)) != NULL ||
	    st.st_size > RT_FILE_BYTES || (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		int e = errno;
		close(fd);
		return perr(err, errlen, path, 0, "%s",
			    why ? why : st.st_size > RT_FILE_BYTES ? "larger than 64 KiB" : strerror(e));
	}
	while (n < (size_t)st.st_size && ((r = read(fd, buf + n, (size_t)st.st_size - n)) > 0 ||
					  (r < 0 && errno == EINTR)))
		n += r > 0 ? (size_t)r : 0;
	close(fd);
	rc = rt_parse(buf, n, path, set, err, errlen);
	if (sum != NULL && rc == 0)
		sha256_hex(buf, n, sum);
	free(buf);
	return rc;
}

const struct rt_set *rt_cached(const char *path, char *err, size_t errlen)
{
	static struct rt_set set;
	static int have;
	static struct stat seen;
	struct stat st;

	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto drop;
	}
	if (have && st.st_size == seen.st_size && st.st_mtim.tv_sec == seen.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == seen.st_mtim.tv_nsec && st.st_ino == seen.st_ino)
		return &set;
	rt_free(&set);
	have = 0;
	if (rt_load(path, &set, err, errlen) < 0)
		return NULL;
	seen = st;
	have = 1;
	return &set;
drop:
	rt_free(&set);
	have = 0;
	return NULL;
}

const struct rt_entry *rt_find(const struct rt_set *set, const char *name)
{
	for (size_t i = 0; set && i < set->n; i++) {
		if (strcmp(set->e[i].name, name) == 0)
			return &set->e[i];
		for (size_t j = 0; j < set->e[i].naliases; j++)
			if (strcmp(set->e[i].aliases[j], name) == 0)
				return &set->e[i];
	}
	return NULL;
}

json_t *rt_expand(char *const *tmpl, const char *file)
{
	json_t *a = json_array();

	for (size_t i = 0; a && tmpl && tmpl[i]; i++) {
		const char *s = strcmp(tmpl[i], RT_PLACEHOLDER) == 0 ? file : tmpl[i];
		if (json_array_append_new(a, json_string(s)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

void rt_names(const struct rt_set *set, char *out, size_t outlen)
{
	size_t k = 0;

	if (outlen == 0)
		return;
	out[0] = '\0';
	for (size_t i = 0; set && i < set->n; i++) {
		int w = snprintf(out + k, outlen - k, "%s%s", i ? ", " : "", set->e[i].name);
		if (w < 0 || (size_t)w >= outlen - k) {
			if (outlen > 4)
				snprintf(out + (k < outlen - 4 ? k : outlen - 4), 4, "...");
			return;
		}
		k += (size_t)w;
	}
}

void rt_version_line(const unsigned char *o, size_t n, char *out, size_t outlen)
{
	size_t i = 0, k = 0;

	if (outlen == 0)
		return;
	while (i < n) {
		size_t start = i, end;
		while (i < n && o[i] != '\n')
			i++;
		end = i++;
		while (start < end && (o[start] == ' ' || o[start] == '\t' || o[start] == '\r'))
			start++;
		while (end > start && (o[end - 1] == ' ' || o[end - 1] == '\t' || o[end - 1] == '\r'))
			end--;
		if (start == end)
			continue;
		for (size_t j = start; j < end && k + 1 < outlen && k < RT_VERSION_MAX; j++)
			out[k++] = o[j] >= 0x20 && o[j] < 0x7f ? (char)o[j] : '?';
		break;
	}
	while (k > 0 && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
}

int rt_available(const struct rt_entry *e, int found, int ran_ok)
{
	return found && (e->version == NULL || ran_ok);
}
