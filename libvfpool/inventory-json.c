/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON views of PFs and VFs, field names as in DESIGN.md §3; absent facts are null. */
#include "config.h"

#include "private.h"

VFP_EXPORT const char *vfp_link_type_to_string(enum vfp_link_type t)
{
	switch (t) {
	case VFP_LINK_ETHERNET:
		return "ethernet";
	case VFP_LINK_INFINIBAND:
		return "infiniband";
	default:
		return "none";
	}
}

/*
 * Every string of the inventory was checked when it was read (PCI addresses
 * parsed, names printable ASCII, ids and addresses hex), so jansson need not
 * check them again: a listing of 4,096 VFs is some 50,000 strings.
 */
static json_t *str_or_null(const char *s)
{
	return s ? json_string_nocheck(s) : json_null();
}

static json_t *opt_int(struct vfp_opt_int v)
{
	return v.valid ? json_integer(v.value) : json_null();
}

/*
 * @key (a literal) = @v in @o; 0 (and @v released) when either is missing.
 * An int, so that callers can chain calls with '&': every call runs, and so
 * every value made for it is either set or released.
 */
static int set(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new_nocheck(o, key, v) == 0;
}

/* The facts PFs and VFs share, after "pci" (and a VF's "pf" and "index"). */
static int set_facts(json_t *o, const char *vendor, const char *device, const char *driver,
		     const char *netdev)
{
	return set(o, "vendor", str_or_null(vendor)) & set(o, "device", str_or_null(device)) &
	       set(o, "driver", str_or_null(driver)) & set(o, "netdev", str_or_null(netdev));
}

/*
 * DRA's standard attributes, named as Kubernetes names them
 * (resource.kubernetes.io/pcieRoot and numaNode), so a DRA driver publishes
 * them unchanged: a device without a NUMA node has no numaNode at all.
 */
static int set_dra(json_t *o, const char *pcie_root, struct vfp_opt_int numa)
{
	int ok = set(o, "pcieRoot", str_or_null(pcie_root));

	if (numa.valid && numa.value >= 0)
		ok &= set(o, "numaNode", json_integer(numa.value));
	return ok;
}

VFP_EXPORT json_t *vfp_vf_to_json(const struct vfp_vf *vf)
{
	json_t *o = json_object();
	int ok;

	if (!o)
		return NULL;
	ok = set(o, "pci", json_string_nocheck(vf->pci)) &
	     set(o, "pf", json_string_nocheck(vfp_vf_get_pf_pci(vf))) &
	     set(o, "index", json_integer(vf->index)) &
	     set_facts(o, vf->vendor, vf->device, vf->driver, vf->netdev) &
	     set(o, "mac", str_or_null(vf->mac)) &
	     set(o, "link_type", json_string_nocheck(vfp_link_type_to_string(vf->link_type))) &
	     set(o, "rdma_device", str_or_null(vf->rdma_device)) &
	     set(o, "numa_node", opt_int(vf->numa_node)) &
	     set(o, "iommu_group", opt_int(vf->iommu_group)) &
	     set_dra(o, vfp_pf_get_pcie_root(vfp_vf_get_pf(vf)), vf->numa_node);
	if (!ok)
		json_decref(o);
	return ok ? o : NULL;
}

static json_t *pf_facts_to_json(const struct vfp_pf *pf)
{
	json_t *o = json_object();
	int ok;

	if (!o)
		return NULL;
	ok = set(o, "pci", json_string_nocheck(pf->pci)) &
	     set_facts(o, pf->vendor, pf->device, pf->driver, pf->netdev) &
	     set(o, "link_type", json_string_nocheck(vfp_link_type_to_string(pf->link_type))) &
	     set(o, "rdma_device", str_or_null(pf->rdma_device)) &
	     set(o, "numa_node", opt_int(pf->numa_node)) &
	     set(o, "totalvfs", opt_int(pf->totalvfs)) & set(o, "numvfs", opt_int(pf->numvfs)) &
	     set(o, "numvfs_writable", json_boolean(pf->numvfs_writable)) &
	     set_dra(o, vfp_pf_get_pcie_root(pf), pf->numa_node);
	if (!ok)
		json_decref(o);
	return ok ? o : NULL;
}

VFP_EXPORT json_t *vfp_pf_to_json(const struct vfp_pf *pf, bool with_vfs)
{
	json_t *o = pf_facts_to_json(pf), *vfs;

	if (!o || !with_vfs)
		return o;
	vfs = json_array();
	if (!vfs || json_object_set_new_nocheck(o, "vfs", vfs) < 0) {
		json_decref(o);
		return NULL;
	}
	for (size_t i = 0; i < pf->n_vfs; i++) {
		if (json_array_append_new(vfs, vfp_vf_to_json(vfp_pf_get_vf(pf, i))) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* {"pfs":[{…PF…,"vfs":[{…VF…}]}]} */
VFP_EXPORT json_t *vfp_inventory_to_json(const struct vfp_inventory *inv)
{
	json_t *pfs = json_array();

	if (!pfs)
		return NULL;
	for (size_t i = 0; i < inv->n_pfs; i++) {
		if (json_array_append_new(pfs, vfp_pf_to_json(&inv->pfs[i], true)) < 0) {
			json_decref(pfs);
			return NULL;
		}
	}
	return json_pack("{s:o}", "pfs", pfs);
}
