/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host's PCIe tree, read once per inventory: a claim "near" a device
 * looks distances up in it, and a claim must not pay for reading some
 * hundred functions' sysfs entries. An inventory replaced (a rescan, a
 * resize) means the tree may have changed: the next caller reads it again.
 * The cached inventory is held by reference, so a new one can never take
 * its address and pass for it.
 */
#include "config.h"

#include <string.h>

#include "agent/pcie-topo.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct vfp_inventory *read_with; /* the inventory the tree was read with */
static struct vfp_pcie_topo *topo;

/**
 * agent_get_pcie_topo() - the PCIe tree as of the current inventory
 *
 * vfp_pcie_topo_unref() it. NULL when it could not be read (no memory, no
 * bus/pci/devices): claims near a device are then refused, the rest work.
 */
struct vfp_pcie_topo *agent_get_pcie_topo(struct agent *a)
{
	struct vfp_inventory *inv = agent_get_inventory(a);
	struct vfp_pcie_topo *t = NULL;
	int r = 0;

	pthread_mutex_lock(&lock);
	if (inv != read_with || !topo) {
		vfp_pcie_topo_unref(topo);
		topo = NULL;
		r = vfp_pcie_topo_scan(a->ctx, &topo);
		vfp_inventory_unref(read_with);
		read_with = vfp_inventory_ref(inv);
	}
	t = vfp_pcie_topo_ref(topo);
	pthread_mutex_unlock(&lock);
	if (r < 0)
		log_warning("reading the PCIe tree: %s", strerror(-r));
	vfp_inventory_unref(inv);
	return t;
}
