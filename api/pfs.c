/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GET /v1/pfs[/{pci}], PUT /v1/pfs/{pci}/numvfs: the PFs, and resizing them. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/log.h"
#include "agent/numvfs.h"
#include "api/api.h"

/* @pf with its VFs, the ledger's view of them from @views (NULL: unknown to the ledger). */
static json_t *pf_json(const struct vfp_pf *pf, const struct ledger_vf_view *views)
{
	json_t *o = vfp_pf_to_json(pf, false), *vfs = json_array();

	for (size_t j = 0; o && vfs && j < vfp_pf_get_vf_count(pf); j++)
		json_array_append_new(vfs, api_vf_json(vfp_pf_get_vf(pf, j),
						       views ? &views[j] : NULL));
	json_object_set_new(o, "vfs", vfs);
	return o;
}

int api_list_pfs(struct api_request *req)
{
	struct vfp_inventory *inv = agent_get_inventory(req->agent);
	struct ledger_vf_view *views = NULL;
	size_t n = 0, k = 0;
	int r = ledger_get_vf_views(req->agent, inv, &views, &n);
	json_t *a = r < 0 ? NULL : json_array();

	for (size_t i = 0; a && i < vfp_inventory_get_pf_count(inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(inv, i);

		json_array_append_new(a, pf_json(pf, &views[k]));
		k += vfp_pf_get_vf_count(pf);
	}
	free(views);
	vfp_inventory_unref(inv);
	if (r < 0)
		return api_fail(req, r, "the ledger's view of the VFs: %s", strerror(-r));
	return api_reply(req, 200, json_pack("{s:o}", "pfs", a));
}

/* One PF: the ledger's view of its VFs, then its JSON. */
static json_t *one_pf_json(struct agent *agent, const struct vfp_pf *pf)
{
	size_t n = vfp_pf_get_vf_count(pf);
	struct ledger_vf_view *views = calloc(n ? n : 1, sizeof(*views));
	json_t *o;

	for (size_t j = 0; views && j < n; j++)
		views[j].known = ledger_get_vf(agent, vfp_vf_get_pci(vfp_pf_get_vf(pf, j)),
					       &views[j].vf) >= 0;
	o = pf_json(pf, views);
	free(views);
	return o;
}

int api_get_pf(struct api_request *req)
{
	struct vfp_inventory *inv = agent_get_inventory(req->agent);
	const struct vfp_pf *pf = vfp_inventory_find_pf(inv, req->params[0]);
	const struct vfp_vf *vf = pf ? NULL : vfp_inventory_find_vf(inv, req->params[0]);
	json_t *o = NULL;
	int r = 0;

	if (pf) {
		o = one_pf_json(req->agent, pf);
	} else if (vf) { /* the reverse of what was asked: say which it is */
		r = api_fail(req, -ENOENT, "%s is a VF (of PF %s), not a PF: GET /v1/vfs/%s",
			     req->params[0], vfp_vf_get_pf_pci(vf), req->params[0]);
	} else {
		r = api_fail(req, -ENOENT, "no SR-IOV PF at %s", req->params[0]);
	}
	vfp_inventory_unref(inv);
	return r < 0 ? r : api_reply(req, 200, o);
}

/* Of @a's VFs, those on PF @pf. */
static json_t *vfs_on(const struct vfp_allocation *a, const char *pf)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < vfp_allocation_get_vf_count(a); i++)
		if (strcmp(vfp_allocation_get_vf(a, i)->pf, pf) == 0)
			json_array_append_new(list, json_string(vfp_allocation_get_vf(a, i)->pci));
	return list;
}

/* {"pf","from","to","totalvfs","allowed","reason","blockers":[{"allocation","owner","state","vfs"}]} */
static json_t *plan_json(const struct vfp_numvfs_plan *p, bool dry_run)
{
	json_t *b = json_array();

	for (size_t i = 0; b && i < p->n_blockers; i++) {
		const struct vfp_allocation *a = p->blockers[i];

		json_array_append_new(
			b, json_pack("{s:s, s:o, s:s, s:o}", "allocation", vfp_allocation_get_id(a),
				     "owner", api_owner_json(vfp_allocation_get_owner(a)), "state",
				     vfp_allocation_state_to_string(vfp_allocation_get_state(a)),
				     "vfs", vfs_on(a, p->pf)));
	}
	return json_pack("{s:s, s:i, s:i, s:i, s:b, s:s?, s:o, s:b}", "pf", p->pf, "from", p->from,
			 "to", p->to, "totalvfs", p->totalvfs, "allowed", p->allowed, "reason",
			 p->reason[0] ? p->reason : NULL, "blockers", b, "dry_run", dry_run);
}

/*
 * {"numvfs":N,"dry_run":true} → 200 with the plan; applied → 200 with the
 * plan; refused → 409 with the plan's reason and the blocking allocations.
 */
int api_put_numvfs(struct api_request *req)
{
	static const char *const keys[] = { "numvfs", "dry_run", "persist", NULL };
	long long n = 0;
	bool dry_run = false, persist = false;
	struct vfp_numvfs_plan *p = NULL;
	json_t *body = NULL, *plan;
	char err[AGENT_ERR_SIZE] = "";
	int r;

	r = api_parse_body(req, &body);
	if (r >= 0)
		r = api_check_keys(req, body, keys);
	if (r >= 0)
		r = api_get_int(req, body, "numvfs", 0, 65535, true, &n);
	if (r >= 0)
		r = api_get_bool(req, body, "dry_run", &dry_run);
	if (r >= 0)
		r = api_get_bool(req, body, "persist", &persist);
	json_decref(body);
	if (r < 0)
		return r;
	if (dry_run && persist)
		return api_fail(req, -EINVAL, "persist: a dry run writes nothing; leave one out");
	r = agent_set_numvfs(req->agent, req->params[0], (int)n, dry_run, &p, err, sizeof(err));
	if (r >= 0 && persist)
		r = agent_persist_numvfs(req->agent, req->params[0], (int)n, err, sizeof(err));
	if (r < 0)
		api_fail(req, r, "%s", err);
	plan = p && (r >= 0 || r == -EBUSY) ? plan_json(p, dry_run) : NULL;
	vfp_numvfs_plan_free(p);
	if (r == -EBUSY) {
		/* a refusal carries the blockers, so the caller can act on it */
		if (!plan)
			plan = json_object();
		json_object_set_new(plan, "error", json_string("EBUSY"));
		json_object_set_new(plan, "message", json_string(req->error));
		return api_reply(req, 409, plan);
	}
	if (r < 0)
		return r;
	if (plan)
		json_object_set_new(plan, "persisted", json_boolean(persist));
	return api_reply(req, 200, plan);
}
