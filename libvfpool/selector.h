/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pool selectors, as the k8s SR-IOV device plugin has them: every field
 * given must match (AND); within a field any entry may match (OR).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config-errors.h" /* vfp_config_error(), vfp_json_check_keys() */
#include "libvfpool.h"

struct vfp_strv {
	char **v;
	size_t n;
};

struct vfp_vf_range {
	unsigned lo, hi;
};

/* "ens2f0#0-3,6": a PF netdev and, optionally, which of its VFs. */
struct vfp_pf_name {
	char *name;
	struct vfp_vf_range *ranges; /* NULL: every VF */
	size_t n_ranges;
};

struct vfp_selector {
	struct vfp_strv vendors, devices, drivers, pci_addresses;
	struct vfp_pf_name *pf_names;
	size_t n_pf_names;
	int *link_types; /* enum vfp_link_type values */
	size_t n_link_types;
	int *numa_nodes;
	size_t n_numa_nodes;
	int is_rdma; /* -1: not given */
};

int vfp_selector_parse(json_t *o, const char *path, struct vfp_selector *ret, char **ret_error);
void vfp_selector_clear(struct vfp_selector *s);
bool vfp_selector_match(const struct vfp_selector *s, const struct vfp_vf *vf);
int vfp_pf_name_parse(const char *s, struct vfp_pf_name *ret);

void vfp_strv_clear(struct vfp_strv *v);
bool vfp_strv_contains(const struct vfp_strv *v, const char *s);

