/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * POST /v1/allocations/{id}/hold {"hold_while": PATH | null}: the allocation
 * held for its owner while the file PATH exists (null: no longer held),
 * without moving its VFs. A reserved one outlives its owner while the file
 * exists; an attached one, when its domain ends, comes back to the host and
 * stays reserved while the file exists (OpenNebula keeps a powered-off VM's
 * devices booked: its directory is the lease). Removing the file releases it
 * within moments (the agent watches it).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/attach.h"
#include "agent/log.h"
#include "api/api.h"

int api_hold(struct api_request *req)
{
	static const char *const keys[] = { "hold_while", NULL };
	const char *hold_while = NULL;
	json_t *body = NULL, *v;
	char err[AGENT_ERR_SIZE] = "";
	int r = api_parse_body(req, &body);

	if (r >= 0)
		r = api_check_keys(req, body, keys);
	if (r >= 0 && !(v = json_object_get(body, "hold_while")))
		r = api_fail(req, -EINVAL, "hold_while: needed (an absolute path, or null)");
	if (r >= 0 && !json_is_null(v))
		r = api_get_string(req, body, "hold_while", true, &hold_while);
	if (r >= 0 && hold_while && (hold_while[0] != '/' || strlen(hold_while) > 4095))
		r = api_fail(req, -EINVAL, "hold_while: \"%.64s\" is not an absolute path",
			     hold_while);
	if (r >= 0) {
		r = agent_hold(req->agent, req->params[0], hold_while, err, sizeof(err));
		if (r < 0)
			api_fail(req, r, "%s", err);
	}
	json_decref(body);
	return r < 0 ? r : api_reply_allocation(req, req->params[0]);
}
