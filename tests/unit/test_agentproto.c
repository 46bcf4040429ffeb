/* The agent wire format: frames and SPAWN payloads, every rejection, and random
 * bytes that must never make the parser read out of bounds (run under ASan). */
#include <stdlib.h>
#include <string.h>

#include "agentproto.h"
#include "tests.h"

/* The SPAWN API takes char *const * (execv's type); -Wwrite-strings makes literals
 * const. */
#define S(lit) ((char *)(lit))

static void test_header_round_trip(void)
{
	unsigned char buf[AP_HDR + 5];
	struct ap_frame f;

	ap_put_header(buf, 5, AP_OUTPUT, 2, 0x01020304u);
	memcpy(buf + AP_HDR, "hello", 5);
	CHECK_INT(buf[0], 5);
	CHECK_INT(buf[4], AP_OUTPUT);
	CHECK_INT(buf[5], 2);
	CHECK_INT(buf[8], 4); /* little-endian cid */
	CHECK_INT(buf[11], 1);
	CHECK_INT(ap_parse(buf, sizeof buf, &f), 1);
	CHECK_INT(f.len, 5);
	CHECK_INT(f.type, AP_OUTPUT);
	CHECK_INT(f.stream, 2);
	CHECK_INT(f.cid, 0x01020304u);
	CHECK(f.payload == buf + AP_HDR, "payload points into the buffer");
	CHECK_MEM(f.payload, f.len, "hello", 5);
	CHECK_INT(ap_frame_valid(&f), 1);
	/* any prefix is "need more", never an error */
	for (size_t n = 0; n < sizeof buf; n++)
		CHECK_INT_AT("prefix", ap_parse(buf, n, &f), 0);
}

static void test_u32(void)
{
	unsigned char p[4];

	ap_put_u32(p, 0xdeadbeefu);
	CHECK_INT(p[0], 0xef);
	CHECK_INT(p[3], 0xde);
	CHECK_INT(ap_get_u32(p), 0xdeadbeefu);
	ap_put_u32(p, 0);
	CHECK_INT(ap_get_u32(p), 0);
}

static void test_max_len(void)
{
	static unsigned char buf[AP_HDR + AP_MAX_PAYLOAD];
	struct ap_frame f;

	ap_put_header(buf, AP_MAX_PAYLOAD, AP_STDIN, 0, 7);
	CHECK_INT(ap_parse(buf, sizeof buf, &f), 1);
	CHECK_INT(f.len, AP_MAX_PAYLOAD);
	CHECK_INT(ap_parse(buf, sizeof buf - 1, &f), 0);
	ap_put_header(buf, AP_MAX_PAYLOAD + 1, AP_STDIN, 0, 7);
	CHECK_INT(ap_parse(buf, sizeof buf, &f), -1);
	/* invalid already with only the header present */
	CHECK_INT(ap_parse(buf, AP_HDR, &f), -1);
	ap_put_header(buf, 0xffffffffu, AP_STDIN, 0, 7);
	CHECK_INT(ap_parse(buf, AP_HDR, &f), -1);
}

static void test_header_rejections(void)
{
	static const struct {
		const char *name;
		uint8_t type, stream, b6, b7;
		int want;
	} rows[] = {
		{ "reserved byte 6", AP_STDIN, 0, 1, 0, -1 },
		{ "reserved byte 7", AP_STDIN, 0, 0, 0x80, -1 },
		{ "type 0", 0, 0, 0, 0, -1 },
		{ "type 12", 12, 0, 0, 0, -1 },
		{ "STDIN_ACK stream 0", AP_STDIN_ACK, 0, 0, 0, 1 },
		{ "STDIN_GONE stream 1", AP_STDIN_GONE, 1, 0, 0, -1 },
		{ "type 255", 255, 0, 0, 0, -1 },
		{ "OUTPUT stream 0", AP_OUTPUT, 0, 0, 0, -1 },
		{ "OUTPUT stream 3", AP_OUTPUT, 3, 0, 0, -1 },
		{ "OUTPUT stream 1", AP_OUTPUT, 1, 0, 0, 1 },
		{ "STDIN stream 1", AP_STDIN, 1, 0, 0, -1 },
		{ "EXIT stream 2", AP_EXIT, 2, 0, 0, -1 },
		{ "HELLO stream 0", AP_HELLO, 0, 0, 0, 1 },
		{ "SIGNAL stream 0", AP_SIGNAL, 0, 0, 0, 1 },
	};
	unsigned char buf[AP_HDR + 4] = { 0 };
	struct ap_frame f;

	for (size_t i = 0; i < NELEM(rows); i++) {
		ap_put_header(buf, 4, rows[i].type, rows[i].stream, 1);
		buf[6] = rows[i].b6;
		buf[7] = rows[i].b7;
		CHECK_INT_AT(rows[i].name, ap_parse(buf, sizeof buf, &f), rows[i].want);
		/* truncated headers are never judged */
		CHECK_INT_AT(rows[i].name, ap_parse(buf, AP_HDR - 1, &f), 0);
	}
}

static void test_frame_valid(void)
{
	static const struct {
		const char *name;
		uint8_t type;
		uint32_t len, cid;
		int want;
	} rows[] = {
		{ "HELLO 4 cid 0", AP_HELLO, 4, 0, 1 },
		{ "HELLO cid 1", AP_HELLO, 4, 1, 0 },
		{ "HELLO len 3", AP_HELLO, 3, 0, 0 },
		{ "EXIT cid 0", AP_EXIT, 4, 0, 0 },
		{ "EXIT len 5", AP_EXIT, 5, 1, 0 },
		{ "EXIT 4", AP_EXIT, 4, 1, 1 },
		{ "SIGNAL 4", AP_SIGNAL, 4, 9, 1 },
		{ "SIGNAL 0", AP_SIGNAL, 0, 9, 0 },
		{ "STARTED 4", AP_STARTED, 4, 9, 1 },
		{ "STDIN 0", AP_STDIN, 0, 9, 0 },
		{ "STDIN 1", AP_STDIN, 1, 9, 1 },
		{ "OUTPUT 0", AP_OUTPUT, 0, 9, 0 },
		{ "STDIN_CLOSE 0", AP_STDIN_CLOSE, 0, 9, 1 },
		{ "STDIN_ACK 4", AP_STDIN_ACK, 4, 9, 1 },
		{ "STDIN_ACK 0", AP_STDIN_ACK, 0, 9, 0 },
		{ "STDIN_ACK cid 0", AP_STDIN_ACK, 4, 0, 0 },
		{ "STDIN_GONE 0", AP_STDIN_GONE, 0, 9, 1 },
		{ "STDIN_GONE 4", AP_STDIN_GONE, 4, 9, 0 },
		{ "STDIN_CLOSE 1", AP_STDIN_CLOSE, 1, 9, 0 },
		{ "SPAWN 11", AP_SPAWN, 11, 9, 0 },
		{ "SPAWN 12", AP_SPAWN, 12, 9, 1 },
		{ "SPAWN_FAILED 3", AP_SPAWN_FAILED, 3, 9, 0 },
		{ "SPAWN_FAILED 4", AP_SPAWN_FAILED, 4, 9, 1 },
		{ "SPAWN_FAILED 204", AP_SPAWN_FAILED, 4 + AP_MAX_FAIL_TEXT, 9, 1 },
		{ "SPAWN_FAILED 205", AP_SPAWN_FAILED, 5 + AP_MAX_FAIL_TEXT, 9, 0 },
		{ "type 0", 0, 0, 9, 0 },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		struct ap_frame f = { .len = rows[i].len, .type = rows[i].type,
				      .stream = rows[i].type == AP_OUTPUT, .cid = rows[i].cid };

		CHECK_INT_AT(rows[i].name, ap_frame_valid(&f), rows[i].want);
	}
}

static void test_spawn_round_trip(void)
{
	static unsigned char buf[AP_MAX_PAYLOAD];
	char *argv[] = { S("sh"), S("-c"), S("echo $X"), S("") };
	char *env[] = { S("X=1"), S("EMPTY="), S("Y=a=b") };
	struct ap_spawn s;
	long n;

	n = ap_spawn_encode(buf, AP_SPAWN_STDIN, "/work", argv, 4, env, 3);
	CHECK_INT(n, 12 + 6 + 3 + 3 + 8 + 1 + 4 + 7 + 6);
	if (!CHECK_INT(ap_spawn_decode(buf, (size_t)n, &s), 0))
		return;
	CHECK_INT(s.flags, AP_SPAWN_STDIN);
	CHECK_STR(s.cwd, "/work");
	CHECK_INT(s.argc, 4);
	CHECK_INT(s.envc, 3);
	for (size_t i = 0; i < 4; i++)
		CHECK_STR_AT("argv", s.argv[i], argv[i]);
	CHECK(s.argv[4] == NULL, "argv NULL-terminated");
	for (size_t i = 0; i < 3; i++)
		CHECK_STR_AT("env", s.env[i], env[i]);
	CHECK(s.env[3] == NULL, "env NULL-terminated");
	ap_spawn_free(&s);
	CHECK(s.argv == NULL && s.env == NULL, "freed arrays cleared");

	/* no env, no flags */
	n = ap_spawn_encode(buf, 0, "/", argv, 1, NULL, 0);
	CHECK_INT(n, 12 + 2 + 3);
	if (CHECK_INT(ap_spawn_decode(buf, (size_t)n, &s), 0)) {
		CHECK_INT(s.flags, 0);
		CHECK_INT(s.envc, 0);
		CHECK(s.env != NULL && s.env[0] == NULL, "empty env array");
		ap_spawn_free(&s);
	}
}

static void test_spawn_encode_refusals(void)
{
	static unsigned char buf[AP_MAX_PAYLOAD];
	static char big[AP_MAX_PAYLOAD];
	char *argv[] = { S("true"), big };
	char *noeq[] = { S("X") }, *noname[] = { S("=v") };

	memset(big, 'a', sizeof big - 1);
	CHECK_INT(ap_spawn_encode(buf, 0, "/", argv, 0, NULL, 0), -1);
	CHECK_INT(ap_spawn_encode(buf, 0, "/", argv, 2, NULL, 0), -1); /* too big */
	CHECK_INT(ap_spawn_encode(buf, 2, "/", argv, 1, NULL, 0), -1);
	CHECK_INT(ap_spawn_encode(buf, 0, "rel", argv, 1, NULL, 0), -1);
	CHECK_INT(ap_spawn_encode(buf, 0, "/", argv, 1, noeq, 1), -1);
	CHECK_INT(ap_spawn_encode(buf, 0, "/", argv, 1, noname, 1), -1);
	CHECK_INT(ap_spawn_encode(buf, 0, "/", argv, AP_MAX_ARGS + 1, NULL, 0), -1);
	CHECK_INT(ap_spawn_encode(buf, 0, "/", argv, 1, noeq, AP_MAX_ARGS), -1);
	/* exactly filling the payload is fine */
	big[AP_MAX_PAYLOAD - 12 - 2 - 5 - 1] = 0;
	CHECK_INT(ap_spawn_encode(buf, 0, "/", argv, 2, NULL, 0), AP_MAX_PAYLOAD);
	big[AP_MAX_PAYLOAD - 12 - 2 - 5 - 1] = 'a';
}

/* A hand-built payload: header words then raw string bytes. */
static size_t mk(unsigned char *p, uint32_t flags, uint32_t argc, uint32_t envc,
		 const char *strs, size_t slen)
{
	ap_put_u32(p, flags);
	ap_put_u32(p + 4, argc);
	ap_put_u32(p + 8, envc);
	memcpy(p + 12, strs, slen);
	return 12 + slen;
}

static void test_spawn_decode_rejections(void)
{
	static const struct {
		const char *name;
		uint32_t flags, argc, envc;
		const char *s;
		size_t slen;
		int want;
	} rows[] = {
		{ "good", 1, 1, 1, "/\0a\0X=1", 8, 0 },
		{ "argc 0", 0, 0, 0, "/", 2, -1 },
		{ "argc over max", 0, AP_MAX_ARGS + 1, 0, "/\0a", 4, -1 },
		{ "envc over max", 0, 1, AP_MAX_ARGS, "/\0a", 4, -1 },
		{ "argc huge", 0, 0xffffffffu, 1, "/\0a", 4, -1 },
		{ "envc huge wraps", 0, 2, 0xffffffffu, "/\0a", 4, -1 },
		{ "argc more than strings", 0, 2, 0, "/\0a", 4, -1 },
		{ "envc more than strings", 0, 1, 1, "/\0a", 4, -1 },
		{ "trailing string", 0, 1, 0, "/\0a\0b", 6, -1 },
		{ "trailing byte", 0, 1, 0, "/\0a\0x", 5, -1 },
		{ "last string unterminated", 0, 1, 0, "/\0a", 3, -1 },
		{ "cwd unterminated", 0, 1, 0, "/", 1, -1 },
		{ "no strings", 0, 1, 0, "", 0, -1 },
		{ "env without =", 0, 1, 1, "/\0a\0X", 6, -1 },
		{ "env empty name", 0, 1, 1, "/\0a\0=1", 7, -1 },
		{ "env empty value", 0, 1, 1, "/\0a\0X=", 7, 0 },
		{ "unknown flag", 2, 1, 0, "/\0a", 4, -1 },
		{ "relative cwd", 0, 1, 0, "w\0a", 4, -1 },
		{ "empty cwd", 0, 1, 0, "\0a", 3, -1 },
		{ "empty argv0", 0, 1, 0, "/\0", 3, 0 },
	};
	unsigned char buf[64];
	struct ap_spawn s;

	for (size_t i = 0; i < NELEM(rows); i++) {
		size_t n = mk(buf, rows[i].flags, rows[i].argc, rows[i].envc, rows[i].s,
			      rows[i].slen);
		int rc = ap_spawn_decode(buf, n, &s);

		CHECK_INT_AT(rows[i].name, rc, rows[i].want);
		if (rc < 0)
			CHECK(s.argv == NULL && s.env == NULL, "%s: nothing left allocated",
			      rows[i].name);
		ap_spawn_free(&s);
	}
	/* shorter than the fixed words */
	CHECK_INT(ap_spawn_decode(buf, 11, &s), -1);
	CHECK_INT(ap_spawn_decode(buf, 0, &s), -1);
}

/* A count-exact payload with AP_MAX_ARGS strings is accepted. */
static void test_spawn_max_args(void)
{
	static unsigned char buf[12 + 2 + 2 * AP_MAX_ARGS + 10];
	struct ap_spawn s;
	size_t n = 12;

	ap_put_u32(buf, 0);
	ap_put_u32(buf + 4, AP_MAX_ARGS - 10);
	ap_put_u32(buf + 8, 10);
	buf[n++] = '/';
	buf[n++] = 0;
	for (int i = 0; i < AP_MAX_ARGS - 10; i++) {
		buf[n++] = 'a';
		buf[n++] = 0;
	}
	for (int i = 0; i < 10; i++) {
		memcpy(buf + n, "X=", 3);
		n += 3;
	}
	if (CHECK_INT(ap_spawn_decode(buf, n, &s), 0)) {
		CHECK_INT(s.argc, AP_MAX_ARGS - 10);
		CHECK_INT(s.envc, 10);
		CHECK_STR(s.env[9], "X=");
	}
	ap_spawn_free(&s);
}

/* Random bytes, and random mutations of valid input: parse and decode must answer
 * within bounds (ASan/UBSan catch the rest). */
static void test_fuzz(void)
{
	static unsigned char buf[AP_HDR + 512];
	unsigned seed = 12345;
	int parsed = 0, decoded = 0;

	for (int iter = 0; iter < 200000; iter++) {
		size_t n = (size_t)(rand_r(&seed) % (int)sizeof buf);
		unsigned char *p = malloc(n ? n : 1), *q; /* exact size: ASan sees overreads */
		struct ap_frame f;
		struct ap_spawn s;
		int rc;

		for (size_t i = 0; i < n; i++)
			p[i] = (unsigned char)rand_r(&seed);
		if (iter & 1 && n >= AP_HDR) {
			/* mostly-valid headers reach the length checks */
			ap_put_header(p, (uint32_t)(rand_r(&seed) % 600), (uint8_t)(1 + iter % 9),
				      (uint8_t)(iter % 3), 1);
		}
		rc = ap_parse(p, n, &f);
		if (rc == 1) {
			parsed++;
			if (f.len > n - AP_HDR || f.payload != p + AP_HDR)
				CHECK(0, "frame beyond buffer: len %u of %zu", f.len, n);
			(void)ap_frame_valid(&f);
		}
		if (iter & 2 && n >= 12) {
			/* short, small counts, few distinct bytes: often nearly valid */
			n = 12 + (size_t)(rand_r(&seed) % 16) % (n - 11);
			ap_put_u32(p, (uint32_t)(iter & 4) >> 2);
			ap_put_u32(p + 4, (uint32_t)(rand_r(&seed) % 4));
			ap_put_u32(p + 8, (uint32_t)(rand_r(&seed) % 3));
			if (n > 12)
				p[12] = '/';
			for (size_t i = 13; i < n; i++)
				p[i] = "\0=a"[rand_r(&seed) % 3];
		}
		/* an exact-size copy again, so ASan sees a read past n */
		q = malloc(n ? n : 1);
		memcpy(q, p, n);
		if (ap_spawn_decode(q, n, &s) == 0) {
			decoded++;
			CHECK(s.argc >= 1 && s.argv[s.argc] == NULL, "decoded argv shape");
			ap_spawn_free(&s);
		}
		free(q);
		free(p);
	}
	CHECK(parsed > 1000, "fuzz reached whole frames (%d)", parsed);
	CHECK(decoded > 100, "fuzz reached decodable payloads (%d)", decoded);
}

void suite_agentproto(void)
{
	static const CU_TestInfo tests[] = { { "header_round_trip", test_header_round_trip },
					     { "u32", test_u32 },
					     { "max_len", test_max_len },
					     { "header_rejections", test_header_rejections },
					     { "frame_valid", test_frame_valid },
					     { "spawn_round_trip", test_spawn_round_trip },
					     { "spawn_encode_refusals", test_spawn_encode_refusals },
					     { "spawn_decode_rejections", test_spawn_decode_rejections },
					     { "spawn_max_args", test_spawn_max_args },
					     { "fuzz", test_fuzz },
					     CU_TEST_INFO_NULL };

	t_register("agentproto", tests);
}
