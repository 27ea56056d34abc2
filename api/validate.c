/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Checks of request values a person types: MAC, GUID, IP with prefix, header tokens. */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/validate.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* @n bytes "xx:xx:…" into @out. */
static bool parse_bytes(const char *s, unsigned char *out, size_t n)
{
	if (strlen(s) != 3 * n - 1)
		return false;
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(s[3 * i]), lo = hexval(s[3 * i + 1]);

		if (hi < 0 || lo < 0 || (i + 1 < n && s[3 * i + 2] != ':'))
			return false;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return true;
}

/* A unicast MAC other than all zeros: what a VF can carry. */
bool valid_mac(const char *s)
{
	unsigned char b[6];

	if (!parse_bytes(s, b, 6) || (b[0] & 1))
		return false;
	return b[0] | b[1] | b[2] | b[3] | b[4] | b[5];
}

/* An InfiniBand GUID other than all zeros and all ones. */
bool valid_guid(const char *s)
{
	unsigned char b[8];
	unsigned or = 0, and = 0xff;

	if (!parse_bytes(s, b, 8))
		return false;
	for (int i = 0; i < 8; i++) {
		or |= b[i];
		and &= b[i];
	}
	return or != 0 && and != 0xff;
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
