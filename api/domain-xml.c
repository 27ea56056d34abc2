/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * POST /v1/domain-xml[?owner=NAME][&ip=A,B|MAC=A,…][&vlan=MAC=ID,…]
 * [&spoofchk=MAC=yes|no,…][&trust=MAC=yes|no,…][&pkey=MAC=KEY,…]
 * [&security_groups=MAC=ID+ID,…]: a
 * deployment file in, the same domain with VFs out (agent/deployment.c does
 * the work); the allocations' ids in X-Allocation-Id.
 */
#include "config.h"

#include "agent/deployment.h"
#include "agent/log.h"
#include "api/api.h"

int api_domain_xml(struct api_request *req)
{
	struct agent_deployment d = { .xml = req->body, .len = req->body_len,
				      .owner = api_query(req, "owner"),
				      .ips = api_query(req, "ip"), .vlans = api_query(req, "vlan"),
				      .spoofchks = api_query(req, "spoofchk"),
				      .trusts = api_query(req, "trust"),
				      .pkeys = api_query(req, "pkey"),
				      .security_groups = api_query(req, "security_groups") };
	char err[AGENT_ERR_SIZE] = "", *xml = NULL;
	int r = agent_rewrite_deployment(req->agent, &d, &xml, req->extra_value,
					 sizeof(req->extra_value), err, sizeof(err));

	if (r < 0)
		return api_fail(req, r, "%s", err);
	if (req->extra_value[0])
		req->extra_header = "X-Allocation-Id";
	req->text = xml;
	req->content_type = "application/xml";
	req->status = 200;
	return 0;
}
