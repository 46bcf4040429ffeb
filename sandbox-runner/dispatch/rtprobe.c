/* The runtimes probe: which runtimes of runner_runtimes_file this host's sandbox provides
 * (see rtprobe.h). */
#include "rtprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "joblimits.h"
#include "log.h"
#include "policy.h"
#include "runtimes.h"
#include "store.h"
#include "supervise.h"
#include "util.h"

#define PROBE_OUTPUT_BYTES 4096

struct rtp_res {
	int ok;
	int has_version;
	char version[RT_VERSION_MAX + 1];
};

/* argv[0] found along the sandbox's PATH, the end of its links an executable file. */
static int program_found(char *const *argv)
{
	char chain[POL_CHAIN_MAX][POL_PATH_MAX];
	struct stat st;
	size_t n;

	if (argv == NULL)
		return 1;
	if (argv[0][0] != '/' && strchr(argv[0], '/'))
		return 1; /* relative (./prog): the job's own file, made by its compile step */
	n = pol_exec_chain(argv[0], chain, POL_CHAIN_MAX);
	return n > 0 && stat(chain[0], &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

/* The version argv, run as a job is: 1 and the version line when it exits 0. */
static int run_version(const struct cfg *cfg, int slot, const struct rt_entry *e, char *ver,
		       size_t verlen)
{
	struct job j;
	unsigned char out[PROBE_OUTPUT_BYTES];
	size_t outlen = sizeof out;
	enum job_state state;
	int code = -1, rc;

	memset(&j, 0, sizeof j);
	util_uuid7(j.id);
	j.argv = rt_expand(e->version, "/dev/null");
	j.env = json_object();
	j.cwd = (char *)"";
	for (int i = 0; i < LIM_COUNT; i++)
		j.limits[i] = cfg->limit_default[i];
	j.limits[LIM_WALL_SECONDS] = cfg->runner_runtime_probe_seconds;
	j.limits[LIM_CPU_SECONDS] = cfg->runner_runtime_probe_seconds;
	j.limits[LIM_OUTPUT_BYTES] = PROBE_OUTPUT_BYTES;
	rc = j.argv && j.env ? supervise_capture(cfg, &j, slot, &state, &code, out, &outlen) : -1;
	json_decref(j.argv);
	json_decref(j.env);
	if (rc < 0 || state != JS_SUCCEEDED || code != 0)
		return 0;
	rt_version_line(out, outlen, ver, verlen);
	return 1;
}

static void aliases_csv(const struct rt_entry *e, char *out, size_t outlen)
{
	size_t k = 0;

	out[0] = '\0';
	for (size_t i = 0; i < e->naliases && k < outlen; i++) {
		int w = snprintf(out + k, outlen - k, "%s%s", i ? "," : "", e->aliases[i]);
		if (w < 0)
			break;
		k += (size_t)w;
	}
}

/* This host's runtimes rows, replaced: the body of their transaction (db_tx_step). */
struct store_tx {
	const char *host;
	const struct rt_set *set;
	const struct rtp_res *res;
};

static enum db_tx_end store_body(struct db *db, void *arg)
{
	const struct store_tx *t = arg;
	char aliases[RT_MAX_ALIASES * (RT_NAME_MAX + 1) + 1];

	if (db_exec_p(db, "DELETE FROM runner_runtimes WHERE host = ?", db_str(t->host)) < 0)
		return DB_TX_ERROR;
	for (size_t i = 0; i < t->set->n; i++) {
		const struct rt_entry *e = &t->set->e[i];
		if (!t->res[i].ok)
			continue;
		aliases_csv(e, aliases, sizeof aliases);
		if (db_exec_p(db,
			      "INSERT INTO runner_runtimes (host, name, version, aliases, file,"
			      " has_compile, seen_at) VALUES (?, ?, ?, ?, ?, ?, NOW(3))",
			      db_str(t->host), db_str(e->name),
			      db_str(t->res[i].has_version ? t->res[i].version : NULL),
			      db_str(aliases), db_str(e->file), db_i64(e->compile != NULL)) < 0)
			return DB_TX_ERROR;
	}
	return DB_TX_COMMIT;
}

static int store(struct db *db, const char *host, const struct rt_set *set,
		 const struct rtp_res *res)
{
	struct store_tx t = { host, set, res };

	return db_tx_step(db, "runtimes", store_body, &t) < 0 ? -1 : 0;
}

/* The digest of the runtimes file as rt_load reads it, "-" when it cannot be used. */
static void file_sum(const struct cfg *cfg, char sum[65])
{
	struct rt_set set = { NULL, 0 };
	char err[400];

	if (rt_load_sum(cfg->runner_runtimes_file, &set, sum, err, sizeof err) < 0)
		snprintf(sum, 65, "-");
	rt_free(&set);
}

static int stamp_path(const struct cfg *cfg, char *path, size_t len, const char *suffix)
{
	return (size_t)snprintf(path, len, "%s/" RTP_STAMP "%s", cfg->runner_state_dir, suffix) < len
		       ? 0
		       : -1;
}

/* The stamp's digest in sum and its age in seconds; -1 when there is none. */
static int read_stamp(const struct cfg *cfg, char sum[65], long long *age)
{
	char path[CFG_PATH_MAX + 64];
	struct stat st;
	ssize_t n;
	int fd;

	if (stamp_path(cfg, path, sizeof path, "") < 0 ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, sum, 64) : -1;
	close(fd);
	if (n != 64)
		return -1;
	sum[64] = '\0';
	*age = (long long)(time(NULL) - st.st_mtime);
	return 0;
}

/* After a stored probe: the digest of what it read (temp file + rename; the state
 * directory is root's). */
static void write_stamp(const struct cfg *cfg, const char *sum)
{
	char path[CFG_PATH_MAX + 64], tmp[CFG_PATH_MAX + 64];
	int fd, ok;

	if (strlen(sum) != 64 || stamp_path(cfg, path, sizeof path, "") < 0 ||
	    stamp_path(cfg, tmp, sizeof tmp, ".tmp") < 0)
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	ok = write(fd, sum, 64) == 64 && write(fd, "\n", 1) == 1;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) < 0) {
		log_kv("warn", "runtime_stamp", "error", strerror(errno), (char *)NULL);
		unlink(tmp);
	}
}

int rtp_due(const struct cfg *cfg, struct db *db, const char *host)
{
	char sum[65], stamp[65];
	long long stamp_age = 0, rows, age;
	struct db_res *res;

	file_sum(cfg, sum);
	if (read_stamp(cfg, stamp, &stamp_age) < 0 || strcmp(stamp, sum) != 0) {
		log_kv("info", "runtime_probe_due", "reason", "runtimes file changed", (char *)NULL);
		return 1;
	}
	res = db_query_p(db,
			 "SELECT COUNT(*) AS n, COALESCE(TIMESTAMPDIFF(SECOND, MAX(seen_at), NOW(3)),"
			 " 0) AS age FROM runner_runtimes WHERE host = ?",
			 db_str(host));
	if (res == NULL) {
		log_kv("warn", "db_error", "step", "runtime_probe_due", "error", db_error(db),
		       (char *)NULL);
		return 0;
	}
	rows = db_res_i(res, 0, "n", 0);
	age = rows > 0 ? db_res_i(res, 0, "age", 0) : stamp_age;
	db_res_free(res);
	if (age * 1000 < RTP_EVERY_MS)
		return 0;
	log_kv("info", "runtime_probe_due", "reason", "last probe older than 3 minutes",
	       (char *)NULL);
	return 1;
}

static void probe_all(const struct cfg *cfg, const char *host, int slot)
{
	struct rt_set set = { NULL, 0 };
	struct rtp_res *res;
	struct db *db;
	char err[400], sum[65] = "-";

	/* the runner refuses an unsafe file the same way as its command policy; a
	 * file it cannot use means this host provides no runtime */
	if (rt_load_sum(cfg->runner_runtimes_file, &set, sum, err, sizeof err) < 0)
		log_kv("warn", "runtimes_file", "error", err, (char *)NULL);
	res = calloc(set.n + 1, sizeof *res);
	if (res == NULL)
		goto out;
	for (size_t i = 0; i < set.n; i++) {
		const struct rt_entry *e = &set.e[i];
		int found = program_found(e->version) && program_found(e->compile) &&
			    program_found(e->run);
		int ran = found && e->version &&
			  run_version(cfg, slot, e, res[i].version, sizeof res[i].version);

		res[i].ok = rt_available(e, found, ran);
		res[i].has_version = ran;
		log_kv("info", "runtime_probe", "runtime", e->name, "available",
		       res[i].ok ? "yes" : "no", "version", res[i].version, (char *)NULL);
	}
	db = db_open(cfg, err, sizeof err);
	if (db == NULL || store(db, host, &set, res) < 0)
		log_kv("warn", "runtime_store", "error", db ? db_error(db) : err, (char *)NULL);
	else
		write_stamp(cfg, sum);
	db_close(db);
out:
	free(res);
	rt_free(&set);
}

int rtp_launch(const struct cfg *cfg, const char *host, int slot)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* never touch the dispatcher's database connection: ours is new */
		if (setsid() < 0 || fork() != 0)
			_exit(0);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		/* ps and the tests tell the probe's sandbox (in a free job slot, as its
		 * uid) from a job's by this ancestor */
		prctl(PR_SET_NAME, "sbx-rtprobe", 0, 0, 0);
		probe_all(cfg, host, slot);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
