/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "agent/deployment-held.h"
#include "agent/log.h"
#include "agent/owner.h"
#include "agent/vm/libvirt.h"

/**
 * deployment_is_owner() - whether VM owner @o is the domain a deployment
 * file names @name (the file's <name>, or ?owner=) and @uuid
 *
 * By name, as every owner is keyed; by UUID alone only when libvirt reports
 * the domain with that UUID under @name (a domain renamed since its claim):
 * a file is anyone's word, and another VM's <uuid> in it must not make it
 * that VM.
 */
bool deployment_is_owner(struct agent *a, const struct vfp_owner *o, const char *name,
			 const char *uuid)
{
	struct libvirt_domain d;
	char ignored[AGENT_ERR_SIZE];

	if (!o || o->kind != VFP_OWNER_VM)
		return false;
	if (o->name && strcmp(o->name, name) == 0)
		return true;
	return owner_is_domain(o, uuid) && libvirt_conn_is_connected(a->libvirt) &&
	       libvirt_lookup(a->libvirt, uuid, &d, ignored, sizeof(ignored)) >= 0 &&
	       strcmp(d.name, name) == 0;
}

/* Whether @alloc can fill slot @p: its pool, not yet filled, and the slot's MAC if it has one. */
static bool fits(const struct vfp_allocation *alloc, size_t p, const char *const *pools,
		 const char (*macs)[18], struct vfp_allocation **ret_allocs)
{
	const struct vfp_settings *s = vfp_allocation_get_settings(alloc);

	return !ret_allocs[p] && !strcmp(pools[p], vfp_allocation_get_pool(alloc)) &&
	       (!macs || !macs[p][0] || !s || !s->mac[0] || !strcasecmp(s->mac, macs[p]));
}

/*
 * Whether @alloc is a NIC's that is none of the file's SR-IOV networks' (a PCI
 * NIC claimed by its address, with its own MAC): one VF, a MAC no slot has.
 */
static bool another_nics(const struct vfp_allocation *alloc, const char (*macs)[18], size_t n)
{
	const struct vfp_settings *s = vfp_allocation_get_settings(alloc);

	if (!macs || !s || !s->mac[0] || vfp_allocation_get_vf_count(alloc) != 1)
		return false;
	for (size_t p = 0; p < n; p++)
		if (!strcasecmp(s->mac, macs[p]))
			return false;
	return true;
}

/* Allocation @alloc of domain @uuid into @ret_allocs, where its pool, MAC and size fit. */
static int take(struct vfp_allocation *alloc, const char *uuid, const char *const *pools,
		const char (*macs)[18], const unsigned *counts, size_t n_pools,
		struct vfp_allocation **ret_allocs, char *err, size_t err_size)
{
	const char *pool = vfp_allocation_get_pool(alloc);
	size_t p;

	for (p = 0; p < n_pools && !fits(alloc, p, pools, macs, ret_allocs); p++)
		;
	if (p == n_pools && another_nics(alloc, macs, n_pools))
		return 0;
	if (p == n_pools || vfp_allocation_get_vf_count(alloc) != counts[p] ||
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
 * and it is the file's domain (@name: deployment_is_owner())
 * @macs: each slot's MAC ("" or NULL: any); an allocation whose settings name
 *        a MAC fills only the slot of that MAC
 * @counts: the VFs the file asks of each slot
 * @ret_allocs: filled, one per slot, when 1 is returned (unref them)
 *
 * 0 when the domain holds none; 1 when it holds exactly one allocation per
 * pool of the right size, attached (a file posted again), or reserved and
 * held on a file (its domain ended, a powered-off VM's: it resumes with the
 * same VFs); -EBUSY (and @err) otherwise, and when they are another VM's.
 */
int deployment_held(struct agent *a, const char *name, const char *uuid, const char *const *pools,
		    const char (*macs)[18], const unsigned *counts, size_t n_pools, struct vfp_allocation **ret_allocs,
		    char *err, size_t err_size)
{
	struct vfp_allocation **list = NULL;
	size_t n = 0, found = 0;
	int r;

	r = ledger_list_domain_allocations(a, uuid, &list, &n, err, err_size);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		const struct vfp_owner *o = vfp_allocation_get_owner(list[i]);

		if (!deployment_is_owner(a, o, name, uuid)) {
			snprintf(err, err_size, "uuid: %s is VM %s's (allocation %s), and libvirt "
				 "reports no domain %s named %s", uuid, o->name ? o->name : "?",
				 vfp_allocation_get_id(list[i]), uuid, name);
			r = -EBUSY;
		} else if ((r = take(list[i], uuid, pools, macs, counts, n_pools, ret_allocs, err,
				     err_size)) > 0) {
			found++;
		}
	}
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
