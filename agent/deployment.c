/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/claim.h"
#include "agent/deployment.h"
#include "agent/deployment-adopt.h"
#include "agent/deployment-held.h"
#include "agent/deployment-sg.h"
#include "agent/give-back.h"
#include "agent/log.h"
#include "agent/owner.h"
#include "agent/pf/pf-side.h"
#include "agent/release.h"
#include "agent/vm/domain-xml.h"
#include "agent/vm/dummy-nic.h"
#include "agent/vm/one-attrs.h"
#include "agent/vm/vm.h"
#include "libvfpool/macro.h"

/* A slot per NIC on an SR-IOV network: its own allocation (update_nic, detach_nic reach it). */
#define MAX_POOLS AGENT_MAX_CLAIMS

struct rewrite {
	struct agent *agent;
	const struct agent_deployment *in;
	char *err;
	size_t err_size;
	xmlDocPtr doc;
	struct vfp_config *config;
	struct domxml_nic *nics;
	size_t n_nics;
	char uuid[37];
	char *name;
	const char *pools[MAX_POOLS];		/* slot i: NIC i's pool */
	char macs[MAX_POOLS][18];		/* and its MAC, "" when it has none */
	struct vfp_allocation *allocs[MAX_POOLS]; /* and its allocation, of one VF */
	size_t n_pools, used[MAX_POOLS];
	size_t n_begun; /* allocations whose attach intent is begun */
	bool reused;	/* the domain's own allocations, held since an earlier post */
	bool resumed;	/* the domain's own reservations, held since it ended: prepared anew */
	xmlNodePtr dummies; /* a holder of the dummy NICs, in IB order */
	size_t n_ib;
	struct deployment_adopt adopt; /* the <hostdev>s held for this domain by address */
};

static int fail(struct rewrite *w, int r, const char *format, ...) _printf_(3, 4);

static int fail(struct rewrite *w, int r, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vsnprintf(w->err, w->err_size, format, ap);
	va_end(ap);
	return r;
}

/* NIC @i's slot: its pool and MAC, in NIC order. */
static int nic_slot(struct rewrite *w, size_t i)
{
	const struct domxml_nic *nic = &w->nics[i];

	if (i >= MAX_POOLS)
		return fail(w, -EINVAL, "devices: more than %d NICs on SR-IOV networks", MAX_POOLS);
	w->pools[i] = nic->pool;
	w->macs[i][0] = '\0';
	if (nic->has_mac)
		snprintf(w->macs[i], sizeof(w->macs[i]), "%02x:%02x:%02x:%02x:%02x:%02x", nic->mac[0],
			 nic->mac[1], nic->mac[2], nic->mac[3], nic->mac[4], nic->mac[5]);
	w->n_pools = i + 1;
	return 0;
}

/* Whether the domain's held allocations are reservations (its domain ended), not attached. */
static bool held_reserved(const struct rewrite *w)
{
	for (size_t p = 0; p < w->n_pools; p++)
		if (vfp_allocation_get_state(w->allocs[p]) != VFP_ALLOCATION_RESERVED)
			return false;
	return true;
}

/* A claim that failed names one NIC's VF: the file's whole ask of each pool after it. */
static void say_asked(struct rewrite *w)
{
	size_t len = strlen(w->err);

	for (size_t p = 0; p < w->n_pools && len < w->err_size; p++) {
		unsigned n = 0;
		bool seen = false;

		for (size_t q = 0; q < w->n_pools; q++) {
			seen |= q < p && !strcmp(w->pools[q], w->pools[p]);
			n += !strcmp(w->pools[q], w->pools[p]);
		}
		if (!seen)
			len += (size_t)snprintf(w->err + len, w->err_size - len, "%s%u requested of "
						"pool \"%s\"", len && p ? ", " : " (this file's NICs: ",
						n, w->pools[p]);
	}
	if (len + 1 < w->err_size)
		snprintf(w->err + len, w->err_size - len, ")");
}

static int keyed_value(const char *list, const struct domxml_nic *nic, char *out, size_t size);

/*
 * The IPv4 address NIC @i's claim carries ("ip", for its IPoIB dummy NIC if its VF is IB):
 * ?ip=MAC=IP for it, else its OpenNebula MAC's; "" when neither (a plain ?ip= list counts
 * IB VFs, known only once they are prepared). Kept in the ledger, it goes with the VM's
 * claims to wherever it moves next (save and restore, migrate), and its dummy NIC with it.
 */
static void nic_ip_setting(struct rewrite *w, size_t i, char *out, size_t size)
{
	const struct domxml_nic *nic = &w->nics[i];
	char one[64];
	uint32_t v4;

	out[0] = '\0';
	if (w->in->ips && strchr(w->in->ips, '=') &&
	    keyed_value(w->in->ips, nic, one, sizeof(one)) == 0 && domxml_parse_ipv4(one, &v4) == 0)
		snprintf(out, size, "%.40s/32", one);
	else if (nic->has_ip)
		snprintf(out, size, "%u.%u.%u.%u/32", nic->ip >> 24, (nic->ip >> 16) & 0xff,
			 (nic->ip >> 8) & 0xff, nic->ip & 0xff);
}

/*
 * NIC @i's IB partition: ?pkey=MAC=KEY for it (OpenNebula's PKEY of its network, which
 * INHERIT_VNET_ATTR copies into the NIC), else its network's in the config; both given, they
 * agree. A bad key, or two keys, is refused naming the NIC.
 */
static int nic_pkey(struct rewrite *w, size_t i, int *ret)
{
	const struct domxml_nic *nic = &w->nics[i];
	const char *why = NULL;
	char one[32], a[8], b[8];
	json_t *j;
	int r;

	*ret = nic->pkey;
	if (keyed_value(w->in->pkeys, nic, one, sizeof(one)) < 0)
		return 0;
	j = json_string(one);
	r = j ? vfp_pkey_from_json(j, NULL, ret, &why) : -ENOMEM;
	json_decref(j);
	if (r < 0)
		return fail(w, r, "devices/interface[%u]: %s", nic->position,
			    why ? why : "out of memory");
	if (nic->pkey >= 0 && (nic->pkey & 0x7fff) != (*ret & 0x7fff)) {
		vfp_pkey_format(*ret, a);
		vfp_pkey_format(nic->pkey, b);
		return fail(w, -EINVAL, "devices/interface[%u]: pkey: %s, but its network in the "
			    "config is on partition %s", nic->position, a, b);
	}
	if (nic->pkey >= 0)
		*ret = nic->pkey; /* the config's membership */
	return 0;
}

/*
 * One allocation per NIC (of one VF, with the NIC's MAC in its settings: a
 * network update or a hot-detach of that NIC reaches its VF alone), all or
 * none, in one commit; or the allocations the domain already holds when this
 * file was posted before, or that it kept since it ended (held on a file).
 * A failover pair's standby is kept in its NIC's settings too (a swap, a
 * migration's claim on another host read it there).
 */
static int claim_all(struct rewrite *w, const char *owner)
{
	unsigned count[MAX_POOLS];
	struct vfp_claim claims[MAX_POOLS];
	struct vfp_settings settings[MAX_POOLS];
	struct vfp_owner o = { .kind = VFP_OWNER_VM, .name = owner, .uuid = w->uuid };
	int r = 0;

	for (size_t i = 0; r >= 0 && i < w->n_nics; i++) {
		r = nic_slot(w, i);
		count[i] = 1;
	}
	if (r >= 0)
		r = deployment_held(w->agent, owner, w->uuid, w->pools, (const char(*)[18])w->macs,
				    count, w->n_pools, w->allocs, w->err, w->err_size);
	if (r > 0) {
		w->resumed = held_reserved(w);
		w->reused = !w->resumed;
		return 0;
	}
	for (size_t p = 0; r >= 0 && p < w->n_pools; p++) {
		vfp_settings_init(&settings[p]);
		memcpy(settings[p].mac, w->macs[p], sizeof(settings[p].mac));
		nic_ip_setting(w, p, settings[p].ip, sizeof(settings[p].ip));
		if (r >= 0)
			r = nic_pkey(w, p, &settings[p].pkey);
		if (r >= 0)
			r = deployment_nic_security_groups(w->in->security_groups, &w->nics[p],
							   settings[p].security_groups,
							   sizeof(settings[p].security_groups),
							   w->err, w->err_size);
		if (w->nics[p].failover)
			settings[p].failover = *w->nics[p].failover;
		claims[p] = (struct vfp_claim){ .pool = w->pools[p], .count = count[p], .owner = &o,
						 .settings = w->macs[p][0] || settings[p].ip[0] ||
						 settings[p].pkey >= 0 || w->nics[p].failover ||
						 settings[p].security_groups[0] ?
						 &settings[p] : NULL,
						 .numa_node = -1, .attach = true };
	}
	if (r >= 0 && (r = agent_claim_all_quiet(w->agent, claims, w->n_pools, w->allocs, w->err,
						 w->err_size)) < 0)
		say_asked(w);
	return r;
}

/*
 * The value @list ("MAC=VALUE,MAC=VALUE") gives NIC @nic, into @out; 0 when
 * it names the NIC's MAC, -ENOENT when not (or @list is NULL).
 */
static int keyed_value(const char *list, const struct domxml_nic *nic, char *out, size_t size)
{
	for (const char *item = list; item && *item;
	     item = strchr(item, ',') ? strchr(item, ',') + 1 : NULL) {
		size_t len = strcspn(item, ","), key = strcspn(item, "=");
		unsigned char mac[6];
		char buf[32];

		if (key >= len || key >= sizeof(buf))
			continue;
		snprintf(buf, sizeof(buf), "%.*s", (int)key, item);
		if (nic->has_mac && vfp_mac_parse(buf, mac) == 0 && !memcmp(mac, nic->mac, 6)) {
			snprintf(out, size, "%.*s", (int)(len - key - 1), item + key + 1);
			return 0;
		}
	}
	return -ENOENT;
}

/* The NIC's VLAN: its own <vlan>, else ?vlan=MAC=ID (OpenNebula keeps VLAN_ID in vm.xml). */
static int nic_vlan(struct rewrite *w, const struct domxml_nic *nic, int *ret)
{
	char v[16], *end;
	long id;

	*ret = nic->vlan;
	if (nic->vlan >= 0 || keyed_value(w->in->vlans, nic, v, sizeof(v)) < 0)
		return 0;
	id = strtol(v, &end, 10);
	if (!v[0] || *end || id < 0 || id > 4094)
		return fail(w, -EINVAL, "vlan: \"%.16s\" for devices/interface[%u] is not a VLAN "
			    "in [0, 4094]", v, nic->position);
	*ret = (int)id;
	return 0;
}

/* ?spoofchk= or ?trust= (@key) for the NIC: "MAC=yes|no" (or on|off, any case); -1 when absent. */
static int nic_flag(struct rewrite *w, const struct domxml_nic *nic, const char *list,
		    const char *key, int *ret)
{
	char v[16];

	*ret = -1;
	if (keyed_value(list, nic, v, sizeof(v)) < 0)
		return 0;
	if (one_flag(v, ret) < 0)
		return fail(w, -EINVAL, "%s: \"%.16s\" for devices/interface[%u] is not yes or no",
			    key, v, nic->position);
	return 0;
}

/*
 * The IPv4 address of IB VF number @k: ?ip=MAC=IP for its NIC, or the k-th
 * of a plain ?ip= list; else from the NIC's MAC (OpenNebula's MAC_PREFIX).
 */
static int ipoib_address(struct rewrite *w, const struct domxml_nic *nic, size_t k, uint32_t *ret)
{
	const unsigned char *prefix = vfp_config_get_opennebula_mac_prefix(w->config);
	const char *list = w->in->ips;
	char one[64];
	bool keyed = list && strchr(list, '=');

	if (keyed && keyed_value(list, nic, one, sizeof(one)) < 0)
		list = NULL;
	for (size_t i = 0; list && !keyed && i < k; i++)
		list = strchr(list, ',') ? strchr(list, ',') + 1 : NULL;
	if (list && !keyed)
		snprintf(one, sizeof(one), "%.*s", (int)strcspn(list, ","), list);
	if (list) {
		if (domxml_parse_ipv4(one, ret) < 0)
			return fail(w, -EINVAL, "ip: \"%.40s\" is not an IPv4 address", one);
		return 0;
	}
	if (nic->has_ip) {
		*ret = nic->ip;
		return 0;
	}
	return fail(w, -EINVAL, "devices/interface[%u]: no IPv4 address for its IPoIB dummy "
		    "NIC: its MAC does not begin with OpenNebula's MAC_PREFIX %02x:%02x "
		    "(opennebula_mac_prefix) and ?ip= names none", nic->position, prefix[0],
		    prefix[1]);
}

/* The NIC's VF last prepared for it, as its own allocation has it. */
static const char *nic_vf_pci(struct rewrite *w, size_t i)
{
	return vfp_allocation_get_vf(w->allocs[i], w->used[i] - 1)->pci;
}

/* VF @j of @alloc as the domain @uuid was given it before: the devices its restore point keeps. */
static int held_devices(struct rewrite *w, const struct vfp_allocation *alloc, size_t j,
			struct vm_devices *ret)
{
	const char *pci = vfp_allocation_get_vf(alloc, j)->pci;
	struct vfp_restore_point *rp = restore_point_load(w->agent, pci);
	int r = 0;

	if (rp && rp->device_xml && rp->domain_uuid && !strcasecmp(rp->domain_uuid, w->uuid)) {
		ret->device = domxml_device_node(w->doc, rp->device_xml);
		ret->standby = rp->standby_xml ? domxml_device_node(w->doc, rp->standby_xml) : NULL;
		if (!ret->device || (rp->standby_xml && !ret->standby))
			r = fail(w, -ENOMEM, "out of memory");
	} else {
		r = fail(w, -EBUSY, "VF %s of allocation %s has no device recorded for domain %s: "
			 "release the allocation first", pci, vfp_allocation_get_id(alloc), w->uuid);
	}
	vfp_restore_point_free(rp);
	return r;
}

/* The devices of NIC @i, nodes of the document: the VF of its allocation, prepared (or as held). */
static int nic_devices(struct rewrite *w, size_t i, struct vm_devices *ret)
{
	const struct domxml_nic *nic = &w->nics[i];
	size_t p = i;
	struct vm_target t = { .uuid = w->uuid, .name = w->name, .pending = true };
	struct vm_nic want = { .has_mac = nic->has_mac, .max_tx_rate = nic->max_tx_rate,
			       .spoofchk = -1, .trust = -1, .failover = nic->failover };
	char err[AGENT_ERR_SIZE] = "";
	int r;

	if (w->reused)
		return held_devices(w, w->allocs[p], w->used[p]++, ret);
	r = nic_vlan(w, nic, &want.vlan);
	if (r >= 0)
		r = nic_flag(w, nic, w->in->spoofchks, "spoofchk", &want.spoofchk);
	if (r >= 0)
		r = nic_flag(w, nic, w->in->trusts, "trust", &want.trust);
	memcpy(want.mac, nic->mac, sizeof(want.mac));
	if (r >= 0)
		r = vm_attach_vf(w->agent, w->allocs[p], w->used[p], &t, &want, ret, err,
				 sizeof(err));
	if (r < 0)
		return w->err[0] ? r : fail(w, r, "devices/interface[%u]: %s", nic->position, err);
	w->used[p]++;
	xmlSetTreeDoc(ret->device, w->doc);
	if (ret->standby)
		xmlSetTreeDoc(ret->standby, w->doc);
	return 0;
}

/*
 * NIC @i: its VF's device in its place (after a failover pair's standby),
 * and the IPoIB dummy NIC of an InfiniBand VF.
 */
static int replace_nic(struct rewrite *w, size_t i)
{
	const struct domxml_nic *nic = &w->nics[i];
	struct vm_devices dev = { 0 };
	uint32_t ip = 0;
	int r = nic_devices(w, i, &dev);

	if (r < 0) {
		xmlFreeNode(dev.device);
		xmlFreeNode(dev.standby);
		return r;
	}
	if (dev.standby)
		domxml_insert_before_nic(nic, dev.standby);
	if (dummy_nic_vf_is_ib(w->agent, nic_vf_pci(w, i))) {
		xmlNodePtr dummy = NULL;

		r = ipoib_address(w, nic, w->n_ib++, &ip);
		if (r >= 0 && !(dummy = dummy_nic_node(w->agent, ip)))
			r = fail(w, -ENOMEM, "out of memory");
		if (dummy)
			xmlAddChild(w->dummies, dummy);
	}
	domxml_replace_nic(nic, dev.device);
	return r;
}

/* Every VF prepared so far back, every claim given back (a held one kept, reserved). */
static void give_back(struct agent *a, struct rewrite *w)
{
	for (size_t p = 0; p < w->n_pools && w->allocs[p]; p++) {
		const char *id = vfp_allocation_get_id(w->allocs[p]);
		char err[AGENT_ERR_SIZE];

		for (size_t j = 0; j < w->used[p]; j++)
			if (vm_restore_vf(a, vfp_allocation_get_vf(w->allocs[p], j), err,
					  sizeof(err)) < 0)
				log_error("allocation %s: rollback: %s", id, err);
		if (!w->resumed) /* or later, when the ledger is full */
			agent_give_back(a, id, err, sizeof(err));
	}
}

/* The ids of the first @n allocations, into @ids. */
static void allocation_id_list(const struct rewrite *w, size_t n, const char *ids[MAX_POOLS])
{
	for (size_t p = 0; p < n; p++)
		ids[p] = vfp_allocation_get_id(w->allocs[p]);
}

/*
 * The allocations' attach intents, in one transaction, begun before their
 * VFs are prepared (a failed begin stops the rewrite, none begun) and
 * confirmed together after. No libvirt config changes here (the domain
 * does not exist yet): only kernel state, so they do not wait for the disk.
 * New claims began theirs in the claims' own commit (vfp_claim.attach, the
 * allocations attached already); held reservations begin them here.
 */
static int begin_intents(struct rewrite *w)
{
	const char *ids[MAX_POOLS];
	size_t n = 0, attached = 0;
	int r;

	while (n < w->n_pools && w->allocs[n])
		attached += vfp_allocation_get_state(w->allocs[n++]) == VFP_ALLOCATION_ATTACHED;
	if (n && attached == n && !w->resumed) {
		w->n_begun = n;
		return 0;
	}
	allocation_id_list(w, n, ids);
	r = agent_intents_begin_volatile(w->agent, ids, n, VFP_OP_ATTACH, w->err, w->err_size);
	w->n_begun = r >= 0 ? n : 0;
	return r;
}

static void confirm_intents(struct rewrite *w, bool ok)
{
	const char *ids[MAX_POOLS];

	allocation_id_list(w, w->n_begun, ids);
	if (w->n_begun)
		agent_intents_confirm(w->agent, ids, w->n_begun, VFP_OP_ATTACH, ok,
				      ok ? NULL : "rewrite failed");
}

/* "id1, id2" for X-Allocation-Id: the claims this request made (none when held before). */
static void allocation_ids(const struct rewrite *w, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t p = 0; !w->reused && !w->resumed && p < w->n_pools && w->allocs[p] && len < size;
	     p++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", p ? ", " : "",
					vfp_allocation_get_id(w->allocs[p]));
}

/* Whether allocation @id is held for this file's domain: by name, or by a UUID libvirt vouches for. */
static bool held_by(struct rewrite *w, const char *id, const char *owner)
{
	struct vfp_allocation *alloc = NULL;
	const struct vfp_owner *o;
	char ignored[AGENT_ERR_SIZE];
	bool mine;

	if (agent_get_allocation(w->agent, id, &alloc, ignored, sizeof(ignored)) < 0)
		return false;
	o = vfp_allocation_get_owner(alloc);
	mine = deployment_is_owner(w->agent, o, owner, w->uuid);
	vfp_allocation_unref(alloc);
	return mine;
}

/*
 * A <hostdev> the file already has (a PCI = [...] device oned booked) that
 * names a VF the agent manages: only this VM's own allocation may hold it,
 * and one that holds that VF alone (claimed by its address) has it
 * prepared and rewritten into its device (agent/deployment-adopt.c). Free,
 * or another's, it is a 409 naming the holder; PCI devices the agent does
 * not manage are left to libvirt.
 */
static int check_hostdevs(struct rewrite *w)
{
	_cleanup_free_ char *name = domxml_get_name(w->doc);
	const char *owner = w->in->owner ? w->in->owner : name ? name : "";
	char **list = NULL;
	size_t n = 0;
	int r = domxml_doc_pci_hostdevs(w->doc, &list, &n); /* the body is not NUL-terminated */

	for (size_t i = 0; r >= 0 && i < n; i++) {
		struct vfp_ledger_vf v;

		r = ledger_get_vf(w->agent, list[i], &v);
		if (r == -ENOENT || (r >= 0 && !v.pool[0])) {
			r = 0; /* not ours */
			continue;
		}
		if (r >= 0 && !v.allocation[0])
			r = fail(w, -EBUSY, "devices/hostdev %s: a VF of pool %s, managed by vfagent: "
				 "ask for it through an SR-IOV network, not as a PCI device", list[i],
				 v.pool);
		else if (r >= 0 && !held_by(w, v.allocation, owner))
			r = fail(w, -EBUSY, "devices/hostdev %s: held by allocation %s of another "
				 "owner", list[i], v.allocation);
		else if (r >= 0)
			r = deployment_adopt_vf(&w->adopt, list[i], v.allocation);
	}
	if (r < 0 && !w->err[0])
		fail(w, r, "devices/hostdev: %s", strerror(-r));
	domxml_strv_free(list, n);
	return r < 0 ? r : 0;
}

/* The NICs on SR-IOV networks: claimed, each replaced by its VF's device, dummies added. */
static int rewrite_nics(struct rewrite *w, char *ret_ids, size_t ids_size)
{
	const char *owner = w->in->owner;
	int r;

	if (!owner && !(owner = w->name))
		return fail(w, -EINVAL, "body: the domain has no <name>; give ?owner=");
	r = claim_all(w, owner);
	agent_ledger_hold_lazy(w->agent, true); /* a restore point per VF, then the confirmation */
	if (r >= 0 && !w->reused)
		r = begin_intents(w);
	for (size_t i = 0; r >= 0 && i < w->n_nics; i++)
		r = replace_nic(w, i);
	confirm_intents(w, r >= 0);
	agent_ledger_hold_lazy(w->agent, false);
	if (r < 0) {
		if (!w->reused) /* held before this request: not its to give back */
			give_back(w->agent, w);
		return r;
	}
	while (w->dummies->children) {
		xmlNodePtr d = w->dummies->children;

		xmlUnlinkNode(d);
		domxml_append_device(w->doc, d);
	}
	allocation_ids(w, ret_ids, ids_size);
	return 0;
}

static int rewrite(struct rewrite *w, char **ret_xml, char *ret_ids, size_t ids_size)
{
	int r = w->n_nics ? rewrite_nics(w, ret_ids, ids_size) : 0;

	if (r < 0)
		return r;
	deployment_adopt_finish(&w->adopt, true);
	*ret_xml = domxml_format(w->doc);
	return *ret_xml ? 0 : fail(w, -ENOMEM, "out of memory");
}

/**
 * agent_rewrite_deployment() - @d's domain with its SR-IOV NICs made VFs
 * @ret_xml: the new domain XML (free() it)
 * @ret_ids: the allocations' ids, "id1, id2" ("" when none)
 *
 * All or nothing: a failure gives back every claim and every VF prepared,
 * and @err names the NIC or the field.
 */
int agent_rewrite_deployment(struct agent *a, const struct agent_deployment *d, char **ret_xml,
			     char *ret_ids, size_t ids_size, char *err, size_t err_size)
{
	struct rewrite w = { .agent = a, .in = d, .err = err, .err_size = err_size,
			     .config = agent_get_config(a) };
	int r = domxml_parse(d->xml, d->len, &w.doc, err, err_size);

	ret_ids[0] = '\0';
	if (r >= 0)
		r = domxml_sriov_nics(w.doc, w.config, &w.nics, &w.n_nics, err, err_size);
	if (r >= 0 && domxml_ensure_uuid(w.doc, w.uuid) < 0)
		r = fail(&w, -EINVAL, "body: <uuid> is not a UUID");
	w.name = r >= 0 ? domxml_get_name(w.doc) : NULL;
	w.adopt = (struct deployment_adopt){ .agent = a, .doc = w.doc, .uuid = w.uuid,
					     .name = w.name, .err = err, .err_size = err_size };
	if (r >= 0)
		r = check_hostdevs(&w);
	if (r >= 0 && w.n_nics == 0 && !w.adopt.n_replaced)
		r = (*ret_xml = strndup(d->xml, d->len)) ? 0 : fail(&w, -ENOMEM, "out of memory");
	else if (r >= 0 && !(w.dummies = xmlNewNode(NULL, BAD_CAST "dummies")))
		r = fail(&w, -ENOMEM, "out of memory");
	else if (r >= 0)
		r = rewrite(&w, ret_xml, ret_ids, ids_size);
	if (r < 0)
		deployment_adopt_undo(&w.adopt);
	deployment_adopt_finish(&w.adopt, false);
	for (size_t p = 0; p < w.n_pools; p++)
		vfp_allocation_unref(w.allocs[p]);
	xmlFreeNode(w.dummies);
	free(w.name);
	free(w.nics);
	xmlFreeDoc(w.doc);
	vfp_config_unref(w.config);
	return r;
}
