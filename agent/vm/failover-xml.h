/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libvirt's teaming pair for a failover NIC (formatdomain, "Teaming a
 * virtio/hostdev NIC pair"; QEMU's virtio-net failover): the standby, a
 * virtio NIC with <teaming type='persistent'/> and a user alias ("ua-…"),
 * on a bridge or a macvtap that reaches the VF's VLAN; and the VF's
 * <interface type='hostdev'> with <teaming type='transient' persistent=
 * that alias/>. Both carry the same MAC, which the guest's net_failover
 * pairs them by. Pure: no libvirt, no ledger.
 */
#pragma once

#include <libxml/tree.h>
#include <stddef.h>

#include "libvfpool/libvfpool.h"

/* "ua-failover-" and the MAC's twelve hex digits: one per NIC of a domain, the same on every host. */
#define FAILOVER_ALIAS_LEN 32

void failover_xml_alias(const unsigned char mac[6], char alias[FAILOVER_ALIAS_LEN]);
xmlNodePtr failover_xml_standby(const struct vfp_failover *f, const char *source,
				const unsigned char mac[6], int vlan);
char *failover_xml_standby_string(const struct vfp_failover *f, const char *source,
				  const unsigned char mac[6], int vlan);
