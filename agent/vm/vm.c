/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/vm/domain-xml.h"
#include "agent/vm/hostdev-xml.h"
#include "agent/vm/libvirt.h"
#include "agent/netlink/nlmsg.h"
#include "agent/pf/pf-side.h"
#include "agent/vm/vm.h"

/* How long a deployment file's allocation waits for its domain to appear. */
#define PENDING_GRACE_SECONDS 300

static bool libvirt_managed(struct agent *a)
{
	struct vfp_config *config = agent_get_config(a);
	bool managed = vfp_config_get_libvirt_managed(config);

	vfp_config_unref(config);
	return managed;
}

/* libvirt sets an Ethernet VF's MAC and VLAN itself (<interface type='hostdev'>). */
static json_t *pf_side_settings(json_t *settings, bool ethernet)
{
	json_t *s = json_is_object(settings) ? json_copy(settings) : json_object();

	if (ethernet) {
		json_object_del(s, "mac");
		json_object_del(s, "vlan");
		json_object_del(s, "qos");
		json_object_del(s, "vlan_proto");
	}
	return s;
}

static void device_spec(struct agent *a, json_t *alloc, size_t i, const struct vf_facts *f,
			const struct vm_nic *nic, struct hostdev_spec *s)
{
	json_t *settings = json_object_get(alloc, "settings");
	const char *mac = json_string_value(json_object_get(settings, "mac"));
	json_int_t vlan = json_integer_value(json_object_get(settings, "vlan"));

	*s = (struct hostdev_spec){ .pci = f->pci, .ethernet = f->ethernet,
				    .managed = libvirt_managed(a), .vlan = -1 };
	if (!f->ethernet)
		return;
	s->has_mac = true;
	if (nic && nic->has_mac)
		memcpy(s->mac, nic->mac, sizeof(s->mac));
	else if (!(i == 0 && mac && nl_parse_mac(mac, s->mac) == 0))
		hostdev_xml_stable_mac(json_string_value(json_object_get(alloc, "id")),
				       (unsigned)i, s->mac);
	if (nic && nic->vlan >= 0)
		s->vlan = nic->vlan;
	else if (vlan > 0 && vlan <= 4094)
		s->vlan = (int)vlan;
}

/* Unmanaged hostdevs: vfio-pci through sysfs, the driver before it in the restore point. */
static int bind_vfio(struct agent *a, const struct vf_facts *f, json_t *orig, char *err,
		     size_t err_size)
{
	char driver[64] = "";
	int r = vfp_device_read_driver(a->ctx, f->pci, driver, sizeof(driver));

	if (r >= 0 && strcmp(driver, "vfio-pci") == 0)
		return 0;
	if (r >= 0) {
		json_object_set_new(orig, "driver", json_string(driver));
		r = restore_point_save(a, f->pci, orig);
	}
	if (r >= 0)
		r = vfp_device_bind_driver(a->ctx, f->pci, "vfio-pci");
	if (r == -ENXIO)
		snprintf(err, err_size, "vfio-pci did not take %s (is the vfio-pci module loaded?)",
			 f->pci);
	else if (r < 0)
		snprintf(err, err_size, "binding %s to vfio-pci: %s", f->pci, strerror(-r));
	if (r < 0)
		vfp_device_bind_driver(a->ctx, f->pci, driver);
	agent_rescan(a, "VF rebound"); /* udev says so too on a real host; a simulated one is quiet */
	return r;
}

static int restore_driver(struct agent *a, const char *pci, json_t *orig, char *err,
			  size_t err_size)
{
	const char *driver = json_string_value(json_object_get(orig, "driver"));
	int r;

	if (!driver)
		return 0;
	r = vfp_device_bind_driver(a->ctx, pci, driver); /* "": unbound, as it was */
	agent_rescan(a, "VF rebound");
	if (r < 0)
		snprintf(err, err_size, "rebinding VF %s to %s: %s", pci,
			 driver[0] ? driver : "no driver", strerror(-r));
	return r;
}

static void record_domain(json_t *orig, const struct vm_target *t, const char *xml)
{
	json_object_set_new(orig, "domain_uuid", json_string(t->uuid));
	json_object_set_new(orig, "domain", json_string(t->name ? t->name : ""));
	json_object_set_new(orig, "flags", json_integer(t->pending ? LIBVIRT_LIVE | LIBVIRT_CONFIG
								   : t->flags));
	json_object_set_new(orig, "device_xml", json_string(xml));
	json_object_set_new(orig, "since", json_integer((json_int_t)time(NULL)));
	if (t->pending)
		json_object_set_new(orig, "pending", json_true());
}

/* Every step after the PF side, undone in reverse. */
static void undo(struct agent *a, const struct vf_facts *f, json_t *orig)
{
	char msg[256] = "";

	if (restore_driver(a, f->pci, orig, msg, sizeof(msg)) < 0)
		log_error("rollback: %s", msg);
	pf_side_restore(a, f, orig, msg, sizeof(msg));
	if (msg[0])
		log_error("rollback: VF %s: %s", f->pci, msg);
	restore_point_save(a, f->pci, NULL);
}

static int attach_vf(struct agent *a, json_t *alloc, size_t i, const struct vm_target *t,
		     const struct vm_nic *nic, char **ret_xml, char *err, size_t err_size)
{
	json_t *vf = json_array_get(json_object_get(alloc, "vfs"), i);
	const char *pci = json_string_value(json_object_get(vf, "pci"));
	json_t *orig = json_object(), *settings = NULL;
	struct hostdev_spec spec;
	struct vf_settings want;
	struct vf_facts f;
	char *xml = NULL;
	int r = vf_facts_read(a, pci, &f), done = 0;

	if (r < 0)
		snprintf(err, err_size, "VF %s is not on this host any more", pci);
	if (r >= 0) {
		settings = pf_side_settings(json_object_get(alloc, "settings"), f.ethernet);
		r = vfconfig_from_request(settings, vf, i == 0, &want, err, err_size);
	}
	if (r >= 0 && (r = pf_side_apply(a, &f, &want, orig, err, err_size)) >= 0)
		done = 1;
	if (r >= 0)
		device_spec(a, alloc, i, &f, nic, &spec);
	if (r >= 0 && !spec.managed)
		r = bind_vfio(a, &f, orig, err, err_size);
	if (r >= 0 && !(xml = hostdev_xml_string(&spec)))
		r = -ENOMEM;
	if (r >= 0) {
		record_domain(orig, t, xml);
		r = restore_point_save(a, pci, orig); /* the intent, before libvirt is asked */
	}
	if (r >= 0 && t->flags)
		r = libvirt_attach(a->libvirt, t->uuid, xml, t->flags, err, err_size);
	if (r < 0 && done)
		undo(a, &f, orig);
	if (r >= 0 && ret_xml)
		*ret_xml = xml, xml = NULL;
	free(xml);
	json_decref(settings);
	json_decref(orig);
	return r;
}

/**
 * vm_attach_vf() - VF @i of @alloc to domain @t
 * @nic: what a deployment file's NIC asks (MAC, VLAN), or NULL
 * @ret_xml: the device XML (free() it); may be NULL
 *
 * Under its PF's lock. With @t->flags 0 the device is only prepared and
 * recorded: the caller puts it into the domain's XML.
 */
int vm_attach_vf(struct agent *a, json_t *alloc, size_t i, const struct vm_target *t,
		 const struct vm_nic *nic, char **ret_xml, char *err, size_t err_size)
{
	pthread_mutex_t *lock = pf_side_lock(json_array_get(json_object_get(alloc, "vfs"), i));
	int r;

	pthread_mutex_lock(lock);
	r = attach_vf(a, alloc, i, t, nic, ret_xml, err, err_size);
	pthread_mutex_unlock(lock);
	return r;
}

static int restore_vf(struct agent *a, json_t *vf, char *err, size_t err_size)
{
	const char *pci = json_string_value(json_object_get(vf, "pci"));
	json_t *orig = restore_point_load(a, pci);
	const char *uuid = json_string_value(json_object_get(orig, "domain_uuid"));
	const char *xml = json_string_value(json_object_get(orig, "device_xml"));
	unsigned flags = (unsigned)json_integer_value(json_object_get(orig, "flags"));
	char msg[256] = "";
	struct vf_facts f;
	int r = 0;

	err[0] = '\0';
	if (uuid && xml)
		r = a->libvirt ? libvirt_detach(a->libvirt, uuid, xml, flags, err, err_size)
			       : -ENOTCONN;
	if (r == -ENOTCONN && !err[0])
		snprintf(err, err_size, "libvirt is not connected: VF %s stays with domain %s", pci,
			 uuid);
	if (r >= 0 && orig)
		r = restore_driver(a, pci, orig, err, err_size);
	if (r >= 0 && orig && vf_facts_read(a, pci, &f) >= 0)
		pf_side_restore(a, &f, orig, msg, sizeof(msg));
	if (r >= 0 && msg[0]) {
		snprintf(err, err_size, "restoring VF settings on the PF: %s", msg);
		r = -EIO;
	}
	if (r >= 0 && orig)
		r = restore_point_save(a, pci, NULL);
	json_decref(orig);
	return r;
}

/**
 * vm_restore_vf() - @vf out of its domain and back to the host
 *
 * Detached where the domain still has it, its driver and PF-side settings
 * restored, its restore point cleared. A failed detach changes nothing
 * else: a VF still in a guest must not be rebound.
 */
int vm_restore_vf(struct agent *a, json_t *vf, char *err, size_t err_size)
{
	pthread_mutex_t *lock = pf_side_lock(vf);
	int r;

	pthread_mutex_lock(lock);
	r = restore_vf(a, vf, err, err_size);
	pthread_mutex_unlock(lock);
	return r;
}

/* Whether @vf's restore point gives it to a domain. */
bool vm_is_vm_vf(struct agent *a, json_t *vf)
{
	json_t *orig = restore_point_load(a, json_string_value(json_object_get(vf, "pci")));
	bool is_vm = json_object_get(orig, "domain_uuid") != NULL;

	json_decref(orig);
	return is_vm;
}

/* The domain appeared: its VFs' restore points stop waiting for it. */
static void mark_seen(struct agent *a, json_t *alloc)
{
	size_t i;
	json_t *vf;

	json_array_foreach(json_object_get(alloc, "vfs"), i, vf) {
		const char *pci = json_string_value(json_object_get(vf, "pci"));
		json_t *orig = restore_point_load(a, pci);

		if (json_object_del(orig, "pending") == 0)
			restore_point_save(a, pci, orig);
		json_decref(orig);
	}
}

/**
 * vm_domain_alive() - 1 while @alloc's domain exists, 0 once it is gone,
 * -1 when @alloc is not in a domain or libvirt cannot say
 *
 * A deployment file's allocation counts as alive for PENDING_GRACE_SECONDS
 * before its domain first appears; the main loop looks again every minute.
 */
int vm_domain_alive(struct agent *a, json_t *alloc)
{
	json_t *vf = json_array_get(json_object_get(alloc, "vfs"), 0);
	json_t *orig = vf ? restore_point_load(a, json_string_value(json_object_get(vf, "pci")))
			  : NULL;
	const char *uuid = json_string_value(json_object_get(orig, "domain_uuid"));
	bool pending = json_is_true(json_object_get(orig, "pending"));
	json_int_t since = json_integer_value(json_object_get(orig, "since"));
	struct libvirt_domain d = { 0 };
	char err[512];
	int r = -1;

	if (uuid && a->libvirt) {
		r = libvirt_lookup(a->libvirt, uuid, &d, err, sizeof(err));
		if (r >= 0 && pending)
			mark_seen(a, alloc);
		if (r == -ENOENT && pending && libvirt_conn_was_seen(a->libvirt, uuid))
			pending = false; /* it came and went between two looks */
		if (r == -ENOENT && pending && time(NULL) - since < PENDING_GRACE_SECONDS)
			r = 1;
		else
			r = r >= 0 ? 1 : r == -ENOENT ? 0 : -1;
	}
	json_decref(orig);
	return r;
}

/* 1 when the domain in @vf's restore point holds it, 0 when not, -1 when libvirt cannot say. */
static int vf_in_domain(struct agent *a, json_t *vf)
{
	const char *pci = json_string_value(json_object_get(vf, "pci"));
	json_t *orig = restore_point_load(a, pci), *held = NULL, *p;
	const char *uuid = json_string_value(json_object_get(orig, "domain_uuid"));
	char err[512], *xml = NULL;
	size_t i;
	int r = 0;

	if (uuid && json_is_true(json_object_get(orig, "pending")))
		r = -1; /* its domain is not there yet: the lease says, not this */
	else if (uuid && !(xml = libvirt_domain_xml(a->libvirt, uuid, err, sizeof(err))))
		r = strstr(err, "Domain not found") ? 0 : -1;
	if (xml)
		held = domxml_pci_hostdevs(xml);
	json_array_foreach(held, i, p)
		if (!strcmp(json_string_value(p), pci))
			r = 1;
	free(xml);
	json_decref(held);
	json_decref(orig);
	return r;
}

/**
 * vm_is_attached() - 1 when every VF of @alloc is in its domain, 0 when one
 * is not, -1 when @alloc is not a VM allocation or libvirt cannot say
 *
 * For the reconcile after a crash during an attach: the device must be in
 * the domain's XML, not only the domain exist.
 */
int vm_is_attached(struct agent *a, json_t *alloc)
{
	size_t i;
	json_t *vf;
	int r = -1;

	if (!a->libvirt || !vm_is_vm_vf(a, json_array_get(json_object_get(alloc, "vfs"), 0)))
		return -1;
	json_array_foreach(json_object_get(alloc, "vfs"), i, vf) {
		r = vf_in_domain(a, vf);
		if (r <= 0)
			return r;
	}
	return r;
}

/* Whether the ledger gives @pci to the domain @uuid. */
static bool ledger_gives(struct agent *a, const char *pci, const char *uuid)
{
	json_t *orig = restore_point_load(a, pci);
	const char *held = json_string_value(json_object_get(orig, "domain_uuid"));
	bool yes = held && strcmp(held, uuid) == 0;

	json_decref(orig);
	return yes;
}

static void check_domain(struct agent *a, const struct vfp_inventory *inv, json_t *dom,
			 json_t *foreign)
{
	const char *uuid = json_string_value(json_object_get(dom, "uuid"));
	const char *name = json_string_value(json_object_get(dom, "name"));
	json_t *pcis = domxml_pci_hostdevs(json_string_value(json_object_get(dom, "xml")));
	json_t *p;
	size_t i;

	json_array_foreach(pcis, i, p) {
		const char *pci = json_string_value(p);

		if (!vfp_inventory_find_vf(inv, pci) || ledger_gives(a, pci, uuid))
			continue;
		log_warning("VF %s is in domain %s (%s), but the ledger does not give it to that "
			    "domain: reported, left alone", pci, name, uuid);
		json_array_append_new(foreign, json_pack("{s:s, s:s, s:s}", "pci", pci, "domain",
							 name, "uuid", uuid));
	}
	json_decref(pcis);
}

/**
 * vm_report_foreign() - the VFs domains hold that the ledger does not give them
 *
 * Logged, and kept for GET /v1/host as "foreign_vfs"; nothing is changed.
 */
void vm_report_foreign(struct agent *a)
{
	struct vfp_inventory *inv;
	json_t *doms, *dom, *foreign;
	char err[512];
	size_t i;

	if (!a->libvirt || !(doms = libvirt_list_domains(a->libvirt, err, sizeof(err))))
		return;
	inv = agent_get_inventory(a);
	foreign = json_array();
	json_array_foreach(doms, i, dom)
		check_domain(a, inv, dom, foreign);
	pthread_mutex_lock(&a->ledger_lock);
	json_decref(a->foreign_vfs);
	a->foreign_vfs = foreign;
	pthread_mutex_unlock(&a->ledger_lock);
	vfp_inventory_unref(inv);
	json_decref(doms);
}
