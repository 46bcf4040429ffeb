/* SHA-256 (FIPS 180-4): token hashes and artifact digests. */
#ifndef SANDBOX_SHA256_H
#define SANDBOX_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t fill;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t n);
void sha256_final(struct sha256 *c, unsigned char out[32]);
void sha256_buf(const void *data, size_t n, unsigned char out[32]);
/* Lower-case hex digest, 65 bytes with the NUL. */
void sha256_hex(const void *data, size_t n, char out[65]);

#endif
