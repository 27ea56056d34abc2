/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The steering a VF's restore point records (steered_xml, the standby whose
 * MAC is in the unicast filters of its bridge's PFs: standby-steer.c), beside
 * a swap's, which its ledger row records (agent/swap.c):
 *  - a live migration's source, while its VF leaves the guest and the guest
 *    stays on the standby it keeps (the standby_xml moved to steered_xml):
 *    out once the VF left, in the detach's own request;
 *  - a VF plugged beside the standby its guest came with (a migration's
 *    destination, a source's VF back after a migration that failed; both
 *    standby_xml and steered_xml): out after the agent's hold, once the VF
 *    carries the traffic (agent/attach.c starts it, agent/swap-hold.c ends it).
 * Each is written before the entry is made and cleared when nothing took it
 * (an entry there already is the operator's); a crash in between is the next
 * start's to end (vm_plug_settled(), or the detach's roll-forward).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/log.h"
#include "agent/pf/pf-side.h"
#include "agent/vm/standby-host.h"
#include "agent/vm/standby-steer.h"
#include "agent/vm/steer-record.h"

/* @rp->steered_xml's MAC steered, @rp written first; the record gone when nothing took it. */
static int steer_recorded(struct agent *a, const char *pci, struct vfp_restore_point *rp,
			  const char *why)
{
	char err[AGENT_ERR_SIZE] = "";
	int r = restore_point_update(a, pci, rp), n;

	n = r >= 0 ? standby_steer(a, rp->steered_xml, true, err, sizeof(err)) : 0;
	if (n < 0)
		log_warning("VF %s: the guest's MAC onto its standby's PFs %s: %s", pci, why, err);
	else if (n > 0)
		log_info("VF %s: the guest's MAC in the unicast filter of %d PF(s) on its standby's "
			 "bridge %s", pci, n, why);
	if (r >= 0 && n <= 0 && (r = vfp_restore_point_set(&rp->steered_xml, NULL)) >= 0)
		r = restore_point_update(a, pci, rp);
	return r;
}

/*
 * steer_kept_begin() - the standby of @rp (VF @pci's, loaded) stays in the
 * guest when the VF leaves it: moved from the pair to the steering, which the
 * VF's leaving ends (steer_kept_end())
 */
int steer_kept_begin(struct agent *a, const char *pci, struct vfp_restore_point *rp)
{
	free(rp->steered_xml);
	rp->steered_xml = rp->standby_xml;
	rp->standby_xml = NULL;
	return steer_recorded(a, pci, rp, "while the VF leaves");
}

/*
 * steer_kept_end() - a kept standby's steering out of its PFs: once its VF
 * @left the guest (its MAC off the guest's: the PF takes the guest's frames
 * for the standby's bridge again), or when the VF stays, and then the pair is
 * recorded as it was before (a later detach takes both out). A steering that
 * stays in (refused) stays recorded, for that detach to retry.
 */
void steer_kept_end(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
		    bool left)
{
	struct vfp_restore_point *now = left ? NULL : restore_point_load(a, pci);
	char err[AGENT_ERR_SIZE] = "";
	int n = standby_steer(a, rp->steered_xml, false, err, sizeof(err));

	if (n < 0)
		log_warning("VF %s: the guest's MAC out of its kept standby's PFs: %s", pci, err);
	else
		log_info("VF %s %s: the guest's MAC out of the unicast filter of %d PF(s) on its "
			 "kept standby's bridge", pci, left ? "out of the guest" : "still in the guest",
			 n);
	if (now && now->steered_xml) {
		int r = vfp_restore_point_set(&now->standby_xml, now->steered_xml);

		if (r >= 0 && n >= 0)
			r = vfp_restore_point_set(&now->steered_xml, NULL);
		if (r >= 0)
			r = restore_point_update(a, pci, now);
		if (r < 0)
			log_error("VF %s: its failover pair not recorded again: %s", pci, strerror(-r));
	}
	vfp_restore_point_free(now);
}

/*
 * steer_plug_begin() - VF @pci (restore point @rp, in memory and written) about to be plugged
 * beside @standby, which its guest came with: the guest's MAC steered onto the standby's PFs
 * first, as a swap's plug has it (the VF receives only once the guest's driver probes it)
 */
void steer_plug_begin(struct agent *a, const char *pci, struct vfp_restore_point *rp,
		      const char *standby)
{
	if (vfp_restore_point_set(&rp->steered_xml, standby) >= 0)
		steer_recorded(a, pci, rp, "while the VF comes in");
}

/* The plug's steering out and its record gone, now: the VF did not go in. */
void steer_plug_undo(struct agent *a, const char *pci, struct vfp_restore_point *rp)
{
	char err[AGENT_ERR_SIZE] = "";

	if (!rp->steered_xml)
		return;
	if (standby_steer(a, rp->steered_xml, false, err, sizeof(err)) < 0)
		log_warning("VF %s: the guest's MAC out of its standby's PFs: %s", pci, err);
	else if (vfp_restore_point_set(&rp->steered_xml, NULL) >= 0)
		restore_point_update(a, pci, rp);
}

/* Whether VF @pci, in its guest beside its standby, has its plug's steering recorded. */
bool vm_plug_steered(struct agent *a, const char *pci)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	bool yes = rp && rp->steered_xml && rp->standby_xml && rp->domain_uuid;

	vfp_restore_point_free(rp);
	return yes;
}

/**
 * vm_plug_settled() - VF @pci, plugged beside the standby its guest came
 * with, carries the guest's traffic: its plug's steering out, the record
 * gone, and the standby's static FDB entry with them (standby_host_to_vf()),
 * as a swap's end has it. Nothing when there is none (a source's kept
 * standby is its detach's). Under the VF's PF lock.
 */
void vm_plug_settled(struct agent *a, const char *pci)
{
	struct vfp_allocation_vf vf = { 0 };
	struct vfp_restore_point *rp;
	char err[AGENT_ERR_SIZE] = "";
	struct vf_facts f;
	int n;

	if (vf_facts_read(a, pci, &f) >= 0)
		snprintf(vf.pf, sizeof(vf.pf), "%.*s", (int)sizeof(vf.pf) - 1, f.pf_pci);
	pthread_mutex_lock(pf_side_lock(&vf));
	rp = restore_point_load(a, pci);
	if (rp && rp->steered_xml && rp->standby_xml) {
		n = standby_steer(a, rp->steered_xml, false, err, sizeof(err));
		if (n < 0)
			log_warning("VF %s: the guest's MAC out of its standby's PFs: %s", pci, err);
		else
			log_info("VF %s: plugged, the guest's MAC out of the unicast filter of %d "
				 "PF(s) on its standby's bridge", pci, n);
		standby_host_to_vf(rp->standby_xml);
		if (n >= 0 && vfp_restore_point_set(&rp->steered_xml, NULL) >= 0)
			restore_point_update(a, pci, rp);
	}
	pthread_mutex_unlock(pf_side_lock(&vf));
	vfp_restore_point_free(rp);
}
