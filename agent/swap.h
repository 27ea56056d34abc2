/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF hot-swap: a running guest's failover NIC moved to another VF while
 * its standby carries the traffic, every step in the ledger, a crash at any
 * point resolved at the next start (agent/swap.c says how).
 */
#pragma once

#include <stddef.h>

#include "agent/agent.h"

struct agent_swap_request {
	const char *vf; /* the allocation's VF to move; NULL: its only one */
	const char *pf; /* the PF to take the new VF from; NULL: any other than the old VF's */
};

int agent_swap(struct agent *a, const char *id, const struct agent_swap_request *q,
	       char ret_old[VFP_PCI_ADDR_LEN + 1], char ret_new[VFP_PCI_ADDR_LEN + 1], char *err,
	       size_t err_size);
void agent_swap_reconcile(struct agent *a);
void agent_swap_unhold(struct agent *a, const char *id);
