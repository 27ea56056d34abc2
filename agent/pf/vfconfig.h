/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF's settings on its PF (MAC, VLAN, spoofchk, trust, link state, rates,
 * IB GUIDs): what an allocation asks, the restore point read before it is
 * applied, and the restore. rtnetlink on the PF's netdev; IB GUIDs fall back
 * to the PF driver's sysfs files and need a rebind of the VF to take effect.
 */
#pragma once

#include <stddef.h>

#include "libvfpool/libvfpool.h"
#include "agent/netlink/vfinfo.h"

struct vf_target {
	struct vfp_ctx *ctx;
	const char *pci;       /* the VF */
	const char *pf_pci;
	const char *pf_netdev; /* NULL when the PF has none */
	const char *pf_driver;
	unsigned index;
	bool for_guest; /* it goes to a VM: the guest's driver takes new GUIDs when it probes */
};

int vfconfig_from_request(const struct vfp_settings *settings, const struct vfp_allocation_vf *vf,
			  bool first, struct vfp_vf_config *ret, char *err, size_t err_size);
int vfconfig_read(const struct vf_target *t, struct vfp_vf_config *ret, char *err, size_t err_size);
int vfconfig_snapshot(const struct vf_target *t, const struct vfp_vf_config *want,
		      struct vfp_vf_config *ret, char *err, size_t err_size);
int vfconfig_apply(const struct vf_target *t, const struct vfp_vf_config *s, char *err,
		   size_t err_size);
