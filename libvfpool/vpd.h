/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A PCI function's Vital Product Data: the read-only keywords that name the board. */
#pragma once

#include <stddef.h>

/* Keyword values are at most 255 bytes; these hold what cards write (a UUID, a serial). */
#define VFP_VPD_VALUE_MAX 64

struct vfp_vpd_ids {
	char sn[VFP_VPD_VALUE_MAX + 1]; /* "SN": the board's serial number */
	char v3[VFP_VPD_VALUE_MAX + 1]; /* "V3": NVIDIA's per-device UUID */
};

int vfp_vpd_parse(const unsigned char *vpd, size_t len, struct vfp_vpd_ids *ret);
