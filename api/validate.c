/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Checks of request values a person types: MAC, GUID, IP with prefix, header tokens. */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/validate.h"
#include "libvfpool/libvfpool.h"

/* A unicast MAC other than all zeros: what a VF can carry. */
bool valid_mac(const char *s)
{
	unsigned char b[6];

	return vfp_mac_parse_unicast(s, b) == 0;
}

/* An InfiniBand GUID other than all zeros and all ones. */
bool valid_guid(const char *s)
{
	unsigned long long g;

	return vfp_guid_parse(s, &g) == 0 && g != 0 && g != ~0ULL;
}

/* "10.1.0.5/16" or "fd00::5/64": an address and a prefix length that fits it. */
bool valid_ip_prefix(const char *s, int *ret_family)
{
	char addr[64];
	const char *slash = strchr(s, '/');
	unsigned char buf[16];
	char *end;
	long len;
	int family;

	if (!slash || (size_t)(slash - s) >= sizeof(addr) || !slash[1])
		return false;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(family, addr, buf) != 1)
		return false;
	len = strtol(slash + 1, &end, 10);
	if (*end || slash[1] < '0' || slash[1] > '9' || len < 0 ||
	    len > (family == AF_INET ? 32 : 128))
		return false;
	if (ret_family)
		*ret_family = family;
	return true;
}

/* Idempotency keys and the like: 1-128 printable ASCII characters. */
bool valid_token(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 128)
		return false;
	for (; *s; s++)
		if (*s < 0x21 || *s > 0x7e)
			return false;
	return true;
}

