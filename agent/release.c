/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/container/container.h"
#include "agent/container/netns-pin.h"
#include "agent/log.h"
#include "agent/vm/libvirt.h"
#include "agent/vm/vm.h"
#include "agent/attach.h"
#include "agent/events.h"
#include "agent/hold-look.h"
#include "agent/hold-watch.h"
#include "agent/owner.h"
#include "agent/release.h"
#include "agent/swap-hold.h"
#include "agent/vf-reset.h"

/* Releases between two prunes: churn keeps the ledger bounded, a prune stays cheap. */
#define PRUNE_EVERY 64

/**
 * agent_prune_ledger() - forget released allocations and audit rows past
 * the config's retention
 */
void agent_prune_ledger(struct agent *a)
{
	struct vfp_config *config = agent_get_config(a); /* the config's lock comes first */
	struct vfp_retention keep;
	char err[AGENT_ERR_SIZE];
	unsigned n = 0;

	vfp_config_get_retention(config, &keep);
	vfp_config_unref(config);
	if (ledger_prune(a, &keep, &n, err, sizeof(err)) < 0)
		log_error("prune: %s", err);
	else if (n)
		log_info("prune: %u released allocations forgotten", n);
}

/* The release's intent: durable when the owner's VFs outlive a power cut (a VM's config). */
static int release_begin(struct vfp_ledger *l, const struct vfp_allocation *alloc)
{
	const char *id = vfp_allocation_get_id(alloc);

	return vfp_owner_outlives_power_cut(vfp_allocation_get_owner(alloc))
		       ? vfp_ledger_begin(l, id, VFP_OP_RELEASE)
		       : vfp_ledger_begin_volatile(l, id, VFP_OP_RELEASE);
}

/*
 * Under one guard: earlier operations' ends first (the state is now's),
 * the allocation as it is, and the release's intent. -ENOENT for one
 * unknown or released already.
 */
static int release_start(struct agent *a, const char *id, struct vfp_allocation **ret,
			 char *err, size_t err_size)
{
	LEDGER_GUARD(g, a);
	int r = agent_ledger_ready(&g, err, err_size);

	if (r >= 0 && (r = vfp_ledger_get_allocation(g.l, id, ret)) < 0)
		snprintf(err, err_size, "%s", vfp_ledger_get_error(g.l));
	else if (r >= 0 && vfp_allocation_get_state(*ret) == VFP_ALLOCATION_RELEASED)
		r = -ENOENT, snprintf(err, err_size, "allocation %s was released already", id);
	else if (r >= 0 && (r = release_begin(g.l, *ret)) < 0)
		snprintf(err, err_size, "%s", vfp_ledger_get_error(g.l));
	return r;
}

/* The release's end; one the ledger cannot take now is kept for later, and said. */
static int release_end(struct agent *a, const char *id, bool ok, const char *why, char *err,
		       size_t err_size)
{
	LEDGER_GUARD(g, a);
	int r = vfp_ledger_confirm(g.l, id, VFP_OP_RELEASE, ok, ok ? NULL : why);

	if (r < 0) { /* the VFs stay releasing, out of every claim's reach, until it is */
		snprintf(err, err_size, "the release is done, but the ledger cannot record it "
			 "yet: %s", vfp_ledger_get_error(g.l));
		log_error("allocation %s: %s", id, err);
		agent_intent_defer_guarded(&g, id, VFP_OP_RELEASE, ok, why);
	}
	return r;
}

/**
 * agent_release_allocation() - restore and free the VFs of allocation @id
 *
 * The release is an intent: written before the VFs are restored (and reset,
 * as their pool says), confirmed after; a restore that fails leaves the VFs
 * quarantined, a reset that fails its VF (the release itself succeeds, and
 * the log says why). 1 (and @err says which) when a VF's guest has not let
 * go of it: the allocation is released, that VF stays in its domain,
 * quarantined and untouched, until agent_finish_detaches() or a repair
 * sees it gone. -ENOENT for an unknown or
 * already released allocation: a stale release changes nothing.
 */
int agent_release_allocation(struct agent *a, const char *id, char *err, size_t err_size)
{
	struct vfp_allocation *alloc = NULL;
	struct vfp_restore_point **rps = NULL;
	char why[AGENT_ERR_SIZE] = "", reset_why[AGENT_ERR_SIZE] = "";
	int r, restored = 0;

	swap_hold_end(a, id); /* a swap's steering left: its row would make the release busy */
	r = release_start(a, id, &alloc, err, err_size);
	if (r >= 0)
		rps = agent_load_restore_points(a, alloc);
	if (r >= 0 && vfp_allocation_get_state(alloc) == VFP_ALLOCATION_ATTACHED)
		restored = agent_detach_all(a, alloc, rps, why, sizeof(why)); /* loaded once */
	/* restored: each VF reset and checked before it is free; one that fails stays out */
	if (r >= 0 && restored >= 0)
		agent_reset_vfs(a, alloc, rps, true, reset_why, sizeof(reset_why));
	if (alloc)
		agent_free_restore_points(rps, vfp_allocation_get_vf_count(alloc));
	if (r >= 0) {
		r = release_end(a, id, restored >= 0, why, err, err_size);
		if (r >= 0 && ledger_count_release(a, PRUNE_EVERY))
			agent_prune_ledger(a);
		if (restored < 0)
			log_error("allocation %s: restore failed, VFs quarantined: %s", id, why);
	}
	vfp_allocation_unref(alloc);
	if (r >= 0 || r == -ENOENT)
		netns_unpin(id);
	if (r < 0)
		return r;
	log_info("allocation %s: released", id);
	events_emit_allocation(a->events, id, VFP_ALLOCATION_RELEASED);
	if (restored != -ETIMEDOUT)
		return 0;
	snprintf(err, err_size, "allocation %s released; %s", id, why);
	return 1;
}

/*
 * A look at an owner failed with @r, which is not its absence (EMFILE,
 * ENOMEM, EACCES…): the allocation is kept, and the failure logged and
 * counted (vfagent_lease_check_errors_total).
 */
static void look_failed(struct agent *a, const struct vfp_allocation *alloc, const char *what,
			int r)
{
	__atomic_add_fetch(&a->lease_errors, 1, __ATOMIC_RELAXED);
	log_warning("allocation %s: looking for its %s failed: %s: kept", vfp_allocation_get_id(alloc),
		    what, strerror(-r));
}

/*
 * A reserved allocation's owner does not exist (a VM's domain: by UUID, else
 * by name), nor, for one held while a file exists, that file (a restore that
 * deleted the checkpoint but could not plug a VF back has a running domain:
 * the VF stays booked for it). Only ENOENT is absence.
 */
static bool reserved_orphan(struct agent *a, const struct vfp_allocation *alloc)
{
	const struct vfp_owner *o = vfp_allocation_get_owner(alloc);
	const char *hold = vfp_allocation_get_hold_path(alloc);
	struct libvirt_domain d;
	char ignored[AGENT_ERR_SIZE];
	int r;

	if (hold) { /* held while the file exists, and while its owner does, as any */
		r = hold_look(hold); /* off this thread: a path that hangs keeps only its hold */
		if (r < 0 && r != -ENOENT)
			look_failed(a, alloc, "hold file", r);
		if (r != -ENOENT)
			return false;
	}
	if (o->kind == VFP_OWNER_CONTAINER) {
		r = owner_exists(o);
		if (r < 0)
			look_failed(a, alloc, "owner's network namespace", r);
		return r == 0;
	}
	if (!libvirt_conn_is_connected(a->libvirt))
		return false; /* unknown */
	return libvirt_lookup(a->libvirt, o->uuid ? o->uuid : o->name, &d, ignored,
			      sizeof(ignored)) == -ENOENT;
}

/* An attached allocation whose domain ended while its hold file exists: kept, reserved. */
static const char domain_ended_held[] = "its domain ended; held while its file exists";

/* Whether @alloc is held on a file that exists (a look that fails counts as there). */
static bool hold_file_exists(struct agent *a, const struct vfp_allocation *alloc)
{
	const char *hold = vfp_allocation_get_hold_path(alloc);
	int r;

	if (!hold)
		return false;
	r = hold_look(hold); /* off this thread, as reserved_orphan()'s */
	if (r < 0 && r != -ENOENT)
		look_failed(a, alloc, "hold file", r);
	return r != -ENOENT;
}

/*
 * Whether @alloc's owner is gone, asking only about the kinds in @owners.
 * An attached allocation's owner is where its VFs went; a reserved one's
 * is its owner as claimed, and it outlives a missing owner by the config's
 * orphan lease (a deployment is claimed for before its domain exists).
 * Only absence is gone: a look that fails keeps the allocation.
 */
static const char *owner_gone(struct agent *a, const struct vfp_allocation *alloc,
			      unsigned owners, long long orphan_seconds)
{
	enum vfp_allocation_state state = vfp_allocation_get_state(alloc);
	int r;

	/* a held reservation's lease is its file: no orphan lease once it is gone */
	if (state == VFP_ALLOCATION_RESERVED)
		return owners == SWEEP_ALL &&
				       (vfp_allocation_get_hold_path(alloc) ||
					time(NULL) - vfp_allocation_get_updated(alloc) >= orphan_seconds) &&
				       reserved_orphan(a, alloc)
			       ? (vfp_allocation_get_hold_path(alloc)
					  ? "reserved, held while a file existed, and both it and its owner are gone"
					  : "reserved, and its owner does not exist")
			       : NULL;
	if (state != VFP_ALLOCATION_ATTACHED)
		return NULL;
	if (owners & SWEEP_NETNS) {
		r = container_netns_alive(a, alloc);
		if (r == 0)
			return "its network namespace is gone";
		if (r < 0 && r != -ENXIO)
			look_failed(a, alloc, "network namespace", r);
	}
	if (owners & SWEEP_DOMAINS && vm_domain_alive(a, alloc) == 0)
		return hold_file_exists(a, alloc) ? domain_ended_held : "its domain is gone";
	return NULL;
}

/*
 * The VFs of @alloc, whose domain ended (a guest powered off, or a
 * poweroff), back to the host; it stays reserved for its owner, held while
 * its file exists (OpenNebula keeps a powered-off VM's devices booked).
 */
static void keep_held(struct agent *a, const struct vfp_allocation *alloc)
{
	const char *id = vfp_allocation_get_id(alloc);
	const char *hold = vfp_allocation_get_hold_path(alloc);
	char err[AGENT_ERR_SIZE];

	log_info("allocation %s: its domain ended: kept for its owner while %s exists", id, hold);
	if (agent_detach(a, id, hold, false, err, sizeof(err)) < 0)
		log_error("allocation %s: keeping it after its domain ended: %s", id, err);
}

/*
 * The namespaces of the live reservations held, and only those (netns-pin.h):
 * the ones a start finds, or a claim held while an attach or a release let go.
 */
static void pin_reservations(struct vfp_allocation **list, size_t count)
{
	const char **ids = calloc(count ? count : 1, sizeof(*ids));
	size_t n = 0;

	if (!ids)
		return;
	for (size_t i = 0; i < count; i++) {
		const struct vfp_owner *o = vfp_allocation_get_owner(list[i]);

		if (vfp_allocation_get_state(list[i]) != VFP_ALLOCATION_RESERVED ||
		    o->kind != VFP_OWNER_CONTAINER || o->netns_cookie)
			continue;
		ids[n++] = vfp_allocation_get_id(list[i]);
		netns_pin(ids[n - 1], o);
	}
	netns_pins_keep_only(ids, n);
	free(ids);
}

/**
 * agent_sweep_dead_owners() - release attached allocations whose owner is gone
 *
 * The lease of a container allocation is its namespace: once the name it
 * was attached under no longer leads to the same namespace (inode), the
 * container is gone. The lease of a VM allocation is its domain, by UUID:
 * undefined, or a transient domain stopped. Their VFs come back. @owners
 * says which to ask about (a link event says nothing of domains, a libvirt
 * event nothing of namespaces); the full sweep also releases reservations
 * whose owner has not existed for the orphan lease. Returns how many were
 * released.
 */
unsigned agent_sweep_dead_owners(struct agent *a, unsigned owners)
{
	struct vfp_config *config = agent_get_config(a);
	long long orphan_seconds = vfp_config_get_orphan_seconds(config);
	struct vfp_allocation **list = NULL;
	char msg[AGENT_ERR_SIZE];
	unsigned n = 0;
	size_t count = 0;

	vfp_config_unref(config);
	if (ledger_list_allocations(a, NULL, false, &list, &count, msg, sizeof(msg)) < 0)
		log_error("sweep: %s", msg);
	pin_reservations(list, count);
	for (size_t i = 0; i < count; i++) {
		const char *id = vfp_allocation_get_id(list[i]);
		const char *why;
		char err[AGENT_ERR_SIZE];

		if (!(why = owner_gone(a, list[i], owners, orphan_seconds)))
			continue;
		if (why == domain_ended_held) {
			keep_held(a, list[i]);
			continue;
		}
		log_info("allocation %s: %s: releasing", id, why);
		if (agent_release_allocation(a, id, err, sizeof(err)) >= 0)
			n++;
		else
			log_error("allocation %s: release after its owner went: %s", id, err);
	}
	vfp_allocation_list_free(list, count);
	if (n)
		hold_watch_changed(a->holds);
	return n;
}
