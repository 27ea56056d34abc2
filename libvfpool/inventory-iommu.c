/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The members of an IOMMU group, listed once per inventory: the first
 * request for a group lists kernel/iommu_groups/<n>/devices, later ones
 * read the list kept with the inventory. A device joins or leaves a group
 * only when it is added or removed, which is a PCI uevent, and every PCI
 * uevent makes the agent scan a new inventory; the list lives as long as
 * this one. The host's checks and the health policies still list live.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "private.h"

struct vfp_iommu_group {
	int group;
	char **devs;
	size_t n;
};

static const struct vfp_iommu_group *find(const struct vfp_inventory *inv, int group)
{
	for (size_t i = 0; i < inv->n_groups; i++)
		if (inv->groups[i].group == group)
			return &inv->groups[i];
	return NULL;
}

/* Lists @group and keeps the list; called with groups_lock held. */
static int remember(struct vfp_inventory *inv, int group, const struct vfp_iommu_group **ret)
{
	struct vfp_iommu_group g = { .group = group }, *grown;
	int r = vfp_iommu_group_devices(inv->ctx, group, &g.devs, &g.n);

	if (r < 0)
		return r; /* not kept: the next request lists again */
	grown = realloc(inv->groups, (inv->n_groups + 1) * sizeof(*grown));
	if (!grown) {
		vfp_iommu_group_devices_free(g.devs, g.n);
		return -ENOMEM;
	}
	inv->groups = grown;
	inv->groups[inv->n_groups] = g;
	*ret = &inv->groups[inv->n_groups++];
	return 0;
}

/**
 * vfp_inventory_get_iommu_group_devices() - the PCI devices in IOMMU group
 * @group when this inventory was in use, sorted
 * @ret_list: the inventory's own list, valid while the caller holds @inv
 *
 * Safe from several threads at once.
 */
VFP_EXPORT int vfp_inventory_get_iommu_group_devices(struct vfp_inventory *inv, int group,
						     const char *const **ret_list, size_t *ret_n)
{
	const struct vfp_iommu_group *g;
	int r = 0;

	if (group < 0)
		return -EINVAL;
	pthread_mutex_lock(&inv->groups_lock);
	g = find(inv, group);
	if (!g)
		r = remember(inv, group, &g);
	if (r >= 0) {
		*ret_list = (const char *const *)g->devs;
		*ret_n = g->n;
	}
	pthread_mutex_unlock(&inv->groups_lock);
	return r;
}

/* When the inventory goes. */
void vfp_inventory_forget_iommu_groups(struct vfp_inventory *inv)
{
	for (size_t i = 0; i < inv->n_groups; i++)
		vfp_iommu_group_devices_free(inv->groups[i].devs, inv->groups[i].n);
	free(inv->groups);
	inv->groups = NULL;
	inv->n_groups = 0;
	pthread_mutex_destroy(&inv->groups_lock);
}
