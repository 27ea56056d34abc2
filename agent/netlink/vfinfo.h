/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF's settings as its PF holds them (IFLA_VFINFO_LIST): parsed from an
 * RTM_NEWLINK reply of the PF and built into an RTM_NEWLINK request, as pure
 * functions over buffers. The socket I/O is in vfconfig.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libvfpool/libvfpool.h" /* struct vfp_vf_config: one VF's settings */

size_t vfinfo_build_get(void *buf, uint32_t seq, const char *pf_name);
size_t vfinfo_build_set(void *buf, size_t size, uint32_t seq, int pf_ifindex,
			const struct vfp_vf_config *s);
int vfinfo_parse(const void *buf, size_t len, unsigned index, struct vfp_vf_config *ret);
