/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CNI plugin's requests (hooks/cni/), one JSON object each, answered
 * with one JSON object: {"ok":true,…} or {"error":"EINVAL","message":"…"}.
 * The plugin speaks CNI to the runtime (environment, config, IPAM, results);
 * here each command becomes one agent operation (agent/cni.c), its fields
 * checked by the REST API's own parsers so errors name the same fields:
 *
 *   {"command":"ADD","key":…,"netns":…,"ifname":…,"config":{"pool":…,"mac":…,
 *    "vlan":…,"mtu":…,…},"addresses":[…],"gateway":…,"pci":…[,"check_only":true]
 *    [,"userspace":true]} (userspace: the VF stays on vfio-pci, PF side only; the
 *    answer's "userspace" says whether the ADD went so)
 *     (check_only: every field checked, nothing done; "existed" says whether
 *     the attachment is there as asked, EEXIST when it is there otherwise)
 *   {"command":"DEL","key":…}
 *   {"command":"CHECK","key":…,"netns":…,"ifname":…} ("userspace": its VF has no netdev)
 *   {"command":"GC","prefix":"cni:NET/","keep":["cni:NET/CTR/IF",…]}
 *   {"command":"STATUS","config":{"pool":…|"network":…},"pci":…}
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cni.h"
#include "agent/log.h"
#include "api/api.h"

#define CNI_MAX_KEEP 4096

/* The keys of a CNI config the agent reads: the REST API's names. */
static const char *const config_keys[] = { "pool", "network", "mac", "vlan", "qos", "vlan_proto",
					   "spoofchk", "trust", "link_state", "min_tx_rate",
					   "max_tx_rate", "guid", "mtu", "numa_node", "placement",
					   "near", "max_distance", "pkey", "membership",
					   NULL };

/* The PID of "/proc/PID/ns/net", exactly (digits only, nothing after); 0 for anything else. */
static long long proc_netns_pid(const char *netns)
{
	const char *digits = strncmp(netns, "/proc/", 6) == 0 ? netns + 6 : "";
	size_t n = strspn(digits, "0123456789");
	long long pid = 0;

	if (n == 0 || n > 7 || digits[0] == '0' || strcmp(digits + n, "/ns/net") != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		pid = pid * 10 + (digits[i] - '0');
	return pid <= 4194304 ? pid : 0;
}

/*
 * The owner a CNI_NETNS path names: a namespace path, exactly: a /run/netns
 * (or /var/run/netns) namespace, or the process of /proc/PID/ns/net (not
 * /proc/PID/ns/netfoo, nor a bare name); @attach_netns as
 * agent_attach_netns() takes it. Anything else is refused before a claim.
 */
static int netns_owner(struct api_request *req, const char *netns, struct vfp_owner *o,
		       char attach_netns[static 80])
{
	long long pid = proc_netns_pid(netns);

	*o = (struct vfp_owner){ .kind = VFP_OWNER_CONTAINER };
	if (pid > 0) {
		o->pid = pid;
		snprintf(attach_netns, 80, "pid:%lld", pid);
		return 0;
	}
	if (netns[0] == '/')
		o->netns = vfp_owner_netns_name(netns);
	if (!o->netns)
		return api_fail(req, -EINVAL, "CNI_NETNS: \"%.64s\" is neither a /run/netns "
				"namespace nor /proc/PID/ns/net", netns);
	snprintf(attach_netns, 80, "%s", o->netns);
	return 0;
}

/* The claim's body: the config's VF keys and the owner (the REST API's "owner"). */
static json_t *claim_body(json_t *config, const struct vfp_owner *o)
{
	json_t *body = json_deep_copy(config);

	if (!body)
		return NULL;
	json_object_del(body, "mtu");
	json_object_set_new(body, "owner",
			    o->pid ? json_pack("{s:s, s:I}", "kind", "container", "pid",
					       (json_int_t)o->pid)
				   : json_pack("{s:s, s:s}", "kind", "container", "netns", o->netns));
	return body;
}

/* The attach's body: {"netns","ifname","addresses","gateway","mtu"}. */
static json_t *attach_body(json_t *msg, const char *netns)
{
	json_t *b = json_pack("{s:s, s:O*, s:O*, s:O*, s:O*}", "netns", netns, "ifname",
			      json_object_get(msg, "ifname"), "addresses",
			      json_object_get(msg, "addresses"), "gateway",
			      json_object_get(msg, "gateway"), "mtu",
			      json_object_get(json_object_get(msg, "config"), "mtu"));
	return b;
}

static json_t *ok(json_t *extra)
{
	json_t *j = extra ? extra : json_object();

	json_object_set_new(j, "ok", json_true());
	return j;
}

static json_t *fail(struct api_request *req, int r)
{
	return api_error_body(r, req->error);
}

static int parse_add(struct api_request *req, json_t *msg, json_t **claim, json_t **attach,
		     char attach_netns[static 80])
{
	json_t *config = json_object_get(msg, "config");
	const char *netns = NULL, *key = NULL;
	struct vfp_owner o;
	int r;

	if (!json_is_object(config))
		return api_fail(req, -EINVAL, "config: must be an object");
	r = api_check_keys(req, config, config_keys);
	if (r >= 0)
		r = api_get_string(req, msg, "key", true, &key);
	if (r >= 0)
		r = api_get_string(req, msg, "netns", true, &netns);
	if (r >= 0)
		r = netns_owner(req, netns, &o, attach_netns);
	if (r < 0)
		return r;
	*claim = claim_body(config, &o);
	*attach = attach_body(msg, attach_netns);
	return *claim && *attach ? 0 : api_fail(req, -ENOMEM, "out of memory");
}

/*
 * The InfiniBand VF whose port GUID is @guid (the last 8 bytes of its IPoIB
 * netdev's 20-byte address, as the host shows it): its PCI address in @buf.
 */
static int vf_of_guid(struct api_request *req, const char *guid, char buf[static 32])
{
	struct vfp_inventory *inv = agent_get_inventory(req->agent);
	unsigned long long want, got;
	int r = -ENOENT;

	vfp_guid_parse(guid, &want);
	for (size_t i = 0; r == -ENOENT && i < vfp_inventory_get_pf_count(inv); i++) {
		const struct vfp_pf *p = vfp_inventory_get_pf(inv, i);

		for (size_t j = 0; r == -ENOENT && j < vfp_pf_get_vf_count(p); j++) {
			const struct vfp_vf *vf = vfp_pf_get_vf(p, j);
			const char *mac = vfp_vf_get_mac(vf);

			if (vfp_vf_get_link_type(vf) == VFP_LINK_INFINIBAND && mac &&
			    strlen(mac) == 59 && vfp_guid_parse(mac + 36, &got) == 0 && got == want) {
				snprintf(buf, 32, "%s", vfp_vf_get_pci(vf));
				r = 0;
			}
		}
	}
	vfp_inventory_unref(inv);
	if (r < 0)
		api_fail(req, -ENOENT, "deviceID: no InfiniBand VF of this host has GUID %.32s", guid);
	return r;
}

/* "pci": a VF's PCI address, or an InfiniBand VF's GUID (deviceID names either) into @buf. */
static int device_pci(struct api_request *req, json_t *msg, const char **ret, char buf[static 32])
{
	unsigned long long g;
	int r = api_get_string(req, msg, "pci", false, ret);

	if (r < 0 || !*ret || vfp_pci_addr_is_valid(*ret))
		return r;
	if (vfp_guid_parse(*ret, &g) < 0)
		return api_fail(req, -EINVAL, "deviceID: \"%.32s\" is neither a PCI address nor an "
				"InfiniBand GUID", *ret);
	r = vf_of_guid(req, *ret, buf);
	*ret = r < 0 ? NULL : buf;
	return r;
}

/*
 * Userspace mode: asked for ("userspace", the config's vfioPciMode), or the
 * VF deviceID names is on a userspace driver (sriov-cni's DPDK mode and
 * ib-sriov-cni detect it so). A VF the agent picks itself on vfio-pci is
 * not: a config without either wants a netdev.
 */
static bool userspace_mode(struct api_request *req, json_t *msg, const char *pci)
{
	struct vfp_inventory *inv;
	const struct vfp_vf *vf;
	const char *driver;
	bool yes;

	if (json_is_true(json_object_get(msg, "userspace")))
		return true;
	if (!pci)
		return false;
	inv = agent_get_inventory(req->agent);
	vf = vfp_inventory_find_vf(inv, pci);
	driver = vf ? vfp_vf_get_driver(vf) : NULL;
	yes = driver && (strcmp(driver, "vfio-pci") == 0 || strcmp(driver, "uio_pci_generic") == 0 ||
			 strcmp(driver, "igb_uio") == 0);
	vfp_inventory_unref(inv);
	return yes;
}

static bool configured_pool(struct agent *a, const char *pool)
{
	struct vfp_config *config = agent_get_config(a);
	bool found = vfp_config_find_pool(config, pool) >= 0;

	vfp_config_unref(config);
	return found;
}

/*
 * An attachment found attached under the key is this ADD's only if the config
 * asks for what it has: the pool, the VF, the settings. Else -EEXIST naming
 * what differs: the runtime must DEL it first (the spec has no ADD that
 * changes an attachment), and answering with the old one would ignore it.
 */
static int same_attachment(struct api_request *req, const char *key,
			   const struct vfp_allocation *alloc, const struct api_claim_body *b)
{
	json_t *have = api_settings_json(vfp_allocation_get_settings(alloc));
	json_t *want = api_settings_json(&b->settings), *v;
	const char *field = NULL, *k;

	if (strcmp(vfp_allocation_get_pool(alloc), b->c.pool) != 0)
		field = "pool";
	else if (b->c.pci && strcmp(vfp_allocation_get_vf(alloc, 0)->pci, b->c.pci) != 0)
		field = "deviceID";
	json_object_foreach(want, k, v)
		if (!field && !json_equal(v, json_object_get(have, k)))
			field = k;
	json_object_foreach(have, k, v)
		if (!field && !json_object_get(want, k))
			field = k;
	json_decref(have);
	json_decref(want);
	if (!field)
		return 0;
	return api_fail(req, -EEXIST, "attachment %s exists with other settings (%s differs): "
			"DEL it first", key, field);
}

/* The ADD asked before IPAM runs: 1 when the attachment exists as asked, 0 when it is to make. */
static int check_add(struct api_request *req, const char *key, const struct api_claim_body *b)
{
	struct vfp_allocation *alloc = NULL;
	char err[AGENT_ERR_SIZE] = "";
	int r;

	if (!configured_pool(req->agent, b->c.pool))
		return api_fail(req, -EINVAL, "pool: \"%.64s\" is not a pool of the config",
				b->c.pool);
	r = agent_cni_attached(req->agent, key, b->c.owner, &alloc, err, sizeof(err));
	if (r < 0)
		return api_fail(req, r, "%s", err);
	if (r == 1 && same_attachment(req, key, alloc, b) < 0)
		r = -EEXIST;
	vfp_allocation_unref(alloc);
	return r;
}

static json_t *cni_add(struct api_request *req, json_t *msg)
{
	json_t *claim = NULL, *attach = NULL, *answer = NULL;
	struct api_claim_body b = { 0 };
	struct api_netns_body nb = { 0 };
	struct vfp_allocation *alloc = NULL;
	char netns[80], err[AGENT_ERR_SIZE] = "", pci_buf[32];
	const char *pci = NULL, *key = json_string_value(json_object_get(msg, "key"));
	bool check_only = json_is_true(json_object_get(msg, "check_only"));
	int r = parse_add(req, msg, &claim, &attach, netns);

	if (r >= 0)
		r = device_pci(req, msg, &pci, pci_buf);
	if (r >= 0 && pci) /* the claim's "pci": without "pool", the pool is that VF's */
		json_object_set_new(claim, "pci", json_string(pci));
	if (r >= 0)
		r = api_parse_claim(req, claim, key, &b);
	if (r >= 0)
		r = api_parse_netns_request(req, attach, &nb);
	nb.q.userspace = r >= 0 && userspace_mode(req, msg, pci);
	if (r >= 0 && check_only) /* the plugin asks before its IPAM runs: nothing done */
		r = check_add(req, key, &b);
	else if (r >= 0 &&
		 (r = agent_cni_add(req->agent, &b.c, &nb.q, &alloc, err, sizeof(err))) < 0)
		api_fail(req, r, "%s", err);
	if (r == 1 && !check_only && same_attachment(req, key, alloc, &b) < 0)
		r = -EEXIST;
	if (r >= 0)
		answer = ok(check_only ? json_pack("{s:b, s:b}", "existed", r == 1, "userspace",
						   nb.q.userspace)
				       : json_pack("{s:o, s:b, s:b}", "allocation",
						   api_allocation_add_where(req->agent,
									    api_allocation_json(alloc)),
						   "existed", r == 1, "userspace", nb.q.userspace));
	vfp_allocation_unref(alloc);
	json_decref(claim);
	json_decref(attach);
	return r < 0 ? fail(req, r) : answer;
}

static json_t *cni_del(struct api_request *req, json_t *msg)
{
	const char *key = NULL;
	char err[AGENT_ERR_SIZE] = "";
	int r = api_get_string(req, msg, "key", true, &key);

	if (r >= 0 && (r = agent_cni_del(req->agent, key, err, sizeof(err))) < 0)
		api_fail(req, r, "%s", err);
	return r < 0 ? fail(req, r) : ok(NULL);
}

static json_t *cni_check(struct api_request *req, json_t *msg)
{
	const char *key = NULL, *netns = NULL, *ifname = NULL;
	char attach_netns[80], err[AGENT_ERR_SIZE] = "";
	struct vfp_owner o;
	int r = api_get_string(req, msg, "key", true, &key);

	if (r >= 0)
		r = api_get_string(req, msg, "netns", true, &netns);
	if (r >= 0)
		r = api_get_string(req, msg, "ifname", true, &ifname);
	if (r >= 0)
		r = netns_owner(req, netns, &o, attach_netns);
	if (r >= 0 && (r = agent_cni_check(req->agent, key, &o, ifname, err, sizeof(err))) < 0)
		api_fail(req, r, "%s", err);
	return r < 0 ? fail(req, r) : ok(json_pack("{s:b}", "userspace", r == 1));
}

static json_t *cni_gc(struct api_request *req, json_t *msg)
{
	json_t *list = json_object_get(msg, "keep"), *v;
	const char **keep = NULL, *prefix = NULL;
	char err[AGENT_ERR_SIZE] = "";
	unsigned released = 0;
	size_t i;
	int r = api_get_string(req, msg, "prefix", true, &prefix);

	if (r >= 0 && (!json_is_array(list) || json_array_size(list) > CNI_MAX_KEEP))
		r = api_fail(req, -EINVAL, "keep: must be a list of at most %d keys", CNI_MAX_KEEP);
	if (r >= 0 && !(keep = calloc(json_array_size(list) + 1, sizeof(*keep))))
		r = api_fail(req, -ENOMEM, "out of memory");
	json_array_foreach(r >= 0 ? list : NULL, i, v) {
		if (!json_is_string(v)) {
			r = api_fail(req, -EINVAL, "keep[%zu]: must be a string", i);
			break;
		}
		keep[i] = json_string_value(v);
	}
	if (r >= 0 && (r = agent_cni_gc(req->agent, prefix, keep, json_array_size(list),
					&released, err, sizeof(err))) < 0)
		api_fail(req, r, "%s", err);
	free(keep);
	return r < 0 ? fail(req, r) : ok(json_pack("{s:i}", "released", (int)released));
}

/* The pool the config names ("pool", or "network" through the config's networks). */
static json_t *cni_status(struct api_request *req, json_t *msg)
{
	json_t *config = json_object_get(msg, "config"), *body;
	struct api_claim_body b = { 0 };
	const char *pci = NULL;
	char pci_buf[32];
	unsigned n_free = 0;
	int r;

	if (!json_is_object(config))
		return api_fail(req, -EINVAL, "config: must be an object"), fail(req, -EINVAL);
	r = api_check_keys(req, config, config_keys);
	if (r >= 0)
		r = device_pci(req, msg, &pci, pci_buf);
	body = json_pack("{s:O*, s:O*, s:s*, s:{s:s, s:s}}", "pool",
			 json_object_get(config, "pool"), "network",
			 json_object_get(config, "network"), "pci", pci, "owner", "kind",
			 "container", "netns", "status");
	if (r >= 0)
		r = api_parse_claim(req, body, NULL, &b);
	if (r >= 0 && (r = agent_cni_free_vfs(req->agent, b.c.pool, &n_free)) == -ENOENT &&
	    configured_pool(req->agent, b.c.pool))
		r = 0; /* a pool of the config that matched no VF: none free */
	if (r < 0 && !req->error[0])
		api_fail(req, r, "pool: \"%.64s\" is not a pool of the config", b.c.pool);
	json_decref(body);
	return r < 0 ? fail(req, r) : ok(json_pack("{s:s, s:i}", "pool", b.c.pool,
						   "free", (int)n_free));
}

static const struct {
	const char *command;
	json_t *(*handle)(struct api_request *req, json_t *msg);
} commands[] = {
	{ "ADD", cni_add },	{ "DEL", cni_del },	  { "CHECK", cni_check },
	{ "GC", cni_gc },	{ "STATUS", cni_status },
};

/**
 * api_cni_handle() - the answer to one request of the CNI plugin (a new
 * reference); an unknown command is -EBADRQC
 */
json_t *api_cni_handle(struct agent *a, json_t *msg)
{
	struct api_request req = { .agent = a, .method = "CNI", .path = "" };
	const char *command = json_string_value(json_object_get(msg, "command"));

	for (size_t i = 0; command && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].command, command) == 0) {
			json_t *answer = commands[i].handle(&req, msg);

			return answer ? answer : api_error_body(-ENOMEM, "out of memory");
		}
	api_fail(&req, -EBADRQC, "command: \"%.16s\" is not ADD, DEL, CHECK, GC or STATUS",
		 command ? command : "");
	return fail(&req, -EBADRQC);
}
