/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF's netdev, known by what a tenant cannot forge. Inside a container's
 * namespace the tenant may rename, replace or delete any link between two
 * calls, so a name proves nothing. A real VF's netdev is the link whose
 * parent device (as the kernel reports it) is the VF's PCI address. The
 * simulated host's stand-ins are veth links with no parent: one is known
 * by its peer, which stays in the host's namespace, out of the tenant's
 * reach.
 */
#pragma once

#include "agent/netlink/nlmsg.h"

struct vf_link_id {
	const char *pci;
	int peer_ifindex; /* a stand-in's host-side peer; 0 for a real VF */
	int ifindex;	  /* where it was last seen: tried first, and checked */
};

int vf_link_identify(const char *netdev, const char *pci, struct vf_link_id *ret,
		     struct nl_link *ret_link, char *err, size_t err_size);
int vf_link_find(const struct vf_link_id *id, int netns_fd, struct nl_link *ret);
