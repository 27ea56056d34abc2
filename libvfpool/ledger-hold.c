/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A reservation held while a file exists. A VM whose guest is saved to a
 * checkpoint (OpenNebula's suspend) has no domain, yet it resumes on this
 * host with its VFs: the checkpoint file is then its lease, in place of the
 * domain. Every detach says whether the reservation it leaves is held, and
 * by what; a claim starts without a hold.
 */
#include "config.h"

#include <errno.h>

#include "ledger-private.h"

/**
 * vfp_ledger_set_hold() - allocation @id, once reserved, held while @path
 * exists (an absolute path), or no longer held (@path NULL)
 *
 * Set before a detach, so that a refusal leaves the VFs where they are; it
 * counts only while the allocation is reserved. -ENOENT when there is no
 * such allocation, -EBUSY when it is neither reserved nor attached.
 */
VFP_EXPORT int vfp_ledger_set_hold(struct vfp_ledger *l, const char *id, const char *path)
{
	static const char sql[] = "UPDATE allocations SET hold_path = ?, updated = ? "
				  "WHERE id = ? AND state IN ('reserved', 'attached')";
	struct vfp_allocation *a = NULL;
	sqlite3_stmt *st;
	int r;

	if (path && path[0] != '/')
		return vfp_ledger_fail(l, -EINVAL, "hold_while: \"%.64s\" is not an absolute path",
				       path);
	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, l->now());
	sqlite3_bind_text(st, 3, id, -1, SQLITE_STATIC);
	r = vfp_ledger_step_done(l, st, "allocation hold");
	if (r != 0)
		return r < 0 ? r : 0;
	r = vfp_ledger_get_allocation(l, id, &a); /* why nothing changed: absent, or not reserved */
	vfp_allocation_unref(a);
	return r < 0 ? r : vfp_ledger_fail(l, -EBUSY, "allocation %s is neither reserved nor attached", id);
}
