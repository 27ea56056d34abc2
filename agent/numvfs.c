/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/events.h"
#include "agent/log.h"
#include "agent/numvfs.h"
#include "libvfpool/macro.h"

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
	{
		LEDGER_GUARD(g, a);

		if (dry_run)
			r = vfp_numvfs_plan(g.l, a->inv, pf, numvfs, ret_plan);
		else
			r = vfp_numvfs_apply(g.l, a->config, a->inv, pf, numvfs, ret_plan, &inv);
		if (inv)
			agent_replace_inventory(a, inv);
		if (r < 0)
			snprintf(err, err_size, "%s", vfp_ledger_get_error(g.l));
	}
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
	{
		LEDGER_GUARD(g, a);

		n = vfp_numvfs_apply_config(g.l, a->config, a->inv, &plans, &inv);
		if (inv)
			agent_replace_inventory(a, inv);
		if (n < 0)
			log_error("numvfs: applying the config: %s", vfp_ledger_get_error(g.l));
	}
	pthread_rwlock_unlock(&a->state_lock);
	for (size_t i = 0; plans && plans[i]; i++) {
		log_plan(plans[i]);
		if (a->events && plans[i]->allowed)
			events_emit_numvfs(a->events, plans[i]);
		vfp_numvfs_plan_free(plans[i]);
	}
	free(plans);
}

const struct agent_room numvfs_room = {
	.config_applied = agent_apply_desired_numvfs,
};

/**
 * agent_persist_numvfs() - PF @pf has @numvfs VFs again after a reboot, and
 * the agent runs on its config with that count in it
 *
 * The count is the agent's state: a row of the ledger, beside the rest of
 * it. The operator's config file is read, never written; its rules stay
 * the operator's, and a persisted count comes before them. Persists (and
 * reloads) run one at a time, each on a config read after its own row was
 * written, so none puts back a config without another's count.
 */
int agent_persist_numvfs(struct agent *a, const char *pf, int numvfs, char *err, size_t err_size)
{
	struct vfp_config *c = NULL;
	char msg[AGENT_ERR_SIZE];
	int r;

	pthread_mutex_lock(&a->config_lock);
	r = agent_load_config(a, &c);
	if (r < 0)
		snprintf(err, err_size, "persist: the config does not load (the agent's log says "
			 "why): fix it first");
	if (r >= 0 && (r = ledger_persist_numvfs(a, pf, numvfs, msg, sizeof(msg))) < 0)
		snprintf(err, err_size, "persist: %s", msg);
	if (r >= 0 && (r = agent_add_persisted_numvfs(a, c)) < 0)
		snprintf(err, err_size, "persist: reading the persisted counts back failed");
	if (r >= 0) {
		log_info("numvfs: PF %s keeps %d VFs across reboots (%s)", pf, numvfs,
			 ledger_path(a));
		r = agent_replace_config(a, TAKE_PTR(c));
	}
	vfp_config_unref(c);
	pthread_mutex_unlock(&a->config_lock);
	return r;
}
