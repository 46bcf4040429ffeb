/* envd's filesystem.Filesystem/WatchDir (the SDK's files.watchDir): a server stream of
 * the changes under a directory of the sandbox, by polling.
 *
 * The host never watches a sandbox's tree itself (inotify would follow what the
 * sandbox renames under it, and an event would name paths the host never checked):
 * every WATCH_POLL_MS the stream asks the supervisor for the directory's listing, the
 * same file_listdir request ListDir makes (by fd, never following a link, bounded by
 * session_list_max_files and the host budget), and compares it with the last one:
 * a path that appeared is EVENT_TYPE_CREATE, one whose size or modification time
 * changed EVENT_TYPE_WRITE, whose mode changed EVENT_TYPE_CHMOD, that went
 * EVENT_TYPE_REMOVE (a rename is a remove and a create). The first listing is the
 * baseline: it must succeed before `start` is sent (a directory that does not exist is
 * a not_found stream error, as envd's). Each request row is deleted once read (a watch
 * leaves nothing behind), and every wait is the waiter's (wt_stream): on the request's
 * answer, then until the next poll or keepalive; the session's end wakes the stream
 * (its next listing fails: the stream ends with that error). */
#include "e2b.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "log.h"
#include "srelay.h"
#include "util.h"
#include "waiter.h"

#define WATCH_POLL_MS 1000
#define WATCH_DEPTH_RECURSIVE 32
#define SIG_MAX 96

struct wentry {
	char *path;        /* relative to the watched directory */
	char sig[SIG_MAX]; /* type, size, mtime, mode */
	char mode[16];
};

struct wstream {
	char sid[40], key_id[40], rel[1100];
	int recursive, started, phase; /* phase: 0 idle, 1 a listing asked for */
	long long req;                 /* the listing's request id (phase 1) */
	double asked_at, next_poll, keep_at, deadline;
	long long keep_ms;
	struct wentry *e;              /* the last listing, sorted by path */
	size_t n;
};

static void ws_free_entries(struct wentry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].path);
	free(e);
}

static void ws_release(void *p)
{
	struct wstream *w = p;

	ws_free_entries(w->e, w->n);
	free(w);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct wentry *)a)->path, ((const struct wentry *)b)->path);
}

/* A listing's entries as a sorted snapshot, paths relative to the watched directory
 * rel. 0, or -1 (malformed answer). */
static int snapshot(const json_t *res, const char *rel, struct wentry **out, size_t *n)
{
	const json_t *list = json_object_get(res, "entries"), *e;
	size_t i, k = 0, rl = strlen(rel);
	struct wentry *v;

	*out = NULL;
	*n = 0;
	if (!json_is_array(list))
		return -1;
	v = calloc(json_array_size(list) + 1, sizeof *v);
	if (v == NULL)
		return -1;
	json_array_foreach(list, i, e) {
		const char *p = json_string_value(json_object_get(e, "path"));
		const char *type = json_string_value(json_object_get(e, "type"));
		const char *mtime = json_string_value(json_object_get(e, "mtime"));

		if (p == NULL || type == NULL)
			continue;
		if (rl > 0 && (strncmp(p, rel, rl) != 0 || p[rl] != '/'))
			continue;
		v[k].path = strdup(rl > 0 ? p + rl + 1 : p);
		if (v[k].path == NULL) {
			ws_free_entries(v, k);
			return -1;
		}
		snprintf(v[k].sig, sizeof v[k].sig, "%s %lld %s", type,
			 (long long)json_integer_value(json_object_get(e, "size")),
			 mtime ? mtime : "");
		snprintf(v[k].mode, sizeof v[k].mode, "%lld",
			 (long long)json_integer_value(json_object_get(e, "mode")));
		k++;
	}
	qsort(v, k, sizeof *v, by_path);
	*out = v;
	*n = k;
	return 0;
}

static void event(struct strbuf *sb, const char *name, const char *type)
{
	cx_frame_json(sb, 0, json_pack("{s:{s:s, s:s}}", "filesystem", "name", name, "type", type));
}

/* The events from the last snapshot to the new one (both sorted). */
static void diff(struct strbuf *sb, const struct wentry *a, size_t na, const struct wentry *b,
		 size_t nb)
{
	size_t i = 0, j = 0;

	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(a[i].path, b[j].path);

		if (c < 0) {
			event(sb, a[i++].path, "EVENT_TYPE_REMOVE");
		} else if (c > 0) {
			event(sb, b[j++].path, "EVENT_TYPE_CREATE");
		} else {
			if (strcmp(a[i].sig, b[j].sig) != 0)
				event(sb, b[j].path, "EVENT_TYPE_WRITE");
			if (strcmp(a[i].mode, b[j].mode) != 0)
				event(sb, b[j].path, "EVENT_TYPE_CHMOD");
			i++;
			j++;
		}
	}
}

/* Asks for a listing: phase 1. 0, or -1 with code/msg. */
static int ask(struct api_ctx *ctx, struct wstream *w, const char **code, const char **msg)
{
	json_t *args = json_pack("{s:s, s:I}", "path", w->rel, "depth",
				 (json_int_t)(w->recursive ? WATCH_DEPTH_RECURSIVE : 1));
	enum srelay_rc rc = args ? srelay_insert(ctx, w->sid, "file_listdir", args, &w->req)
				 : SREQ_DB;

	json_decref(args);
	if (rc != SREQ_DONE) {
		*code = rc == SREQ_QUOTA ? "resource_exhausted" : "unavailable";
		*msg = rc == SREQ_QUOTA ? "the key's stored bytes leave no room for a request"
					: "the database is unavailable; retry";
		return -1;
	}
	w->phase = 1;
	w->asked_at = util_mono_ms();
	return 0;
}

/* Ends the stream: the error in the end envelope (code NULL: a clean end). */
static void finish(struct req *r, struct wstream *w, struct strbuf *sb, const char *code,
		   const char *msg)
{
	if (!w->started) {
		envd_stream_refuse(r, code ? code : "internal", msg ? msg : "");
		return;
	}
	cx_frame_end(sb, code, msg);
	http_stream_write(r, sb->buf, sb->len);
}

/* One run of a watch: read the listing asked for, or ask for the next one, then wait. */
static void run(struct api_ctx *ctx, struct req *r, struct wstream *w)
{
	struct strbuf sb = STRBUF_INIT;
	double now = util_mono_ms();
	const char *code = NULL, *msg = NULL;
	struct db *db = route_db(ctx);
	struct srelay_answer a;
	struct wt_cond cond;
	char idtext[24];
	long long ms;

	if (r->wait.stopping) {
		finish(r, w, &sb, "unavailable", "the service is restarting: watch again");
		goto out;
	}
	if (w->deadline > 0 && now >= w->deadline) {
		finish(r, w, &sb, "deadline_exceeded", "the stream's Connect-Timeout-Ms passed");
		goto out;
	}
	if (db == NULL) {
		finish(r, w, &sb, "unavailable", "the database is unavailable; retry");
		goto out;
	}
	if (w->phase == 1) {
		enum srelay_rc rc = srelay_read(db, w->req, &a);

		if (rc == SREQ_DONE || rc == SREQ_FAILED) {
			struct wentry *e = NULL;
			size_t n = 0;
			const char *err = json_string_value(json_object_get(a.result, "error"));
			const char *m = json_string_value(json_object_get(a.result, "message"));

			db_exec_p(db, "DELETE FROM session_requests WHERE id = ? AND session_id = ?",
				  db_i64(w->req), db_str(w->sid));
			w->phase = 0;
			if (rc == SREQ_FAILED) {
				finish(r, w, &sb, envd_code_of_http(a.http_status),
				       m ? m : err ? err : "the directory cannot be listed");
				srelay_free(&a);
				goto out;
			}
			if (json_is_true(json_object_get(a.result, "truncated")) ||
			    snapshot(a.result, w->rel, &e, &n) < 0) {
				srelay_free(&a);
				finish(r, w, &sb, "resource_exhausted",
				       "the directory is larger than one listing"
				       " (session_list_max_files): watch a smaller one");
				goto out;
			}
			srelay_free(&a);
			if (!w->started) {
				if (http_stream_head(r, 200, CX_CTYPE_STREAM) < 0)
					goto out;
				cx_frame_json(&sb, 0, json_pack("{s:{}}", "start"));
				w->started = 1;
			} else {
				diff(&sb, w->e, w->n, e, n);
			}
			ws_free_entries(w->e, w->n);
			w->e = e;
			w->n = n;
			w->next_poll = now + WATCH_POLL_MS;
		} else if (rc == SREQ_DB) {
			srelay_free(&a);
			finish(r, w, &sb, "unavailable", "the database is unavailable; retry");
			goto out;
		} else {
			srelay_free(&a);
			if (now - w->asked_at > 1000.0 * (double)srelay_answer_seconds(ctx->cfg)) {
				finish(r, w, &sb, "unavailable",
				       "the sandbox's runner host did not answer in time");
				goto out;
			}
		}
	}
	if (w->phase == 0 && now >= w->next_poll && ask(ctx, w, &code, &msg) < 0) {
		finish(r, w, &sb, code, msg);
		goto out;
	}
	if (w->started && now >= w->keep_at) {
		cx_frame_json(&sb, 0, json_pack("{s:{}}", "keepalive"));
		w->keep_at = now + (double)w->keep_ms;
	}
	if (sb.len > 0 && http_stream_write(r, sb.buf, sb.len) < 0)
		goto out;
	if (w->phase == 1) {
		snprintf(idtext, sizeof idtext, "%lld", w->req);
		cond = (struct wt_cond){ WT_REQUEST_DONE, idtext, 0, 0 };
		ms = 1000LL * srelay_answer_seconds(ctx->cfg);
	} else {
		cond = (struct wt_cond){ WT_SESSION_ENDED, w->sid, 0, 0 };
		ms = (long long)(w->next_poll - now) + 1;
	}
	if (w->started && w->keep_at - now < (double)ms)
		ms = (long long)(w->keep_at - now) + 1;
	if (w->deadline > 0 && w->deadline - now < (double)ms)
		ms = (long long)(w->deadline - now) + 1;
	if (!wt_stream(r, w->key_id, &cond, ms < 1 ? 1 : ms)) {
		sb_reset(&sb);
		finish(r, w, &sb, r->wait.stopping ? "unavailable" : "resource_exhausted",
		       r->wait.stopping ? "the service is restarting: watch again"
					: "too many open streams and waits for this key");
	}
out:
	sb_release(&sb);
}

void envd_watch(struct api_ctx *ctx, struct req *r, const struct envd_caller *c)
{
	const char *why = NULL, *path;
	struct wstream *w;
	json_t *q = NULL;
	long long t;

	if (r->stream.state != NULL) {
		run(ctx, r, r->stream.state);
		return;
	}
	if (r->content_type == NULL ||
	    strncmp(r->content_type, CX_CTYPE_STREAM, strlen(CX_CTYPE_STREAM)) != 0) {
		envd_stream_refuse(r, "invalid_argument",
				   "a stream's request must be application/connect+json");
		return;
	}
	if (cx_unframe_json(r->body, r->body_len, &q, &why) < 0) {
		envd_stream_refuse(r, "invalid_argument", why);
		return;
	}
	if (json_is_true(json_object_get(q, "includeEntry"))) {
		json_decref(q);
		envd_stream_refuse(r, "invalid_argument", "includeEntry is not supported (envd 0.5.7)");
		return;
	}
	w = calloc(1, sizeof *w);
	path = json_string_value(json_object_get(q, "path"));
	if (w == NULL || path == NULL || e2b_path_rel(path, w->rel, sizeof w->rel, &why) < 0) {
		free(w);
		json_decref(q);
		envd_stream_refuse(r, "invalid_argument", path == NULL ? "path is required" : why);
		return;
	}
	w->recursive = json_is_true(json_object_get(q, "recursive"));
	json_decref(q);
	snprintf(w->sid, sizeof w->sid, "%s", c->sid);
	snprintf(w->key_id, sizeof w->key_id, "%s", c->who.key_id);
	t = cx_timeout_ms(e2b_param(r, "HTTP_CONNECT_TIMEOUT_MS"));
	w->deadline = t > 0 ? util_mono_ms() + (double)t : 0;
	w->keep_ms = 1000 * cx_keepalive_s(e2b_param(r, "HTTP_KEEPALIVE_PING_INTERVAL"), 50);
	w->keep_at = util_mono_ms() + (double)w->keep_ms;
	r->stream.state = w;
	r->stream.release = ws_release;
	run(ctx, r, w);
}
