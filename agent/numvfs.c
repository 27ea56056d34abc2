/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "agent/events.h"
#include "agent/numvfs.h"

/**
 * agent_set_numvfs() - PF @pf to @numvfs VFs, or (@dry_run) only the plan
 * @ret_plan: the plan (vfp_numvfs_plan_free() it), also when refused
 *
 * -EBUSY when allocations are in the way: the plan names them. The new
 * inventory replaces the old one at once, and an event carries the plan.
 */
int agent_set_numvfs(struct agent *a, const char *pf, int numvfs, bool dry_run,
		     struct vfp_numvfs_plan **ret_plan, char *err, size_t err_size)
{
	struct vfp_inventory *inv = NULL;
	int r;

	*ret_plan = NULL;
	pthread_rwlock_wrlock(&a->state_lock);
	pthread_mutex_lock(&a->ledger_lock);
	if (dry_run)
		r = vfp_numvfs_plan(a->ledger, a->inv, pf, numvfs, ret_plan);
	else
		r = vfp_numvfs_apply(a->ledger, a->config, a->inv, pf, numvfs, ret_plan, &inv);
	if (inv)
		agent_replace_inventory(a, inv);
	if (r < 0)
		snprintf(err, err_size, "%s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	pthread_rwlock_unlock(&a->state_lock);
	if (r >= 0 && !dry_run)
		events_emit_numvfs(a->events, *ret_plan);
	return r;
}
