/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/vfctl/vfctl.h"

#define VFCTL_MAX_SOURCES 64

/* `vfctl partitions write`'s options. */
struct vfctl_partitions {
	const char *file;	/* OpenSM's partitions.conf */
	const char *opensm_pid; /* a file with OpenSM's pid, to signal; NULL: none */
	bool follow;
	struct vfctl_http sources[VFCTL_MAX_SOURCES]; /* the agents, as --socket/--url named them */
	size_t n_sources;
};

int vfctl_partitions_write(const struct vfctl_partitions *o);
