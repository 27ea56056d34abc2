/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of a failover NIC's standby (the kernel's
 * Documentation/networking/net_failover.rst, "Live Migration of a VM with
 * SR-IOV VF & virtio-net in STANDBY mode"), over rtnetlink in the agent's
 * own namespace:
 *  - before a NIC gets its standby: the bridge or macvtap lower device is
 *    there and reaches the VF's VLAN (standby_host_check());
 *  - while its VF is out of the guest and the standby stays: frames for the
 *    guest's MAC that reach the standby's bridge go to the standby's tap (a
 *    static FDB entry; the bridge may have learned the MAC on its uplink,
 *    where the VF's own traffic came in through the PF's switch), and the
 *    PF's embedded switch no longer steers the MAC to the VF that left
 *    (standby_host_to_standby(); standby_host_vf_gone(), under the PF's lock,
 *    through vm-detach.c's vf_left_guest());
 *  - once a VF is in the guest again: the FDB entry gone (standby_host_to_vf());
 *    whether the guest still sends over its standby (standby_host_sent()).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "agent/pf/vfconfig.h"
#include "libvfpool/libvfpool.h"

int standby_host_check(enum vfp_standby_kind kind, const char *source, int vlan, char *err,
		       size_t err_size);
void standby_host_to_standby(const char *standby_xml);
void standby_host_to_vf(const char *standby_xml);
int standby_host_sent(const char *standby_xml, uint64_t *ret_packets);
void standby_host_vf_gone(const struct vf_target *t, const char *device_xml);
