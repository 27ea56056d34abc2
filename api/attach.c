/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * POST /v1/allocations/{id}/attach and …/detach: the request parsed and the
 * answer formatted; agent/attach.c does the work. Containers: the VFs go
 * into a network namespace ({"netns":…,"ifname":…,"addresses":[…],"mtu":…,
 * "gateway":…}). VMs: {"domain":…,"live":…,"config":…}; with neither "live"
 * nor "config", the domain's state decides. A detach brings VFs back from
 * either.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/attach.h"
#include "agent/log.h"
#include "api/api.h"
#include "api/validate.h"
#include "libvfpool/ifname.h"

static bool valid_gateway(const char *s)
{
	char with_prefix[80];

	snprintf(with_prefix, sizeof(with_prefix), "%.64s/%s", s, strchr(s, ':') ? "128" : "32");
	return valid_ip_prefix(with_prefix, NULL);
}

static int parse_addresses(struct api_request *req, json_t *body, struct api_netns_body *b)
{
	json_t *list = json_object_get(body, "addresses"), *a;
	size_t i;

	if (list && !json_is_array(list))
		return api_fail(req, -EINVAL, "addresses: must be a list like [\"10.0.0.2/24\"]");
	if (json_array_size(list) > API_MAX_ADDRESSES)
		return api_fail(req, -EINVAL, "addresses: at most %d", API_MAX_ADDRESSES);
	json_array_foreach(list, i, a) {
		if (!json_is_string(a) || !valid_ip_prefix(json_string_value(a), NULL))
			return api_fail(req, -EINVAL, "addresses[%zu]: not an address/prefix", i);
		b->addresses[i] = json_string_value(a);
	}
	b->q.addresses = b->addresses;
	b->q.n_addresses = json_array_size(list);
	return 0;
}

/* {"netns":…,"ifname":…,"addresses":[…],"mtu":…,"gateway":…} of an attach, or of a claim. */
int api_parse_netns_request(struct api_request *req, json_t *body, struct api_netns_body *b)
{
	static const char *const keys[] = { "netns", "ifname", "addresses", "mtu", "gateway",
					    NULL };
	long long mtu = 0;
	int r;

	r = api_check_keys(req, body, keys);
	if (r >= 0)
		r = api_get_string(req, body, "netns", true, &b->q.netns);
	if (r >= 0)
		r = api_get_string(req, body, "ifname", false, &b->q.ifname);
	if (r >= 0 && b->q.ifname && !vfp_ifname_valid(b->q.ifname))
		r = api_fail(req, -EINVAL, "ifname: \"%.32s\" is not a netdev name", b->q.ifname);
	if (r >= 0)
		r = api_get_int(req, body, "mtu", 68, 65535, false, &mtu);
	b->q.mtu = (unsigned)mtu;
	if (r >= 0)
		r = api_get_string(req, body, "gateway", false, &b->q.gateway);
	if (r >= 0 && b->q.gateway && !valid_gateway(b->q.gateway))
		r = api_fail(req, -EINVAL, "gateway: \"%.64s\" is not an IP address", b->q.gateway);
	return r < 0 ? r : parse_addresses(req, body, b);
}

static int attach(struct api_request *req, json_t *body)
{
	struct agent_domain_request dq;
	struct api_netns_body nb = { 0 };
	char err[AGENT_ERR_SIZE] = "";
	int r;

	if (json_object_get(body, "domain")) {
		r = api_parse_domain_request(req, body, &dq);
		if (r >= 0)
			r = agent_attach_domain(req->agent, req->params[0], &dq, err, sizeof(err));
	} else {
		r = api_parse_netns_request(req, body, &nb);
		if (r >= 0)
			r = agent_attach_netns(req->agent, req->params[0], &nb.q, err, sizeof(err));
	}
	if (r < 0 && !req->error[0])
		api_fail(req, r, "%s", err);
	return r;
}

int api_attach(struct api_request *req)
{
	json_t *body = NULL;
	int r = api_parse_body(req, &body);

	if (r >= 0 && json_is_object(body) && !json_object_get(body, "domain") &&
	    !json_object_get(body, "netns"))
		r = api_fail(req, -EINVAL, "netns, domain: one is needed");
	if (r >= 0 && json_object_get(body, "domain") && json_object_get(body, "netns"))
		r = api_fail(req, -EINVAL, "netns, domain: one, not both");
	if (r >= 0)
		r = attach(req, body);
	json_decref(body);
	return r < 0 ? r : api_reply_allocation(req, req->params[0]);
}

/*
 * No body, or {"hold_while": PATH}: the reservation left is held for its
 * owner while the file PATH exists (a suspended VM's checkpoint), not only
 * while its owner does. {"keep_standby": true}: a failover NIC's standby
 * stays in the guest (a live migration moves the guest with it).
 */
int api_detach(struct api_request *req)
{
	static const char *const keys[] = { "hold_while", "keep_standby", NULL };
	const char *hold_while = NULL;
	bool keep_standby = false;
	json_t *body = NULL;
	char err[AGENT_ERR_SIZE] = "";
	int r = 0;

	if (req->body && req->body_len > 0) {
		r = api_parse_body(req, &body);
		if (r >= 0)
			r = api_check_keys(req, body, keys);
		if (r >= 0)
			r = api_get_string(req, body, "hold_while", false, &hold_while);
		if (r >= 0 && hold_while && (hold_while[0] != '/' || strlen(hold_while) > 4095))
			r = api_fail(req, -EINVAL, "hold_while: \"%.64s\" is not an absolute path",
				     hold_while);
		if (r >= 0)
			r = api_get_bool(req, body, "keep_standby", &keep_standby);
	}
	if (r >= 0) {
		r = agent_detach(req->agent, req->params[0], hold_while, keep_standby, err,
				 sizeof(err));
		if (r < 0)
			api_fail(req, r, "%s", err);
	}
	json_decref(body);
	return r < 0 ? r : api_reply_allocation(req, req->params[0]);
}
