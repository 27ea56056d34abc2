/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The steering a swap leaves behind once its new VF is in the guest: the
 * guest's MAC stays in its standby's PFs' filters for libvirt.steer_hold
 * seconds, and a thread of its own takes it out (agent_swap_unhold(), which
 * agent/swap.c hands it: this file calls no room by name), so
 * that the swap's request does not wait. The swap's ledger row stays until
 * then: a crash or a stop in between leaves it to the next start.
 */
#pragma once

#include <stdbool.h>

#include "agent/agent.h"

typedef void (*swap_hold_fn)(struct agent *a, const char *id);

void swap_hold_start(struct agent *a, const char *id, int ms, swap_hold_fn end);
void swap_hold_end(struct agent *a, const char *id);
void swap_hold_stop(void);
