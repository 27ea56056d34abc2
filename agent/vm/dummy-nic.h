/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The IPoIB dummy NIC of a VF attached to a domain through the API, as a
 * deployment file's InfiniBand VF gets one at deploy (DESIGN.md §5): the
 * first VF of the allocation, an InfiniBand one, whose claim carries an IPv4
 * "ip". It goes into the domain right after its VF, with the same flags, and
 * leaves it with the VF; its device XML is in the VF's restore point.
 */
#pragma once

#include <stddef.h>

#include "agent/agent.h"

int dummy_nic_xml(struct agent *a, const struct vfp_allocation *alloc, size_t i, char **ret_xml);
