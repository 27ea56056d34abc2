/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The port facts of a VF's RDMA device, from rdma-core's libibverbs, with
 * the host's verbs devices listed once per inventory.
 */
#pragma once

#include "libvfpool/libvfpool.h"

/* Port 1 of an RDMA device, as libibverbs reports it. */
struct rdma_port {
	char state[32];
	int lid;
	char link_layer[16];
	char gid0[48]; /* "" when it has none */
	int active_mtu;
};

int rdma_port_facts(struct vfp_inventory *inv, const char *dev, struct rdma_port *ret);
void rdma_devices_clear(void);
