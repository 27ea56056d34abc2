/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfagent: the CNI plugin (CNI spec 1.1.0; configs of 0.3.0 to 1.1.0). A
 * runtime runs it with CNI_COMMAND and the network's config on stdin; each
 * command is one request to vfagentd, which claims, attaches, checks and
 * releases VFs on the same ledger as its REST API (api/cni.c, agent/cni.c).
 * IPAM is delegated to the plugin the config's "ipam" names, as the spec's
 * section 4 says.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cni.h"

static const char *const supported[] = { "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0", NULL };

static int cmd_version(struct cni_call *call, struct cni_error *e)
{
	json_t *list = json_array(), *j;

	(void)e;
	for (int i = 0; supported[i]; i++)
		json_array_append_new(list, json_string(supported[i]));
	j = json_pack("{s:s, s:o}", "cniVersion", call->version ? call->version : "1.1.0",
		      "supportedVersions", list);
	cni_print(j);
	json_decref(j);
	return 0;
}

/* The addresses to configure: IPAM's, or runtimeConfig.ips without IPAM. */
static int addresses(struct cni_call *call, json_t **ret_ipam, struct cni_error *e)
{
	json_t *ips = json_object_get(json_object_get(call->conf, "runtimeConfig"), "ips"), *v;
	size_t i;

	*ret_ipam = NULL;
	if (call->ipam)
		return cni_ipam_exec(call, "ADD", ret_ipam, e);
	if (!ips)
		return 0;
	if (!json_is_array(ips))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"runtimeConfig.ips: must be a list of addresses with a prefix");
	*ret_ipam = json_pack("{s:[]}", "ips");
	json_array_foreach(ips, i, v) {
		if (!json_is_string(v) || !strchr(json_string_value(v), '/'))
			return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
					"runtimeConfig.ips[%zu]: must be an address with a "
					"prefix length (10.1.0.5/24)", i);
		json_array_append_new(json_object_get(*ret_ipam, "ips"),
				      json_pack("{s:O}", "address", v));
	}
	return 0;
}

/* The agent's ADD: the claim and the attach; @ret_pci: the VF it gave. */
static int agent_add(struct cni_call *call, json_t *ipam, char **ret_pci, struct cni_error *e)
{
	json_t *config = NULL, *req = NULL, *answer = NULL, *addrs = json_array();
	const char *pci = NULL, *gateway = NULL;
	int r = cni_agent_config(call, &config, &pci, e);

	if (r >= 0 && ipam)
		r = cni_ipam_addresses(ipam, addrs, &gateway, e);
	if (r >= 0) {
		req = json_pack("{s:s, s:s, s:s, s:s, s:O, s:O, s:s*, s:s*}", "command", "ADD",
				"key", call->key, "netns", call->netns, "ifname", call->ifname,
				"config", config, "addresses", addrs, "gateway", gateway, "pci",
				pci);
		r = cni_agent_ask(call->socket, req, &answer, e);
	}
	if (r >= 0) {
		json_t *vf = json_array_get(json_object_get(json_object_get(answer, "allocation"),
							    "vfs"), 0);

		*ret_pci = strdup(json_string_value(json_object_get(vf, "pci")) ?: "");
	}
	json_decref(config);
	json_decref(req);
	json_decref(answer);
	json_decref(addrs);
	return r;
}

static int cmd_add(struct cni_call *call, struct cni_error *e)
{
	json_t *ipam = NULL, *result = NULL;
	char mac[18] = "", *pci = NULL;
	unsigned mtu = 0;
	int r = cni_call_need_attachment(call, true, e);

	if (r >= 0)
		r = addresses(call, &ipam, e);
	if (r >= 0 && agent_add(call, ipam, &pci, e) < 0) {
		struct cni_error ignored;

		/* the spec: a failed ADD gives the delegated plugin's reservation back */
		if (call->ipam && ipam)
			cni_ipam_exec(call, "DEL", NULL, &ignored);
		r = -1;
	}
	if (r >= 0)
		r = cni_netns_link(call->netns, call->ifname, mac, &mtu, e);
	if (r >= 0 && !(result = cni_result(call, ipam, mac, mtu, pci)))
		r = cni_fail(e, CNI_ERR_IO, "out of memory", "out of memory");
	if (r >= 0)
		cni_print(result);
	json_decref(result);
	json_decref(ipam);
	free(pci);
	return r;
}

/* DEL: the agent releases (nothing to release is fine), then IPAM's DEL. */
static int cmd_del(struct cni_call *call, struct cni_error *e)
{
	json_t *req, *answer = NULL;
	int r = cni_call_need_attachment(call, false, e);

	if (r < 0)
		return r;
	req = json_pack("{s:s, s:s}", "command", "DEL", "key", call->key);
	r = cni_agent_ask(call->socket, req, &answer, e);
	json_decref(req);
	json_decref(answer);
	if (r >= 0 && call->ipam)
		r = cni_ipam_exec(call, "DEL", NULL, e);
	return r;
}

/* The addresses prevResult gives our interface. */
static json_t *prev_addresses(struct cni_call *call)
{
	json_t *prev = json_object_get(call->conf, "prevResult"), *list = json_array(), *v;
	json_t *ifs = json_object_get(prev, "interfaces");
	size_t i;

	json_array_foreach(json_object_get(prev, "ips"), i, v) {
		json_t *index = json_object_get(v, "interface");
		json_t *itf = json_is_integer(index)
				      ? json_array_get(ifs, (size_t)json_integer_value(index))
				      : NULL;
		const char *name = json_string_value(json_object_get(itf, "name"));

		if (name && strcmp(name, call->ifname) == 0 &&
		    json_is_string(json_object_get(v, "address")))
			json_array_append(list, json_object_get(v, "address"));
	}
	return list;
}

static int cmd_check(struct cni_call *call, struct cni_error *e)
{
	json_t *req, *answer = NULL, *addrs;
	int r;

	if (cni_version_cmp(call->version, "0.4.0") < 0)
		return cni_fail(e, CNI_ERR_VERSION, "incompatible CNI versions",
				"cniVersion: \"%s\" does not allow CHECK (0.4.0 and later)",
				call->version);
	r = cni_call_need_attachment(call, true, e);
	if (r < 0)
		return r;
	req = json_pack("{s:s, s:s, s:s, s:s}", "command", "CHECK", "key", call->key, "netns",
			call->netns, "ifname", call->ifname);
	r = cni_agent_ask(call->socket, req, &answer, e);
	if (r < 0 && e->code == CNI_ERR_CONFIG) { /* no such attachment: not a config's fault */
		e->code = CNI_ERR_NETNS;
		snprintf(e->msg, sizeof(e->msg), "the attachment is not as its ADD left it");
	}
	json_decref(req);
	json_decref(answer);
	addrs = prev_addresses(call);
	if (r >= 0)
		r = cni_netns_check(call->netns, call->ifname, addrs, e);
	json_decref(addrs);
	if (r >= 0 && call->ipam)
		r = cni_ipam_exec(call, "CHECK", NULL, e);
	return r;
}

static int need_1_1(struct cni_call *call, struct cni_error *e)
{
	if (cni_version_cmp(call->version, "1.1.0") < 0)
		return cni_fail(e, CNI_ERR_VERSION, "incompatible CNI versions",
				"cniVersion: \"%s\" does not allow %s (1.1.0 and later)",
				call->version, call->command);
	return 0;
}

/* The keys of cni.dev/valid-attachments, for the agent's GC. */
static int valid_keys(struct cni_call *call, json_t *keep, struct cni_error *e)
{
	json_t *list = json_object_get(call->conf, "cni.dev/valid-attachments"), *v;
	size_t i;

	if (list && !json_is_array(list))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"cni.dev/valid-attachments: must be a list");
	json_array_foreach(list, i, v) {
		const char *id = json_string_value(json_object_get(v, "containerID"));
		const char *ifname = json_string_value(json_object_get(v, "ifname"));
		char key[CNI_KEY_MAX + 1];

		if (!id || !ifname)
			return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
					"cni.dev/valid-attachments[%zu]: needs \"containerID\" and "
					"\"ifname\"", i);
		snprintf(key, sizeof(key), "cni:%s/%s/%s", call->name, id, ifname);
		json_array_append_new(keep, json_string(key));
	}
	return 0;
}

/* GC: the agent releases what is not valid, IPAM collects its own; errors do not stop either. */
static int cmd_gc(struct cni_call *call, struct cni_error *e)
{
	json_t *keep = json_array(), *req = NULL, *answer = NULL;
	struct cni_error ipam_e;
	char prefix[CNI_KEY_MAX + 1];
	int r = need_1_1(call, e), q = 0;

	if (r < 0) {
		json_decref(keep);
		return r;
	}
	r = valid_keys(call, keep, e);
	snprintf(prefix, sizeof(prefix), "cni:%s/", call->name);
	if (r >= 0) {
		req = json_pack("{s:s, s:s, s:O}", "command", "GC", "prefix", prefix, "keep", keep);
		r = cni_agent_ask(call->socket, req, &answer, e);
	}
	if (call->ipam)
		q = cni_ipam_exec(call, "GC", NULL, &ipam_e);
	if (r >= 0 && q < 0)
		*e = ipam_e, r = q;
	json_decref(keep);
	json_decref(req);
	json_decref(answer);
	return r;
}

/* STATUS: the agent answers and the pool has a free VF; then IPAM's STATUS. */
static int cmd_status(struct cni_call *call, struct cni_error *e)
{
	json_t *config = NULL, *req = NULL, *answer = NULL;
	const char *pci;
	int r = need_1_1(call, e);

	if (r >= 0)
		r = cni_agent_config(call, &config, &pci, e);
	if (r >= 0) {
		req = json_pack("{s:s, s:O}", "command", "STATUS", "config", config);
		r = cni_agent_ask(call->socket, req, &answer, e);
		if (r < 0 && e->code == CNI_ERR_TRY_AGAIN)
			e->code = CNI_ERR_NOT_AVAILABLE;
	}
	if (r >= 0 && json_integer_value(json_object_get(answer, "free")) == 0)
		r = cni_fail(e, CNI_ERR_NOT_AVAILABLE, "no free VF",
			     "pool \"%s\" has no free VF: an ADD would fail",
			     json_string_value(json_object_get(answer, "pool")));
	if (r >= 0 && call->ipam)
		r = cni_ipam_exec(call, "STATUS", NULL, e);
	json_decref(config);
	json_decref(req);
	json_decref(answer);
	return r;
}

static const struct {
	const char *name;
	int (*run)(struct cni_call *call, struct cni_error *e);
} commands[] = {
	{ "ADD", cmd_add },	  { "DEL", cmd_del },	    { "CHECK", cmd_check },
	{ "GC", cmd_gc },	  { "STATUS", cmd_status }, { "VERSION", cmd_version },
};

int main(void)
{
	struct cni_call call = { 0 };
	struct cni_error e = { 0 };
	int r = cni_call_load(&call, &e);

	for (size_t i = 0; r >= 0 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(call.command, commands[i].name) == 0) {
			r = commands[i].run(&call, &e);
			goto done;
		}
	if (r >= 0)
		r = cni_fail(&e, CNI_ERR_ENV, "invalid environment variables",
			     "CNI_COMMAND: \"%.16s\" is not ADD, DEL, CHECK, GC, STATUS or VERSION",
			     call.command);
done:
	if (r < 0)
		cni_print_error(call.version, &e);
	json_decref(call.conf);
	free(call.stdin_data);
	return r < 0 ? 1 : 0;
}
