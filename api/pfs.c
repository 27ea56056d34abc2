/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GET /v1/pfs[/{pci}], PUT /v1/pfs/{pci}/numvfs: the PFs, and resizing them. */
#include "config.h"

#include <errno.h>

#include "agent/events.h"
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

static int numvfs_in_lock(struct api_request *req, long long n, bool dry_run, json_t **plan)
{
	struct agent *a = req->agent;
	struct vfp_inventory *inv = NULL;
	int r;

	if (dry_run)
		return vfp_numvfs_plan(a->ledger, a->inv, req->params[0], (int)n, plan);
	r = vfp_numvfs_apply(a->ledger, a->config, a->inv, req->params[0], (int)n, plan, &inv);
	if (inv)
		agent_replace_inventory(a, inv);
	return r;
}

/*
 * {"numvfs":N,"dry_run":true} → 200 with the plan; applied → 200 with the
 * plan; refused → 409 with the plan's reason and the blocking allocations.
 */
int api_put_numvfs(struct api_request *req)
{
	static const char *const keys[] = { "numvfs", "dry_run", NULL };
	struct agent *a = req->agent;
	long long n = 0;
	bool dry_run = false;
	json_t *body = NULL, *plan = NULL;
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
	pthread_rwlock_wrlock(&a->state_lock);
	pthread_mutex_lock(&a->ledger_lock);
	r = numvfs_in_lock(req, n, dry_run, &plan);
	if (r < 0)
		api_fail(req, r, "%s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	pthread_rwlock_unlock(&a->state_lock);
	if (r < 0 && r != -EBUSY) {
		json_decref(plan);
		return r;
	}
	if (r == -EBUSY) {
		/* a refusal carries the blockers, so the caller can act on it */
		if (!plan)
			plan = json_object();
		json_object_set_new(plan, "error", json_string("EBUSY"));
		json_object_set_new(plan, "message", json_string(req->error));
		return api_reply(req, 409, plan);
	}
	json_object_set_new(plan, "dry_run", json_boolean(dry_run));
	if (!dry_run)
		events_emit(a->events, "numvfs", json_incref(plan));
	return api_reply(req, 200, plan);
}
