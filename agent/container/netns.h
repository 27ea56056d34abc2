/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Moving a VF's netdev into a container's network namespace and back,
 * over rtnetlink (libmnl): move and rename in one step, MTU, addresses, up;
 * the original name, MTU and state are snapshotted and restored.
 */
#pragma once

#include <jansson.h>
#include <stddef.h>

#include <stdbool.h>
#include <sys/types.h>

/* What the netdev becomes inside the namespace. */
struct netns_config {
	const char *ifname;
	json_t *addresses;	  /* ["10.0.0.2/24", …], may be NULL */
	unsigned mtu;		  /* 0: keep */
	const unsigned char *mac; /* 6 bytes, or NULL: keep */
	const char *gateway;	  /* default route via this address, or NULL */
};

int netns_open(const char *spec, int *ret_fd, char *err, size_t err_size);
int netns_inode(int fd, ino_t *ret);
bool netns_alive(const char *spec, ino_t inode);
int netns_snapshot(const char *netdev, json_t **ret, char *err, size_t err_size);
int netns_holds(const char *spec, ino_t inode, const char *ifname);
int netns_attach(const char *netdev, int netns_fd, const struct netns_config *cfg,
		 json_t *original, char *err, size_t err_size);
int netns_detach(json_t *original, int netns_fd, const char *found_as, char *err,
		 size_t err_size);
