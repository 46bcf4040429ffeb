/* The Connect protocol's envelopes, JSON codec, and envd's process events (see
 * connect.h). Pure. */
#include "connect.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int cx_unframe_json(const void *body, size_t len, json_t **out, const char **why)
{
	const unsigned char *b = body;
	uint32_t n;
	json_t *j;

	*out = NULL;
	if (len < 5) {
		*why = "the request is not a Connect envelope (flags, length, message)";
		return -1;
	}
	if (b[0] & CX_FLAG_COMPRESSED) {
		*why = "compressed messages are not accepted";
		return -1;
	}
	if (b[0] != 0) {
		*why = "the request envelope's flags must be 0";
		return -1;
	}
	n = (uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 8 | b[4];
	if (n > CX_MSG_MAX) {
		*why = "the request message is too large";
		return -1;
	}
	if ((size_t)n != len - 5) {
		*why = "the request must be exactly one envelope";
		return -1;
	}
	j = json_loadb((const char *)b + 5, n, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		*why = "the request message is not a JSON object";
		return -1;
	}
	*out = j;
	return 0;
}

static int frame(struct strbuf *sb, unsigned flags, const char *msg, size_t n)
{
	unsigned char h[5] = { (unsigned char)flags, (unsigned char)(n >> 24),
			       (unsigned char)(n >> 16), (unsigned char)(n >> 8), (unsigned char)n };

	if (n > 0xffffffffu || sb_add(sb, h, sizeof h) < 0 || sb_add(sb, msg, n) < 0)
		return -1;
	return 0;
}

int cx_frame_json(struct strbuf *sb, unsigned flags, json_t *msg)
{
	char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	int rc = text ? frame(sb, flags, text, strlen(text)) : -1;

	free(text);
	json_decref(msg);
	return rc;
}

int cx_frame_end(struct strbuf *sb, const char *code, const char *message)
{
	if (code == NULL)
		return frame(sb, CX_FLAG_END, "{}", 2);
	return cx_frame_json(sb, CX_FLAG_END,
			     json_pack("{s:{s:s, s:s}}", "error", "code", code, "message",
				       message ? message : ""));
}

long long cx_timeout_ms(const char *v)
{
	long long t;

	if (v == NULL || strlen(v) > 10 || strspn(v, "0123456789") != strlen(v) ||
	    util_parse_ll(v, 1, 9999999999LL, &t) < 0)
		return -1;
	return t;
}

long long cx_keepalive_s(const char *v, long long def)
{
	long long t;

	if (v == NULL || strlen(v) > 4 || strspn(v, "0123456789") != strlen(v) ||
	    util_parse_ll(v, 1, 3600, &t) < 0)
		return def;
	return t;
}

static json_t *event(const char *kind, json_t *body)
{
	return json_pack("{s:{s:o}}", "event", kind, body);
}

json_t *cx_ev_start(long long pid)
{
	return event("start", json_pack("{s:I}", "pid", (json_int_t)pid));
}

json_t *cx_ev_data(int stderr_stream, const unsigned char *d, size_t n)
{
	char *b = util_b64_encode(d, n);
	json_t *j = b ? event("data", json_pack("{s:s}", stderr_stream ? "stderr" : "stdout", b))
		      : NULL;

	free(b);
	return j;
}

json_t *cx_ev_keepalive(void)
{
	return event("keepalive", json_object());
}

const char *cx_signal_text(int signo, char *buf, size_t n)
{
	static const struct { int no; const char *text; } names[] = {
		{ SIGHUP, "hangup" },         { SIGINT, "interrupt" },
		{ SIGQUIT, "quit" },          { SIGILL, "illegal instruction" },
		{ SIGTRAP, "trace/breakpoint trap" }, { SIGABRT, "aborted" },
		{ SIGBUS, "bus error" },      { SIGFPE, "floating point exception" },
		{ SIGKILL, "killed" },        { SIGUSR1, "user defined signal 1" },
		{ SIGSEGV, "segmentation fault" }, { SIGUSR2, "user defined signal 2" },
		{ SIGPIPE, "broken pipe" },   { SIGALRM, "alarm clock" },
		{ SIGTERM, "terminated" },    { SIGXCPU, "CPU time limit exceeded" },
		{ SIGXFSZ, "file size limit exceeded" }, { SIGSYS, "bad system call" },
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].no == signo) {
			snprintf(buf, n, "%s", names[i].text);
			return buf;
		}
	snprintf(buf, n, "signal %d", signo);
	return buf;
}

json_t *cx_ev_end(const char *status, long long code, int signo, const char *why)
{
	char text[64], sig[40];
	json_t *e = json_object();

	if (e == NULL)
		return NULL;
	if (signo > 0) {
		snprintf(text, sizeof text, "signal: %s", cx_signal_text(signo, sig, sizeof sig));
		json_object_set_new(e, "exitCode", json_integer(-1));
		json_object_set_new(e, "exited", json_false());
	} else if (code >= 0) {
		snprintf(text, sizeof text, "exit status %lld", code);
		if (code != 0)
			json_object_set_new(e, "exitCode", json_integer(code));
		json_object_set_new(e, "exited", json_true());
	} else {
		snprintf(text, sizeof text, "%s", status ? status : "unknown");
		json_object_set_new(e, "exitCode", json_integer(-1));
		json_object_set_new(e, "exited", json_false());
	}
	json_object_set_new(e, "status", json_string(text));
	/* envd's error is cmd.Wait()'s: "exit status 3", "signal: killed" (none for 0) */
	if (why != NULL && *why != '\0')
		json_object_set_new(e, "error", json_string(why));
	else if (signo > 0 || code != 0)
		json_object_set_new(e, "error", json_string(text));
	return event("end", e);
}

const char *cx_signal_name(const json_t *v)
{
	static const struct { const char *proto; int no; const char *ours; } sigs[] = {
		{ "SIGNAL_SIGKILL", SIGKILL, "KILL" }, { "SIGNAL_SIGTERM", SIGTERM, "TERM" },
		{ "SIGNAL_SIGINT", SIGINT, "INT" },    { "SIGNAL_SIGHUP", SIGHUP, "HUP" },
		{ "SIGNAL_SIGQUIT", SIGQUIT, "QUIT" }, { "SIGNAL_SIGUSR1", SIGUSR1, "USR1" },
		{ "SIGNAL_SIGUSR2", SIGUSR2, "USR2" },
	};
	const char *s = json_string_value(v);

	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if ((s != NULL && strcmp(s, sigs[i].proto) == 0) ||
		    (json_is_integer(v) && json_integer_value(v) == sigs[i].no))
			return sigs[i].ours;
	return NULL;
}
