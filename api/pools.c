/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GET /v1/pools: each pool's selector and how many of its VFs are in each state. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "api/api.h"

/* {state: n} for the states a pool has VFs in. */
json_t *api_state_counts_json(const unsigned vfs[_VFP_VF_STATE_MAX])
{
	json_t *o = json_object();

	for (int s = 0; o && s < _VFP_VF_STATE_MAX; s++)
		if (vfs[s])
			json_object_set_new(o, vfp_vf_state_to_string(s), json_integer(vfs[s]));
	return o;
}

/* Pool @name's counts, or NULL. */
static const struct vfp_pool_count *find(const struct vfp_pool_count *c, size_t n,
					 const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].pool, name) == 0)
			return &c[i];
	return NULL;
}

int api_list_pools(struct api_request *req)
{
	struct vfp_config *c = agent_get_config(req->agent);
	json_t *pools = vfp_config_pools_to_json(c), *p;
	struct vfp_pool_count *counts = NULL;
	size_t i, n = 0;

	if (ledger_counts(req->agent, &counts, &n) < 0)
		n = 0;
	vfp_config_unref(c);
	json_array_foreach(pools, i, p) {
		const struct vfp_pool_count *k =
			find(counts, n, json_string_value(json_object_get(p, "name")));
		static const unsigned none[_VFP_VF_STATE_MAX];

		json_object_set_new(p, "vfs", api_state_counts_json(k ? k->vfs : none));
	}
	free(counts);
	return api_reply(req, 200, json_pack("{s:o*}", "pools", pools));
}
