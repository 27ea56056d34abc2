/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host checks for RDMA: each InfiniBand port of a PF is ACTIVE under a
 * subnet manager, and RDMA devices are bound to one namespace each
 * (exclusive mode) so a container sees only the device of its VF; and, as
 * the agent reports it, libibverbs lists them (its providers are installed).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "host-checks.h"
#include "sysfs.h"

static int port_read(struct vfp_ctx *ctx, const char *dev, const char *port, const char *attr,
		     char *buf, size_t size)
{
	char name[96], rel[160];

	snprintf(name, sizeof(name), "%.64s/ports/%.16s", dev, port);
	if (vfp_sysfs_class(rel, sizeof(rel), "infiniband", name, attr) < 0)
		return -ENAMETOOLONG;
	return vfp_sysfs_read(ctx, rel, buf, size);
}

/* "4: ACTIVE" -> "ACTIVE"; "" when unreadable. */
static void port_state(struct vfp_ctx *ctx, const char *dev, const char *port, const char *attr,
		       char buf[static 64])
{
	char raw[64];
	const char *colon, *s;

	buf[0] = '\0';
	if (port_read(ctx, dev, port, attr, raw, sizeof(raw)) < 0)
		return;
	colon = strchr(raw, ':');
	s = colon ? colon + 1 : raw;
	while (*s == ' ')
		s++;
	memmove(buf, s, strlen(s) + 1);
}

static void check_port(const struct vfp_host_check_run *run, const char *dev, const char *port)
{
	char subject[96], state[64], phys[64], sm[16] = "", ll[32] = "";

	if (port_read(run->ctx, dev, port, "link_layer", ll, sizeof(ll)) < 0 ||
	    strcmp(ll, "InfiniBand") != 0)
		return;
	port_state(run->ctx, dev, port, "state", state);
	port_state(run->ctx, dev, port, "phys_state", phys);
	(void)port_read(run->ctx, dev, port, "sm_lid", sm, sizeof(sm));
	snprintf(subject, sizeof(subject), "%.64s/%.16s", dev, port);
	if (strcmp(state, "ACTIVE") == 0 && strcmp(sm, "0x0") != 0)
		check_add(run, VFP_CHECK_PASS, "ib-port", subject, NULL, "ACTIVE, %s, SM lid %s",
			  phys[0] ? phys : "phys_state unknown", sm[0] ? sm : "unknown");
	else if (strcmp(state, "INIT") == 0 || strcmp(state, "ACTIVE") == 0)
		check_add(run, VFP_CHECK_WARN, "ib-port", subject,
			  "run a subnet manager on the fabric (opensm, with virt_enabled 2 in "
			  "opensm.conf so VFs get their GUIDs)",
			  "%s, SM lid %s: no subnet manager has configured the port", state,
			  sm[0] ? sm : "unknown");
	else
		check_add(run, VFP_CHECK_WARN, "ib-port", subject,
			  "check the cable and the switch port (ibstat shows the port)",
			  "%s (%s): VFs on this port get no link", state[0] ? state : "state unreadable",
			  phys[0] ? phys : "phys_state unreadable");
}

static void check_ports(const struct vfp_host_check_run *run, const char *dev)
{
	char rel[PATH_MAX], **ports = NULL;
	size_t n = 0;

	vfp_sysfs_class(rel, sizeof(rel), "infiniband", dev, "ports");
	if (vfp_sysfs_list_dir(run->ctx, rel, &ports, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		check_port(run, dev, ports[i]);
	vfp_strv_free(ports, n);
}

static void check_netns_mode(const struct vfp_host_check_run *run)
{
	char mode[8] = "";

	if (vfp_sysfs_read(run->ctx, "module/ib_core/parameters/netns_mode", mode, sizeof(mode)) < 0)
		check_add(run, VFP_CHECK_WARN, "rdma-netns", NULL, "modprobe ib_core",
			  "ib_core's netns_mode is unreadable (is ib_core loaded?)");
	else if (strcmp(mode, "N") == 0 || strcmp(mode, "0") == 0)
		check_add(run, VFP_CHECK_PASS, "rdma-netns", NULL, NULL,
			  "exclusive: an RDMA device moves with its VF into one namespace");
	else
		check_add(run, VFP_CHECK_WARN, "rdma-netns", NULL,
			  "rdma system set netns exclusive, before any container starts (at boot: "
			  "options ib_core netns_mode=0 in /etc/modprobe.d, see vfagent-guide(7))",
			  "shared: every namespace sees every RDMA device of the host");
}

/* The host's PFs have RDMA devices, and the agent's libibverbs lists none: no providers. */
static void check_verbs(const struct vfp_host_check_run *run, const char *dev)
{
	if (!run->env->verbs_devices)
		return;
	if (*run->env->verbs_devices > 0)
		check_add(run, VFP_CHECK_PASS, "rdma-verbs", NULL, NULL,
			  "libibverbs lists %d RDMA devices", *run->env->verbs_devices);
	else
		check_add(run, VFP_CHECK_WARN, "rdma-verbs", NULL,
			  "apt-get install " IBVERBS_PROVIDERS_PACKAGE " (libibverbs' drivers), then "
			  "systemctl restart vfagentd",
			  "libibverbs lists none of the host's RDMA devices (%s...): VFs get no port "
			  "facts and no RDMA check after a move", dev);
}

void vfp_host_check_rdma(const struct vfp_host_check_run *run)
{
	const char *first = NULL;
	bool any = false;

	for (size_t i = 0; i < vfp_inventory_get_pf_count(run->inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(run->inv, i);
		const char *dev = vfp_pf_get_rdma_device(pf);

		if (!dev)
			continue;
		if (!any)
			first = dev;
		any = true;
		if (vfp_pf_get_link_type(pf) == VFP_LINK_INFINIBAND)
			check_ports(run, dev);
	}
	if (any) {
		check_netns_mode(run);
		check_verbs(run, first);
	} else
		check_add(run, VFP_CHECK_SKIP, "rdma-netns", NULL, NULL, "no RDMA devices");
}
