/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PCIe tree as GET /v1/pcie and `vfctl topo` show it: each PF with the
 * bridges from its root complex down and its VFs, then the devices worth
 * being near (GPUs, accelerators, NVMe) with their distance to every PF.
 * Root and NUMA node carry DRA's attribute names (pcieRoot, numaNode); a
 * device without a NUMA node has none, as DRA wants. A PF whose data goes
 * through a Data Direct function names it, with its place: distances are
 * measured from there.
 */
#include "config.h"

#include <stdio.h>

#include "pcie-topo.h"

const char *pcie_role_to_string(enum pcie_role r)
{
	static const char *const names[] = {
		[PCIE_ENDPOINT] = "endpoint",
		[PCIE_ROOT_PORT] = "root_port",
		[PCIE_SWITCH_UPSTREAM] = "switch_upstream",
		[PCIE_SWITCH_DOWNSTREAM] = "switch_downstream",
		[PCIE_BRIDGE] = "bridge",
	};

	return names[r];
}

const char *pcie_kind_to_string(enum pcie_kind k)
{
	static const char *const names[] = {
		[PCIE_KIND_OTHER] = "other",
		[PCIE_KIND_GPU] = "gpu",
		[PCIE_KIND_ACCELERATOR] = "accelerator",
		[PCIE_KIND_NVME] = "nvme",
	};

	return names[k];
}

/* pcieRoot and, when the device has one, numaNode: 1 when set. */
static int set_place(json_t *o, const struct pcie_dev *d)
{
	int ok = json_object_set_new(o, "pcieRoot", json_string(d->root)) == 0;

	if (d->numa_node >= 0)
		ok &= json_object_set_new(o, "numaNode", json_integer(d->numa_node)) == 0;
	return ok;
}

static json_t *bridge_to_json(const struct pcie_dev *b)
{
	char ctrl[16];
	json_t *acs = NULL;

	if (b->acs_ctrl >= 0) {
		snprintf(ctrl, sizeof(ctrl), "0x%04x", (unsigned)b->acs_ctrl);
		acs = json_pack("{s:s, s:b}", "ctrl", ctrl, "p2p_redirect",
				(b->acs_ctrl & PCIE_ACS_CTRL_RR) != 0);
	}
	return json_pack("{s:s, s:s, s:o}", "pci", b->pci, "role", pcie_role_to_string(b->role),
			 "acs", acs ? acs : json_null());
}

/* The bridges above @d, from its root port down. */
static json_t *path_to_json(const struct vfp_pcie_topo *t, const struct pcie_dev *d)
{
	json_t *a = json_array();
	int ok = a != NULL;

	for (int i = d->parent; ok && i >= 0; i = t->devs[i].parent)
		ok = json_array_insert_new(a, 0, bridge_to_json(&t->devs[i])) == 0;
	if (!ok)
		json_decref(a);
	return ok ? a : NULL;
}

static json_t *vf_to_json(const struct vfp_pcie_topo *t, const struct vfp_vf *vf)
{
	const struct pcie_dev *d = pcie_topo_find(t, vfp_vf_get_pci(vf));
	json_t *o;

	if (!d)
		return json_pack("{s:s, s:n}", "pci", vfp_vf_get_pci(vf), "pcieRoot");
	o = json_pack("{s:s, s:s?}", "pci", d->pci, "parent",
		      d->parent >= 0 ? t->devs[d->parent].pci : NULL);
	if (o && !set_place(o, d)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/* The Data Direct function @d's data goes through, with its place; null when none. */
static json_t *data_direct_to_json(const struct vfp_pcie_topo *t, const struct pcie_dev *d)
{
	const struct pcie_dev *dd = d ? pcie_topo_data_path(t, d) : NULL;
	json_t *o;

	if (!dd || dd == d)
		return json_null();
	o = json_pack("{s:s, s:s, s:o}", "pci", dd->pci, "vpd_v3", dd->vpd_v3, "path",
		      path_to_json(t, dd));
	if (o && !set_place(o, dd)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static json_t *pf_to_json(const struct vfp_pcie_topo *t, const struct vfp_pf *pf)
{
	const struct pcie_dev *d = pcie_topo_find(t, vfp_pf_get_pci(pf));
	json_t *o = json_pack("{s:s}", "pci", vfp_pf_get_pci(pf)), *vfs = json_array();
	int ok = o && vfs;

	if (ok && d)
		ok = set_place(o, d) && json_object_set_new(o, "path", path_to_json(t, d)) == 0;
	else if (ok)
		ok = json_object_set_new(o, "pcieRoot", json_null()) == 0 &&
		     json_object_set_new(o, "path", json_null()) == 0;
	for (size_t i = 0; ok && i < vfp_pf_get_vf_count(pf); i++)
		ok = json_array_append_new(vfs, vf_to_json(t, vfp_pf_get_vf(pf, i))) == 0;
	ok = ok && json_object_set_new(o, "data_direct", data_direct_to_json(t, d)) == 0;
	ok = ok && json_object_set_new(o, "vfs", vfs) == 0;
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* @d's distance to each PF of @inv the tree places. */
static json_t *distances_to_json(const struct vfp_pcie_topo *t, const struct pcie_dev *d,
				 const struct vfp_inventory *inv)
{
	json_t *a = json_array();
	int ok = a != NULL;

	for (size_t i = 0; ok && i < vfp_inventory_get_pf_count(inv); i++) {
		const char *pci = vfp_pf_get_pci(vfp_inventory_get_pf(inv, i));
		const struct pcie_dev *pf = pcie_topo_find(t, pci);
		enum vfp_pcie_distance dist;

		if (!pf || vfp_pcie_topo_distance(t, pci, d->pci, &dist) < 0)
			continue;
		ok = json_array_append_new(a, json_pack("{s:s, s:s, s:b}", "pf", pci, "distance",
							vfp_pcie_distance_to_string(dist),
							"acs_redirect",
							pcie_topo_acs_redirects(
								t, pcie_topo_data_path(t, pf), d))) == 0;
	}
	if (!ok)
		json_decref(a);
	return ok ? a : NULL;
}

static json_t *device_to_json(const struct vfp_pcie_topo *t, const struct pcie_dev *d,
			      const struct vfp_inventory *inv)
{
	char class[12];
	json_t *o;

	snprintf(class, sizeof(class), "0x%06x", d->class);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o}", "pci", d->pci, "kind",
		      pcie_kind_to_string(d->kind), "class", class, "vendor", d->vendor, "device",
		      d->device, "path", path_to_json(t, d), "distances",
		      distances_to_json(t, d, inv));
	if (o && !set_place(o, d)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/**
 * vfp_pcie_topo_to_json() - the PFs of @inv in the tree @t, and the
 * devices worth being near with their distance to each PF
 *
 * A PF the tree does not place has "pcieRoot" and "path" null. VFs of
 * GPUs and NVMe drives are not listed among the devices (a claim may still
 * name one as "near").
 */
VFP_EXPORT json_t *vfp_pcie_topo_to_json(const struct vfp_pcie_topo *t,
					 const struct vfp_inventory *inv)
{
	json_t *pfs = json_array(), *devs = json_array();
	int ok = pfs && devs;

	for (size_t i = 0; ok && i < vfp_inventory_get_pf_count(inv); i++)
		ok = json_array_append_new(pfs, pf_to_json(t, vfp_inventory_get_pf(inv, i))) == 0;
	for (size_t i = 0; ok && i < t->n; i++)
		if (t->devs[i].kind != PCIE_KIND_OTHER && !t->devs[i].is_vf)
			ok = json_array_append_new(devs, device_to_json(t, &t->devs[i], inv)) == 0;
	if (!ok) {
		json_decref(pfs);
		json_decref(devs);
		return NULL;
	}
	return json_pack("{s:o, s:o}", "pfs", pfs, "devices", devs);
}
