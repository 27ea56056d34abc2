/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Attach, detach, domain-xml: the VM and container back-ends come with their own issues. */
#include "config.h"

#include <errno.h>

#include "api.h"

int api_attach(struct api_request *req)
{
	return api_fail(req, -ENOSYS, "attaching to VMs and containers is not built yet");
}

int api_detach(struct api_request *req)
{
	return api_fail(req, -ENOSYS, "detaching from VMs and containers is not built yet");
}

int api_domain_xml(struct api_request *req)
{
	return api_fail(req, -ENOSYS, "the deployment-XML rewrite is not built yet");
}
