/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "container.h"
#include "events.h"
#include "release.h"

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
		restored = container_detach_all(a, alloc, why, sizeof(why));
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

/**
 * agent_sweep_dead_netns() - release attached allocations whose namespace is gone
 *
 * The lease of a container allocation is its namespace: once the name it
 * was attached under no longer leads to the same namespace (inode), the
 * container is gone and its VFs come back. Returns how many were released.
 */
unsigned agent_sweep_dead_netns(struct agent *a)
{
	json_t *list, *alloc;
	unsigned n = 0;
	size_t i;

	pthread_mutex_lock(&a->ledger_lock);
	list = vfp_ledger_list_allocations(a->ledger, NULL, false);
	pthread_mutex_unlock(&a->ledger_lock);
	json_array_foreach(list, i, alloc) {
		const char *id = json_string_value(json_object_get(alloc, "id"));
		char err[256];

		if (strcmp(json_string_value(json_object_get(alloc, "state")), "attached") != 0 ||
		    container_netns_alive(a, alloc) != 0)
			continue;
		log_info("allocation %s: its network namespace is gone: releasing", id);
		if (agent_release_allocation(a, id, err, sizeof(err)) >= 0)
			n++;
		else
			log_error("allocation %s: release after its namespace died: %s", id, err);
	}
	json_decref(list);
	return n;
}
