/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF hot-swap, step by step in the ledger (the swaps table): a running
 * guest's failover NIC moves from its VF (old) to another (new) while its
 * standby carries the traffic. The new VF is claimed first, as an allocation
 * of its own (the swap's claim, found by its idempotency key), so that the
 * allocation keeps its old VF until the new one is in the guest; then the
 * two allocations exchange the VFs in one transaction, and the swap's claim,
 * now holding the old VF, is released as any claim is (restore, reset,
 * health). The steps:
 *   claiming    the row is written; the swap's claim may exist
 *   claimed     the new VF is the swap's claim's and may be prepared
 *   unplugging  the old VF may have left the guest
 *   plugging    the new VF may be in the guest
 *   exchanged   the allocation holds the new VF, the swap's claim the old;
 *               once that claim is released, only the guest's MAC steered
 *               onto the standby's PFs is left (steered), taken out later
 * The agent resolves a row left by a crash at its next start (agent/swap.c):
 * before the new VF is in the guest, back (the old VF plugged again where it
 * left); after, forward.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ledger-args.h"

static const char *const step_names[] = {
	[VFP_SWAP_CLAIMING] = "claiming",   [VFP_SWAP_CLAIMED] = "claimed",
	[VFP_SWAP_UNPLUGGING] = "unplugging", [VFP_SWAP_PLUGGING] = "plugging",
	[VFP_SWAP_EXCHANGED] = "exchanged",
};

VFP_EXPORT const char *vfp_swap_step_to_string(enum vfp_swap_step s)
{
	return (unsigned)s < ELEMENTSOF(step_names) ? step_names[s] : NULL;
}

static int step_from_string(const char *s)
{
	for (size_t i = 0; s && i < ELEMENTSOF(step_names); i++)
		if (strcmp(s, step_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

/**
 * vfp_ledger_swap_begin() - a swap of allocation @id's VF @old_pci begins;
 * its claim will carry the idempotency key @temp_key
 *
 * -EBUSY when the allocation has a swap or an intent under way, or is not
 * attached; -ENOENT when there is no such allocation.
 */
VFP_EXPORT int vfp_ledger_swap_begin(struct vfp_ledger *l, const char *id, const char *old_pci,
				     const char *temp_key)
{
	static const char sql[] =
		"INSERT INTO swaps (allocation_id, old_pci, temp_key, step, started) "
		"SELECT a.id, ?, ?, 'claiming', ? FROM allocations a "
		"JOIN allocation_vfs v ON v.allocation_id = a.id AND v.pci = ? AND v.live = 1 "
		"WHERE a.id = ? AND a.state = 'attached' AND "
		"NOT EXISTS (SELECT 1 FROM intents WHERE allocation_id = a.id) AND "
		"NOT EXISTS (SELECT 1 FROM swaps WHERE allocation_id = a.id)";
	struct vfp_allocation *a = NULL;
	int r = vfp_ledger_run(l, sql, "swap begin",
			       LEDGER_ARGS(ARG_TEXT(old_pci), ARG_TEXT(temp_key), ARG_INT(l->now()),
					   ARG_TEXT(old_pci), ARG_TEXT(id)));

	if (r != 0)
		return r < 0 ? r : 0;
	r = vfp_ledger_get_allocation(l, id, &a);
	vfp_allocation_unref(a);
	return r < 0 ? r : vfp_ledger_fail(l, -EBUSY, "allocation %s is not attached with VF %s, "
					   "or has a swap, attach, detach or release under way",
					   id, old_pci);
}

/* Allocation @id's swap is at @step now; the new VF (@new_pci, may be NULL) once claimed. */
VFP_EXPORT int vfp_ledger_swap_step(struct vfp_ledger *l, const char *id, enum vfp_swap_step step,
				    const char *new_pci)
{
	static const char sql[] = "UPDATE swaps SET step = ?, new_pci = coalesce(?, new_pci) "
				  "WHERE allocation_id = ?";
	int r = vfp_ledger_run(l, sql, "swap step",
			       LEDGER_ARGS(ARG_TEXT(vfp_swap_step_to_string(step)), ARG_TEXT(new_pci),
					   ARG_TEXT(id)));

	return r < 0 ? r : r == 0 ? vfp_ledger_fail(l, -ENOENT, "allocation %s has no swap", id) : 0;
}

static int position_of(struct vfp_ledger *l, const char *id, const char *pci, int *ret)
{
	static const char sql[] = "SELECT position FROM allocation_vfs "
				  "WHERE allocation_id = ? AND pci = ? AND live = 1";
	sqlite3_stmt *st;
	int r = vfp_ledger_bind(l, sql, &st, LEDGER_ARGS(ARG_TEXT(id), ARG_TEXT(pci)));

	if (r < 0)
		return r;
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		*ret = sqlite3_column_int(st, 0);
	sqlite3_reset(st);
	return r == SQLITE_ROW ? 0 : vfp_ledger_fail(l, -ENOENT, "VF %s is not allocation %s's", pci, id);
}

static int move_vf(struct vfp_ledger *l, const char *from, const char *to, const char *pci,
		   int position)
{
	static const char sql[] = "UPDATE allocation_vfs SET allocation_id = ?, position = ? "
				  "WHERE allocation_id = ? AND pci = ? AND live = 1";
	int r = vfp_ledger_run(l, sql, "swap exchange",
			       LEDGER_ARGS(ARG_TEXT(to), ARG_INT(position), ARG_TEXT(from),
					   ARG_TEXT(pci)));

	return r < 0 ? r : r == 1 ? 0 : vfp_ledger_fail(l, -ENOENT, "VF %s left allocation %s", pci, from);
}

/*
 * vfp_ledger_swap_exchange() - allocation @id takes the swap's new VF (in the
 * old one's place, attached) and the swap's claim @temp_id the old VF
 * (reserved), in one transaction with the step "exchanged"
 *
 * Done already (the step says so) is not an error.
 */
VFP_EXPORT int vfp_ledger_swap_exchange(struct vfp_ledger *l, const char *id, const char *temp_id)
{
	struct vfp_swap s;
	int pos_old, pos_new;
	int r = vfp_ledger_swap_get(l, id, &s);

	if (r < 0 || s.step == VFP_SWAP_EXCHANGED)
		return r < 0 ? r : 0;
	r = vfp_ledger_begin_tx(l);
	if (r < 0)
		return r;
	r = position_of(l, id, s.old_pci, &pos_old);
	if (r >= 0)
		r = position_of(l, temp_id, s.new_pci, &pos_new);
	if (r >= 0)
		r = move_vf(l, id, temp_id, s.old_pci, pos_new);
	if (r >= 0)
		r = move_vf(l, temp_id, id, s.new_pci, pos_old);
	if (r >= 0)
		r = vfp_ledger_set_vf_state(l, s.new_pci, VFP_VF_ATTACHED, NULL);
	if (r >= 0)
		r = vfp_ledger_set_vf_state(l, s.old_pci, VFP_VF_RESERVED, "swapped out");
	if (r >= 0)
		r = vfp_ledger_swap_step(l, id, VFP_SWAP_EXCHANGED, NULL);
	if (r < 0) {
		vfp_ledger_rollback_tx(l);
		return r;
	}
	return vfp_ledger_commit_tx(l);
}

/*
 * Whether allocation @id's swap put the guest's MAC in the PFs' filters
 * itself (@steered): written before the entry is made, cleared when the entry
 * was there already (the operator's), so that only the swap's own is taken out.
 */
VFP_EXPORT int vfp_ledger_swap_set_steered(struct vfp_ledger *l, const char *id, bool steered)
{
	static const char sql[] = "UPDATE swaps SET steered = ? WHERE allocation_id = ?";
	int r = vfp_ledger_run(l, sql, "swap steered",
			       LEDGER_ARGS(ARG_INT(steered), ARG_TEXT(id)));

	return r < 0 ? r : r == 0 ? vfp_ledger_fail(l, -ENOENT, "allocation %s has no swap", id) : 0;
}

/* 1 when allocation @id's swap steered the guest's MAC itself, 0 when not; -ENOENT: no swap. */
VFP_EXPORT int vfp_ledger_swap_steered(struct vfp_ledger *l, const char *id)
{
	static const char sql[] = "SELECT steered FROM swaps WHERE allocation_id = ?";
	sqlite3_stmt *st;
	int r = vfp_ledger_bind(l, sql, &st, LEDGER_ARGS(ARG_TEXT(id)));

	if (r < 0)
		return r;
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		r = sqlite3_column_int(st, 0) != 0;
	else if (r == SQLITE_DONE)
		r = vfp_ledger_fail(l, -ENOENT, "allocation %s has no swap", id);
	else
		r = vfp_ledger_errno(l, r, "swap");
	sqlite3_reset(st);
	return r;
}

/* The swap is over (done or undone): its row goes. Gone already is not an error. */
VFP_EXPORT int vfp_ledger_swap_end(struct vfp_ledger *l, const char *id)
{
	static const char sql[] = "DELETE FROM swaps WHERE allocation_id = ?";
	int r = vfp_ledger_run(l, sql, "swap end", LEDGER_ARGS(ARG_TEXT(id)));

	return r < 0 ? r : 0;
}

static void fill_swap(sqlite3_stmt *st, void *elem)
{
	struct vfp_swap *s = elem;

	snprintf(s->allocation, sizeof(s->allocation), "%s", col_text(st, 0) ?: "");
	snprintf(s->old_pci, sizeof(s->old_pci), "%s", col_text(st, 1) ?: "");
	snprintf(s->new_pci, sizeof(s->new_pci), "%s", col_text(st, 2) ?: "");
	snprintf(s->temp_key, sizeof(s->temp_key), "%s", col_text(st, 3) ?: "");
	s->step = (enum vfp_swap_step)step_from_string(col_text(st, 4));
	s->started = sqlite3_column_int64(st, 5);
}

#define SWAP_COLUMNS "SELECT allocation_id, old_pci, new_pci, temp_key, step, started FROM swaps "

/* Every swap under way (or left by a crash), oldest first; *@ret free()d by the caller. */
VFP_EXPORT int vfp_ledger_swap_list(struct vfp_ledger *l, struct vfp_swap **ret, size_t *ret_n)
{
	static const char sql[] = SWAP_COLUMNS "ORDER BY started, allocation_id";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	return r < 0 ? r : vfp_ledger_collect(l, st, sizeof(**ret), fill_swap, (void **)ret, ret_n,
					      "swaps");
}

/* Allocation @id's swap; -ENOENT when it has none. */
VFP_EXPORT int vfp_ledger_swap_get(struct vfp_ledger *l, const char *id, struct vfp_swap *ret)
{
	static const char sql[] = SWAP_COLUMNS "WHERE allocation_id = ?";
	sqlite3_stmt *st;
	int r = vfp_ledger_bind(l, sql, &st, LEDGER_ARGS(ARG_TEXT(id)));

	if (r < 0)
		return r;
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		fill_swap(st, ret);
	sqlite3_reset(st);
	if (r == SQLITE_ROW)
		return 0;
	return r == SQLITE_DONE ? vfp_ledger_fail(l, -ENOENT, "allocation %s has no swap", id)
				: vfp_ledger_errno(l, r, "swap");
}

/* 1 while allocation @id has a swap under way (or left by a crash), else 0; <0 on failure. */
int vfp_ledger_swap_pending(struct vfp_ledger *l, const char *id)
{
	static const char sql[] = "SELECT 1 FROM swaps WHERE allocation_id = ?";
	sqlite3_stmt *st;
	int r = vfp_ledger_bind(l, sql, &st, LEDGER_ARGS(ARG_TEXT(id)));

	if (r < 0)
		return r;
	r = sqlite3_step(st);
	sqlite3_reset(st);
	return r == SQLITE_ROW ? 1 : r == SQLITE_DONE ? 0 : vfp_ledger_errno(l, r, "swaps");
}
