/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vfctl's human-readable output: the inventory table and the `show` view. */
#include "config.h"

#include <stdio.h>

#include "vfctl.h"

#define DASH(s) ((s) ? (s) : "-")
#define ROW "%-17s %-10s %-10s %-14s %-11s %-8s %-5s %s\n"

/* @r is what the getter returned: -ENODATA when sysfs did not say. */
static void fmt_opt(char *buf, size_t size, int r, int v)
{
	if (r < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%d", v);
}

static void fmt_id(char *buf, size_t size, const char *vendor, const char *device)
{
	snprintf(buf, size, "%s:%s", vendor ? vendor : "?", device ? device : "?");
}

static void print_pf_row(FILE *out, const struct vfp_pf *pf)
{
	char id[16], numa[16], vfs[32];
	int num = 0, total = 0, node = 0, r;
	int rn = vfp_pf_get_numvfs(pf, &num), rt = vfp_pf_get_totalvfs(pf, &total);

	fmt_id(id, sizeof(id), vfp_pf_get_vendor(pf), vfp_pf_get_device(pf));
	r = vfp_pf_get_numa_node(pf, &node);
	fmt_opt(numa, sizeof(numa), r, node);
	if (rn >= 0 && rt >= 0)
		snprintf(vfs, sizeof(vfs), "%d/%d%s", num, total,
			 vfp_pf_get_numvfs_writable(pf) ? "" : " (fixed)");
	else
		snprintf(vfs, sizeof(vfs), "?");
	fprintf(out, ROW, vfp_pf_get_pci(pf), id, DASH(vfp_pf_get_driver(pf)),
		DASH(vfp_pf_get_netdev(pf)), vfp_link_type_to_string(vfp_pf_get_link_type(pf)),
		DASH(vfp_pf_get_rdma_device(pf)), numa, vfs);
}

static void print_vf_row(FILE *out, const struct vfp_vf *vf)
{
	char pci[24], id[16], numa[16], group[24];
	int g = 0, node = 0, r;

	snprintf(pci, sizeof(pci), "  %s", vfp_vf_get_pci(vf));
	fmt_id(id, sizeof(id), vfp_vf_get_vendor(vf), vfp_vf_get_device(vf));
	r = vfp_vf_get_numa_node(vf, &node);
	fmt_opt(numa, sizeof(numa), r, node);
	if (vfp_vf_get_iommu_group(vf, &g) >= 0)
		snprintf(group, sizeof(group), "vf%u group %d", vfp_vf_get_index(vf), g);
	else
		snprintf(group, sizeof(group), "vf%u", vfp_vf_get_index(vf));
	fprintf(out, ROW, pci, id, DASH(vfp_vf_get_driver(vf)), DASH(vfp_vf_get_netdev(vf)),
		vfp_link_type_to_string(vfp_vf_get_link_type(vf)), DASH(vfp_vf_get_rdma_device(vf)),
		numa, group);
}

/* PF rows, each followed by its VFs, indented. */
void vfctl_print_table(FILE *out, const struct vfp_inventory *inv)
{
	size_t n = vfp_inventory_get_pf_count(inv);

	fprintf(out, ROW, "PCI", "ID", "DRIVER", "NETDEV", "LINK", "RDMA", "NUMA", "VFS");
	for (size_t i = 0; i < n; i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(inv, i);

		print_pf_row(out, pf);
		for (size_t j = 0; j < vfp_pf_get_vf_count(pf); j++)
			print_vf_row(out, vfp_pf_get_vf(pf, j));
	}
	if (n == 0)
		fprintf(out, "(no SR-IOV physical functions)\n");
}

/* The `show` view: one "key: value" line per field of the JSON view. */
static void print_fields(FILE *out, json_t *o)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		if (json_is_array(v))
			continue;
		if (json_is_null(v))
			fprintf(out, "%-16s -\n", key);
		else if (json_is_string(v))
			fprintf(out, "%-16s %s\n", key, json_string_value(v));
		else if (json_is_integer(v))
			fprintf(out, "%-16s %" JSON_INTEGER_FORMAT "\n", key, json_integer_value(v));
		else
			fprintf(out, "%-16s %s\n", key, json_is_true(v) ? "yes" : "no");
	}
}

void vfctl_print_pf(FILE *out, const struct vfp_pf *pf)
{
	json_t *o = vfp_pf_to_json(pf, false);

	fprintf(out, "%-16s %s\n", "kind", "pf");
	if (o)
		print_fields(out, o);
	json_decref(o);
	for (size_t j = 0; j < vfp_pf_get_vf_count(pf); j++)
		fprintf(out, "%-16s %s\n", j == 0 ? "vfs" : "", vfp_vf_get_pci(vfp_pf_get_vf(pf, j)));
}

void vfctl_print_vf(FILE *out, const struct vfp_vf *vf)
{
	json_t *o = vfp_vf_to_json(vf);

	fprintf(out, "%-16s %s\n", "kind", "vf");
	if (o)
		print_fields(out, o);
	json_decref(o);
}
