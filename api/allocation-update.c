/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PATCH /v1/allocations/{id}: new VF settings for a live allocation (a
 * network update): {"vlan","qos","vlan_proto","spoofchk","trust",
 * "link_state","min_tx_rate","max_tx_rate","opennebula"}, each optional,
 * "vlan": 0 for none ("opennebula": the NIC's attributes as oned keeps them,
 * api/one-attrs.c). What a guest or a container already has (MAC, GUID, IP) and what
 * the claim decided (pool, count, owner) cannot change: claim anew.
 */
#include "config.h"

#include <errno.h>

#include "agent/log.h"
#include "agent/settings-update.h"
#include "api/api.h"

static int parse(struct api_request *req, json_t *body, struct vfp_settings *s)
{
	static const char *const keys[] = { "vlan", "qos", "vlan_proto", "spoofchk", "trust",
					    "link_state", "min_tx_rate", "max_tx_rate", "opennebula",
					    NULL };
	static const char *const fixed[] = { "mac", "guid", "ip", "pool", "count", "owner",
					     "pci", "network", "pkey", "membership", NULL };
	long long vlan = VFP_UNSET;
	int r = 0;

	for (int i = 0; fixed[i]; i++)
		if (json_object_get(body, fixed[i]))
			return api_fail(req, -EINVAL, "%s: cannot change once claimed (claim anew)",
					fixed[i]);
	r = api_check_keys(req, body, keys);
	vfp_settings_init(s);
	if (r >= 0)
		r = api_get_int(req, body, "vlan", 0, 4094, false, &vlan);
	s->vlan = (int)vlan;
	if (r >= 0)
		r = api_parse_vf_knobs(req, body, s);
	if (r >= 0 && json_object_size(body) == 0)
		r = api_fail(req, -EINVAL, "nothing to change: give one of vlan, qos, vlan_proto, "
					   "spoofchk, trust, link_state, min_tx_rate, max_tx_rate");
	return r;
}

int api_patch_allocation(struct api_request *req)
{
	struct vfp_settings delta;
	json_t *body = NULL;
	char err[AGENT_ERR_SIZE] = "";
	int r = api_parse_body(req, &body);

	if (r >= 0)
		r = parse(req, body, &delta);
	json_decref(body);
	if (r >= 0) {
		r = agent_update_settings(req->agent, req->params[0], &delta, err, sizeof(err));
		if (r < 0)
			return api_fail(req, r, "%s", err);
	}
	return r < 0 ? r : api_reply_allocation(req, req->params[0]);
}
