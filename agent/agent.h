/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's functions: its start, state and config (agent.c). The state
 * itself, struct agent, and what the rooms hand it are in agent-state.h.
 */
#pragma once

#include "agent/agent-state.h"
#include "agent/ledger.h"
#include "agent/log.h"
#include "libvfpool/libvfpool.h"

int agent_add_attach_path(struct agent *a, const struct agent_attach_path *p);
int agent_add_room(struct agent *a, const struct agent_room *r);
int agent_init(struct agent *a);
void agent_fini(struct agent *a);
int agent_rescan(struct agent *a, const char *why);
int agent_refresh_vf(struct agent *a, const char *pci, const char *why);
void agent_resync_health(struct agent *a);
int agent_reload_config(struct agent *a);
int agent_replace_config(struct agent *a, struct vfp_config *c);
int agent_load_config(const struct agent *a, struct vfp_config **ret);
int agent_add_persisted_numvfs(struct agent *a, struct vfp_config *c);
const char *agent_config_path(const struct agent *a);

struct vfp_inventory *agent_get_inventory(struct agent *a);
struct vfp_config *agent_get_config(struct agent *a);
void agent_replace_inventory(struct agent *a, struct vfp_inventory *inv);
