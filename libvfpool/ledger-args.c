/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>

#include "ledger-args.h"

/*
 * @sql's statement (the ledger's cached one) with @args bound, for the caller to
 * step; a statement with other than @n parameters is a bug, said as such.
 */
int vfp_ledger_bind(struct vfp_ledger *l, const char *sql, sqlite3_stmt **ret,
		    const struct ledger_arg *args, size_t n)
{
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	if ((size_t)sqlite3_bind_parameter_count(st) != n)
		return vfp_ledger_fail(l, -EINVAL, "%zu parameters for \"%.60s\"", n, sql);
	for (size_t i = 0; i < n; i++) {
		int rc = args[i].is_text
				 ? sqlite3_bind_text(st, (int)i + 1, args[i].text, -1, SQLITE_STATIC)
				 : sqlite3_bind_int64(st, (int)i + 1, args[i].n);

		if (rc != SQLITE_OK) {
			sqlite3_reset(st);
			return vfp_ledger_errno(l, rc, "bind");
		}
	}
	*ret = st;
	return 0;
}

/* @sql run once with @args: the rows it changed, or <0 (@what names it in the message). */
int vfp_ledger_run(struct vfp_ledger *l, const char *sql, const char *what,
		   const struct ledger_arg *args, size_t n)
{
	sqlite3_stmt *st;
	int r = vfp_ledger_bind(l, sql, &st, args, n);

	return r < 0 ? r : vfp_ledger_step_done(l, st, what);
}
