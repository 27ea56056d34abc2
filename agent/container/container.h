/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF into a container's network namespace and back: its settings on the
 * PF, its netdev (name, MAC, MTU, addresses, route, up) and, in exclusive
 * RDMA netns mode, its RDMA device. The restore point goes into the ledger
 * before anything changes; a failure undoes the steps already taken.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "agent/agent.h"
#include "agent/log.h"

struct container_target {
	const char *netns; /* as the request named it */
	int fd;
	ino_t inode;
	unsigned long long cookie; /* 0: the kernel has none (before 5.14) */
	const char *const *addresses; /* for the first VF */
	size_t n_addresses;
	const char *gateway;
	unsigned mtu;
	bool userspace; /* the VF stays on its userspace driver: PF side and lease only */
};

/* How the undo of a failed attach went: @failed, the VF is not known to be home (@why). */
struct container_undo {
	bool failed;
	char why[AGENT_ERR_SIZE];
};

int container_attach_vf(struct agent *a, const struct vfp_allocation *alloc, size_t i,
			const struct container_target *t, const char *ifname,
			struct container_undo *undone, char *err, size_t err_size);
int container_restore_vf(struct agent *a, const struct vfp_allocation_vf *vf, int netns_fd,
			 char *err, size_t err_size);
int container_netns_alive(struct agent *a, const struct vfp_allocation *alloc);
int container_is_attached(struct agent *a, const struct vfp_allocation *alloc);
extern const struct agent_attach_path container_attach_path;
