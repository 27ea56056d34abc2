/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GET /v1/pfs[/{pci}], PUT /v1/pfs/{pci}/numvfs: the PFs, and resizing them. */
#include "config.h"

#include <errno.h>

#include "agent/numvfs.h"
#include "api/api.h"

static json_t *pf_json(struct api_request *req, const struct vfp_pf *pf)
{
	json_t *o = vfp_pf_to_json(pf, false), *vfs = json_array();

	for (size_t j = 0; o && vfs && j < vfp_pf_get_vf_count(pf); j++)
		json_array_append_new(vfs, api_vf_json(req, vfp_pf_get_vf(pf, j)));
	json_object_set_new(o, "vfs", vfs);
	return o;
}

int api_list_pfs(struct api_request *req)
{
	struct vfp_inventory *inv = agent_get_inventory(req->agent);
	json_t *a = json_array();

	pthread_mutex_lock(&req->agent->ledger_lock);
	for (size_t i = 0; a && i < vfp_inventory_get_pf_count(inv); i++)
		json_array_append_new(a, pf_json(req, vfp_inventory_get_pf(inv, i)));
	pthread_mutex_unlock(&req->agent->ledger_lock);
	vfp_inventory_unref(inv);
	return api_reply(req, 200, json_pack("{s:o}", "pfs", a));
}

int api_get_pf(struct api_request *req)
{
	struct vfp_inventory *inv = agent_get_inventory(req->agent);
	const struct vfp_pf *pf = vfp_inventory_find_pf(inv, req->params[0]);
	json_t *o = NULL;

	if (pf) {
		pthread_mutex_lock(&req->agent->ledger_lock);
		o = pf_json(req, pf);
		pthread_mutex_unlock(&req->agent->ledger_lock);
	}
	vfp_inventory_unref(inv);
	if (!pf)
		return api_fail(req, -ENOENT, "no SR-IOV PF at %s", req->params[0]);
	return api_reply(req, 200, o);
}

/*
 * {"numvfs":N,"dry_run":true} → 200 with the plan; applied → 200 with the
 * plan; refused → 409 with the plan's reason and the blocking allocations.
 */
int api_put_numvfs(struct api_request *req)
{
	static const char *const keys[] = { "numvfs", "dry_run", NULL };
	long long n = 0;
	bool dry_run = false;
	json_t *body = NULL, *plan = NULL;
	char err[512] = "";
	int r;

	r = api_parse_body(req, &body);
	if (r >= 0)
		r = api_check_keys(req, body, keys);
	if (r >= 0)
		r = api_get_int(req, body, "numvfs", 0, 65535, true, &n);
	if (r >= 0)
		r = api_get_bool(req, body, "dry_run", &dry_run);
	json_decref(body);
	if (r < 0)
		return r;
	r = agent_set_numvfs(req->agent, req->params[0], (int)n, dry_run, &plan, err, sizeof(err));
	if (r < 0)
		api_fail(req, r, "%s", err);
	if (r == -EBUSY) {
		/* a refusal carries the blockers, so the caller can act on it */
		if (!plan)
			plan = json_object();
		json_object_set_new(plan, "error", json_string("EBUSY"));
		json_object_set_new(plan, "message", json_string(req->error));
		return api_reply(req, 409, plan);
	}
	if (r < 0) {
		json_decref(plan);
		return r;
	}
	return api_reply(req, 200, plan);
}
