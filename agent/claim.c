/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/claim-queue.h"
#include "agent/attach.h"
#include "agent/give-back.h"
#include "agent/claim.h"
#include "agent/container/netns-pin.h"
#include "agent/events.h"
#include "agent/log.h"
#include "agent/owner.h"
#include "agent/pcie-topo.h"
#include "agent/release.h"
#include "agent/vm/standby-host.h"

/* No free VF: a pool with a "grow" policy resizes an idle PF, once. */
static bool grow_pool(struct agent *a, const char *pool, struct vfp_pool_growth *g)
{
	struct vfp_inventory *inv = NULL;
	int r;

	pthread_rwlock_wrlock(&a->state_lock);
	{
		LEDGER_GUARD(lg, a);

		r = vfp_pool_grow(lg.l, a->config, a->inv, pool, g, &inv);
		if (inv)
			agent_replace_inventory(a, inv);
	}
	pthread_rwlock_unlock(&a->state_lock);
	if (r >= 0)
		log_info("pool %s: PF %s grew from %d to %d VFs", pool, g->pf, g->from, g->to);
	return r >= 0;
}

/*
 * The claim that grew @g's PF failed all the same: the PF goes back to its
 * size, unless a VF it gained has been taken since (the plan says).
 */
static void shrink_back(struct agent *a, const char *pool, const struct vfp_pool_growth *g)
{
	struct vfp_inventory *inv = NULL;
	char err[AGENT_ERR_SIZE] = "";
	int r;

	pthread_rwlock_wrlock(&a->state_lock);
	{
		LEDGER_GUARD(lg, a);

		r = vfp_numvfs_apply(lg.l, a->config, a->inv, g->pf, g->from, NULL, &inv);
		if (inv)
			agent_replace_inventory(a, inv);
		if (r < 0)
			snprintf(err, sizeof(err), "%s", vfp_ledger_get_error(lg.l));
	}
	pthread_rwlock_unlock(&a->state_lock);
	if (r >= 0)
		log_info("pool %s: the claim failed; PF %s back to %d VFs", pool, g->pf, g->from);
	else
		log_warning("pool %s: PF %s stays at %d VFs: %s", pool, g->pf, g->to, err);
}

/* agent_claim() without its event: for claims made on the way to something else. */
int agent_claim_quiet(struct agent *a, const struct vfp_claim *c, struct vfp_allocation **ret,
		      char *err, size_t err_size)
{
	struct vfp_owner owner = *c->owner;
	struct vfp_claim claim = *c;
	struct vfp_pcie_topo *topo = NULL;
	struct vfp_config *config;
	struct vfp_pool_growth g;
	char *msg = NULL;
	int r;

	agent_give_back_deferred(a); /* claims a full disk kept from being given back, first */
	r = owner_resolve(&owner, err, err_size);
	if (r < 0)
		return r;
	claim.owner = &owner;
	c = &claim;
	if (c->near)
		claim.topo = topo = agent_get_pcie_topo(a);
	config = agent_get_config(a);
	r = claim_queue_claim(a->claims, config, c, ret, &msg);
	if (r == -ENOBUFS && grow_pool(a, c->pool, &g)) {
		free(msg);
		msg = NULL;
		if (c->near) { /* the tree changed with the PF's new VFs */
			vfp_pcie_topo_unref(topo);
			claim.topo = topo = agent_get_pcie_topo(a);
		}
		r = claim_queue_claim(a->claims, config, c, ret, &msg);
		if (r < 0)
			shrink_back(a, c->pool, &g);
	}
	vfp_config_unref(config);
	vfp_pcie_topo_unref(topo);
	if (r < 0)
		snprintf(err, err_size, "%s", msg ? msg : "claim failed");
	if (r == 0) /* no cookie (before Linux 5.14): the namespace held, so its inode stays its own */
		netns_pin(vfp_allocation_get_id(*ret), &owner);
	free(msg);
	return r == -ENOBUFS ? -EBUSY : r;
}

/*
 * The claims of @allocs back (a claim of several that did not get them all);
 * one claimed attached ends its attach first, not done.
 */
static void give_back(struct agent *a, struct vfp_allocation **allocs, size_t n)
{
	char err[AGENT_ERR_SIZE];

	for (size_t i = 0; i < n; i++) {
		const char *id = allocs[i] ? vfp_allocation_get_id(allocs[i]) : NULL;

		if (id && vfp_allocation_get_state(allocs[i]) == VFP_ALLOCATION_ATTACHED)
			agent_intent_confirm(a, id, VFP_OP_ATTACH, false, "claim given back");
		if (id)
			agent_give_back(a, id, err, sizeof(err));
		vfp_allocation_unref(allocs[i]);
		allocs[i] = NULL;
	}
}

/* Each of @c with its owner resolved (into @owners), as agent_claim_quiet() does. */
static int resolve_owners(const struct vfp_claim *c, size_t n, struct vfp_claim *claims,
			  struct vfp_owner *owners, char *err, size_t err_size)
{
	for (size_t i = 0; i < n; i++) {
		int r;

		owners[i] = *c[i].owner;
		r = owner_resolve(&owners[i], err, err_size);
		if (r < 0)
			return r;
		claims[i] = c[i];
		claims[i].owner = &owners[i];
	}
	return 0;
}

/**
 * agent_claim_all_quiet() - the @n claims of @c, all or none, in one commit
 * @ret: per claim, its allocation
 *
 * When one fails (a pool short of VFs, say), none is made (one savepoint:
 * claim_queue_claim_many()), what any got is given back, and the claims are
 * made one by one with agent_claim_quiet(), which
 * grows a pool that can grow and names the claim that cannot be met; those
 * do not begin their attach (vfp_claim.attach): the caller sees them reserved.
 */
int agent_claim_all_quiet(struct agent *a, const struct vfp_claim *c, size_t n,
			  struct vfp_allocation **ret, char *err, size_t err_size)
{
	struct vfp_claim claims[AGENT_MAX_CLAIMS];
	struct vfp_owner owners[AGENT_MAX_CLAIMS];
	char *errors[AGENT_MAX_CLAIMS] = { 0 };
	int results[AGENT_MAX_CLAIMS], r = n > AGENT_MAX_CLAIMS ? -E2BIG : 0;
	struct vfp_config *config;
	size_t failed;

	if (r >= 0)
		r = resolve_owners(c, n, claims, owners, err, err_size);
	if (r < 0)
		return r;
	config = agent_get_config(a);
	failed = claim_queue_claim_many(a->claims, config, claims, n, results, ret, errors);
	vfp_config_unref(config);
	for (size_t i = 0; i < n; i++)
		free(errors[i]);
	if (failed == 0)
		return 0;
	give_back(a, ret, n);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		claims[i].attach = false; /* one by one: the caller begins the attaches */
		r = agent_claim_quiet(a, &claims[i], &ret[i], err, err_size);
	}
	if (r < 0)
		give_back(a, ret, n);
	return r;
}

/*
 * A VM's failover standby asked for here must be able to reach its VLAN on
 * this host now (standby_host_check()): the claim is where a live
 * migration's destination says no, before anything moves. -EINVAL naming the
 * field; a standby whose name does not fit the VLAN is the attach's to refuse.
 */
static int standby_here(const struct vfp_claim *c, char *err, size_t err_size)
{
	const struct vfp_settings *s = c->settings;
	char source[64], why[AGENT_ERR_SIZE];

	if (!s || s->failover.kind == VFP_STANDBY_NONE || !c->owner ||
	    c->owner->kind != VFP_OWNER_VM ||
	    vfp_failover_standby_source(&s->failover, s->vlan, source, sizeof(source), why,
					sizeof(why)) < 0)
		return 0;
	return standby_host_check(s->failover.kind, source, s->vlan, err, err_size);
}

/**
 * agent_claim() - reserve VFs as @c asks, durable when it returns
 * @ret: the allocation (vfp_allocation_unref() it)
 *
 * 0 for a new allocation (an event says so), 1 when its Idempotency-Key
 * replayed an earlier one; -EINVAL for a VM's failover standby that is not
 * on this host (standby_here()); else vfp_ledger_claim()'s errors, with a
 * pool that has too few free VFs reported as -EBUSY once growing it did not
 * help.
 */
int agent_claim(struct agent *a, const struct vfp_claim *c, struct vfp_allocation **ret,
		char *err, size_t err_size)
{
	int r = standby_here(c, err, err_size);

	if (r >= 0)
		r = agent_claim_quiet(a, c, ret, err, err_size);

	if (r == 0)
		events_emit_allocation(a->events, vfp_allocation_get_id(*ret),
				       VFP_ALLOCATION_RESERVED);
	return r;
}

/**
 * agent_claim_and_attach() - agent_claim(), then its VFs into the domain or
 * the network namespace @t names: all or nothing (a failed attach gives the
 * claim back), one request for what took three
 *
 * A replayed claim (1) is returned as it is, not attached again.
 */
int agent_claim_and_attach(struct agent *a, const struct vfp_claim *c,
			   const struct agent_attach_target *t, struct vfp_allocation **ret,
			   char *err, size_t err_size)
{
	struct vfp_allocation *alloc = NULL;
	char msg[AGENT_ERR_SIZE];
	int r = standby_here(c, err, err_size);

	if (r >= 0)
		r = agent_claim_quiet(a, c, &alloc, err, err_size);
	if (r == 0 && t->netns)
		r = agent_attach_netns(a, vfp_allocation_get_id(alloc), t->netns, err, err_size);
	else if (r == 0)
		r = agent_domain_attach_vfs(a, vfp_allocation_get_id(alloc), t->domain, err,
					    err_size);
	if (r < 0 && alloc) /* kept and given back later when the ledger cannot take it now */
		agent_give_back(a, vfp_allocation_get_id(alloc), msg, sizeof(msg));
	if (r == 0) {
		struct vfp_allocation *now = NULL;

		if (agent_get_allocation(a, vfp_allocation_get_id(alloc), &now, msg,
					 sizeof(msg)) >= 0) {
			vfp_allocation_unref(alloc);
			alloc = now;
		}
		events_emit_allocation(a->events, vfp_allocation_get_id(alloc),
				       vfp_allocation_get_state(alloc));
	}
	if (r < 0) {
		vfp_allocation_unref(alloc);
		return r;
	}
	*ret = alloc;
	return r;
}
