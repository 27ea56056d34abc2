/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Giving an allocation's VFs back: on request, or when its owner is gone. */
#pragma once

#include <stddef.h>

#include "agent/agent.h"

int agent_release_allocation(struct agent *a, const char *id, char *err, size_t err_size);
enum { SWEEP_NETNS = 1 << 0, SWEEP_DOMAINS = 1 << 1, SWEEP_ALL = SWEEP_NETNS | SWEEP_DOMAINS };

unsigned agent_sweep_dead_owners(struct agent *a, unsigned owners);
void agent_prune_ledger(struct agent *a);
