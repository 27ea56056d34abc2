/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/log.h"
#include "agent/vm/domain-xml.h"
#include "agent/vm/dummy-nic.h"
#include "agent/vm/failover-xml.h"
#include "agent/vm/hostdev-xml.h"
#include "agent/vm/libvirt.h"
#include "agent/vm/private.h"
#include "agent/vm/standby-host.h"
#include "agent/vm/standby-steer.h"
#include "agent/netlink/nlmsg.h"
#include "agent/pf/pf-side.h"
#include "agent/vm/vm.h"
#include "libvfpool/macro.h"

/* How long a deployment file's allocation waits for its domain to appear. */
#define PENDING_GRACE_SECONDS 300

static bool libvirt_managed(struct agent *a)
{
	struct vfp_config *config = agent_get_config(a);
	bool managed = vfp_config_get_libvirt_managed(config);

	vfp_config_unref(config);
	return managed;
}

/*
 * libvirt sets an Ethernet VF's MAC and VLAN itself (<interface type='hostdev'>).
 * An InfiniBand VF has no Ethernet MAC: a VM's claim names its NIC's (OpenNebula's
 * lease, its IPoIB dummy's), which tells the NIC's allocation apart, not the VF's.
 */
static struct vfp_settings pf_side_settings(const struct vfp_settings *settings, bool ethernet)
{
	struct vfp_settings s = *settings;

	s.mac[0] = '\0';
	if (ethernet)
		s.vlan = s.qos = s.vlan_proto = VFP_UNSET;
	return s;
}

static void device_spec(struct agent *a, const struct vfp_allocation *alloc, size_t i,
			const struct vf_facts *f, const struct vm_nic *nic, struct hostdev_spec *s)
{
	const struct vfp_settings *settings = vfp_allocation_get_settings(alloc);

	*s = (struct hostdev_spec){ .pci = f->pci, .ethernet = f->ethernet,
				    .managed = libvirt_managed(a), .vlan = -1 };
	if (!f->ethernet)
		return;
	s->has_mac = true;
	if (nic && nic->has_mac)
		memcpy(s->mac, nic->mac, sizeof(s->mac));
	else if (!(i == 0 && settings->mac[0] && vfp_mac_parse(settings->mac, s->mac) == 0))
		hostdev_xml_stable_mac(vfp_allocation_get_id(alloc), (unsigned)i, s->mac);
	if (nic && nic->vlan >= 0)
		s->vlan = nic->vlan;
	else if (settings->vlan > 0 && settings->vlan <= 4094)
		s->vlan = settings->vlan;
}

/* Unmanaged hostdevs: vfio-pci through sysfs, the driver before it in the restore point. */
int bind_vfio(struct agent *a, const struct vf_facts *f, struct vfp_restore_point *rp, char *err,
	      size_t err_size)
{
	char driver[64] = "";
	int r = vfp_device_read_driver(a->ctx, f->pci, driver, sizeof(driver));

	if (r >= 0 && strcmp(driver, "vfio-pci") == 0)
		return 0;
	if (r >= 0 && (r = vfp_restore_point_set(&rp->driver, driver)) >= 0)
		r = restore_point_update(a, f->pci, rp); /* a driver binding ends with a power cut */
	if (r >= 0)
		r = vfp_device_bind_driver(a->ctx, f->pci, "vfio-pci");
	if (r == -ENXIO)
		snprintf(err, err_size, "vfio-pci did not take %s (is the vfio-pci module loaded?)",
			 f->pci);
	else if (r < 0)
		snprintf(err, err_size, "binding %s to vfio-pci: %s", f->pci, strerror(-r));
	if (r < 0)
		vfp_device_bind_driver(a->ctx, f->pci, driver);
	agent_refresh_vf(a, f->pci, "VF rebound"); /* the one VF, at once: not udev's later rescan */
	return r;
}

static int restore_driver(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
			  char *err, size_t err_size)
{
	int r;

	if (!rp->driver)
		return 0;
	r = vfp_device_bind_driver(a->ctx, pci, rp->driver); /* "": unbound, as it was */
	agent_refresh_vf(a, pci, "VF rebound");
	if (r < 0)
		snprintf(err, err_size, "rebinding VF %s to %s: %s", pci,
			 rp->driver[0] ? rp->driver : "no driver", strerror(-r));
	return r;
}

static int record_domain(struct vfp_restore_point *rp, const struct vm_target *t, const char *xml,
			 const char *dummy_xml, const char *standby_xml)
{
	if (vfp_restore_point_set(&rp->standby_xml, standby_xml) < 0)
		return -ENOMEM;
	rp->flags = t->pending ? LIBVIRT_LIVE | LIBVIRT_CONFIG : t->flags;
	rp->since = (long long)time(NULL);
	rp->pending = t->pending;
	if (vfp_restore_point_set(&rp->domain_uuid, t->uuid) < 0 ||
	    vfp_restore_point_set(&rp->domain, t->name ? t->name : "") < 0 ||
	    vfp_restore_point_set(&rp->device_xml, xml) < 0 ||
	    vfp_restore_point_set(&rp->dummy_xml, dummy_xml) < 0)
		return -ENOMEM;
	return 0;
}

/* Every step after the PF side, undone in reverse. */
static void undo(struct agent *a, const struct vf_facts *f, const struct vfp_restore_point *rp)
{
	char msg[AGENT_ERR_SIZE] = "";

	if (restore_driver(a, f->pci, rp, msg, sizeof(msg)) < 0)
		log_error("rollback: %s", msg);
	pf_side_restore(a, f, rp, msg, sizeof(msg));
	if (msg[0])
		log_error("rollback: VF %s: %s", f->pci, msg);
	restore_point_save(a, f->pci, NULL);
}

/* The standby the NIC asks for (its network's, else the claim's); NULL for a VF alone. */
static const struct vfp_failover *failover_of(const struct vfp_allocation *alloc,
					      const struct vm_nic *nic)
{
	const struct vfp_failover *f = nic && nic->failover
					       ? nic->failover
					       : &vfp_allocation_get_settings(alloc)->failover;

	return f->kind != VFP_STANDBY_NONE ? f : NULL;
}

/* An InfiniBand VF, or any but Ethernet, has no failover: net_failover pairs by MAC. */
static int check_failover(const struct vf_facts *f, const struct vfp_failover *fo, char *err,
			  size_t err_size)
{
	if (!fo || f->ethernet)
		return 0;
	snprintf(err, err_size, "failover: VF %s is not an Ethernet VF: a standby pairs with "
		 "its VF by MAC (the guest's net_failover), which IPoIB has not; ask for it "
		 "without failover", f->pci);
	return -EINVAL;
}

/*
 * A VF's elements (vm_devices) and their text, which its restore point keeps;
 * @done once the PF side changed, @saved once the restore point naming the
 * domain is in the ledger (written before the PF side or the driver changed).
 */
struct prepared {
	struct vm_devices nodes;
	char *xml, *standby_xml, *dummy_xml;
	bool done, saved;
};

static void prepared_free(struct prepared *p)
{
	xmlFreeNode(p->nodes.device);
	xmlFreeNode(p->nodes.standby);
	free(p->xml);
	free(p->standby_xml);
	free(p->dummy_xml);
}

/* @spec's teaming with the standby @fo, into @p. */
static int standby_for(const struct vfp_failover *fo, struct hostdev_spec *spec,
		       char alias[FAILOVER_ALIAS_LEN], struct prepared *p, char *err,
		       size_t err_size)
{
	char source[64];
	int r = vfp_failover_standby_source(fo, spec->vlan, source, sizeof(source), err,
					    err_size);

	if (r >= 0)
		r = standby_host_check(fo->kind, source, spec->vlan, err, err_size);
	if (r < 0)
		return r;
	failover_xml_alias(spec->mac, alias);
	spec->teaming = alias;
	p->nodes.standby = failover_xml_standby(fo, source, spec->mac, spec->vlan);
	p->standby_xml = hostdev_xml_text(p->nodes.standby);
	return p->standby_xml ? 0 : -ENOMEM;
}

/* The VF's device element, and its text, into @p. */
static int device_for(const struct hostdev_spec *spec, struct prepared *p)
{
	p->nodes.device = hostdev_xml_node(spec);
	p->xml = hostdev_xml_text(p->nodes.device);
	return p->xml ? 0 : -ENOMEM;
}

/*
 * The devices of VF @i for @t (with a failover pair's standby @fo, a
 * running domain's IPoIB dummy NIC) into @p, and recorded in @rp: nothing
 * on the host depends on them, so the restore point written before the PF
 * side changes names the domain already. *@managed: libvirt binds vfio-pci.
 */
static int devices_for(struct agent *a, const struct vfp_allocation *alloc, size_t i,
		       const struct vm_target *t, const struct vm_nic *nic,
		       const struct vf_facts *f, const struct vfp_failover *fo,
		       struct vfp_restore_point *rp, struct prepared *p, bool *managed, char *err,
		       size_t err_size)
{
	struct hostdev_spec spec = { 0 };
	char alias[FAILOVER_ALIAS_LEN];
	int r = 0;

	device_spec(a, alloc, i, f, nic, &spec);
	*managed = spec.managed;
	if (fo)
		r = standby_for(fo, &spec, alias, p, err, err_size);
	if (r >= 0 && device_for(&spec, p) < 0)
		r = -ENOMEM;
	if (r >= 0 && t->flags && !t->pending)
		r = dummy_nic_xml(a, alloc, i, &p->dummy_xml);
	if (r >= 0)
		r = record_domain(rp, t, p->xml, p->dummy_xml, p->standby_xml);
	if (r == -ENOMEM)
		snprintf(err, err_size, "out of memory");
	return r;
}

/*
 * The devices of VF @i (recorded in @rp), then the PF side and the driver
 * into @p, each restore point write before the change it describes.
 */
static int prepare_vf(struct agent *a, const struct vfp_allocation *alloc, size_t i,
		      const struct vm_target *t, const struct vm_nic *nic,
		      const struct vf_facts *f, struct vfp_restore_point *rp, struct prepared *p,
		      char *err, size_t err_size)
{
	struct vfp_settings settings = pf_side_settings(vfp_allocation_get_settings(alloc),
							f->ethernet);
	const struct vfp_failover *fo = failover_of(alloc, nic);
	struct vfp_vf_config want;
	bool managed = true;
	int r;

	r = check_failover(f, fo, err, err_size);
	if (r >= 0)
		r = vfconfig_from_request(&settings, vfp_allocation_get_vf(alloc, i), i == 0,
					  &want, err, err_size);
	if (nic && nic->max_tx_rate > 0) /* libvirt takes no <bandwidth> on a hostdev */
		want.max_tx_rate = nic->max_tx_rate;
	if (nic && nic->spoofchk >= 0) /* nor the network's SPOOFCHK and TRUST */
		want.spoofchk = nic->spoofchk;
	if (nic && nic->trust >= 0)
		want.trust = nic->trust;
	if (r >= 0)
		r = devices_for(a, alloc, i, t, nic, f, fo, rp, p, &managed, err, err_size);
	if (r >= 0) {
		r = pf_side_apply(a, f, &want, true, rp, err, err_size);
		p->done = r >= 0;
		p->saved = rp->has_pf_side; /* written with its snapshot, before the change */
	}
	if (r >= 0 && !managed)
		r = bind_vfio(a, f, rp, err, err_size);
	p->saved |= r >= 0 && rp->driver; /* bind_vfio() wrote it with the old driver */
	return r;
}

/*
 * The PF side refused (and put itself back): the restore point written
 * before it keeps its snapshot but no longer names the domain.
 */
static void unrecord_domain(struct agent *a, const char *pci, struct vfp_restore_point *rp)
{
	char **fields[] = { &rp->domain_uuid, &rp->domain, &rp->device_xml, &rp->dummy_xml,
			    &rp->standby_xml };

	for (size_t k = 0; k < ELEMENTSOF(fields); k++)
		vfp_restore_point_set(fields[k], NULL);
	rp->flags = 0;
	rp->since = 0;
	rp->pending = false;
	restore_point_update(a, pci, rp);
}

static int leave_domain(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
			char *err, size_t err_size);

/*
 * The IPoIB dummy NIC after its VF, with the same flags. Refused, the VF
 * leaves the domain again (under the PF's lock: a rollback may wait for the
 * guest); *@stuck when it would not, and then it keeps its restore point.
 */
static int attach_dummy(struct agent *a, const char *pci, const struct vm_target *t,
			struct vfp_restore_point *rp, bool *stuck, char *err, size_t err_size)
{
	char msg[AGENT_ERR_SIZE] = "", why[AGENT_ERR_SIZE] = "";
	int r;

	if (!rp->dummy_xml)
		return 0;
	r = libvirt_attach(a->libvirt, t->uuid, rp->dummy_xml, t->flags, msg, sizeof(msg));
	if (r >= 0)
		return 0;
	snprintf(err, err_size, "the IPoIB dummy NIC: %s", msg);
	vfp_restore_point_set(&rp->dummy_xml, NULL); /* never in: its MAC may be another NIC's */
	restore_point_update(a, pci, rp);
	if (leave_domain(a, pci, rp, why, sizeof(why)) < 0) {
		*stuck = true;
		snprintf(err, err_size, "the IPoIB dummy NIC: %.200s; rolling back, VF %s stays in "
			 "domain %s: %.200s", msg, pci, t->uuid, why);
	}
	return r;
}

/*
 * Whether the domain has the standby @standby already (by its alias): a
 * guest that came with it (a live migration, a VF plugged back after a
 * detach that kept it). Unknown counts as not: libvirt then says.
 */
static bool has_standby(struct agent *a, const struct vm_target *t, const char *standby)
{
	char alias[64], msg[AGENT_ERR_SIZE], *xml = NULL;
	bool yes;

	domxml_device_alias(standby, alias, sizeof(alias));
	yes = alias[0] && libvirt_domain_xml(a->libvirt, t->uuid, &xml, msg, sizeof(msg)) >= 0 &&
	      domxml_has_alias(xml, alias) == 1;
	free(xml);
	return yes;
}

/*
 * The VF's device, after its standby when it has one (the VF's <teaming>
 * names the standby's alias, which must be there first; one there already
 * is kept); a refused VF takes out again a standby it brought.
 */
static int attach_pair(struct agent *a, const struct vm_target *t, const char *xml,
		       const char *standby, char *err, size_t err_size)
{
	const char *came = NULL;
	char msg[AGENT_ERR_SIZE];
	int r;

	if (standby && has_standby(a, t, standby)) {
		came = standby; /* the guest came with it: the VF joins it again */
		standby = NULL;
	}
	r = standby ? libvirt_attach(a->libvirt, t->uuid, standby, t->flags, err, err_size) : 0;

	if (r < 0) {
		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, err_size, "failover: the standby NIC: %s", msg);
		return r;
	}
	r = libvirt_attach(a->libvirt, t->uuid, xml, t->flags, err, err_size);
	if (r < 0 && standby && libvirt_detach(a->libvirt, t->uuid, standby, t->flags, msg,
					       sizeof(msg)) < 0)
		log_error("rollback: the standby NIC stays in domain %s: %s", t->uuid, msg);
	if (r >= 0 && came)
		standby_host_to_vf(came);
	return r;
}

static int attach_vf(struct agent *a, const struct vfp_allocation *alloc, size_t i,
		     const struct vm_target *t, const struct vm_nic *nic,
		     struct vfp_restore_point *rp, struct vm_devices *ret, char *err,
		     size_t err_size)
{
	const char *pci = vfp_allocation_get_vf(alloc, i)->pci;
	struct vf_facts f;
	struct prepared p = { 0 };
	bool stuck = false;
	int r = vf_facts_read(a, pci, &f);

	if (r < 0)
		snprintf(err, err_size, "VF %s is not on this host any more", pci);
	if (r >= 0)
		r = prepare_vf(a, alloc, i, t, nic, &f, rp, &p, err, err_size);
	if (r >= 0 && (t->flags & LIBVIRT_CONFIG)) /* before libvirt writes the config */
		r = restore_point_save(a, pci, rp);
	else if (r >= 0 && !p.saved) /* before a running or a pending domain: a power cut ends it */
		r = restore_point_update(a, pci, rp);
	if (r >= 0 && t->flags)
		r = attach_pair(a, t, p.xml, p.standby_xml, err, err_size);
	if (r >= 0 && t->flags)
		r = attach_dummy(a, pci, t, rp, &stuck, err, err_size);
	if (r < 0 && p.done && !stuck)
		undo(a, &f, rp);
	else if (r < 0 && !p.done && p.saved)
		unrecord_domain(a, pci, rp);
	if (r >= 0 && ret) {
		*ret = p.nodes;
		p.nodes = (struct vm_devices){ 0 };
	}
	prepared_free(&p);
	return r;
}

/**
 * vm_attach_vf() - VF @i of @alloc to domain @t
 * @nic: what a deployment file's NIC asks (MAC, VLAN), or NULL
 * @ret: the VF's device and its failover standby, as elements (the caller's); may be NULL
 *
 * Under its PF's lock. With @t->flags 0 the device is only prepared and
 * recorded: the caller puts its elements into the domain's XML (the
 * restore point keeps their text, which a detach hands libvirt).
 */
int vm_attach_vf(struct agent *a, const struct vfp_allocation *alloc, size_t i,
		 const struct vm_target *t, const struct vm_nic *nic, struct vm_devices *ret,
		 char *err, size_t err_size)
{
	struct vfp_restore_point *rp = pf_side_begin(vfp_allocation_get_vf(alloc, i));
	int r = rp ? attach_vf(a, alloc, i, t, nic, rp, ret, err, err_size) : -ENOMEM;

	if (rp)
		pf_side_end(vfp_allocation_get_vf(alloc, i), rp);
	return r;
}

/* How long a detach waits, once libvirt's call returned, for its device to leave the domain. */
static int detach_wait(struct agent *a)
{
	struct vfp_config *config = agent_get_config(a);
	int seconds = vfp_config_get_detach_wait(config);

	vfp_config_unref(config);
	return seconds;
}

/*
 * 1 while domain @uuid holds @pci (in its live XML while it runs, else in
 * its config), 0 once it does not or is gone, <0 when libvirt cannot say.
 */
static int domain_holds(struct agent *a, const char *uuid, const char *pci, char *err,
			size_t err_size)
{
	char *xml = NULL;
	int r = libvirt_domain_xml(a->libvirt, uuid, &xml, err, err_size);

	if (r == -ENOENT) {
		err[0] = '\0';
		return 0;
	}
	if (r >= 0 && (r = domxml_has_pci_hostdev(xml, pci)) < 0)
		snprintf(err, err_size, "libvirt gave domain %s's XML unreadable", uuid);
	free(xml);
	return r;
}

static const char *domain_name(const struct vfp_restore_point *rp)
{
	return rp->domain && rp->domain[0] ? rp->domain : "?";
}

/*
 * libvirt's detach returns once QEMU removed the device, or after its own
 * wait (5 s) with the device still there: QEMU only asked the guest, and
 * the device goes when the guest acknowledges (libvirt's DEVICE_REMOVED).
 * Done only once the domain's XML no longer has it; a device-removed event
 * makes it look again at once, else after the config's libvirt.detach_wait
 * seconds it gives up:
 * -ETIMEDOUT, the VF left with the domain and on vfio-pci.
 */
int wait_gone(struct agent *a, const struct vfp_restore_point *rp, const char *pci, char *err,
	      size_t err_size)
{
	int wait = detach_wait(a);
	struct timespec deadline;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += wait;
	for (bool said = false;; said = true) {
		unsigned seen = libvirt_conn_device_events(a->libvirt);

		r = domain_holds(a, rp->domain_uuid, pci, err, err_size);
		if (r <= 0)
			return r;
		if (!said)
			log_debug("VF %s: still in domain %s after the detach: waiting up to %d s for "
				  "the guest to let it go", pci, domain_name(rp), wait);
		if (libvirt_conn_wait_device_event(a->libvirt, seen, &deadline) < 0)
			break;
	}
	snprintf(err, err_size, "still in domain %s (%s): unplug not acknowledged in %d s",
		 domain_name(rp), rp->domain_uuid, wait); /* a ledger reason: short */
	return -ETIMEDOUT;
}

/*
 * The failover pair's standby out, once its VF is: a standby that stays
 * (libvirt refused) is a virtio NIC of the guest's, logged; the VF is home.
 */
static void leave_standby(struct agent *a, const struct vfp_restore_point *rp)
{
	char msg[AGENT_ERR_SIZE] = "";

	if (libvirt_detach(a->libvirt, rp->domain_uuid, rp->standby_xml, rp->flags, msg,
			   sizeof(msg)) < 0)
		log_warning("domain %s: the failover standby NIC stays: %s", domain_name(rp), msg);
}

/* VF @pci, out of its guest: a failover VF's MAC on the PF off the guest's, under the PF's lock. */
void vf_left_guest(struct agent *a, const char *pci, const char *device_xml)
{
	struct vfp_allocation_vf vf = { 0 };
	struct vf_target t;
	struct vf_facts f;

	if (!device_xml || !strstr(device_xml, "<teaming") || vf_facts_read(a, pci, &f) < 0)
		return;
	snprintf(vf.pf, sizeof(vf.pf), "%.*s", (int)sizeof(vf.pf) - 1, f.pf_pci);
	t = pf_side_target(a, &f);
	pthread_mutex_lock(pf_side_lock(&vf));
	standby_host_vf_gone(&t, device_xml);
	pthread_mutex_unlock(pf_side_lock(&vf));
}

/*
 * A kept standby's steering (vm_swap_keep_standby()) out of its PFs: once
 * its VF @left the guest (the VF's MAC is off the guest's: the PF takes the
 * guest's frames for the standby's bridge again), or when the VF stays, and
 * then the pair is recorded as it was before (a later detach takes both out).
 * A steering that stays in (refused) stays recorded, for that detach to retry.
 */
static void unsteer_kept(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
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

/**
 * vm_keep_undone() - VF @pci stays in its guest after all: a kept standby's
 * steering (vm_swap_keep_standby()) out and the pair recorded again
 */
void vm_keep_undone(struct agent *a, const char *pci)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);

	if (rp && rp->steered_xml)
		unsteer_kept(a, pci, rp, false);
	vfp_restore_point_free(rp);
}

/* @rp's devices out of its domain, the VF's last; the VF's MAC off the guest's once it left. */
static int detach_devices(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
			  char *err, size_t err_size)
{
	int r = 0;

	if (rp->dummy_xml) /* before its VF, the reverse of the attach; one gone is gone */
		r = libvirt_detach(a->libvirt, rp->domain_uuid, rp->dummy_xml, rp->flags, err,
				   err_size);
	if (r >= 0)
		r = libvirt_detach(a->libvirt, rp->domain_uuid, rp->device_xml, rp->flags, err,
				   err_size);
	if (r >= 0)
		r = wait_gone(a, rp, pci, err, err_size);
	if (r >= 0)
		vf_left_guest(a, pci, rp->device_xml);
	return r;
}

/* @pci out of the domain @rp names, where it still is; no lock held (libvirt may take seconds). */
static int leave_domain(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
			char *err, size_t err_size)
{
	int r;

	if (!rp->domain_uuid || !rp->device_xml)
		return 0;
	r = a->libvirt ? detach_devices(a, pci, rp, err, err_size) : -ENOTCONN;
	if (rp->steered_xml)
		unsteer_kept(a, pci, rp, r >= 0);
	if (r >= 0 && rp->standby_xml)
		leave_standby(a, rp);
	if (r == -ENOTCONN && !err[0])
		snprintf(err, err_size, "libvirt is not connected: VF %s stays with domain %s", pci,
			 rp->domain_uuid);
	return r;
}

/* Under the PF's lock, the device out of every domain: its driver, its PF-side settings. */
static int restore_host_side(struct agent *a, const char *pci, char *err, size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	char msg[AGENT_ERR_SIZE] = "";
	struct vf_facts f;
	int r;

	if (!rp)
		return 0;
	r = restore_driver(a, pci, rp, err, err_size);
	if (r >= 0 && vf_facts_read(a, pci, &f) >= 0)
		pf_side_restore(a, &f, rp, msg, sizeof(msg));
	if (r >= 0 && msg[0]) {
		snprintf(err, err_size, "restoring VF settings on the PF: %s", msg);
		r = -EIO;
	}
	if (r >= 0)
		r = restore_point_update(a, pci, NULL); /* restored: again changes nothing */
	vfp_restore_point_free(rp);
	return r;
}

/**
 * vm_restore_vf() - @vf out of its domain and back to the host
 *
 * Detached where the domain still has it, and only once the domain no
 * longer has it its driver and PF-side settings are restored and its
 * restore point cleared. A detach that failed, or that the guest has not
 * acknowledged within libvirt.detach_wait (-ETIMEDOUT), changes nothing
 * else: a VF still in a guest must not be rebound (unbinding it from
 * vfio-pci while QEMU holds it blocks in the kernel for good). The PF's lock
 * is taken only for the host side, after libvirt.
 */
int vm_restore_vf(struct agent *a, const struct vfp_allocation_vf *vf, char *err, size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, vf->pci);
	int r = vm_restore_vf_from(a, vf, rp, err, err_size);

	vfp_restore_point_free(rp);
	return r;
}

/*
 * vm_restore_vf() from @rp, @vf's restore point as its caller loaded it (a
 * release loads it once); the host side reads it again under the PF's lock.
 */
int vm_restore_vf_from(struct agent *a, const struct vfp_allocation_vf *vf,
		       const struct vfp_restore_point *rp, char *err, size_t err_size)
{
	pthread_mutex_t *lock = pf_side_lock(vf);
	int r;

	err[0] = '\0';
	if (!rp)
		return 0;
	r = leave_domain(a, vf->pci, rp, err, err_size);
	if (r < 0)
		return r;
	pthread_mutex_lock(lock);
	r = restore_host_side(a, vf->pci, err, err_size);
	pthread_mutex_unlock(lock);
	return r;
}

/**
 * vm_finish_detach() - VF @pci, which no allocation holds, out of the domain
 * its restore point still names, and back to the host
 *
 * For a repair of a VF whose detach the guest held up: 0 at once when no
 * domain is named; -ETIMEDOUT while the domain still holds it.
 */
int vm_finish_detach(struct agent *a, const char *pci, char *err, size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	bool in_domain = rp && rp->domain_uuid;
	struct vfp_allocation_vf vf = { 0 };
	struct vf_facts f;

	err[0] = '\0';
	vfp_restore_point_free(rp);
	if (!in_domain) /* a container's leftovers, or none: not a domain's to finish */
		return 0;
	snprintf(vf.pci, sizeof(vf.pci), "%s", pci);
	if (vf_facts_read(a, pci, &f) >= 0)
		snprintf(vf.pf, sizeof(vf.pf), "%.*s", (int)sizeof(vf.pf) - 1, f.pf_pci);
	return vm_restore_vf(a, &vf, err, err_size);
}

/**
 * vm_detach_finishable() - whether @pci's restore point still names a
 * domain that no longer holds it (the guest let go, the domain ended)
 */
bool vm_detach_finishable(struct agent *a, const char *pci)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	char err[AGENT_ERR_SIZE];
	bool yes = rp && rp->domain_uuid && !rp->pending && a->libvirt &&
		   domain_holds(a, rp->domain_uuid, pci, err, sizeof(err)) == 0;

	vfp_restore_point_free(rp);
	return yes;
}

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
