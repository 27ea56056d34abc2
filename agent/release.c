/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/container/container.h"
#include "agent/vm/libvirt.h"
#include "agent/vm/vm.h"
#include "agent/events.h"
#include "agent/release.h"

/**
 * agent_detach_all() - every VF of @alloc back to the host, from a domain or a namespace
 *
 * Each VF goes back the way its restore point says it went; every VF is
 * tried, and the first error is returned.
 */
int agent_detach_all(struct agent *a, json_t *alloc, char *err, size_t err_size)
{
	size_t i;
	json_t *vf;
	int r = 0;

	json_array_foreach(json_object_get(alloc, "vfs"), i, vf) {
		const char *pci = json_string_value(json_object_get(vf, "pci"));
		char msg[512];
		int rr = vm_is_vm_vf(a, vf) ? vm_restore_vf(a, vf, msg, sizeof(msg))
					    : container_restore_vf(a, vf, -1, msg, sizeof(msg));

		if (msg[0])
			log_warning("VF %s: %s", pci, msg);
		if (rr < 0 && r == 0) {
			r = rr;
			snprintf(err, err_size, "VF %s: %s", pci, msg[0] ? msg : strerror(-rr));
		}
	}
	return r;
}

/**
 * agent_release_allocation() - restore and free the VFs of allocation @id
 *
 * The release is an intent: written before the VFs are restored, confirmed
 * after; a restore that fails leaves the VFs quarantined (the release
 * itself succeeds, and the log says why). -ENOENT for an unknown or
 * already released allocation: a stale release changes nothing.
 */
int agent_release_allocation(struct agent *a, const char *id, char *err, size_t err_size)
{
	char why[256] = "";
	json_t *alloc;
	int r, restored = 0;

	pthread_mutex_lock(&a->ledger_lock);
	alloc = vfp_ledger_get_allocation(a->ledger, id);
	if (!alloc)
		r = -ENOENT, snprintf(err, err_size, "no allocation %s", id);
	else if (strcmp(json_string_value(json_object_get(alloc, "state")), "released") == 0)
		r = -ENOENT, snprintf(err, err_size, "allocation %s was released already", id);
	else if ((r = vfp_ledger_begin(a->ledger, id, VFP_OP_RELEASE)) < 0)
		snprintf(err, err_size, "%s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	if (r >= 0 && strcmp(json_string_value(json_object_get(alloc, "state")), "attached") == 0)
		restored = agent_detach_all(a, alloc, why, sizeof(why));
	if (r >= 0) {
		pthread_mutex_lock(&a->ledger_lock);
		r = vfp_ledger_confirm(a->ledger, id, VFP_OP_RELEASE, restored >= 0,
				       restored < 0 ? why : NULL);
		if (r < 0)
			snprintf(err, err_size, "%s", vfp_ledger_get_error(a->ledger));
		pthread_mutex_unlock(&a->ledger_lock);
		if (restored < 0)
			log_error("allocation %s: restore failed, VFs quarantined: %s", id, why);
	}
	json_decref(alloc);
	if (r < 0)
		return r;
	log_info("allocation %s: released", id);
	events_emit(a->events, "allocation", json_pack("{s:s, s:s}", "id", id, "state", "released"));
	return 0;
}

/* Whether @alloc's owner is gone, asking only about the kinds in @owners. */
static const char *owner_gone(struct agent *a, json_t *alloc, unsigned owners)
{
	if (owners & SWEEP_NETNS && container_netns_alive(a, alloc) == 0)
		return "its network namespace is gone";
	if (owners & SWEEP_DOMAINS && vm_domain_alive(a, alloc) == 0)
		return "its domain is gone";
	return NULL;
}

/**
 * agent_sweep_dead_owners() - release attached allocations whose owner is gone
 *
 * The lease of a container allocation is its namespace: once the name it
 * was attached under no longer leads to the same namespace (inode), the
 * container is gone. The lease of a VM allocation is its domain, by UUID:
 * undefined, or a transient domain stopped. Their VFs come back. @owners
 * says which to ask about (a link event says nothing of domains, a libvirt
 * event nothing of namespaces). Returns how many were released.
 */
unsigned agent_sweep_dead_owners(struct agent *a, unsigned owners)
{
	json_t *list, *alloc;
	unsigned n = 0;
	size_t i;

	pthread_mutex_lock(&a->ledger_lock);
	list = vfp_ledger_list_allocations(a->ledger, NULL, false);
	pthread_mutex_unlock(&a->ledger_lock);
	json_array_foreach(list, i, alloc) {
		const char *id = json_string_value(json_object_get(alloc, "id"));
		const char *why;
		char err[256];

		if (strcmp(json_string_value(json_object_get(alloc, "state")), "attached") != 0 ||
		    !(why = owner_gone(a, alloc, owners)))
			continue;
		log_info("allocation %s: %s: releasing", id, why);
		if (agent_release_allocation(a, id, err, sizeof(err)) >= 0)
			n++;
		else
			log_error("allocation %s: release after its owner went: %s", id, err);
	}
	json_decref(list);
	return n;
}
