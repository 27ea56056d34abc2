/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GET /v1/partitions: this host's members of InfiniBand partitions (agent/partitions.c). */
#include "config.h"

#include <string.h>

#include "agent/partitions.h"
#include "api/api.h"

int api_list_partitions(struct api_request *req)
{
	json_t *o = NULL;
	int r = agent_partitions_json(req->agent, &o);

	if (r < 0)
		return api_fail(req, r, "listing the partitions' members: %s", strerror(-r));
	return api_reply(req, 200, o);
}
