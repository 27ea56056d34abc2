/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF into a libvirt domain and back. The PF-side settings (the IB GUIDs
 * above all) and, for unmanaged hostdevs, the vfio-pci binding come first,
 * each with its restore point in the ledger; then the device goes to the
 * domain, live and/or in its config. Any failure undoes the earlier steps
 * and carries libvirt's own message. The restore point names the domain by
 * UUID: the lease follows the domain.
 */
#pragma once

#include <libxml/tree.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/agent.h"

struct vm_target {
	const char *uuid, *name;
	unsigned flags;	 /* LIBVIRT_LIVE, LIBVIRT_CONFIG: what to attach now; 0 for none */
	bool pending;	 /* the domain does not exist yet (deployment XML) */
};

/* What a deployment file's NIC asks of its VF; NULL fields come from the allocation. */
struct vm_nic {
	bool has_mac;
	unsigned char mac[6];
	int vlan; /* -1: none */
	long long max_tx_rate; /* Mbit/s, set on the PF; 0: none */
	int spoofchk, trust;   /* 0 or 1, set on the PF; -1: not asked */
	const struct vfp_failover *failover; /* the network's standby; NULL: the claim's */
};

/* A VF's elements in a domain's XML: new, unlinked nodes, the caller's to place or free. */
struct vm_devices {
	xmlNodePtr device;  /* <hostdev>, or an Ethernet VF's <interface type='hostdev'> */
	xmlNodePtr standby; /* a failover pair's standby NIC; NULL: none */
};

int vm_attach_vf(struct agent *a, const struct vfp_allocation *alloc, size_t i,
		 const struct vm_target *t, const struct vm_nic *nic, struct vm_devices *ret,
		 char *err, size_t err_size);
int vm_restore_vf(struct agent *a, const struct vfp_allocation_vf *vf, char *err, size_t err_size);
int vm_restore_vf_from(struct agent *a, const struct vfp_allocation_vf *vf,
		       const struct vfp_restore_point *rp, char *err, size_t err_size);
void vm_keep_undone(struct agent *a, const char *pci);
int vm_finish_detach(struct agent *a, const char *pci, char *err, size_t err_size);
bool vm_detach_finishable(struct agent *a, const char *pci);
bool vm_is_vm_vf(struct agent *a, const struct vfp_allocation_vf *vf);
int vm_domain_alive(struct agent *a, const struct vfp_allocation *alloc);
int vm_is_attached(struct agent *a, const struct vfp_allocation *alloc);
extern const struct agent_attach_path vm_attach_path;
void vm_report_foreign(struct agent *a);
