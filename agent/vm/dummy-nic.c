/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "agent/vm/domain-xml.h"
#include "agent/vm/dummy-nic.h"
#include "agent/vm/hostdev-xml.h"

/**
 * dummy_nic_vf_is_ib() - whether VF @pci is an InfiniBand VF, as the
 * inventory has it: the one answer to whether a VF gets an IPoIB dummy NIC
 * (any other VF, Ethernet or not, needs none)
 */
bool dummy_nic_vf_is_ib(struct agent *a, const char *pci)
{
	struct vfp_inventory *inv = agent_get_inventory(a);
	const struct vfp_vf *vf = vfp_inventory_find_vf(inv, pci);
	bool ib = vf && vfp_vf_get_link_type(vf) == VFP_LINK_INFINIBAND;

	vfp_inventory_unref(inv);
	return ib;
}

/**
 * dummy_nic_claim_ipv4() - the IPv4 address the claim of @alloc carries
 * ("ip", its prefix length dropped) into *@ret; -EINVAL when it carries
 * none, or an IPv6 one
 */
int dummy_nic_claim_ipv4(const struct vfp_allocation *alloc, uint32_t *ret)
{
	const char *ip = vfp_allocation_get_settings(alloc)->ip;
	char addr[64];

	snprintf(addr, sizeof(addr), "%.*s", (int)strcspn(ip, "/"), ip);
	return domxml_parse_ipv4(addr, ret) < 0 ? -EINVAL : 0;
}

/**
 * dummy_nic_node() - the IPoIB dummy NIC of address @ipv4 (a new, unlinked
 * node; NULL when out of memory): its MAC the config's ipoib_mac_prefix and
 * the address (hostdev_xml_dummy_nic())
 */
xmlNodePtr dummy_nic_node(struct agent *a, uint32_t ipv4)
{
	struct vfp_config *config = agent_get_config(a);
	xmlNodePtr n = hostdev_xml_dummy_nic(vfp_config_get_ipoib_mac_prefix(config), ipv4);

	vfp_config_unref(config);
	return n;
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
	xmlNodePtr node;
	uint32_t v4;

	*ret_xml = NULL;
	if (i != 0 || !dummy_nic_vf_is_ib(a, vfp_allocation_get_vf(alloc, i)->pci) ||
	    dummy_nic_claim_ipv4(alloc, &v4) < 0)
		return 0;
	node = dummy_nic_node(a, v4);
	*ret_xml = hostdev_xml_text(node);
	xmlFreeNode(node);
	return *ret_xml ? 0 : -ENOMEM;
}
