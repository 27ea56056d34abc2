/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF's settings as its PF holds them (IFLA_VFINFO_LIST): parsed from an
 * RTM_NEWLINK reply of the PF and built into an RTM_NEWLINK request, as pure
 * functions over buffers. The socket I/O is in vfconfig.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VFINFO_UNSET (-1)

/* One VF's settings. Fields at VFINFO_UNSET are unknown (parse) or left alone (build). */
struct vf_settings {
	unsigned index;
	bool has_mac;
	unsigned char mac[6];
	int vlan;	     /* 0-4095, 0: no VLAN */
	int qos;	     /* 0-7 */
	int vlan_proto;	     /* host order: 0x8100 (802.1Q) or 0x88a8 (802.1ad) */
	int spoofchk;	     /* 0 or 1 */
	int trust;	     /* 0 or 1 */
	int link_state;	     /* IFLA_VF_LINK_STATE_{AUTO,ENABLE,DISABLE} */
	long long min_tx_rate; /* Mbps */
	long long max_tx_rate; /* Mbps */
	bool has_node_guid, has_port_guid;
	uint64_t node_guid, port_guid;
};

void vf_settings_init(struct vf_settings *s, unsigned index);
size_t vfinfo_build_get(void *buf, uint32_t seq, int pf_ifindex);
size_t vfinfo_build_set(void *buf, size_t size, uint32_t seq, int pf_ifindex,
			const struct vf_settings *s);
int vfinfo_parse(const void *buf, size_t len, unsigned index, struct vf_settings *ret);
