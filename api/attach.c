/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * POST /v1/allocations/{id}/attach and …/detach. Containers: the VFs'
 * netdevs move into a network namespace ({"netns":…,"ifname":…,
 * "addresses":[…],"mtu":…}). VMs ({"domain":…}) and the deployment-XML
 * rewrite answer 501 until the libvirt back-end lands.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "agent/events.h"
#include "agent/netns.h"
#include "api.h"
#include "validate.h"

/* Attaches on one PF are serialized; different PFs go in parallel (striped locks). */
static pthread_mutex_t pf_locks[32] = { [0 ... 31] = PTHREAD_MUTEX_INITIALIZER };

static pthread_mutex_t *pf_lock(const char *pf)
{
	unsigned h = 5381;

	for (; *pf; pf++)
		h = h * 33 + (unsigned char)*pf;
	return &pf_locks[h % 32];
}

struct target {
	const char *netns, *ifname;
	json_t *addresses;
	unsigned mtu;
	int fd;
};

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

static int parse_target(struct api_request *req, json_t *body, struct target *t)
{
	static const char *const keys[] = { "netns", "ifname", "addresses", "mtu", "domain",
					    "live", "config", NULL };
	long long mtu = 0;
	size_t i;
	json_t *a;
	int r;

	r = api_check_keys(req, body, keys);
	if (r >= 0 && json_object_get(body, "domain"))
		return api_fail(req, -ENOSYS, "attaching to VMs is not built yet");
	if (r >= 0)
		r = api_get_string(req, body, "netns", true, &t->netns);
	if (r >= 0)
		r = api_get_string(req, body, "ifname", false, &t->ifname);
	if (r >= 0 && t->ifname && !valid_ifname(t->ifname))
		r = api_fail(req, -EINVAL, "ifname: \"%.32s\" is not a netdev name", t->ifname);
	if (r >= 0)
		r = api_get_int(req, body, "mtu", 68, 65535, false, &mtu);
	t->mtu = (unsigned)mtu;
	t->addresses = json_object_get(body, "addresses");
	if (r >= 0 && t->addresses && !json_is_array(t->addresses))
		r = api_fail(req, -EINVAL, "addresses: must be a list like [\"10.0.0.2/24\"]");
	json_array_foreach(t->addresses, i, a)
		if (r >= 0 && (!json_is_string(a) || !valid_ip_prefix(json_string_value(a), NULL)))
			r = api_fail(req, -EINVAL, "addresses[%zu]: not an address/prefix", i);
	return r;
}

/* The netdev a VF has in the inventory now. */
static int vf_netdev(struct agent *a, const char *pci, char *buf, size_t size)
{
	struct vfp_inventory *inv = agent_get_inventory(a);
	const struct vfp_vf *vf = vfp_inventory_find_vf(inv, pci);
	int r = vf && vfp_vf_get_netdev(vf) ? 0 : -ENODEV;

	if (r == 0)
		snprintf(buf, size, "%s", vfp_vf_get_netdev(vf));
	vfp_inventory_unref(inv);
	return r;
}

/* The restore points of the first @n VFs of @alloc, in reverse: what rollback undoes. */
static void undo(struct agent *a, json_t *vfs, size_t n, int fd)
{
	while (n-- > 0) {
		const char *pci = json_string_value(json_object_get(json_array_get(vfs, n), "pci"));
		json_t *orig;
		char err[256];

		pthread_mutex_lock(&a->ledger_lock);
		orig = vfp_ledger_get_original(a->ledger, pci);
		pthread_mutex_unlock(&a->ledger_lock);
		if (orig && netns_detach(orig, fd, err, sizeof(err)) < 0)
			log_error("VF %s: rollback: %s", pci, err);
		json_decref(orig);
	}
}

/* One VF into the namespace; its restore point is written before it is changed. */
static int attach_one(struct api_request *req, json_t *vf, const struct target *t, size_t i,
		      size_t n)
{
	struct agent *a = req->agent;
	const char *pci = json_string_value(json_object_get(vf, "pci"));
	char netdev[64], ifname[80], err[256] = "";
	json_t *orig = NULL, *none = json_array();
	int r = vf_netdev(a, pci, netdev, sizeof(netdev));

	if (r < 0) {
		json_decref(none);
		return api_fail(req, -ENODEV, "VF %s has no netdev (bound to vfio-pci?): it cannot "
					      "go into a namespace", pci);
	}
	/* one VF keeps the name asked for; several get it with their position */
	if (n == 1)
		snprintf(ifname, sizeof(ifname), "%s", t->ifname ? t->ifname : netdev);
	else
		snprintf(ifname, sizeof(ifname), "%.13s%zu", t->ifname ? t->ifname : "net", i);
	if (strlen(ifname) > 15) {
		json_decref(none);
		return api_fail(req, -EINVAL, "ifname: \"%s\" is longer than 15 characters", ifname);
	}
	pthread_mutex_lock(pf_lock(json_string_value(json_object_get(vf, "pf"))));
	r = netns_attach(netdev, t->fd, ifname, i == 0 ? t->addresses : none, t->mtu, &orig, err,
			 sizeof(err));
	pthread_mutex_unlock(pf_lock(json_string_value(json_object_get(vf, "pf"))));
	json_decref(none);
	if (r < 0) {
		json_decref(orig);
		return api_fail(req, r, "VF %s (%s): %s", pci, netdev, err[0] ? err : strerror(-r));
	}
	json_object_set_new(orig, "netns", json_string(t->netns));
	json_object_set_new(orig, "ifname", json_string(ifname));
	pthread_mutex_lock(&a->ledger_lock);
	r = vfp_ledger_set_original(a->ledger, pci, orig);
	pthread_mutex_unlock(&a->ledger_lock);
	json_decref(orig);
	if (r >= 0)
		log_info("VF %s: %s is %s in %s", pci, netdev, ifname, t->netns);
	return r;
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

static int ledger_step(struct agent *a, const char *id, enum vfp_op op, bool begin, bool ok,
		       const char *reason, struct api_request *req)
{
	int r;

	pthread_mutex_lock(&a->ledger_lock);
	r = begin ? vfp_ledger_begin(a->ledger, id, op) : vfp_ledger_confirm(a->ledger, id, op, ok, reason);
	if (r < 0 && req)
		api_fail(req, r, "%s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	return r;
}

static int attach_all(struct api_request *req, const char *id, json_t *vfs, struct target *t)
{
	size_t i, n = json_array_size(vfs);
	int r = ledger_step(req->agent, id, VFP_OP_ATTACH, true, false, NULL, req);

	for (i = 0; r >= 0 && i < n; i++)
		r = attach_one(req, json_array_get(vfs, i), t, i, n);
	if (r < 0 && i > 0)
		undo(req->agent, vfs, i - 1 + (r >= 0), t->fd);
	if (r == -EBUSY && !strstr(req->error, "VF "))
		return r; /* begin refused: nothing to confirm */
	ledger_step(req->agent, id, VFP_OP_ATTACH, false, r >= 0, r < 0 ? req->error : NULL, NULL);
	return r;
}

int api_attach(struct api_request *req)
{
	struct target t = { .fd = -1 };
	json_t *body = NULL, *alloc = NULL;
	int r = api_parse_body(req, &body);

	if (r >= 0)
		r = parse_target(req, body, &t);
	if (r >= 0)
		alloc = get_allocation(req);
	if (r >= 0 && !alloc)
		r = -ENOENT;
	if (r >= 0)
		r = netns_open(t.netns, &t.fd, req->error, sizeof(req->error));
	if (r >= 0)
		r = attach_all(req, req->params[0], json_object_get(alloc, "vfs"), &t);
	if (t.fd >= 0)
		close(t.fd);
	json_decref(alloc);
	json_decref(body);
	if (r < 0)
		return r;
	events_emit(req->agent->events, "allocation",
		    json_pack("{s:s, s:s}", "id", req->params[0], "state", "attached"));
	alloc = get_allocation(req);
	return api_reply(req, 200, alloc);
}

/**
 * api_detach_vfs() - every VF of @alloc back to the host, as it was
 *
 * Used by detach and by DELETE of an attached allocation. Returns the first
 * error; every VF is tried.
 */
int api_detach_vfs(struct agent *a, json_t *alloc, char *err, size_t err_size)
{
	size_t i;
	json_t *vf;
	int r = 0;

	json_array_foreach(json_object_get(alloc, "vfs"), i, vf) {
		const char *pci = json_string_value(json_object_get(vf, "pci"));
		char msg[256];
		json_t *orig;
		int rr;

		pthread_mutex_lock(&a->ledger_lock);
		orig = vfp_ledger_get_original(a->ledger, pci);
		pthread_mutex_unlock(&a->ledger_lock);
		pthread_mutex_lock(pf_lock(json_string_value(json_object_get(vf, "pf"))));
		rr = orig ? netns_detach(orig, -1, msg, sizeof(msg)) : 0;
		pthread_mutex_unlock(pf_lock(json_string_value(json_object_get(vf, "pf"))));
		if (orig && msg[0])
			log_warning("VF %s: %s", pci, msg);
		if (rr < 0 && r == 0) {
			r = rr;
			snprintf(err, err_size, "VF %s: %s", pci, msg[0] ? msg : strerror(-rr));
		}
		json_decref(orig);
	}
	return r;
}

int api_detach(struct api_request *req)
{
	json_t *alloc = get_allocation(req);
	const char *id = req->params[0];
	char err[256] = "";
	int r;

	if (!alloc)
		return -ENOENT;
	r = ledger_step(req->agent, id, VFP_OP_DETACH, true, false, NULL, req);
	if (r >= 0) {
		r = api_detach_vfs(req->agent, alloc, err, sizeof(err));
		ledger_step(req->agent, id, VFP_OP_DETACH, false, r >= 0, r < 0 ? err : NULL, NULL);
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

int api_domain_xml(struct api_request *req)
{
	return api_fail(req, -ENOSYS, "the deployment-XML rewrite is not built yet");
}
