/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * POST /v1/allocations/{id}/swap: a running guest's failover NIC moved to
 * another VF ({"vf": the allocation's VF, when it has several; "pf": where
 * the new one comes from}); agent/swap.c does the work. The answer is the
 * allocation, holding the new VF in the old one's place.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/log.h"
#include "agent/swap.h"
#include "api/api.h"
#include "api/validate.h"

int api_swap(struct api_request *req)
{
	static const char *const keys[] = { "vf", "pf", NULL };
	struct agent_swap_request q = { 0 };
	char err[AGENT_ERR_SIZE] = "", old[VFP_PCI_ADDR_LEN + 1], new_vf[VFP_PCI_ADDR_LEN + 1];
	json_t *body = NULL;
	int r = 0;

	if (req->body && req->body_len > 0) {
		r = api_parse_body(req, &body);
		if (r >= 0)
			r = api_check_keys(req, body, keys);
		if (r >= 0)
			r = api_get_string(req, body, "vf", false, &q.vf);
		if (r >= 0)
			r = api_get_string(req, body, "pf", false, &q.pf);
		if (r >= 0 && q.vf && !vfp_pci_addr_is_valid(q.vf))
			r = api_fail(req, -EINVAL, "vf: \"%.40s\" is not a PCI address", q.vf);
		if (r >= 0 && q.pf && !vfp_pci_addr_is_valid(q.pf))
			r = api_fail(req, -EINVAL, "pf: \"%.40s\" is not a PCI address", q.pf);
	}
	if (r >= 0 && (r = agent_swap(req->agent, req->params[0], &q, old, new_vf, err,
				      sizeof(err))) < 0)
		api_fail(req, r, "%s", err);
	json_decref(body);
	return r < 0 ? r : api_reply_allocation(req, req->params[0]);
}
