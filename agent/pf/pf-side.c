/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/log.h"
#include "libvfpool/macro.h"
#include "agent/pf/pf-side.h"

/* Changes on one PF are serialized; different PFs go in parallel (striped locks). */
static pthread_mutex_t pf_locks[32] = { [0 ... 31] = PTHREAD_MUTEX_INITIALIZER };

pthread_mutex_t *pf_side_lock(const struct vfp_allocation_vf *vf)
{
	const char *pf = vf->pf;
	unsigned h = 5381;

	for (; pf && *pf; pf++)
		h = h * 33 + (unsigned char)*pf;
	return &pf_locks[h % ELEMENTSOF(pf_locks)];
}

/**
 * pf_side_begin() - @vf's PF locked, and a new restore point for what an
 * attach changes; NULL (nothing locked) when out of memory
 */
struct vfp_restore_point *pf_side_begin(const struct vfp_allocation_vf *vf)
{
	struct vfp_restore_point *rp = vfp_restore_point_new();

	if (rp)
		pthread_mutex_lock(pf_side_lock(vf));
	return rp;
}

/* What pf_side_begin() took, given back. */
void pf_side_end(const struct vfp_allocation_vf *vf, struct vfp_restore_point *rp)
{
	pthread_mutex_unlock(pf_side_lock(vf));
	vfp_restore_point_free(rp);
}

int vf_facts_read(struct agent *a, const char *pci, struct vf_facts *f)
{
	struct vfp_inventory *inv = agent_get_inventory(a);
	const struct vfp_vf *vf = vfp_inventory_find_vf(inv, pci);
	const struct vfp_pf *pf = vf ? vfp_vf_get_pf(vf) : NULL;

	if (pf) {
		snprintf(f->pci, sizeof(f->pci), "%s", pci);
		snprintf(f->pf_pci, sizeof(f->pf_pci), "%s", vfp_pf_get_pci(pf));
		snprintf(f->pf_netdev, sizeof(f->pf_netdev), "%s",
			 vfp_pf_get_netdev(pf) ? vfp_pf_get_netdev(pf) : "");
		snprintf(f->pf_driver, sizeof(f->pf_driver), "%s",
			 vfp_pf_get_driver(pf) ? vfp_pf_get_driver(pf) : "");
		snprintf(f->rdma, sizeof(f->rdma), "%s",
			 vfp_vf_get_rdma_device(vf) ? vfp_vf_get_rdma_device(vf) : "");
		f->index = vfp_vf_get_index(vf);
		f->ethernet = vfp_vf_get_link_type(vf) == VFP_LINK_ETHERNET;
	}
	vfp_inventory_unref(inv);
	return pf ? 0 : -ENODEV;
}

struct vf_target pf_side_target(struct agent *a, const struct vf_facts *f)
{
	return (struct vf_target){ .ctx = a->ctx, .pci = f->pci, .pf_pci = f->pf_pci,
				   .pf_netdev = f->pf_netdev[0] ? f->pf_netdev : NULL,
				   .pf_driver = f->pf_driver[0] ? f->pf_driver : NULL,
				   .index = f->index };
}

/* @rp as @pci's restore point (NULL: it has none any more). */
int restore_point_save(struct agent *a, const char *pci, const struct vfp_restore_point *rp)
{
	return ledger_set_restore_point(a, pci, rp);
}

/* Without waiting for the disk: see vfp_ledger_update_restore_point() for when. */
int restore_point_update(struct agent *a, const char *pci, const struct vfp_restore_point *rp)
{
	return ledger_update_restore_point(a, pci, rp);
}

/* @pci's restore point, or NULL when it has none (or it cannot be read: logged). */
struct vfp_restore_point *restore_point_load(struct agent *a, const char *pci)
{
	struct vfp_restore_point *rp = NULL;
	char err[AGENT_ERR_SIZE];

	if (ledger_get_restore_point(a, pci, &rp, err, sizeof(err)) < 0)
		log_error("%s", err);
	return rp;
}

/*
 * PF side: the restore point is in the ledger before the PF is asked to
 * change. It need not wait for the disk: a power cut resets the PF's VFs.
 */
int pf_side_apply(struct agent *a, const struct vf_facts *f, const struct vfp_vf_config *want,
		  bool for_guest, struct vfp_restore_point *rp, char *err, size_t err_size)
{
	struct vf_target host = pf_side_target(a, f), t = host;
	struct vfp_vf_config snap;
	int r;

	if (vfp_vf_config_is_empty(want))
		return 0;
	r = vfconfig_snapshot(&t, want, &snap, err, err_size);
	if (r < 0)
		return r;
	t.for_guest = for_guest; /* the snapshot, when put back, is for the host's driver */
	rp->has_pf_side = true;
	rp->pf_side = snap;
	r = restore_point_update(a, f->pci, rp);
	if (r >= 0)
		r = vfconfig_apply(&t, want, err, err_size);
	if (r >= 0)
		r = pf_side_map_partition(a, f, want->pkey, rp, err, err_size);
	if (r < 0) {
		char ignored[AGENT_ERR_SIZE];

		vfconfig_apply(&host, &snap, ignored, sizeof(ignored));
	}
	return r;
}

/* PF side back as the restore point says; @err is empty when nothing failed. */
void pf_side_restore(struct agent *a, const struct vf_facts *f, const struct vfp_restore_point *rp,
		     char *err, size_t err_size)
{
	struct vf_target t = pf_side_target(a, f);
	struct vfp_vf_config snap;
	char unmap[AGENT_ERR_SIZE] = "";

	err[0] = '\0';
	pf_side_unmap_partition(a, f, rp, unmap, sizeof(unmap));
	if (rp && rp->has_pf_side) {
		snap = rp->pf_side;
		snap.index = f->index;
		if (!vfp_vf_config_is_empty(&snap))
			vfconfig_apply(&t, &snap, err, err_size);
	}
	if (!err[0] && unmap[0])
		snprintf(err, err_size, "%s", unmap);
}

/**
 * pf_side_read() - VF @pci's settings as its PF reports them now (MAC,
 * VLAN, spoofchk, trust, link state, rates, GUIDs), for an operator's view
 */
int pf_side_read(struct agent *a, const char *pci, struct vfp_vf_config *ret, char *err,
		 size_t err_size)
{
	struct vf_facts f;
	struct vf_target t;
	int r = vf_facts_read(a, pci, &f);

	if (r < 0) {
		snprintf(err, err_size, "no VF at %s", pci);
		return r;
	}
	t = pf_side_target(a, &f);
	if (!t.pf_netdev) {
		snprintf(err, err_size, "PF %s has no netdev to ask", f.pf_pci);
		return -ENODEV;
	}
	return vfconfig_read(&t, ret, err, err_size);
}
