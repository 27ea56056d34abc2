/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* DELETE /v1/pfs/{pci}/numvfs: a count persisted with "persist": true dropped. */
#include "config.h"

#include "agent/log.h"
#include "agent/numvfs.h"
#include "api/api.h"

/* 200 {"pf","forgotten": whether it had one}; the PF keeps its VFs. */
int api_forget_numvfs(struct api_request *req)
{
	char err[AGENT_ERR_SIZE] = "";
	int r = agent_forget_numvfs(req->agent, req->params[0], err, sizeof(err));

	if (r < 0)
		return api_fail(req, r, "%s", err);
	return api_reply(req, 200, json_pack("{s:s, s:b}", "pf", req->params[0], "forgotten",
					     r > 0));
}
