/* The job's live output: from the job's 50th ms on, a stream whose oldest pending
 * byte is 50 ms old, or that has 64 KiB pending, is stored (store_append: one chunk of
 * at most JD_CHUNK_BYTES per transaction, with the stream's stored length and the
 * job's and key's stored bytes) and leaves memory. A job that ends within 50 ms
 * stores its output with its result only, as before. A failed flush keeps the bytes
 * pending (at most output_bytes per stream) and is retried every 500 ms; the result
 * transaction (finish.c) writes whatever is still pending, starting at what the
 * database says is stored. */
#include "supint.h"

#include "jobdata.h"
#include "log.h"
#include "util.h"

#define FLUSH_MS 50               /* age of the oldest pending byte that flushes a stream */
#define FLUSH_BYTES (64 * 1024)   /* pending bytes that flush a stream */
#define FLUSH_RETRY_MS 500        /* after a failed flush (the database is away) */

static int flush_due(const struct pump_out *o, double now)
{
	return o->len >= FLUSH_BYTES || (o->len > 0 && now - o->since >= FLUSH_MS);
}

/* Stores what o holds, chunk by chunk: 0, or -1 (the rest stays pending). */
static int flush_stream(struct sup *s, int stream, struct pump_out *o)
{
	while (o->len > 0) {
		size_t n = o->len < JD_CHUNK_BYTES ? o->len : JD_CHUNK_BYTES;
		long long base = (long long)o->base, stored;
		int rc;

		s->live_tried = 1;
		rc = store_append(s->db, &s->job, s->l.runner_id, stream, base, o->data, n, &stored);
		if (rc == 0 || (rc == 2 && stored > base && stored <= base + (long long)o->len)) {
			/* rc 2: an earlier chunk did commit although we never heard so */
			pump_consume(o, (size_t)(stored - base));
			continue;
		}
		if (rc == 1) { /* marked lost or taken over: nobody wants this output */
			s->live = LIVE_OFF;
			sup_stop(s, STOP_CANCEL);
		} else if (rc == 2) {
			/* only this supervisor appends: the result settles what is stored */
			log_kv("error", "live_output_mismatch", "job", s->job.id, (char *)NULL);
			s->live = LIVE_OFF;
		} else {
			sup_log_attempt(s, "output_flush", 1, 1, "db", 1);
			sup_db_drop_if_lost(s);
		}
		return -1;
	}
	return 0;
}

/* Live output only where the server takes a whole chunk (the dispatcher checked at
 * its start; max_allowed_packet may have shrunk since): else everything goes with the
 * result, whose own check names the cause. 0, or -1 (ask again later). */
static int live_check(struct sup *s)
{
	long long have = store_max_packet(s->db);

	if (have < 0) {
		sup_db_drop_if_lost(s);
		return -1;
	}
	s->live = have >= JD_CHUNK_BYTES + JD_PACKET_OVERHEAD ? LIVE_ON : LIVE_OFF;
	if (s->live == LIVE_OFF)
		log_kv("warn", "live_output_off", "job", s->job.id, "reason",
		       "max_allowed_packet below one chunk", (char *)NULL);
	return 0;
}

/* Stores the streams that are due (never during the job's first FLUSH_MS). */
void sup_flush_live(struct sup *s, double now)
{
	int out, err;

	if (s->local || s->live == LIVE_OFF || now - s->t0 < FLUSH_MS || now < s->flush_retry_at)
		return;
	out = flush_due(&s->out, now);
	err = flush_due(&s->err, now);
	if (!out && !err)
		return;
	if (sup_db_ready(s) < 0 || (s->live == LIVE_UNKNOWN && live_check(s) < 0) ||
	    (out && s->live == LIVE_ON && flush_stream(s, JD_STDOUT, &s->out) < 0) ||
	    (err && s->live == LIVE_ON && flush_stream(s, JD_STDERR, &s->err) < 0))
		s->flush_retry_at = util_mono_ms() + FLUSH_RETRY_MS;
}

/* How long the loop may sleep before a pending stream is due: at most cap ms. */
int sup_flush_wait_ms(const struct sup *s, double now, int cap)
{
	const struct pump_out *o[2] = { &s->out, &s->err };
	double ms = cap;

	if (s->local || s->live == LIVE_OFF)
		return cap;
	for (int i = 0; i < 2; i++) {
		double at = o[i]->since + FLUSH_MS;
		if (o[i]->len == 0)
			continue;
		if (at < s->t0 + FLUSH_MS)
			at = s->t0 + FLUSH_MS;
		if (at < s->flush_retry_at)
			at = s->flush_retry_at;
		if (at - now < ms)
			ms = at - now;
	}
	return ms <= 0 ? 0 : (int)ms + 1;
}
