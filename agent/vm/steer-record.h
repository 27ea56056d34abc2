/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The steering a VF's restore point records (steered_xml): a live
 * migration's source while its VF leaves, a VF plugged beside the standby
 * its guest came with until it carries the traffic. See steer-record.c.
 */
#pragma once

#include <stdbool.h>

#include "agent/agent.h"

int steer_kept_begin(struct agent *a, const char *pci, struct vfp_restore_point *rp);
void steer_kept_end(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
		    bool left);
void steer_plug_begin(struct agent *a, const char *pci, struct vfp_restore_point *rp,
		      const char *standby);
void steer_plug_undo(struct agent *a, const char *pci, struct vfp_restore_point *rp);
bool vm_plug_steered(struct agent *a, const char *pci);
void vm_plug_settled(struct agent *a, const char *pci);
