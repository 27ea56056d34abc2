/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a claim asks of its VFs, and its form in the ledger: an object with
 * the keys of the request ({"mac","vlan","guid","ip","qos","vlan_proto",
 * "spoofchk","trust","link_state","min_tx_rate","max_tx_rate","pkey",
 * "membership","failover","security_groups"}), each present only when asked for.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "private.h"

VFP_EXPORT void vfp_settings_init(struct vfp_settings *s)
{
	*s = (struct vfp_settings){
		.vlan = VFP_UNSET,	   .qos = VFP_UNSET,	     .vlan_proto = VFP_UNSET,
		.spoofchk = VFP_UNSET,	   .trust = VFP_UNSET,	     .link_state = VFP_UNSET,
		.min_tx_rate = VFP_UNSET, .max_tx_rate = VFP_UNSET, .pkey = VFP_UNSET,
	};
}

static void set_string(json_t *o, const char *key, const char *v)
{
	if (v[0])
		json_object_set_new(o, key, json_string(v));
}

static void set_int(json_t *o, const char *key, long long v)
{
	if (v >= 0)
		json_object_set_new(o, key, json_integer(v));
}

json_t *vfp_settings_to_json(const struct vfp_settings *s)
{
	json_t *o = json_object();

	set_string(o, "mac", s->mac);
	set_int(o, "vlan", s->vlan);
	set_string(o, "guid", s->guid);
	set_string(o, "ip", s->ip);
	set_int(o, "qos", s->qos);
	if (s->vlan_proto >= 0)
		json_object_set_new(o, "vlan_proto",
				    json_string(s->vlan_proto == 0x88a8 ? "802.1ad" : "802.1Q"));
	if (s->spoofchk >= 0)
		json_object_set_new(o, "spoofchk", json_boolean(s->spoofchk));
	if (s->trust >= 0)
		json_object_set_new(o, "trust", json_boolean(s->trust));
	if (vfp_link_state_to_string(s->link_state))
		json_object_set_new(o, "link_state",
				    json_string(vfp_link_state_to_string(s->link_state)));
	set_int(o, "min_tx_rate", s->min_tx_rate);
	set_int(o, "max_tx_rate", s->max_tx_rate);
	if (s->failover.kind != VFP_STANDBY_NONE)
		json_object_set_new(o, "failover", vfp_failover_to_json(&s->failover));
	if (s->pkey >= 0) {
		char key[7];

		vfp_pkey_format(s->pkey, key);
		json_object_set_new(o, "pkey", json_string(key));
		json_object_set_new(o, "membership", json_string(vfp_pkey_membership(s->pkey)));
	}
	if (s->security_groups[0])
		json_object_set_new(o, "security_groups",
				    vfp_security_groups_to_json(s->security_groups));
	return o;
}

static int get_string(json_t *o, const char *key, char *buf, size_t size)
{
	json_t *v = json_object_get(o, key);

	if (v && (!json_is_string(v) || strlen(json_string_value(v)) >= size))
		return -EINVAL;
	snprintf(buf, size, "%s", v ? json_string_value(v) : "");
	return 0;
}

static int get_int(json_t *o, const char *key, long long max, long long *ret)
{
	json_t *v = json_object_get(o, key);

	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max))
		return -EINVAL;
	*ret = v ? json_integer_value(v) : VFP_UNSET;
	return 0;
}

static int get_tristate(json_t *o, const char *key, int *ret)
{
	json_t *v = json_object_get(o, key);

	if (v && !json_is_boolean(v))
		return -EINVAL;
	*ret = v ? json_is_true(v) : VFP_UNSET;
	return 0;
}

static int get_vlan_proto(json_t *o, int *ret)
{
	const char *s = json_string_value(json_object_get(o, "vlan_proto"));

	if (json_object_get(o, "vlan_proto") && (!s || (strcmp(s, "802.1Q") && strcmp(s, "802.1ad"))))
		return -EINVAL;
	*ret = !s ? VFP_UNSET : strcmp(s, "802.1Q") == 0 ? 0x8100 : 0x88a8;
	return 0;
}

static int get_link_state(json_t *o, int *ret)
{
	json_t *v = json_object_get(o, "link_state");

	*ret = v ? vfp_link_state_from_string(json_string_value(v)) : VFP_UNSET;
	return v && *ret < 0 ? -EINVAL : 0;
}

/* @o as the ledger stored it; -EINVAL for a value of the wrong type or range. */
int vfp_settings_from_json(json_t *o, struct vfp_settings *s)
{
	long long vlan, qos;
	int r;

	vfp_settings_init(s);
	r = get_string(o, "mac", s->mac, sizeof(s->mac));
	if (r >= 0 && (r = get_int(o, "vlan", 4095, &vlan)) >= 0)
		s->vlan = (int)vlan;
	if (r >= 0)
		r = get_string(o, "guid", s->guid, sizeof(s->guid));
	if (r >= 0)
		r = get_string(o, "ip", s->ip, sizeof(s->ip));
	if (r >= 0 && (r = get_int(o, "qos", 7, &qos)) >= 0)
		s->qos = (int)qos;
	if (r >= 0)
		r = get_vlan_proto(o, &s->vlan_proto);
	if (r >= 0)
		r = get_tristate(o, "spoofchk", &s->spoofchk);
	if (r >= 0)
		r = get_tristate(o, "trust", &s->trust);
	if (r >= 0)
		r = get_link_state(o, &s->link_state);
	if (r >= 0)
		r = get_int(o, "min_tx_rate", UINT32_MAX, &s->min_tx_rate);
	if (r >= 0)
		r = get_int(o, "max_tx_rate", UINT32_MAX, &s->max_tx_rate);
	if (r >= 0 && json_object_get(o, "failover"))
		r = vfp_failover_from_json(json_object_get(o, "failover"), "failover", &s->failover,
					   NULL);
	if (r >= 0) {
		const char *why;

		r = vfp_pkey_from_json(json_object_get(o, "pkey"), json_object_get(o, "membership"),
				       &s->pkey, &why);
	}
	if (r >= 0)
		r = vfp_security_groups_from_json(json_object_get(o, "security_groups"),
						  s->security_groups, sizeof(s->security_groups));
	return r;
}
