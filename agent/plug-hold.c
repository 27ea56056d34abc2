/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hold after a VF is plugged beside the standby its guest came with (a
 * live migration's destination, a source's VF back after a migration that
 * failed): the plug steered the guest's MAC onto the standby's PFs
 * (agent/vm/steer-record.c), and it stays for libvirt.steer_hold seconds,
 * longer while the guest still sends over its standby, as a swap's does
 * (agent/swap-hold.c runs both). Its record is each VF's restore point, so a
 * crash or a stop before the hold's end leaves it to the next start
 * (plug_hold_reconcile()).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/ledger.h"
#include "agent/log.h"
#include "agent/plug-hold.h"
#include "agent/swap-hold.h"
#include "agent/vm/steer-record.h"
#include "agent/vm/vm-swap.h"

/* The hold over: each VF's plug steering out (none left is nothing). */
static void plug_unhold(struct agent *a, const char *id)
{
	struct vfp_allocation *alloc = NULL;

	if (agent_get_allocation(a, id, &alloc, NULL, 0) < 0)
		return;
	for (size_t i = 0; i < vfp_allocation_get_vf_count(alloc); i++)
		vm_plug_settled(a, vfp_allocation_get_vf(alloc, i)->pci);
	log_info("plug of allocation %s: steering over", id);
	vfp_allocation_unref(alloc);
}

/* Whether the guest sent over a standby of allocation @id's VFs since *@mark (a sum). */
static bool standby_busy(struct agent *a, const char *id, uint64_t *mark)
{
	struct vfp_allocation *alloc = NULL;
	uint64_t sum = 0, n;
	bool counted = false;
	int r = agent_get_allocation(a, id, &alloc, NULL, 0);

	for (size_t i = 0; r >= 0 && i < vfp_allocation_get_vf_count(alloc); i++) {
		r = vm_swap_standby_sent(a, vfp_allocation_get_vf(alloc, i)->pci, &n);
		if (r == -ENODEV || r == -ENOENT) /* no tap to count: that VF says nothing */
			r = 0;
		else if (r >= 0)
			sum += n, counted = true;
	}
	vfp_allocation_unref(alloc);
	if (r < 0) {
		log_warning("plug of allocation %s: its standby's count: %s", id, strerror(-r));
		return true;
	}
	r = counted && sum != *mark;
	*mark = sum;
	return r;
}

static const struct swap_hold_ops hold_ops = { .kind = "plug", .end = plug_unhold,
					       .busy = standby_busy };

/* Whether a VF of @alloc has its plug's steering recorded. */
static bool steered(struct agent *a, const struct vfp_allocation *alloc)
{
	for (size_t i = 0; i < vfp_allocation_get_vf_count(alloc); i++)
		if (vm_plug_steered(a, vfp_allocation_get_vf(alloc, i)->pci))
			return true;
	return false;
}

/**
 * plug_hold_start() - @alloc's VFs in their guest: the steering their plug
 * made (if any) held for libvirt.steer_hold seconds, then taken out
 */
void plug_hold_start(struct agent *a, const struct vfp_allocation *alloc)
{
	struct vfp_config *config;
	int ms;

	if (!steered(a, alloc))
		return;
	config = agent_get_config(a);
	ms = vfp_config_get_steer_hold(config) * 1000;
	vfp_config_unref(config);
	swap_hold_start(a, vfp_allocation_get_id(alloc), ms, &hold_ops);
}

/**
 * plug_hold_reconcile() - the plugs' steering a crash or a stop left in,
 * out (at start, once libvirt is asked)
 */
void plug_hold_reconcile(struct agent *a)
{
	struct vfp_allocation **list = NULL;
	char err[AGENT_ERR_SIZE];
	size_t n = 0;

	if (ledger_list_allocations(a, NULL, false, &list, &n, err, sizeof(err)) < 0) {
		log_error("the plugs' steering left by the last run: %s", err);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (steered(a, list[i]))
			plug_unhold(a, vfp_allocation_get_id(list[i]));
	vfp_allocation_list_free(list, n);
}
