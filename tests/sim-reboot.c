/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/sim-reboot DIR PF...: what a reboot does to the PFs of the
 * simulated host in DIR: every VF gone, sriov_numvfs back to 0, as the
 * kernel starts every PF. The simulated kernel does it, as for the agent.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "agent/sim/sim-host.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: sim-reboot DIR PF...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		char rel[128];
		int result = 0;

		snprintf(rel, sizeof(rel), "bus/pci/devices/%.16s/sriov_numvfs", argv[i]);
		if (sim_kernel_write(NULL, argv[1], rel, "0", &result) != 1 || result < 0) {
			fprintf(stderr, "sim-reboot: %s: %s\n", argv[i], strerror(-result));
			return 1;
		}
	}
	return 0;
}
