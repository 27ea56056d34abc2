/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every attach does to a VF on the host side, for containers and VMs
 * alike: the facts about the VF copied out of the inventory, its settings
 * on the PF (applied after their restore point is in the ledger, restored
 * from it), and the per-PF lock that serializes changes on one PF.
 */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"
#include "agent/pf/vfconfig.h"

/* What the inventory knows of a VF and its PF, copied out of it. */
struct vf_facts {
	char pci[16], pf_pci[16], pf_netdev[32], pf_driver[64], rdma[64];
	unsigned index;
	bool ethernet;
};

pthread_mutex_t *pf_side_lock(const struct vfp_allocation_vf *vf);
struct vfp_restore_point *pf_side_begin(const struct vfp_allocation_vf *vf);
void pf_side_end(const struct vfp_allocation_vf *vf, struct vfp_restore_point *rp);
int vf_facts_read(struct agent *a, const char *pci, struct vf_facts *f);
struct vf_target pf_side_target(struct agent *a, const struct vf_facts *f);
int pf_side_apply(struct agent *a, const struct vf_facts *f, const struct vfp_vf_config *want,
		  bool for_guest, struct vfp_restore_point *rp, char *err, size_t err_size);
void pf_side_restore(struct agent *a, const struct vf_facts *f, const struct vfp_restore_point *rp,
		     char *err, size_t err_size);
int pf_side_read(struct agent *a, const char *pci, struct vfp_vf_config *ret, char *err,
		 size_t err_size);
int restore_point_save(struct agent *a, const char *pci, const struct vfp_restore_point *rp);
int restore_point_update(struct agent *a, const char *pci, const struct vfp_restore_point *rp);
struct vfp_restore_point *restore_point_load(struct agent *a, const char *pci);
int pf_side_map_partition(struct agent *a, const struct vf_facts *f, int pkey,
			  struct vfp_restore_point *rp, char *err, size_t err_size);
void pf_side_unmap_partition(struct agent *a, const struct vf_facts *f,
			     const struct vfp_restore_point *rp, char *err, size_t err_size);
const char *pf_side_partition_state(struct agent *a, const char *pci, int pkey);
