/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the ledger forgets: released allocations past their retention (by
 * age, then by number, oldest first) with their VF rows, and the oldest
 * audit rows beyond their number. Under any churn the file stays bounded;
 * SQLite reuses the pages freed.
 */
#include "config.h"

#include <errno.h>
#include <time.h>

#include "ledger-private.h"

/* The released allocations to forget, as a subquery on allocations.id. */
#define DOOMED                                                                                     \
	"SELECT id FROM allocations WHERE state = 'released' AND (updated < ?1 OR id IN "         \
	"(SELECT id FROM allocations WHERE state = 'released' ORDER BY updated DESC "            \
	"LIMIT -1 OFFSET ?2))"

static int run(struct vfp_ledger *l, const char *sql, long long a, long long b, const char *what)
{
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, a);
	if (sqlite3_bind_parameter_count(st) > 1)
		sqlite3_bind_int64(st, 2, b);
	return vfp_ledger_step_done(l, st, what);
}

static int prune_in_tx(struct vfp_ledger *l, const struct vfp_retention *keep, unsigned *ret)
{
	long long cutoff = (long long)l->now() - keep->seconds;
	int r;

	r = run(l, "DELETE FROM allocation_vfs WHERE allocation_id IN (" DOOMED ")", cutoff,
		keep->allocations, "prune allocation VFs");
	if (r >= 0)
		r = run(l, "DELETE FROM allocations WHERE id IN (" DOOMED ")", cutoff,
			keep->allocations, "prune allocations");
	if (r >= 0)
		*ret = (unsigned)r;
	if (r >= 0)
		r = run(l, "DELETE FROM audit WHERE seq <= (SELECT max(seq) FROM audit) - ?1",
			keep->audit, 0, "prune audit");
	return r;
}

/**
 * vfp_ledger_prune() - forget what @keep says is past keeping
 * @ret_pruned: how many released allocations went (may be NULL)
 *
 * One transaction. Live allocations are never touched; a released one's
 * idempotency key is forgotten with it.
 */
VFP_EXPORT int vfp_ledger_prune(struct vfp_ledger *l, const struct vfp_retention *keep,
				unsigned *ret_pruned)
{
	unsigned pruned = 0;
	int r = vfp_ledger_begin_tx(l);

	if (r >= 0)
		r = prune_in_tx(l, keep, &pruned);
	if (r < 0) {
		vfp_ledger_rollback_tx(l);
		return r;
	}
	r = vfp_ledger_commit_tx(l);
	if (r >= 0 && ret_pruned)
		*ret_pruned = pruned;
	return r;
}
