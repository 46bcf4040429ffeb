/* A per-worker cache of finished jobs' rendered objects. A terminal job never
 * changes again (the runner writes a result only into a running job, a cancel of a
 * finished job is a no-op), so its object can be served without the two queries
 * that build it. Scope is still checked on every hit; the identity comes from
 * auth_identify, whose own cache refuses a revoked key at once (app/http/auth.h). */
#ifndef SANDBOX_JOBCACHE_H
#define SANDBOX_JOBCACHE_H

#include <jansson.h>

#include "auth.h"

#define JOBCACHE_ENTRIES 256
#define JOBCACHE_MAX_OUTPUT 16384 /* bytes of stdout+stderr; bigger jobs are not kept */

/* A new reference to the cached job if present and visible to who, else NULL. */
json_t *jc_get(const char *id, const struct identity *who);
/* Remembers job (borrowed; a reference is kept) if it is terminal and its webhook,
 * if any, is delivered or failed (a pending delivery still changes the object). */
void jc_put(const char *id, json_t *job);
/* The serialized bytes of job (compact JSON + "\n", exactly what http_send_json
 * writes) when job is an object this cache holds, else NULL: a cached job is
 * immutable, so it is serialized once, when it is put. */
const char *jc_text(const json_t *job, size_t *len);
void jc_clear(void);

#endif
