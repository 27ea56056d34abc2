/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Allocations as the API shows them (api/openapi.yaml), from the ledger's typed allocations. */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "agent/pf/pf-side.h"
#include "api/api.h"

static json_t *string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *api_owner_json(const struct vfp_owner *o)
{
	return json_pack("{s:s, s:o*, s:o*, s:o*, s:o*, s:o*}", "kind",
			 o->kind == VFP_OWNER_VM ? "vm" : "container", "name",
			 o->name ? json_string(o->name) : NULL, "uuid",
			 o->uuid ? json_string(o->uuid) : NULL, "netns",
			 o->netns ? json_string(o->netns) : NULL, "pid",
			 o->pid > 0 ? json_integer(o->pid) : NULL, "netns_inode",
			 o->netns_inode ? json_integer((json_int_t)o->netns_inode) : NULL);
}

static json_t *int_if_set(long long v)
{
	return v >= 0 ? json_integer(v) : NULL;
}

static json_t *bool_if_set(int v)
{
	return v >= 0 ? json_boolean(v) : NULL;
}

/* What the claim asked, each key present only when asked for. */
json_t *api_settings_json(const struct vfp_settings *s)
{
	const char *proto = s->vlan_proto < 0 ? NULL : s->vlan_proto == 0x88a8 ? "802.1ad" : "802.1Q";
	const char *link = vfp_link_state_to_string(s->link_state);

	char key[7];

	vfp_pkey_format(s->pkey, key);
	return json_pack("{s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, "
			 "s:o*, s:o*, s:o*}", "pkey", s->pkey >= 0 ? json_string(key) : NULL, "membership",
			 s->pkey >= 0 ? json_string(vfp_pkey_membership(s->pkey)) : NULL,
			 "mac", s->mac[0] ? json_string(s->mac) : NULL, "vlan", int_if_set(s->vlan),
			 "guid", s->guid[0] ? json_string(s->guid) : NULL, "ip",
			 s->ip[0] ? json_string(s->ip) : NULL, "qos", int_if_set(s->qos),
			 "vlan_proto", proto ? json_string(proto) : NULL, "spoofchk",
			 bool_if_set(s->spoofchk), "trust", bool_if_set(s->trust), "link_state",
			 link ? json_string(link) : NULL, "min_tx_rate", int_if_set(s->min_tx_rate),
			 "max_tx_rate", int_if_set(s->max_tx_rate), "failover",
			 vfp_failover_to_json(&s->failover), "security_groups",
			 vfp_security_groups_to_json(s->security_groups));
}

static json_t *vfs_json(const struct vfp_allocation *a)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < vfp_allocation_get_vf_count(a); i++) {
		const struct vfp_allocation_vf *v = vfp_allocation_get_vf(a, i);

		json_array_append_new(list, json_pack("{s:s, s:s, s:i, s:o, s:s}", "pci", v->pci,
						      "pf", v->pf, "index", (int)v->index, "guid",
						      v->guid[0] ? json_string(v->guid)
								 : json_null(),
						      "state", vfp_vf_state_to_string(v->state)));
	}
	return list;
}

/*
 * {"id","pool","owner":{…},"state","settings":{…},"idempotency_key","flag",
 *  "lease_expires","hold_while","created","updated","vfs":[{"pci","pf","index","guid","state"}]}
 */
json_t *api_allocation_json(const struct vfp_allocation *a)
{
	long long lease;
	bool has_lease = vfp_allocation_get_lease_expires(a, &lease) >= 0;

	return json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o}", "id",
			 vfp_allocation_get_id(a), "pool", vfp_allocation_get_pool(a), "owner",
			 api_owner_json(vfp_allocation_get_owner(a)), "state",
			 vfp_allocation_state_to_string(vfp_allocation_get_state(a)), "settings",
			 api_settings_json(vfp_allocation_get_settings(a)), "idempotency_key",
			 string_or_null(vfp_allocation_get_idempotency_key(a)), "flag",
			 string_or_null(vfp_allocation_get_flag(a)), "lease_expires",
			 has_lease ? json_integer(lease) : json_null(), "hold_while",
			 string_or_null(vfp_allocation_get_hold_path(a)), "created",
			 (json_int_t)vfp_allocation_get_created(a), "updated",
			 (json_int_t)vfp_allocation_get_updated(a), "vfs", vfs_json(a));
}

/* Where VF @pci is, as its restore point says: a namespace and name, or a domain. */
static json_t *where_json(struct agent *agent, const char *pci)
{
	struct vfp_restore_point *rp = NULL;
	json_t *w = json_null();

	if (ledger_get_restore_point(agent, pci, &rp, NULL, 0) < 0)
		rp = NULL;
	if (rp && rp->netns)
		w = json_pack("{s:s, s:s?}", "netns", rp->netns, "ifname", rp->ifname);
	else if (rp && rp->domain_uuid)
		w = json_pack("{s:s?, s:s}", "domain", rp->domain, "uuid", rp->domain_uuid);
	vfp_restore_point_free(rp);
	return w ? w : json_null();
}

/**
 * api_allocation_add_where() - each attached VF of the allocation @j gets
 * "where": {"netns","ifname"} or {"domain","uuid"}, and with a P_Key
 * "partition": "applied", "pending" or "unknown" (pf_side_partition_state());
 * the others null
 */
json_t *api_allocation_add_where(struct agent *agent, json_t *j)
{
	json_t *settings = json_object_get(j, "settings");
	int key = VFP_UNSET;
	const char *why;
	size_t i;
	json_t *vf;

	if (vfp_pkey_from_json(json_object_get(settings, "pkey"),
			       json_object_get(settings, "membership"), &key, &why) < 0)
		key = VFP_UNSET;
	json_array_foreach(json_object_get(j, "vfs"), i, vf) {
		const char *state = json_string_value(json_object_get(vf, "state"));
		const char *pci = json_string_value(json_object_get(vf, "pci"));
		bool attached = state && strcmp(state, "attached") == 0;

		json_object_set_new(vf, "where", attached ? where_json(agent, pci) : json_null());
		json_object_set_new(vf, "partition",
				    attached && key >= 0
					    ? json_string(pf_side_partition_state(agent, pci, key))
					    : json_null());
	}
	return j;
}
