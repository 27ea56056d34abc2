/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * POST /v1/allocations/{id}/attach and …/detach. Containers: the VFs go
 * into a network namespace ({"netns":…,"ifname":…,"addresses":[…],"mtu":…,
 * "gateway":…}); agent/container/container.c does the work. VMs ({"domain":…}) go
 * through api/attach-vm.c. A detach brings VFs back from either.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "agent/container/container.h"
#include "agent/release.h"
#include "agent/events.h"
#include "agent/container/netns.h"
#include "api/api.h"
#include "api/validate.h"

static bool valid_ifname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= 16 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s == '/' || *s == ':' || *s > '~')
			return false;
	return true;
}

static bool valid_gateway(const char *s)
{
	char with_prefix[80];

	snprintf(with_prefix, sizeof(with_prefix), "%.64s/%s", s, strchr(s, ':') ? "128" : "32");
	return valid_ip_prefix(with_prefix, NULL);
}

struct request {
	struct container_target t;
	const char *ifname;
};

static int parse_target(struct api_request *req, json_t *body, struct request *q)
{
	static const char *const keys[] = { "netns", "ifname", "addresses", "mtu", "gateway",
					    NULL };
	long long mtu = 0;
	size_t i;
	json_t *a;
	int r;

	r = api_check_keys(req, body, keys);
	if (r >= 0)
		r = api_get_string(req, body, "netns", true, &q->t.netns);
	if (r >= 0)
		r = api_get_string(req, body, "ifname", false, &q->ifname);
	if (r >= 0 && q->ifname && !valid_ifname(q->ifname))
		r = api_fail(req, -EINVAL, "ifname: \"%.32s\" is not a netdev name", q->ifname);
	if (r >= 0)
		r = api_get_int(req, body, "mtu", 68, 65535, false, &mtu);
	q->t.mtu = (unsigned)mtu;
	if (r >= 0)
		r = api_get_string(req, body, "gateway", false, &q->t.gateway);
	if (r >= 0 && q->t.gateway && !valid_gateway(q->t.gateway))
		r = api_fail(req, -EINVAL, "gateway: \"%.64s\" is not an IP address", q->t.gateway);
	q->t.addresses = json_object_get(body, "addresses");
	if (r >= 0 && q->t.addresses && !json_is_array(q->t.addresses))
		r = api_fail(req, -EINVAL, "addresses: must be a list like [\"10.0.0.2/24\"]");
	json_array_foreach(q->t.addresses, i, a)
		if (r >= 0 && (!json_is_string(a) || !valid_ip_prefix(json_string_value(a), NULL)))
			r = api_fail(req, -EINVAL, "addresses[%zu]: not an address/prefix", i);
	return r;
}

/* One VF keeps the name asked for; several get it with their position. */
static int ifname_for(struct api_request *req, const struct request *q, json_t *vf, size_t i,
		      size_t n, char *buf, size_t size)
{
	struct vfp_inventory *inv = agent_get_inventory(req->agent);
	const struct vfp_vf *v = vfp_inventory_find_vf(inv, json_string_value(json_object_get(vf,
											      "pci")));
	const char *own = v && vfp_vf_get_netdev(v) ? vfp_vf_get_netdev(v) : "net";

	if (n == 1)
		snprintf(buf, size, "%s", q->ifname ? q->ifname : own);
	else
		snprintf(buf, size, "%.13s%zu", q->ifname ? q->ifname : "net", i);
	vfp_inventory_unref(inv);
	if (strlen(buf) > 15)
		return api_fail(req, -EINVAL, "ifname: \"%s\" is longer than 15 characters", buf);
	return 0;
}

static json_t *get_allocation(struct api_request *req)
{
	json_t *alloc;

	pthread_mutex_lock(&req->agent->ledger_lock);
	alloc = vfp_ledger_get_allocation(req->agent->ledger, req->params[0]);
	pthread_mutex_unlock(&req->agent->ledger_lock);
	if (!alloc)
		api_fail(req, -ENOENT, "no allocation %s", req->params[0]);
	return alloc;
}

/**
 * api_ledger_step() - begin (@begin) or confirm (@ok, @reason) intent @op of allocation @id
 * @req: where a failure's message goes, or NULL
 */
int api_ledger_step(struct agent *a, const char *id, enum vfp_op op, bool begin, bool ok,
		    const char *reason, struct api_request *req)
{
	int r;

	pthread_mutex_lock(&a->ledger_lock);
	r = begin ? vfp_ledger_begin(a->ledger, id, op)
		  : vfp_ledger_confirm(a->ledger, id, op, ok, reason);
	if (r < 0 && req)
		api_fail(req, r, "%s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	return r;
}

/* The VFs before @n back, in reverse: what a failed attach undoes. */
static void undo(struct agent *a, json_t *vfs, size_t n, int fd)
{
	while (n-- > 0) {
		json_t *vf = json_array_get(vfs, n);
		char err[256];

		if (container_restore_vf(a, vf, fd, err, sizeof(err)) < 0)
			log_error("VF %s: rollback: %s",
				  json_string_value(json_object_get(vf, "pci")), err);
	}
}

static int attach_all(struct api_request *req, const char *id, json_t *alloc, struct request *q)
{
	json_t *vfs = json_object_get(alloc, "vfs");
	size_t i, n = json_array_size(vfs);
	int r = api_ledger_step(req->agent, id, VFP_OP_ATTACH, true, false, NULL, req);
	bool begun = r >= 0;

	for (i = 0; r >= 0 && i < n; i++) {
		json_t *vf = json_array_get(vfs, i);
		const char *pci = json_string_value(json_object_get(vf, "pci"));
		char ifname[80], err[256] = "";

		r = ifname_for(req, q, vf, i, n, ifname, sizeof(ifname));
		if (r >= 0)
			r = container_attach_vf(req->agent, alloc, i, &q->t, ifname, err, sizeof(err));
		if (r < 0 && !req->error[0])
			api_fail(req, r, "VF %s: %s", pci, err[0] ? err : strerror(-r));
		if (r >= 0)
			log_info("VF %s: allocation %s: %s in %s", pci, id, ifname, q->t.netns);
	}
	if (r < 0 && i > 0)
		undo(req->agent, vfs, i - 1, q->t.fd);
	if (begun)
		api_ledger_step(req->agent, id, VFP_OP_ATTACH, false, r >= 0, r < 0 ? req->error : NULL,
			    NULL);
	return r;
}

static int attach_netns(struct api_request *req, json_t *alloc, json_t *body)
{
	struct request q = { .t = { .fd = -1 } };
	int r = parse_target(req, body, &q);

	if (r >= 0)
		r = netns_open(q.t.netns, &q.t.fd, req->error, sizeof(req->error));
	if (r >= 0)
		r = netns_inode(q.t.fd, &q.t.inode);
	if (r >= 0)
		r = attach_all(req, req->params[0], alloc, &q);
	if (q.t.fd >= 0)
		close(q.t.fd);
	return r;
}

int api_attach(struct api_request *req)
{
	json_t *body = NULL, *alloc = NULL;
	int r = api_parse_body(req, &body);

	if (r >= 0 && json_is_object(body) && !json_object_get(body, "domain") &&
	    !json_object_get(body, "netns"))
		r = api_fail(req, -EINVAL, "netns, domain: one is needed");
	if (r >= 0 && json_object_get(body, "domain") && json_object_get(body, "netns"))
		r = api_fail(req, -EINVAL, "netns, domain: one, not both");
	if (r >= 0)
		alloc = get_allocation(req);
	if (r >= 0 && !alloc)
		r = -ENOENT;
	if (r >= 0)
		r = json_object_get(body, "domain") ? api_attach_domain(req, alloc, body)
						    : attach_netns(req, alloc, body);
	json_decref(alloc);
	json_decref(body);
	if (r < 0)
		return r;
	events_emit(req->agent->events, "allocation",
		    json_pack("{s:s, s:s}", "id", req->params[0], "state", "attached"));
	alloc = get_allocation(req);
	return api_reply(req, 200, alloc);
}

int api_detach(struct api_request *req)
{
	json_t *alloc = get_allocation(req);
	const char *id = req->params[0];
	char err[256] = "";
	int r;

	if (!alloc)
		return -ENOENT;
	r = api_ledger_step(req->agent, id, VFP_OP_DETACH, true, false, NULL, req);
	if (r >= 0) {
		r = agent_detach_all(req->agent, alloc, err, sizeof(err));
		api_ledger_step(req->agent, id, VFP_OP_DETACH, false, r >= 0, r < 0 ? err : NULL, NULL);
		if (r < 0)
			api_fail(req, r, "%s", err);
	}
	json_decref(alloc);
	if (r < 0)
		return r;
	events_emit(req->agent->events, "allocation",
		    json_pack("{s:s, s:s}", "id", id, "state", "reserved"));
	return api_reply(req, 200, get_allocation(req));
}
