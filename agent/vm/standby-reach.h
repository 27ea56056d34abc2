/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether a failover NIC's standby can carry its traffic on this host, as
 * pure logic over links already read (agent/vm/standby-host.c reads them):
 * the bridge or macvtap lower device exists, is of the kind the standby
 * names, and reaches the VF's VLAN. What a recorded standby stands on,
 * read back from its XML. And what a failover VF's MAC on its PF must become
 * once it left its guest.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/netlink/nlmsg.h"
#include "libvfpool/libvfpool.h"

/* A standby's source and MAC, as its <interface> in the domain has them. */
struct standby_source {
	enum vfp_standby_kind kind;
	char source[NL_IFNAMSIZ]; /* the bridge, or the macvtap's lower device */
	unsigned char mac[6];
};

int standby_source_parse(const char *xml, struct standby_source *ret);
int standby_reach_verdict(enum vfp_standby_kind kind, const char *source, int vlan,
			  const struct nl_link *dev, const struct nl_link *ports, size_t n_ports,
			  char *err, size_t err_size, char *warn, size_t warn_size);
bool standby_vf_mac_after(const char *device_xml, const unsigned char now[6], bool zero_refused,
			  const char *pci, unsigned char ret[6]);
