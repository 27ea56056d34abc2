/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Moving a VF's netdev into a container's network namespace and back,
 * over rtnetlink (libmnl): move and rename in one step, MTU, addresses, up;
 * the original name, MTU and state are snapshotted and restored.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

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

int netns_open(const char *spec, int *ret_fd, char *err, size_t err_size);
int netns_inode(int fd, ino_t *ret);
bool netns_alive(const char *spec, ino_t inode);
int netns_snapshot(const char *netdev, struct vfp_restore_point *rp, char *err, size_t err_size);
int netns_holds(const char *spec, ino_t inode, const char *ifname);
int netns_attach(const char *netdev, int netns_fd, const struct netns_config *cfg,
		 struct vfp_restore_point *original, char *err, size_t err_size);
int netns_detach(const struct vfp_restore_point *original, int netns_fd, const char *found_as,
		 char *err, size_t err_size);
