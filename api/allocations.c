/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* POST/GET/DELETE /v1/allocations: claiming VFs, looking them up, giving them back. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claim.h"
#include "agent/log.h"
#include "agent/owner.h"
#include "agent/release.h"
#include "api/api.h"
#include "api/one-attrs.h"
#include "api/validate.h"

/* A boolean knob: 0 or 1, VFP_UNSET when absent. */
static int parse_tristate(struct api_request *req, json_t *body, const char *key, int *ret)
{
	json_t *v = json_object_get(body, key);

	if (v && !json_is_boolean(v))
		return api_fail(req, -EINVAL, "%s: must be true or false", key);
	*ret = v ? json_is_true(v) : VFP_UNSET;
	return 0;
}

static int parse_rate(struct api_request *req, json_t *body, const char *key, long long *ret)
{
	json_t *v = json_object_get(body, key);

	if (v && !(json_is_integer(v) && json_integer_value(v) >= 0 &&
		   json_integer_value(v) <= 4294967295LL))
		return api_fail(req, -EINVAL, "%s: must be Mbit/s, an integer in [0, 4294967295]",
				key);
	*ret = v ? json_integer_value(v) : VFP_UNSET;
	return 0;
}

/* One of @choices (their index), VFP_UNSET when absent. */
static int parse_choice(struct api_request *req, json_t *body, const char *key,
			const char *const *choices, const char *what, int *ret)
{
	json_t *v = json_object_get(body, key);

	*ret = VFP_UNSET;
	for (int i = 0; v && choices[i]; i++)
		if (json_is_string(v) && strcmp(json_string_value(v), choices[i]) == 0)
			*ret = i;
	if (v && *ret < 0)
		return api_fail(req, -EINVAL, "%s: must be %s", key, what);
	return 0;
}

/* The VF settings beyond MAC and VLAN, each checked with a message naming it. */
int api_parse_vf_knobs(struct api_request *req, json_t *body, struct vfp_settings *s)
{
	static const char *const protos[] = { "802.1Q", "802.1ad", NULL };
	static const char *const links[] = { "auto", "enable", "disable", NULL };
	long long qos = VFP_UNSET;
	int proto = VFP_UNSET, r;

	r = api_get_int(req, body, "qos", 0, 7, false, &qos);
	s->qos = (int)qos;
	if (r >= 0)
		r = parse_choice(req, body, "vlan_proto", protos, "\"802.1Q\" or \"802.1ad\"", &proto);
	s->vlan_proto = r < 0 || proto < 0 ? VFP_UNSET : proto == 0 ? 0x8100 : 0x88a8;
	if (r >= 0)
		r = parse_tristate(req, body, "spoofchk", &s->spoofchk);
	if (r >= 0)
		r = parse_tristate(req, body, "trust", &s->trust);
	if (r >= 0)
		r = parse_choice(req, body, "link_state", links,
				 "\"auto\", \"enable\" or \"disable\"", &s->link_state);
	if (r >= 0)
		r = parse_rate(req, body, "min_tx_rate", &s->min_tx_rate);
	if (r >= 0)
		r = parse_rate(req, body, "max_tx_rate", &s->max_tx_rate);
	if (r >= 0)
		r = api_parse_one_attrs(req, body, s);
	if (r >= 0 && (s->qos >= 0 || s->vlan_proto >= 0) && s->vlan < 0)
		r = api_fail(req, -EINVAL, "qos, vlan_proto: need a vlan");
	return r;
}

static int copy_string(struct api_request *req, const char *key, const char *v, char *buf,
		       size_t size)
{
	if (v && strlen(v) >= size)
		return api_fail(req, -EINVAL, "%s: longer than %zu characters", key, size - 1);
	snprintf(buf, size, "%s", v ? v : "");
	return 0;
}

/*
 * "failover": the standby of a failover pair ({"bridge": …} or {"macvtap": …}); none when
 * absent. Refused when it would not reach the claim's VLAN (@vlan; -1: none).
 */
static int parse_failover(struct api_request *req, json_t *body, int vlan, struct vfp_failover *ret)
{
	json_t *o = json_object_get(body, "failover");
	char *err = NULL;
	int r = 0;

	char why[AGENT_ERR_SIZE], source[64];

	ret->kind = VFP_STANDBY_NONE;
	if (o && vfp_failover_from_json(o, "failover", ret, &err) < 0)
		r = api_fail(req, -EINVAL, "%s", err ? err : "failover: not a standby");
	else if (o && vfp_failover_standby_source(ret, vlan, source, sizeof(source), why,
						  sizeof(why)) < 0)
		r = api_fail(req, -EINVAL, "failover: %s", why);
	free(err);
	return r;
}

/* The requested settings, each checked: {"mac","vlan","guid","ip",…}. */
static int parse_settings(struct api_request *req, json_t *body, struct vfp_settings *s)
{
	const char *mac = NULL, *guid = NULL, *ip = NULL;
	long long vlan = -1;
	int r;

	vfp_settings_init(s);
	r = api_get_string(req, body, "mac", false, &mac);
	if (r >= 0 && mac && !valid_mac(mac))
		r = api_fail(req, -EINVAL, "mac: \"%.32s\" is not a unicast MAC address", mac);
	if (r >= 0)
		r = api_get_int(req, body, "vlan", 0, 4094, false, &vlan);
	s->vlan = (int)vlan;
	if (r >= 0)
		r = api_get_string(req, body, "guid", false, &guid);
	if (r >= 0 && guid && !valid_guid(guid))
		r = api_fail(req, -EINVAL, "guid: \"%.32s\" is not a GUID (8 bytes, not all 0 or ff)",
			     guid);
	if (r >= 0)
		r = api_get_string(req, body, "ip", false, &ip);
	if (r >= 0 && ip && !valid_ip_prefix(ip, NULL))
		r = api_fail(req, -EINVAL, "ip: \"%.64s\" is not an address with a prefix length "
					   "(10.1.0.5/16)", ip);
	if (r >= 0)
		r = copy_string(req, "mac", mac, s->mac, sizeof(s->mac));
	if (r >= 0)
		r = copy_string(req, "guid", guid, s->guid, sizeof(s->guid));
	if (r >= 0)
		r = copy_string(req, "ip", ip, s->ip, sizeof(s->ip));
	if (r >= 0)
		r = parse_failover(req, body, s->vlan, &s->failover);
	if (r >= 0)
		r = api_parse_pkey(req, body, &s->pkey);
	if (r >= 0 && vfp_security_groups_from_json(json_object_get(body, "security_groups"),
						    s->security_groups,
						    sizeof(s->security_groups)) < 0)
		r = api_fail(req, -EINVAL, "security_groups: not a list of at most 32 security group "
			     "ids (integers in [0, 2147483647])");
	return r < 0 ? r : api_parse_vf_knobs(req, body, s);
}

/* "pkey" and "membership" (an IB partition), each checked with a message naming it. */
int api_parse_pkey(struct api_request *req, json_t *body, int *ret)
{
	const char *why;

	if (vfp_pkey_from_json(json_object_get(body, "pkey"), json_object_get(body, "membership"),
			       ret, &why) < 0)
		return api_fail(req, -EINVAL, "%s", why);
	return 0;
}

/* A "network" with a partition in the config: the claim's, unless it asked for another. */
static int network_pkey(struct api_request *req, json_t *body, struct vfp_settings *s)
{
	const char *network = json_string_value(json_object_get(body, "network"));
	struct vfp_config *config;
	char want[7], has[7];
	int pkey;

	if (!network)
		return 0;
	config = agent_get_config(req->agent);
	pkey = vfp_config_pkey_for_network(config, network, network);
	vfp_config_unref(config);
	if (pkey < 0)
		return 0;
	if (s->pkey < 0) {
		s->pkey = pkey;
		return 0;
	}
	if (s->pkey == pkey)
		return 0;
	vfp_pkey_format(s->pkey, want);
	vfp_pkey_format(pkey, has);
	return api_fail(req, -EINVAL, "pkey: %s, but network \"%.64s\" is partition %s (%s)",
			want, network, has, vfp_pkey_membership(pkey));
}

/* A VM owner: "name" (its domain's), and "uuid" if known; nothing of a container's. */
static int parse_vm_owner(struct api_request *req, json_t *j, struct vfp_owner *o)
{
	int r = api_get_string(req, j, "name", true, &o->name);

	if (r >= 0)
		r = api_get_string(req, j, "uuid", false, &o->uuid);
	if (r >= 0 && o->uuid && !vfp_uuid_is_valid(o->uuid))
		r = api_fail(req, -EINVAL, "owner.uuid: \"%.40s\" is not a UUID", o->uuid);
	if (r >= 0 && (json_object_get(j, "netns") || json_object_get(j, "pid")))
		r = api_fail(req, -EINVAL, "owner.%s: a VM owner has no namespace",
			     json_object_get(j, "netns") ? "netns" : "pid");
	return r;
}

/* A container owner: "netns" (a /run/netns name or path, kept as the name) or "pid". */
static int parse_container_owner(struct api_request *req, json_t *j, struct vfp_owner *o)
{
	long long pid = 0;
	int r = api_get_string(req, j, "netns", false, &o->netns);

	if (r >= 0)
		r = api_get_int(req, j, "pid", 1, 4194304, false, &pid);
	o->pid = pid;
	if (r >= 0 && (json_object_get(j, "name") || json_object_get(j, "uuid")))
		r = api_fail(req, -EINVAL, "owner.%s: a container owner is its namespace",
			     json_object_get(j, "name") ? "name" : "uuid");
	if (r >= 0 && !o->netns == !o->pid)
		r = api_fail(req, -EINVAL, "owner: a container owner needs \"netns\" or \"pid\", "
			     "not both");
	if (r >= 0 && o->netns && !(o->netns = vfp_owner_netns_name(o->netns)))
		r = api_fail(req, -EINVAL, "owner.netns: must be a /run/netns name or path");
	return r;
}

/* {"kind":"vm","name":…[,"uuid":…]} or {"kind":"container","netns":…|"pid":…}. */
static int parse_owner(struct api_request *req, json_t *body, struct vfp_owner *o)
{
	static const char *const keys[] = { "kind", "name", "uuid", "netns", "pid", NULL };
	json_t *j = json_object_get(body, "owner");
	const char *kind = NULL;
	int r;

	if (!json_is_object(j))
		return api_fail(req, -EINVAL, "owner: required, an object like "
					      "{\"kind\":\"vm\",\"name\":\"one-42\"}");
	req->field_prefix = "owner.";
	r = api_check_keys(req, j, keys);
	if (r >= 0)
		r = api_get_string(req, j, "kind", false, &kind);
	if (r >= 0 && (!kind || (strcmp(kind, "vm") && strcmp(kind, "container"))))
		r = api_fail(req, -EINVAL, "owner.kind: must be \"vm\" or \"container\"");
	if (r >= 0) {
		*o = (struct vfp_owner){ .kind = !strcmp(kind, "vm") ? VFP_OWNER_VM
								    : VFP_OWNER_CONTAINER };
		r = o->kind == VFP_OWNER_VM ? parse_vm_owner(req, j, o)
					    : parse_container_owner(req, j, o);
	}
	req->field_prefix = NULL;
	return r;
}

/* "pci" alone: the pool of that VF (the claim then says whether it is free). */
static int pool_of_vf(struct api_request *req, const char *pci, const char **ret,
		      char buf[static 128])
{
	struct vfp_ledger_vf v;
	int r;

	r = ledger_get_vf(req->agent, pci, &v);
	if (r == -ENOENT || (r >= 0 && !v.pool[0]))
		return api_fail(req, -ENOENT, "pci: %.40s is no VF of a pool on this host", pci);
	if (r < 0)
		return api_fail(req, r, "pci: looking up %.40s: %s", pci, strerror(-r));
	snprintf(buf, 128, "%s", v.pool);
	*ret = buf;
	return 0;
}

/*
 * "pool", or "network": the pool the config maps that bridge or libvirt
 * network to; or neither with "pci": that VF's pool.
 */
static int parse_pool(struct api_request *req, json_t *body, const char **ret, char buf[static 128])
{
	const char *network = NULL, *pool = NULL, *pci = NULL;
	struct vfp_config *config;
	int r = api_get_string(req, body, "pool", false, ret);

	if (r >= 0)
		r = api_get_string(req, body, "network", false, &network);
	if (r >= 0)
		r = api_get_string(req, body, "pci", false, &pci);
	if (r >= 0 && pci && !vfp_pci_addr_is_valid(pci))
		return api_fail(req, -EINVAL, "pci: \"%.40s\" is not a PCI address", pci);
	if (r >= 0 && pci && !*ret && !network)
		return pool_of_vf(req, pci, ret, buf);
	if (r >= 0 && !*ret == !network)
		return api_fail(req, -EINVAL, "pool: required (or \"network\": a bridge or libvirt "
				"network the config maps to a pool), not both");
	if (r < 0 || !network)
		return r;
	config = agent_get_config(req->agent);
	pool = vfp_config_pool_for_network(config, network, network);
	if (pool)
		snprintf(buf, 128, "%s", pool);
	vfp_config_unref(config);
	if (!pool)
		return api_fail(req, -EINVAL, "network: \"%.64s\" is not an SR-IOV network of the "
				"config (\"networks\")", network);
	*ret = buf;
	return 0;
}

/* "near": a PCI device the VFs should be closest to; "max_distance": how far they may be. */
static int parse_near(struct api_request *req, json_t *body, struct vfp_claim *c)
{
	const char *near = NULL, *max = NULL;
	char pci[VFP_PCI_ADDR_LEN + 1];
	int r = api_get_string(req, body, "near", false, &near), d = VFP_PCIE_SELF;

	if (r >= 0)
		r = api_get_string(req, body, "max_distance", false, &max);
	if (r >= 0 && near && vfp_pci_addr_normalize(near, pci) < 0)
		r = api_fail(req, -EINVAL, "near: \"%.40s\" is not a PCI address", near);
	if (r >= 0 && max && (d = vfp_pcie_distance_from_string(max)) <= VFP_PCIE_SELF)
		r = api_fail(req, -EINVAL, "max_distance: must be PIX, PXB, PHB, NODE or SYS");
	if (r >= 0 && max && !near)
		r = api_fail(req, -EINVAL, "max_distance: needs \"near\" (the device to be near)");
	if (r >= 0 && near && json_object_get(body, "pci"))
		r = api_fail(req, -EINVAL, "near: not with \"pci\", which names the VF itself");
	if (r < 0)
		return r;
	c->near = near;
	c->max_distance = (enum vfp_pcie_distance)d;
	return 0;
}

static int parse_claim(struct api_request *req, json_t *body, const char *key, struct vfp_claim *c,
		       struct vfp_owner *owner, char pool[static 128])
{
	static const char *const keys[] = { "pool", "network", "count", "owner", "mac", "vlan", "guid", "ip",
					    "qos", "vlan_proto", "spoofchk", "trust", "link_state",
					    "min_tx_rate", "max_tx_rate", "numa_node", "placement",
					    "lease_seconds", "attach", "pci", "near", "max_distance",
					    "failover", "pkey", "membership", "security_groups",
					    "opennebula", NULL };
	const char *placement = NULL, *pci = NULL;
	long long count = 1, numa = -1, lease = 0;
	int r;

	r = api_check_keys(req, body, keys);
	if (r >= 0)
		r = parse_pool(req, body, &c->pool, pool);
	if (r >= 0)
		r = api_get_int(req, body, "count", 1, 64, false, &count);
	if (r >= 0)
		r = parse_owner(req, body, owner);
	if (r >= 0)
		r = api_get_int(req, body, "numa_node", -1, 4095, false, &numa);
	if (r >= 0)
		r = api_get_string(req, body, "placement", false, &placement);
	if (r >= 0 && placement && strcmp(placement, "spread") != 0 && strcmp(placement, "pack") != 0)
		r = api_fail(req, -EINVAL, "placement: must be \"spread\" or \"pack\"");
	if (r >= 0)
		r = api_get_int(req, body, "lease_seconds", 0, 31536000, false, &lease);
	if (r >= 0 && key && !valid_token(key))
		r = api_fail(req, -EINVAL, "Idempotency-Key: 1-128 printable ASCII characters");
	if (r >= 0)
		r = api_get_string(req, body, "pci", false, &pci);
	if (r >= 0 && pci && count != 1)
		r = api_fail(req, -EINVAL, "count: must be 1 with \"pci\" (one VF by its address)");
	if (r >= 0)
		r = parse_near(req, body, c);
	if (r < 0)
		return r;
	c->pci = pci;
	c->count = (unsigned)count;
	c->owner = owner;
	c->numa_node = (int)numa;
	c->placement = placement && strcmp(placement, "pack") == 0 ? VFP_PLACE_PACK
								   : VFP_PLACE_SPREAD;
	c->lease_seconds = (unsigned)lease;
	c->idempotency_key = key;
	return 0;
}

/**
 * api_parse_claim() - the body of POST /v1/allocations (its "attach" aside)
 * into @b, each field checked with a message naming it; @key: the
 * Idempotency-Key, or NULL. The CNI plugin's requests are read with it too.
 */
/*
 * A claim by "network" of a failover network, without a "failover" of its
 * own, asks for the network's standby (an OpenNebula NIC hot-plugged, or
 * claimed again on a live migration's destination): checked against its VLAN.
 */
static int network_failover(struct api_request *req, json_t *body, const struct vfp_owner *o,
			    struct vfp_settings *s)
{
	const char *network = json_string_value(json_object_get(body, "network"));
	struct vfp_config *config;
	const struct vfp_failover *f;
	char why[AGENT_ERR_SIZE], source[64];
	int r = 0;

	if (!network || s->failover.kind != VFP_STANDBY_NONE || o->kind != VFP_OWNER_VM)
		return 0; /* a namespace has no standby */
	config = agent_get_config(req->agent);
	f = vfp_config_failover_for_network(config, network, network);
	if (f)
		s->failover = *f;
	vfp_config_unref(config);
	if (f && vfp_failover_standby_source(&s->failover, s->vlan, source, sizeof(source), why,
					     sizeof(why)) < 0)
		r = api_fail(req, -EINVAL, "network: %.64s: failover: %s", network, why);
	return r;
}

int api_parse_claim(struct api_request *req, json_t *body, const char *key,
		    struct api_claim_body *b)
{
	int r = parse_claim(req, body, key, &b->c, &b->owner, b->pool);

	if (r >= 0)
		r = parse_settings(req, body, &b->settings);
	if (r >= 0)
		r = network_failover(req, body, &b->owner, &b->settings);
	if (r >= 0)
		r = network_pkey(req, body, &b->settings);
	b->c.settings = &b->settings;
	return r;
}

/* {"domain":…,"live":…,"config":…} of a claim's "attach", or of POST …/attach. */
int api_parse_domain_request(struct api_request *req, json_t *o, struct agent_domain_request *q)
{
	static const char *const keys[] = { "domain", "live", "config", NULL };
	bool live = false, config = false;
	int r = api_check_keys(req, o, keys);

	if (r >= 0)
		r = api_get_string(req, o, "domain", true, &q->domain);
	if (r >= 0)
		r = api_get_bool(req, o, "live", &live);
	if (r >= 0)
		r = api_get_bool(req, o, "config", &config);
	q->live = json_object_get(o, "live") ? live : VFP_UNSET;
	q->config = json_object_get(o, "config") ? config : VFP_UNSET;
	return r;
}

/* "attach" of a claim: a domain ({"domain": …}) or a namespace ({"netns": …}), parsed into @t. */
static int parse_target(struct api_request *req, json_t *attach, struct agent_domain_request *dq,
			struct api_netns_body *nb, struct agent_attach_target *t)
{
	bool domain = json_is_object(attach) && json_object_get(attach, "domain");
	bool netns = json_is_object(attach) && json_object_get(attach, "netns");

	if (domain == netns)
		return api_fail(req, -EINVAL, "attach: must be an object like {\"domain\": "
				"\"one-42\"} or {\"netns\": \"c1\", \"ifname\": \"net1\"}");
	t->domain = domain ? dq : NULL;
	t->netns = netns ? &nb->q : NULL;
	return domain ? api_parse_domain_request(req, attach, dq)
		      : api_parse_netns_request(req, attach, nb);
}

static int claim(struct api_request *req, const struct vfp_claim *c, json_t *attach,
		 struct vfp_allocation **ret)
{
	struct agent_domain_request dq;
	struct api_netns_body nb = { 0 };
	struct agent_attach_target t = { 0 };
	char err[AGENT_ERR_SIZE] = "";
	int r = attach ? parse_target(req, attach, &dq, &nb, &t) : 0;

	if (r >= 0)
		r = attach ? agent_claim_and_attach(req->agent, c, &t, ret, err, sizeof(err))
			   : agent_claim(req->agent, c, ret, err, sizeof(err));
	if (r < 0 && !req->error[0])
		api_fail(req, r, "%s", err);
	return r;
}

/* → 201 with the allocation; 200 when the Idempotency-Key replays an earlier one. */
int api_post_allocation(struct api_request *req)
{
	struct api_claim_body b = { 0 };
	struct vfp_allocation *alloc = NULL;
	json_t *body = NULL;
	int r;

	r = api_parse_body(req, &body);
	if (r >= 0)
		r = api_parse_claim(req, body, api_header(req, "Idempotency-Key"), &b);
	/* "cni:" keys are the CNI socket's attachments: its DEL and GC find them by key */
	if (r >= 0 && b.c.idempotency_key && !strncmp(b.c.idempotency_key, "cni:", 4))
		r = api_fail(req, -EINVAL, "Idempotency-Key: keys beginning \"cni:\" name the CNI "
			     "plugin's attachments");
	if (r >= 0)
		r = claim(req, &b.c, json_object_get(body, "attach"), &alloc);
	json_decref(body);
	if (r < 0)
		return r;
	if (r == 0) { /* created: where it lives */
		req->extra_header = "Location";
		snprintf(req->extra_value, sizeof(req->extra_value), "/v1/allocations/%s",
			 vfp_allocation_get_id(alloc));
	}
	r = api_reply(req, r == 1 ? 200 : 201,
		      api_allocation_add_where(req->agent, api_allocation_json(alloc)));
	vfp_allocation_unref(alloc);
	return r;
}

/* The allocations of @pool (NULL: any) in @state (-1: any) of domain @uuid (NULL: any). */
static json_t *list_json(struct agent *agent, struct vfp_allocation **list, size_t n,
			 const char *pool, int state, const char *uuid)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if ((!pool || strcmp(vfp_allocation_get_pool(list[i]), pool) == 0) &&
		    (state < 0 || (int)vfp_allocation_get_state(list[i]) == state) &&
		    (!uuid || owner_is_domain(vfp_allocation_get_owner(list[i]), uuid)))
			json_array_append_new(
				a, api_allocation_add_where(agent, api_allocation_json(list[i])));
	return a;
}

/*
 * "netns:/run/netns/c1" is "netns:c1", as the ledger keys it; "vm:UUID" is
 * the domain of that UUID whatever its name (@ret_uuid); other owners as
 * they are.
 */
static int owner_filter(struct api_request *req, const char **owner, char key[static 80],
			const char **ret_uuid)
{
	const char *name;

	*ret_uuid = NULL;
	if (*owner && strncmp(*owner, "vm:", 3) == 0 && vfp_uuid_is_valid(*owner + 3)) {
		*ret_uuid = *owner + 3;
		*owner = NULL;
	}
	if (!*owner || strncmp(*owner, "netns:", 6) != 0)
		return 0;
	if (!(name = vfp_owner_netns_name(*owner + 6)))
		return api_fail(req, -EINVAL, "owner: \"%.64s\" names no /run/netns namespace",
				*owner);
	snprintf(key, 80, "netns:%s", name);
	*owner = key;
	return 0;
}

/* GET /v1/allocations[?pool=&state=&owner=&include_released=] */
int api_list_allocations(struct api_request *req)
{
	const char *owner = api_query(req, "owner"), *all = api_query(req, "include_released");
	const char *pool = api_query(req, "pool"), *state_name = api_query(req, "state");
	int state = state_name ? vfp_allocation_state_from_string(state_name) : -1;
	struct vfp_allocation **list = NULL;
	const char *uuid;
	char key[80], msg[AGENT_ERR_SIZE];
	size_t n = 0;
	json_t *a = NULL;
	int r = owner_filter(req, &owner, key, &uuid);

	if (r >= 0 && all && strcmp(all, "true") != 0 && strcmp(all, "false") != 0)
		r = api_fail(req, -EINVAL, "include_released: must be true or false");
	if (r >= 0 && state_name && state < 0)
		r = api_fail(req, -EINVAL, "state: \"%.32s\" is not an allocation state (reserved, "
			     "attached, releasing, released)", state_name);
	if (r < 0)
		return r;
	r = ledger_list_allocations(req->agent, owner,
				    (all && !strcmp(all, "true")) || state == VFP_ALLOCATION_RELEASED,
				    &list, &n, msg, sizeof(msg));
	if (r < 0)
		api_fail(req, r, "%s", msg);
	if (r >= 0)
		a = list_json(req->agent, list, n, pool, state, uuid);
	vfp_allocation_list_free(list, n);
	return r < 0 ? r : api_reply(req, 200, json_pack("{s:o*}", "allocations", a));
}

/* 200 with allocation @id as the ledger has it now. */
int api_reply_allocation(struct api_request *req, const char *id)
{
	struct vfp_allocation *alloc = NULL;
	char err[AGENT_ERR_SIZE];
	int r = agent_get_allocation(req->agent, id, &alloc, err, sizeof(err));

	if (r < 0)
		return api_fail(req, r, "%s", err);
	r = api_reply(req, 200, api_allocation_add_where(req->agent, api_allocation_json(alloc)));
	vfp_allocation_unref(alloc);
	return r;
}

int api_get_allocation(struct api_request *req)
{
	return api_reply_allocation(req, req->params[0]);
}

/*
 * Restores and frees the VFs → 204 (agent_release_allocation()); 202 when
 * the allocation is released but a VF's guest has not let go of it yet: it
 * stays quarantined in its domain until it does, and the message says so.
 */
int api_delete_allocation(struct api_request *req)
{
	char err[AGENT_ERR_SIZE] = "";
	int r = agent_release_allocation(req->agent, req->params[0], err, sizeof(err));

	if (r < 0)
		return api_fail(req, r, "%s", err);
	if (r > 0)
		return api_reply(req, 202, json_pack("{s:s, s:s, s:s}", "id", req->params[0],
						     "state", "released", "message", err));
	req->status = 204;
	return 0;
}
