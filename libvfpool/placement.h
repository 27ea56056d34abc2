/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which free VFs a claim takes: a pure function, tested on its own. */
#pragma once

#include <stddef.h>

#include "libvfpool.h"

struct vfp_candidate {
	char pci[VFP_PCI_ADDR_LEN + 1];
	char pf[VFP_PCI_ADDR_LEN + 1];
	int numa_node; /* -1: unknown or none */
	char link_type[16];
};

int vfp_place(const struct vfp_candidate *c, size_t n, unsigned count, int prefer_numa,
	      enum vfp_placement placement, size_t *ret_chosen);
