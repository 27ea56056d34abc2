/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GET /v1/host/checks: the host's preflight (`vfctl doctor`), as the agent
 * sees it: libvfpool's checks on the agent's sysfs, inventory and config,
 * and what only the agent knows (its libvirt connection, the security groups of
 * its VMs' NICs: api/host-check-sg.c).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent-facts.h"
#include "agent/container/rdma.h"
#include "agent/vm/libvirt.h"
#include "libvfpool/macro.h"
#include "api/api.h"

/* A unit of a libvirt daemon installed here, else NULL. */
static const char *libvirt_daemon_unit(void)
{
	static const char *const dirs[] = { "/etc/systemd/system", "/lib/systemd/system",
					    "/usr/lib/systemd/system" };
	static const char *const units[] = { "libvirtd.service", "virtqemud.socket" };
	char path[128];

	for (size_t u = 0; u < ELEMENTSOF(units); u++)
		for (size_t d = 0; d < ELEMENTSOF(dirs); d++) {
			snprintf(path, sizeof(path), "%s/%s", dirs[d], units[u]);
			if (access(path, F_OK) == 0)
				return units[u];
		}
	return NULL;
}

/* What brings the daemon at @uri back: the unit installed here, or the package. */
static void libvirt_daemon_fix(const char *uri, char *fix, size_t size)
{
	const char *unit = libvirt_daemon_unit();

	if (strncmp(uri, "qemu:///", 8) != 0)
		snprintf(fix, size, "start the libvirt daemon %s names; the agent reconnects by "
			 "itself", uri);
	else if (unit)
		snprintf(fix, size, "systemctl start %s; the agent reconnects by itself", unit);
	else
		snprintf(fix, size, "no libvirt daemon is installed: apt-get install "
			 "libvirt-daemon-system and the agent connects by itself; on a host without "
			 "VMs, set \"libvirt\": false in the config");
}

static void check_libvirt(struct agent *a, struct vfp_host_checks *c)
{
	const char *uri = libvirt_conn_get_uri(agent_libvirt(a));
	const char *missing = libvirt_missing();
	char fix[256];

	if (missing) {
		snprintf(fix, sizeof(fix), "apt-get install %s, then systemctl restart vfagentd (or "
			 "\"libvirt\": false in the config on a host without VMs)", LIBVIRT_PACKAGE);
		vfp_host_checks_add(c, VFP_CHECK_WARN, "libvirt", NULL, fix,
				    "cannot load libvirt: %s: VMs cannot get VFs (containers can)",
				    missing);
	} else if (!uri) {
		vfp_host_checks_add(c, VFP_CHECK_SKIP, "libvirt", NULL, NULL,
				    "off (\"libvirt\": false in the config): VMs cannot get VFs "
				    "(containers can)");
	} else if (libvirt_conn_is_connected(agent_libvirt(a))) {
		vfp_host_checks_add(c, VFP_CHECK_PASS, "libvirt", NULL, NULL, "%s: connected", uri);
	} else {
		libvirt_daemon_fix(uri, fix, sizeof(fix));
		vfp_host_checks_add(c, VFP_CHECK_WARN, "libvirt", NULL, fix,
				    "%s: not connected, VMs cannot get VFs (containers can)", uri);
	}
}

/*
 * The config file as it is on disk now: NULL when it loads, else why not (to
 * free). The agent runs the config it loaded last; a reload keeps it when the
 * file does not load, and the file's own check must say so.
 */
static char *config_file_error(const char *path)
{
	struct vfp_config *c = NULL;
	char *err = NULL;
	int r = vfp_config_load_file(path, &c, &err);

	vfp_config_unref(c);
	if (r >= 0) {
		free(err);
		return NULL;
	}
	return err ? err : strdup(strerror(-r));
}

/* {"status": worst, "checks": [{check, subject, status, fact, fix}]} */
int api_get_host_checks(struct api_request *req)
{
	struct agent *a = req->agent;
	struct vfp_inventory *inv = agent_get_inventory(a);
	struct vfp_config *config = agent_get_config(a);
	const char *path = agent_config_path(a);
	struct vfp_host_env env = { .config_path = path ?: "the built-in config of the simulated "
							   "host",
				      .socket_path = agent_socket_path(a) };
	_cleanup_free_ char *disk = path ? config_file_error(path) : NULL;
	struct vfp_host_checks *c = NULL;
	struct rdma_host rdma;
	char running[512];
	int verbs;
	json_t *o = NULL;
	int r;

	if (disk) {
		snprintf(running, sizeof(running), "the running config (kept: %s on disk does not "
			 "load)", path);
		env.config_path = running;
	}
	if (!agent_simulated(a)) { /* a simulated host's RDMA devices are not libibverbs' */
		rdma_host_facts(&rdma);
		verbs = rdma.devices > 0 ? rdma.devices : 0;
		env.verbs_devices = &verbs;
	}
	r = vfp_host_checks_new(&c);
	if (r >= 0)
		r = vfp_host_checks_run(c, agent_ctx(a), &env, inv, config);
	if (r >= 0 && disk)
		vfp_host_checks_add(c, VFP_CHECK_FAIL, "config", path, "correct the file, then "
				    "systemctl reload vfagentd (until then the agent runs the "
				    "config it loaded before)", "%s", disk);
	if (r >= 0) {
		check_libvirt(a, c);
		api_check_security_groups(a, c);
		o = vfp_host_checks_to_json(c);
	}
	vfp_host_checks_free(c);
	vfp_config_unref(config);
	vfp_inventory_unref(inv);
	if (!o)
		return api_fail(req, -ENOMEM, "out of memory running the host checks");
	return api_reply(req, 200, o);
}
