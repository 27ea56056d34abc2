/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every PF to the VF count the config's "numvfs" rules want, at once: the
 * kernel is written for each PF first and the ledger synced once after, so
 * a reboot (every PF at 0) brings back all VFs before the ledger looks, and
 * the VFs of a reservation return to it instead of vanishing one PF at a
 * time. Each PF goes through the planner: a PF whose VFs are held is only
 * grown from 0 (nothing of it exists to destroy), never resized.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ledger-private.h"

/* The kernel's part of one resize; the plan says what happened. */
static void resize(struct vfp_ledger *l, const struct vfp_inventory *inv,
		   struct vfp_numvfs_plan *p)
{
	int r = p->from == 0 ? 0 : vfp_numvfs_take_out_of_pool(l, p->pf);

	if (r >= 0 && p->from != 0)
		r = vfp_numvfs_write(l, inv->ctx, p->pf, 0);
	if (r >= 0 && p->to != 0)
		r = vfp_numvfs_write(l, inv->ctx, p->pf, p->to);
	if (r < 0) {
		p->allowed = false;
		snprintf(p->reason, sizeof(p->reason), "%s", vfp_ledger_error());
	}
}

/* The plan for @pf when the config wants it to change; NULL when it does not. */
static struct vfp_numvfs_plan *plan_for(struct vfp_ledger *l, const struct vfp_config *config,
					const struct vfp_inventory *inv, const struct vfp_pf *pf)
{
	struct vfp_numvfs_plan *p = NULL;
	int want = vfp_config_get_desired_numvfs(config, pf), have = 0;

	if (want < 0 || vfp_pf_get_numvfs(pf, &have) < 0 || have == want)
		return NULL;
	(void)vfp_numvfs_plan(l, inv, vfp_pf_get_pci(pf), want, &p);
	return p; /* refused plans say why */
}

/**
 * vfp_numvfs_apply_config() - every PF to its count in @config
 * @ret_plans: one plan per PF the config wanted changed, allowed (and done)
 *             or not (reason says why: held VFs, not writable, the kernel's
 *             error); free each with vfp_numvfs_plan_free(), then the array
 * @ret_inv: the inventory after, when any PF was written
 *
 * Returns the number of plans, or -errno when the host could not be read
 * back or the ledger not synced.
 */
VFP_EXPORT int vfp_numvfs_apply_config(struct vfp_ledger *l, const struct vfp_config *config,
				       const struct vfp_inventory *inv,
				       struct vfp_numvfs_plan ***ret_plans,
				       struct vfp_inventory **ret_inv)
{
	size_t n_pfs = vfp_inventory_get_pf_count(inv), n = 0;
	struct vfp_numvfs_plan **plans = calloc(n_pfs + 1, sizeof(*plans));
	bool wrote = false;
	int r = 0;

	if (!plans)
		return -ENOMEM;
	for (size_t i = 0; i < n_pfs; i++) {
		struct vfp_numvfs_plan *p = plan_for(l, config, inv, vfp_inventory_get_pf(inv, i));

		if (!p)
			continue;
		if (p->allowed) {
			resize(l, inv, p);
			wrote = true;
		}
		plans[n++] = p;
	}
	if (wrote) {
		r = vfp_inventory_scan(inv->ctx, ret_inv);
		if (r >= 0)
			r = vfp_ledger_sync(l, *ret_inv, config, NULL);
	}
	*ret_plans = plans;
	return r < 0 ? r : (int)n;
}
