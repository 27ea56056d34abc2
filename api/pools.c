/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GET /v1/pools: each pool's selector and how many of its VFs are in each state. */
#include "config.h"

#include "api/api.h"

int api_list_pools(struct api_request *req)
{
	struct vfp_config *c = agent_get_config(req->agent);
	json_t *pools = vfp_config_pools_to_json(c), *counts, *p;
	size_t i;

	pthread_mutex_lock(&req->agent->ledger_lock);
	counts = vfp_ledger_counts(req->agent->ledger);
	pthread_mutex_unlock(&req->agent->ledger_lock);
	vfp_config_unref(c);
	json_array_foreach(pools, i, p) {
		json_t *n = json_object_get(counts, json_string_value(json_object_get(p, "name")));

		json_object_set_new(p, "vfs", n ? json_incref(n) : json_object());
	}
	json_decref(counts);
	return api_reply(req, 200, json_pack("{s:o*}", "pools", pools));
}
