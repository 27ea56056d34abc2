/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which PFs a claim takes its VFs from: a pure function over per-PF free counts. */
#pragma once

#include <stddef.h>

#include "libvfpool.h"

struct vfp_pf_free {
	char pf[VFP_PCI_ADDR_LEN + 1];
	int numa_node;	 /* -1: unknown or none */
	unsigned n_free; /* free VFs of the pool on this PF */
	int distance;	 /* enum vfp_pcie_distance to the claim's "near" device; -1: unknown */
};

int vfp_place(const struct vfp_pf_free *pfs, size_t n, unsigned count, int prefer_numa,
	      enum vfp_placement placement, size_t *ret_seq);
int vfp_place_near(const struct vfp_pf_free *pfs, size_t n, unsigned count,
		   enum vfp_pcie_distance max_distance, int prefer_numa,
		   enum vfp_placement placement, size_t *ret_seq, int *ret_best);
