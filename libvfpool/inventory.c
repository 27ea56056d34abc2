/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The inventory: every SR-IOV PF under bus/pci/devices and the VFs its
 * virtfnN links lead to, read in one pass. A scan never stops on bad sysfs:
 * each unreadable or garbled file is one warning and an absent fact.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"
#include "sysfs.h"

void vfp_inventory_warn(struct vfp_inventory *inv, const char *pci, const char *attr,
			const char *format, ...)
{
	char msg[512];
	va_list ap;

	inv->warnings++;
	if (!inv->ctx->log_fn || vfp_ctx_get_log_priority(inv->ctx) < LOG_WARNING)
		return;
	va_start(ap, format);
	vsnprintf(msg, sizeof(msg), format, ap);
	va_end(ap);
	vfp_log(inv->ctx, LOG_WARNING, __FILE__, __LINE__, __func__,
		"%s/bus/pci/devices/%s/%s: %s", inv->ctx->sysfs_root, pci, attr, msg);
}

static int inventory_new(struct vfp_ctx *ctx, struct vfp_inventory **ret)
{
	struct vfp_inventory *inv = calloc(1, sizeof(*inv));

	if (!inv)
		return -ENOMEM;
	inv->refcount = 1;
	pthread_mutex_init(&inv->groups_lock, NULL);
	inv->ctx = vfp_ctx_ref(ctx);
	*ret = inv;
	return 0;
}

/* Adds the device @name when it is an SR-IOV PF; anything else is skipped. */
static int inventory_probe_device(struct vfp_inventory *inv, const char *name)
{
	char rel[PATH_MAX], totalvfs[VFP_ATTR_MAX];
	int r;

	if (!vfp_pci_addr_is_valid(name)) {
		vfp_dbg(inv->ctx, "bus/pci/devices/%s: not a PCI address, skipped", name);
		return 0;
	}
	vfp_sysfs_dev(rel, sizeof(rel), name, "sriov_totalvfs");
	r = vfp_sysfs_read(inv->ctx, rel, totalvfs, sizeof(totalvfs));
	if (r == -ENOENT || r == -ENOTDIR)
		return 0; /* not a PF */
	if (r < 0) {
		vfp_inventory_warn(inv, name, "sriov_totalvfs", "cannot read: %s", strerror(-r));
		totalvfs[0] = '\0';
	}
	return vfp_pf_read(inv, name, r < 0 ? "" : totalvfs);
}

/**
 * vfp_inventory_scan() - read every SR-IOV PF and VF under the sysfs root
 *
 * PFs come in PCI address order, each with its VFs in virtfn order. A
 * missing bus/pci/devices is an error (-ENOENT: the root is not a sysfs);
 * bad files inside it are not: see vfp_inventory_get_warning_count().
 */
VFP_EXPORT int vfp_inventory_scan(struct vfp_ctx *ctx, struct vfp_inventory **ret_inv)
{
	struct vfp_inventory *inv = NULL;
	char **names = NULL;
	size_t n = 0;
	int r;

	r = vfp_sysfs_list_dir(ctx, "bus/pci/devices", &names, &n);
	if (r < 0)
		return r;
	r = inventory_new(ctx, &inv);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = inventory_probe_device(inv, names[i]);
	vfp_strv_free(names, n);
	if (r < 0) {
		vfp_inventory_unref(inv);
		return r;
	}
	*ret_inv = inv;
	return 0;
}

VFP_EXPORT struct vfp_inventory *vfp_inventory_ref(struct vfp_inventory *inv)
{
	if (inv)
		vfp_ref_inc(&inv->refcount);
	return inv;
}

VFP_EXPORT struct vfp_inventory *vfp_inventory_unref(struct vfp_inventory *inv)
{
	if (!inv || vfp_ref_dec(&inv->refcount) > 0)
		return NULL;
	for (size_t i = 0; i < inv->n_pfs; i++)
		vfp_pf_clear(&inv->pfs[i]);
	for (size_t i = 0; i < inv->n_vfs; i++)
		vfp_vf_clear(&inv->vfs[i]);
	free(inv->pfs);
	free(inv->vfs);
	vfp_inventory_forget_iommu_groups(inv);
	vfp_ctx_unref(inv->ctx);
	free(inv);
	return NULL;
}

VFP_EXPORT size_t vfp_inventory_get_pf_count(const struct vfp_inventory *inv)
{
	return inv->n_pfs;
}

VFP_EXPORT size_t vfp_inventory_get_vf_count(const struct vfp_inventory *inv)
{
	return inv->n_vfs;
}

/* Warnings the scan emitted: each names a file that was unreadable or garbled. */
VFP_EXPORT unsigned vfp_inventory_get_warning_count(const struct vfp_inventory *inv)
{
	return inv->warnings;
}

VFP_EXPORT struct vfp_pf *vfp_inventory_get_pf(const struct vfp_inventory *inv, size_t i)
{
	return i < inv->n_pfs ? &inv->pfs[i] : NULL;
}

VFP_EXPORT struct vfp_pf *vfp_inventory_find_pf(const struct vfp_inventory *inv, const char *pci)
{
	for (size_t i = 0; i < inv->n_pfs; i++)
		if (strcmp(inv->pfs[i].pci, pci) == 0)
			return &inv->pfs[i];
	return NULL;
}

VFP_EXPORT struct vfp_vf *vfp_inventory_find_vf(const struct vfp_inventory *inv, const char *pci)
{
	for (size_t i = 0; i < inv->n_vfs; i++)
		if (strcmp(inv->vfs[i].pci, pci) == 0)
			return &inv->vfs[i];
	return NULL;
}
