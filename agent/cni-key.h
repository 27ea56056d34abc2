/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A CNI attachment's key, "cni:NETWORK/CONTAINERID/IFNAME", read whole: the
 * network name and the container ID as the CNI spec allows them (an
 * alphanumeric, then alphanumerics, '_', '.', '-': no '/', never empty),
 * the interface name as the kernel takes one. A key of another shape names
 * no attachment, so no name can reach into another network's keys.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define CNI_KEY_MAX 1024

struct cni_key {
	char network[CNI_KEY_MAX], container[CNI_KEY_MAX], ifname[16];
};

int cni_key_parse(const char *key, struct cni_key *ret, char *err, size_t err_size);
int cni_gc_prefix_network(const char *prefix, char ret[static CNI_KEY_MAX], char *err,
			  size_t err_size);
bool cni_key_in_network(const char *key, const char *network);
