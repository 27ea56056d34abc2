/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF's settings on its PF, and their form in the ledger's restore points:
 * the keys of a claim's settings ("mac", "vlan", "qos", "vlan_proto",
 * "spoofchk", "trust", "link_state", "min_tx_rate", "max_tx_rate") plus
 * "node_guid" and "port_guid".
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "private.h"

static const char *const link_states[] = { "auto", "enable", "disable" };

VFP_EXPORT const char *vfp_link_state_to_string(int link_state)
{
	return link_state >= 0 && link_state < (int)ELEMENTSOF(link_states)
		       ? link_states[link_state]
		       : NULL;
}

VFP_EXPORT int vfp_link_state_from_string(const char *s)
{
	for (int i = 0; s && i < (int)ELEMENTSOF(link_states); i++)
		if (strcmp(s, link_states[i]) == 0)
			return i;
	return -EINVAL;
}

VFP_EXPORT void vfp_vf_config_init(struct vfp_vf_config *c, unsigned index)
{
	*c = (struct vfp_vf_config){
		.index = index,	       .vlan = VFP_UNSET,	 .qos = VFP_UNSET,
		.vlan_proto = VFP_UNSET, .spoofchk = VFP_UNSET,	 .trust = VFP_UNSET,
		.link_state = VFP_UNSET, .min_tx_rate = VFP_UNSET, .max_tx_rate = VFP_UNSET,
		.pkey = VFP_UNSET,
	};
}

VFP_EXPORT bool vfp_vf_config_is_empty(const struct vfp_vf_config *c)
{
	return !c->has_mac && c->vlan < 0 && c->spoofchk < 0 && c->trust < 0 &&
	       c->link_state < 0 && c->min_tx_rate < 0 && c->max_tx_rate < 0 &&
	       !c->has_node_guid && !c->has_port_guid && c->pkey < 0;
}

static void set_guid(json_t *o, const char *key, unsigned long long g)
{
	char buf[24];

	vfp_guid_format(g, buf);
	json_object_set_new(o, key, json_string(buf));
}

/**
 * vfp_vf_config_to_settings() - a VF's settings on its PF in a claim's
 * terms (MAC, VLAN with its qos and protocol, spoofchk, trust, link state,
 * rates); the GUIDs are not among them
 */
VFP_EXPORT void vfp_vf_config_to_settings(const struct vfp_vf_config *c, struct vfp_settings *s)
{
	vfp_settings_init(s);
	if (c->has_mac)
		snprintf(s->mac, sizeof(s->mac), "%02x:%02x:%02x:%02x:%02x:%02x", c->mac[0],
			 c->mac[1], c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
	if (c->vlan >= 0) { /* a VLAN is restored whole: with its qos and protocol */
		s->vlan = c->vlan;
		s->qos = c->qos > 0 ? c->qos : 0;
		s->vlan_proto = c->vlan_proto == 0x88a8 ? 0x88a8 : 0x8100;
	}
	s->spoofchk = c->spoofchk, s->trust = c->trust, s->link_state = c->link_state;
	s->min_tx_rate = c->min_tx_rate, s->max_tx_rate = c->max_tx_rate;
}

/* The stored form: a claim's settings keys (one code path, settings.c), plus the GUIDs. */
json_t *vfp_vf_config_to_json(const struct vfp_vf_config *c)
{
	struct vfp_settings s;
	json_t *o;

	vfp_vf_config_to_settings(c, &s);
	o = vfp_settings_to_json(&s);
	if (o && c->has_node_guid)
		set_guid(o, "node_guid", c->node_guid);
	if (o && c->has_port_guid)
		set_guid(o, "port_guid", c->port_guid);
	return o;
}

static int get_guid(json_t *o, const char *key, bool *ret_has, unsigned long long *ret)
{
	const char *s = json_string_value(json_object_get(o, key));

	*ret_has = s != NULL;
	return s ? vfp_guid_parse(s, ret) : 0;
}

/* A restore point's "vf_settings" back into @c; -EINVAL for a value out of its range. */
int vfp_vf_config_from_json(json_t *o, unsigned index, struct vfp_vf_config *c)
{
	struct vfp_settings s;
	int r;

	vfp_vf_config_init(c, index);
	if (!json_is_object(o))
		return -EINVAL;
	r = vfp_settings_from_json(o, &s);
	if (r >= 0 && s.mac[0]) {
		r = vfp_mac_parse(s.mac, c->mac);
		c->has_mac = r >= 0;
	}
	c->vlan = s.vlan, c->qos = s.qos, c->vlan_proto = s.vlan_proto;
	c->spoofchk = s.spoofchk, c->trust = s.trust, c->link_state = s.link_state;
	c->min_tx_rate = s.min_tx_rate, c->max_tx_rate = s.max_tx_rate;
	if (r >= 0)
		r = get_guid(o, "node_guid", &c->has_node_guid, &c->node_guid);
	if (r >= 0)
		r = get_guid(o, "port_guid", &c->has_port_guid, &c->port_guid);
	return r;
}
