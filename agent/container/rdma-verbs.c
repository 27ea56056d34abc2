/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libibverbs lists a host's RDMA devices through its providers (rdma-core's
 * ibverbs-providers, a Recommends of libibverbs1): without them it lists none,
 * and the agent has no port facts and no RDMA check after a move. Said once
 * at start, in GET /v1/host and in vfctl doctor, with the package to install.
 */
#include "config.h"

#include <infiniband/verbs.h>
#include <stdio.h>

#include "agent/container/rdma.h"
#include "libvfpool/libvfpool.h"

/**
 * rdma_verbs_missing() - 1, with why in @why, when the host's PFs have RDMA
 * devices and libibverbs lists none of them; 0 otherwise
 */
int rdma_verbs_missing(const struct vfp_inventory *inv, char *why, size_t size)
{
	const char *first = NULL;
	struct ibv_device **list;
	size_t with = 0;
	int n = 0;

	for (size_t i = 0; i < vfp_inventory_get_pf_count(inv); i++) {
		const char *dev = vfp_pf_get_rdma_device(vfp_inventory_get_pf(inv, i));

		if (dev && !with++)
			first = dev;
	}
	if (!with)
		return 0;
	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	if (n > 0)
		return 0;
	snprintf(why, size, "libibverbs lists none of the %zu RDMA devices of the host's PFs (%s%s): "
		 "VFs get no port facts and no RDMA check after a move (install %s, libibverbs' "
		 "drivers)", with, first, with > 1 ? ", ..." : "", IBVERBS_PROVIDERS_PACKAGE);
	return 1;
}
