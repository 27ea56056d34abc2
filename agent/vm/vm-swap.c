/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The domain's side of a VF hot-swap (agent/swap.c runs the steps and keeps
 * them in the ledger): a new VF prepared as the old one is (its PF-side
 * settings, vfio-pci, the same device XML but for its source), the old VF
 * out of the guest alone (its standby stays and carries the traffic), the
 * new one in, the standby handed over. Each step is one call that a
 * restart may repeat: restore points say where each VF is.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/log.h"
#include "agent/pf/pf-side.h"
#include "agent/vm/hostdev-xml.h"
#include "agent/vm/libvirt.h"
#include "agent/vm/private.h"
#include "agent/vm/standby-host.h"
#include "agent/vm/standby-steer.h"
#include "agent/vm/vm-swap.h"
#include "agent/vm/vm.h"
#include "libvfpool/macro.h"

/* @old's restore point when it is a failover VF in a domain (its standby recorded), else NULL. */
static struct vfp_restore_point *failover_point(struct agent *a, const char *old, char *err,
						size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, old);

	if (rp && rp->domain_uuid && rp->device_xml && rp->standby_xml)
		return rp;
	snprintf(err, err_size, "VF %s is not a failover NIC's in a domain (no standby): its "
		 "guest would lose its network; detach and attach it instead", old);
	vfp_restore_point_free(rp);
	return NULL;
}

/*
 * The PF side of @old as the attach left it, for @f: what the attach changed (rates,
 * spoofchk, trust, link state), not MAC and VLAN, which libvirt sets itself.
 */
static int copy_pf_side(struct agent *a, const char *old, const struct vfp_restore_point *old_rp,
			const struct vf_facts *f, struct vfp_restore_point *rp, char *err,
			size_t err_size)
{
	struct vfp_vf_config now;
	int r;

	if (!old_rp->has_pf_side)
		return 0; /* the attach changed nothing there */
	r = pf_side_read(a, old, &now, err, err_size);
	if (r < 0)
		return r;
	now.index = f->index;
	now.has_mac = false;
	now.vlan = now.qos = now.vlan_proto = VFP_UNSET;
	now.has_node_guid = now.has_port_guid = false;
	return pf_side_apply(a, f, &now, true, rp, err, err_size);
}

static int prepare(struct agent *a, const char *old, const struct vfp_restore_point *old_rp,
		   const struct vf_facts *f, struct vfp_restore_point *rp, char *err,
		   size_t err_size)
{
	_cleanup_free_ char *xml = hostdev_xml_with_source(old_rp->device_xml, f->pci);
	int r = xml ? 0 : -EINVAL;

	if (!xml)
		snprintf(err, err_size, "VF %s's recorded device is not a hostdev", old);
	if (r >= 0)
		r = copy_pf_side(a, old, old_rp, f, rp, err, err_size);
	if (r >= 0 && strstr(xml, "managed=\"no\""))
		r = bind_vfio(a, f, rp, err, err_size);
	rp->flags = old_rp->flags;
	rp->since = (long long)time(NULL);
	if (r >= 0 && (vfp_restore_point_set(&rp->domain_uuid, old_rp->domain_uuid) < 0 ||
		       vfp_restore_point_set(&rp->domain, old_rp->domain) < 0 ||
		       vfp_restore_point_set(&rp->device_xml, xml) < 0 ||
		       vfp_restore_point_set(&rp->standby_xml, old_rp->standby_xml) < 0))
		r = -ENOMEM;
	if (r >= 0) /* before libvirt writes the domain's config: waited for on disk */
		r = restore_point_save(a, f->pci, rp);
	return r;
}

/**
 * vm_swap_prepare() - VF @new_vf made ready for the domain VF @old is in, as
 * @old is: its PF-side settings, vfio-pci when unmanaged, the same device XML
 * with its own source; recorded in its restore point (the standby too)
 *
 * Under @new_vf's PF lock. A failure undoes what it did (the restore point
 * says what) and says why; -EINVAL when @old is no failover VF in a domain.
 */
int vm_swap_prepare(struct agent *a, const char *old, const struct vfp_allocation_vf *new_vf,
		    char *err, size_t err_size)
{
	struct vfp_restore_point *old_rp = failover_point(a, old, err, err_size);
	struct vfp_restore_point *rp;
	struct vf_facts f;
	char msg[AGENT_ERR_SIZE] = "";
	int r;

	if (!old_rp)
		return -EINVAL;
	rp = pf_side_begin(new_vf);
	r = rp ? vf_facts_read(a, new_vf->pci, &f) : -ENOMEM;
	if (r < 0 && rp)
		snprintf(err, err_size, "VF %s is not on this host any more", new_vf->pci);
	if (r >= 0 && !f.ethernet) {
		snprintf(err, err_size, "VF %s is not an Ethernet VF", new_vf->pci);
		r = -EINVAL;
	}
	if (r >= 0)
		r = prepare(a, old, old_rp, &f, rp, err, err_size);
	if (rp)
		pf_side_end(new_vf, rp);
	/* undone as a release does it, detaching nothing: its device XML names the old VF too */
	if (r < 0 && rp && (vm_swap_forget_domain(a, new_vf->pci) < 0 ||
			    vm_restore_vf(a, new_vf, msg, sizeof(msg)) < 0))
		log_error("swap: undoing VF %s: %s", new_vf->pci, msg);
	vfp_restore_point_free(old_rp);
	return r;
}

/**
 * vm_swap_unplug() - VF @pci out of its domain, alone: its standby stays
 *
 * Done once the domain no longer has it (already out is done); -ETIMEDOUT
 * while the guest has not let it go (it stays, untouched).
 */
int vm_swap_unplug(struct agent *a, const char *pci, char *err, size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	int r = 0;

	bool in = rp && rp->domain_uuid && rp->device_xml;

	err[0] = '\0';
	if (!in)
		r = 0;
	else if (!a->libvirt)
		r = -ENOTCONN;
	else /* the standby's bridge sends it the guest's frames before the VF goes */
		standby_host_to_standby(rp->standby_xml);
	if (in && a->libvirt) /* a simulated guest that ignores unplugs answers in there */
		r = libvirt_detach(a->libvirt, rp->domain_uuid, rp->device_xml, rp->flags, err,
				   err_size);
	if (r >= 0 && in)
		r = wait_gone(a, rp, pci, err, err_size);
	if (r >= 0 && in)
		vf_left_guest(a, pci, rp->device_xml);
	else if (in && a->libvirt) /* the VF stays: its frames back to it */
		standby_host_to_vf(rp->standby_xml);
	if (r == -ENOTCONN && !err[0])
		snprintf(err, err_size, "libvirt is not connected");
	vfp_restore_point_free(rp);
	return r;
}

/* VF @pci into the domain its restore point names, with the flags it was attached with. */
int vm_swap_plug(struct agent *a, const char *pci, char *err, size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	int r;

	if (!rp || !rp->domain_uuid || !rp->device_xml) {
		snprintf(err, err_size, "VF %s has no domain recorded", pci);
		r = -EINVAL;
	} else if (!a->libvirt) {
		snprintf(err, err_size, "libvirt is not connected");
		r = -ENOTCONN;
	} else {
		r = libvirt_attach(a->libvirt, rp->domain_uuid, rp->device_xml, rp->flags, err,
				   err_size);
	}
	if (r >= 0) /* in the guest: the bridge learns the MAC where the VF sends from */
		standby_host_to_vf(rp->standby_xml);
	vfp_restore_point_free(rp);
	return r;
}

/**
 * vm_swap_steer() - the guest's MAC of failover VF @pci steered onto its
 * standby's path through the PFs its bridge has for ports (standby-steer.h),
 * before the VF leaves; how many PFs took it (0: none to steer through)
 *
 * Logged when refused: the swap goes on without it, as it did before.
 */
int vm_swap_steer(struct agent *a, const char *pci)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	char err[AGENT_ERR_SIZE] = "";
	int r = rp ? standby_steer(a, rp->standby_xml, true, err, sizeof(err)) : 0;

	if (r < 0)
		log_warning("swap: VF %s: the guest's MAC onto its standby's PF: %s", pci, err);
	else if (r > 0)
		log_info("swap: VF %s: the guest's MAC in the unicast filter of %d PF(s) on its "
			 "standby's bridge", pci, r);
	vfp_restore_point_free(rp);
	return r < 0 ? 0 : r;
}

/*
 * VF @pci carries its guest's traffic again (a swap gone forward onto it, or
 * back to it): the standby's static FDB entry and, with @unsteer, the MAC
 * steered to its PFs (vm_swap_steer()), if any is left, out.
 */
void vm_swap_settled(struct agent *a, const char *pci, bool unsteer)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	char err[AGENT_ERR_SIZE] = "";

	if (rp)
		standby_host_to_vf(rp->standby_xml);
	if (rp && unsteer && standby_steer(a, rp->standby_xml, false, err, sizeof(err)) < 0)
		log_warning("swap: VF %s: the guest's MAC out of its standby's PFs: %s", pci, err);
	vfp_restore_point_free(rp);
}

/**
 * vm_swap_standby_sent() - how many frames the guest of failover VF @pci has
 * sent through its standby (standby_host_sent()); -ENODEV when nothing counts them
 */
int vm_swap_standby_sent(struct agent *a, const char *pci, uint64_t *ret_packets)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	int r = rp ? standby_host_sent(rp->standby_xml, ret_packets) : -ENODEV;

	vfp_restore_point_free(rp);
	return r;
}

/* 1 when the domain VF @pci's restore point names has it, 0 when not, <0 when unknown. */
int vm_swap_in_domain(struct agent *a, const char *pci)
{
	return a->libvirt ? vf_in_domain(a, pci) : -1;
}

/*
 * VF @pci, out of its guest for good (swapped out): its device and standby
 * dropped from its restore point, so that its release restores its host side
 * and detaches nothing (its device XML now names the new VF's interface too:
 * the same MAC and alias).
 */
int vm_swap_forget_domain(struct agent *a, const char *pci)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	int r = 0;

	if (rp && (rp->device_xml || rp->standby_xml)) {
		vfp_restore_point_set(&rp->device_xml, NULL);
		vfp_restore_point_set(&rp->standby_xml, NULL);
		vfp_restore_point_set(&rp->dummy_xml, NULL);
		r = restore_point_save(a, pci, rp);
	}
	vfp_restore_point_free(rp);
	return r;
}

/* Whether VF @pci is a failover NIC's in a domain: what a swap can move. */
bool vm_swap_possible(struct agent *a, const char *pci, char *why, size_t why_size)
{
	struct vfp_restore_point *rp = failover_point(a, pci, why, why_size);

	vfp_restore_point_free(rp);
	return rp != NULL;
}

/* Its MAC steered by @rp's steered_xml, recorded first; the record gone when nothing took it. */
static int keep_steered(struct agent *a, const char *pci, struct vfp_restore_point *rp)
{
	char err[AGENT_ERR_SIZE] = "";
	int r = restore_point_update(a, pci, rp), n;

	n = r >= 0 ? standby_steer(a, rp->steered_xml, true, err, sizeof(err)) : 0;
	if (n < 0)
		log_warning("VF %s: the guest's MAC onto its kept standby's PF: %s", pci, err);
	else if (n > 0)
		log_info("VF %s: the guest's MAC in the unicast filter of %d PF(s) on its kept "
			 "standby's bridge while the VF leaves", pci, n);
	if (r >= 0 && n <= 0 && (r = vfp_restore_point_set(&rp->steered_xml, NULL)) >= 0)
		r = restore_point_update(a, pci, rp);
	return r;
}

/*
 * VF @pci's standby stays in its guest when the VF leaves it (a live
 * migration moves the guest with its standby; the destination plugs a VF of
 * its own beside it): moved in the VF's restore point from the pair to the
 * steering that the VF's leaving ends (vm-detach.c's leave_domain()), and the
 * guest's MAC steered onto the standby's PFs meanwhile, as a swap's is.
 */
int vm_swap_keep_standby(struct agent *a, const char *pci)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	int r = 0;

	if (rp && rp->standby_xml) {
		standby_host_to_standby(rp->standby_xml); /* the VF goes next */
		free(rp->steered_xml);
		rp->steered_xml = rp->standby_xml;
		rp->standby_xml = NULL;
		r = keep_steered(a, pci, rp);
	}
	vfp_restore_point_free(rp);
	return r;
}
