/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CNI attachments: the operations the CNI plugin asks for, on the same
 * claims, attaches and releases as the REST API's. An attachment is the
 * allocation whose idempotency key is "cni:NETWORK/CONTAINERID/IFNAME"
 * (what the CNI spec says identifies one), so a repeated ADD or DEL finds it.
 */
#pragma once

#include <stddef.h>

#include "agent/agent.h"
#include "agent/attach.h"

int agent_cni_add(struct agent *a, const struct vfp_claim *c, const struct agent_netns_request *q,
		  struct vfp_allocation **ret, char *err, size_t err_size);
int agent_cni_attached(struct agent *a, const char *key, const struct vfp_owner *owner,
		       struct vfp_allocation **ret, char *err, size_t err_size);
int agent_cni_del(struct agent *a, const char *key, char *err, size_t err_size);
int agent_cni_check(struct agent *a, const char *key, const struct vfp_owner *owner,
		    const char *ifname, char *err, size_t err_size);
int agent_cni_gc(struct agent *a, const char *prefix, const char *const *keep, size_t n_keep,
		 unsigned *ret_released, char *err, size_t err_size);
int agent_cni_free_vfs(struct agent *a, const char *pool, unsigned *ret_free);
