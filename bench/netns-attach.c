/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's container attach, as bench/netns.sh times it: each named
 * netdev goes into NETNS as c<N>, with a MAC, an address, and up, through
 * agent/container/vf-netdev.c (the code the API runs). Prints the elapsed milliseconds.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "agent/container/netns.h"
#include "agent/container/vf-netdev.h"

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	char err[256] = "";
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: netns-attach NETNS NETDEV...\n");
		return 2;
	}
	if (netns_open(argv[1], &fd, err, sizeof(err)) < 0) {
		fprintf(stderr, "netns-attach: %s\n", err);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 2; i < argc; i++) {
		char ifname[16], addr[32];
		unsigned char mac[6] = { 0x02, 0xbe, 0, 0, (unsigned char)(i >> 8), (unsigned char)i };
		const char *addrs[] = { addr };
		struct netns_config cfg = { .ifname = ifname, .mac = mac, .addresses = addrs,
					    .n_addresses = 1 };
		struct vfp_restore_point *orig = vfp_restore_point_new();
		int r = orig ? 0 : -ENOMEM;

		snprintf(ifname, sizeof(ifname), "c%d", i - 2);
		snprintf(addr, sizeof(addr), "10.77.%d.%d/16", i >> 8, i & 0xff);
		if (r >= 0)
			r = vf_netdev_snapshot(argv[i], argv[i], orig, err, sizeof(err));
		if (r >= 0)
			r = vf_netdev_attach(argv[i], fd, &cfg, orig, err, sizeof(err));
		vfp_restore_point_free(orig);
		if (r < 0) {
			fprintf(stderr, "netns-attach: %s: %s\n", argv[i], err);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.3f\n", (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	close(fd);
	return 0;
}
