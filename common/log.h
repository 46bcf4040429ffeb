/* key=value log lines on stderr. Values are quoted and escaped, then passed
 * through redact(): no log line may carry a token, env value or password. */
#ifndef SANDBOX_LOG_H
#define SANDBOX_LOG_H

#include <stdio.h>

void log_init(const char *prog);
/* log_kv("info", "request", "method", m, "status", "200", (char *)NULL);
 * NULL-terminated list of key, value pairs; a NULL value prints as `-`. */
void log_kv(const char *level, const char *event, ...);
/* Formats one log line into buf (for the unit tests and log_kv). */
int log_format(char *buf, size_t n, const char *level, const char *event,
	       const char *const *kv, size_t nkv);

#endif
