/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hold after a VF is plugged beside the standby its guest came with (a
 * live migration's destination): see plug-hold.c.
 */
#pragma once

#include "agent/agent.h"

void plug_hold_start(struct agent *a, const struct vfp_allocation *alloc);
void plug_hold_reconcile(struct agent *a);
