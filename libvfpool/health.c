/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Health at claim time: a pool's "health" policy says which of its VFs may
 * be offered. Reconcile keeps a VF that fails it unavailable, with the
 * reason ("unhealthy: …"), and gives it back when it passes again:
 *   "health": { "drivers": ["iavf", "vfio-pci"], "pf_link": "up",
 *               "iommu_group": "own" | "pool" | "any" }
 * Every key is optional; without "health" every VF is offered.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"
#include "private.h"
#include "sysfs.h"

static int parse_drivers(json_t *a, const char *path, struct vfp_strv *ret, char **err)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a))
		return vfp_config_error(err, path, "drivers: must be a list of driver names");
	ret->v = calloc(json_array_size(a) + 1, sizeof(*ret->v));
	if (!ret->v)
		return -ENOMEM;
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);

		if (!s || !vfp_driver_name_is_valid(s))
			return vfp_config_error(err, path, "drivers[%zu]: not a driver name", i);
		if (!(ret->v[ret->n++] = strdup(s)))
			return -ENOMEM;
	}
	return 0;
}

static int parse_choice(json_t *o, const char *path, const char *key,
			const char *const *choices, int *ret, char **err)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return 0;
	for (int i = 0; choices[i]; i++)
		if (json_is_string(v) && strcmp(json_string_value(v), choices[i]) == 0) {
			*ret = i;
			return 0;
		}
	return vfp_config_error(err, path, "%s: must be one of %s%s%s", key, choices[0],
				choices[1] ? ", " : "", choices[1] ? choices[1] : "");
}

int vfp_health_policy_parse(json_t *o, const char *path, struct vfp_health_policy *ret,
			    char **err)
{
	static const char *const keys[] = { "drivers", "pf_link", "iommu_group", NULL };
	static const char *const links[] = { "any", "up", NULL };
	static const char *const groups[] = { "any", "own", "pool", NULL };
	int link = 0, iommu = 0, r;

	if (!json_is_object(o))
		return vfp_config_error(err, path, "must be an object (drivers, pf_link, iommu_group)");
	r = vfp_json_check_keys(o, path, keys, err);
	if (r >= 0 && json_object_get(o, "drivers"))
		r = parse_drivers(json_object_get(o, "drivers"), path, &ret->drivers, err);
	if (r >= 0)
		r = parse_choice(o, path, "pf_link", links, &link, err);
	if (r >= 0)
		r = parse_choice(o, path, "iommu_group", groups, &iommu, err);
	ret->pf_link_up = link == 1;
	ret->iommu = (enum vfp_iommu_policy)iommu;
	return r;
}

void vfp_health_policy_clear(struct vfp_health_policy *p)
{
	vfp_strv_clear(&p->drivers);
}

json_t *vfp_health_policy_to_json(const struct vfp_health_policy *p)
{
	static const char *const groups[] = { "any", "own", "pool" };
	json_t *d = json_array();

	for (size_t i = 0; d && i < p->drivers.n; i++)
		json_array_append_new(d, json_string(p->drivers.v[i]));
	return json_pack("{s:o, s:s, s:s}", "drivers", d, "pf_link", p->pf_link_up ? "up" : "any",
			 "iommu_group", groups[p->iommu]);
}

/* The PF's link: its netdev's operstate, or for InfiniBand its RDMA port's state. */
static bool pf_link_up(const struct vfp_pf *pf, struct vfp_ctx *ctx, char *state, size_t size)
{
	char rel[PATH_MAX];
	bool ib = vfp_pf_get_link_type(pf) == VFP_LINK_INFINIBAND && vfp_pf_get_rdma_device(pf);

	if (ib)
		vfp_sysfs_class(rel, sizeof(rel), "infiniband", vfp_pf_get_rdma_device(pf),
				"ports/1/state");
	else if (vfp_pf_get_netdev(pf))
		vfp_sysfs_class(rel, sizeof(rel), "net", vfp_pf_get_netdev(pf), "operstate");
	else
		return snprintf(state, size, "no netdev"), false;
	if (vfp_sysfs_read(ctx, rel, state, size) < 0)
		return snprintf(state, size, "unreadable"), false;
	return ib ? strstr(state, "ACTIVE") != NULL : strcmp(state, "up") == 0;
}

/* Another device in @vf's IOMMU group the policy does not allow; NULL for none. */
static bool group_shared(const struct vfp_health_policy *p, const struct vfp_config *c,
			 const char *pool, const struct vfp_vf *vf, char *other, size_t size)
{
	struct vfp_ctx *ctx = vf->inv->ctx;
	char **devs = NULL;
	size_t n = 0;
	int group;
	bool shared = false;

	if (vfp_vf_get_iommu_group(vf, &group) < 0 ||
	    vfp_iommu_group_devices(ctx, group, &devs, &n) < 0)
		return false;
	for (size_t i = 0; i < n && !shared; i++) {
		const struct vfp_vf *mate = vfp_inventory_find_vf(vf->inv, devs[i]);
		const char *mate_pool = mate ? vfp_config_pool_for_vf(c, mate) : NULL;

		if (strcmp(devs[i], vfp_vf_get_pci(vf)) == 0)
			continue;
		shared = p->iommu == VFP_IOMMU_OWN || !mate_pool || strcmp(mate_pool, pool) != 0;
		if (shared)
			snprintf(other, size, "%s", devs[i]);
	}
	vfp_iommu_group_devices_free(devs, n);
	return shared;
}

/**
 * vfp_health_check() - why VF @vf of @pool may not be offered, into @buf;
 * NULL when it may
 */
const char *vfp_health_check(const struct vfp_health_policy *p, const struct vfp_config *c,
			     const char *pool, const struct vfp_vf *vf, char *buf, size_t size)
{
	const char *drv = vfp_vf_get_driver(vf);
	char fact[64];

	if (p->drivers.n && !(drv && vfp_strv_contains(&p->drivers, drv)))
		snprintf(buf, size, "unhealthy: driver %s, not one of the pool's", drv ? drv : "none");
	else if (p->pf_link_up && !pf_link_up(vfp_vf_get_pf(vf), vf->inv->ctx, fact, sizeof(fact)))
		snprintf(buf, size, "unhealthy: PF %s link %s", vfp_vf_get_pf_pci(vf), fact);
	else if (p->iommu != VFP_IOMMU_ANY && group_shared(p, c, pool, vf, fact, sizeof(fact)))
		snprintf(buf, size, "unhealthy: IOMMU group shared with %s", fact);
	else
		return NULL;
	return buf;
}
