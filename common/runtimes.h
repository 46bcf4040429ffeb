/* The operator's runtimes file (runner_runtimes_file): what `"runtime": NAME` in a job
 * means. Read by the API (the argv a job gets) and by the runner (what it probes).
 *
 * Format, one directive a line, `#` comments, blank lines ignored:
 *
 *   runtime NAME [aliases=A,B] file=PATH [version=ARGV] [compile=ARGV] run=ARGV
 *
 * NAME and aliases: 1..32 of [a-z0-9+._-], starting with a letter or digit, unique
 * across every name and alias. file: the relative path the job's `source` is written
 * to. ARGV: comma-separated elements; `\,` is a comma, `\s` a space, `\\` a backslash
 * (no other escape); an element may not be empty. `{file}` is the only placeholder
 * and must be a whole element: it becomes the file's path in the sandbox
 * (/workspace/PATH), one argv element, never part of a shell string. Any other `{`
 * is an error. Unknown directives and keys are errors naming file:line. */
#ifndef SANDBOX_RUNTIMES_H
#define SANDBOX_RUNTIMES_H

#include <jansson.h>
#include <stddef.h>

#define RT_NAME_MAX 32
#define RT_MAX_ALIASES 8
#define RT_FILE_MAX 128
#define RT_MAX_ARGV 32
#define RT_MAX 64
#define RT_FILE_BYTES 65536
#define RT_PLACEHOLDER "{file}"
#define RT_WORKSPACE "/workspace"

struct rt_entry {
	char name[RT_NAME_MAX + 1];
	char aliases[RT_MAX_ALIASES][RT_NAME_MAX + 1];
	size_t naliases;
	char file[RT_FILE_MAX + 1];
	char **version; /* NULL-terminated argv, or NULL: no version probe */
	char **compile; /* NULL: interpreted */
	char **run;     /* never NULL */
};

struct rt_set {
	struct rt_entry *e;
	size_t n;
};

/* Parses text (fname only for messages): 0, or -1 with "fname:line: why" in err. */
int rt_parse(const char *text, size_t len, const char *fname, struct rt_set *set, char *err,
	     size_t errlen);
void rt_free(struct rt_set *set);
/* Reads a trusted file: a regular file (not a link) owned by root, not group or world
 * writable, in a directory of the same kind (as runner_command_policy). 0 or -1. */
int rt_load(const char *path, struct rt_set *set, char *err, size_t errlen);
/* rt_load, and the SHA-256 (hex) of the bytes it parsed in sum when it succeeded. */
int rt_load_sum(const char *path, struct rt_set *set, char sum[65], char *err, size_t errlen);
/* This process's copy of path, read again when its size or mtime changes; NULL with
 * err when it cannot be read (the previous copy is dropped). */
const struct rt_set *rt_cached(const char *path, char *err, size_t errlen);
/* The entry named name or having it as an alias, or NULL. */
const struct rt_entry *rt_find(const struct rt_set *set, const char *name);
/* A new JSON array of tmpl with every {file} element replaced by file; NULL on ENOMEM. */
json_t *rt_expand(char *const *tmpl, const char *file);
/* "python3, perl, ..." (truncated with "..." if it does not fit). */
void rt_names(const struct rt_set *set, char *out, size_t outlen);

#define RT_VERSION_MAX 200
/* A version probe's output -> its first non-empty line, at most RT_VERSION_MAX bytes,
 * each byte outside printable ASCII replaced by '?', edge blanks trimmed: out is ""
 * when there is none. */
void rt_version_line(const unsigned char *o, size_t n, char *out, size_t outlen);
/* Whether a runner host provides a runtime: every program it names (version,
 * compile, run argv[0], but the job's own ./prog) was found (found != 0), and the
 * version argv, if the entry has one, ran to exit 0 (ran_ok). */
int rt_available(const struct rt_entry *e, int found, int ran_ok);

#endif
