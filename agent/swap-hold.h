/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The steering a swap leaves behind once its new VF is in the guest: the
 * guest's MAC stays in its standby's PFs' filters for libvirt.steer_hold
 * seconds at least, and longer while the guest still sends over its standby
 * (its new VF not up yet: looked at every second, for a minute more at
 * most); then a thread of its own takes it out. agent/swap.c hands it both
 * (struct swap_hold_ops: this file calls no room by name), so that the swap's
 * request does not wait. The swap's ledger row stays until then: a crash or
 * a stop in between leaves it to the next start.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/agent.h"

struct swap_hold_ops {
	/* the hold over: the steering out, the swap's row gone */
	void (*end)(struct agent *a, const char *id);
	/* whether the guest sent over its standby since *@mark (a count it updates) */
	bool (*busy)(struct agent *a, const char *id, uint64_t *mark);
};

void swap_hold_start(struct agent *a, const char *id, int ms, const struct swap_hold_ops *ops);
void swap_hold_end(struct agent *a, const char *id);
void swap_hold_stop(void);
