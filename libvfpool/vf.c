/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A Virtual Function, reached from its PF's virtfnN link. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"
#include "sysfs.h"

void vfp_vf_clear(struct vfp_vf *vf)
{
	free(vf->vendor);
	free(vf->device);
	free(vf->driver);
	free(vf->netdev);
	free(vf->mac);
	free(vf->rdma_device);
}

static int vf_add(struct vfp_inventory *inv, struct vfp_vf **ret_vf)
{
	if (inv->n_vfs == inv->cap_vfs) {
		size_t ncap = inv->cap_vfs ? inv->cap_vfs * 2 : 64;
		struct vfp_vf *n = realloc(inv->vfs, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		inv->vfs = n;
		inv->cap_vfs = ncap;
	}
	*ret_vf = &inv->vfs[inv->n_vfs++];
	memset(*ret_vf, 0, sizeof(**ret_vf));
	(*ret_vf)->inv = inv;
	return 0;
}

/*
 * The VF's physfn must lead back to its PF. 1 when the VF's directory
 * exists (whatever physfn says), 0 when virtfnN dangles.
 */
static int vf_check_physfn(struct vfp_inventory *inv, const char *pf_pci, unsigned index,
			   const char *pci)
{
	char rel[PATH_MAX], name[NAME_MAX + 1];
	int r;

	vfp_sysfs_dev(rel, sizeof(rel), pci, "physfn");
	r = vfp_sysfs_link_basename(inv->ctx, rel, name, sizeof(name));
	if (r >= 0) {
		if (strcmp(name, pf_pci) != 0)
			vfp_inventory_warn(inv, pci, "physfn", "points at %s, not at PF %s", name,
					   pf_pci);
		return 1;
	}
	vfp_sysfs_dev(rel, sizeof(rel), pci, NULL);
	if (r == -ENOENT && vfp_sysfs_exists(inv->ctx, rel) == 0) {
		char link[32];

		snprintf(link, sizeof(link), "virtfn%u", index);
		vfp_inventory_warn(inv, pf_pci, link, "dangling link to %s", pci);
		return 0;
	}
	if (r == -ENOENT)
		vfp_inventory_warn(inv, pci, "physfn", "missing");
	else
		vfp_inventory_warn(inv, pci, "physfn", "not a readable link: %s", strerror(-r));
	return 1;
}

/**
 * vfp_vf_read() - add VF number @index of PF @pf_index, at @pci, to @inv
 *
 * A dangling virtfnN adds nothing. A VF with no driver, no netdev or no RDMA
 * device is normal. Only -ENOMEM is an error.
 */
int vfp_vf_read(struct vfp_inventory *inv, size_t pf_index, unsigned index, const char *pci)
{
	const struct vfp_pf *pf = &inv->pfs[pf_index];
	struct vfp_devfacts f = { 0 };
	struct vfp_opt_int group = { 0 };
	_cleanup_free_ char *group_name = NULL;
	struct vfp_vf *vf;
	int r;

	if (vf_check_physfn(inv, pf->pci, index, pci) == 0)
		return 0;
	r = vfp_device_read_facts(inv, pci, &f);
	if (r >= 0)
		r = vfp_device_read_link_name(inv, pci, "iommu_group", &group_name);
	if (r >= 0 && group_name) {
		if (vfp_parse_int(group_name, 10, 0, INT_MAX, &group.value) == 0)
			group.valid = true;
		else
			vfp_inventory_warn(inv, pci, "iommu_group", "not a group number: \"%s\"",
					   group_name);
	}
	if (r >= 0)
		r = vf_add(inv, &vf);
	if (r < 0) {
		vfp_devfacts_clear(&f);
		return r;
	}
	vf->pf_index = pf_index;
	vf->index = index;
	memcpy(vf->pci, pci, VFP_PCI_ADDR_LEN + 1);
	vf->iommu_group = group;
	vfp_vf_set_facts(vf, &f);
	return 0;
}

/*
 * @vf's facts from its device directory, taken from @f (which is left empty):
 * a link type of its own when its netdev says one, else its PF's.
 */
void vfp_vf_set_facts(struct vfp_vf *vf, struct vfp_devfacts *f)
{
	vf->vendor = TAKE_PTR(f->vendor);
	vf->device = TAKE_PTR(f->device);
	vf->driver = TAKE_PTR(f->driver);
	vf->netdev = TAKE_PTR(f->netdev);
	vf->mac = TAKE_PTR(f->mac);
	vf->rdma_device = TAKE_PTR(f->rdma_device);
	vf->numa_node = f->numa_node;
	vf->link_type = vfp_link_type_from_arphrd(f->netdev_type);
	if (vf->link_type == VFP_LINK_NONE)
		vf->link_type = vf->inv->pfs[vf->pf_index].link_type;
}

VFP_EXPORT const char *vfp_vf_get_pci(const struct vfp_vf *vf)
{
	return vf->pci;
}

VFP_EXPORT struct vfp_pf *vfp_vf_get_pf(const struct vfp_vf *vf)
{
	return &vf->inv->pfs[vf->pf_index];
}

VFP_EXPORT const char *vfp_vf_get_pf_pci(const struct vfp_vf *vf)
{
	return vf->inv->pfs[vf->pf_index].pci;
}

VFP_EXPORT unsigned vfp_vf_get_index(const struct vfp_vf *vf)
{
	return vf->index;
}

VFP_EXPORT const char *vfp_vf_get_vendor(const struct vfp_vf *vf)
{
	return vf->vendor;
}

VFP_EXPORT const char *vfp_vf_get_device(const struct vfp_vf *vf)
{
	return vf->device;
}

VFP_EXPORT const char *vfp_vf_get_driver(const struct vfp_vf *vf)
{
	return vf->driver;
}

VFP_EXPORT const char *vfp_vf_get_netdev(const struct vfp_vf *vf)
{
	return vf->netdev;
}

VFP_EXPORT const char *vfp_vf_get_mac(const struct vfp_vf *vf)
{
	return vf->mac;
}

VFP_EXPORT const char *vfp_vf_get_rdma_device(const struct vfp_vf *vf)
{
	return vf->rdma_device;
}

VFP_EXPORT enum vfp_link_type vfp_vf_get_link_type(const struct vfp_vf *vf)
{
	return vf->link_type;
}

VFP_EXPORT int vfp_vf_get_numa_node(const struct vfp_vf *vf, int *ret_node)
{
	return vfp_opt_int_get(vf->numa_node, ret_node);
}

VFP_EXPORT int vfp_vf_get_iommu_group(const struct vfp_vf *vf, int *ret_group)
{
	return vfp_opt_int_get(vf->iommu_group, ret_group);
}
