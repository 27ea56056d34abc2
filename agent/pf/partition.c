/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tenant's InfiniBand partition on the host's side. On mlx4 the VF's
 * P_Key index 0 is mapped onto the physical index that holds the tenant's
 * key, once the subnet manager has put it on the port (its other indices
 * stay on none, as the kernel leaves a VF's): the tenant sees its own
 * partition and not the default one. The index 0 had before is in the
 * restore point first, and put back at release. mlx5 VFs get their tables
 * from the subnet manager by their GUIDs: nothing to do here.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/pf/pf-side.h"

static bool is_mlx4(const struct vf_facts *f)
{
	return strcmp(f->pf_driver, "mlx4_core") == 0;
}

/**
 * pf_side_map_partition() - mlx4: VF @f's index 0 onto @pkey's physical index
 *
 * 0 when done, or when there is nothing to do yet (not mlx4; the key not on
 * the port: pf_side_partition_state() says pending, and
 * agent_partitions_retry() maps it later); else the sysfs error, in @err.
 */
int pf_side_map_partition(struct agent *a, const struct vf_facts *f, int pkey,
			  struct vfp_restore_point *rp, char *err, size_t err_size)
{
	int phys, old = VFP_UNSET, r;

	if (!is_mlx4(f) || pkey < 0)
		return 0;
	r = vfp_ib_mlx4_find_pkey(a->ctx, f->pf_pci, pkey, &phys);
	if (r == -ENOENT || r == -EOPNOTSUPP)
		return 0;
	if (r >= 0 && rp->pkey_idx0 == VFP_UNSET) {
		r = vfp_ib_mlx4_read_pkey_idx(a->ctx, f->pf_pci, f->pci, 0, &old);
		rp->pkey_idx0 = r >= 0 ? old : VFP_UNSET;
		if (r >= 0)
			r = restore_point_update(a, f->pci, rp);
	}
	if (r >= 0)
		r = vfp_ib_mlx4_write_pkey_idx(a->ctx, f->pf_pci, f->pci, 0, phys);
	if (r < 0)
		snprintf(err, err_size, "VF %s: P_Key 0x%04x on its index 0: %s", f->pci,
			 (unsigned)pkey, strerror(-r));
	return r;
}

/* mlx4: VF @f's index 0 back where the restore point says; @err empty when it went well. */
void pf_side_unmap_partition(struct agent *a, const struct vf_facts *f,
			     const struct vfp_restore_point *rp, char *err, size_t err_size)
{
	int r;

	if (!rp || rp->pkey_idx0 == VFP_UNSET || !is_mlx4(f))
		return;
	r = vfp_ib_mlx4_write_pkey_idx(a->ctx, f->pf_pci, f->pci, 0, rp->pkey_idx0);
	if (r < 0)
		snprintf(err, err_size, "VF %s: P_Key index 0 back: %s", f->pci, strerror(-r));
}

/**
 * pf_side_partition_state() - "applied" when VF @pci has @pkey as the host
 * sees it (mlx4: its index 0 on the key's physical index; else its RDMA
 * device's table holds it), "pending" when not yet, "unknown" when the host
 * cannot see (an mlx5 VF in a guest has no RDMA device here)
 */
const char *pf_side_partition_state(struct agent *a, const char *pci, int pkey)
{
	struct vf_facts f;
	int phys, now, r = vf_facts_read(a, pci, &f);

	if (r < 0)
		return "unknown";
	if (is_mlx4(&f)) {
		r = vfp_ib_mlx4_find_pkey(a->ctx, f.pf_pci, pkey, &phys);
		if (r == -ENOENT)
			return "pending";
		if (r >= 0)
			r = vfp_ib_mlx4_read_pkey_idx(a->ctx, f.pf_pci, pci, 0, &now);
		return r < 0 ? "unknown" : now == phys ? "applied" : "pending";
	}
	r = f.rdma[0] ? vfp_ib_port_has_pkey(a->ctx, f.rdma, pkey) : -ENOENT;
	return r < 0 ? "unknown" : r ? "applied" : "pending";
}
