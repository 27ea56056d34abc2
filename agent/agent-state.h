/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's state (struct agent) and what the rooms hand it, the types
 * alone: agent.h has its functions. A file the agent calls that keeps a
 * part of the state (ledger.c) includes this and not agent.h, so that the
 * agent's includes go one way. Locks: state_lock (read for a request, write
 * for a rescan or reload) guards config and inventory; the ledger and its
 * lock are agent/ledger.c's. Take state_lock before the ledger.
 */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "libvfpool/libvfpool.h"

struct agent;
struct agent_ledger;
struct claim_queue;
struct libvirt_conn;
struct events;
struct metrics;
struct agent_give_backs;

#define AGENT_MAX_LISTEN 4

struct agent_options {
	const char *config_path;
	const char *state_dir;
	const char *sysfs_root;
	const char *simulate_dir;
	const char *config_json; /* the config when no config_path names one (a simulated host's) */
	/* answers a detach instead of libvirt when it returns 1 (a simulated host's guests) */
	int (*libvirt_detach_handler)(void *userdata, const char *uuid, const char *xml);
	void *libvirt_detach_userdata;
	const char *listen[AGENT_MAX_LISTEN];
	int n_listen;
	const char *token_file;
	const char *socket_group;
	const char *cni_socket; /* NULL: the first unix listener's, with -cni.sock; "none" */
	bool once;
};

/*
 * How an attach path (vm/, container/) answers reconcile for the VFs it
 * owns: the rooms hand theirs to the agent (agent_add_attach_path()), the
 * agent does not call down into them. The first whose owns() says yes
 * answers; owns NULL takes every VF (the last one added).
 */
struct agent_attach_path {
	bool (*owns)(struct agent *a, const struct vfp_allocation_vf *vf);
	int (*is_attached)(struct agent *a, const struct vfp_allocation *alloc);
	int (*restore_vf)(struct agent *a, const struct vfp_allocation_vf *vf, char *err,
			  size_t err_size);
};

#define AGENT_MAX_ATTACH_PATHS 4

/*
 * What a room does at the agent's own steps, handed in before agent_init()
 * as the attach paths are (agent_add_room(); agent/rooms.c hands vfagentd's
 * in): agent.c calls every room's step that is set, in the order added, and
 * no room by name.
 */
struct agent_room {
	/* the config in place: at start (the ledger open, before reconcile), after a reload */
	void (*config_applied)(struct agent *a);
	/* reconcile: a VF a crash left half done did not come back; out of use with @reason */
	void (*vf_lost)(struct agent *a, const char *pci, const char *reason);
	/* reconcile: a release a crash interrupted, its VFs restored; how many failed (@why) */
	int (*released)(struct agent *a, const struct vfp_allocation *alloc, char *why,
			size_t size);
	/* the agent stops (agent_fini(), the ledger still open): what the room keeps in it freed */
	void (*fini)(struct agent *a);
};

#define AGENT_MAX_ROOMS 4

/* When a quarantined VF is repaired again, and how long it waited last (main loop only). */
struct agent_repair_wait {
	char pci[VFP_PCI_ADDR_LEN + 1];
	long long next, wait;
};

struct agent {
	struct agent_options opt;
	struct vfp_ctx *ctx;
	pthread_rwlock_t state_lock;
	struct vfp_config *config;
	pthread_mutex_t config_lock; /* a config loaded and put in place, one at a time */
	struct vfp_inventory *inv;
	struct agent_ledger *ledger; /* agent/ledger.c's alone */
	struct claim_queue *claims;
	struct events *events;
	struct metrics *metrics;
	struct libvirt_conn *libvirt;
	struct hold_watch *holds; /* set before the servers start, NULL without one */
	char *token; /* bearer token for TCP listeners; never logged */
	char socket_path[108]; /* the unix socket served on, for the host checks; "" if none */
	double scan_seconds;
	/* VF resets and repairs, by result (atomic counters, for /metrics) */
	unsigned long resets[2], repairs[2]; /* [0] failed, [1] ok */
	/* looks at an owner that failed (EMFILE…) and kept its allocation (atomic, /metrics) */
	unsigned long lease_errors;
	const struct agent_attach_path *attach_paths[AGENT_MAX_ATTACH_PATHS];
	size_t n_attach_paths;
	const struct agent_room *rooms[AGENT_MAX_ROOMS];
	size_t n_rooms;
	struct agent_repair_wait *repair_waits;
	size_t n_repair_waits, cap_repair_waits;
	struct agent_give_backs *give_backs; /* agent/give-back.c's, freed by its room's fini */
};
