/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GET /v1/pcie: where each PF and VF sits in the PCIe tree (root complex,
 * bridges, NUMA node, ACS), and the devices worth being near (GPUs,
 * accelerators, NVMe) with their distance to each PF.
 */
#include "config.h"

#include <errno.h>

#include "agent/pcie-topo.h"
#include "api/api.h"

int api_get_pcie(struct api_request *req)
{
	struct vfp_inventory *inv = agent_get_inventory(req->agent);
	struct vfp_pcie_topo *t = agent_get_pcie_topo(req->agent);
	json_t *o = t ? vfp_pcie_topo_to_json(t, inv) : NULL;
	int r;

	if (o)
		r = api_reply(req, 200, o);
	else
		r = api_fail(req, t ? -ENOMEM : -EIO, "the PCIe tree could not be read");
	vfp_pcie_topo_unref(t);
	vfp_inventory_unref(inv);
	return r;
}
