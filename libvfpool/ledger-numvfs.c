/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * VF counts kept across reboots (`vfctl numvfs PF N --persist`): state the
 * agent owns, so they live in the ledger beside its other state, one row a
 * PF, written in one durable transaction each. Two at once are two rows;
 * neither is lost, and the operator's config file is never written.
 */
#include "config.h"

#include <errno.h>

#include "ledger-private.h"

/**
 * vfp_ledger_persist_numvfs() - PF @pf (its PCI address) has @numvfs VFs
 * again after a reboot; durable when this returns
 */
VFP_EXPORT int vfp_ledger_persist_numvfs(struct vfp_ledger *l, const char *pf, int numvfs)
{
	static const char sql[] = "INSERT INTO numvfs_persisted(pf, numvfs, updated) VALUES (?, ?, ?) "
				  "ON CONFLICT (pf) DO UPDATE SET numvfs = excluded.numvfs, "
				  "updated = excluded.updated";
	sqlite3_stmt *st;
	int r;

	if (!vfp_pci_addr_is_valid(pf) || numvfs < 0 || numvfs > 65535)
		return vfp_ledger_fail(l, -EINVAL, "persist: PF %.32s, %d VFs: not a PCI address "
				       "and a count of 0-65535", pf, numvfs);
	r = vfp_ledger_begin_tx(l);
	if (r < 0)
		return r;
	r = vfp_ledger_stmt(l, sql, &st);
	if (r >= 0) {
		sqlite3_bind_text(st, 1, pf, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 2, numvfs);
		sqlite3_bind_int64(st, 3, l->now());
		r = vfp_ledger_step_done(l, st, "persist numvfs");
	}
	if (r >= 0)
		return vfp_ledger_commit_tx(l);
	vfp_ledger_rollback_tx(l);
	return r;
}

/**
 * vfp_ledger_forget_numvfs() - PF @pf (its PCI address) has no persisted
 * count any more: the config's rules decide its VFs again
 *
 * 1 when it had one, 0 when not; durable when this returns.
 */
VFP_EXPORT int vfp_ledger_forget_numvfs(struct vfp_ledger *l, const char *pf)
{
	static const char sql[] = "DELETE FROM numvfs_persisted WHERE pf = ?";
	sqlite3_stmt *st;
	int r;

	if (!vfp_pci_addr_is_valid(pf))
		return vfp_ledger_fail(l, -EINVAL, "forget: PF %.32s: not a PCI address", pf);
	r = vfp_ledger_begin_tx(l);
	if (r < 0)
		return r;
	r = vfp_ledger_stmt(l, sql, &st);
	if (r >= 0) {
		sqlite3_bind_text(st, 1, pf, -1, SQLITE_STATIC);
		r = vfp_ledger_step_done(l, st, "forget numvfs");
	}
	if (r >= 0) {
		int had = sqlite3_changes(l->db) > 0;

		r = vfp_ledger_commit_tx(l);
		return r < 0 ? r : had;
	}
	vfp_ledger_rollback_tx(l);
	return r;
}

/**
 * vfp_ledger_add_persisted_numvfs() - the persisted counts into @config,
 * first among its numvfs rules (a config not yet shared: the agent's, just
 * loaded)
 */
VFP_EXPORT int vfp_ledger_add_persisted_numvfs(struct vfp_ledger *l, struct vfp_config *config)
{
	static const char sql[] = "SELECT pf, numvfs FROM numvfs_persisted ORDER BY pf";
	sqlite3_stmt *st;
	int r, rc;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
		r = vfp_config_add_persisted_numvfs(config, col_text(st, 0),
						    sqlite3_column_int(st, 1));
	if (r >= 0 && rc != SQLITE_DONE)
		r = vfp_ledger_errno(l, rc, "persisted numvfs");
	sqlite3_reset(st);
	return r;
}
