/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `vfctl topo`: the PCIe tree as GET /v1/pcie gives it. Each PF with its
 * root complex, NUMA node and the bridges down to it (and to its Data
 * Direct function, which its distances are measured from); then a matrix of
 * distances as nvidia-smi topo -m draws one: a row per GPU, accelerator or
 * NVMe drive, a column per PF.
 */
#include "config.h"

#include <string.h>

#include "agent/vfctl/vfctl.h"

static const char *str(json_t *o, const char *key, const char *none)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : none;
}

static void print_numa(FILE *out, json_t *o)
{
	json_t *n = json_object_get(o, "numaNode");

	if (n)
		fprintf(out, "%-5" JSON_INTEGER_FORMAT, json_integer_value(n));
	else
		fprintf(out, "%-5s", "-");
}

/* "root_port 0000:3a:00.0 > switch_upstream 0000:3b:00.0 (ACS redirect) > …" */
static void print_path(FILE *out, json_t *path)
{
	size_t i;
	json_t *b;

	if (!json_is_array(path) || json_array_size(path) == 0) {
		fprintf(out, "(no bridge listed in sysfs)");
		return;
	}
	json_array_foreach(path, i, b) {
		json_t *acs = json_object_get(b, "acs");

		fprintf(out, "%s%s %s%s", i ? " > " : "", str(b, "role", "?"), str(b, "pci", "?"),
			json_is_true(json_object_get(acs, "p2p_redirect")) ? " (ACS redirect)" : "");
	}
}

/* "  data direct 0000:04:00.0 (pci0000:00): root_port … > switch_downstream …" */
static void print_data_direct(FILE *out, json_t *dd)
{
	if (!json_is_object(dd))
		return;
	fprintf(out, "  data direct %s (%s): ", str(dd, "pci", "?"), str(dd, "pcieRoot", "-"));
	print_path(out, json_object_get(dd, "path"));
	fputc('\n', out);
}

static void print_pfs(FILE *out, json_t *pfs)
{
	size_t i;
	json_t *pf;

	fprintf(out, "%-14s%-13s%-5s%-5s%s\n", "PF", "PCIEROOT", "NODE", "VFS", "PATH");
	json_array_foreach(pfs, i, pf) {
		fprintf(out, "%-14s%-13s", str(pf, "pci", "?"), str(pf, "pcieRoot", "-"));
		print_numa(out, pf);
		fprintf(out, "%-5zu", json_array_size(json_object_get(pf, "vfs")));
		print_path(out, json_object_get(pf, "path"));
		fputc('\n', out);
		print_data_direct(out, json_object_get(pf, "data_direct"));
	}
}

static const char *distance_to(json_t *dev, const char *pf)
{
	size_t i;
	json_t *d;

	json_array_foreach(json_object_get(dev, "distances"), i, d)
		if (strcmp(str(d, "pf", ""), pf) == 0)
			return str(d, "distance", "?");
	return "-";
}

static void print_matrix(FILE *out, json_t *pfs, json_t *devs)
{
	size_t i, j;
	json_t *dev, *pf;

	if (json_array_size(devs) == 0) {
		fprintf(out, "\nno GPU, accelerator or NVMe drive on this host\n");
		return;
	}
	fprintf(out, "\n%-14s%-12s%-13s%-5s", "DEVICE", "KIND", "PCIEROOT", "NODE");
	json_array_foreach(pfs, j, pf)
		fprintf(out, "%-14s", str(pf, "pci", "?"));
	fputc('\n', out);
	json_array_foreach(devs, i, dev) {
		fprintf(out, "%-14s%-12s%-13s", str(dev, "pci", "?"), str(dev, "kind", "?"),
			str(dev, "pcieRoot", "-"));
		print_numa(out, dev);
		json_array_foreach(pfs, j, pf)
			fprintf(out, "%-14s", distance_to(dev, str(pf, "pci", "")));
		fputc('\n', out);
	}
	fprintf(out, "\nPIX: through at most one PCIe switch; PXB: several switches below one root "
		     "port;\nPHB: through the host bridge; NODE: between root complexes of one "
		     "NUMA node;\nSYS: across NUMA nodes\n");
}

void vfctl_print_topo(FILE *out, json_t *tree)
{
	print_pfs(out, json_object_get(tree, "pfs"));
	print_matrix(out, json_object_get(tree, "pfs"), json_object_get(tree, "devices"));
}
