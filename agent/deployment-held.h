/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A deployment file posted again (OpenNebula retries a deploy whose answer
 * it never saw), or a resume of a VM whose domain ended (a poweroff): the
 * allocations its domain UUID already holds, one per NIC (matched by pool
 * and MAC), serve it again instead of a second claim. A file's <uuid> is its
 * own word: it finds another VM's allocations only when libvirt vouches for it.
 */
#pragma once

#include <stddef.h>

#include "agent/agent.h"

bool deployment_is_owner(struct agent *a, const struct vfp_owner *o, const char *name,
			 const char *uuid);
int deployment_held(struct agent *a, const char *name, const char *uuid, const char *const *pools,
		    const char (*macs)[18], const unsigned *counts, size_t n_pools, struct vfp_allocation **ret_allocs,
		    char *err, size_t err_size);
