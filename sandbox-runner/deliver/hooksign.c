#include "hooksign.h"

#include <stdio.h>
#include <string.h>

#include "sha256.h"
#include "util.h"

void hs_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
		    unsigned char out[32])
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
	sha256_update(&c, msg, mlen);
	sha256_final(&c, inner);
	sha256_init(&c);
	sha256_update(&c, opad, sizeof opad);
	sha256_update(&c, inner, sizeof inner);
	sha256_final(&c, out);
}

int hs_signature(const char *secret, long long t, const void *body, size_t len, char *out,
		 size_t outlen)
{
	unsigned char k[64] = { 0 }, ipad[64], opad[64], inner[32], mac[32];
	char ts[24], hex[65];
	size_t klen = strlen(secret);
	struct sha256 c;
	int n;

	/* HMAC over "<t>." then the body, without copying the body. */
	if (klen > sizeof k)
		sha256_buf(secret, klen, k);
	else
		memcpy(k, secret, klen);
	for (size_t i = 0; i < 64; i++) {
		ipad[i] = k[i] ^ 0x36;
		opad[i] = k[i] ^ 0x5c;
	}
	n = snprintf(ts, sizeof ts, "%lld.", t);
	sha256_init(&c);
	sha256_update(&c, ipad, sizeof ipad);
	sha256_update(&c, ts, (size_t)n);
	sha256_update(&c, body, len);
	sha256_final(&c, inner);
	sha256_init(&c);
	sha256_update(&c, opad, sizeof opad);
	sha256_update(&c, inner, sizeof inner);
	sha256_final(&c, mac);
	util_hex(mac, sizeof mac, hex);
	memset(k, 0, sizeof k);
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
