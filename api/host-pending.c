/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GET /v1/host's "pending": what still needs doing that no request failed
 * for, as after a hook's point of no return or a detach that gave up
 * waiting. One entry per VF:
 *   "plug"   a VF booked (reserved) for a VM whose domain runs without it:
 *            a restore or a migrate started the domain and could not plug it
 *            back. It goes with an attach, a release, or the domain's end.
 *            A reservation held while a checkpoint exists counts too once its
 *            domain runs: the restore that deleted the checkpoint left the
 *            hold set.
 *   "repair" a quarantined VF, with the ledger's reason (an unplug its guest
 *            did not acknowledge, a reset that failed). It goes with a
 *            repair: the agent's, once the domain let go, or vfctl repair.
 * A suspended VM's reservation (held, its domain gone) waits for nobody and
 * is not listed: GET /v1/allocations shows it with its hold_while.
 *
 * Read from the ledger and from the domains libvirt ran at the agent's last
 * look (vm_report_foreign(), on each of libvirt's events): a request never
 * waits for libvirt, and an attach in flight may show for its duration.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api.h"

static json_t *entry(const char *what, const char *allocation, const char *pci,
		     const char *owner, long long since, const char *reason)
{
	return json_pack("{s:s, s:s?, s:s, s:s?, s:I, s:s}", "what", what, "allocation",
			 allocation, "pci", pci, "owner", owner, "since", (json_int_t)since,
			 "reason", reason);
}

/* Whether @o's domain ran at the last look (by UUID, else by name). */
static bool domain_runs(const struct agent_running_domain *running, size_t n,
			const struct vfp_owner *o)
{
	for (size_t i = 0; i < n; i++) {
		const struct agent_running_domain *d = &running[i];

		if (o->uuid ? strcasecmp(o->uuid, d->uuid) == 0 : strcmp(o->name, d->name) == 0)
			return true;
	}
	return false;
}

/* One "plug" entry per VF of @alloc. */
static void add_plug(json_t *out, const struct vfp_allocation *alloc)
{
	const struct vfp_owner *o = vfp_allocation_get_owner(alloc);
	const char *id = vfp_allocation_get_id(alloc);
	char *owner = NULL, reason[512];

	if (vfp_owner_key(o, &owner, NULL) < 0)
		owner = NULL;
	snprintf(reason, sizeof(reason),
		 "booked for domain %s, which runs without it: attach the allocation, or release it",
		 o->name);
	for (size_t i = 0; i < vfp_allocation_get_vf_count(alloc); i++)
		json_array_append_new(out, entry("plug", id, vfp_allocation_get_vf(alloc, i)->pci,
						 owner, vfp_allocation_get_updated(alloc),
						 reason));
	free(owner);
}

static void add_plugs(struct agent *a, json_t *out)
{
	struct vfp_allocation **list = NULL;
	struct agent_running_domain *running = NULL;
	size_t n = 0, n_running = 0;

	if (ledger_list_allocations(a, NULL, false, &list, &n, NULL, 0) < 0)
		n = 0;
	if (ledger_get_running_domains(a, &running, &n_running) < 0)
		n_running = 0;
	for (size_t i = 0; i < n; i++)
		if (vfp_allocation_get_state(list[i]) == VFP_ALLOCATION_RESERVED &&
		    vfp_allocation_get_owner(list[i])->kind == VFP_OWNER_VM &&
		    domain_runs(running, n_running, vfp_allocation_get_owner(list[i])))
			add_plug(out, list[i]);
	free(running);
	vfp_allocation_list_free(list, n);
}

/* A "repair" entry when the ledger's view @v has @pci quarantined. */
static void add_repair(struct agent *a, json_t *out, const char *pci,
		       const struct ledger_vf_view *v)
{
	const struct vfp_ledger_vf *lv = &v->vf;
	struct vfp_restore_point *rp = NULL;
	char owner[300] = "";

	if (!v->known || lv->state != VFP_VF_QUARANTINED)
		return;
	if (ledger_get_restore_point(a, pci, &rp, NULL, 0) >= 0 && rp && rp->domain &&
	    rp->domain[0]) /* still in that domain, or it was when quarantined */
		snprintf(owner, sizeof(owner), "vm:%s", rp->domain);
	vfp_restore_point_free(rp);
	json_array_append_new(out, entry("repair", lv->allocation[0] ? lv->allocation : NULL, pci,
					 owner[0] ? owner : NULL, lv->since,
					 lv->reason[0] ? lv->reason : "quarantined"));
}

static void add_repairs(struct agent *a, json_t *out)
{
	struct vfp_inventory *inv = agent_get_inventory(a);
	struct ledger_vf_view *views = NULL;
	size_t n = 0, k = 0;

	if (ledger_get_vf_views(a, inv, &views, &n) < 0)
		n = 0;
	for (size_t i = 0; i < vfp_inventory_get_pf_count(inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(inv, i);

		for (size_t j = 0; j < vfp_pf_get_vf_count(pf) && k < n; j++, k++)
			add_repair(a, out, vfp_vf_get_pci(vfp_pf_get_vf(pf, j)), &views[k]);
	}
	free(views);
	vfp_inventory_unref(inv);
}

/**
 * api_host_pending_json() - [{"what","allocation","pci","owner","since","reason"}]
 *
 * "plug" entries first, then "repair" in the inventory's order; "allocation"
 * and "owner" are null when there is none.
 */
json_t *api_host_pending_json(struct agent *a)
{
	json_t *out = json_array();

	if (!out)
		return NULL;
	add_plugs(a, out);
	add_repairs(a, out);
	return out;
}
