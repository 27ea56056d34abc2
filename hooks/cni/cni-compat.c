/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sriov-cni's and ib-sriov-cni's configs, read with only "type" changed:
 * their keys and value forms become the agent's (the REST API's names)
 * here, with their own checks and messages naming their keys. What they
 * accept is accepted: "802.1q" in any case, "on"/"off" for booleans. The
 * table in vfagent-cni(8) says what each key does here.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cni.h"

#define BAD_CONFIG(e, ...) cni_fail(e, CNI_ERR_CONFIG, "invalid network config", __VA_ARGS__)

/* A key of theirs renamed to ours; both in one config is ambiguous. */
static int rename_key(json_t *out, const char *theirs, const char *ours, struct cni_error *e)
{
	json_t *v = json_object_get(out, theirs);

	if (!v)
		return 0;
	if (json_object_get(out, ours))
		return BAD_CONFIG(e, "%s, %s: the same setting twice (%s is sriov-cni's name)",
				  theirs, ours, theirs);
	json_object_set(out, ours, v);
	json_object_del(out, theirs);
	return 0;
}

/* "on"/"off" (sriov-cni's strings) or a boolean; "" is sriov-cni's "not set". */
static int on_off(json_t *out, const char *key, struct cni_error *e)
{
	json_t *v = json_object_get(out, key);
	const char *s = json_string_value(v);

	if (!v || json_is_boolean(v))
		return 0;
	if (s && !s[0])
		return json_object_del(out, key), 0;
	if (s && (strcasecmp(s, "on") == 0 || strcasecmp(s, "off") == 0))
		return json_object_set_new(out, key, json_boolean(strcasecmp(s, "on") == 0)), 0;
	return BAD_CONFIG(e, "%s: must be \"on\", \"off\", true or false", key);
}

/* "802.1q" or "802.1ad" in any case, as sriov-cni lowers it; ours spells "802.1Q". */
static int vlan_proto(json_t *out, struct cni_error *e)
{
	json_t *v = json_object_get(out, "vlan_proto");
	const char *s = json_string_value(v);

	if (!v)
		return 0;
	if (s && strcasecmp(s, "802.1q") == 0)
		json_object_set_new(out, "vlan_proto", json_string("802.1Q"));
	else if (s && strcasecmp(s, "802.1ad") == 0)
		json_object_set_new(out, "vlan_proto", json_string("802.1ad"));
	else
		return BAD_CONFIG(e, "vlanProto: \"%.32s\" is not \"802.1Q\" or \"802.1ad\"",
				  s ? s : "(not a string)");
	return 0;
}

/*
 * sriov-cni's rules on VLAN 0: it disables the VLAN, so a priority or
 * 802.1ad on it is refused, not silently dropped by the driver.
 */
static int vlan_zero(json_t *out, struct cni_error *e)
{
	json_t *vlan = json_object_get(out, "vlan"), *qos = json_object_get(out, "qos");
	const char *proto = json_string_value(json_object_get(out, "vlan_proto"));

	if (!json_is_integer(vlan) || json_integer_value(vlan) != 0)
		return 0;
	if (json_is_integer(qos) && json_integer_value(qos) != 0)
		return BAD_CONFIG(e, "qos (vlanQoS): %lld needs a non-zero vlan (vlan 0 is no VLAN)",
				  (long long)json_integer_value(qos));
	if (proto && strcmp(proto, "802.1ad") == 0)
		return BAD_CONFIG(e, "vlan_proto (vlanProto): 802.1ad needs a non-zero vlan");
	return 0;
}

/* ib-sriov-cni's switches: accepted, and what they mean here taken out for the plugin. */
static int ib_switches(json_t *out, struct cni_compat *c, struct cni_error *e)
{
	static const char *const keys[] = { "rdmaIsolation", "ibKubernetesEnabled",
					    "vfioPciMode", NULL };
	bool *flags[] = { &c->rdma_isolation, &c->ib_kubernetes, &c->userspace };

	for (int i = 0; keys[i]; i++) {
		json_t *v = json_object_get(out, keys[i]);

		if (v && !json_is_boolean(v))
			return BAD_CONFIG(e, "%s: must be true or false", keys[i]);
		*flags[i] = json_is_true(v);
		json_object_del(out, keys[i]);
	}
	return 0;
}

/**
 * cni_compat_config() - the agent's config @out with sriov-cni's and
 * ib-sriov-cni's keys turned into ours; the plugin's own switches in @c
 */
int cni_compat_config(json_t *out, struct cni_compat *c, struct cni_error *e)
{
	static const char *const plugin_only[] = { "logLevel", "logFile", "cacheDir", NULL };

	for (int i = 0; plugin_only[i]; i++)
		json_object_del(out, plugin_only[i]);
	if (rename_key(out, "vlanQoS", "qos", e) < 0 ||
	    rename_key(out, "vlanProto", "vlan_proto", e) < 0 || vlan_proto(out, e) < 0 ||
	    on_off(out, "spoofchk", e) < 0 || on_off(out, "trust", e) < 0 ||
	    vlan_zero(out, e) < 0 || ib_switches(out, c, e) < 0)
		return -1;
	/* sriov-cni writes "" for an unset link_state */
	if (json_is_string(json_object_get(out, "link_state")) &&
	    !json_string_value(json_object_get(out, "link_state"))[0])
		json_object_del(out, "link_state");
	return 0;
}
