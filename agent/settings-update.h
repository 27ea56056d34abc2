/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A live allocation's VF settings changed: the ledger, then each VF in use on its PF. */
#pragma once

#include <stddef.h>

#include "agent/agent.h"

int agent_update_settings(struct agent *a, const char *id, const struct vfp_settings *delta,
			  char *err, size_t err_size);
