/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GET /v1/vfs, GET /v1/vfs/{pci}: inventory facts with the ledger's pool, state and allocation. */
#include "config.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/container/rdma-devices.h"
#include "agent/log.h"
#include "agent/pf/pf-side.h"
#include "agent/vf-reset.h"
#include "api/api.h"

/* A request made in this process (the API fuzzer's) has no connection, so no query or header. */
const char *api_query(struct api_request *req, const char *key)
{
	return req->conn ? MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key) : NULL;
}

const char *api_header(struct api_request *req, const char *key)
{
	return req->conn ? MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, key) : NULL;
}

/*
 * The VF as api/openapi.yaml has it: facts, then pool, state, allocation,
 * from @v, the ledger's view read before (ledger_get_vf_views()).
 */
json_t *api_vf_json(const struct vfp_vf *vf, const struct ledger_vf_view *v)
{
	json_t *o = vfp_vf_to_json(vf);
	bool known = v && v->known;
	const struct vfp_ledger_vf *l = known ? &v->vf : NULL;

	if (!o)
		return NULL;
	json_object_set_new(o, "pool", known && l->pool[0] ? json_string(l->pool) : json_null());
	json_object_set_new(o, "state", json_string(known ? vfp_vf_state_to_string(l->state)
							  : "unknown"));
	json_object_set_new(o, "allocation",
			    known && l->allocation[0] ? json_string(l->allocation) : json_null());
	if (known && l->reason[0]) {
		json_object_set_new(o, "reason", json_string(l->reason));
		json_object_set_new(o, "since", json_integer(l->since));
	}
	return o;
}

/* Port 1 of the VF's RDMA device, or null. */
static json_t *rdma_port_json(struct vfp_inventory *inv, const char *dev)
{
	struct rdma_port p;

	if (rdma_port_facts(inv, dev, &p) < 0)
		return json_null();
	return json_pack("{s:s, s:i, s:s, s:s?, s:i}", "state", p.state, "lid", p.lid,
			 "link_layer", p.link_layer, "gid0", p.gid0[0] ? p.gid0 : NULL,
			 "active_mtu", p.active_mtu);
}

static bool keep(json_t *vf, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(vf, key));

	return !want || (v && strcmp(v, want) == 0);
}

int api_list_vfs(struct api_request *req)
{
	const char *pool = api_query(req, "pool"), *state = api_query(req, "state");
	const char *pf = api_query(req, "pf");
	struct vfp_inventory *inv;
	struct ledger_vf_view *views = NULL;
	size_t n = 0, k = 0;
	json_t *a;
	int r;

	if (pf && !vfp_pci_addr_is_valid(pf))
		return api_fail(req, -EINVAL, "pf: \"%.64s\" is not a PCI address", pf);
	/* "released" names an ended allocation's VFs, never a VF of the host */
	if (state && (vfp_vf_state_from_string(state) < 0 ||
		      vfp_vf_state_from_string(state) == VFP_VF_RELEASED))
		return api_fail(req, -EINVAL, "state: \"%.32s\" is not a VF state", state);
	inv = agent_get_inventory(req->agent);
	if (!pool && !state && !pf) {
		r = api_vf_list_reply(req, inv);
		vfp_inventory_unref(inv);
		return r;
	}
	r = ledger_get_vf_views(req->agent, inv, &views, &n);
	a = r < 0 ? NULL : json_array();
	for (size_t i = 0; a && i < vfp_inventory_get_pf_count(inv); i++) {
		const struct vfp_pf *p = vfp_inventory_get_pf(inv, i);
		bool skip = pf && strcmp(vfp_pf_get_pci(p), pf) != 0;

		for (size_t j = 0; j < vfp_pf_get_vf_count(p) && k < n; j++, k++) {
			json_t *vf = skip ? NULL : api_vf_json(vfp_pf_get_vf(p, j), &views[k]);

			if (vf && keep(vf, "pool", pool) && keep(vf, "state", state))
				json_array_append(a, vf);
			json_decref(vf);
		}
	}
	free(views);
	vfp_inventory_unref(inv);
	if (r < 0)
		return api_fail(req, r, "the ledger's view of the VFs: %s", strerror(-r));
	return api_reply(req, 200, json_pack("{s:o}", "vfs", a));
}

/* The VF's settings on its PF, as api_settings_json() spells a claim's, with its GUIDs. */
static json_t *vf_config_json(const struct vfp_vf_config *c)
{
	struct vfp_settings s;
	json_t *o;
	char guid[24];

	vfp_vf_config_to_settings(c, &s);
	o = api_settings_json(&s);
	if (o && c->has_node_guid) {
		vfp_guid_format(c->node_guid, guid);
		json_object_set_new(o, "node_guid", json_string(guid));
	}
	if (o && c->has_port_guid) {
		vfp_guid_format(c->port_guid, guid);
		json_object_set_new(o, "port_guid", json_string(guid));
	}
	return o;
}

/*
 * Only for one VF, not in lists (they ask the kernel): its settings on the
 * PF over netlink (null with the reason when the PF cannot say), and the
 * devices that share its IOMMU group (listed once per scan of the host).
 */
static void add_live_facts(struct api_request *req, struct vfp_inventory *inv,
			   const struct vfp_vf *vf, json_t *o)
{
	struct vfp_vf_config c;
	char err[AGENT_ERR_SIZE];
	const char *const *devs;
	size_t n = 0;
	int group;
	json_t *list = json_array();

	if (pf_side_read(req->agent, vfp_vf_get_pci(vf), &c, err, sizeof(err)) >= 0) {
		json_object_set_new(o, "pf_settings", vf_config_json(&c));
	} else {
		json_object_set_new(o, "pf_settings", json_null());
		json_object_set_new(o, "pf_settings_error", json_string(err));
	}
	if (vfp_vf_get_iommu_group(vf, &group) >= 0 &&
	    vfp_inventory_get_iommu_group_devices(inv, group, &devs, &n) >= 0)
		for (size_t i = 0; i < n; i++)
			json_array_append_new(list, json_string(devs[i]));
	json_object_set_new(o, "iommu_group_devices", list);
}

int api_get_vf(struct api_request *req)
{
	struct vfp_inventory *inv = agent_get_inventory(req->agent);
	const struct vfp_vf *vf = vfp_inventory_find_vf(inv, req->params[0]);
	json_t *o = NULL;
	bool is_pf;

	if (vf) {
		struct ledger_vf_view v;

		v.known = ledger_get_vf(req->agent, vfp_vf_get_pci(vf), &v.vf) >= 0;
		o = api_vf_json(vf, &v);
		/* only here, not in lists: it opens the device */
		if (o)
			json_object_set_new(o, "rdma_port",
					    rdma_port_json(inv, vfp_vf_get_rdma_device(vf)));
		if (o)
			add_live_facts(req, inv, vf, o);
	}
	is_pf = !vf && vfp_inventory_find_pf(inv, req->params[0]);
	vfp_inventory_unref(inv);
	if (is_pf) /* the reverse of what was asked: say which it is */
		return api_fail(req, -ENOENT, "%s is a PF, not a VF: GET /v1/pfs/%s",
				req->params[0], req->params[0]);
	if (!vf)
		return api_fail(req, -ENOENT, "no VF at %s", req->params[0]);
	if (!o)
		return api_fail(req, -ENOMEM, "out of memory");
	return api_reply(req, 200, o);
}

/* POST /v1/vfs/{pci}/repair: a quarantined VF onto its own driver, reset, checked, free. */
int api_repair_vf(struct api_request *req)
{
	char err[AGENT_ERR_SIZE] = "";
	int r = agent_repair_vf(req->agent, req->params[0], err, sizeof(err));

	if (r < 0)
		return api_fail(req, r, "%s", err);
	return api_get_vf(req);
}
