/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "agent/deployment-held.h"
#include "agent/owner.h"

/* Allocation @alloc of domain @uuid into @ret_allocs, where its pool and size fit. */
static int take(struct vfp_allocation *alloc, const char *uuid, const char *const *pools,
		const unsigned *counts, size_t n_pools, struct vfp_allocation **ret_allocs,
		char *err, size_t err_size)
{
	const char *pool = vfp_allocation_get_pool(alloc);
	size_t p;

	for (p = 0; p < n_pools && strcmp(pools[p], pool) != 0; p++)
		;
	if (p == n_pools || ret_allocs[p] || vfp_allocation_get_vf_count(alloc) != counts[p] ||
	    !(vfp_allocation_get_state(alloc) == VFP_ALLOCATION_ATTACHED ||
	      (vfp_allocation_get_state(alloc) == VFP_ALLOCATION_RESERVED &&
	       vfp_allocation_get_hold_path(alloc)))) {
		snprintf(err, err_size, "domain %s already holds allocation %s (%s, %zu VFs of "
			 "pool %s) that this file does not match: release it first", uuid,
			 vfp_allocation_get_id(alloc),
			 vfp_allocation_state_to_string(vfp_allocation_get_state(alloc)),
			 vfp_allocation_get_vf_count(alloc), pool);
		return -EBUSY;
	}
	ret_allocs[p] = vfp_allocation_ref(alloc);
	return 1;
}

/**
 * deployment_held() - the allocations domain @uuid holds, if they serve @pools
 * @counts: the VFs the file asks of each pool
 * @ret_allocs: filled, one per pool, when 1 is returned (unref them)
 *
 * 0 when the domain holds none; 1 when it holds exactly one allocation per
 * pool of the right size, attached (a file posted again), or reserved and
 * held on a file (its domain ended, a powered-off VM's: it resumes with the
 * same VFs); -EBUSY (and @err) otherwise.
 */
int deployment_held(struct agent *a, const char *uuid, const char *const *pools,
		    const unsigned *counts, size_t n_pools, struct vfp_allocation **ret_allocs,
		    char *err, size_t err_size)
{
	struct vfp_allocation **list = NULL;
	size_t n = 0, found = 0;
	int r;

	r = ledger_list_allocations(a, NULL, false, &list, &n, err, err_size);
	for (size_t i = 0; r >= 0 && i < n; i++)
		if (owner_is_domain(vfp_allocation_get_owner(list[i]), uuid) &&
		    (r = take(list[i], uuid, pools, counts, n_pools, ret_allocs, err, err_size)) > 0)
			found++;
	vfp_allocation_list_free(list, n);
	if (r >= 0 && found && found != n_pools) {
		snprintf(err, err_size, "domain %s already holds VFs of %zu of this file's %zu "
			 "SR-IOV pools: release them first", uuid, found, n_pools);
		r = -EBUSY;
	}
	if (r < 0)
		for (size_t p = 0; p < n_pools; p++) {
			vfp_allocation_unref(ret_allocs[p]);
			ret_allocs[p] = NULL;
		}
	return r < 0 ? r : found > 0;
}
