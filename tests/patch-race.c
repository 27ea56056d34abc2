/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/patch-race DIR: a PATCH that runs beside a release cannot land on the
 * next tenant's VF (issue 37, item 11). A PATCH stores the new settings under
 * the ledger lock, then asks each VF's PF without it: the allocation can be
 * released in between, and its VF claimed and put in use by the next tenant.
 * Here that interleaving is made in one process, on a whole agent over the
 * simulated host in DIR: allocation A's VFs as the PATCH read them, then A
 * released, its VF claimed by B and given a restore point (in use: a domain),
 * then the PATCH's second half on A's stale view. It must refuse, naming A,
 * before it reads or writes the PF, and leave B's restore point as it was.
 * Exit 0 when it holds, 1 (and why) when not.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/claim.h"
#include "agent/pf/pf-side.h"
#include "agent/release.h"
#include "agent/rooms.h"
#include "agent/settings-update-priv.h"
#include "agent/sim/sim-host.h"

static struct agent a;

static int claim(const char *name, const char *pci, struct vfp_allocation **ret)
{
	struct vfp_owner o = { .kind = VFP_OWNER_VM, .name = name };
	struct vfp_claim c = { .pool = "eth", .count = 1, .owner = &o, .numa_node = -1,
			       .pci = pci };
	char err[256];
	int r = agent_claim(&a, &c, ret, err, sizeof(err));

	if (r < 0)
		fprintf(stderr, "patch-race: claim for %s: %s\n", name, err);
	return r;
}

int main(int argc, char **argv)
{
	struct vfp_allocation *first = NULL, *next = NULL;
	struct vfp_restore_point *rp = vfp_restore_point_new(), *after;
	struct vfp_settings delta, old;
	char pci[VFP_PCI_ADDR_LEN + 1], err[512] = "";
	int r;

	if (argc != 2 || !rp) {
		fprintf(stderr, "usage: patch-race DIR\n");
		return 2;
	}
	a.opt.simulate_dir = argv[1];
	a.opt.config_json = sim_host_config(); /* handed in at the edge, as main.c does */
	agent_set_log_priority(3);
	agent_add_rooms(&a); /* as main.c does */
	if (agent_init(&a) < 0 || claim("vm-first", NULL, &first) < 0)
		return 1;
	snprintf(pci, sizeof(pci), "%s", vfp_allocation_get_vf(first, 0)->pci);
	old = *vfp_allocation_get_settings(first);
	if (agent_release_allocation(&a, vfp_allocation_get_id(first), err, sizeof(err)) < 0) {
		fprintf(stderr, "patch-race: release: %s\n", err);
		return 1;
	}
	/* the next tenant: the same VF, in use by its domain */
	if (claim("vm-next", pci, &next) < 0)
		return 1;
	vfp_restore_point_set(&rp->domain, "vm-next");
	vfp_restore_point_set(&rp->domain_uuid, "5d1e0c62-8d1b-4a55-9f0e-7c2a4b3d9e77");
	if (restore_point_save(&a, pci, rp) < 0) {
		fprintf(stderr, "patch-race: restore point\n");
		return 1;
	}
	/* the PATCH of the first tenant, its VFs as it read them before the release */
	vfp_settings_init(&delta);
	delta.vlan = 100;
	r = settings_update_vfs(&a, first, &delta, &old, err, sizeof(err));
	after = restore_point_load(&a, pci);
	if (r != -EBUSY || !strstr(err, "was released meanwhile") ||
	    !strstr(err, vfp_allocation_get_id(next))) {
		fprintf(stderr, "patch-race: the first tenant's PATCH reached VF %s of allocation %s: "
			"%d, \"%s\"\n", pci, vfp_allocation_get_id(next), r, err);
		return 1;
	}
	if (!after || after->has_pf_side || !after->domain_uuid) {
		fprintf(stderr, "patch-race: the next tenant's restore point changed\n");
		return 1;
	}
	printf("patch-race: refused: %s\n", err);
	vfp_restore_point_free(after);
	vfp_restore_point_free(rp);
	vfp_allocation_unref(first);
	vfp_allocation_unref(next);
	return 0;
}
