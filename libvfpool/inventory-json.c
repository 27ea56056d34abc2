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

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *opt_int(struct vfp_opt_int v)
{
	return v.valid ? json_integer(v.value) : json_null();
}

VFP_EXPORT json_t *vfp_vf_to_json(const struct vfp_vf *vf)
{
	return json_pack("{s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o}",
			 "pci", vf->pci, "pf", vfp_vf_get_pf_pci(vf), "index",
			 (json_int_t)vf->index, "vendor", str_or_null(vf->vendor), "device",
			 str_or_null(vf->device), "driver", str_or_null(vf->driver), "netdev",
			 str_or_null(vf->netdev), "mac", str_or_null(vf->mac), "link_type",
			 vfp_link_type_to_string(vf->link_type), "rdma_device",
			 str_or_null(vf->rdma_device), "numa_node", opt_int(vf->numa_node),
			 "iommu_group", opt_int(vf->iommu_group));
}

VFP_EXPORT json_t *vfp_pf_to_json(const struct vfp_pf *pf, bool with_vfs)
{
	json_t *o, *vfs;

	o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:b}", "pci", pf->pci,
		      "vendor", str_or_null(pf->vendor), "device", str_or_null(pf->device),
		      "driver", str_or_null(pf->driver), "netdev", str_or_null(pf->netdev),
		      "link_type", vfp_link_type_to_string(pf->link_type), "rdma_device",
		      str_or_null(pf->rdma_device), "numa_node", opt_int(pf->numa_node),
		      "totalvfs", opt_int(pf->totalvfs), "numvfs", opt_int(pf->numvfs),
		      "numvfs_writable", pf->numvfs_writable);
	if (!o || !with_vfs)
		return o;
	vfs = json_array();
	if (!vfs || json_object_set_new(o, "vfs", vfs) < 0) {
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
