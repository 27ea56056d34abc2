/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfctl's human-readable output, from the same JSON the API serves (and
 * that `--local` builds from sysfs), so both paths print alike.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vfctl/vfctl.h"

#define ROW "%-17s %-10s %-10s %-14s %-11s %-8s %-5s %s\n"

/* A field as text: "-" for null or absent. */
static const char *str(json_t *o, const char *key, char *buf, size_t size)
{
	json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	if (json_is_boolean(v))
		return json_is_true(v) ? "yes" : "no";
	return "-";
}

static void print_pf_row(FILE *out, json_t *pf)
{
	char id[16], numa[16], vfs[48], b1[24], b2[24];

	snprintf(id, sizeof(id), "%s:%s", str(pf, "vendor", b1, 24), str(pf, "device", b2, 24));
	snprintf(vfs, sizeof(vfs), "%s/%s%s", str(pf, "numvfs", b1, 24), str(pf, "totalvfs", b2, 24),
		 json_is_false(json_object_get(pf, "numvfs_writable")) ? " (fixed)" : "");
	fprintf(out, ROW, str(pf, "pci", b1, 24), id, str(pf, "driver", b2, 24),
		str(pf, "netdev", b1, 24), str(pf, "link_type", b2, 24),
		str(pf, "rdma_device", b1, 24), str(pf, "numa_node", numa, 16), vfs);
}

static void print_vf_row(FILE *out, json_t *vf, json_t *holders)
{
	char pci[24], id[16], numa[16], last[256], b1[24], b2[24], b3[24];
	json_t *h = json_object_get(holders, json_string_value(json_object_get(vf, "pci")));

	snprintf(pci, sizeof(pci), "  %s", str(vf, "pci", b1, 24));
	snprintf(id, sizeof(id), "%s:%s", str(vf, "vendor", b1, 24), str(vf, "device", b2, 24));
	if (json_object_get(vf, "state") && h)
		snprintf(last, sizeof(last), "vf%s %s %s %s %s", str(vf, "index", b1, 24),
			 str(vf, "pool", b2, 24), str(vf, "state", b3, 24),
			 json_string_value(json_object_get(h, "owner")),
			 json_string_value(json_object_get(h, "where")));
	else if (json_object_get(vf, "state"))
		snprintf(last, sizeof(last), "vf%s %s %s", str(vf, "index", b1, 24),
			 str(vf, "pool", b2, 24), str(vf, "state", b3, 24));
	else
		snprintf(last, sizeof(last), "vf%s group %s", str(vf, "index", b1, 24),
			 str(vf, "iommu_group", b2, 24));
	fprintf(out, ROW, pci, id, str(vf, "driver", b1, 24), str(vf, "netdev", b2, 24),
		str(vf, "link_type", b3, 24), str(vf, "rdma_device", b1, 24),
		str(vf, "numa_node", numa, 16), last);
}

/*
 * PF rows, each followed by its VFs, indented; a held VF ends with its
 * owner and where it is, from @holders (vfctl_holders(); NULL: not known).
 */
void vfctl_print_table(FILE *out, json_t *pfs, json_t *holders)
{
	size_t i, j;
	json_t *pf, *vf;

	fprintf(out, ROW, "PCI", "ID", "DRIVER", "NETDEV", "LINK", "RDMA", "NUMA",
		holders ? "VFS / POOL STATE OWNER WHERE" : "VFS");
	json_array_foreach(pfs, i, pf) {
		print_pf_row(out, pf);
		json_array_foreach(json_object_get(pf, "vfs"), j, vf)
			print_vf_row(out, vf, holders);
	}
	if (json_array_size(pfs) == 0)
		fprintf(out, "(no SR-IOV physical functions)\n");
}

/* One "key  value" line per scalar field; a "vfs" list as PCI addresses. */
void vfctl_print_fields(FILE *out, const char *kind, json_t *o)
{
	const char *key;
	json_t *v;
	char buf[32];

	if (kind)
		fprintf(out, "%-16s %s\n", "kind", kind);
	json_object_foreach(o, key, v) {
		if (json_is_array(v)) {
			size_t i;
			json_t *e;

			json_array_foreach(v, i, e)
				fprintf(out, "%-16s %s\n", i == 0 ? key : "",
					json_is_object(e) ? str(e, "pci", buf, sizeof(buf))
							  : json_string_value(e));
		} else if (json_is_object(v)) {
			char *text = json_dumps(v, JSON_COMPACT);

			fprintf(out, "%-16s %s\n", key, text ? text : "?");
			free(text);
		} else {
			fprintf(out, "%-16s %s\n", key, str(o, key, buf, sizeof(buf)));
		}
	}
}

void vfctl_print_pools(FILE *out, json_t *pools)
{
	static const char *const states[] = { "free", "reserved", "attached", "releasing",
					      "quarantined", "unavailable" };
	size_t i;
	json_t *p;

	fprintf(out, "%-16s %6s %9s %9s %10s %12s %12s\n", "POOL", "FREE", "RESERVED",
		"ATTACHED", "RELEASING", "QUARANTINED", "UNAVAILABLE");
	json_array_foreach(pools, i, p) {
		json_t *vfs = json_object_get(p, "vfs");

		fprintf(out, "%-16s", json_string_value(json_object_get(p, "name")));
		for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++)
			fprintf(out, " %*" JSON_INTEGER_FORMAT, s == 0 ? 6 : s < 3 ? 9 : s == 3 ? 10 : 12,
				json_integer_value(json_object_get(vfs, states[s])));
		fputc('\n', out);
	}
}

void vfctl_print_allocation(FILE *out, json_t *a)
{
	size_t i;
	json_t *vf;
	char b1[32], b2[32];

	fprintf(out, "allocation %s: pool %s, %s\n", json_string_value(json_object_get(a, "id")),
		json_string_value(json_object_get(a, "pool")),
		json_string_value(json_object_get(a, "state")));
	json_array_foreach(json_object_get(a, "vfs"), i, vf)
		fprintf(out, "  %s (PF %s)%s%s\n", str(vf, "pci", b1, 32), str(vf, "pf", b2, 32),
			json_is_string(json_object_get(vf, "guid")) ? " guid " : "",
			json_is_string(json_object_get(vf, "guid"))
				? json_string_value(json_object_get(vf, "guid"))
				: "");
}

void vfctl_print_plan(FILE *out, json_t *plan)
{
	size_t i;
	json_t *b;

	fprintf(out, "PF %s: numvfs %" JSON_INTEGER_FORMAT " -> %" JSON_INTEGER_FORMAT " (of %"
		JSON_INTEGER_FORMAT "): %s\n",
		json_string_value(json_object_get(plan, "pf")),
		json_integer_value(json_object_get(plan, "from")),
		json_integer_value(json_object_get(plan, "to")),
		json_integer_value(json_object_get(plan, "totalvfs")),
		json_is_true(json_object_get(plan, "allowed"))
			? (json_is_true(json_object_get(plan, "dry_run")) ? "allowed (dry run)" : "done")
			: "refused");
	if (json_is_true(json_object_get(plan, "persisted")))
		fprintf(out, "  kept in the agent's state: the PF gets %" JSON_INTEGER_FORMAT
			" VFs again after a reboot\n", json_integer_value(json_object_get(plan, "to")));
	json_array_foreach(json_object_get(plan, "blockers"), i, b)
		fprintf(out, "  blocked by allocation %s (%s)\n",
			json_string_value(json_object_get(b, "allocation")),
			json_string_value(json_object_get(b, "state")));
}
