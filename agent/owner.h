/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Owners held to what exists: a container owner's namespace must be there
 * when it claims (its inode is kept, so that a name reused later is another
 * owner), and VFs go only into their owner's namespace or domain.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "libvfpool/libvfpool.h"

int owner_resolve(struct vfp_owner *o, char *err, size_t err_size);
int owner_check_netns(const struct vfp_owner *o, ino_t target, unsigned long long target_cookie,
		      const char *spec, char *err, size_t err_size);
int owner_check_domain(const struct vfp_owner *o, const char *name, const char *uuid, char *err,
		       size_t err_size);
int owner_exists(const struct vfp_owner *o);
bool owner_is_domain(const struct vfp_owner *o, const char *uuid);
