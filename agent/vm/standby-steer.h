/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A failover NIC's MAC steered onto its standby's path for the length of a
 * VF swap: put into the unicast filter (`bridge fdb add MAC dev PF self`,
 * NTF_SELF) of each SR-IOV PF of this host's inventory that carries the
 * standby's bridge (a port of it) or macvtap (its lower device) to the wire.
 *
 * The old VF leaves its guest over seconds (the guest lets it go, libvirt
 * detaches it): until its MAC is cleared on the PF (standby_host_vf_gone())
 * the PF's embedded switch (igb's VMDq pools) delivers the guest's frames
 * to that VF only, and once it is cleared the PF's own filter must take the
 * MAC for the frames to reach its bridge. The entry in the PF's filter,
 * made before the unplug, sends them to the PF as well from the start; it
 * stays until the new VF carries the traffic.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct agent;

int standby_steer(struct agent *a, const char *standby_xml, bool add, char *err, size_t err_size);
