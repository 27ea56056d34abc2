/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF's netdev into a container's network namespace and back, over
 * rtnetlink (libmnl): move and rename in one step, then MTU, MAC,
 * addresses, up and route inside. The netdev is found by what the tenant
 * cannot forge (vf-link.h), in the namespace and back in the host, never by
 * the name it has inside. Its name, MTU, state and MAC in the host are
 * snapshotted first and restored on the way back.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "libvfpool/libvfpool.h"

/* What the netdev becomes inside the namespace. */
struct netns_config {
	const char *ifname;
	const char *const *addresses; /* "10.0.0.2/24", … */
	size_t n_addresses;
	unsigned mtu;		  /* 0: keep */
	const unsigned char *mac; /* 6 bytes, or NULL: keep */
	const char *gateway;	  /* default route via this address, or NULL */
};

int vf_netdev_snapshot(const char *netdev, const char *pci, struct vfp_restore_point *rp,
		       char *err, size_t err_size);
int vf_netdev_attach(const char *pci, int netns_fd, const struct netns_config *cfg,
		     struct vfp_restore_point *rp, char *err, size_t err_size);
int vf_netdev_detach(const char *pci, const struct vfp_restore_point *rp, int netns_fd,
		     void (*home)(void *arg), void *arg, char *err, size_t err_size);
int vf_netdev_in_netns(const char *pci, const struct vfp_restore_point *rp);
