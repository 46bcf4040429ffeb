/* Where the service may send a webhook (issue 12): URL shape, address classes and the
 * operator allowlist (config callback_allow). Pure: no I/O, no DNS; the runner resolves,
 * then asks here about each address, then connects to exactly the address it asked about
 * (sandbox-runner/deliver/callback.c). The API uses the URL check at submit (app/jobs/validate.c). */
#ifndef SANDBOX_NETCHECK_H
#define SANDBOX_NETCHECK_H

#include <stddef.h>
#include <sys/socket.h>

#define NC_URL_MAX 2048
#define NC_HOST_MAX 253
#define NC_ALLOW_MAX 32

struct nc_url {
	int https;                 /* 0: http */
	char host[NC_HOST_MAX + 1]; /* lower case; an IPv6 literal without brackets */
	int host_is_ip6;           /* was [v6] */
	int port;                  /* explicit or the scheme's */
};

/* Checks an absolute http(s) URL: scheme, host (name, IPv4 or [IPv6]), optional port
 * 1-65535, no userinfo, printable ASCII only, at most NC_URL_MAX bytes. 0, or -1 with
 * *why a fixed message. */
int nc_parse_url(const char *url, struct nc_url *u, const char **why);

enum nc_class {
	NC_PUBLIC,
	NC_LOOPBACK,
	NC_PRIVATE,     /* RFC 1918, IPv6 ULA fc00::/7 */
	NC_LINK_LOCAL,  /* 169.254/16, fe80::/10 */
	NC_CGNAT,       /* 100.64/10 */
	NC_MULTICAST,
	NC_UNSPECIFIED, /* 0.0.0.0/8, :: */
	NC_METADATA,    /* 169.254.169.254, fd00:ec2::254 */
	NC_RESERVED,    /* 240/4, broadcast, documentation, benchmarking, IETF */
};
/* IPv4-mapped, NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48 in its /96 form)
 * and 6to4 (2002::/16, when the IPv4 part is not public) IPv6 addresses are classed by
 * their IPv4 part; 100::/64 (discard) is reserved. */
enum nc_class nc_classify(const struct sockaddr *sa);
/* "public", "loopback", ... for messages. */
const char *nc_class_name(enum nc_class c);

struct nc_cidr {
	int family;               /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	int bits;
};
struct nc_allow {
	struct nc_cidr cidr[NC_ALLOW_MAX];
	size_t ncidr;
	char host[NC_ALLOW_MAX][NC_HOST_MAX + 1];
	size_t nhost;
};
/* "a.example.com, 10.0.0.0/8, fd12::/16, 127.0.0.1" ("" = empty list). -1 with err. */
int nc_allow_parse(const char *spec, struct nc_allow *a, char *err, size_t errlen);
/* The host name (lower case) is listed by name. */
int nc_allow_has_host(const struct nc_allow *a, const char *host);
/* The address lies in a listed CIDR. */
int nc_allow_has_addr(const struct nc_allow *a, const struct sockaddr *sa);

/* The decision for one resolved address of `host`: NULL = may connect, else the
 * reason (a static string naming the address class). Public addresses pass; any
 * other class passes only when its address is in a listed CIDR, or (except
 * metadata and unspecified, which only a CIDR can open) when the host is listed by
 * name. */
const char *nc_check_addr(const struct nc_allow *a, const char *host, const struct sockaddr *sa);

#endif
