/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resetting a VF between tenants and checking it came back healthy (vf-reset.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"

int agent_vf_reset(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
		   const char *tenant_mac, char *why, size_t size);
struct vfp_restore_point **agent_load_restore_points(struct agent *a,
						     const struct vfp_allocation *alloc);
void agent_free_restore_points(struct vfp_restore_point **rps, size_t n);
int agent_reset_vfs(struct agent *a, const struct vfp_allocation *alloc,
		    struct vfp_restore_point **rps, bool quarantine_failed, char *why, size_t size);
int agent_repair_vf(struct agent *a, const char *pci, char *err, size_t err_size);
void agent_retry_repairs(struct agent *a);
void agent_quarantine_vf(struct agent *a, const char *pci, const char *reason);
void agent_finish_detaches(struct agent *a);
/* reconcile's quarantine of a VF it could not undo, and its reset of an interrupted release */
extern const struct agent_room vf_reset_room;
