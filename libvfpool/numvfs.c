/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Resizing a PF's VF count (the dynamic VF pool of uniRDMA). The kernel
 * only goes from 0 to N, so a resize destroys every VF of the PF: it is
 * allowed only when none of them is held by an allocation. A plan says
 * what would happen and who blocks it; apply takes the PF's free VFs out
 * of the pool (an intent: reconcile gives them back after a crash), writes
 * 0 then N, rescans and reconciles.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger-private.h"
#include "sysfs.h"

struct id {
	char id[37];
};

static void fill_id(sqlite3_stmt *st, void *elem)
{
	snprintf(((struct id *)elem)->id, sizeof(struct id), "%s", col_text(st, 0));
}

/* The live allocations holding VFs of @pf, oldest first, into @p->blockers. */
static int blockers(struct vfp_ledger *l, const char *pf, struct vfp_numvfs_plan *p)
{
	static const char sql[] = "SELECT a.id FROM allocation_vfs v JOIN vfs f ON f.pci = v.pci "
				  "JOIN allocations a ON a.id = v.allocation_id "
				  "WHERE v.live = 1 AND f.pf = ? GROUP BY a.id ORDER BY a.created, a.id";
	struct id *ids = NULL;
	size_t n = 0;
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, pf, -1, SQLITE_TRANSIENT);
	r = vfp_ledger_collect(l, st, sizeof(*ids), fill_id, (void **)&ids, &n, "blockers");
	if (r >= 0 && n && !(p->blockers = calloc(n, sizeof(*p->blockers))))
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		r = vfp_ledger_get_allocation(l, ids[i].id, &p->blockers[i]);
		if (r >= 0)
			p->n_blockers++;
	}
	free(ids);
	return r;
}

VFP_EXPORT void vfp_numvfs_plan_free(struct vfp_numvfs_plan *p)
{
	if (!p)
		return;
	vfp_allocation_list_free(p->blockers, p->n_blockers);
	free(p);
}

static int plan_refusal(struct vfp_ledger *l, struct vfp_numvfs_plan *p, int r,
			const char *format, ...) _printf_(4, 5);

static int plan_refusal(struct vfp_ledger *l, struct vfp_numvfs_plan *p, int r,
			const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vsnprintf(vfp_ledger_error(), VFP_LEDGER_ERROR_MAX, format, ap);
	va_end(ap);
	p->allowed = false;
	snprintf(p->reason, sizeof(p->reason), "%s", vfp_ledger_error());
	return r;
}

static int plan_checks(struct vfp_ledger *l, const struct vfp_pf *pf, struct vfp_numvfs_plan *p)
{
	int r;

	if (p->to < 0 || p->to > p->totalvfs)
		return plan_refusal(l, p, -EINVAL, "numvfs: %d is outside [0, %d] for PF %s", p->to,
				    p->totalvfs, p->pf);
	if (!vfp_pf_get_numvfs_writable(pf))
		return plan_refusal(l, p, -EBUSY, "PF %s cannot be resized: %s", p->pf,
				    vfp_pf_get_driver(pf)
					    ? "its driver sets the VF count by module parameter "
					      "(mlx4_core: num_vfs)"
					    : "it has no driver bound");
	r = blockers(l, p->pf, p);
	if (r < 0)
		return r;
	/* a PF at 0 VFs (after a reboot) has nothing to destroy: its holders get their VFs back */
	if (p->n_blockers > 0 && p->to != p->from && p->from > 0)
		return plan_refusal(l, p, -EBUSY, "PF %s: %zu allocation%s hold%s its VFs (first: %s)",
				    p->pf, p->n_blockers, p->n_blockers == 1 ? "" : "s",
				    p->n_blockers == 1 ? "s" : "",
				    vfp_allocation_get_id(p->blockers[0]));
	return 0;
}

/**
 * vfp_numvfs_plan() - may PF @pf_pci go to @numvfs VFs, and what would change?
 * @ret_plan: the plan (vfp_numvfs_plan_free() it), set whenever the PF exists,
 *            also when the answer is no: then it says why and who is in the way
 *
 * 0 when allowed; -ENOENT: no such PF; -EINVAL: @numvfs outside
 * [0, totalvfs]; -EBUSY: sriov_numvfs is not writable, or allocations
 * hold VFs of the PF (the plan's blockers).
 */
VFP_EXPORT int vfp_numvfs_plan(struct vfp_ledger *l, const struct vfp_inventory *inv,
			       const char *pf_pci, int numvfs, struct vfp_numvfs_plan **ret_plan)
{
	const struct vfp_pf *pf = vfp_inventory_find_pf(inv, pf_pci);
	struct vfp_numvfs_plan *p;
	int from = 0, total = 0;

	if (!pf)
		return vfp_ledger_fail(l, -ENOENT, "no SR-IOV PF at %s", pf_pci);
	if (vfp_pf_get_numvfs(pf, &from) < 0 || vfp_pf_get_totalvfs(pf, &total) < 0)
		return vfp_ledger_fail(l, -EIO, "PF %s: sriov_numvfs or sriov_totalvfs unreadable",
				       pf_pci);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	snprintf(p->pf, sizeof(p->pf), "%s", pf_pci);
	p->from = from, p->to = numvfs, p->totalvfs = total, p->allowed = true;
	*ret_plan = p;
	return plan_checks(l, pf, p);
}

/* Takes the PF's free VFs out of the pool, unless an allocation got there first. */
int vfp_numvfs_take_out_of_pool(struct vfp_ledger *l, const char *pf_pci)
{
	static const char held[] = "SELECT count(*) FROM allocation_vfs v JOIN vfs f "
				   "ON f.pci = v.pci WHERE v.live = 1 AND f.pf = ?";
	static const char out[] = "UPDATE vfs SET state = 'unavailable', reason = 'resizing', "
				  "updated = ? WHERE pf = ? AND state = 'free'";
	sqlite3_stmt *st;
	int r;

	r = vfp_ledger_begin_tx(l);
	if (r >= 0)
		r = vfp_ledger_stmt(l, held, &st);
	if (r >= 0) {
		sqlite3_bind_text(st, 1, pf_pci, -1, SQLITE_TRANSIENT);
		r = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -EIO;
		sqlite3_reset(st);
		if (r > 0)
			r = vfp_ledger_fail(l, -EBUSY, "PF %s: an allocation took one of its VFs",
					    pf_pci);
	}
	if (r >= 0)
		r = vfp_ledger_stmt(l, out, &st);
	if (r >= 0) {
		sqlite3_bind_int64(st, 1, l->now());
		sqlite3_bind_text(st, 2, pf_pci, -1, SQLITE_TRANSIENT);
		r = vfp_ledger_step_done(l, st, "resize intent");
	}
	if (r < 0) {
		vfp_ledger_rollback_tx(l);
		return r;
	}
	return vfp_ledger_commit_tx(l);
}

int vfp_numvfs_write(struct vfp_ledger *l, struct vfp_ctx *ctx, const char *pf_pci, int n)
{
	char rel[64], value[16];
	int r;

	vfp_sysfs_dev(rel, sizeof(rel), pf_pci, "sriov_numvfs");
	snprintf(value, sizeof(value), "%d", n);
	r = vfp_sysfs_write(ctx, rel, value);
	if (r < 0)
		return vfp_ledger_fail(l, r, "writing %d to %s/%s: %s", n,
				       vfp_ctx_get_sysfs_root(ctx), rel, strerror(-r));
	return 0;
}

/**
 * vfp_numvfs_apply() - resize PF @pf_pci to @numvfs VFs
 * @inv: the current inventory; @ret_inv: the inventory after the resize
 *
 * Errors as vfp_numvfs_plan(), or the kernel's error from the write. The
 * ledger is synced with the rescanned host whether or not the write
 * worked, so it shows what the kernel did.
 */
VFP_EXPORT int vfp_numvfs_apply(struct vfp_ledger *l, const struct vfp_config *config,
				const struct vfp_inventory *inv, const char *pf_pci, int numvfs,
				struct vfp_numvfs_plan **ret_plan, struct vfp_inventory **ret_inv)
{
	struct vfp_numvfs_plan *plan = NULL;
	int from, r, r2;

	r = vfp_numvfs_plan(l, inv, pf_pci, numvfs, &plan);
	if (r < 0) {
		if (ret_plan)
			*ret_plan = plan;
		else
			vfp_numvfs_plan_free(plan);
		return r;
	}
	from = plan->from;
	r = from == numvfs || from == 0 ? 0 : vfp_numvfs_take_out_of_pool(l, pf_pci);
	if (r >= 0 && from != numvfs && from != 0)
		r = vfp_numvfs_write(l, inv->ctx, pf_pci, 0);
	if (r >= 0 && from != numvfs && numvfs != 0)
		r = vfp_numvfs_write(l, inv->ctx, pf_pci, numvfs);
	r2 = vfp_inventory_scan(inv->ctx, ret_inv);
	if (r2 >= 0)
		r2 = vfp_ledger_sync(l, *ret_inv, config, NULL);
	if (r >= 0 && r2 < 0)
		r = r2;
	if (r >= 0)
		vfp_info(l->ctx, "PF %s: numvfs %d -> %d", pf_pci, from, numvfs);
	if (ret_plan)
		*ret_plan = plan;
	else
		vfp_numvfs_plan_free(plan);
	return r;
}

struct pf_row {
	char pci[VFP_PCI_ADDR_LEN + 1];
};

static void fill_pf(sqlite3_stmt *st, void *elem)
{
	snprintf(((struct pf_row *)elem)->pci, sizeof(struct pf_row), "%s", col_text(st, 0));
}

/* PFs with VFs in @pool, the ones with the fewest VFs first (they have the most room). */
static int pool_pfs(struct vfp_ledger *l, const char *pool, struct pf_row **ret, size_t *ret_n)
{
	static const char sql[] = "SELECT pf FROM vfs WHERE pool = ? GROUP BY pf "
				  "ORDER BY count(*), pf";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, pool, -1, SQLITE_TRANSIENT);
	return vfp_ledger_collect(l, st, sizeof(**ret), fill_pf, (void **)ret, ret_n, "pool PFs");
}

/**
 * vfp_pool_grow() - grow an idle PF of @pool by the pool's step
 *
 * The pool's PFs are those with VFs in it; one that no allocation holds,
 * whose sriov_numvfs is writable and below totalvfs, grows by the step
 * (capped at totalvfs); @ret_growth (may be NULL) says which, from and to.
 * -EBUSY when the pool does not grow or no PF can.
 */
VFP_EXPORT int vfp_pool_grow(struct vfp_ledger *l, const struct vfp_config *config,
			     const struct vfp_inventory *inv, const char *pool,
			     struct vfp_pool_growth *ret_growth, struct vfp_inventory **ret_inv)
{
	int idx = vfp_config_find_pool(config, pool);
	unsigned step = idx >= 0 ? vfp_config_get_pool_grow_step(config, (size_t)idx) : 0;
	struct pf_row *pfs = NULL;
	size_t i, n = 0;
	int r = -EBUSY;

	if (step == 0)
		return vfp_ledger_fail(l, -EBUSY, "pool \"%s\" does not grow (no \"grow\" in its "
						  "config)", pool);
	if (pool_pfs(l, pool, &pfs, &n) < 0)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct vfp_pf *pf = vfp_inventory_find_pf(inv, pfs[i].pci);
		struct vfp_numvfs_plan *plan = NULL;
		int num, total, allowed;

		if (!pf || vfp_pf_get_numvfs(pf, &num) < 0 || vfp_pf_get_totalvfs(pf, &total) < 0 ||
		    num >= total)
			continue;
		if (ret_growth) {
			snprintf(ret_growth->pf, sizeof(ret_growth->pf), "%s", vfp_pf_get_pci(pf));
			ret_growth->from = num;
		}
		num = num + (int)step > total ? total : num + (int)step;
		allowed = vfp_numvfs_plan(l, inv, vfp_pf_get_pci(pf), num, &plan);
		vfp_numvfs_plan_free(plan);
		if (allowed < 0)
			continue;
		r = vfp_numvfs_apply(l, config, inv, vfp_pf_get_pci(pf), num, NULL, ret_inv);
		if (ret_growth)
			ret_growth->to = num;
		break;
	}
	free(pfs);
	if (r == -EBUSY && i == n)
		vfp_ledger_fail(l, -EBUSY, "pool \"%s\" cannot grow: every PF is busy or full",
				pool);
	return r;
}
