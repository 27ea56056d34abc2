/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "libvfpool/libvfpool.h"

void vfctl_print_table(FILE *out, const struct vfp_inventory *inv);
void vfctl_print_pf(FILE *out, const struct vfp_pf *pf);
void vfctl_print_vf(FILE *out, const struct vfp_vf *vf);
