/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An InfiniBand VF's node and port GUID through the PF driver's sysfs
 * files, for kernels or drivers that refuse IFLA_VF_IB_*_GUID over netlink:
 * mlx5 keeps them per VF at <pf>/sriov/N/{node,port,policy}; mlx4 keeps one
 * alias GUID per slave at <pf>/infiniband/mlx4_N/iov/ports/1/admin_guids/S,
 * where slave 0 is the PF itself and VF N is slave N+1.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libvfpool.h"
#include "private.h"
#include "sysfs.h"

static int write_mlx5(struct vfp_ctx *ctx, const char *pf, unsigned index, const char *node,
		      const char *port)
{
	char rel[96];
	int r;

	vfp_sysfs_dev(rel, sizeof(rel), pf, "sriov/%u/node", index);
	r = vfp_sysfs_write(ctx, rel, node);
	vfp_sysfs_dev(rel, sizeof(rel), pf, "sriov/%u/port", index);
	if (r >= 0)
		r = vfp_sysfs_write(ctx, rel, port);
	/* "Follow": the VF's port state follows the PF's, as a physical port would */
	vfp_sysfs_dev(rel, sizeof(rel), pf, "sriov/%u/policy", index);
	if (r >= 0)
		r = vfp_sysfs_write(ctx, rel, "Follow");
	return r;
}

static int write_mlx4(struct vfp_ctx *ctx, const char *pf, unsigned index, const char *port)
{
	unsigned long long g;
	char rel[160], value[24], **ib = NULL;
	size_t n = 0;
	int r;

	/* mlx4 has one GUID per slave (the port GUID); it reads it as hex with a 0x prefix */
	if (vfp_guid_parse(port, &g) < 0)
		return -EINVAL;
	snprintf(value, sizeof(value), "0x%016llx", g);
	/* the files belong to the PF's IB device: <pf>/infiniband/mlx4_N/iov/… */
	vfp_sysfs_dev(rel, sizeof(rel), pf, "infiniband");
	r = vfp_sysfs_list_dir(ctx, rel, &ib, &n);
	if (r >= 0 && n != 1)
		r = -EOPNOTSUPP;
	if (r >= 0) {
		vfp_sysfs_dev(rel, sizeof(rel), pf, "infiniband/%.64s/iov/ports/1/admin_guids/%u", ib[0],
			      index + 1);
		r = vfp_sysfs_write(ctx, rel, value);
	}
	vfp_strv_free(ib, n);
	return r;
}

/**
 * vfp_vf_write_ib_guids() - VF @index of @pf_pci gets @node and @port GUIDs
 * @driver: the PF's driver, which says where the files are
 *
 * GUIDs are "xx:xx:xx:xx:xx:xx:xx:xx". -EOPNOTSUPP for a driver with no such
 * files (or an mlx4 PF without its IB device); the kernel's -errno for a
 * refused write. The VF takes the GUIDs
 * when it is next bound (vfp_device_rebind()).
 */
VFP_EXPORT int vfp_vf_write_ib_guids(struct vfp_ctx *ctx, const char *pf_pci, const char *driver,
			  unsigned index, const char *node, const char *port)
{
	unsigned long long g;

	if (!vfp_pci_addr_is_valid(pf_pci) || vfp_guid_parse(node, &g) < 0 ||
	    vfp_guid_parse(port, &g) < 0)
		return -EINVAL;
	if (driver && strcmp(driver, "mlx5_core") == 0)
		return write_mlx5(ctx, pf_pci, index, node, port);
	if (driver && strcmp(driver, "mlx4_core") == 0)
		return write_mlx4(ctx, pf_pci, index, port);
	return -EOPNOTSUPP;
}
