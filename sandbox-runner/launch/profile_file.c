/* Named profiles: runner_profiles_dir/NAME.profile, the compiled-in profile plus the
 * read-only binds of its file. The file's format and every rule a bind must pass
 * (under /usr or /opt, normalized, root-owned all the way down, clear of the runner's
 * private paths), reading it safely, and the check of every file at runner start. */
#include "profile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

int prof_name_valid(const char *name)
{
	static const char lower_digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t n = strlen(name);

	return n >= 1 && n <= PROF_NAME_MAX && strchr(lower_digits, name[0]) != NULL &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

/* inner is outer or lies under it (both absolute and normalized). */
static int path_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);

	while (n > 1 && outer[n - 1] == '/')
		n--;
	return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

/* Why p cannot be a bind's path, or NULL: absolute, normalized, printable, strictly
 * under /usr or /opt; never /proc, /sys or /dev. */
static const char *bind_path_why(const char *p)
{
	static const char *const never[][2] = {
		{ "/proc", "/proc is never bound from the host" },
		{ "/sys", "/sys is never bound from the host" },
		{ "/dev", "no device: /dev is never bound from the host" },
	};

	for (size_t i = 0; i < N(never); i++)
		if (path_within(p, never[i][0]))
			return never[i][1];
	if (strlen(p) >= PROF_PATH_MAX)
		return "path too long";
	if (!(strncmp(p, "/usr/", 5) == 0 || strncmp(p, "/opt/", 5) == 0))
		return "must be a directory under /usr or /opt";
	for (const char *c = p; *c; c++)
		if (*c <= ' ' || *c == 0x7f || (unsigned char)*c >= 0x80)
			return "must be printable ASCII without white space";
	if (strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../") || p[strlen(p) - 1] == '/' ||
	    (strlen(p) >= 2 && strcmp(p + strlen(p) - 2, "/.") == 0) ||
	    (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0))
		return "must be normalized (no '.', '..', '//' or trailing '/')";
	return NULL;
}

/* Every directory from the top down to p: a directory, not a link, owned by root,
 * not group or world writable (so no one else can swap what is bound). */
static const char *host_dir_why(const char *p, char *buf, size_t n)
{
	char part[PROF_PATH_MAX];
	struct stat st;

	for (size_t i = 1; p[i - 1]; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		memcpy(part, p, i);
		part[i] = '\0';
		if (lstat(part, &st) < 0)
			snprintf(buf, n, "%s: %s", part, strerror(errno));
		else if (S_ISLNK(st.st_mode))
			snprintf(buf, n, "%s is a symbolic link", part);
		else if (!S_ISDIR(st.st_mode))
			snprintf(buf, n, "%s is not a directory", part);
		else if (st.st_uid != 0 || (st.st_mode & 022) != 0)
			snprintf(buf, n, "%s must be owned by root and not group or world writable",
				 part);
		else
			continue;
		return buf;
	}
	return NULL;
}

/* What a bind's source must never show: the runner's state, the database, the API
 * socket (under it, or it under them). Paths from the config are compared as given
 * and resolved. */
static const char *private_path_why(const struct cfg *cfg, const char *src)
{
	const struct {
		const char *path, *what;
	} priv[] = {
		{ cfg->runner_state_dir, "runner_state_dir" },
		{ cfg->db_socket, "db_socket" },
		{ cfg->db_password_file, "db_password_file" },
		{ cfg->fcgi_socket, "fcgi_socket" },
		{ cfg->runner_profiles_dir, "runner_profiles_dir" },
	};
	static char why[160];

	for (size_t i = 0; i < N(priv); i++) {
		char real[PATH_MAX];
		const char *p = priv[i].path;

		if (*p != '/')
			continue;
		if (realpath(p, real) == NULL)
			snprintf(real, sizeof real, "%s", p);
		if (path_within(src, p) || path_within(p, src) || path_within(src, real) ||
		    path_within(real, src)) {
			snprintf(why, sizeof why, "must not contain or lie under %s", priv[i].what);
			return why;
		}
	}
	return NULL;
}

/* Directives a profile file might try: each named with why it is refused. */
static const char *const refused_ops[][2] = {
	{ "bind", "nothing writable: only ro-bind" },
	{ "bind-try", "nothing writable: only ro-bind" },
	{ "rw-bind", "nothing writable: only ro-bind" },
	{ "tmpfs", "nothing writable: only ro-bind" },
	{ "dir", "nothing writable: only ro-bind" },
	{ "file", "nothing writable: only ro-bind" },
	{ "dev-bind", "no device: only ro-bind" },
	{ "dev-bind-try", "no device: only ro-bind" },
	{ "dev", "no device: only ro-bind" },
	{ "proc", "/proc is the profile's own: only ro-bind" },
	{ "symlink", "only ro-bind" },
	{ "ro-bind-try", "only ro-bind (the source must exist)" },
};

/* One `ro-bind SRC DST` line into bind n of p: NULL, or why not. */
static const char *parse_line(const struct cfg *cfg, char *line, struct prof_named *p,
			      size_t n, char *buf, size_t bn)
{
	char *tok[4], *save = NULL;
	size_t nt = 0;
	const char *why;

	for (char *t = strtok_r(line, " \t", &save); t && nt < 4; t = strtok_r(NULL, " \t", &save))
		tok[nt++] = t;
	for (size_t i = 0; i < N(refused_ops); i++)
		if (strcmp(tok[0], refused_ops[i][0]) == 0) {
			snprintf(buf, bn, "'%s' is refused (%s)", tok[0], refused_ops[i][1]);
			return buf;
		}
	if (strcmp(tok[0], "ro-bind") != 0) {
		snprintf(buf, bn, "unknown directive '%.32s' (only 'ro-bind SRC DST')", tok[0]);
		return buf;
	}
	if (nt != 3)
		return "expected 'ro-bind SRC DST'";
	if (n == PROF_MAX_BINDS) {
		snprintf(buf, bn, "more than %d binds", PROF_MAX_BINDS);
		return buf;
	}
	for (int k = 1; k <= 2; k++) {
		const char *what = k == 1 ? "source" : "destination";
		char inner[PROF_PATH_MAX + 96];

		why = bind_path_why(tok[k]);
		if (why == NULL && k == 1)
			why = private_path_why(cfg, tok[k]);
		/* /usr is bound as it is: a mount point there must exist already */
		if (why == NULL && (k == 1 || strncmp(tok[k], "/usr/", 5) == 0))
			why = host_dir_why(tok[k], inner, sizeof inner);
		if (why != NULL) {
			snprintf(buf, bn, "%s %.*s: %.400s", what, PROF_PATH_MAX, tok[k], why);
			return buf;
		}
		if ((size_t)snprintf(p->paths[n][k - 1], PROF_PATH_MAX, "%s", tok[k]) >=
		    PROF_PATH_MAX)
			return "path too long";
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(p->paths[i][1], tok[2]) == 0) {
			snprintf(buf, bn, "destination %s is bound twice", tok[2]);
			return buf;
		}
	p->binds[n] = (struct prof_mount){ "--ro-bind", p->paths[n][0], p->paths[n][1] };
	return NULL;
}

int prof_parse(const struct cfg *cfg, const char *name, const char *text,
	       struct prof_named *p, char *err, size_t errlen)
{
	size_t n = 0;
	int lineno = 0;

	memset(p, 0, sizeof *p);
	snprintf(p->name, sizeof p->name, "%s", name);
	p->t = prof_default;
	p->t.name = p->name;
	p->t.extra = p->binds;
	for (const char *s = text; *s;) {
		size_t len = strcspn(s, "\n");
		char line[2 * PROF_PATH_MAX + 64], buf[1024];
		const char *why, *t;

		lineno++;
		if (len >= sizeof line) {
			snprintf(err, errlen, "line %d: too long", lineno);
			return -1;
		}
		memcpy(line, s, len);
		line[len] = '\0';
		s += len + (s[len] == '\n');
		t = line + strspn(line, " \t\r");
		if (*t == '\0' || *t == '#')
			continue;
		line[strcspn(line, "\r")] = '\0';
		why = parse_line(cfg, line, p, n, buf, sizeof buf);
		if (why != NULL) {
			snprintf(err, errlen, "line %d: %s", lineno, why);
			return -1;
		}
		p->t.n_extra = ++n;
	}
	return 0;
}

/* The open profile directory, checked like the files in it; -1 with err. */
static int open_profiles_dir(const struct cfg *cfg, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(cfg->runner_profiles_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "runner_profiles_dir %s: %s", cfg->runner_profiles_dir,
			 errno == ELOOP ? "is a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022) != 0) {
		snprintf(err, errlen, "runner_profiles_dir %s must be owned by root and not group "
				      "or world writable", cfg->runner_profiles_dir);
		close(fd);
		return -1;
	}
	return fd;
}

/* dir/NAME.profile's text (malloc'd), checked: a regular root-owned file that only
 * root can write. NULL with err naming the file. */
static char *read_profile(const struct cfg *cfg, int dir, const char *file, char *err,
			  size_t errlen)
{
	struct stat st;
	char *text = NULL;
	ssize_t r = -1;
	int fd = openat(dir, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		snprintf(err, errlen, "profile '%.*s' is not defined on this runner host (no %s/%s)",
			 (int)(strlen(file) - 8), file, cfg->runner_profiles_dir, file);
		return NULL;
	}
	if (fd < 0) {
		snprintf(err, errlen, "%s/%s: %s", cfg->runner_profiles_dir, file,
			 errno == ELOOP ? "is a symbolic link" : strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022) != 0) {
		snprintf(err, errlen, "%s/%s must be a regular file owned by root and not group "
				      "or world writable (owner %u, mode %04o)",
			 cfg->runner_profiles_dir, file, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
	} else if (st.st_size > PROF_FILE_MAX) {
		snprintf(err, errlen, "%s/%s is larger than %d bytes", cfg->runner_profiles_dir,
			 file, PROF_FILE_MAX);
	} else if ((text = malloc((size_t)st.st_size + 1)) == NULL ||
		   (r = read(fd, text, (size_t)st.st_size)) != st.st_size ||
		   memchr(text, '\0', (size_t)r) != NULL) {
		snprintf(err, errlen, "%s/%s: %s", cfg->runner_profiles_dir, file,
			 text == NULL ? "out of memory" : r < 0 ? strerror(errno)
							   : "changed while read or holds a NUL byte");
		free(text);
		text = NULL;
	} else {
		text[r] = '\0';
	}
	close(fd);
	return text;
}

/* Loads NAME.profile from the open directory dir into p. */
static int load_at(const struct cfg *cfg, int dir, const char *name, struct prof_named *p,
		   char *err, size_t errlen)
{
	char file[PROF_NAME_MAX + 16], why[1200];
	char *text;
	int rc;

	snprintf(file, sizeof file, "%s.profile", name);
	text = read_profile(cfg, dir, file, err, errlen);
	if (text == NULL)
		return -1;
	rc = prof_parse(cfg, name, text, p, why, sizeof why);
	if (rc < 0)
		snprintf(err, errlen, "%s/%s: %s", cfg->runner_profiles_dir, file, why);
	free(text);
	return rc;
}

int prof_load(const struct cfg *cfg, const char *name, struct prof_named *p, char *err,
	      size_t errlen)
{
	int dir, rc;

	if (!prof_name_valid(name)) {
		snprintf(err, errlen, "profile name '%.64s' is not [a-z0-9][a-z0-9_-]* (at most "
				      "%d)", name, PROF_NAME_MAX);
		return -1;
	}
	if (strcmp(name, PROF_DEFAULT) == 0) {
		memset(p, 0, sizeof *p);
		snprintf(p->name, sizeof p->name, "%s", name);
		p->t = prof_default;
		return 0;
	}
	if (cfg->runner_profiles_dir[0] == '\0') {
		snprintf(err, errlen, "profile '%s' is not defined on this runner host "
				      "(runner_profiles_dir is not set)", name);
		return -1;
	}
	if ((dir = open_profiles_dir(cfg, err, errlen)) < 0)
		return -1;
	rc = load_at(cfg, dir, name, p, err, errlen);
	close(dir);
	return rc;
}

int prof_check_profiles(const struct cfg *cfg, char *err, size_t errlen)
{
	struct prof_named *p;
	struct dirent *e;
	DIR *d;
	int dir, rc = 0;

	if (cfg->runner_profiles_dir[0] == '\0')
		return 0;
	if ((dir = open_profiles_dir(cfg, err, errlen)) < 0)
		return -1;
	d = fdopendir(dir);
	p = malloc(sizeof *p);
	if (d == NULL || p == NULL) {
		snprintf(err, errlen, "runner_profiles_dir %s: %s", cfg->runner_profiles_dir,
			 strerror(errno));
		if (d == NULL)
			close(dir);
		else
			closedir(d);
		free(p);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		char name[PROF_NAME_MAX + 1];

		if (e->d_name[0] == '.' || n <= 8 || strcmp(e->d_name + n - 8, ".profile") != 0)
			continue;
		snprintf(name, sizeof name, "%.*s", (int)(n - 8), e->d_name);
		if (n - 8 > PROF_NAME_MAX || !prof_name_valid(name)) {
			snprintf(err, errlen, "%s/%s: a profile's name must be [a-z0-9][a-z0-9_-]* "
				 "(at most %d)", cfg->runner_profiles_dir, e->d_name, PROF_NAME_MAX);
			rc = -1;
		} else if (strcmp(name, PROF_DEFAULT) == 0) {
			snprintf(err, errlen, "%s/%s: 'default' is the compiled-in profile and cannot "
				 "be redefined", cfg->runner_profiles_dir, e->d_name);
			rc = -1;
		} else {
			rc = load_at(cfg, dirfd(d), name, p, err, errlen);
		}
	}
	closedir(d);
	free(p);
	return rc;
}
