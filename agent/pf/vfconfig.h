/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF's settings on its PF (MAC, VLAN, spoofchk, trust, link state, rates,
 * IB GUIDs): what an allocation asks, the restore point read before it is
 * applied, and the restore. rtnetlink on the PF's netdev; IB GUIDs fall back
 * to the PF driver's sysfs files and need a rebind of the VF to take effect.
 */
#pragma once

#include <jansson.h>
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
};

int vfconfig_from_request(json_t *settings, json_t *vf, bool first, struct vf_settings *ret,
			  char *err, size_t err_size);
bool vfconfig_is_empty(const struct vf_settings *s);
int vfconfig_snapshot(const struct vf_target *t, const struct vf_settings *want,
		      struct vf_settings *ret, char *err, size_t err_size);
int vfconfig_apply(const struct vf_target *t, const struct vf_settings *s, char *err,
		   size_t err_size);
json_t *vfconfig_to_json(const struct vf_settings *s);
int vfconfig_from_json(json_t *o, unsigned index, struct vf_settings *ret);
