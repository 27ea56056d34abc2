/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A network update reaches the VFs in use (OpenNebula's update_nic: a new
 * VLAN, rate, spoofchk or trust for a running VM): the allocation's
 * settings in the ledger first, so that every later attach applies them,
 * then each VF that is in a guest or a namespace, on its PF. libvirt cannot
 * change an <interface type='hostdev'> of a running domain, so the agent
 * sets the PF directly; libvirt still restores the MAC and VLAN it saved at
 * the attach, and the VF's restore point gains the values the update is the
 * first to change, so that a release puts back what the host had. All or
 * nothing: a VF that refuses puts the others and the ledger back.
 *
 * The allocation can be released between the ledger's update and a VF's
 * turn (the ledger lock is not held while PFs are asked), and its VF
 * claimed and attached by the next tenant; so each VF is touched only under
 * its PF's lock, which a release's restore and an attach hold too, and only
 * while the ledger still says the VF is this allocation's: never by its PCI
 * address alone.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/log.h"
#include "agent/pf/pf-side.h"
#include "agent/settings-update.h"
#include "agent/settings-update-priv.h"

/* What one VF had before the update, to put back if a later one refuses. */
struct vf_undo {
	bool applied;
	struct vf_facts facts;
	struct vfp_vf_config before;
};

/* The allocation's settings with @delta over them, recorded; @old and the new allocation returned. */
static int store(struct agent *a, const char *id, const struct vfp_settings *delta,
		 struct vfp_settings *old, struct vfp_allocation **ret, char *err, size_t err_size)
{
	struct vfp_allocation *alloc = NULL;
	struct vfp_settings s;
	int r;

	{
		LEDGER_GUARD(g, a);

		r = vfp_ledger_get_allocation(g.l, id, &alloc);
		if (r >= 0) {
			*old = s = *vfp_allocation_get_settings(alloc);
			vfp_settings_merge(&s, delta);
			r = vfp_ledger_set_settings(g.l, id, &s);
		}
		if (r < 0)
			snprintf(err, err_size, "%s", vfp_ledger_get_error(g.l));
	}
	if (r < 0)
		alloc = vfp_allocation_unref(alloc);
	*ret = alloc; /* its VFs: they do not change while it lives */
	return r;
}

/* The PF-side change @delta asks of @vf: its knobs only, "vlan": 0 clearing the VLAN. */
static int wanted(const struct vfp_settings *delta, const struct vfp_allocation_vf *vf,
		  struct vfp_vf_config *ret, char *err, size_t err_size)
{
	struct vfp_settings knobs = *delta;
	int r;

	knobs.mac[0] = knobs.guid[0] = knobs.ip[0] = '\0';
	r = vfconfig_from_request(&knobs, vf, false, ret, err, err_size);
	ret->has_node_guid = ret->has_port_guid = false; /* the VF's GUIDs stay */
	if (r >= 0 && delta->vlan == 0)
		ret->vlan = 0, ret->qos = 0;
	return r;
}

/*
 * The restore point gains @before's value of each knob @want changes that it
 * does not hold yet. libvirt restores a VM's Ethernet VF's VLAN itself.
 */
static void extend_restore_point(struct vfp_restore_point *rp, const struct vfp_vf_config *before,
				 const struct vfp_vf_config *want, bool libvirt_vlan)
{
	struct vfp_vf_config *p = &rp->pf_side;

	if (!rp->has_pf_side)
		vfp_vf_config_init(p, want->index);
	rp->has_pf_side = true;
	if (want->vlan >= 0 && p->vlan < 0 && !libvirt_vlan)
		p->vlan = before->vlan, p->qos = before->qos, p->vlan_proto = before->vlan_proto;
	if (want->spoofchk >= 0 && p->spoofchk < 0)
		p->spoofchk = before->spoofchk;
	if (want->trust >= 0 && p->trust < 0)
		p->trust = before->trust;
	if (want->link_state >= 0 && p->link_state < 0)
		p->link_state = before->link_state;
	if ((want->min_tx_rate >= 0 || want->max_tx_rate >= 0) && p->max_tx_rate < 0 &&
	    p->min_tx_rate < 0)
		p->min_tx_rate = before->min_tx_rate, p->max_tx_rate = before->max_tx_rate;
}

/* VF @vf, if in use (a restore point that names a domain or a namespace), changed as @want says. */
static int apply_in_use(struct agent *a, const struct vfp_allocation_vf *vf,
			const struct vfp_vf_config *want, struct vf_undo *u, char *err,
			size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, vf->pci);
	struct vf_target t;
	bool snapped = false;
	int r = 0;

	if (!rp || !(rp->domain_uuid || rp->netns) || vfp_vf_config_is_empty(want))
		goto out; /* not in use: the next attach applies the settings */
	r = vf_facts_read(a, vf->pci, &u->facts);
	if (r < 0) {
		snprintf(err, err_size, "VF %s is not on this host any more", vf->pci);
		goto out;
	}
	t = pf_side_target(a, &u->facts);
	t.for_guest = rp->domain_uuid != NULL;
	r = vfconfig_snapshot(&t, want, &u->before, err, err_size);
	if (r >= 0) {
		snapped = true;
		extend_restore_point(rp, &u->before, want, rp->domain_uuid && u->facts.ethernet);
		r = restore_point_update(a, vf->pci, rp);
	}
	if (r >= 0)
		r = vfconfig_apply(&t, want, err, err_size);
	if (r >= 0)
		u->applied = true;
	else if (!err[0])
		snprintf(err, err_size, "VF %s: %s", vf->pci, strerror(-r));
	if (r < 0 && snapped) {
		char ignored[AGENT_ERR_SIZE];

		vfconfig_apply(&t, &u->before, ignored, sizeof(ignored));
	}
out:
	vfp_restore_point_free(rp);
	return r;
}

/*
 * Under @vf's PF lock: whether the ledger still gives @vf to allocation @id,
 * in use or reserved; -EBUSY naming both when not (released meanwhile, and
 * maybe another tenant's now).
 */
static int still_held(struct agent *a, const char *id, const struct vfp_allocation_vf *vf,
		      char *err, size_t err_size)
{
	struct vfp_ledger_vf v;
	int r;

	r = ledger_get_vf(a, vf->pci, &v);
	if (r < 0)
		snprintf(err, err_size, "VF %s: the ledger: %s", vf->pci, strerror(-r));
	if (r >= 0 && (strcmp(v.allocation, id) != 0 ||
		       (v.state != VFP_VF_ATTACHED && v.state != VFP_VF_RESERVED))) {
		snprintf(err, err_size, "allocation %s was released meanwhile: VF %s is not its "
			 "any more (%s%s%s)", id, vf->pci, vfp_vf_state_to_string(v.state),
			 v.allocation[0] ? " by allocation " : "", v.allocation);
		r = -EBUSY;
	}
	return r;
}

static int update_vf(struct agent *a, const char *id, const struct vfp_allocation_vf *vf,
		     const struct vfp_settings *delta, struct vf_undo *u, char *err, size_t err_size)
{
	struct vfp_vf_config want;
	pthread_mutex_t *lock = pf_side_lock(vf);
	int r = wanted(delta, vf, &want, err, err_size);

	if (r < 0)
		return r;
	pthread_mutex_lock(lock);
	r = still_held(a, id, vf, err, err_size);
	if (r >= 0)
		r = apply_in_use(a, vf, &want, u, err, err_size);
	pthread_mutex_unlock(lock);
	return r;
}

/* The first @n VFs as they were, and the ledger's settings @old again. */
static void undo(struct agent *a, const struct vfp_allocation *alloc, const struct vf_undo *u,
		 size_t n, const struct vfp_settings *old)
{
	char msg[AGENT_ERR_SIZE];

	for (size_t i = 0; i < n; i++) {
		const struct vfp_allocation_vf *vf = vfp_allocation_get_vf(alloc, i);
		struct vf_target t;

		if (!u[i].applied)
			continue;
		t = pf_side_target(a, &u[i].facts);
		pthread_mutex_lock(pf_side_lock(vf));
		if (still_held(a, vfp_allocation_get_id(alloc), vf, msg, sizeof(msg)) >= 0 &&
		    vfconfig_apply(&t, &u[i].before, msg, sizeof(msg)) < 0)
			log_error("rollback: VF %s: %s", vf->pci, msg);
		pthread_mutex_unlock(pf_side_lock(vf));
	}
	if (ledger_set_settings(a, vfp_allocation_get_id(alloc), old, msg, sizeof(msg)) < 0)
		log_error("rollback: allocation %s: %s", vfp_allocation_get_id(alloc), msg);
}

/**
 * agent_update_settings() - allocation @id's settings become @delta's knobs
 * over its own (VLAN, QoS, protocol, spoofchk, trust, link state, rates),
 * in the ledger and on the PF of each VF in use
 *
 * -EBUSY while an attach, detach or release of it is under way, or once it
 * ended; a PF's refusal is its error, with nothing changed.
 */
int agent_update_settings(struct agent *a, const char *id, const struct vfp_settings *delta,
			  char *err, size_t err_size)
{
	struct vfp_allocation *alloc = NULL;
	struct vfp_settings old;
	int r = store(a, id, delta, &old, &alloc, err, err_size);

	if (r >= 0)
		r = settings_update_vfs(a, alloc, delta, &old, err, err_size);
	vfp_allocation_unref(alloc);
	return r;
}

/**
 * settings_update_vfs() - the second half of agent_update_settings(): each
 * VF of @alloc (as the ledger gave it when @delta was stored over @old)
 * that is still @alloc's, changed on its PF; all or nothing
 */
int settings_update_vfs(struct agent *a, const struct vfp_allocation *alloc,
			const struct vfp_settings *delta, const struct vfp_settings *old,
			char *err, size_t err_size)
{
	const char *id = vfp_allocation_get_id(alloc);
	size_t n = vfp_allocation_get_vf_count(alloc), i = 0;
	struct vf_undo *u = calloc(n ? n : 1, sizeof(*u));
	int r = u ? 0 : -ENOMEM;

	for (; r >= 0 && i < n; i++)
		r = update_vf(a, id, vfp_allocation_get_vf(alloc, i), delta, &u[i], err, err_size);
	if (r < 0)
		undo(a, alloc, u, u ? i : 0, old);
	if (r >= 0)
		log_info("allocation %s: settings updated on %zu VF(s)", id, n);
	free(u);
	return r;
}
