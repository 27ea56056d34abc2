/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resizing a PF (sriov_numvfs) through the ledger's planner: never under an allocation. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"

int agent_set_numvfs(struct agent *a, const char *pf, int numvfs, bool dry_run,
		     struct vfp_numvfs_plan **ret_plan, char *err, size_t err_size);
void agent_apply_desired_numvfs(struct agent *a);
int agent_persist_numvfs(struct agent *a, const char *pf, int numvfs, char *err, size_t err_size);
int agent_forget_numvfs(struct agent *a, const char *pf, char *err, size_t err_size);
/* the config's VF counts applied at start and after each reload (agent/rooms.c) */
extern const struct agent_room numvfs_room;
