/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Quarantine and repair: a VF whose reset or check failed leaves the pool
 * with the reason, and comes back only through a repair that worked. Both
 * are audited (the vfs table's triggers) like every other state change.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "ledger-private.h"

/* @pci's state and holder, or -ENOENT naming it. */
static int vf_now(struct vfp_ledger *l, const char *pci, struct vfp_ledger_vf *ret)
{
	int r = vfp_ledger_get_vf(l, pci, ret);

	return r == -ENOENT ? vfp_ledger_fail(l, -ENOENT, "no VF %s in the ledger", pci) : r;
}

/**
 * vfp_ledger_quarantine_vf() - take VF @pci out of use, saying @reason
 *
 * For a VF of a release in progress (its reset or check failed): the
 * release, when confirmed, frees the allocation's other VFs and leaves
 * this one quarantined. -ENOENT for an unknown VF.
 */
VFP_EXPORT int vfp_ledger_quarantine_vf(struct vfp_ledger *l, const char *pci, const char *reason)
{
	struct vfp_ledger_vf vf;
	int r = vfp_ledger_begin_tx(l);

	if (r >= 0)
		r = vf_now(l, pci, &vf);
	if (r >= 0)
		r = vfp_ledger_set_vf_state(l, pci, VFP_VF_QUARANTINED, reason);
	if (r < 0) {
		vfp_ledger_rollback_tx(l);
		return r;
	}
	return vfp_ledger_commit_tx(l);
}

/* Only a quarantined VF that no live allocation holds is repaired. */
static int may_repair(struct vfp_ledger *l, const char *pci)
{
	struct vfp_ledger_vf vf;
	int r = vf_now(l, pci, &vf);

	if (r < 0)
		return r;
	if (vf.allocation[0])
		return vfp_ledger_fail(l, -EBUSY, "VF %s is held by allocation %s: release it first",
				       pci, vf.allocation);
	if (vf.state != VFP_VF_QUARANTINED)
		return vfp_ledger_fail(l, -EBUSY, "VF %s is %s: only a quarantined VF is repaired",
				       pci, vfp_vf_state_to_string(vf.state));
	return 0;
}

/**
 * vfp_ledger_repair_vf() - record a repair of quarantined VF @pci
 * @ok: the repair worked: the VF is free again; else it stays quarantined
 *      with @reason (and the time of this attempt)
 *
 * With @ok false and @reason NULL, only checks that a repair may start.
 * -EBUSY when the VF is not quarantined or an allocation holds it;
 * -ENOENT for an unknown VF.
 */
VFP_EXPORT int vfp_ledger_repair_vf(struct vfp_ledger *l, const char *pci, bool ok,
				    const char *reason)
{
	int r = vfp_ledger_begin_tx(l);

	if (r >= 0)
		r = may_repair(l, pci);
	if (r >= 0 && (ok || reason))
		r = vfp_ledger_set_vf_state(l, pci, ok ? VFP_VF_FREE : VFP_VF_QUARANTINED,
					    ok ? NULL : reason);
	if (r < 0) {
		vfp_ledger_rollback_tx(l);
		return r;
	}
	return vfp_ledger_commit_tx(l);
}
