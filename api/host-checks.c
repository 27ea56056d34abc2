/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GET /v1/host/checks: the host's preflight (`vfctl doctor`), as the agent
 * sees it: libvfpool's checks on the agent's sysfs, inventory and config,
 * and what only the agent knows (its libvirt connection).
 */
#include "config.h"

#include <errno.h>

#include "agent/vm/libvirt.h"
#include "api/api.h"

static void check_libvirt(struct agent *a, struct vfp_host_checks *c)
{
	const char *uri = libvirt_conn_get_uri(a->libvirt);

	if (!uri)
		vfp_host_checks_add(c, VFP_CHECK_SKIP, "libvirt", NULL, NULL,
				    "off (\"libvirt\": false in the config): VMs cannot get VFs "
				    "(containers can)");
	else if (libvirt_conn_is_connected(a->libvirt))
		vfp_host_checks_add(c, VFP_CHECK_PASS, "libvirt", NULL, NULL, "%s: connected", uri);
	else
		vfp_host_checks_add(c, VFP_CHECK_WARN, "libvirt", NULL,
				    "systemctl start libvirtd (or virtqemud.socket); the agent "
				    "reconnects by itself",
				    "%s: not connected, VMs cannot get VFs (containers can)", uri);
}

/* {"status": worst, "checks": [{check, subject, status, fact, fix}]} */
int api_get_host_checks(struct api_request *req)
{
	struct agent *a = req->agent;
	struct vfp_inventory *inv = agent_get_inventory(a);
	struct vfp_config *config = agent_get_config(a);
	struct vfp_host_env env = { .config_path = agent_config_path(a) ?: "the built-in config of "
									 "the simulated host",
				      .socket_path = a->socket_path[0] ? a->socket_path : NULL };
	struct vfp_host_checks *c = NULL;
	json_t *o = NULL;
	int r;

	r = vfp_host_checks_new(&c);
	if (r >= 0)
		r = vfp_host_checks_run(c, a->ctx, &env, inv, config);
	if (r >= 0) {
		check_libvirt(a, c);
		o = vfp_host_checks_to_json(c);
	}
	vfp_host_checks_free(c);
	vfp_config_unref(config);
	vfp_inventory_unref(inv);
	if (!o)
		return api_fail(req, -ENOMEM, "out of memory running the host checks");
	return api_reply(req, 200, o);
}
