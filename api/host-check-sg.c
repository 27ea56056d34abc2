/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GET /v1/host/checks, the security groups: a VM's NIC whose claim carries
 * OpenNebula security groups (deploy passes the NIC's SECURITY_GROUPS) holds
 * a VF, whose traffic no host firewall sees, so none of their rules applies.
 * A warning per such NIC, naming the VM, the NIC's MAC, its VF and the groups.
 */
#include "config.h"

#include "agent/ledger.h"
#include "agent/log.h"
#include "api/api.h"

#define FIX "filter in the guest or on the switch; on OpenNebula take the groups off the " \
	    "network (onevnet update: SECURITY_GROUPS) or have deploy refuse them (the " \
	    "network's VFAGENT_SECURITY_GROUPS = \"REFUSE\", hooks/one/README)"

static void check_allocation(struct vfp_host_checks *c, const struct vfp_allocation *alloc)
{
	const struct vfp_settings *s = vfp_allocation_get_settings(alloc);
	const struct vfp_owner *o = vfp_allocation_get_owner(alloc);
	size_t n = vfp_allocation_get_vf_count(alloc);

	if (!s || !s->security_groups[0])
		return;
	vfp_host_checks_add(c, VFP_CHECK_WARN, "security-groups", o->name ? o->name : "?", FIX,
			    "NIC %s of VM %s (domain %s): security groups %s do not apply to its "
			    "VF %s (allocation %s): no host firewall sees a VF's traffic",
			    s->mac[0] ? s->mac : "without a MAC", o->name ? o->name : "?",
			    o->uuid ? o->uuid : "unknown", s->security_groups,
			    n ? vfp_allocation_get_vf(alloc, 0)->pci : "none",
			    vfp_allocation_get_id(alloc));
}

/* A warning per live allocation with security groups; none when no claim has any. */
void api_check_security_groups(struct agent *a, struct vfp_host_checks *c)
{
	struct vfp_allocation **list = NULL;
	char err[AGENT_ERR_SIZE] = "";
	size_t n = 0;

	if (ledger_list_allocations(a, NULL, false, &list, &n, err, sizeof(err)) < 0) {
		vfp_host_checks_add(c, VFP_CHECK_WARN, "security-groups", NULL, NULL,
				    "cannot list the allocations: %s", err);
		return;
	}
	for (size_t i = 0; i < n; i++)
		check_allocation(c, list[i]);
	vfp_allocation_list_free(list, n);
}
