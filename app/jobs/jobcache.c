/* A per-worker cache of finished jobs' rendered objects (see jobcache.h). */
#include "jobcache.h"

#include <stdlib.h>
#include <string.h>

#include "jobstate.h"
#include "util.h"

struct entry {
	char id[UUID_STR_LEN];
	json_t *job;
	char *text; /* job serialized once (compact, '\n'-terminated), NULL if no memory */
	size_t len;
	unsigned long long used;
};

static struct entry cache[JOBCACHE_ENTRIES];
static unsigned long long clock_;
static int last_hit = -1;

static const char *ident(json_t *job, const char *k)
{
	return json_string_value(json_object_get(json_object_get(job, "identity"), k));
}

static int same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* The same rule as the SQL scope of app/jobs/jobs.c: tenant admins see their tenant,
 * everyone else their own subject. */
static int visible(json_t *job, const struct identity *who)
{
	if (!same(ident(job, "identity_namespace"), who->ns) ||
	    !same(ident(job, "tenant_id"), who->tenant))
		return 0;
	return who->tenant_admin || (same(ident(job, "subject_type"), who->subject_type) &&
				     same(ident(job, "subject_id"), who->subject_id));
}

json_t *jc_get(const char *id, const struct identity *who)
{
	for (int i = 0; i < JOBCACHE_ENTRIES; i++) {
		if (cache[i].job && strcmp(cache[i].id, id) == 0) {
			if (!visible(cache[i].job, who))
				return NULL;
			cache[i].used = ++clock_;
			last_hit = i;
			return json_incref(cache[i].job);
		}
	}
	return NULL;
}

/* Output dominates a job's size; big ones are not worth a cache slot. */
static size_t output_size(json_t *job)
{
	static const char *const keys[] = { "stdout", "stderr", "stdout_base64", "stderr_base64" };
	json_t *res = json_object_get(job, "result");
	size_t n = 0;

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		n += json_string_length(json_object_get(res, keys[i]));
	return n;
}

/* The bytes http_send_json would write for job: compact JSON and a newline. */
static char *serialize(const json_t *job, size_t *len)
{
	size_t n = json_dumpb(job, NULL, 0, JSON_COMPACT);
	char *t = n ? malloc(n + 1) : NULL;

	if (t == NULL)
		return NULL;
	json_dumpb(job, t, n, JSON_COMPACT);
	t[n] = '\n';
	*len = n + 1;
	return t;
}

/* A finished job's webhook is still delivered after it ended: the object is final
 * only once the callback is (none, delivered, or failed). */
static int callback_final(json_t *job)
{
	json_t *cb = json_object_get(job, "callback");
	const char *st = json_string_value(json_object_get(cb, "state"));

	return cb == NULL || json_is_null(cb) ||
	       (st && (strcmp(st, "delivered") == 0 || strcmp(st, "failed") == 0));
}

void jc_put(const char *id, json_t *job)
{
	const char *state = json_string_value(json_object_get(job, "status"));
	int victim = 0;

	if (!js_is_terminal(js_parse(state)) || !callback_final(job) ||
	    strlen(id) >= UUID_STR_LEN || output_size(job) > JOBCACHE_MAX_OUTPUT)
		return;
	for (int i = 0; i < JOBCACHE_ENTRIES; i++) {
		if (cache[i].job && strcmp(cache[i].id, id) == 0)
			return;
		if (cache[i].used < cache[victim].used)
			victim = i;
	}
	json_decref(cache[victim].job);
	free(cache[victim].text);
	memcpy(cache[victim].id, id, strlen(id) + 1);
	cache[victim].job = json_incref(job);
	cache[victim].text = serialize(job, &cache[victim].len);
	cache[victim].used = ++clock_;
	if (last_hit == victim)
		last_hit = -1;
}

const char *jc_text(const json_t *job, size_t *len)
{
	int i = last_hit;

	if (job == NULL || i < 0 || cache[i].job != job || cache[i].text == NULL)
		for (i = 0; i < JOBCACHE_ENTRIES; i++)
			if (cache[i].job == job && job != NULL)
				break;
	if (i >= JOBCACHE_ENTRIES || cache[i].text == NULL)
		return NULL;
	*len = cache[i].len;
	return cache[i].text;
}

void jc_clear(void)
{
	for (int i = 0; i < JOBCACHE_ENTRIES; i++) {
		json_decref(cache[i].job);
		free(cache[i].text);
		memset(&cache[i], 0, sizeof cache[i]);
	}
	last_hit = -1;
}
