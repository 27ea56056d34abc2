/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* For tests: agent_update_settings()'s second half, run on a snapshot the test makes stale. */
#pragma once

#include <stddef.h>

#include "agent/agent.h"

int settings_update_vfs(struct agent *a, const struct vfp_allocation *alloc,
			const struct vfp_settings *delta, const struct vfp_settings *old,
			char *err, size_t err_size);
