/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "agent/vm/domain-xml.h"
#include "agent/vm/dummy-nic.h"
#include "agent/vm/hostdev-xml.h"

static bool is_infiniband(struct agent *a, const char *pci)
{
	struct vfp_inventory *inv = agent_get_inventory(a);
	const struct vfp_vf *vf = vfp_inventory_find_vf(inv, pci);
	bool ib = vf && vfp_vf_get_link_type(vf) == VFP_LINK_INFINIBAND;

	vfp_inventory_unref(inv);
	return ib;
}

/**
 * dummy_nic_xml() - the device XML of the IPoIB dummy NIC of VF @i of @alloc
 * @ret_xml: set to the XML (free() it), or to NULL when the VF gets none
 *
 * Not an error, and no dummy: a VF after the first (the claim's "ip" is the
 * first VF's), an Ethernet VF, an "ip" that is IPv6 or none (as at deploy).
 */
int dummy_nic_xml(struct agent *a, const struct vfp_allocation *alloc, size_t i, char **ret_xml)
{
	const char *ip = vfp_allocation_get_settings(alloc)->ip;
	struct vfp_config *config;
	char addr[64];
	uint32_t v4;

	*ret_xml = NULL;
	if (i != 0 || !is_infiniband(a, vfp_allocation_get_vf(alloc, i)->pci))
		return 0;
	snprintf(addr, sizeof(addr), "%.*s", (int)strcspn(ip, "/"), ip);
	if (domxml_parse_ipv4(addr, &v4) < 0)
		return 0;
	config = agent_get_config(a);
	*ret_xml = hostdev_xml_dummy_nic_string(vfp_config_get_ipoib_mac_prefix(config), v4);
	vfp_config_unref(config);
	return *ret_xml ? 0 : -ENOMEM;
}
