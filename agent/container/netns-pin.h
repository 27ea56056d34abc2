/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A reservation's namespace held open while the agent lives, where the
 * kernel gives namespaces no cookie (before Linux 5.14): a namespace the
 * agent holds is not freed, so its inode cannot be given to another one
 * made under its name, and name + inode stay a proof that it is the one
 * claimed for. Held from the claim to the attach (a namespace that dies
 * must give its VFs back to the host, so an attached one is not held) or
 * the release.
 */
#pragma once

#include <stddef.h>

#include "libvfpool/libvfpool.h"

void netns_pin(const char *id, const struct vfp_owner *o);
void netns_unpin(const char *id);
void netns_pins_keep_only(const char *const *ids, size_t n);
size_t netns_pins_count(void);
