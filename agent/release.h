/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Giving an allocation's VFs back: on request, or when its owner is gone. */
#pragma once

#include <stddef.h>

#include "agent.h"

int agent_release_allocation(struct agent *a, const char *id, char *err, size_t err_size);
unsigned agent_sweep_dead_netns(struct agent *a);
