/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Results and errors as the spec's "Result Types" section defines them, in
 * the config's version: 0.3.x and 0.4.0 give each IP a "version", 1.1.0
 * gives an interface its "mtu" and "pciID". What IPAM returned is turned
 * into the agent's request (its addresses) here too.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cni.h"

/**
 * cni_ipam_addresses() - the addresses IPAM gave, appended to @addresses, for
 * the agent; their routes the plugin sets itself (cni-route.c)
 */
int cni_ipam_addresses(json_t *ipam, json_t *addresses, struct cni_error *e)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(ipam, "ips"), i, v) {
		json_t *a = json_object_get(v, "address");

		if (!json_is_string(a))
			return cni_fail(e, CNI_ERR_DECODE, "failed to decode content",
					"ipam result: ips[%zu].address: not a string", i);
		json_array_append(addresses, a);
	}
	return 0;
}

static json_t *interface_json(const struct cni_call *call, const char *mac, unsigned mtu,
			      const char *pci)
{
	json_t *i = json_pack("{s:s, s:s*, s:s}", "name", call->ifname, "mac",
			      mac && mac[0] ? mac : NULL, "sandbox", call->netns);

	if (i && cni_version_cmp(call->version, "1.1.0") >= 0) {
		if (mtu)
			json_object_set_new(i, "mtu", json_integer(mtu));
		if (pci)
			json_object_set_new(i, "pciID", json_string(pci));
	}
	return i;
}

/* Each IP of @ipam for interface @index, as @version spells it. */
static void add_ips(json_t *result, json_t *ipam, size_t index, const char *version)
{
	json_t *ips = json_object_get(result, "ips"), *ip;
	size_t i;

	json_array_foreach(json_object_get(ipam, "ips"), i, ip) {
		json_t *c = json_deep_copy(ip);
		const char *a = json_string_value(json_object_get(ip, "address"));

		json_object_set_new(c, "interface", json_integer((json_int_t)index));
		if (cni_version_cmp(version, "1.0.0") < 0)
			json_object_set_new(c, "version", json_string(strchr(a, ':') ? "6" : "4"));
		else
			json_object_del(c, "version");
		json_array_append_new(ips, c);
	}
}

static void add_all(json_t *result, const char *key, json_t *more)
{
	json_t *list = json_object_get(result, key), *v;
	size_t i;

	if (!json_is_array(list)) {
		list = json_array();
		json_object_set_new(result, key, list);
	}
	json_array_foreach(more, i, v)
		json_array_append(list, v);
}

/**
 * cni_result() - the ADD result: the prevResult given (an ADD in a chain),
 * with the VF's netdev, the IPs, routes and DNS of @ipam (NULL: none) added
 */
json_t *cni_result(const struct cni_call *call, json_t *ipam, const char *mac, unsigned mtu,
		   const char *pci)
{
	json_t *prev = json_object_get(call->conf, "prevResult");
	json_t *r = json_is_object(prev) ? json_deep_copy(prev) : json_object();
	json_t *ifs;

	if (!r)
		return NULL;
	json_object_set_new(r, "cniVersion", json_string(call->version));
	add_all(r, "interfaces", NULL);
	add_all(r, "ips", NULL);
	ifs = json_object_get(r, "interfaces");
	json_array_append_new(ifs, interface_json(call, mac, mtu, pci));
	add_ips(r, ipam, json_array_size(ifs) - 1, call->version);
	if (json_array_size(json_object_get(ipam, "routes")))
		add_all(r, "routes", json_object_get(ipam, "routes"));
	if (json_is_object(json_object_get(ipam, "dns")) && !json_object_get(r, "dns"))
		json_object_set(r, "dns", json_object_get(ipam, "dns"));
	if (!json_object_get(r, "dns") && json_is_object(json_object_get(call->conf, "dns")))
		json_object_set(r, "dns", json_object_get(call->conf, "dns"));
	return r;
}

void cni_print(json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	fflush(stdout);
}

/* The spec's error object, on stdout as the spec's libraries print it. */
void cni_print_error(const char *version, const struct cni_error *e)
{
	json_t *j = json_pack("{s:s, s:i, s:s, s:s}", "cniVersion", version ? version : "1.1.0",
			      "code", e->code, "msg", e->msg, "details", e->details);

	if (j)
		cni_print(j);
	json_decref(j);
	cni_log(CNI_LOG_ERROR, "%s: %s", e->msg, e->details);
}
