/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A Physical Function: a PCI device with an SR-IOV capability (sriov_totalvfs). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"
#include "sysfs.h"

/* Drivers that size their VFs by module parameter: sriov_numvfs refuses writes. */
static const char *const numvfs_by_module_param[] = { "mlx4_core" };

static bool driver_takes_numvfs_writes(const char *driver)
{
	if (!driver)
		return false; /* the kernel needs a bound driver to create VFs */
	for (size_t i = 0; i < ELEMENTSOF(numvfs_by_module_param); i++)
		if (strcmp(driver, numvfs_by_module_param[i]) == 0)
			return false;
	return true;
}

void vfp_pf_clear(struct vfp_pf *pf)
{
	free(pf->vendor);
	free(pf->device);
	free(pf->driver);
	free(pf->netdev);
	free(pf->rdma_device);
}

/* Link type: the netdev's, else port 1 of the RDMA device, else the PCI class. */
static int pf_read_link_type(struct vfp_inventory *inv, struct vfp_pf *pf, int netdev_type)
{
	struct vfp_opt_int cls = { 0 };
	int r;

	pf->link_type = vfp_link_type_from_arphrd(netdev_type);
	if (pf->link_type != VFP_LINK_NONE)
		return 0;
	if (pf->rdma_device) {
		r = vfp_device_read_rdma_link_layer(inv, pf->pci, pf->rdma_device, &pf->link_type);
		if (r < 0 || pf->link_type != VFP_LINK_NONE)
			return r;
	}
	r = vfp_device_read_opt_int(inv, pf->pci, "class", 16, 0, 0xffffff, &cls);
	if (r < 0 || !cls.valid)
		return r;
	if (cls.value >> 8 == 0x0207)
		pf->link_type = VFP_LINK_INFINIBAND;
	else if (cls.value >> 8 == 0x0200)
		pf->link_type = VFP_LINK_ETHERNET;
	return 0;
}

/*
 * The target of virtfnN must be a sibling PCI device ("../0000:3b:00.1"),
 * as the kernel makes it; anything else points outside the PCI tree.
 */
static int pf_read_virtfn(struct vfp_inventory *inv, const char *pf_pci, unsigned n,
			  char ret_addr[static VFP_PCI_ADDR_LEN + 1])
{
	char rel[PATH_MAX], target[PATH_MAX], link[32];
	int r;

	snprintf(link, sizeof(link), "virtfn%u", n);
	vfp_sysfs_dev(rel, sizeof(rel), pf_pci, "%s", link);
	r = vfp_sysfs_readlink(inv->ctx, rel, target, sizeof(target));
	if (r == -ENOENT)
		return -ENOENT;
	if (r < 0) {
		vfp_inventory_warn(inv, pf_pci, link, "not a readable link: %s", strerror(-r));
		return 0;
	}
	if (strncmp(target, "../", 3) != 0 || !vfp_pci_addr_is_valid(target + 3)) {
		vfp_inventory_warn(inv, pf_pci, link, "points outside the PCI tree: \"%s\"",
				   target);
		return 0;
	}
	memcpy(ret_addr, target + 3, VFP_PCI_ADDR_LEN + 1);
	return 1;
}

/* Probes virtfn0, virtfn1, ... until one is missing, as libvirt does. */
static int pf_read_vfs(struct vfp_inventory *inv, size_t pf_index)
{
	char pf_pci[VFP_PCI_ADDR_LEN + 1], addr[VFP_PCI_ADDR_LEN + 1];
	int r;

	memcpy(pf_pci, inv->pfs[pf_index].pci, sizeof(pf_pci));
	inv->pfs[pf_index].first_vf = inv->n_vfs;
	for (unsigned n = 0; n <= UINT16_MAX; n++) {
		r = pf_read_virtfn(inv, pf_pci, n, addr);
		if (r == -ENOENT)
			break;
		if (r == 0)
			continue;
		r = vfp_vf_read(inv, pf_index, n, addr);
		if (r < 0)
			return r;
	}
	inv->pfs[pf_index].n_vfs = inv->n_vfs - inv->pfs[pf_index].first_vf;
	return 0;
}

static int pf_add(struct vfp_inventory *inv, const char *pci, struct vfp_pf **ret_pf)
{
	if (inv->n_pfs == inv->cap_pfs) {
		size_t ncap = inv->cap_pfs ? inv->cap_pfs * 2 : 8;
		struct vfp_pf *n = realloc(inv->pfs, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		inv->pfs = n;
		inv->cap_pfs = ncap;
	}
	*ret_pf = &inv->pfs[inv->n_pfs++];
	memset(*ret_pf, 0, sizeof(**ret_pf));
	(*ret_pf)->inv = inv;
	memcpy((*ret_pf)->pci, pci, VFP_PCI_ADDR_LEN + 1);
	return 0;
}

/**
 * vfp_pf_read() - add the PF at @pci and its VFs to @inv
 * @totalvfs: the content of its sriov_totalvfs, already read by the caller
 *
 * Only -ENOMEM is an error; bad files are warnings and absent facts.
 */
int vfp_pf_read(struct vfp_inventory *inv, const char *pci, const char *totalvfs)
{
	struct vfp_devfacts f = { 0 };
	struct vfp_pf *pf;
	int r;

	r = pf_add(inv, pci, &pf);
	if (r < 0)
		return r;
	if (vfp_parse_int(totalvfs, 10, 0, UINT16_MAX, &pf->totalvfs.value) == 0)
		pf->totalvfs.valid = true;
	else
		vfp_inventory_warn(inv, pci, "sriov_totalvfs", "not a number in [0, 65535]: \"%s\"",
				   totalvfs);
	r = vfp_device_read_facts(inv, pci, &f);
	pf->vendor = f.vendor;
	pf->device = f.device;
	pf->driver = f.driver;
	pf->netdev = f.netdev;
	pf->rdma_device = f.rdma_device;
	pf->numa_node = f.numa_node;
	free(f.mac);
	if (r < 0)
		return r;
	r = vfp_device_read_opt_int(inv, pci, "sriov_numvfs", 10, 0, UINT16_MAX, &pf->numvfs);
	if (r < 0)
		return r;
	pf->numvfs_writable = driver_takes_numvfs_writes(pf->driver);
	/* its VFs sit beside it, under the same bridge: one root for all */
	if (vfp_pcie_root_read(inv->ctx, pci, pf->pcie_root, sizeof(pf->pcie_root)) < 0)
		pf->pcie_root[0] = '\0';
	r = pf_read_link_type(inv, pf, f.netdev_type);
	if (r < 0)
		return r;
	return pf_read_vfs(inv, inv->n_pfs - 1);
}

VFP_EXPORT const char *vfp_pf_get_pci(const struct vfp_pf *pf)
{
	return pf->pci;
}

VFP_EXPORT const char *vfp_pf_get_vendor(const struct vfp_pf *pf)
{
	return pf->vendor;
}

VFP_EXPORT const char *vfp_pf_get_device(const struct vfp_pf *pf)
{
	return pf->device;
}

VFP_EXPORT const char *vfp_pf_get_driver(const struct vfp_pf *pf)
{
	return pf->driver;
}

VFP_EXPORT const char *vfp_pf_get_netdev(const struct vfp_pf *pf)
{
	return pf->netdev;
}

VFP_EXPORT const char *vfp_pf_get_rdma_device(const struct vfp_pf *pf)
{
	return pf->rdma_device;
}

VFP_EXPORT enum vfp_link_type vfp_pf_get_link_type(const struct vfp_pf *pf)
{
	return pf->link_type;
}

/* The root complex the PF hangs off, as DRA's pcieRoot ("pci0000:3a"); NULL: unknown. */
VFP_EXPORT const char *vfp_pf_get_pcie_root(const struct vfp_pf *pf)
{
	return pf->pcie_root[0] ? pf->pcie_root : NULL;
}

/* -ENODATA when sysfs did not say; -1 is a valid answer ("no NUMA affinity"). */
VFP_EXPORT int vfp_pf_get_numa_node(const struct vfp_pf *pf, int *ret_node)
{
	return vfp_opt_int_get(pf->numa_node, ret_node);
}

VFP_EXPORT int vfp_pf_get_totalvfs(const struct vfp_pf *pf, int *ret_total)
{
	return vfp_opt_int_get(pf->totalvfs, ret_total);
}

VFP_EXPORT int vfp_pf_get_numvfs(const struct vfp_pf *pf, int *ret_num)
{
	return vfp_opt_int_get(pf->numvfs, ret_num);
}

VFP_EXPORT bool vfp_pf_get_numvfs_writable(const struct vfp_pf *pf)
{
	return pf->numvfs_writable;
}

VFP_EXPORT size_t vfp_pf_get_vf_count(const struct vfp_pf *pf)
{
	return pf->n_vfs;
}

VFP_EXPORT struct vfp_vf *vfp_pf_get_vf(const struct vfp_pf *pf, size_t i)
{
	return i < pf->n_vfs ? &pf->inv->vfs[pf->first_vf + i] : NULL;
}
