/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Intents: every side effect on a VF (attach, detach, release) is written
 * to the ledger before it happens and confirmed after. A crash between
 * the two leaves the intent behind, and vfp_ledger_reconcile() resolves it
 * by the rules written there (DESIGN.md §3):
 *
 *   attach   rolled back, unless the host shows it done (then confirmed);
 *   detach   rolled forward: detached again (idempotent), then reserved;
 *   release  rolled forward: restored, then free; a failed restore
 *            quarantines the VF.
 *
 * States: free → reserved (claim) → attached (attach confirmed) →
 * releasing (release begun) → free (release confirmed); quarantined and
 * unavailable on the side.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ledger-args.h"
#include "ledger-private.h"

static const char *const op_names[] = {
	[VFP_OP_ATTACH] = "attach",
	[VFP_OP_DETACH] = "detach",
	[VFP_OP_RELEASE] = "release",
};

VFP_EXPORT const char *vfp_op_to_string(enum vfp_op op)
{
	return op < ELEMENTSOF(op_names) ? op_names[op] : "?";
}

int vfp_ledger_set_vf_state(struct vfp_ledger *l, const char *pci, enum vfp_vf_state state,
			    const char *reason)
{
	static const char sql[] = "UPDATE vfs SET state = ?, reason = ?, updated = ? WHERE pci = ?";
	sqlite3_stmt *st;
	int r;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, vfp_vf_state_to_string(state), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, l->now());
	sqlite3_bind_text(st, 4, pci, -1, SQLITE_STATIC);
	return vfp_ledger_step_done(l, st, "VF state");
}

int vfp_ledger_set_allocation_state(struct vfp_ledger *l, const char *id,
				    enum vfp_allocation_state state)
{
	static const char sql[] = "UPDATE allocations SET state = ?, updated = ? WHERE id = ?";
	sqlite3_stmt *st;
	int r;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, vfp_allocation_state_to_string(state), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, l->now());
	sqlite3_bind_text(st, 3, id, -1, SQLITE_STATIC);
	return vfp_ledger_step_done(l, st, "allocation state");
}

static int set_one_vf_state(struct vfp_ledger *l, const char *pci, const char *state,
			    const char *reason, time_t now)
{
	static const char sql[] = "UPDATE vfs SET state = ?1, reason = ?2, updated = ?3 "
				  "WHERE pci = ?4 AND state NOT IN ('unavailable', 'quarantined')";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, now);
	sqlite3_bind_text(st, 4, pci, -1, SQLITE_TRANSIENT);
	return vfp_ledger_step_done(l, st, "allocation VF states");
}

/*
 * The live VFs of an allocation move to @state; unavailable ones stay
 * unavailable, quarantined ones quarantined: a VF quarantined while its
 * allocation lives (its reset failed during the release, the rollback of
 * a failed attach did not bring it home) is not freed, reserved or
 * attached with the rest. Only a repair lifts a quarantine.
 *
 * One UPDATE per VF, by its key, in address order (the audit trigger's rows
 * come in that order, as they did from one UPDATE over the allocation's
 * VFs): an UPDATE with a subquery in its WHERE, on a table with triggers,
 * gathers its keys in temporary b-trees first, which cost twice the
 * updates themselves.
 */
int vfp_ledger_set_allocation_vfs_state(struct vfp_ledger *l, const char *id,
					enum vfp_vf_state state, const char *reason)
{
	static const char sql[] = "SELECT pci FROM allocation_vfs WHERE allocation_id = ? "
				  "AND live = 1 ORDER BY pci";
	const char *name = vfp_vf_state_to_string(state);
	time_t now = l->now();
	sqlite3_stmt *st;
	int r, rc = SQLITE_DONE, n = 0;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = set_one_vf_state(l, (const char *)sqlite3_column_text(st, 0), name, reason, now);
		n += r > 0 ? r : 0;
	}
	if (r >= 0 && rc != SQLITE_DONE)
		r = vfp_ledger_errno(l, rc, "allocation VFs");
	sqlite3_reset(st);
	return r < 0 ? r : n;
}

/* A quarantining end says why on the allocation too: "restore failed: …". */
static int flag_allocation(struct vfp_ledger *l, const char *id, const char *reason)
{
	static const char sql[] = "UPDATE allocations SET flag = 'restore failed: ' || ? "
				  "WHERE id = ?";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, reason, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	return vfp_ledger_step_done(l, st, "allocation flag");
}

/*
 * Ends an allocation: its VFs go to @vf_state (free, or quarantined after
 * a failed restore, the allocation flagged with @reason; a vanished one
 * stays unavailable), its links stop being live (the GUIDs return to the
 * range, noted as its owner's: ledger-guid.c), and it is kept as 'released' for its idempotency key and history.
 */
int vfp_ledger_end_allocation(struct vfp_ledger *l, const char *id, enum vfp_vf_state vf_state,
			      const char *reason)
{
	static const char unlink_sql[] =
		"UPDATE allocation_vfs SET live = 0 WHERE allocation_id = ? AND live = 1";
	sqlite3_stmt *st;
	int r;

	r = vfp_ledger_set_allocation_vfs_state(l, id, vf_state, reason);
	if (r >= 0 && vf_state == VFP_VF_QUARANTINED && reason)
		r = flag_allocation(l, id, reason);
	if (r >= 0)
		r = vfp_ledger_note_guids_released(l, id);
	if (r >= 0)
		r = vfp_ledger_stmt(l, unlink_sql, &st);
	if (r >= 0) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		r = vfp_ledger_step_done(l, st, "end allocation");
	}
	if (r >= 0)
		r = vfp_ledger_set_allocation_state(l, id, VFP_ALLOCATION_RELEASED);
	return r;
}

static int allocation_state(struct vfp_ledger *l, const char *id,
			    enum vfp_allocation_state *ret_state, char intent[static 16])
{
	static const char sql[] = "SELECT a.state, i.op FROM allocations a LEFT JOIN intents i "
				  "ON i.allocation_id = a.id WHERE a.id = ?";
	sqlite3_stmt *st;
	int r, rc;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(st);
		return vfp_ledger_fail(l, -ENOENT, "no allocation %s", id);
	}
	if (rc != SQLITE_ROW)
		return vfp_ledger_errno(l, rc, "allocation");
	*ret_state = vfp_allocation_state_from_string(col_text(st, 0));
	snprintf(intent, 16, "%s", col_text(st, 1) ? col_text(st, 1) : "");
	sqlite3_reset(st);
	return 0;
}

/* Which allocation states an operation may start from. */
static bool may_begin(enum vfp_op op, enum vfp_allocation_state state)
{
	switch (op) {
	case VFP_OP_ATTACH:
		return state == VFP_ALLOCATION_RESERVED;
	case VFP_OP_DETACH:
		return state == VFP_ALLOCATION_ATTACHED;
	case VFP_OP_RELEASE:
		return state == VFP_ALLOCATION_RESERVED || state == VFP_ALLOCATION_ATTACHED;
	}
	return false;
}

static int begin_in_tx(struct vfp_ledger *l, const char *id, enum vfp_op op)
{
	static const char sql[] = "INSERT INTO intents(allocation_id, op, started) VALUES (?, ?, ?)";
	enum vfp_allocation_state state = VFP_ALLOCATION_RELEASED;
	char intent[16];
	sqlite3_stmt *st;
	int r;

	r = allocation_state(l, id, &state, intent);
	if (r < 0)
		return r;
	if (intent[0])
		return vfp_ledger_fail(l, -EBUSY, "allocation %s is busy: %s in progress", id,
				       intent);
	r = vfp_ledger_swap_pending(l, id); /* its VF is changing hands (ledger-swap.c) */
	if (r != 0)
		return r < 0 ? r : vfp_ledger_fail(l, -EBUSY, "allocation %s is busy: a swap in "
						   "progress", id);
	if (!may_begin(op, state))
		return vfp_ledger_fail(l, -EBUSY, "allocation %s is %s: cannot %s it", id,
				       vfp_allocation_state_to_string(state),
				       vfp_op_to_string(op));
	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, vfp_op_to_string(op), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, l->now());
	r = vfp_ledger_step_done(l, st, "intent");
	if (r >= 0 && op == VFP_OP_RELEASE) {
		r = vfp_ledger_set_allocation_state(l, id, VFP_ALLOCATION_RELEASING);
		if (r >= 0)
			r = vfp_ledger_set_allocation_vfs_state(l, id, VFP_VF_RELEASING, NULL);
	}
	return r;
}

/*
 * The attach intent of allocation @id, claimed attached in this transaction
 * (vfp_claim.attach): its end is written as any attach's, and until then a
 * restart rolls it back to reserved by the same rule.
 */
int vfp_ledger_begin_attached(struct vfp_ledger *l, const char *id)
{
	static const char sql[] = "INSERT INTO intents(allocation_id, op, started) "
				  "VALUES (?, 'attach', ?)";

	return vfp_ledger_run(l, sql, "intent", LEDGER_ARGS(ARG_TEXT(id), ARG_INT(l->now())));
}

/* @op begun on every allocation of @ids in one transaction, all or none. */
static int begin_op(struct vfp_ledger *l, const char *const *ids, size_t n, enum vfp_op op,
		    bool durable)
{
	int r = durable ? vfp_ledger_begin_tx(l) : vfp_ledger_begin_lazy_tx(l);

	for (size_t i = 0; r >= 0 && i < n; i++)
		r = begin_in_tx(l, ids[i], op);
	if (r < 0) {
		vfp_ledger_rollback_tx(l);
		return r;
	}
	return vfp_ledger_commit_tx(l);
}

/**
 * vfp_ledger_begin() - record that @op on allocation @id is about to happen
 *
 * Durable before it returns. -EBUSY when another operation is in
 * progress or the allocation's state does not allow @op; -ENOENT when
 * there is no such allocation.
 */
VFP_EXPORT int vfp_ledger_begin(struct vfp_ledger *l, const char *id, enum vfp_op op)
{
	return begin_op(l, &id, 1, op, true);
}

/**
 * vfp_ledger_begin_volatile() - vfp_ledger_begin() for an @op whose effects
 * a power cut undoes (kernel state: PF settings, drivers, namespaces, a
 * running domain)
 *
 * It does not wait for the disk (see vfp_ledger_begin_lazy_tx()): a crash
 * of the agent keeps it; a power cut that loses it also resets what @op
 * changed, and the next start sees the allocation as it was before @op.
 */
VFP_EXPORT int vfp_ledger_begin_volatile(struct vfp_ledger *l, const char *id, enum vfp_op op)
{
	return begin_op(l, &id, 1, op, false);
}

/**
 * vfp_ledger_begin_volatile_many() - vfp_ledger_begin_volatile() on each of
 * the @n allocations @ids, in one transaction: all begun, or none (the
 * error is the first refusal's)
 */
VFP_EXPORT int vfp_ledger_begin_volatile_many(struct vfp_ledger *l, const char *const *ids,
					      size_t n, enum vfp_op op)
{
	return begin_op(l, ids, n, op, false);
}

/*
 * An attach done: the allocation attached, and its VFs with it, unless it was
 * claimed attached (vfp_ledger_begin_attached()): then both are so already.
 */
static int finish_attach(struct vfp_ledger *l, const char *id)
{
	static const char sql[] = "UPDATE allocations SET state = 'attached', updated = ? "
				  "WHERE id = ? AND state != 'attached'";
	int r = vfp_ledger_run(l, sql, "allocation state",
			       LEDGER_ARGS(ARG_INT(l->now()), ARG_TEXT(id)));

	return r <= 0 ? r : vfp_ledger_set_allocation_vfs_state(l, id, VFP_VF_ATTACHED, NULL);
}

/* The states an operation ends in, when it worked and when it did not. */
static int finish_in_tx(struct vfp_ledger *l, const char *id, enum vfp_op op, bool ok,
			const char *reason)
{
	switch (op) {
	case VFP_OP_ATTACH:
		if (ok)
			return finish_attach(l, id);
		/* fall through */
	case VFP_OP_DETACH: {
		bool attached = (op == VFP_OP_ATTACH) == ok;
		int r = vfp_ledger_set_allocation_state(l, id, attached ? VFP_ALLOCATION_ATTACHED
									: VFP_ALLOCATION_RESERVED);

		return r < 0 ? r
			     : vfp_ledger_set_allocation_vfs_state(
				       l, id, attached ? VFP_VF_ATTACHED : VFP_VF_RESERVED,
				       ok ? NULL : reason);
	}
	case VFP_OP_RELEASE:
		return vfp_ledger_end_allocation(l, id, ok ? VFP_VF_FREE : VFP_VF_QUARANTINED,
						 ok ? NULL : reason);
	}
	return -EINVAL;
}

static int confirm_in_tx(struct vfp_ledger *l, const char *id, enum vfp_op op, bool ok,
			 const char *reason)
{
	static const char del[] = "DELETE FROM intents WHERE allocation_id = ? AND op = ?";
	sqlite3_stmt *st;
	int r;

	r = vfp_ledger_stmt(l, del, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, vfp_op_to_string(op), -1, SQLITE_STATIC);
	r = vfp_ledger_step_done(l, st, "confirm");
	if (r == 0)
		return vfp_ledger_fail(l, -ENOENT, "allocation %s has no %s in progress", id,
				       vfp_op_to_string(op));
	if (r < 0)
		return r;
	return finish_in_tx(l, id, op, ok, reason);
}

/**
 * vfp_ledger_confirm() - record how @op on allocation @id ended
 * @ok: the side effect happened (attach/detach done, VFs restored)
 * @reason: why it failed, kept on the VFs (a quarantined VF says why)
 *
 * -ENOENT when @op was not begun. It does not wait for the disk: it is
 * durable with the next durable commit (a claim, an intent). A power cut
 * before then leaves the intent open, and the next start resolves it by
 * what the host shows, as after a crash in the middle of @op.
 */
VFP_EXPORT int vfp_ledger_confirm(struct vfp_ledger *l, const char *id, enum vfp_op op, bool ok,
				  const char *reason)
{
	return vfp_ledger_confirm_many(l, &id, 1, op, ok, reason);
}

/**
 * vfp_ledger_confirm_many() - vfp_ledger_confirm() for each of the @n
 * allocations @ids, in one transaction: all confirmed, or none (-ENOENT
 * when one had no @op in progress)
 */
VFP_EXPORT int vfp_ledger_confirm_many(struct vfp_ledger *l, const char *const *ids, size_t n,
				       enum vfp_op op, bool ok, const char *reason)
{
	int r = vfp_ledger_begin_lazy_tx(l);

	for (size_t i = 0; r >= 0 && i < n; i++)
		r = confirm_in_tx(l, ids[i], op, ok, reason);
	if (r < 0) {
		vfp_ledger_rollback_tx(l);
		return r;
	}
	r = vfp_ledger_commit_tx(l);
	for (size_t i = 0; r >= 0 && i < n; i++)
		vfp_info(l->ctx, "allocation %s: %s %s", ids[i], vfp_op_to_string(op),
			 ok ? "done" : "failed");
	return r;
}
