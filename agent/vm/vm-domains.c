/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What libvirt's domains say about the ledger's VFs: whether a VM
 * allocation's domain lives and holds its VFs (the reconcile's questions),
 * and the VFs domains hold that the ledger does not give them.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/log.h"
#include "agent/vm/domain-xml.h"
#include "agent/vm/libvirt.h"
#include "agent/vm/private.h"
#include "agent/pf/pf-side.h"
#include "agent/vm/vm.h"
#include "libvfpool/macro.h"

/* How long a deployment file's allocation waits for its domain to appear. */
#define PENDING_GRACE_SECONDS 300

/* Whether @vf's restore point gives it to a domain. */
bool vm_is_vm_vf(struct agent *a, const struct vfp_allocation_vf *vf)
{
	struct vfp_restore_point *rp = restore_point_load(a, vf->pci);
	bool is_vm = rp && rp->domain_uuid;

	vfp_restore_point_free(rp);
	return is_vm;
}

/* The domain appeared: its VFs' restore points stop waiting for it. */
static void mark_seen(struct agent *a, const struct vfp_allocation *alloc)
{
	for (size_t i = 0; i < vfp_allocation_get_vf_count(alloc); i++) {
		const char *pci = vfp_allocation_get_vf(alloc, i)->pci;
		struct vfp_restore_point *rp = restore_point_load(a, pci);

		if (rp && rp->pending) {
			rp->pending = false;
			restore_point_save(a, pci, rp);
		}
		vfp_restore_point_free(rp);
	}
}

/**
 * vm_domain_alive() - 1 while @alloc's domain exists, 0 once it is gone,
 * -1 when @alloc is not in a domain or libvirt cannot say
 *
 * A deployment file's allocation counts as alive for PENDING_GRACE_SECONDS
 * before its domain first appears; the main loop looks again every minute.
 */
int vm_domain_alive(struct agent *a, const struct vfp_allocation *alloc)
{
	const struct vfp_allocation_vf *vf = vfp_allocation_get_vf(alloc, 0);
	struct vfp_restore_point *rp = vf ? restore_point_load(a, vf->pci) : NULL;
	struct libvirt_domain d = { 0 };
	bool pending = rp && rp->pending;
	char err[AGENT_ERR_SIZE];
	int r = -1;

	if (rp && rp->domain_uuid && a->libvirt) {
		r = libvirt_lookup(a->libvirt, rp->domain_uuid, &d, err, sizeof(err));
		if (r >= 0 && pending)
			mark_seen(a, alloc);
		if (r == -ENOENT && pending && libvirt_conn_was_seen(a->libvirt, rp->domain_uuid))
			pending = false; /* it came and went between two looks */
		if (r == -ENOENT && pending && time(NULL) - rp->since < PENDING_GRACE_SECONDS)
			r = 1;
		else
			r = r >= 0 ? 1 : r == -ENOENT ? 0 : -1;
	}
	vfp_restore_point_free(rp);
	return r;
}

/* 1 when the domain in @pci's restore point holds it, 0 when not, -1 when libvirt cannot say. */
int vf_in_domain(struct agent *a, const char *pci)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	char err[AGENT_ERR_SIZE], *xml = NULL;
	int r = 0;

	if (rp && rp->domain_uuid && rp->pending)
		r = -1; /* its domain is not there yet: the lease says, not this */
	else if (rp && rp->domain_uuid)
		r = libvirt_domain_xml(a->libvirt, rp->domain_uuid, &xml, err, sizeof(err));
	if (xml)
		r = domxml_has_pci_hostdev(xml, pci);
	else if (r < 0)
		r = r == -ENOENT ? 0 : -1;
	free(xml);
	vfp_restore_point_free(rp);
	return r;
}

/**
 * vm_is_attached() - 1 when every VF of @alloc is in its domain, 0 when one
 * is not, -1 when @alloc is not a VM allocation or libvirt cannot say
 *
 * For the reconcile after a crash during an attach: the device must be in
 * the domain's XML, not only the domain exist.
 */
int vm_is_attached(struct agent *a, const struct vfp_allocation *alloc)
{
	int r = -1;

	if (!a->libvirt || !vfp_allocation_get_vf_count(alloc) ||
	    !vm_is_vm_vf(a, vfp_allocation_get_vf(alloc, 0)))
		return -1;
	for (size_t i = 0; i < vfp_allocation_get_vf_count(alloc); i++) {
		r = vf_in_domain(a, vfp_allocation_get_vf(alloc, i)->pci);
		if (r <= 0)
			return r;
	}
	return r;
}

/* Whether the ledger gives @pci to the domain @uuid. */
static bool ledger_gives(struct agent *a, const char *pci, const char *uuid)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	bool yes = rp && rp->domain_uuid && strcmp(rp->domain_uuid, uuid) == 0;

	vfp_restore_point_free(rp);
	return yes;
}

static int add_foreign(struct agent_foreign_vfs *f, const char *pci, const struct libvirt_domain *d)
{
	struct agent_foreign_vf *v;

	if (!GREEDY_REALLOC(f->vfs, f->cap, f->n + 1))
		return -ENOMEM;
	v = &f->vfs[f->n++];
	snprintf(v->pci, sizeof(v->pci), "%s", pci);
	snprintf(v->domain, sizeof(v->domain), "%s", d->name);
	snprintf(v->uuid, sizeof(v->uuid), "%s", d->uuid);
	return 0;
}

static void check_domain(struct agent *a, const struct vfp_inventory *inv,
			 const struct libvirt_domain_desc *dom, struct agent_foreign_vfs *foreign)
{
	char **pcis = NULL;
	size_t n = 0;

	if (domxml_pci_hostdevs(dom->xml, &pcis, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!vfp_inventory_find_vf(inv, pcis[i]) || ledger_gives(a, pcis[i], dom->d.uuid))
			continue;
		log_warning("VF %s is in domain %s (%s), but the ledger does not give it to that "
			    "domain: reported, left alone", pcis[i], dom->d.name, dom->d.uuid);
		add_foreign(foreign, pcis[i], &dom->d);
	}
	domxml_strv_free(pcis, n);
}

static int add_running(struct agent_running_domains *r, const struct libvirt_domain *d)
{
	if (!d->active)
		return 0;
	if (!GREEDY_REALLOC(r->d, r->cap, r->n + 1))
		return -ENOMEM;
	snprintf(r->d[r->n].name, sizeof(r->d[r->n].name), "%s", d->name);
	snprintf(r->d[r->n].uuid, sizeof(r->d[r->n].uuid), "%s", d->uuid);
	r->n++;
	return 0;
}

/**
 * vm_report_foreign() - the VFs domains hold that the ledger does not give
 * them, and the domains that run
 *
 * Logged, and kept for GET /v1/host as "foreign_vfs"; nothing is changed.
 * The running domains are kept for its "pending" (a VF booked for one of
 * them and not in it), so that a request never waits for libvirt: as of
 * this look, made at start and on each of libvirt's events. When libvirt
 * cannot be asked, both stay as the last look saw them.
 */
void vm_report_foreign(struct agent *a)
{
	struct agent_foreign_vfs foreign = { 0 };
	struct agent_running_domains running = { 0 };
	struct libvirt_domain_desc *doms = NULL;
	struct vfp_inventory *inv;
	size_t n = 0;
	char err[AGENT_ERR_SIZE];

	if (!a->libvirt || libvirt_list_domains(a->libvirt, &doms, &n, err, sizeof(err)) < 0)
		return;
	inv = agent_get_inventory(a);
	for (size_t i = 0; i < n; i++) {
		check_domain(a, inv, &doms[i], &foreign);
		if (add_running(&running, &doms[i].d) < 0)
			log_error("domain %s: %s", doms[i].d.name, strerror(ENOMEM));
	}
	ledger_set_domains(a, &foreign, &running);
	vfp_inventory_unref(inv);
	libvirt_domain_descs_free(doms, n);
}

/* Reconcile's questions about a VF a domain has (agent_add_attach_path()). */
const struct agent_attach_path vm_attach_path = {
	.owns = vm_is_vm_vf,
	.is_attached = vm_is_attached,
	.restore_vf = vm_restore_vf,
};
