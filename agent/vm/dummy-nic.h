/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The IPoIB dummy NIC of a VF attached to a domain through the API, as a
 * deployment file's InfiniBand VF gets one at deploy (DESIGN.md §5): the
 * first VF of the allocation, an InfiniBand one, whose claim carries an IPv4
 * "ip". It goes into the domain right after its VF, with the same flags, and
 * leaves it with the VF; its device XML is in the VF's restore point. A
 * deployment file's (agent/deployment.c, deployment-adopt.c) is built here
 * too, and whether a VF is InfiniBand is answered here alone.
 */
#pragma once

#include <libxml/tree.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"

bool dummy_nic_vf_is_ib(struct agent *a, const char *pci);
int dummy_nic_claim_ipv4(const struct vfp_allocation *alloc, uint32_t *ret);
xmlNodePtr dummy_nic_node(struct agent *a, uint32_t ipv4);
int dummy_nic_xml(struct agent *a, const struct vfp_allocation *alloc, size_t i, char **ret_xml);
