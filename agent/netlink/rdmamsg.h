/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RDMA netlink (nldev) messages as pure functions over buffers: the
 * subsystem's netns mode, the index of a device by name, and moving a
 * device into a network namespace.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

size_t rdmamsg_build_sys_get(void *buf, uint32_t seq);
size_t rdmamsg_build_dev_dump(void *buf, uint32_t seq);
size_t rdmamsg_build_set_netns(void *buf, uint32_t seq, uint32_t dev_index, int netns_fd);
int rdmamsg_parse_netns_mode(const void *buf, size_t len, int *ret_exclusive);
int rdmamsg_find_dev(const void *buf, size_t len, const char *name, uint32_t *ret_index);
