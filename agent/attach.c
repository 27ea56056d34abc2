/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/attach.h"
#include "agent/container/netns-pin.h"
#include "agent/container/container.h"
#include "agent/container/netns.h"
#include "agent/events.h"
#include "agent/hold-watch.h"
#include "agent/log.h"
#include "agent/owner.h"
#include "agent/pf/pf-side.h"
#include "agent/swap-hold.h"
#include "agent/vf-reset.h"
#include "agent/vm/libvirt.h"
#include "agent/vm/vm-swap.h"
#include "agent/vm/vm.h"

/* One VF keeps the name asked for; several get it with their position. */
static int ifname_for(struct agent *a, const struct agent_netns_request *q, const char *pci,
		      size_t i, size_t n, char *buf, size_t size, char *err, size_t err_size)
{
	struct vfp_inventory *inv = agent_get_inventory(a);
	const struct vfp_vf *v = vfp_inventory_find_vf(inv, pci);
	const char *own = v && vfp_vf_get_netdev(v) ? vfp_vf_get_netdev(v) : "net";

	if (n == 1)
		snprintf(buf, size, "%s", q->ifname ? q->ifname : own);
	else
		snprintf(buf, size, "%.13s%zu", q->ifname ? q->ifname : "net", i);
	vfp_inventory_unref(inv);
	if (strlen(buf) <= 15)
		return 0;
	snprintf(err, err_size, "ifname: \"%s\" is longer than 15 characters", buf);
	return -EINVAL;
}

/* A VF whose rollback failed is not known to be home: never free, never silently reserved. */
static void rollback_failed(struct agent *a, const struct vfp_allocation *alloc, const char *pci,
			    const char *why)
{
	char reason[AGENT_ERR_SIZE];

	agent_errf(reason, sizeof(reason), "rollback of a failed attach of allocation %s failed: %s",
		   vfp_allocation_get_id(alloc), why);
	agent_quarantine_vf(a, pci, reason);
}

/* The VFs before @n back, in reverse: what a failed attach undoes. */
static void undo_netns(struct agent *a, const struct vfp_allocation *alloc, size_t n, int fd)
{
	while (n-- > 0) {
		const struct vfp_allocation_vf *vf = vfp_allocation_get_vf(alloc, n);
		char err[AGENT_ERR_SIZE];

		if (container_restore_vf(a, vf, fd, err, sizeof(err)) < 0)
			rollback_failed(a, alloc, vf->pci, err);
	}
}

static int netns_vfs(struct agent *a, const struct vfp_allocation *alloc,
		     const struct agent_netns_request *q, const struct container_target *t,
		     char *err, size_t err_size)
{
	size_t i, n = vfp_allocation_get_vf_count(alloc);
	int r = 0;

	for (i = 0; r >= 0 && i < n; i++) {
		const char *pci = vfp_allocation_get_vf(alloc, i)->pci;
		struct container_undo undone;
		char ifname[80], msg[AGENT_ERR_SIZE] = "";

		r = ifname_for(a, q, pci, i, n, ifname, sizeof(ifname), err, err_size);
		if (r < 0)
			break;
		r = container_attach_vf(a, alloc, i, t, ifname, &undone, msg, sizeof(msg));
		if (r < 0 && undone.failed)
			rollback_failed(a, alloc, pci, undone.why);
		if (r < 0)
			snprintf(err, err_size, "VF %s: %s%s%s", pci, msg[0] ? msg : strerror(-r),
				 undone.failed ? "; rolling back failed, VF quarantined: " : "",
				 undone.failed ? undone.why : "");
		else
			log_info("VF %s: allocation %s: %s in %s", pci,
				 vfp_allocation_get_id(alloc), ifname, t->netns);
	}
	if (r < 0 && i > 0)
		undo_netns(a, alloc, i - 1, t->fd);
	return r;
}

/* The VFs of one allocation, and where they go. */
struct attach_job {
	const struct vfp_allocation *alloc;
	const struct agent_netns_request *netns;
	const struct container_target *target;
	const struct vm_target *domain;
};

typedef int (*attach_fn)(struct agent *a, const struct attach_job *j, char *err,
			 size_t err_size);

typedef void (*undo_fn)(struct agent *a, const struct attach_job *j);

/*
 * @fn between the attach intent's begin and its confirm: a crash in between
 * is reconciled. The begin does not wait for the disk: a namespace, a PF's
 * settings and a running domain do not outlive a power cut that would lose
 * it, and before libvirt changes a domain's persistent config the VF's
 * restore point is written durably, which makes the intent before it
 * durable too (the WAL replays in order). An attach done that the ledger
 * cannot record (a full disk) is undone by @undo: the ledger will say it
 * failed once it has room, and the answer says so now, never a success
 * the ledger does not show.
 */
static int in_intent(struct agent *a, const struct attach_job *j, attach_fn fn, undo_fn undo,
		     char *err, size_t err_size)
{
	const char *id = vfp_allocation_get_id(j->alloc);
	int c, r = agent_intent_begin(a, id, VFP_OP_ATTACH, false, err, err_size);

	if (r < 0)
		return r;
	r = fn(a, j, err, err_size);
	c = agent_intent_confirm(a, id, VFP_OP_ATTACH, r >= 0, r < 0 ? err : NULL);
	if (c < 0 && r >= 0) {
		undo(a, j);
		agent_intent_defer(a, id, VFP_OP_ATTACH, false, "the ledger could not record it");
		snprintf(err, err_size, "the attach could not be recorded in the ledger (%s): it "
			 "was undone", strerror(-c));
		r = c;
	}
	return r;
}

static int netns_job(struct agent *a, const struct attach_job *j, char *err, size_t err_size)
{
	return netns_vfs(a, j->alloc, j->netns, j->target, err, err_size);
}

static void netns_undo(struct agent *a, const struct attach_job *j)
{
	undo_netns(a, j->alloc, vfp_allocation_get_vf_count(j->alloc), j->target->fd);
}

/**
 * agent_attach_netns() - allocation @id's VFs into the namespace @q names
 *
 * Every VF, or none. The namespace is opened before the intent is written:
 * one that does not exist changes nothing.
 */
int agent_attach_netns(struct agent *a, const char *id, const struct agent_netns_request *q,
		       char *err, size_t err_size)
{
	struct container_target t = { .netns = q->netns, .fd = -1, .addresses = q->addresses,
				       .n_addresses = q->n_addresses, .gateway = q->gateway,
				       .mtu = q->mtu, .userspace = q->userspace };
	struct attach_job j = { .netns = q, .target = &t };
	struct vfp_allocation *alloc = NULL;
	int r = agent_get_allocation(a, id, &alloc, err, err_size);

	if (r >= 0)
		r = netns_open(q->netns, &t.fd, err, err_size);
	if (r >= 0 && netns_is_host(t.fd)) {
		snprintf(err, err_size, "netns: \"%.64s\" is the host's network namespace: VFs go "
			 "into containers' namespaces only", q->netns);
		r = -EINVAL;
	}
	if (r >= 0)
		r = netns_inode(t.fd, &t.inode);
	if (r >= 0 && (r = netns_cookie(t.fd, &t.cookie)) == -ENOPROTOOPT)
		r = 0; /* a kernel before 5.14: the inode alone */
	if (r < 0 && !err[0])
		snprintf(err, err_size, "netns: %s: %s", q->netns, strerror(-r));
	if (r >= 0)
		r = owner_check_netns(vfp_allocation_get_owner(alloc), t.inode, t.cookie, q->netns,
				      err, err_size);
	j.alloc = alloc;
	if (r >= 0)
		r = in_intent(a, &j, netns_job, netns_undo, err, err_size);
	if (t.fd >= 0)
		close(t.fd);
	vfp_allocation_unref(alloc);
	if (r >= 0)
		netns_unpin(id); /* attached: a namespace that dies must give its VFs back */
	if (r >= 0)
		events_emit_allocation(a->events, id, VFP_ALLOCATION_ATTACHED);
	return r;
}

/* With neither live nor config asked for, the domain's state decides: live while it runs. */
static int domain_flags(const struct agent_domain_request *q, const struct libvirt_domain *d,
			unsigned *ret, char *err, size_t err_size)
{
	bool live = q->live > 0, config = q->config > 0;

	if (q->live < 0 && q->config < 0) {
		live = d->active;
		config = !d->active && d->persistent;
	}
	if (!live && !config) {
		snprintf(err, err_size, "live, config: at least one must be true");
		return -EINVAL;
	}
	if (config && !d->persistent) {
		snprintf(err, err_size, "config: domain %s is transient: it has no config",
			 d->name);
		return -EINVAL;
	}
	*ret = (live ? LIBVIRT_LIVE : 0) | (config ? LIBVIRT_CONFIG : 0);
	return 0;
}

/* The VFs before @n back out of the domain, in reverse. */
static void undo_domain(struct agent *a, const struct vfp_allocation *alloc, size_t n)
{
	while (n-- > 0) {
		const struct vfp_allocation_vf *vf = vfp_allocation_get_vf(alloc, n);
		char err[AGENT_ERR_SIZE];

		if (vm_restore_vf(a, vf, err, sizeof(err)) < 0)
			rollback_failed(a, alloc, vf->pci, err);
	}
}

static int domain_job(struct agent *a, const struct attach_job *j, char *err, size_t err_size)
{
	size_t i, n = vfp_allocation_get_vf_count(j->alloc);
	int r = 0;

	for (i = 0; r >= 0 && i < n; i++) {
		const char *pci = vfp_allocation_get_vf(j->alloc, i)->pci;
		char msg[AGENT_ERR_SIZE] = "";

		r = vm_attach_vf(a, j->alloc, i, j->domain, NULL, NULL, msg, sizeof(msg));
		if (r < 0)
			snprintf(err, err_size, "VF %s: %s", pci, msg[0] ? msg : strerror(-r));
		else
			log_info("VF %s: allocation %s: in domain %s (%s)", pci,
				 vfp_allocation_get_id(j->alloc), j->domain->name, j->domain->uuid);
	}
	if (r < 0 && i > 0)
		undo_domain(a, j->alloc, i - 1);
	return r;
}

static void domain_undo(struct agent *a, const struct attach_job *j)
{
	undo_domain(a, j->alloc, vfp_allocation_get_vf_count(j->alloc));
}

/**
 * agent_domain_attach_vfs() - allocation @id's VFs into the domain @q names
 *
 * The ledger's attach intent brackets the work. A failure leaves every VF
 * as it was, and the message is libvirt's. No event: see agent_attach_domain().
 */
int agent_domain_attach_vfs(struct agent *a, const char *id, const struct agent_domain_request *q,
			    char *err, size_t err_size)
{
	struct libvirt_domain d = { 0 };
	struct vm_target t = { 0 };
	struct attach_job j = { .domain = &t };
	struct vfp_allocation *alloc = NULL;
	int r = agent_get_allocation(a, id, &alloc, err, err_size);

	if (r >= 0)
		r = libvirt_lookup(a->libvirt, q->domain, &d, err, err_size);
	if (r >= 0)
		r = owner_check_domain(vfp_allocation_get_owner(alloc), d.name, d.uuid, err,
				       err_size);
	if (r >= 0)
		r = domain_flags(q, &d, &t.flags, err, err_size);
	t.uuid = d.uuid, t.name = d.name;
	j.alloc = alloc;
	if (r >= 0)
		r = in_intent(a, &j, domain_job, domain_undo, err, err_size);
	vfp_allocation_unref(alloc);
	return r;
}

int agent_attach_domain(struct agent *a, const char *id, const struct agent_domain_request *q,
			char *err, size_t err_size)
{
	int r = agent_domain_attach_vfs(a, id, q, err, err_size);

	if (r >= 0)
		events_emit_allocation(a->events, id, VFP_ALLOCATION_ATTACHED);
	return r;
}

/* The reservation @id held while @hold_while exists, or no longer held (NULL). */
static int set_hold(struct agent *a, const char *id, const char *hold_while, char *err,
		    size_t err_size)
{
	int r = ledger_set_hold(a, id, hold_while, err, err_size);

	if (r >= 0)
		hold_watch_changed(a->holds);
	return r;
}

/**
 * agent_hold() - allocation @id held while the file @hold_while exists, or
 * no longer held (NULL), whether reserved or attached
 *
 * An attached allocation's hold counts once its domain ends: its VFs come
 * back to the host and it stays reserved for its owner while the file
 * exists (OpenNebula's poweroff keeps a VM's devices booked). -EBUSY when
 * it is neither reserved nor attached.
 */
int agent_hold(struct agent *a, const char *id, const char *hold_while, char *err,
	       size_t err_size)
{
	return set_hold(a, id, hold_while, err, err_size);
}

/*
 * @alloc's failover standbys stay in the guest when its VFs leave it (a live
 * migration: the guest moves with them), the guest's MAC steered onto their
 * PFs meanwhile (vm_swap_keep_standby()); all or none: @err names the VF
 * that failed, and those kept before it are as they were again
 */
static int keep_standbys(struct agent *a, const struct vfp_allocation *alloc, char *err,
			 size_t err_size)
{
	size_t i, n = vfp_allocation_get_vf_count(alloc);
	int r = 0;

	for (i = 0; r >= 0 && i < n; i++)
		if ((r = vm_swap_keep_standby(a, vfp_allocation_get_vf(alloc, i)->pci)) < 0)
			snprintf(err, err_size, "VF %s: keeping its standby: %s",
				 vfp_allocation_get_vf(alloc, i)->pci, strerror(-r));
	while (r < 0 && i-- > 0)
		vm_keep_undone(a, vfp_allocation_get_vf(alloc, i)->pci);
	return r;
}

/**
 * agent_detach() - allocation @id's VFs back to the host; it stays reserved,
 * held for its owner while the file @hold_while exists (NULL: while its
 * owner does, as every reservation)
 * @keep_standby: a failover NIC's standby stays in the guest, only its VF
 *	leaves (a live migration's source)
 *
 * The detach intent brackets the work; a crash in between is rolled forward.
 */
int agent_detach(struct agent *a, const char *id, const char *hold_while, bool keep_standby,
		 char *err, size_t err_size)
{
	struct vfp_allocation *alloc = NULL;
	int r;

	swap_hold_end(a, id); /* a swap's steering left: its row would make the detach busy */
	r = agent_get_allocation(a, id, &alloc, err, err_size);
	if (r >= 0) /* before the VFs move: a refused hold leaves them where they are */
		r = set_hold(a, id, hold_while, err, err_size);
	if (r >= 0)
		r = agent_intent_begin(a, id, VFP_OP_DETACH, true, err, err_size);
	if (r >= 0) {
		int c;

		if (keep_standby) /* in the intent: the steering it makes is a detach's to end */
			r = keep_standbys(a, alloc, err, err_size);
		if (r >= 0)
			r = agent_detach_all(a, alloc, NULL, err, err_size);
		c = agent_intent_confirm(a, id, VFP_OP_DETACH, r >= 0, r < 0 ? err : NULL);
		if (c < 0 && r >= 0) { /* kept, and recorded before the next operation */
			snprintf(err, err_size, "the detach is done, but the ledger cannot record it "
				 "yet: %s", strerror(-c));
			r = c;
		}
	}
	vfp_allocation_unref(alloc);
	if (r >= 0)
		events_emit_allocation(a->events, id, VFP_ALLOCATION_RESERVED);
	return r;
}

/* @vf back to the host the way @rp (loaded once, by the caller) says it went. */
static int detach_one(struct agent *a, const struct vfp_allocation_vf *vf,
		      const struct vfp_restore_point *rp, char *msg, size_t size)
{
	if (rp && rp->domain_uuid)
		return vm_restore_vf_from(a, vf, rp, msg, size);
	return container_restore_vf(a, vf, -1, msg, size);
}

/**
 * agent_detach_all() - every VF of @alloc back to the host, from a domain or a namespace
 * @rps: their restore points in @alloc's order (a release's, agent_load_restore_points()),
 *	 or NULL to load each here
 *
 * Each VF goes back the way its restore point says it went; every VF is
 * tried, and the first error is returned.
 */
int agent_detach_all(struct agent *a, const struct vfp_allocation *alloc,
		     struct vfp_restore_point *const *rps, char *err, size_t err_size)
{
	int r = 0;

	for (size_t i = 0; i < vfp_allocation_get_vf_count(alloc); i++) {
		const struct vfp_allocation_vf *vf = vfp_allocation_get_vf(alloc, i);
		struct vfp_restore_point *own = rps ? NULL : restore_point_load(a, vf->pci);
		char msg[AGENT_ERR_SIZE];
		int rr = detach_one(a, vf, rps ? rps[i] : own, msg, sizeof(msg));

		vfp_restore_point_free(own);
		if (msg[0])
			log_warning("VF %s: %s", vf->pci, msg);
		if (rr < 0 && r == 0) {
			r = rr;
			snprintf(err, err_size, "VF %s: %s", vf->pci, msg[0] ? msg : strerror(-rr));
		}
	}
	return r;
}
