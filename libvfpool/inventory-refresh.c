/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One VF read again. A caller that rebinds a VF (to vfio-pci and back) knows
 * which facts it changed: the VF's driver, netdev, MAC and RDMA device. An
 * inventory is shared and never changes once made, so the refresh is a copy
 * of it with that VF's facts read anew from its device directory, every
 * other PF and VF as they were: no scan of the host.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "private.h"
#include "sysfs.h"

/*
 * Each string @fields point at (a PF's or a VF's, just copied from the shared
 * inventory's) replaced by a copy of its own. On -ENOMEM the ones not copied
 * are NULL, so that unref frees only what is the copy's.
 */
static int own_strings(char **const fields[], size_t n)
{
	int r = 0;

	for (size_t i = 0; i < n; i++) {
		const char *s = *fields[i];

		*fields[i] = s && r >= 0 ? strdup(s) : NULL;
		if (s && !*fields[i])
			r = -ENOMEM;
	}
	return r;
}

/* @from as @inv's next PF; on -ENOMEM the copy holds what it could, for unref. */
static int copy_pf(struct vfp_inventory *inv, const struct vfp_pf *from)
{
	struct vfp_pf *to = &inv->pfs[inv->n_pfs++];
	char **const own[] = { &to->vendor, &to->device, &to->driver, &to->netdev,
			       &to->rdma_device };

	*to = *from;
	to->inv = inv;
	return own_strings(own, ELEMENTSOF(own));
}

static int copy_vf(struct vfp_inventory *inv, const struct vfp_vf *from)
{
	struct vfp_vf *to = &inv->vfs[inv->n_vfs++];
	char **const own[] = { &to->vendor, &to->device, &to->driver, &to->netdev, &to->mac,
			       &to->rdma_device };

	*to = *from;
	to->inv = inv;
	return own_strings(own, ELEMENTSOF(own));
}

/* Every PF and VF of @inv, in its order; the IOMMU groups are listed again on first use. */
static int inventory_copy(const struct vfp_inventory *inv, struct vfp_inventory **ret)
{
	struct vfp_inventory *c = calloc(1, sizeof(*c));
	int r = 0;

	if (!c)
		return -ENOMEM;
	c->refcount = 1;
	pthread_mutex_init(&c->groups_lock, NULL);
	c->ctx = vfp_ctx_ref(inv->ctx);
	c->warnings = inv->warnings;
	c->pfs = calloc(inv->n_pfs ? inv->n_pfs : 1, sizeof(*c->pfs));
	c->vfs = calloc(inv->n_vfs ? inv->n_vfs : 1, sizeof(*c->vfs));
	if (!c->pfs || !c->vfs)
		r = -ENOMEM;
	c->cap_pfs = r < 0 ? 0 : inv->n_pfs;
	c->cap_vfs = r < 0 ? 0 : inv->n_vfs;
	for (size_t i = 0; r >= 0 && i < inv->n_pfs; i++)
		r = copy_pf(c, &inv->pfs[i]);
	for (size_t i = 0; r >= 0 && i < inv->n_vfs; i++)
		r = copy_vf(c, &inv->vfs[i]);
	if (r < 0) {
		vfp_inventory_unref(c);
		return r;
	}
	*ret = c;
	return 0;
}

/**
 * vfp_inventory_refresh_vf() - @inv with VF @pci's facts read again
 * @ret_inv: the new inventory (vfp_inventory_unref() it); @inv is unchanged
 *
 * For a caller that rebound the VF: its driver, netdev, MAC, RDMA device,
 * NUMA node and link type are read from its device directory as a scan
 * reads them; the rest is @inv's. -ENOENT when @inv has no VF @pci, -ENODEV
 * when its device directory is gone (a scan then says what the host has).
 */
VFP_EXPORT int vfp_inventory_refresh_vf(const struct vfp_inventory *inv, const char *pci,
					struct vfp_inventory **ret_inv)
{
	const struct vfp_vf *was = vfp_inventory_find_vf(inv, pci);
	struct vfp_devfacts f = { 0 };
	struct vfp_inventory *c = NULL;
	char rel[PATH_MAX];
	struct vfp_vf *vf;
	int r;

	if (!was)
		return -ENOENT;
	vfp_sysfs_dev(rel, sizeof(rel), pci, NULL);
	r = vfp_sysfs_exists(inv->ctx, rel);
	if (r <= 0)
		return r < 0 ? r : -ENODEV;
	r = inventory_copy(inv, &c);
	if (r < 0)
		return r;
	vf = &c->vfs[was - inv->vfs];
	r = vfp_device_read_facts(c, pci, &f);
	if (r < 0) {
		vfp_devfacts_clear(&f);
		vfp_inventory_unref(c);
		return r;
	}
	vfp_vf_clear(vf);
	vfp_vf_set_facts(vf, &f);
	*ret_inv = c;
	return 0;
}
