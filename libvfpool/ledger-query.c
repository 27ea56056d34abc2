/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading the ledger: allocations, a VF's entry, counts, the audit log, restore points. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ledger-private.h"

static json_t *text_or_null(sqlite3_stmt *st, int i)
{
	return col_text(st, i) ? json_string(col_text(st, i)) : json_null();
}

static json_t *int_or_null(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
							  : json_integer(sqlite3_column_int64(st, i));
}

static json_t *parsed_or_null(sqlite3_stmt *st, int i)
{
	json_t *v = col_text(st, i) ? json_loads(col_text(st, i), 0, NULL) : NULL;

	return v ? v : json_null();
}

static json_t *allocation_vfs_json(struct vfp_ledger *l, const char *id)
{
	static const char sql[] = "SELECT v.pci, f.pf, f.vf_index, v.guid, f.state, v.live "
				  "FROM allocation_vfs v JOIN vfs f ON f.pci = v.pci "
				  "WHERE v.allocation_id = ? ORDER BY v.position";
	json_t *a = json_array();
	sqlite3_stmt *st;
	int rc;

	if (!a || vfp_ledger_stmt(l, sql, &st) < 0) {
		json_decref(a);
		return NULL;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		bool live = sqlite3_column_int(st, 5);

		json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:o, s:s}", "pci",
						   col_text(st, 0), "pf", col_text(st, 1), "index",
						   sqlite3_column_int(st, 2), "guid",
						   text_or_null(st, 3), "state",
						   live ? col_text(st, 4) : "released"));
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *allocation_row_json(struct vfp_ledger *l, sqlite3_stmt *st)
{
	json_t *o = json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:I, s:I}", "id",
			      col_text(st, 0), "pool", col_text(st, 1), "owner",
			      parsed_or_null(st, 2), "state", col_text(st, 3), "settings",
			      parsed_or_null(st, 4), "idempotency_key", text_or_null(st, 5), "flag",
			      text_or_null(st, 6), "lease_expires", int_or_null(st, 7), "created",
			      (json_int_t)sqlite3_column_int64(st, 8), "updated",
			      (json_int_t)sqlite3_column_int64(st, 9));

	if (o && json_object_set_new(o, "vfs", allocation_vfs_json(l, col_text(st, 0))) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

#define ALLOCATION_COLUMNS                                                                         \
	"SELECT id, pool, owner, state, settings, idempotency_key, flag, lease_expires, created, " \
	"updated FROM allocations "

/*
 * {"id","pool","owner":{…},"state","settings":{…},"idempotency_key","flag",
 *  "lease_expires","created","updated","vfs":[{"pci","pf","index","guid","state"}]}
 */
json_t *vfp_ledger_allocation_json(struct vfp_ledger *l, const char *id)
{
	static const char sql[] = ALLOCATION_COLUMNS "WHERE id = ?";
	_cleanup_free_ char *copy = strdup(id); /* @id may live in the cached statement */
	sqlite3_stmt *st;
	json_t *o = NULL;

	if (!copy || vfp_ledger_stmt(l, sql, &st) < 0)
		return NULL;
	sqlite3_bind_text(st, 1, copy, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		o = allocation_row_json(l, st);
	sqlite3_reset(st);
	return o;
}

/* NULL when there is no such allocation (vfp_ledger_get_error() says so). */
VFP_EXPORT json_t *vfp_ledger_get_allocation(struct vfp_ledger *l, const char *id)
{
	json_t *o = vfp_ledger_allocation_json(l, id);

	if (!o)
		vfp_ledger_fail(l, -ENOENT, "no allocation %s", id);
	return o;
}

/**
 * vfp_ledger_list_allocations() - allocations, oldest first
 * @owner_key: only this owner's (see vfp_owner_key()), or NULL for all
 * @with_released: include ended allocations
 */
VFP_EXPORT json_t *vfp_ledger_list_allocations(struct vfp_ledger *l, const char *owner_key,
					       bool with_released)
{
	static const char sql[] = ALLOCATION_COLUMNS
		"WHERE (?1 IS NULL OR owner_key = ?1) AND (?2 OR state != 'released') "
		"ORDER BY created, id";
	json_t *a = json_array();
	sqlite3_stmt *st;
	int rc;

	if (!a || vfp_ledger_stmt(l, sql, &st) < 0) {
		json_decref(a);
		return NULL;
	}
	if (owner_key)
		sqlite3_bind_text(st, 1, owner_key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, with_released);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(a, allocation_row_json(l, st));
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* The ledger's view of a VF: {"pool","state","reason","allocation"}; NULL if unknown. */
VFP_EXPORT json_t *vfp_ledger_get_vf(struct vfp_ledger *l, const char *pci)
{
	static const char sql[] =
		"SELECT f.pool, f.state, f.reason, (SELECT allocation_id FROM allocation_vfs v "
		"WHERE v.pci = f.pci AND v.live = 1) FROM vfs f WHERE f.pci = ?";
	sqlite3_stmt *st;
	json_t *o = NULL;

	if (vfp_ledger_stmt(l, sql, &st) < 0)
		return NULL;
	sqlite3_bind_text(st, 1, pci, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		o = json_pack("{s:o, s:s, s:o, s:o}", "pool", text_or_null(st, 0), "state",
			      col_text(st, 1), "reason", text_or_null(st, 2), "allocation",
			      text_or_null(st, 3));
	sqlite3_reset(st);
	return o;
}

/* {"<pool>": {"free": n, "reserved": n, …}}; VFs in no pool count under "". */
VFP_EXPORT json_t *vfp_ledger_counts(struct vfp_ledger *l)
{
	static const char sql[] = "SELECT coalesce(pool, ''), state, count(*) FROM vfs "
				  "GROUP BY 1, 2 ORDER BY 1, 2";
	json_t *o = json_object();
	sqlite3_stmt *st;

	if (!o || vfp_ledger_stmt(l, sql, &st) < 0) {
		json_decref(o);
		return NULL;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		json_t *pool = json_object_get(o, col_text(st, 0));

		if (!pool) {
			pool = json_object();
			json_object_set_new(o, col_text(st, 0), pool);
		}
		json_object_set_new(pool, col_text(st, 1), json_integer(sqlite3_column_int(st, 2)));
	}
	sqlite3_reset(st);
	return o;
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

/* The settings to restore on release, snapshotted before the VF was changed. */
VFP_EXPORT int vfp_ledger_set_original(struct vfp_ledger *l, const char *pci, json_t *original)
{
	static const char sql[] = "UPDATE vfs SET original = ? WHERE pci = ?";
	char *text = original ? json_dumps(original, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	sqlite3_stmt *st;
	int r;

	if (original && !text)
		return -ENOMEM;
	r = vfp_ledger_stmt(l, sql, &st);
	if (r >= 0) {
		sqlite3_bind_text(st, 1, text, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, pci, -1, SQLITE_TRANSIENT);
		r = vfp_ledger_step_done(l, st, "restore point");
		if (r == 0)
			r = vfp_ledger_fail(l, -ENOENT, "no VF %s in the ledger", pci);
	}
	free(text);
	return r < 0 ? r : 0;
}

VFP_EXPORT json_t *vfp_ledger_get_original(struct vfp_ledger *l, const char *pci)
{
	static const char sql[] = "SELECT original FROM vfs WHERE pci = ?";
	sqlite3_stmt *st;
	json_t *o = NULL;

	if (vfp_ledger_stmt(l, sql, &st) < 0)
		return NULL;
	sqlite3_bind_text(st, 1, pci, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW && col_text(st, 0))
		o = json_loads(col_text(st, 0), 0, NULL);
	sqlite3_reset(st);
	return o;
}
