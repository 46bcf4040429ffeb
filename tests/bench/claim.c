/*
 * bench-claim: the latency of one claim (store_claim, what the dispatcher runs for
 * every free slot) against the stack's MariaDB, whatever else the jobs table holds.
 *
 * Each iteration queues one fresh job (a plain INSERT, not timed), times
 * store_claim, checks that it claimed exactly that job, and marks it succeeded
 * (not timed), so the queue holds one job at a time and the table does not grow
 * by more than the iterations. The runner must be stopped: a queued job it
 * claimed first would make the sample fail. The jobs carry identity
 * bench/bench-claim and the key id given.
 *
 * Output: one JSON object per sample on stdout, a summary on stderr.
 * Exit 0, or 1 when no sample could be taken.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "db.h"
#include "store.h"
#include "util.h"

#define LEASE_S 30
#define DIGEST "sha256:bench-claim"
#define RUNNER_ID "bench-claim/slot-0/0"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A trivial queued job, as POST /v1/jobs would store {"argv":["/bin/true"]}. */
static int queue_job(struct db *db, const char *key_id, char id[UUID_STR_LEN])
{
	if (util_uuid7(id) < 0)
		return -1;
	return db_exec_p(db,
		       "INSERT INTO jobs (id, key_id, identity_namespace, tenant_id, subject_type,"
		       " subject_id, state, argv_json, env_json, stdin, metadata_json,"
		       " wall_seconds, cpu_seconds, memory_mb, pids, output_bytes, disk_mb)"
		       " VALUES (?, ?, 'bench', 'bench-claim', 'user', 'bench', 'queued',"
		       " '[\"/bin/true\"]', '{}', '', '{}', 10, 10, 256, 64, 1048576, 64)",
		       db_str(id), db_str(key_id)) == 1 ? 0 : -1;
}

static int finish_job(struct db *db, const char *id)
{
	return db_exec_p(db,
		       "UPDATE jobs SET state = 'succeeded', finished_at = CURRENT_TIMESTAMP(3),"
		       " lease_expires_at = NULL WHERE id = ?",
		       db_str(id)) == 1 ? 0 : -1;
}

/* One sample: queue, time the claim, finish. The claim's ms, or -1 with err. */
static double one(struct db *db, const char *key_id, char *err, size_t errlen)
{
	char mine[UUID_STR_LEN], got[UUID_STR_LEN] = "";
	double t0, ms;
	int rc;

	if (queue_job(db, key_id, mine) < 0) {
		snprintf(err, errlen, "queueing a job: %s", db_error(db));
		return -1;
	}
	t0 = now_ms();
	rc = store_claim(db, RUNNER_ID, LEASE_S, DIGEST, 0, got);
	ms = now_ms() - t0;
	if (rc != 1 || strcmp(got, mine) != 0) {
		snprintf(err, errlen, rc < 0 ? "store_claim: DB error %s" :
			 rc == 0 ? "store_claim found no queued job (a runner took it?)%s" :
				   "store_claim took another queued job (stop the runner)%s",
			 rc < 0 ? db_error(db) : "");
		finish_job(db, rc == 1 ? got : mine);
		return -1;
	}
	if (finish_job(db, mine) < 0) {
		snprintf(err, errlen, "marking the job done: %s", db_error(db));
		return -1;
	}
	return ms;
}

static void print_sample(long iter, double ms, const char *err)
{
	json_t *o = json_pack("{s:I, s:b}", "iter", (json_int_t)iter, "ok", ms >= 0);

	if (ms >= 0)
		json_object_set_new(o, "claim_ms", json_real(ms));
	else
		json_object_set_new(o, "error", json_string(err));
	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	json_decref(o);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-claim --config FILE --key-id ID [--iterations N] "
			"[--warmup N]\n");
	exit(2);
}

struct opts {
	const char *config, *key_id;
	long long iterations, warmup;
};

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "key-id", required_argument, NULL, 'k' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 'k': o->key_id = optarg; break;
		case 'n':
			if (util_parse_ll(optarg, 1, 10000000, &o->iterations) < 0)
				usage();
			break;
		case 'w':
			if (util_parse_ll(optarg, 0, 1000000, &o->warmup) < 0)
				usage();
			break;
		default: usage();
		}
	}
	if (optind != argc || o->config == NULL || o->key_id == NULL || !util_is_uuid(o->key_id))
		usage();
}

int main(int argc, char **argv)
{
	struct opts o = { .iterations = 200, .warmup = 10 };
	struct cfg cfg;
	struct db *db;
	char err[600];
	double *ms;
	size_t nok = 0, nfail = 0;

	parse(argc, argv, &o);
	if (cfg_load(&cfg, o.config, err, sizeof err) < 0) {
		fprintf(stderr, "bench-claim: config: %s\n", err);
		return 1;
	}
	if ((db = db_open(&cfg, err, sizeof err)) == NULL) {
		fprintf(stderr, "bench-claim: %s\n", err);
		return 1;
	}
	ms = calloc((size_t)o.iterations, sizeof *ms);
	if (ms == NULL)
		return 1;
	for (long long i = 0; i < o.warmup + o.iterations; i++) {
		double t = one(db, o.key_id, err, sizeof err);
		if (i < o.warmup)
			continue;
		print_sample((long)(i - o.warmup), t, err);
		if (t >= 0)
			ms[nok++] = t;
		else
			nfail++;
	}
	fflush(stdout);
	qsort(ms, nok, sizeof *ms, cmp_double);
	fprintf(stderr, "bench-claim: median %.3f ms (%zu ok, %zu failed)\n",
		nok ? ms[nok / 2] : 0.0, nok, nfail);
	free(ms);
	db_close(db);
	return nok ? 0 : 1;
}
