/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MACs and the IPv4 address a dummy NIC's MAC carries: a MAC string is
 * parsed strictly; the address in an OpenNebula 02:00 MAC, encoded into a
 * dummy MAC and read back, is the same address; an IPv4 string that parses
 * encodes into a MAC with the prefix and its four bytes.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vm/domain-xml.h"
#include "agent/vm/hostdev-xml.h"
#include "agent/netlink/nlmsg.h"
#include "libvfpool/libvfpool.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char prefix[2] = { 0x02, 0x1b };
	char *s = fuzz_string(data, size);
	unsigned char mac[6], dummy[6];
	uint32_t ip;

	if (!s)
		return 0;
	if (vfp_mac_parse(s, mac) == 0) {
		ip = (uint32_t)mac[2] << 24 | (uint32_t)mac[3] << 16 | (uint32_t)mac[4] << 8 | mac[5];
		hostdev_xml_ipoib_mac(prefix, ip, dummy);
		if (memcmp(dummy, prefix, 2) || memcmp(dummy + 2, mac + 2, 4))
			abort();
	}
	if (domxml_parse_ipv4(s, &ip) == 0) {
		struct in_addr a = { .s_addr = htonl(ip) };
		char back[INET_ADDRSTRLEN];

		hostdev_xml_ipoib_mac(prefix, ip, dummy);
		if (!inet_ntop(AF_INET, &a, back, sizeof(back)) || domxml_parse_ipv4(back, &ip) ||
		    memcmp(dummy + 2, &a.s_addr, 4))
			abort();
	}
	free(s);
	return 0;
}
