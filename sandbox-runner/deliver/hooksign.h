/* Webhook signature and retry schedule (pure; sandbox-runner/deliver/callback.c sends). */
#ifndef SANDBOX_HOOKSIGN_H
#define SANDBOX_HOOKSIGN_H

#include <stddef.h>

#define HS_SECRET_HEX 64     /* api_keys.webhook_secret: 32 random bytes, hex */
#define HS_MAX_BACKOFF_MS 600000LL

void hs_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
		    unsigned char out[32]);
/* "t=<t>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>" into out; -1 if it does not fit. */
int hs_signature(const char *secret, long long t, const void *body, size_t len, char *out,
		 size_t outlen);
/* Wait before attempt `attempts` + 1, after `attempts` failed ones (>= 1): first_ms
 * doubled per further attempt, capped at HS_MAX_BACKOFF_MS. */
long long hs_backoff_ms(long long first_ms, int attempts);

#endif
