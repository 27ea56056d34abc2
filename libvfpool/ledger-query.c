/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading the ledger: allocations, a VF's entry, counts, the audit log, restore points. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger-private.h"

static json_t *text_or_null(sqlite3_stmt *st, int i)
{
	return col_text(st, i) ? json_string(col_text(st, i)) : json_null();
}

static void fill_vf(sqlite3_stmt *st, void *elem)
{
	struct vfp_allocation_vf *v = elem;

	snprintf(v->pci, sizeof(v->pci), "%s", col_text(st, 0));
	snprintf(v->pf, sizeof(v->pf), "%s", col_text(st, 1));
	v->index = (unsigned)sqlite3_column_int(st, 2);
	snprintf(v->guid, sizeof(v->guid), "%s", col_text(st, 3) ? col_text(st, 3) : "");
	v->state = sqlite3_column_int(st, 5) ? vfp_vf_state_from_string(col_text(st, 4))
					     : VFP_VF_RELEASED;
}

static int read_vfs(struct vfp_ledger *l, struct vfp_allocation *a)
{
	static const char sql[] = "SELECT v.pci, f.pf, f.vf_index, v.guid, f.state, v.live "
				  "FROM allocation_vfs v JOIN vfs f ON f.pci = v.pci "
				  "WHERE v.allocation_id = ? ORDER BY v.position";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, a->id, -1, SQLITE_STATIC);
	return vfp_ledger_collect(l, st, sizeof(*a->vfs), fill_vf, (void **)&a->vfs, &a->n_vfs,
				  "VFs");
}

static int dup_column(sqlite3_stmt *st, int i, char **ret)
{
	*ret = col_text(st, i) ? strdup(col_text(st, i)) : NULL;
	return col_text(st, i) && !*ret ? -ENOMEM : 0;
}

/* Owner and settings, as stored (JSON text). */
static int read_stored(struct vfp_allocation *a, sqlite3_stmt *st)
{
	json_t *owner = json_loads(col_text(st, 2), 0, NULL);
	json_t *settings = json_loads(col_text(st, 4), 0, NULL);
	struct vfp_owner o;
	int r = vfp_owner_from_json(owner, &o);

	if (r >= 0)
		r = vfp_allocation_set_owner(a, &o);
	if (r >= 0)
		r = vfp_settings_from_json(settings, &a->settings);
	json_decref(owner);
	json_decref(settings);
	return r;
}

static int read_row(struct vfp_ledger *l, sqlite3_stmt *st, struct vfp_allocation **ret)
{
	struct vfp_allocation *a = vfp_allocation_new();
	int r = a ? 0 : -ENOMEM;

	if (r >= 0) {
		snprintf(a->id, sizeof(a->id), "%s", col_text(st, 0));
		r = dup_column(st, 1, &a->pool);
	}
	if (r >= 0 && (r = vfp_allocation_state_from_string(col_text(st, 3))) >= 0)
		a->state = r;
	if (r >= 0)
		r = read_stored(a, st);
	if (r >= 0)
		r = dup_column(st, 5, &a->idempotency_key);
	if (r >= 0)
		r = dup_column(st, 6, &a->flag);
	if (r >= 0) {
		a->has_lease = sqlite3_column_type(st, 7) != SQLITE_NULL;
		a->lease_expires = sqlite3_column_int64(st, 7);
		a->created = sqlite3_column_int64(st, 8);
		a->updated = sqlite3_column_int64(st, 9);
		r = dup_column(st, 10, &a->hold_path);
	}
	if (r >= 0)
		r = read_vfs(l, a);
	if (r < 0) {
		vfp_allocation_unref(a);
		return vfp_ledger_fail(l, r, "allocation %s: unreadable in the ledger",
				       col_text(st, 0));
	}
	*ret = a;
	return 0;
}

#define ALLOCATION_COLUMNS                                                                         \
	"SELECT id, pool, owner, state, settings, idempotency_key, flag, lease_expires, created, " \
	"updated, hold_path FROM allocations "

/* The one allocation whose column @sql matches @value; @what names @value in errors. */
static int get_allocation_where(struct vfp_ledger *l, const char *sql, const char *value,
				const char *what, struct vfp_allocation **ret_allocation)
{
	char *copy = strdup(value); /* @value may live in the cached statement */
	sqlite3_stmt *st;
	int r = copy ? vfp_ledger_stmt(l, sql, &st) : -ENOMEM, rc;

	if (r >= 0) {
		sqlite3_bind_text(st, 1, copy, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			r = read_row(l, st, ret_allocation);
		else
			r = rc == SQLITE_DONE ? vfp_ledger_fail(l, -ENOENT, "no allocation %s %s", what,
								copy)
					      : vfp_ledger_errno(l, rc, "allocation");
		sqlite3_reset(st);
	}
	free(copy);
	return r;
}

/**
 * vfp_ledger_get_allocation() - allocation @id as the ledger has it now
 *
 * -ENOENT when there is no such allocation (vfp_ledger_get_error() says so);
 * a released one is found, in state VFP_ALLOCATION_RELEASED.
 */
VFP_EXPORT int vfp_ledger_get_allocation(struct vfp_ledger *l, const char *id,
					 struct vfp_allocation **ret_allocation)
{
	return get_allocation_where(l, ALLOCATION_COLUMNS "WHERE id = ?", id, "with id",
				    ret_allocation);
}

/**
 * vfp_ledger_get_allocation_by_key() - the allocation claimed with
 * idempotency key @key, live or released
 *
 * -ENOENT when no allocation has that key. A CNI attachment is looked up
 * this way (its key names the container, the network and the interface).
 */
VFP_EXPORT int vfp_ledger_get_allocation_by_key(struct vfp_ledger *l, const char *key,
						struct vfp_allocation **ret_allocation)
{
	return get_allocation_where(l, ALLOCATION_COLUMNS "WHERE idempotency_key = ?", key,
				    "has key", ret_allocation);
}

/* The allocations of @st's rows (a cached statement, bound), into @ret_list; @st reset. */
static int list_rows(struct vfp_ledger *l, sqlite3_stmt *st, struct vfp_allocation ***ret_list,
		     size_t *ret_n)
{
	struct vfp_allocation **list = NULL, *a;
	size_t n = 0, cap = 0;
	int r = 0, rc = SQLITE_DONE;

	while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = read_row(l, st, &a);
		if (r >= 0 && !GREEDY_REALLOC(list, cap, n + 1)) {
			vfp_allocation_unref(a);
			r = -ENOMEM;
		}
		if (r >= 0)
			list[n++] = a;
	}
	sqlite3_reset(st);
	if (r >= 0 && rc != SQLITE_DONE)
		r = vfp_ledger_errno(l, rc, "allocations");
	if (r < 0) {
		vfp_allocation_list_free(list, n);
		return r;
	}
	*ret_list = list;
	*ret_n = n;
	return 0;
}

/**
 * vfp_ledger_list_allocations() - allocations, oldest first
 * @owner_key: only this owner's (see vfp_owner_key()), or NULL for all
 * @with_released: include ended allocations
 * @ret_list: free with vfp_allocation_list_free(*@ret_list, *@ret_n)
 */
VFP_EXPORT int vfp_ledger_list_allocations(struct vfp_ledger *l, const char *owner_key,
					   bool with_released, struct vfp_allocation ***ret_list,
					   size_t *ret_n)
{
	static const char sql[] = ALLOCATION_COLUMNS
		"WHERE (?1 IS NULL OR owner_key = ?1) AND (?2 OR state != 'released') "
		"ORDER BY created, id";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	if (owner_key)
		sqlite3_bind_text(st, 1, owner_key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, with_released);
	return list_rows(l, st, ret_list, ret_n);
}

/**
 * vfp_ledger_list_domain_allocations() - the live allocations of VM owners
 * whose domain UUID is @uuid (in any case), oldest first, whatever name
 * they were claimed under
 * @ret_list: free with vfp_allocation_list_free(*@ret_list, *@ret_n)
 *
 * Only the live VM owners' rows are looked at (their index), and only the
 * domain's are read.
 */
VFP_EXPORT int vfp_ledger_list_domain_allocations(struct vfp_ledger *l, const char *uuid,
						  struct vfp_allocation ***ret_list, size_t *ret_n)
{
	static const char sql[] = ALLOCATION_COLUMNS
		"WHERE owner_key >= 'vm:' AND owner_key < 'vm;' AND state != 'released' "
		"AND upper(json_extract(owner, '$.uuid')) = upper(?1) ORDER BY created, id";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, uuid, -1, SQLITE_TRANSIENT);
	return list_rows(l, st, ret_list, ret_n);
}

static void copy_text(sqlite3_stmt *st, int i, char *buf, size_t size)
{
	snprintf(buf, size, "%s", col_text(st, i) ? col_text(st, i) : "");
}

/* The ledger's view of a VF; -ENOENT when it does not know the VF. */
VFP_EXPORT int vfp_ledger_get_vf(struct vfp_ledger *l, const char *pci, struct vfp_ledger_vf *ret)
{
	static const char sql[] =
		"SELECT f.pool, f.state, f.reason, (SELECT allocation_id FROM allocation_vfs v "
		"WHERE v.pci = f.pci AND v.live = 1), f.updated FROM vfs f WHERE f.pci = ?";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, pci, -1, SQLITE_TRANSIENT);
	r = -ENOENT;
	if (sqlite3_step(st) == SQLITE_ROW) {
		copy_text(st, 0, ret->pool, sizeof(ret->pool));
		ret->state = vfp_vf_state_from_string(col_text(st, 1));
		copy_text(st, 2, ret->reason, sizeof(ret->reason));
		copy_text(st, 3, ret->allocation, sizeof(ret->allocation));
		ret->since = sqlite3_column_int64(st, 4);
		r = 0;
	}
	sqlite3_reset(st);
	return r;
}

static void fill_count(sqlite3_stmt *st, void *elem)
{
	struct vfp_pool_count *c = elem;

	snprintf(c->pool, sizeof(c->pool), "%s", col_text(st, 0));
}

/**
 * vfp_ledger_counts() - how many VFs each pool has in each state
 * @ret_counts: one entry per pool, by name; VFs in no pool count under ""
 *
 * VFs that vanished from the host are kept in the ledger (for their
 * allocations' history) but not counted: a pool counts what exists.
 *
 * free() *@ret_counts.
 */
VFP_EXPORT int vfp_ledger_counts(struct vfp_ledger *l, struct vfp_pool_count **ret_counts,
				 size_t *ret_n)
{
#define EXISTING "WHERE NOT (state = 'unavailable' AND reason IS 'vanished') "
	static const char pools[] = "SELECT DISTINCT coalesce(pool, '') FROM vfs " EXISTING
				    "ORDER BY 1";
	static const char sql[] = "SELECT coalesce(pool, ''), state, count(*), "
				  "sum(coalesce(reason, '') LIKE 'unhealthy:%') FROM vfs " EXISTING
				  "GROUP BY 1, 2 ORDER BY 1, 2";
#undef EXISTING
	struct vfp_pool_count *c = NULL;
	size_t n = 0, i = 0;
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, pools, &st);

	if (r >= 0)
		r = vfp_ledger_collect(l, st, sizeof(*c), fill_count, (void **)&c, &n, "pools");
	if (r >= 0)
		r = vfp_ledger_stmt(l, sql, &st);
	while (r >= 0 && sqlite3_step(st) == SQLITE_ROW) {
		int s = vfp_vf_state_from_string(col_text(st, 1));

		while (i < n && strcmp(c[i].pool, col_text(st, 0)) != 0)
			i++;
		if (i < n && s >= 0)
			c[i].vfs[s] = (unsigned)sqlite3_column_int(st, 2);
		if (i < n)
			c[i].unhealthy += (unsigned)sqlite3_column_int(st, 3);
	}
	if (r >= 0)
		sqlite3_reset(st);
	if (r < 0) {
		free(c);
		return r;
	}
	*ret_counts = c;
	*ret_n = n;
	return 0;
}

/* The last @limit state changes, newest last; of one VF when @pci is given. */
VFP_EXPORT json_t *vfp_ledger_audit(struct vfp_ledger *l, const char *pci, unsigned limit)
{
	static const char sql[] =
		"SELECT * FROM (SELECT seq, ts, pci, from_state, to_state, allocation_id, reason "
		"FROM audit WHERE (?1 IS NULL OR pci = ?1) ORDER BY seq DESC LIMIT ?2) ORDER BY seq";
	json_t *a = json_array();
	sqlite3_stmt *st;

	if (!a || vfp_ledger_stmt(l, sql, &st) < 0) {
		json_decref(a);
		return NULL;
	}
	if (pci)
		sqlite3_bind_text(st, 1, pci, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, (int)limit);
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(a, json_pack("{s:I, s:I, s:s, s:o, s:s, s:o, s:o}", "seq",
						   (json_int_t)sqlite3_column_int64(st, 0), "ts",
						   (json_int_t)sqlite3_column_int64(st, 1), "pci",
						   col_text(st, 2), "from", text_or_null(st, 3),
						   "to", col_text(st, 4), "allocation",
						   text_or_null(st, 5), "reason",
						   text_or_null(st, 6)));
	sqlite3_reset(st);
	return a;
}

static int write_restore_point(struct vfp_ledger *l, const char *pci,
			       const struct vfp_restore_point *rp)
{
	static const char sql[] = "UPDATE vfs SET original = ? WHERE pci = ?";
	_cleanup_free_ char *text = rp ? vfp_restore_point_to_text(rp) : NULL;
	sqlite3_stmt *st;
	int r;

	if (rp && !text)
		return -ENOMEM;
	r = vfp_ledger_stmt(l, sql, &st);
	if (r >= 0) {
		sqlite3_bind_text(st, 1, text, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, pci, -1, SQLITE_TRANSIENT);
		r = vfp_ledger_step_done(l, st, "restore point");
		if (r == 0)
			r = vfp_ledger_fail(l, -ENOENT, "no VF %s in the ledger", pci);
	}
	return r < 0 ? r : 0;
}

/**
 * vfp_ledger_set_restore_point() - what to put back when @pci is released
 * @rp: the restore point, written before the change it describes; NULL clears it
 *
 * Durable before it returns.
 */
VFP_EXPORT int vfp_ledger_set_restore_point(struct vfp_ledger *l, const char *pci,
					    const struct vfp_restore_point *rp)
{
	return write_restore_point(l, pci, rp);
}

/**
 * vfp_ledger_update_restore_point() - @pci's restore point, without waiting
 * for the disk
 * @rp: the restore point; NULL clears it (restored)
 *
 * Durable with the next durable commit (see vfp_ledger_begin_lazy_tx()).
 * For a restore point written after its change, inside an open intent, and
 * for one of kernel state only (PF settings, the driver, a namespace),
 * which a power cut resets along with the ledger's last commits.
 */
VFP_EXPORT int vfp_ledger_update_restore_point(struct vfp_ledger *l, const char *pci,
					       const struct vfp_restore_point *rp)
{
	int r = vfp_ledger_begin_lazy_tx(l);

	if (r >= 0)
		r = write_restore_point(l, pci, rp);
	if (r < 0) {
		vfp_ledger_rollback_tx(l);
		return r;
	}
	return vfp_ledger_commit_tx(l);
}

/**
 * vfp_ledger_get_restore_point() - @pci's restore point
 *
 * *@ret_rp is NULL (and 0 returned) when the VF has none: never attached, or
 * restored already. -EINVAL when the stored one cannot be read.
 */
VFP_EXPORT int vfp_ledger_get_restore_point(struct vfp_ledger *l, const char *pci,
					    struct vfp_restore_point **ret_rp)
{
	static const char sql[] = "SELECT original FROM vfs WHERE pci = ?";
	struct vfp_restore_point *rp = NULL;
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, pci, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW && col_text(st, 0))
		r = vfp_restore_point_from_text(col_text(st, 0), &rp);
	sqlite3_reset(st);
	if (r < 0)
		return vfp_ledger_fail(l, r, "VF %s: its restore point is unreadable", pci);
	*ret_rp = rp;
	return 0;
}
