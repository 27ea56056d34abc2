/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The config's "numvfs": how many VFs each PF should have (config-numvfs.c). */
#pragma once

#include <jansson.h>

#include "selector.h"

#define VFP_NUMVFS_MAX (-1) /* "max": the PF's sriov_totalvfs */

/* Every field given must match the PF; NULL fields match any. */
struct vfp_numvfs_rule {
	char *pf; /* its PCI address or netdev name */
	char *vendor, *device, *driver;
	int numvfs;
};

struct vfp_numvfs_rules {
	struct vfp_numvfs_rule *v;
	size_t n;
};

int vfp_numvfs_rules_parse(json_t *a, struct vfp_numvfs_rules *ret, char **err);
void vfp_numvfs_rules_clear(struct vfp_numvfs_rules *rules);
int vfp_numvfs_rules_put_first(struct vfp_numvfs_rules *rules, const char *pf, int numvfs);
int vfp_numvfs_rules_desired(const struct vfp_numvfs_rules *rules, const struct vfp_pf *pf);
