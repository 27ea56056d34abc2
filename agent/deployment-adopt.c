/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The VFs a scheduler chose: OpenNebula books host PCI devices itself
 * (HostSharePCI) and writes a VM's PCI = [TYPE = "NIC", ...] into the
 * deployment file as a plain <hostdev> naming the device. When a VF the
 * agent manages is held, reserved, by this domain's own allocation (the
 * deploy hook claimed it by its address with the NIC's settings), it is
 * prepared here, before the guest starts: the PF side (MAC, VLAN, rate,
 * spoofchk, trust, GUIDs) and its device XML, which takes the place of the
 * <hostdev>; an InfiniBand VF also gets its IPoIB dummy NIC. A file posted
 * again (a retried deploy) gets the device recorded the first time.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/deployment-adopt.h"
#include "agent/log.h"
#include "agent/pf/pf-side.h"
#include "agent/vm/domain-xml.h"
#include "agent/vm/dummy-nic.h"
#include "agent/vm/vm.h"
#include "libvfpool/macro.h"

/* Allocation @id, when it holds exactly the one VF @pci and is not ending. */
static struct vfp_allocation *named_allocation(struct agent *a, const char *id, const char *pci)
{
	struct vfp_allocation *alloc = NULL;
	char ignored[AGENT_ERR_SIZE];

	if (agent_get_allocation(a, id, &alloc, ignored, sizeof(ignored)) < 0)
		return NULL;
	if (vfp_allocation_get_vf_count(alloc) == 1 &&
	    !strcmp(vfp_allocation_get_vf(alloc, 0)->pci, pci) &&
	    (vfp_allocation_get_state(alloc) == VFP_ALLOCATION_RESERVED ||
	     vfp_allocation_get_state(alloc) == VFP_ALLOCATION_ATTACHED))
		return alloc;
	vfp_allocation_unref(alloc);
	return NULL;
}

/* The device recorded for domain @uuid when this VF was prepared for it before, in @doc. */
static xmlNodePtr recorded_device(struct agent *a, xmlDocPtr doc, const char *pci,
				  const char *uuid)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	xmlNodePtr n = NULL;

	if (rp && rp->device_xml && rp->domain_uuid && !strcasecmp(rp->domain_uuid, uuid))
		n = domxml_device_node(doc, rp->device_xml);
	vfp_restore_point_free(rp);
	return n;
}

/* The VF prepared (its attach intent begun and confirmed around it), its device in @d's doc. */
static int prepare(struct deployment_adopt *d, struct vfp_allocation *alloc, xmlNodePtr *ret)
{
	const char *id = vfp_allocation_get_id(alloc);
	struct vm_target t = { .uuid = d->uuid, .name = d->name, .pending = true };
	struct vm_devices dev = { 0 };
	int r = agent_intent_begin(d->agent, id, VFP_OP_ATTACH, false, d->err, d->err_size);

	if (r < 0)
		return r;
	r = vm_attach_vf(d->agent, alloc, 0, &t, NULL, &dev, d->err, d->err_size);
	agent_intent_confirm(d->agent, id, VFP_OP_ATTACH, r >= 0, r >= 0 ? NULL : "rewrite failed");
	xmlFreeNode(dev.standby); /* in its restore point; the file's <hostdev> is one device */
	if (dev.device)
		xmlSetTreeDoc(dev.device, d->doc);
	*ret = dev.device;
	return r;
}

/* The IPoIB dummy NIC of an InfiniBand VF, from the address its claim carries. */
static int add_dummy(struct deployment_adopt *d, const struct vfp_allocation *alloc,
		     const char *pci)
{
	uint32_t v4;

	if (d->n_dummies >= DEPLOYMENT_ADOPT_MAX)
		return -E2BIG;
	if (dummy_nic_claim_ipv4(alloc, &v4) < 0) {
		snprintf(d->err, d->err_size, "devices/hostdev %s: an InfiniBand VF needs the IPv4 "
			 "address of its NIC in its claim (\"ip\") for the IPoIB dummy NIC", pci);
		return -EINVAL;
	}
	if (!(d->dummies[d->n_dummies] = dummy_nic_node(d->agent, v4)))
		return -ENOMEM;
	d->n_dummies++;
	return 0;
}

/**
 * deployment_adopt_vf() - the <hostdev> of VF @pci, held by allocation @id
 * of this domain, replaced by the VF prepared for it
 *
 * 0 when done, 1 when the allocation is not one to adopt (more VFs, or
 * ending: left to the caller's checks), <0 with @d->err set.
 */
int deployment_adopt_vf(struct deployment_adopt *d, const char *pci, const char *id)
{
	struct vfp_allocation *alloc = named_allocation(d->agent, id, pci);
	xmlNodePtr node = NULL;
	int r = 0;

	if (!alloc)
		return 1;
	if (vfp_allocation_get_state(alloc) == VFP_ALLOCATION_RESERVED) {
		r = d->n < DEPLOYMENT_ADOPT_MAX ? prepare(d, alloc, &node) : -E2BIG;
		if (r == -E2BIG)
			snprintf(d->err, d->err_size, "devices/hostdev: more than %d VFs",
				 DEPLOYMENT_ADOPT_MAX);
		if (r >= 0)
			d->prepared[d->n++] = vfp_allocation_ref(alloc);
	} else if (!(node = recorded_device(d->agent, d->doc, pci, d->uuid))) {
		r = -EBUSY;
		snprintf(d->err, d->err_size, "devices/hostdev %s: allocation %s has no device "
			 "recorded for domain %s: release it first", pci, id, d->uuid);
	}
	if (r >= 0 && !node) {
		r = -ENOMEM;
		snprintf(d->err, d->err_size, "out of memory");
	}
	if (r >= 0 && dummy_nic_vf_is_ib(d->agent, pci))
		r = add_dummy(d, alloc, pci);
	if (r >= 0 && (r = domxml_replace_pci_hostdev(d->doc, pci, node)) >= 0) {
		node = NULL;
		d->n_replaced++;
	}
	xmlFreeNode(node);
	vfp_allocation_unref(alloc);
	return r;
}

/* Every VF this rewrite prepared back as it was (the claims stay: the hook's to give back). */
void deployment_adopt_undo(struct deployment_adopt *d)
{
	for (size_t i = 0; i < d->n; i++) {
		char err[AGENT_ERR_SIZE];

		if (vm_restore_vf(d->agent, vfp_allocation_get_vf(d->prepared[i], 0), err,
				  sizeof(err)) < 0)
			log_error("allocation %s: rollback: %s",
				  vfp_allocation_get_id(d->prepared[i]), err);
	}
}

/* The dummy NICs after the last device; every reference dropped. */
void deployment_adopt_finish(struct deployment_adopt *d, bool ok)
{
	for (size_t i = 0; i < d->n_dummies; i++) {
		if (ok)
			domxml_append_device(d->doc, d->dummies[i]);
		else
			xmlFreeNode(d->dummies[i]);
	}
	for (size_t i = 0; i < d->n; i++)
		vfp_allocation_unref(d->prepared[i]);
	d->n = d->n_dummies = 0;
}
