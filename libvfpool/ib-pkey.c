/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF's InfiniBand partition on the host's side. mlx4 (ConnectX-3)
 * paravirtualizes P_Key tables: each VF's virtual index maps onto an index
 * of the physical port's table, which the subnet manager programs (the
 * kernel's drivers/infiniband/hw/mlx4/sysfs.c):
 *   <pf>/infiniband/mlx4_N/iov/ports/<port>/pkeys/<j>          "0x8001"
 *   <pf>/infiniband/mlx4_N/iov/<vf-pci>/ports/<port>/pkey_idx/<i>  "j" or "none"
 * A VF starts with its index 0 on physical index 0 (the default
 * partition) and the others on none. mlx5 VFs get their tables from the
 * subnet manager itself, by their GUIDs; a VF's RDMA device in the host
 * shows its table at ports/1/pkeys/<i>.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvfpool.h"
#include "private.h"
#include "sysfs.h"

/* <pf>/infiniband/mlx4_N: the one IB device of an mlx4 PF, else -EOPNOTSUPP. */
static int mlx4_ib_name(struct vfp_ctx *ctx, const char *pf, char name[static 64])
{
	char rel[96], **ib = NULL;
	size_t n = 0;
	int r;

	vfp_sysfs_dev(rel, sizeof(rel), pf, "infiniband");
	r = vfp_sysfs_list_dir(ctx, rel, &ib, &n);
	if (r >= 0 && (n != 1 || strncmp(ib[0], "mlx4_", 5) != 0 || strlen(ib[0]) >= 64))
		r = -EOPNOTSUPP;
	if (r >= 0)
		snprintf(name, 64, "%s", ib[0]);
	vfp_strv_free(ib, n);
	return r == -ENOENT ? -EOPNOTSUPP : r;
}

/* "0x8001" as the kernel prints a P_Key; -EINVAL for anything else. */
static int parse_pkey(const char *s, int *ret)
{
	return vfp_parse_int(s, 16, 0, 0xffff, ret);
}

/**
 * vfp_ib_mlx4_find_pkey() - the index of @pkey (exactly: a limited member's
 * key is not a full member's) in port 1's physical table of mlx4 PF @pf
 *
 * -ENOENT when the subnet manager has not put it there (yet), -EOPNOTSUPP
 * when @pf is not an mlx4 PF with SR-IOV P_Key files.
 */
VFP_EXPORT int vfp_ib_mlx4_find_pkey(struct vfp_ctx *ctx, const char *pf, int pkey, int *ret_index)
{
	char ib[64], rel[192], value[16];
	int r = mlx4_ib_name(ctx, pf, ib);

	for (int j = 0; r >= 0 && j < 128; j++) {
		int v;

		vfp_sysfs_dev(rel, sizeof(rel), pf, "infiniband/%s/iov/ports/1/pkeys/%d", ib, j);
		r = vfp_sysfs_read(ctx, rel, value, sizeof(value));
		if (r == -ENOENT)
			return j == 0 ? -EOPNOTSUPP : -ENOENT;
		if (r >= 0 && parse_pkey(value, &v) >= 0 && v == pkey) {
			*ret_index = j;
			return 0;
		}
	}
	return r < 0 ? r : -ENOENT;
}

static void pkey_idx_rel(char *rel, size_t size, const char *pf, const char *ib, const char *vf,
			 unsigned virt)
{
	vfp_sysfs_dev(rel, size, pf, "infiniband/%s/iov/%s/ports/1/pkey_idx/%u", ib, vf, virt);
}

/* The physical index VF @vf's virtual index @virt maps to; VFP_PKEY_NONE for none. */
VFP_EXPORT int vfp_ib_mlx4_read_pkey_idx(struct vfp_ctx *ctx, const char *pf, const char *vf,
					 unsigned virt, int *ret)
{
	char ib[64], rel[224], value[16];
	int r = mlx4_ib_name(ctx, pf, ib);

	if (r >= 0 && !vfp_pci_addr_is_valid(vf))
		r = -EINVAL;
	if (r >= 0) {
		pkey_idx_rel(rel, sizeof(rel), pf, ib, vf, virt);
		r = vfp_sysfs_read(ctx, rel, value, sizeof(value));
	}
	if (r >= 0 && strcmp(value, "none") == 0)
		*ret = VFP_PKEY_NONE;
	else if (r >= 0)
		r = vfp_parse_int(value, 10, 0, 1023, ret);
	return r;
}

/* VF @vf's virtual index @virt onto physical index @phys (VFP_PKEY_NONE: none). */
VFP_EXPORT int vfp_ib_mlx4_write_pkey_idx(struct vfp_ctx *ctx, const char *pf, const char *vf,
					  unsigned virt, int phys)
{
	char ib[64], rel[224], value[16];
	int r = mlx4_ib_name(ctx, pf, ib);

	if (r >= 0 && (!vfp_pci_addr_is_valid(vf) || (phys < 0 && phys != VFP_PKEY_NONE)))
		r = -EINVAL;
	if (r < 0)
		return r;
	pkey_idx_rel(rel, sizeof(rel), pf, ib, vf, virt);
	if (phys == VFP_PKEY_NONE)
		snprintf(value, sizeof(value), "none");
	else
		snprintf(value, sizeof(value), "%d", phys);
	return vfp_sysfs_write(ctx, rel, value);
}

/**
 * vfp_ib_port_has_pkey() - whether port 1 of RDMA device @rdma (a VF's, in
 * the host) has @pkey in its table: 1 or 0; -ENOENT when it shows no table
 */
VFP_EXPORT int vfp_ib_port_has_pkey(struct vfp_ctx *ctx, const char *rdma, int pkey)
{
	char rel[160], value[16];
	int r = 0;

	if (!rdma || !*rdma || strchr(rdma, '/') || strlen(rdma) > 64)
		return -EINVAL;
	for (int j = 0; j < 128; j++) {
		char attr[32];
		int v;

		snprintf(attr, sizeof(attr), "ports/1/pkeys/%d", j);
		r = vfp_sysfs_class(rel, sizeof(rel), "infiniband", rdma, attr);
		if (r >= 0)
			r = vfp_sysfs_read(ctx, rel, value, sizeof(value));
		if (r == -ENOENT)
			return j == 0 ? -ENOENT : 0;
		if (r >= 0 && parse_pkey(value, &v) >= 0 && v == pkey)
			return 1;
	}
	return r < 0 ? r : 0;
}
