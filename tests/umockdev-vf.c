/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "umockdev-vf.h"

/*
 * testbed_add_vf() - VF @index of the PF at @pf_path (0000:3b:00.0), at PCI
 * address @name: a ConnectX-4 VF with its physfn link and the PF's virtfn
 * link. Its path in the testbed (g_free() it); exits when umockdev refuses.
 */
char *testbed_add_vf(UMockdevTestbed *tb, const char *pf_path, const char *name,
		     unsigned index)
{
	char link[32], target[40];
	char *path;

	path = umockdev_testbed_add_device(tb, "pci", name, NULL, "vendor", "0x15b3", "device",
					   "0x101c", "class", "0x020700", "numa_node", "0", NULL,
					   "PCI_SLOT_NAME", name, NULL);
	if (!path) {
		fprintf(stderr, "FAIL: adding VF %s to the testbed\n", name);
		exit(1);
	}
	umockdev_testbed_set_attribute_link(tb, path, "physfn", "../0000:3b:00.0");
	snprintf(link, sizeof(link), "virtfn%u", index);
	snprintf(target, sizeof(target), "../%s", name);
	umockdev_testbed_set_attribute_link(tb, pf_path, link, target);
	return path;
}
