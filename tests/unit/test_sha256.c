/* common/sha256: FIPS 180-4 / NIST example vectors, one-shot and incremental. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "tests.h"
#include "util.h"

static const struct {
	const char *what;
	const char *msg;
	const char *hex;
} vectors[] = {
	{ "empty", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "448-bit", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "896-bit",
	  "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklm"
	  "nopqrlmnopqrsmnopqrstnopqrstu",
	  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
};

static void test_vectors_hex(void)
{
	for (size_t i = 0; i < NELEM(vectors); i++) {
		char out[65];

		memset(out, 'x', sizeof out);
		sha256_hex(vectors[i].msg, strlen(vectors[i].msg), out);
		CHECK_STR_AT(vectors[i].what, out, vectors[i].hex);
	}
}

/* The same vectors fed one byte at a time through init/update/final. */
static void test_vectors_bytewise(void)
{
	for (size_t i = 0; i < NELEM(vectors); i++) {
		struct sha256 c;
		unsigned char d[32];
		char hex[65];
		const char *m = vectors[i].msg;

		sha256_init(&c);
		for (size_t k = 0; m[k] != '\0'; k++)
			sha256_update(&c, m + k, 1);
		sha256_update(&c, "", 0); /* a zero-length update changes nothing */
		sha256_final(&c, d);
		util_hex(d, 32, hex);
		CHECK_STR_AT(vectors[i].what, hex, vectors[i].hex);
	}
}

/* One million 'a' in uneven chunks, so blocks straddle update calls. */
static void test_million_a(void)
{
	static const size_t chunks[] = { 1, 7, 63, 64, 65, 127, 1000, 3, 4096 };
	unsigned char *a = malloc(1000000), d[32];
	struct sha256 c;
	size_t done = 0, k = 0;
	char hex[65];

	if (!CHECK(a != NULL, "out of memory"))
		return;
	memset(a, 'a', 1000000);
	sha256_init(&c);
	while (done < 1000000) {
		size_t n = chunks[k++ % NELEM(chunks)];
		if (n > 1000000 - done)
			n = 1000000 - done;
		sha256_update(&c, a + done, n);
		done += n;
	}
	sha256_final(&c, d);
	util_hex(d, 32, hex);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* And in one call, through sha256_buf. */
	sha256_buf(a, 1000000, d);
	util_hex(d, 32, hex);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

/* Lengths around the padding boundary (55/56 bytes leave no room for the length). */
static void test_padding_boundaries(void)
{
	static const struct {
		size_t n;
		const char *hex;
	} rows[] = {
		{ 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34" },
		{ 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
		{ 65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0" },
		{ 119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb" },
		{ 120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c" },
		{ 128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e" },
	};
	char a[128], hex[65], ctx[32];

	memset(a, 'a', sizeof a);
	for (size_t i = 0; i < NELEM(rows); i++) {
		snprintf(ctx, sizeof ctx, "%zu x 'a'", rows[i].n);
		sha256_hex(a, rows[i].n, hex);
		CHECK_STR_AT(ctx, hex, rows[i].hex);
	}
}

static const CU_TestInfo tests[] = {
	{ "nist_vectors", test_vectors_hex },
	{ "nist_vectors_bytewise", test_vectors_bytewise },
	{ "million_a_uneven_chunks", test_million_a },
	{ "padding_boundaries", test_padding_boundaries },
	CU_TEST_INFO_NULL,
};

void suite_sha256(void)
{
	t_register("sha256", tests);
}
