/* Where the service may send a webhook (issue 12) (see netcheck.h). */
#include "netcheck.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int host_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* A DNS name or dotted IPv4 (lower case already): labels of [a-z0-9-], no empty label. */
static int host_ok(const char *h)
{
	size_t n = strlen(h);

	if (n == 0 || n > NC_HOST_MAX || h[0] == '.' || h[0] == '-' || strstr(h, ".."))
		return 0;
	for (const char *p = h; *p; p++)
		if (!host_char((unsigned char)*p))
			return 0;
	return 1;
}

static int parse_port(const char *s, size_t n, int *port)
{
	long v = 0;

	if (n == 0 || n > 5)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

int nc_parse_url(const char *url, struct nc_url *u, const char **why)
{
	const char *p, *auth, *end, *hs, *he, *colon = NULL;
	size_t len = strlen(url);

	memset(u, 0, sizeof *u);
	if (len > NC_URL_MAX)
		return *why = "longer than 2048 bytes", -1;
	for (p = url; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return *why = "must be printable ASCII without spaces", -1;
	if (strncasecmp(url, "https://", 8) == 0) {
		u->https = 1;
		auth = url + 8;
	} else if (strncasecmp(url, "http://", 7) == 0) {
		auth = url + 7;
	} else {
		return *why = "scheme must be https", -1;
	}
	end = auth + strcspn(auth, "/?#");
	if (memchr(auth, '@', (size_t)(end - auth)) || memchr(auth, '\\', (size_t)(end - auth)))
		return *why = "must not carry user information", -1;
	if (*auth == '[') {
		const char *rb = memchr(auth, ']', (size_t)(end - auth));
		struct in6_addr a6;
		if (rb == NULL)
			return *why = "unterminated IPv6 address", -1;
		hs = auth + 1;
		he = rb;
		if (rb + 1 < end) {
			if (rb[1] != ':')
				return *why = "bad host", -1;
			colon = rb + 1;
		}
		u->host_is_ip6 = 1;
		if ((size_t)(he - hs) >= sizeof u->host)
			return *why = "bad host", -1;
		memcpy(u->host, hs, (size_t)(he - hs));
		if (inet_pton(AF_INET6, u->host, &a6) != 1)
			return *why = "bad IPv6 address", -1;
	} else {
		hs = auth;
		colon = memchr(auth, ':', (size_t)(end - auth));
		he = colon ? colon : end;
		if ((size_t)(he - hs) > NC_HOST_MAX)
			return *why = "host name too long", -1;
		for (size_t i = 0; i < (size_t)(he - hs); i++)
			u->host[i] = (char)lower((unsigned char)hs[i]);
		u->host[he - hs] = '\0';
		/* One trailing dot names the same host; keep the canonical form. */
		if (he > hs && u->host[he - hs - 1] == '.')
			u->host[he - hs - 1] = '\0';
		if (!host_ok(u->host))
			return *why = "bad host", -1;
	}
	u->port = u->https ? 443 : 80;
	if (colon && parse_port(colon + 1, (size_t)(end - colon - 1), &u->port) < 0)
		return *why = "bad port (1-65535)", -1;
	return 0;
}

static int in4(const unsigned char *a, unsigned net, int bits)
{
	unsigned v = (unsigned)a[0] << 24 | (unsigned)a[1] << 16 | (unsigned)a[2] << 8 | a[3];
	unsigned mask = bits == 0 ? 0 : 0xffffffffu << (32 - bits);

	return (v & mask) == (net & mask);
}

static enum nc_class class4(const unsigned char *a)
{
	static const struct {
		unsigned net;
		int bits;
		enum nc_class c;
	} t[] = {
		{ 0xa9fea9feu, 32, NC_METADATA },    /* 169.254.169.254 */
		{ 0x00000000u, 8, NC_UNSPECIFIED },  /* 0.0.0.0/8 */
		{ 0x7f000000u, 8, NC_LOOPBACK },     /* 127/8 */
		{ 0x0a000000u, 8, NC_PRIVATE },      /* 10/8 */
		{ 0xac100000u, 12, NC_PRIVATE },     /* 172.16/12 */
		{ 0xc0a80000u, 16, NC_PRIVATE },     /* 192.168/16 */
		{ 0x64400000u, 10, NC_CGNAT },       /* 100.64/10 */
		{ 0xa9fe0000u, 16, NC_LINK_LOCAL },  /* 169.254/16 */
		{ 0xe0000000u, 4, NC_MULTICAST },    /* 224/4 */
		{ 0xf0000000u, 4, NC_RESERVED },     /* 240/4 and 255.255.255.255 */
		{ 0xc0000000u, 24, NC_RESERVED },    /* 192.0.0/24 IETF */
		{ 0xc0000200u, 24, NC_RESERVED },    /* 192.0.2/24 TEST-NET-1 */
		{ 0xc6336400u, 24, NC_RESERVED },    /* 198.51.100/24 */
		{ 0xcb007100u, 24, NC_RESERVED },    /* 203.0.113/24 */
		{ 0xc6120000u, 15, NC_RESERVED },    /* 198.18/15 benchmarking */
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (in4(a, t[i].net, t[i].bits))
			return t[i].c;
	return NC_PUBLIC;
}

static enum nc_class class6(const unsigned char *a)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const unsigned char meta[16] = { 0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0,
						0,    0, 0,    0,    0, 0, 0x02, 0x54 };
	static const unsigned char zero[16];
	unsigned char one[16] = { 0 };

	one[15] = 1;
	if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
		return class4(a + 12);
	/* 64:ff9b:1::/48, local-use NAT64 (RFC 8215): a translator of this network reaches
	 * the IPv4 address in the last 32 bits (the RFC 6052 /96 form; other prefix
	 * lengths of it are refused as reserved, never guessed at). */
	if (memcmp(a, nat64, 4) == 0 && a[4] == 0 && a[5] == 1)
		return memcmp(a + 6, zero, 6) == 0 ? class4(a + 12) : NC_RESERVED;
	/* 2002::/16, 6to4: the relay reaches the IPv4 address in bits 16..47; one that is
	 * not public is classed as that address. */
	if (a[0] == 0x20 && a[1] == 0x02 && class4(a + 2) != NC_PUBLIC)
		return class4(a + 2);
	/* 100::/64, discard-only (RFC 6666) */
	if (a[0] == 0x01 && memcmp(a + 1, zero, 7) == 0)
		return NC_RESERVED;
	if (memcmp(a, meta, 16) == 0)
		return NC_METADATA;
	if (memcmp(a, zero, 16) == 0)
		return NC_UNSPECIFIED;
	if (memcmp(a, one, 16) == 0)
		return NC_LOOPBACK;
	/* ::/96 (IPv4-compatible, deprecated) and the rest of ::/8 are not routable. */
	if (a[0] == 0)
		return NC_RESERVED;
	if ((a[0] & 0xfe) == 0xfc)
		return NC_PRIVATE;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return NC_LINK_LOCAL;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0) /* site-local, deprecated */
		return NC_PRIVATE;
	if (a[0] == 0xff)
		return NC_MULTICAST;
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8) /* 2001:db8::/32 */
		return NC_RESERVED;
	return NC_PUBLIC;
}

enum nc_class nc_classify(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return class4((const unsigned char *)&((const struct sockaddr_in *)(const void *)sa)
				      ->sin_addr);
	if (sa->sa_family == AF_INET6)
		return class6(((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr);
	return NC_RESERVED;
}

const char *nc_class_name(enum nc_class c)
{
	static const char *const n[] = { "public",	"loopback",    "private",
					 "link-local",	"cgnat",       "multicast",
					 "unspecified", "metadata",    "reserved" };

	return (unsigned)c < sizeof n / sizeof n[0] ? n[c] : "reserved";
}

static int parse_cidr(const char *s, struct nc_cidr *c)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	int max;

	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	memset(c, 0, sizeof *c);
	if (inet_pton(AF_INET, buf, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else {
		return -1;
	}
	c->bits = max;
	if (slash && parse_port(slash + 1, strlen(slash + 1), &c->bits) < 0) {
		if (strcmp(slash + 1, "0") != 0)
			return -1;
		c->bits = 0;
	}
	return c->bits > max ? -1 : 0;
}

int nc_allow_parse(const char *spec, struct nc_allow *a, char *err, size_t errlen)
{
	const char *p = spec;

	memset(a, 0, sizeof *a);
	while (*p) {
		char item[NC_HOST_MAX + 1];
		size_t n;

		p += strspn(p, " \t,");
		n = strcspn(p, ",");
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == 0)
			break;
		if (n >= sizeof item) {
			snprintf(err, errlen, "callback_allow: entry too long");
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			item[i] = (char)lower((unsigned char)p[i]);
		item[n] = '\0';
		p += n;
		/* Addresses and CIDRs; anything else must be a host name. */
		if (strchr(item, ':') || strchr(item, '/') || strspn(item, "0123456789.") == n) {
			if (a->ncidr == NC_ALLOW_MAX || parse_cidr(item, &a->cidr[a->ncidr]) < 0) {
				snprintf(err, errlen, "callback_allow: bad address or CIDR '%.64s'",
					 item);
				return -1;
			}
			a->ncidr++;
		} else {
			if (a->nhost == NC_ALLOW_MAX || !host_ok(item)) {
				snprintf(err, errlen, "callback_allow: bad host name '%.64s'", item);
				return -1;
			}
			memcpy(a->host[a->nhost++], item, n + 1);
		}
	}
	return 0;
}

int nc_allow_has_host(const struct nc_allow *a, const char *host)
{
	for (size_t i = 0; i < a->nhost; i++)
		if (strcasecmp(a->host[i], host) == 0)
			return 1;
	return 0;
}

static int prefix_eq(const unsigned char *x, const unsigned char *y, int bits)
{
	int whole = bits / 8, rest = bits % 8;

	if (memcmp(x, y, (size_t)whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	return ((x[whole] ^ y[whole]) & (0xff << (8 - rest)) & 0xff) == 0;
}

int nc_allow_has_addr(const struct nc_allow *a, const struct sockaddr *sa)
{
	const unsigned char *v4 = NULL, *v6 = NULL;
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (sa->sa_family == AF_INET) {
		v4 = (const unsigned char *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	} else if (sa->sa_family == AF_INET6) {
		v6 = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
		if (memcmp(v6, mapped, 12) == 0)
			v4 = v6 + 12;
	} else {
		return 0;
	}
	for (size_t i = 0; i < a->ncidr; i++) {
		const struct nc_cidr *c = &a->cidr[i];
		if (c->family == AF_INET && v4 && prefix_eq(v4, c->addr, c->bits))
			return 1;
		if (c->family == AF_INET6 && v6 && prefix_eq(v6, c->addr, c->bits))
			return 1;
	}
	return 0;
}

const char *nc_check_addr(const struct nc_allow *a, const char *host, const struct sockaddr *sa)
{
	static const char *const why[] = {
		NULL,
		"destination address is loopback",
		"destination address is private",
		"destination address is link-local",
		"destination address is CGNAT (100.64.0.0/10)",
		"destination address is multicast",
		"destination address is unspecified",
		"destination address is a cloud metadata address",
		"destination address is reserved",
	};
	enum nc_class c = nc_classify(sa);

	if (c == NC_PUBLIC || nc_allow_has_addr(a, sa))
		return NULL;
	if (c != NC_METADATA && c != NC_UNSPECIFIED && nc_allow_has_host(a, host))
		return NULL;
	return (unsigned)c < sizeof why / sizeof why[0] ? why[c] : why[NC_RESERVED];
}
