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
#include <string.h>

#include "ledger-private.h"
#include "sysfs.h"

/* Allocations holding VFs of @pf, each with the VFs it holds there. */
static int blockers(struct vfp_ledger *l, const char *pf, json_t *out)
{
	static const char sql[] = "SELECT a.id, a.owner, a.state, v.pci FROM allocation_vfs v "
				  "JOIN vfs f ON f.pci = v.pci JOIN allocations a "
				  "ON a.id = v.allocation_id WHERE v.live = 1 AND f.pf = ? "
				  "ORDER BY a.created, a.id, v.position";
	sqlite3_stmt *st;
	json_t *last = NULL;
	int r, rc;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, pf, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *id = col_text(st, 0);

		if (!last || strcmp(json_string_value(json_object_get(last, "allocation")), id)) {
			json_t *owner = json_loads(col_text(st, 1), 0, NULL);

			last = json_pack("{s:s, s:o, s:s, s:[]}", "allocation", id, "owner",
					 owner ? owner : json_null(), "state", col_text(st, 2),
					 "vfs");
			json_array_append_new(out, last);
		}
		json_array_append_new(json_object_get(last, "vfs"), json_string(col_text(st, 3)));
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : vfp_ledger_errno(l, rc, "blockers");
}

static int plan_refusal(struct vfp_ledger *l, json_t *plan, int r, const char *format, ...)
	_printf_(4, 5);

static int plan_refusal(struct vfp_ledger *l, json_t *plan, int r, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vsnprintf(l->error, sizeof(l->error), format, ap);
	va_end(ap);
	json_object_set_new(plan, "allowed", json_false());
	json_object_set_new(plan, "reason", json_string(l->error));
	return r;
}

/**
 * vfp_numvfs_plan() - may PF @pf_pci go to @numvfs VFs, and what would change?
 * @ret_plan: {"pf","from","to","totalvfs","allowed","reason","blockers":[…]},
 *            set whenever the PF exists, also when the answer is no
 *
 * 0 when allowed; -ENOENT: no such PF; -EINVAL: @numvfs outside
 * [0, totalvfs]; -EBUSY: sriov_numvfs is not writable, or allocations
 * hold VFs of the PF (listed as blockers).
 */
VFP_EXPORT int vfp_numvfs_plan(struct vfp_ledger *l, const struct vfp_inventory *inv,
			       const char *pf_pci, int numvfs, json_t **ret_plan)
{
	const struct vfp_pf *pf = vfp_inventory_find_pf(inv, pf_pci);
	int from = 0, total = 0, r;
	json_t *plan, *b;

	if (!pf)
		return vfp_ledger_fail(l, -ENOENT, "no SR-IOV PF at %s", pf_pci);
	if (vfp_pf_get_numvfs(pf, &from) < 0 || vfp_pf_get_totalvfs(pf, &total) < 0)
		return vfp_ledger_fail(l, -EIO, "PF %s: sriov_numvfs or sriov_totalvfs unreadable",
				       pf_pci);
	plan = json_pack("{s:s, s:i, s:i, s:i, s:b, s:n, s:[]}", "pf", pf_pci, "from", from, "to",
			 numvfs, "totalvfs", total, "allowed", 1, "reason", "blockers");
	if (!plan)
		return -ENOMEM;
	*ret_plan = plan;
	if (numvfs < 0 || numvfs > total)
		return plan_refusal(l, plan, -EINVAL, "numvfs: %d is outside [0, %d] for PF %s",
				    numvfs, total, pf_pci);
	if (!vfp_pf_get_numvfs_writable(pf))
		return plan_refusal(l, plan, -EBUSY,
				    "PF %s cannot be resized: %s", pf_pci,
				    vfp_pf_get_driver(pf)
					    ? "its driver sets the VF count by module parameter "
					      "(mlx4_core: num_vfs)"
					    : "it has no driver bound");
	b = json_object_get(plan, "blockers");
	r = blockers(l, pf_pci, b);
	if (r < 0)
		return r;
	if (json_array_size(b) > 0 && numvfs != from)
		return plan_refusal(l, plan, -EBUSY,
				    "PF %s: %zu allocation%s hold%s its VFs (first: %s)", pf_pci,
				    json_array_size(b), json_array_size(b) == 1 ? "" : "s",
				    json_array_size(b) == 1 ? "s" : "",
				    json_string_value(json_object_get(json_array_get(b, 0),
								      "allocation")));
	return 0;
}

/* Takes the PF's free VFs out of the pool, unless an allocation got there first. */
static int take_out_of_pool(struct vfp_ledger *l, const char *pf_pci)
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

static int write_numvfs(struct vfp_ledger *l, struct vfp_ctx *ctx, const char *pf_pci, int n)
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
				json_t **ret_plan, struct vfp_inventory **ret_inv)
{
	json_t *plan = NULL;
	int from, r, r2;

	r = vfp_numvfs_plan(l, inv, pf_pci, numvfs, &plan);
	if (r < 0) {
		if (ret_plan)
			*ret_plan = plan;
		else
			json_decref(plan);
		return r;
	}
	from = (int)json_integer_value(json_object_get(plan, "from"));
	r = from == numvfs ? 0 : take_out_of_pool(l, pf_pci);
	if (r >= 0 && from != numvfs && from != 0)
		r = write_numvfs(l, inv->ctx, pf_pci, 0);
	if (r >= 0 && from != numvfs && numvfs != 0)
		r = write_numvfs(l, inv->ctx, pf_pci, numvfs);
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
		json_decref(plan);
	return r;
}

/* PFs with VFs in @pool, the ones with the fewest VFs first (they have the most room). */
static json_t *pool_pfs(struct vfp_ledger *l, const char *pool)
{
	static const char sql[] = "SELECT pf FROM vfs WHERE pool = ? GROUP BY pf "
				  "ORDER BY count(*), pf";
	json_t *a = json_array();
	sqlite3_stmt *st;

	if (!a || vfp_ledger_stmt(l, sql, &st) < 0) {
		json_decref(a);
		return NULL;
	}
	sqlite3_bind_text(st, 1, pool, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(a, json_string(col_text(st, 0)));
	sqlite3_reset(st);
	return a;
}

/**
 * vfp_pool_grow() - grow an idle PF of @pool by the pool's step
 *
 * The pool's PFs are those with VFs in it; one that no allocation holds,
 * whose sriov_numvfs is writable and below totalvfs, grows by the step
 * (capped at totalvfs). -EBUSY when the pool does not grow or no PF can.
 */
VFP_EXPORT int vfp_pool_grow(struct vfp_ledger *l, const struct vfp_config *config,
			     const struct vfp_inventory *inv, const char *pool,
			     struct vfp_inventory **ret_inv)
{
	int idx = vfp_config_find_pool(config, pool);
	unsigned step = idx >= 0 ? vfp_config_get_pool_grow_step(config, (size_t)idx) : 0;
	json_t *pfs, *v;
	size_t i;
	int r = -EBUSY;

	if (step == 0)
		return vfp_ledger_fail(l, -EBUSY, "pool \"%s\" does not grow (no \"grow\" in its "
						  "config)", pool);
	pfs = pool_pfs(l, pool);
	if (!pfs)
		return -ENOMEM;
	json_array_foreach(pfs, i, v) {
		const struct vfp_pf *pf = vfp_inventory_find_pf(inv, json_string_value(v));
		int num, total;
		json_t *plan = NULL;

		if (!pf || vfp_pf_get_numvfs(pf, &num) < 0 || vfp_pf_get_totalvfs(pf, &total) < 0 ||
		    num >= total)
			continue;
		num = num + (int)step > total ? total : num + (int)step;
		if (vfp_numvfs_plan(l, inv, vfp_pf_get_pci(pf), num, &plan) < 0) {
			json_decref(plan);
			continue;
		}
		json_decref(plan);
		r = vfp_numvfs_apply(l, config, inv, vfp_pf_get_pci(pf), num, NULL, ret_inv);
		break;
	}
	json_decref(pfs);
	if (r == -EBUSY && i == json_array_size(pfs))
		vfp_ledger_fail(l, -EBUSY, "pool \"%s\" cannot grow: every PF is busy or full",
				pool);
	return r;
}
