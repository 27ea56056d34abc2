/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Moving a VF's netdev into a container's network namespace and back,
 * over rtnetlink (libmnl): move and rename in one step, MTU, addresses, up;
 * the original name, MTU and state are snapshotted and restored.
 */
#pragma once

#include <jansson.h>
#include <stddef.h>

int netns_open(const char *spec, int *ret_fd, char *err, size_t err_size);
int netns_attach(const char *netdev, int netns_fd, const char *ifname, json_t *addresses,
		 unsigned mtu, json_t **ret_original, char *err, size_t err_size);
int netns_detach(json_t *original, int netns_fd, char *err, size_t err_size);
