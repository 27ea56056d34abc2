/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/events.h"
#include "agent/numvfs.h"

/**
 * agent_set_numvfs() - PF @pf to @numvfs VFs, or (@dry_run) only the plan
 * @ret_plan: the plan (vfp_numvfs_plan_free() it), also when refused
 *
 * -EBUSY when allocations are in the way: the plan names them. The new
 * inventory replaces the old one at once, and an event carries the plan.
 */
int agent_set_numvfs(struct agent *a, const char *pf, int numvfs, bool dry_run,
		     struct vfp_numvfs_plan **ret_plan, char *err, size_t err_size)
{
	struct vfp_inventory *inv = NULL;
	int r;

	*ret_plan = NULL;
	pthread_rwlock_wrlock(&a->state_lock);
	pthread_mutex_lock(&a->ledger_lock);
	if (dry_run)
		r = vfp_numvfs_plan(a->ledger, a->inv, pf, numvfs, ret_plan);
	else
		r = vfp_numvfs_apply(a->ledger, a->config, a->inv, pf, numvfs, ret_plan, &inv);
	if (inv)
		agent_replace_inventory(a, inv);
	if (r < 0)
		snprintf(err, err_size, "%s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	pthread_rwlock_unlock(&a->state_lock);
	if (r >= 0 && !dry_run)
		events_emit_numvfs(a->events, *ret_plan);
	return r;
}

static void log_plan(const struct vfp_numvfs_plan *p)
{
	if (p->allowed)
		log_info("numvfs: PF %s %d -> %d VFs, as the config says", p->pf, p->from, p->to);
	else
		log_warning("numvfs: PF %s stays at %d VFs, the config wants %d: %s", p->pf, p->from,
			    p->to, p->reason);
}

/**
 * agent_apply_desired_numvfs() - give every PF the VF count its config
 * wants (the "numvfs" rules), through the planner: a PF whose VFs are held
 * stays as it is, and says so. At start (before reconcile) and on SIGHUP.
 */
void agent_apply_desired_numvfs(struct agent *a)
{
	struct vfp_numvfs_plan **plans = NULL;
	struct vfp_inventory *inv = NULL;
	int n;

	pthread_rwlock_wrlock(&a->state_lock);
	pthread_mutex_lock(&a->ledger_lock);
	n = vfp_numvfs_apply_config(a->ledger, a->config, a->inv, &plans, &inv);
	if (inv)
		agent_replace_inventory(a, inv);
	if (n < 0)
		log_error("numvfs: applying the config: %s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	pthread_rwlock_unlock(&a->state_lock);
	for (size_t i = 0; plans && plans[i]; i++) {
		log_plan(plans[i]);
		if (a->events && plans[i]->allowed)
			events_emit_numvfs(a->events, plans[i]);
		vfp_numvfs_plan_free(plans[i]);
	}
	free(plans);
}

/**
 * agent_persist_numvfs() - write "PF @pf has @numvfs VFs" into the config
 * file, so the count comes back after a reboot, and run on the new config
 *
 * -EINVAL when there is no file to write (the simulated host's built-in
 * config) or the result would not be a valid config; -errno of the write.
 */
int agent_persist_numvfs(struct agent *a, const char *pf, int numvfs, char *err, size_t err_size)
{
	const char *path = agent_config_path(a);
	struct vfp_config *c = NULL;
	char *error = NULL;
	int r;

	if (!path) {
		snprintf(err, err_size, "persist: the agent runs on the simulated host's built-in "
			 "config; start it with --config FILE to keep VF counts");
		return -EINVAL;
	}
	r = vfp_config_persist_numvfs(path, pf, numvfs, &c, &error);
	if (r < 0) {
		snprintf(err, err_size, "persist: %s", error ? error : strerror(-r));
		free(error);
		return r;
	}
	log_info("numvfs: PF %s keeps %d VFs across reboots (%s)", pf, numvfs, path);
	return agent_replace_config(a, c);
}
