/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/mkhost DIR N: a simulated host of N ConnectX-6 PFs with 128 VFs each, for benchmarks. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agent/sim/sim-host.h"

int main(int argc, char **argv)
{
	int n = argc == 3 ? atoi(argv[2]) : 0;

	if (n < 1 || n > 100 || mkdir(argv[1], 0755) < 0) {
		fprintf(stderr, "usage: mkhost NEW-DIR N (1-100)\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		char addr[16], ifname[16];
		struct sim_pf_spec s = { SIM_CX6_IB, addr, ifname, i * 200, i % 2, i * 200, 128, 128,
					 NULL };

		snprintf(addr, sizeof(addr), "0000:%02x:00.0", 0x10 + 2 * i);
		snprintf(ifname, sizeof(ifname), "ib%d", i);
		if (sim_add_pf(argv[1], &s) < 0) {
			fprintf(stderr, "mkhost: building PF %s failed\n", addr);
			return 1;
		}
	}
	return 0;
}
