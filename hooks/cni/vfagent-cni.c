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
#include <strings.h>

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

/* The addresses to configure: IPAM's, or without IPAM those the runtime asks for. */
static int addresses(struct cni_call *call, json_t **ret_ipam, struct cni_error *e)
{
	*ret_ipam = NULL;
	if (call->ipam)
		return cni_ipam_exec(call, "ADD", ret_ipam, e);
	return cni_wished_ips(call, ret_ipam, e);
}

/*
 * The agent's ADD: the claim and the attach; @ret_pci: the VF it gave. With
 * @check_only (and no @ipam), the agent checks every field and does nothing:
 * asked before an IPAM plugin reserves an address for a config that fails.
 * 1 when the attachment was there already, as asked (an error when it is
 * there with other settings). @call->userspace: whether the VF goes (went)
 * in userspace mode.
 */
static int agent_add(struct cni_call *call, json_t *ipam, bool check_only, char **ret_pci,
		     struct cni_error *e)
{
	json_t *config = NULL, *req = NULL, *answer = NULL, *addrs = json_array();
	const char *pci = NULL;
	int r = cni_agent_config(call, &config, &pci, e);

	if (r >= 0 && ipam)
		r = cni_ipam_addresses(ipam, addrs, e);
	if (r >= 0) {
		req = json_pack("{s:s, s:s, s:s, s:s, s:O, s:O, s:s*, s:b, s:b}", "command", "ADD",
				"key", call->key, "netns", call->netns, "ifname", call->ifname,
				"config", config, "addresses", addrs, "pci", pci, "check_only",
				check_only, "userspace", call->compat.userspace);
		r = cni_agent_ask(call->socket, req, &answer, e);
	}
	call->userspace = r >= 0 && json_is_true(json_object_get(answer, "userspace"));
	if (r >= 0 && !check_only) {
		json_t *vf = json_array_get(json_object_get(json_object_get(answer, "allocation"),
							    "vfs"), 0);

		*ret_pci = strdup(json_string_value(json_object_get(vf, "pci")) ?: "");
	}
	if (r >= 0 && json_is_true(json_object_get(answer, "existed")))
		r = 1;
	json_decref(config);
	json_decref(req);
	json_decref(answer);
	json_decref(addrs);
	return r;
}

/* The agent's ADD undone (a route failed after it): always -1, for the caller's error. */
static int undo_agent_add(struct cni_call *call)
{
	json_t *req = json_pack("{s:s, s:s}", "command", "DEL", "key", call->key), *answer = NULL;
	struct cni_error ignored;

	if (cni_agent_ask(call->socket, req, &answer, &ignored) < 0)
		cni_log(CNI_LOG_ERROR, "undoing the ADD: %s", ignored.details);
	json_decref(req);
	json_decref(answer);
	return -1;
}

/*
 * A repeated ADD of an attachment the agent has as asked: the first ADD's
 * result, from the cache (1); 0 when there is none, and the ADD goes on.
 */
static int add_again(struct cni_call *call, struct cni_error *e)
{
	json_t *result = NULL;
	int r = cni_cache_read(call, &result, e);

	if (r == 1) {
		cni_log(CNI_LOG_INFO, "%s: attached already, answered as its ADD was", call->key);
		cni_print(result);
	}
	json_decref(result);
	return r;
}

static int cmd_add(struct cni_call *call, struct cni_error *e)
{
	json_t *ipam = NULL, *result = NULL;
	char mac[18] = "", *pci = NULL;
	unsigned mtu = 0;
	int r = cni_call_need_attachment(call, true, e), existed = 0;

	if (r >= 0)
		r = agent_add(call, NULL, true, &pci, e);
	if (r == 1 && (r = add_again(call, e)) != 0)
		return r < 0 ? r : 0;
	if (r >= 0)
		r = addresses(call, &ipam, e);
	if (r >= 0 && ((existed = agent_add(call, ipam, false, &pci, e)) < 0 ||
		       (!existed && !call->userspace &&
			cni_netns_routes(call->netns, call->ifname, ipam, e) < 0 &&
			undo_agent_add(call) < 0))) {
		struct cni_error ignored;

		/* the spec: a failed ADD gives the delegated plugin's reservation back */
		if (call->ipam && ipam)
			cni_ipam_exec(call, "DEL", NULL, &ignored);
		r = -1;
	}
	/* userspace mode: no netdev inside; IPAM's addresses are the application's (sriov-cni) */
	if (r >= 0 && !call->userspace)
		r = cni_netns_link(call->netns, call->ifname, mac, &mtu, e);
	if (r >= 0 && !(result = cni_result(call, ipam, mac, mtu, pci)))
		r = cni_fail(e, CNI_ERR_IO, "out of memory", "out of memory");
	if (r >= 0) {
		cni_log(CNI_LOG_INFO, "VF %s attached (%s)", pci ? pci : "?", call->key);
		cni_cache_write(call, result);
		cni_print(result);
	}
	json_decref(result);
	json_decref(ipam);
	free(pci);
	return r;
}

/*
 * DEL, best-effort as the spec makes it: IPAM's DEL runs whatever the agent
 * answered (sriov-cni releases IPAM first too), so an agent that is away
 * leaks no address; the agent's error is still returned (the VF is not
 * released yet: the runtime retries, and a repeated IPAM DEL is harmless).
 */
static int cmd_del(struct cni_call *call, struct cni_error *e)
{
	json_t *req, *answer = NULL;
	struct cni_error ipam_e;
	int r = cni_call_need_attachment(call, false, e), q = 0;

	if (r < 0)
		return r;
	req = json_pack("{s:s, s:s}", "command", "DEL", "key", call->key);
	r = cni_agent_ask(call->socket, req, &answer, e);
	json_decref(req);
	json_decref(answer);
	if (call->ipam)
		q = cni_ipam_exec(call, "DEL", NULL, &ipam_e);
	if (r < 0 && q < 0)
		cni_log(CNI_LOG_ERROR, "IPAM DEL: %s", ipam_e.details);
	else if (q < 0)
		*e = ipam_e, r = q;
	if (r >= 0) {
		cni_cache_forget(call);
		cni_log(CNI_LOG_INFO, "released %s", call->key);
	}
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

static json_t *prev_result(struct cni_call *call)
{
	return json_object_get(call->conf, "prevResult");
}

/* prevResult's interface entry of ours: its MAC and MTU as the netdev has them now. */
static int check_link(struct cni_call *call, struct cni_error *e)
{
	json_t *itf = NULL, *v;
	const char *want_mac;
	char mac[18];
	unsigned mtu = 0;
	size_t i;

	json_array_foreach(json_object_get(prev_result(call), "interfaces"), i, v)
		if (json_object_get(v, "sandbox") &&
		    strcmp(json_string_value(json_object_get(v, "name")) ?: "", call->ifname) == 0)
			itf = v;
	if (!itf)
		return 0; /* a prevResult without our interface: nothing of it to compare */
	if (cni_netns_link(call->netns, call->ifname, mac, &mtu, e) < 0)
		return -1;
	want_mac = json_string_value(json_object_get(itf, "mac"));
	if (want_mac && want_mac[0] && strcasecmp(want_mac, mac) != 0)
		return cni_fail(e, CNI_ERR_NETNS, "the MAC changed", "%s in %s has MAC %s, not %s",
				call->ifname, call->netns, mac, want_mac);
	v = json_object_get(itf, "mtu");
	if (json_is_integer(v) && json_integer_value(v) > 0 &&
	    (json_int_t)mtu != json_integer_value(v))
		return cni_fail(e, CNI_ERR_NETNS, "the MTU changed", "%s in %s has MTU %u, not %lld",
				call->ifname, call->netns, mtu, (long long)json_integer_value(v));
	return 0;
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
	call->userspace = r >= 0 && json_is_true(json_object_get(answer, "userspace"));
	if (r < 0 && e->code == CNI_ERR_CONFIG) { /* no such attachment: not a config's fault */
		e->code = CNI_ERR_NETNS;
		snprintf(e->msg, sizeof(e->msg), "the attachment is not as its ADD left it");
	}
	json_decref(req);
	json_decref(answer);
	addrs = prev_addresses(call);
	if (r >= 0 && !call->userspace) /* userspace mode: nothing inside to look at */
		r = cni_netns_check(call->netns, call->ifname, addrs, e);
	json_decref(addrs);
	if (r >= 0 && !call->userspace)
		r = check_link(call, e);
	if (r >= 0 && !call->userspace)
		r = cni_netns_check_routes(call->netns, call->ifname,
					   json_object_get(prev_result(call), "routes"),
					   json_object_get(prev_result(call), "ips"), e);
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

/*
 * Whether the IPAM plugin speaks GC and STATUS (1.1.0): one that predates
 * them (Debian 12's plugins stop at 1.0.0) fails them as an ADD without a
 * container ID; libcni skips a plugin that does not list 1.1.0, and so do we.
 */
static bool ipam_speaks_1_1(struct cni_call *call)
{
	json_t *answer = NULL, *v;
	struct cni_error ignored;
	bool yes = false;
	size_t i;

	if (cni_ipam_exec(call, "VERSION", &answer, &ignored) < 0)
		return true; /* let the command itself say what is wrong */
	json_array_foreach(json_object_get(answer, "supportedVersions"), i, v)
		if (json_is_string(v) && cni_version_cmp(json_string_value(v), "1.1.0") >= 0)
			yes = true;
	if (!yes)
		cni_log(CNI_LOG_INFO, "ipam %s predates CNI 1.1.0: no %s delegated to it",
			json_string_value(json_object_get(call->ipam, "type")), call->command);
	json_decref(answer);
	return yes;
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

		if (!id || !ifname || strlen(ifname) > 15)
			return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
					"cni.dev/valid-attachments[%zu]: needs \"containerID\" and "
					"\"ifname\"", i);
		cni_attachment_key(call->name, id, ifname, key);
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
	cni_key_prefix(call->name, prefix);
	if (r >= 0) {
		req = json_pack("{s:s, s:s, s:O}", "command", "GC", "prefix", prefix, "keep", keep);
		r = cni_agent_ask(call->socket, req, &answer, e);
	}
	if (r >= 0)
		cni_cache_gc(call, prefix, keep);
	if (call->ipam && ipam_speaks_1_1(call))
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
		req = json_pack("{s:s, s:O, s:s*}", "command", "STATUS", "config", config, "pci",
				pci);
		r = cni_agent_ask(call->socket, req, &answer, e);
		if (r < 0 && e->code == CNI_ERR_TRY_AGAIN)
			e->code = CNI_ERR_NOT_AVAILABLE;
	}
	if (r >= 0 && json_integer_value(json_object_get(answer, "free")) == 0)
		r = cni_fail(e, CNI_ERR_NOT_AVAILABLE, "no free VF",
			     "pool \"%s\" has no free VF: an ADD would fail",
			     json_string_value(json_object_get(answer, "pool")));
	if (r >= 0 && call->ipam && ipam_speaks_1_1(call))
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

	if (r >= 0 && call.conf)
		r = cni_log_setup(&call, &e);
	if (r >= 0) {
		char *conf = call.conf ? json_dumps(call.conf, JSON_COMPACT) : NULL;

		cni_log(CNI_LOG_DEBUG, "CNI_NETNS=%s CNI_ARGS=%s config %.700s",
			call.netns ? call.netns : "", call.args ? call.args : "", conf ? conf : "");
		free(conf);
	}

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
