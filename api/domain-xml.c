/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * POST /v1/domain-xml: a deployment file in, the same domain with VFs out.
 * Each NIC on a configured SR-IOV network becomes a VF from that network's
 * pool; each InfiniBand VF also gets a dummy NIC whose MAC carries its IPv4
 * address (from the NIC's OpenNebula 02:00 MAC, or ?ip=a,b in IB order),
 * appended in IB order. One allocation per pool, owned by the domain (its
 * <name>, or ?owner=); their ids go in X-Allocation-Id. The VFs are ready for
 * the domain and their lease waits for it. A domain with no SR-IOV NIC
 * comes back byte for byte; any failure gives back every claim.
 */
#include "config.h"

#include <errno.h>
#include <libxml/parser.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vm/domain-xml.h"
#include "agent/vm/hostdev-xml.h"
#include "agent/release.h"
#include "agent/vm/vm.h"
#include "api/api.h"

#define MAX_POOLS 8

struct rewrite {
	xmlDocPtr doc;
	struct vfp_config *config;
	struct domxml_nic *nics;
	size_t n_nics;
	char uuid[37];
	char *name;
	const char *pools[MAX_POOLS];
	json_t *allocs[MAX_POOLS];
	size_t n_pools, used[MAX_POOLS];
	xmlNodePtr dummies; /* a holder of the dummy NICs, in IB order */
	size_t n_ib;
};

static int reply_xml(struct api_request *req, char *text)
{
	if (!text)
		return api_fail(req, -ENOMEM, "out of memory");
	req->text = text;
	req->content_type = "application/xml";
	req->status = 200;
	return 0;
}

static size_t pool_slot(struct rewrite *w, const char *pool)
{
	size_t i;

	for (i = 0; i < w->n_pools; i++)
		if (!strcmp(w->pools[i], pool))
			return i;
	if (i < MAX_POOLS)
		w->pools[w->n_pools++] = pool;
	return i;
}

/* One allocation per pool, all or none. */
static int claim_all(struct api_request *req, struct rewrite *w, const char *owner)
{
	unsigned count[MAX_POOLS] = { 0 };
	json_t *o = json_pack("{s:s, s:s, s:s}", "kind", "vm", "name", owner, "uuid", w->uuid);
	int r = 0;

	for (size_t i = 0; i < w->n_nics; i++) {
		size_t slot = pool_slot(w, w->nics[i].pool);

		if (slot >= MAX_POOLS)
			r = api_fail(req, -EINVAL, "devices: NICs on more than %d SR-IOV pools",
				     MAX_POOLS);
		else
			count[slot]++;
	}
	for (size_t p = 0; r >= 0 && p < w->n_pools; p++) {
		struct vfp_claim c = { .pool = w->pools[p], .count = count[p], .owner = o,
				       .numa_node = -1 };

		r = api_claim(req, &c, &w->allocs[p]);
	}
	json_decref(o);
	return r;
}

/* The IPv4 address of IB VF number @k: from ?ip= first, else from the NIC's MAC. */
static int ipoib_address(struct api_request *req, const struct domxml_nic *nic, size_t k,
			 uint32_t *ret)
{
	const char *list = api_query(req, "ip");
	char one[64];

	for (size_t i = 0; list && i < k; i++)
		list = strchr(list, ',') ? strchr(list, ',') + 1 : NULL;
	if (list) {
		snprintf(one, sizeof(one), "%.*s", (int)strcspn(list, ","), list);
		if (domxml_parse_ipv4(one, ret) < 0)
			return api_fail(req, -EINVAL, "ip: \"%.40s\" is not an IPv4 address", one);
		return 0;
	}
	if (nic->has_ip) {
		*ret = nic->ip;
		return 0;
	}
	return api_fail(req, -EINVAL, "devices/interface[%u]: no IPv4 address for its IPoIB dummy "
			"NIC: its MAC is not OpenNebula's 02:00 form and ?ip= names none",
			nic->position);
}

static xmlNodePtr device_node(xmlDocPtr doc, const char *xml)
{
	xmlDocPtr d = xmlReadMemory(xml, (int)strlen(xml), "device.xml", NULL, XML_PARSE_NONET);
	xmlNodePtr n = d ? xmlDocCopyNode(xmlDocGetRootElement(d), doc, 1) : NULL;

	xmlFreeDoc(d);
	return n;
}

/* NIC @i: the next VF of its pool's allocation in its place, and its dummy if IB. */
static int replace_nic(struct api_request *req, struct rewrite *w, size_t i)
{
	const struct domxml_nic *nic = &w->nics[i];
	size_t p = pool_slot(w, nic->pool);
	struct vm_target t = { .uuid = w->uuid, .name = w->name, .pending = true };
	struct vm_nic want = { .has_mac = nic->has_mac, .vlan = nic->vlan };
	char *xml = NULL, err[512] = "";
	xmlNodePtr node;
	uint32_t ip = 0;
	int r;

	memcpy(want.mac, nic->mac, sizeof(want.mac));
	r = vm_attach_vf(req->agent, w->allocs[p], w->used[p], &t, &want, &xml, err, sizeof(err));
	if (r < 0)
		return api_fail(req, r, "devices/interface[%u]: %s", nic->position, err);
	w->used[p]++;
	node = device_node(w->doc, xml);
	if (node && !strcmp((const char *)node->name, "hostdev")) {
		r = ipoib_address(req, nic, w->n_ib++, &ip);
		if (r >= 0)
			xmlAddChild(w->dummies, hostdev_xml_dummy_nic(
				vfp_config_get_ipoib_mac_prefix(w->config), ip));
	}
	if (node)
		domxml_replace_nic(nic, node);
	free(xml);
	return node ? r : api_fail(req, -ENOMEM, "out of memory");
}

/* Every VF prepared so far back, every claim given back. */
static void give_back(struct agent *a, struct rewrite *w)
{
	for (size_t p = 0; p < w->n_pools && w->allocs[p]; p++) {
		const char *id = json_string_value(json_object_get(w->allocs[p], "id"));
		char err[512];

		for (size_t j = 0; j < w->used[p]; j++)
			if (vm_restore_vf(a, json_array_get(json_object_get(w->allocs[p], "vfs"), j),
					  err, sizeof(err)) < 0)
				log_error("allocation %s: rollback: %s", id, err);
		if (agent_release_allocation(a, id, err, sizeof(err)) < 0)
			log_error("allocation %s: giving the claim back: %s", id, err);
	}
}

/* Each allocation's attach intent: begun before its VFs are prepared, confirmed after. */
static void intents(struct agent *a, struct rewrite *w, bool begin, bool ok)
{
	for (size_t p = 0; p < w->n_pools && w->allocs[p]; p++)
		api_ledger_step(a, json_string_value(json_object_get(w->allocs[p], "id")),
				VFP_OP_ATTACH, begin, ok, ok ? NULL : "rewrite failed", NULL);
}

/* "id1, id2" for X-Allocation-Id. */
static void allocation_ids(const struct rewrite *w, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t p = 0; p < w->n_pools && w->allocs[p] && len < size; p++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", p ? ", " : "",
					json_string_value(json_object_get(w->allocs[p], "id")));
}

static int rewrite(struct api_request *req, struct rewrite *w)
{
	const char *owner = api_query(req, "owner");
	bool begun;
	int r = domxml_ensure_uuid(w->doc, w->uuid);

	if (r < 0)
		return api_fail(req, r, "body: <uuid> is not a UUID");
	w->name = domxml_get_name(w->doc);
	if (!owner && !(owner = w->name))
		return api_fail(req, -EINVAL, "body: the domain has no <name>; give ?owner=");
	r = claim_all(req, w, owner);
	begun = r >= 0;
	if (begun)
		intents(req->agent, w, true, false);
	for (size_t i = 0; r >= 0 && i < w->n_nics; i++)
		r = replace_nic(req, w, i);
	if (begun)
		intents(req->agent, w, false, r >= 0);
	if (r < 0) {
		give_back(req->agent, w);
		return r;
	}
	while (w->dummies->children) {
		xmlNodePtr d = w->dummies->children;

		xmlUnlinkNode(d);
		domxml_append_device(w->doc, d);
	}
	req->extra_header = "X-Allocation-Id";
	allocation_ids(w, req->extra_value, sizeof(req->extra_value));
	return reply_xml(req, domxml_format(w->doc));
}

int api_domain_xml(struct api_request *req)
{
	struct rewrite w = { .config = agent_get_config(req->agent) };
	char err[512] = "";
	int r = domxml_parse(req->body, req->body_len, &w.doc, err, sizeof(err));

	if (r >= 0)
		r = domxml_sriov_nics(w.doc, w.config, &w.nics, &w.n_nics, err, sizeof(err));
	if (r < 0)
		api_fail(req, r, "%s", err);
	else if (w.n_nics == 0)
		r = reply_xml(req, strndup(req->body, req->body_len));
	else if (!(w.dummies = xmlNewNode(NULL, BAD_CAST "dummies")))
		r = api_fail(req, -ENOMEM, "out of memory");
	else
		r = rewrite(req, &w);
	for (size_t p = 0; p < w.n_pools; p++)
		json_decref(w.allocs[p]);
	xmlFreeNode(w.dummies);
	free(w.name);
	free(w.nics);
	xmlFreeDoc(w.doc);
	vfp_config_unref(w.config);
	return r;
}
