/* bwrap's --json-status-fd (see bwstatus.h). */
#include "bwstatus.h"

#include <jansson.h>
#include <string.h>

/* A line longer than this is not bwrap's: dropped, so a stuck writer costs little. */
#define LINE_MAX_BYTES 4096

void bws_init(struct bw_status *st)
{
	memset(st, 0, sizeof *st);
	sb_init(&st->line);
}

static void take(struct bw_status *st, const json_t *o)
{
	json_t *v;

	if ((v = json_object_get(o, "child-pid")) && json_is_integer(v) &&
	    json_integer_value(v) > 0 && json_integer_value(v) <= 0x7fffffff && !st->have_pid) {
		st->child_pid = (pid_t)json_integer_value(v);
		st->have_pid = 1;
	}
	if ((v = json_object_get(o, "exit-code")) && json_is_integer(v) &&
	    json_integer_value(v) >= 0 && json_integer_value(v) <= 255 && !st->have_exit) {
		st->exit_code = (int)json_integer_value(v);
		st->have_exit = 1;
	}
}

/* One line: one object, or several back to back. */
static void parse_line(struct bw_status *st, const char *p, size_t n)
{
	while (n > 0) {
		json_error_t e;
		json_t *o;

		while (n > 0 && (*p == ' ' || *p == '\t' || *p == '\r')) /* JSON white space */
			p++, n--;
		if (n == 0)
			return;
		o = json_loadb(p, n, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &e);
		if (o == NULL || !json_is_object(o) || e.position <= 0 ||
		    (size_t)e.position > n) {
			json_decref(o);
			st->garbage++;
			return;
		}
		take(st, o);
		json_decref(o);
		p += e.position;
		n -= (size_t)e.position;
	}
}

void bws_feed(struct bw_status *st, const char *data, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t k = nl ? (size_t)(nl - data) : n;

		if (!st->overlong && st->line.len + k <= LINE_MAX_BYTES)
			sb_add(&st->line, data, k);
		else
			st->overlong = 1; /* not bwrap's: dropped at its end */
		if (nl == NULL)
			return;
		if (st->overlong || st->line.failed)
			st->garbage++;
		else
			parse_line(st, st->line.buf, st->line.len);
		sb_reset(&st->line);
		st->line.failed = st->overlong = 0;
		data = nl + 1;
		n -= k + 1;
	}
}

void bws_finish(struct bw_status *st)
{
	bws_feed(st, "\n", 1);
}

void bws_release(struct bw_status *st)
{
	sb_release(&st->line);
}
