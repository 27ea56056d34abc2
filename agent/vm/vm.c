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
#include "agent/netlink/nlmsg.h"
#include "agent/pf/pf-side.h"
#include "agent/vm/vm.h"
#include "libvfpool/macro.h"

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

