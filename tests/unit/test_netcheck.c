/* common/netcheck (webhook destinations: URL shape, address classes, allowlist) and
 * sandbox-runner/deliver/hooksign (signature, backoff). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hooksign.h"
#include "netcheck.h"
#include "render.h"
#include "tests.h"
#include "util.h"

/* A sockaddr for a literal address (v4 or v6). */
static const struct sockaddr *addr(const char *s, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (strchr(s, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		CHECK(inet_pton(AF_INET6, s, &a->sin6_addr) == 1, "parse %s", s);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		CHECK(inet_pton(AF_INET, s, &a->sin_addr) == 1, "parse %s", s);
	}
	return (const struct sockaddr *)ss;
}

static void test_classify(void)
{
	static const struct {
		const char *a;
		const char *cls;
	} t[] = {
		{ "8.8.8.8", "public" },		{ "1.1.1.1", "public" },
		{ "127.0.0.1", "loopback" },	{ "127.255.0.9", "loopback" },
		{ "10.1.2.3", "private" },		{ "172.16.0.1", "private" },
		{ "172.31.255.255", "private" },	{ "172.32.0.1", "public" },
		{ "192.168.1.1", "private" },	{ "100.64.0.1", "cgnat" },
		{ "100.127.255.255", "cgnat" },	{ "100.128.0.1", "public" },
		{ "169.254.1.1", "link-local" },	{ "169.254.169.254", "metadata" },
		{ "224.0.0.1", "multicast" },	{ "0.0.0.0", "unspecified" },
		{ "0.1.2.3", "unspecified" },	{ "255.255.255.255", "reserved" },
		{ "::1", "loopback" },		{ "::", "unspecified" },
		{ "fd12::1", "private" },		{ "fc00::1", "private" },
		{ "fd00:ec2::254", "metadata" },	{ "fe80::1", "link-local" },
		{ "ff02::1", "multicast" },		{ "::ffff:127.0.0.1", "loopback" },
		{ "::ffff:10.0.0.1", "private" },	{ "::ffff:169.254.169.254", "metadata" },
		{ "64:ff9b::a9fe:a9fe", "metadata" }, { "::ffff:8.8.8.8", "public" },
		{ "2001:db8::1", "reserved" },	{ "2606:4700::1111", "public" },
		{ "::127.0.0.1", "reserved" },
		{ "64:ff9b:1::a9fe:a9fe", "metadata" },	{ "64:ff9b:1::7f00:1", "loopback" },
		{ "64:ff9b:1::808:808", "public" },	{ "64:ff9b:1:1::7f00:1", "reserved" },
		{ "2002:7f00:1::1", "loopback" },	{ "2002:a9fe:a9fe::", "metadata" },
		{ "2002:a00:1::1", "private" },		{ "2002:808:808::1", "public" },
		{ "100::1", "reserved" },		{ "100:0:0:1::1", "public" },
	};

	for (size_t i = 0; i < NELEM(t); i++) {
		struct sockaddr_storage ss;
		CHECK_STR_AT(t[i].a, nc_class_name(nc_classify(addr(t[i].a, &ss))), t[i].cls);
	}
}

static void test_url(void)
{
	static const struct {
		const char *url;
		int ok, https, port;
		const char *host;
	} t[] = {
		{ "https://hooks.example.com/x?y=1", 1, 1, 443, "hooks.example.com" },
		{ "HTTPS://Hooks.Example.COM.:8443", 1, 1, 8443, "hooks.example.com" },
		{ "http://a.example/p", 1, 0, 80, "a.example" },
		{ "https://127.0.0.1:9/", 1, 1, 9, "127.0.0.1" },
		{ "https://[::1]:444/p", 1, 1, 444, "::1" },
		{ "https://user:pw@example.com/", 0, 0, 0, NULL },
		{ "https://example.com@evil.test/", 0, 0, 0, NULL },
		{ "ftp://example.com/", 0, 0, 0, NULL },
		{ "//example.com/", 0, 0, 0, NULL },
		{ "https://", 0, 0, 0, NULL },
		{ "https://exa mple.com/", 0, 0, 0, NULL },
		{ "https://example.com:0/", 0, 0, 0, NULL },
		{ "https://example.com:65536/", 0, 0, 0, NULL },
		{ "https://example.com:/", 0, 0, 0, NULL },
		{ "https://example.com:8x/", 0, 0, 0, NULL },
		{ "https://[::1/", 0, 0, 0, NULL },
		{ "https://[zz::1]/", 0, 0, 0, NULL },
		{ "https://ex_ample.com/", 0, 0, 0, NULL },
		{ "https://a..b/", 0, 0, 0, NULL },
		{ "https://exa\\mple.com/", 0, 0, 0, NULL },
		{ "https://caf\xc3\xa9.example/", 0, 0, 0, NULL },
	};
	char big[NC_URL_MAX + 2];
	struct nc_url u;
	const char *why = NULL;

	for (size_t i = 0; i < NELEM(t); i++) {
		int rc = nc_parse_url(t[i].url, &u, &why);
		CHECK(rc == (t[i].ok ? 0 : -1), "%s: rc %d", t[i].url, rc);
		if (rc == 0 && t[i].ok) {
			CHECK_INT_AT(t[i].url, u.https, t[i].https);
			CHECK_INT_AT(t[i].url, u.port, t[i].port);
			CHECK_STR_AT(t[i].url, u.host, t[i].host);
		}
	}
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	memcpy(big, "https://a.b/", 12);
	CHECK_INT(nc_parse_url(big, &u, &why), -1);
	big[NC_URL_MAX] = '\0';
	CHECK_INT(nc_parse_url(big, &u, &why), 0);
}

static void test_allow(void)
{
	struct nc_allow a;
	struct sockaddr_storage ss;
	char err[128];

	CHECK_INT(nc_allow_parse("", &a, err, sizeof err), 0);
	CHECK_INT((int)(a.ncidr + a.nhost), 0);
	CHECK_INT(nc_allow_parse(" Hooks.Internal , 127.0.0.1/32,10.0.0.0/8, fd12::/16,192.168.1.7",
				 &a, err, sizeof err),
		  0);
	CHECK_INT((int)a.nhost, 1);
	CHECK_INT((int)a.ncidr, 4);
	CHECK_INT(nc_allow_has_host(&a, "hooks.internal"), 1);
	CHECK_INT(nc_allow_has_host(&a, "other.internal"), 0);
	CHECK_INT(nc_allow_has_addr(&a, addr("127.0.0.1", &ss)), 1);
	CHECK_INT(nc_allow_has_addr(&a, addr("127.0.0.2", &ss)), 0);
	CHECK_INT(nc_allow_has_addr(&a, addr("10.200.0.1", &ss)), 1);
	CHECK_INT(nc_allow_has_addr(&a, addr("11.0.0.1", &ss)), 0);
	CHECK_INT(nc_allow_has_addr(&a, addr("fd12:1::5", &ss)), 1);
	CHECK_INT(nc_allow_has_addr(&a, addr("fd13::5", &ss)), 0);
	CHECK_INT(nc_allow_has_addr(&a, addr("::ffff:127.0.0.1", &ss)), 1);
	CHECK_INT(nc_allow_has_addr(&a, addr("192.168.1.7", &ss)), 1);
	CHECK_INT(nc_allow_has_addr(&a, addr("192.168.1.8", &ss)), 0);
	CHECK_INT(nc_allow_parse("10.0.0.0/33", &a, err, sizeof err), -1);
	CHECK_HAS(err, "callback_allow");
	CHECK_INT(nc_allow_parse("fd00::/129", &a, err, sizeof err), -1);
	CHECK_INT(nc_allow_parse("1.2.3", &a, err, sizeof err), -1);
	CHECK_INT(nc_allow_parse("bad_host", &a, err, sizeof err), -1);
	CHECK_INT(nc_allow_parse("0.0.0.0/0", &a, err, sizeof err), 0);
	CHECK_INT(nc_allow_has_addr(&a, addr("169.254.169.254", &ss)), 1);
}

static void test_check_addr(void)
{
	struct nc_allow a;
	struct sockaddr_storage ss;
	char err[128];

	CHECK_INT(nc_allow_parse("", &a, err, sizeof err), 0);
	CHECK(nc_check_addr(&a, "x.example", addr("93.184.216.34", &ss)) == NULL, "public ok");
	CHECK_HAS(nc_check_addr(&a, "localhost", addr("127.0.0.1", &ss)), "loopback");
	CHECK_HAS(nc_check_addr(&a, "x", addr("169.254.169.254", &ss)), "metadata");
	CHECK_HAS(nc_check_addr(&a, "x", addr("fd00:ec2::254", &ss)), "metadata");
	CHECK_HAS(nc_check_addr(&a, "x", addr("10.0.0.1", &ss)), "private");
	CHECK_INT(nc_allow_parse("127.0.0.1/32,hooks.internal", &a, err, sizeof err), 0);
	CHECK(nc_check_addr(&a, "localhost", addr("127.0.0.1", &ss)) == NULL, "listed CIDR");
	CHECK_HAS(nc_check_addr(&a, "localhost", addr("::1", &ss)), "loopback");
	CHECK(nc_check_addr(&a, "hooks.internal", addr("10.0.0.1", &ss)) == NULL, "listed name");
	/* A listed name never opens metadata: only a CIDR can. */
	CHECK_HAS(nc_check_addr(&a, "hooks.internal", addr("169.254.169.254", &ss)), "metadata");
}

static void test_sign(void)
{
	unsigned char mac[32];
	char hex[65], sig[128];

	/* RFC 4231 test case 2 */
	hs_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, mac);
	util_hex(mac, 32, hex);
	CHECK_STR(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	CHECK_INT(hs_signature("secret", 1700000000, "{\"a\":1}", 7, sig, sizeof sig), 0);
	CHECK_STR(sig, "t=1700000000,v1="
		       "49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686");
	/* A key longer than the block is hashed first. */
	{
		char k[66];
		memset(k, 'k', 64);
		k[64] = 'x';
		k[65] = '\0';
		CHECK_INT(hs_signature(k, 1700000000, "{\"a\":1}", 7, sig, sizeof sig), 0);
		CHECK_HAS(sig, "621aef4345ea5863839a318c69b44950ad834fd368938944c83dcee4d5016d74");
	}
	CHECK_INT(hs_signature("secret", 1, "x", 1, sig, 20), -1);
}

static void test_backoff(void)
{
	CHECK_INT(hs_backoff_ms(10000, 1), 10000);
	CHECK_INT(hs_backoff_ms(10000, 2), 20000);
	CHECK_INT(hs_backoff_ms(10000, 4), 80000);
	CHECK_INT(hs_backoff_ms(10000, 7), 600000);
	CHECK_INT(hs_backoff_ms(10000, 1000), 600000);
	CHECK_INT(hs_backoff_ms(0, 1), 1);
	CHECK_INT(hs_backoff_ms(200, 3), 800);
}

/* The job object's callback: null without a URL, pending before the row exists, the
 * attempts log in order with the API's millisecond times. */
static void test_render_callback(void)
{
	struct job_view v = { .id = "0190", .state = JS_QUEUED };
	json_t *j = render_job(&v);
	char *s;

	CHECK(json_is_null(json_object_get(j, "callback")), "no url: null");
	json_decref(j);
	v.cb_url = "https://h.example/x";
	j = render_job(&v);
	s = json_dumps(json_object_get(j, "callback"), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(s, "{\"attempts\":0,\"attempts_log\":[],\"delivered_at\":null,\"last_error\":null,"
		     "\"last_status\":null,\"state\":\"pending\",\"url\":\"https://h.example/x\"}");
	free(s);
	json_decref(j);
	v.cb_state = "delivered";
	v.cb_attempts = "3";
	v.cb_last_status = "200";
	v.cb_delivered_at = "2026-11-29T10:00:00.123456Z";
	v.cb_attempts_log = "[{\"attempt\":1,\"at\":\"2026-11-29T09:59:59.500000Z\","
			    "\"status\":500,\"error\":\"receiver answered HTTP 500\","
			    "\"duration_ms\":12,\"outcome\":\"http_status\"},"
			    "{\"attempt\":2,\"at\":\"2026-11-29T10:00:00.100000Z\",\"status\":null,"
			    "\"error\":\"Timeout was reached\",\"duration_ms\":10000,"
			    "\"outcome\":\"timeout\"}]";
	j = render_job(&v);
	s = json_dumps(json_object_get(j, "callback"), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(s, "{\"attempts\":3,\"attempts_log\":[{\"at\":\"2026-11-29T09:59:59.500Z\","
		     "\"attempt\":1,\"duration_ms\":12,\"error\":\"receiver answered HTTP 500\","
		     "\"outcome\":\"http_status\",\"status\":500},{\"at\":"
		     "\"2026-11-29T10:00:00.100Z\",\"attempt\":2,\"duration_ms\":10000,\"error\":"
		     "\"Timeout was reached\",\"outcome\":\"timeout\",\"status\":null}],"
		     "\"delivered_at\":\"2026-11-29T10:00:00.123Z\","
		     "\"last_error\":null,\"last_status\":200,\"state\":\"delivered\","
		     "\"url\":\"https://h.example/x\"}");
	free(s);
	json_decref(j);
}

void suite_netcheck(void)
{
	static const CU_TestInfo tests[] = {
		{ "address classes", test_classify },
		{ "callback URL shape", test_url },
		{ "allowlist parse and match", test_allow },
		{ "address decision", test_check_addr },
		{ "signature", test_sign },
		{ "backoff", test_backoff },
		{ "job object's callback", test_render_callback },
		CU_TEST_INFO_NULL,
	};
	t_register("netcheck", tests);
}
