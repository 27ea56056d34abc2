/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RDMA devices: the subsystem's netns mode and moving a device between
 * namespaces (RDMA netlink), and the host's devices from rdma-core's libibverbs
 * (port facts: rdma-devices.h).
 * A kernel without RDMA is normal: every function says so and nothing fails
 * for it.
 */
#pragma once

#include <stddef.h>

int rdma_netns_exclusive(int *ret_exclusive, char *err, size_t err_size);
int rdma_move(const char *dev, int from_netns_fd, int to_netns_fd, char *err, size_t err_size);
int rdma_check_open(int netns_fd, const char *dev, char *err, size_t err_size);
/* The host's RDMA: devices -1 when there is none (status says why). */
struct rdma_host {
	int devices;
	char netns_mode[16]; /* "exclusive", "shared", or "" when unknown */
	char status[160];    /* why not, or "" */
};

void rdma_host_facts(struct rdma_host *ret);

struct vfp_inventory;
int rdma_verbs_missing(const struct vfp_inventory *inv, char *why, size_t size);
