/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Claiming VFs: through the group-commit queue, growing the pool once when it ran dry. */
#pragma once

#include <stddef.h>

#include "agent/agent.h"
#include "agent/attach.h"

/* The most claims agent_claim_all_quiet() takes at once (one per SR-IOV NIC of a deployment). */
#define AGENT_MAX_CLAIMS 32

int agent_claim_quiet(struct agent *a, const struct vfp_claim *c, struct vfp_allocation **ret,
		      char *err, size_t err_size);
int agent_claim_all_quiet(struct agent *a, const struct vfp_claim *c, size_t n,
			  struct vfp_allocation **ret, char *err, size_t err_size);
int agent_claim(struct agent *a, const struct vfp_claim *c, struct vfp_allocation **ret,
		char *err, size_t err_size);
int agent_claim_and_attach(struct agent *a, const struct vfp_claim *c,
			   const struct agent_attach_target *t, struct vfp_allocation **ret,
			   char *err, size_t err_size);
