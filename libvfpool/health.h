/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A pool's health policy: which VFs of it may be offered (health.c). */
#pragma once

#include <jansson.h>

#include "selector.h"

enum vfp_iommu_policy {
	VFP_IOMMU_ANY,	/* the group is not looked at */
	VFP_IOMMU_OWN,	/* the VF alone in its group */
	VFP_IOMMU_POOL, /* only VFs of the same pool in its group */
};

struct vfp_health_policy {
	struct vfp_strv drivers; /* empty: any driver, or none */
	bool pf_link_up;	 /* the PF's link (an IB PF: its port) must be up */
	enum vfp_iommu_policy iommu;
};

int vfp_health_policy_parse(json_t *o, const char *path, struct vfp_health_policy *ret,
			    char **err);
void vfp_health_policy_clear(struct vfp_health_policy *p);
json_t *vfp_health_policy_to_json(const struct vfp_health_policy *p);
const char *vfp_health_check(const struct vfp_health_policy *p, const struct vfp_config *c,
			     const char *pool, const struct vfp_vf *vf, char *buf, size_t size);
const char *vfp_config_pool_health(const struct vfp_config *c, const char *pool,
				   const struct vfp_vf *vf, char *buf, size_t size);
