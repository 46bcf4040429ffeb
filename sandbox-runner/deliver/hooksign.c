/* Webhook signatures (HMAC-SHA256, RFC 2104) and the delivery retry schedule: pure
 * functions, sent by callback.c. */
#include "hooksign.h"

#include <stdio.h>
#include <string.h>

#include "sha256.h"
#include "util.h"

/* HMAC-SHA256 over the message a then b (b may be empty), without copying them
 * together: a signature covers "<t>." and the body. */
static void hmac2(const void *key, size_t klen, const void *a, size_t alen, const void *b,
		  size_t blen, unsigned char out[32])
{
	unsigned char k[64] = { 0 }, ipad[64], opad[64], inner[32];
	struct sha256 c;

	if (klen > sizeof k)
		sha256_buf(key, klen, k);
	else
		memcpy(k, key, klen);
	for (size_t i = 0; i < 64; i++) {
		ipad[i] = k[i] ^ 0x36;
		opad[i] = k[i] ^ 0x5c;
	}
	sha256_init(&c);
	sha256_update(&c, ipad, sizeof ipad);
	sha256_update(&c, a, alen);
	sha256_update(&c, b, blen);
	sha256_final(&c, inner);
	sha256_init(&c);
	sha256_update(&c, opad, sizeof opad);
	sha256_update(&c, inner, sizeof inner);
	sha256_final(&c, out);
	memset(k, 0, sizeof k);
}

void hs_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
		    unsigned char out[32])
{
	hmac2(key, klen, msg, mlen, NULL, 0, out);
}

int hs_signature(const char *secret, long long t, const void *body, size_t len, char *out,
		 size_t outlen)
{
	unsigned char mac[32];
	char ts[24], hex[65];
	int n;

	n = snprintf(ts, sizeof ts, "%lld.", t);
	hmac2(secret, strlen(secret), ts, (size_t)n, body, len, mac);
	util_hex(mac, sizeof mac, hex);
	n = snprintf(out, outlen, "t=%lld,v1=%s", t, hex);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

long long hs_backoff_ms(long long first_ms, int attempts)
{
	long long d = first_ms < 1 ? 1 : first_ms;

	for (int i = 1; i < attempts && d < HS_MAX_BACKOFF_MS; i++)
		d *= 2;
	return d > HS_MAX_BACKOFF_MS ? HS_MAX_BACKOFF_MS : d;
}
