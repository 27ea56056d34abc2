/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Link events in the host's network namespace (RTNLGRP_LINK): when a
 * container's namespace dies, the kernel returns its real VF netdevs to the
 * host (RTM_NEWLINK) or destroys virtual ones with their host-side peers
 * (RTM_DELLINK). Either is the agent's cue to look for dead namespaces.
 */
#pragma once

struct link_watch;

int link_watch_new(struct link_watch **ret, int *ret_fd);
void link_watch_free(struct link_watch *w);
int link_watch_drain(struct link_watch *w);
