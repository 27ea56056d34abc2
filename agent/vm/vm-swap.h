/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The domain's side of a VF hot-swap, a step at a time (agent/swap.c keeps
 * the steps in the ledger): a new VF prepared as the old one, the old one out
 * of the guest alone (the failover pair's standby stays and carries the
 * traffic), the new one in. Only a failover NIC's VF swaps: without a standby
 * the guest would have no network meanwhile.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"

int vm_swap_prepare(struct agent *a, const char *old, const struct vfp_allocation_vf *new_vf,
		    char *err, size_t err_size);
int vm_swap_unplug(struct agent *a, const char *pci, char *err, size_t err_size);
int vm_swap_plug(struct agent *a, const char *pci, char *err, size_t err_size);
int vm_swap_in_domain(struct agent *a, const char *pci);
int vm_swap_forget_domain(struct agent *a, const char *pci);
bool vm_swap_possible(struct agent *a, const char *pci, char *why, size_t why_size);
int vm_swap_keep_standby(struct agent *a, const char *pci);
int vm_swap_steer(struct agent *a, const char *pci);
void vm_swap_settled(struct agent *a, const char *pci, bool unsteer);
int vm_swap_standby_sent(struct agent *a, const char *pci, uint64_t *ret_packets);
