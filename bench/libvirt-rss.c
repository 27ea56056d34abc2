/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/libvirt-rss URI: the resident memory of a process that does nothing
 * but open a libvirt connection to URI, as "VmRSS (anonymous A, file F)" in
 * KiB: the floor under the agent's RSS on a host with VMs, where the agent
 * holds such a connection. bench/http prints it next to the agent's.
 */
#include "config.h"

#include <libvirt/libvirt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value in KiB of @key in /proc/self/status, or -1. */
static long status_kib(const char *key)
{
	char line[256];
	long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (v < 0 && fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	virConnectPtr c;

	if (argc != 2) {
		fprintf(stderr, "usage: bench/libvirt-rss URI\n");
		return 2;
	}
	c = virConnectOpen(argv[1]);
	if (!c) {
		fprintf(stderr, "bench/libvirt-rss: cannot connect to %s\n", argv[1]);
		return EXIT_FAILURE;
	}
	printf("%ld (anonymous %ld, file %ld)\n", status_kib("VmRSS"), status_kib("RssAnon"),
	       status_kib("RssFile"));
	virConnectClose(c);
	return EXIT_SUCCESS;
}
