/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RDMA devices: the subsystem's netns mode and moving a device between
 * namespaces (RDMA netlink), and its port facts from rdma-core's libibverbs.
 * A kernel without RDMA is normal: every function says so and nothing fails
 * for it.
 */
#pragma once

#include <jansson.h>
#include <stddef.h>

int rdma_netns_exclusive(int *ret_exclusive, char *err, size_t err_size);
int rdma_move(const char *dev, int from_netns_fd, int to_netns_fd, char *err, size_t err_size);
int rdma_check_open(int netns_fd, const char *dev, char *err, size_t err_size);
json_t *rdma_port_facts(const char *dev);
json_t *rdma_host_facts(void);
