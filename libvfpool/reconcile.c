/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reconciling the ledger with the host, at start and after every hotplug
 * event:
 *  1. the inventory: new VFs become free (or unavailable when excluded);
 *     vanished VFs become unavailable and their allocations are flagged;
 *     a VF that returns is free again, or quarantined if an allocation
 *     still held it when it vanished; free VFs take the pool their
 *     selector gives now (the config may have changed).
 *  2. half-done intents, by the rules of ledger-intent.c;
 *  3. reserved allocations whose lease ran out are released.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"
#include "ledger-private.h"

struct known_vf {
	char pci[VFP_PCI_ADDR_LEN + 1];
	enum vfp_vf_state state;
	char reason[128];
	bool held; /* a live allocation holds it */
	bool seen;
};

static void fill_known(sqlite3_stmt *st, void *elem)
{
	struct known_vf *k = elem;

	snprintf(k->pci, sizeof(k->pci), "%s", col_text(st, 0));
	k->state = vfp_vf_state_from_string(col_text(st, 1));
	snprintf(k->reason, sizeof(k->reason), "%s", col_text(st, 2));
	k->held = sqlite3_column_int(st, 3);
}

static int load_known(struct vfp_ledger *l, struct known_vf **ret, size_t *ret_n)
{
	static const char sql[] = "SELECT f.pci, f.state, coalesce(f.reason, ''), EXISTS (SELECT 1 "
				  "FROM allocation_vfs v WHERE v.pci = f.pci AND v.live = 1) "
				  "FROM vfs f ORDER BY f.pci";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	return r < 0 ? r
		     : vfp_ledger_collect(l, st, sizeof(**ret), fill_known, (void **)ret, ret_n,
					  "known VFs");
}

static int cmp_known(const void *key, const void *elem)
{
	return strcmp(key, ((const struct known_vf *)elem)->pci);
}

static struct known_vf *find_known(struct known_vf *known, size_t n, const char *pci)
{
	return n ? bsearch(pci, known, n, sizeof(*known), cmp_known) : NULL;
}

/* Writes what the inventory says of a VF; a new one is inserted in @state. */
static int upsert_vf(struct vfp_ledger *l, const struct vfp_vf *vf, const char *pool,
		     enum vfp_vf_state state, const char *reason)
{
	static const char sql[] =
		"INSERT INTO vfs(pci, pf, vf_index, link_type, numa_node, pool, state, reason, "
		"updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT(pci) DO UPDATE SET "
		"pf = ?2, vf_index = ?3, link_type = ?4, numa_node = ?5, updated = ?9, "
		"pool = CASE WHEN state IN ('free', 'unavailable') THEN ?6 ELSE pool END "
		/* write (and fire the triggers) only when a fact changed */
		"WHERE pf IS NOT ?2 OR vf_index IS NOT ?3 OR link_type IS NOT ?4 OR "
		"numa_node IS NOT ?5 OR (state IN ('free', 'unavailable') AND pool IS NOT ?6)";
	sqlite3_stmt *st;
	int node, r;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, vfp_vf_get_pci(vf), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, vfp_vf_get_pf_pci(vf), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, (int)vfp_vf_get_index(vf));
	sqlite3_bind_text(st, 4, vfp_link_type_to_string(vfp_vf_get_link_type(vf)), -1,
			  SQLITE_STATIC);
	if (vfp_vf_get_numa_node(vf, &node) >= 0)
		sqlite3_bind_int(st, 5, node);
	sqlite3_bind_text(st, 6, pool, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, vfp_vf_state_to_string(state), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 9, l->now());
	return vfp_ledger_step_done(l, st, "inventory VF");
}

#define KEEP (-1) /* leave the VF's state as it is */

static bool vanished(const struct known_vf *k)
{
	return k->state == VFP_VF_UNAVAILABLE && strcmp(k->reason, "vanished") == 0;
}

/*
 * The state a VF of the inventory should move to, or KEEP. @out: why it
 * may not be offered ("excluded", "unhealthy: …"), NULL when it may.
 */
static int next_state(const struct known_vf *k, const char *out, const char **reason)
{
	*reason = out;
	if (!k)
		return out ? VFP_VF_UNAVAILABLE : VFP_VF_FREE;
	if (k->state == VFP_VF_FREE)
		return out ? VFP_VF_UNAVAILABLE : KEEP;
	if (k->state != VFP_VF_UNAVAILABLE)
		return KEEP;
	if (vanished(k) && k->held) {
		*reason = "returned after vanishing while allocated";
		return VFP_VF_QUARANTINED;
	}
	if (out)
		return strcmp(k->reason, out) == 0 ? KEEP : VFP_VF_UNAVAILABLE;
	return VFP_VF_FREE;
}

static int sync_vf(struct vfp_ledger *l, const struct vfp_config *config, const struct vfp_vf *vf,
		   struct known_vf *known, size_t n_known, struct vfp_reconcile_report *rep)
{
	struct known_vf *k = find_known(known, n_known, vfp_vf_get_pci(vf));
	bool excluded = vfp_config_is_excluded(config, vf);
	const char *pool = excluded ? NULL : vfp_config_pool_for_vf(config, vf);
	char health[128];
	const char *reason, *out = excluded ? "excluded"
					     : vfp_config_pool_health(config, pool, vf, health,
								      sizeof(health));
	int state = next_state(k, out, &reason);
	int r;

	if (k)
		k->seen = true;
	r = upsert_vf(l, vf, pool, state == KEEP ? VFP_VF_FREE : (enum vfp_vf_state)state, reason);
	if (r < 0 || !k || state == KEEP)
		return r;
	if (vanished(k))
		rep->returned++;
	return vfp_ledger_set_vf_state(l, k->pci, state, reason);
}

static int mark_vanished(struct vfp_ledger *l, const struct known_vf *k)
{
	static const char flag[] =
		"UPDATE allocations SET flag = 'VF ' || ?1 || ' vanished', updated = ?2 WHERE id IN "
		"(SELECT allocation_id FROM allocation_vfs WHERE pci = ?1 AND live = 1)";
	sqlite3_stmt *st;
	int r;

	r = vfp_ledger_set_vf_state(l, k->pci, VFP_VF_UNAVAILABLE, "vanished");
	if (r >= 0 && k->held)
		r = vfp_ledger_stmt(l, flag, &st);
	if (r >= 0 && k->held) {
		sqlite3_bind_text(st, 1, k->pci, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, l->now());
		r = vfp_ledger_step_done(l, st, "flag allocation");
	}
	if (r >= 0)
		vfp_info(l->ctx, "VF %s vanished%s", k->pci, k->held ? " while allocated" : "");
	return r;
}

static int sync_inventory(struct vfp_ledger *l, const struct vfp_inventory *inv,
			  const struct vfp_config *config, struct vfp_reconcile_report *rep)
{
	struct known_vf *known = NULL;
	size_t n_known = 0;
	int r;

	r = load_known(l, &known, &n_known);
	for (size_t i = 0; r >= 0 && i < vfp_inventory_get_pf_count(inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(inv, i);

		for (size_t j = 0; r >= 0 && j < vfp_pf_get_vf_count(pf); j++) {
			const struct vfp_vf *vf = vfp_pf_get_vf(pf, j);

			if (!find_known(known, n_known, vfp_vf_get_pci(vf)))
				rep->added++;
			r = sync_vf(l, config, vf, known, n_known, rep);
		}
	}
	for (size_t i = 0; r >= 0 && i < n_known; i++) {
		if (known[i].seen || vanished(&known[i]))
			continue;
		rep->vanished++;
		r = mark_vanished(l, &known[i]);
	}
	free(known);
	return r;
}

struct pending {
	char id[40];
	enum vfp_op op;
	bool expired; /* a lease ran out: a release that has not begun yet */
};

static int load_pending(struct vfp_ledger *l, time_t now, struct pending **ret, size_t *ret_n)
{
	/* half-done intents first, then reserved allocations whose lease ran out */
	static const char sql[] =
		"SELECT allocation_id, op FROM intents UNION ALL "
		"SELECT id, 'expire' FROM allocations WHERE state = 'reserved' AND lease_expires "
		"IS NOT NULL AND lease_expires <= ?1 AND id NOT IN (SELECT allocation_id FROM intents)";
	struct pending *p = NULL;
	size_t n = 0;
	sqlite3_stmt *st;
	int r, rc;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, now);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct pending *np = realloc(p, (n + 1) * sizeof(*p));
		const char *op = col_text(st, 1);

		if (!np) {
			free(p);
			sqlite3_reset(st);
			return -ENOMEM;
		}
		p = np;
		snprintf(p[n].id, sizeof(p[n].id), "%s", col_text(st, 0));
		p[n].op = strcmp(op, "attach") == 0   ? VFP_OP_ATTACH
			  : strcmp(op, "detach") == 0 ? VFP_OP_DETACH
						      : VFP_OP_RELEASE;
		p[n].expired = strcmp(op, "expire") == 0;
		n++;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		free(p);
		return vfp_ledger_errno(l, rc, "intents");
	}
	*ret = p;
	*ret_n = n;
	return 0;
}

static int call_op(int (*fn)(void *, const struct vfp_allocation *), void *userdata,
		   const struct vfp_allocation *alloc, int fallback)
{
	return fn ? fn(userdata, alloc) : fallback;
}

/* Resolves one half-done intent by its rule; see ledger-intent.c. */
static int resolve(struct vfp_ledger *l, const struct pending *p, const struct vfp_reconcile_ops *ops,
		   void *userdata, struct vfp_reconcile_report *rep)
{
	static const struct vfp_reconcile_ops none;
	struct vfp_allocation *alloc = NULL;
	bool ok, undone;
	int r = vfp_ledger_get_allocation(l, p->id, &alloc);

	if (r < 0)
		return r;
	if (!ops)
		ops = &none;
	switch (p->op) {
	case VFP_OP_ATTACH:
		ok = call_op(ops->is_attached, userdata, alloc, 0) > 0;
		/* undo what half happened; a VF that does not come back is quarantined by @ops */
		undone = ok || call_op(ops->detach, userdata, alloc, 0) >= 0;
		rep->intents_rolled_back += !ok;
		rep->intents_rolled_forward += ok;
		rep->quarantined += !undone;
		r = vfp_ledger_confirm(l, p->id, VFP_OP_ATTACH, ok,
				       ok       ? NULL
				       : undone ? "agent stopped during attach"
						: "agent stopped during attach; its undo failed");
		break;
	case VFP_OP_DETACH:
		ok = call_op(ops->detach, userdata, alloc, 0) >= 0;
		rep->intents_rolled_forward++;
		r = vfp_ledger_confirm(l, p->id, VFP_OP_DETACH, ok, ok ? NULL : "detach failed after restart");
		break;
	default:
		ok = call_op(ops->restore, userdata, alloc, 0) >= 0;
		rep->intents_rolled_forward++;
		rep->quarantined += !ok;
		r = vfp_ledger_confirm(l, p->id, VFP_OP_RELEASE, ok, ok ? NULL : "restore failed");
		break;
	}
	vfp_allocation_unref(alloc);
	return r;
}

static int resolve_pending(struct vfp_ledger *l, const struct vfp_reconcile_ops *ops,
			   void *userdata, struct vfp_reconcile_report *rep)
{
	struct pending *p = NULL;
	size_t n = 0;
	int r;

	r = load_pending(l, l->now(), &p, &n);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (p[i].expired) {
			rep->expired++;
			r = vfp_ledger_begin(l, p[i].id, VFP_OP_RELEASE);
			if (r >= 0)
				vfp_info(l->ctx, "allocation %s: lease expired, releasing", p[i].id);
		}
		if (r >= 0)
			r = resolve(l, &p[i], ops, userdata, rep);
	}
	free(p);
	return r;
}

/**
 * vfp_ledger_sync() - write what the inventory shows into the ledger
 *
 * Step 1 of reconcile alone: safe while operations are in flight (it does
 * not touch intents), so it runs after every hotplug event and resize.
 */
VFP_EXPORT int vfp_ledger_sync(struct vfp_ledger *l, const struct vfp_inventory *inv,
			       const struct vfp_config *config,
			       struct vfp_reconcile_report *ret_report)
{
	struct vfp_reconcile_report rep = { 0 };
	int r;

	r = vfp_ledger_begin_tx(l);
	if (r >= 0)
		r = sync_inventory(l, inv, config, &rep);
	if (r < 0) {
		vfp_ledger_rollback_tx(l);
		return r;
	}
	r = vfp_ledger_commit_tx(l);
	if (r >= 0 && ret_report)
		*ret_report = rep;
	return r;
}

/**
 * vfp_ledger_reconcile() - bring the ledger in line with the host
 * @ops: how to ask the host about and act on a VF; NULL means there is
 *       nothing to undo or restore (a simulated host, or a test)
 * @ret_report: what changed; may be NULL
 *
 * Resolves half-done intents, so it must run when no operation is in
 * flight: the agent calls it at start, before it serves.
 */
VFP_EXPORT int vfp_ledger_reconcile(struct vfp_ledger *l, const struct vfp_inventory *inv,
				    const struct vfp_config *config,
				    const struct vfp_reconcile_ops *ops, void *userdata,
				    struct vfp_reconcile_report *ret_report)
{
	struct vfp_reconcile_report rep = { 0 };
	int r;

	r = vfp_ledger_sync(l, inv, config, &rep);
	if (r >= 0)
		r = resolve_pending(l, ops, userdata, &rep);
	if (r >= 0 && ret_report)
		*ret_report = rep;
	return r;
}
