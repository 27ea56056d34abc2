/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sysfs attribute values: the input, split at 0xff bytes, is written into
 * attributes of a simulated host (PF and VF ids, counts, NUMA node, class,
 * MAC, netdev type, IB link layer and port state) and the host is scanned:
 * garbage gives warnings and absent facts, never a crash. The originals
 * come back after each input.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sim/sim-host.h"
#include "fuzz.h"
#include "libvfpool/libvfpool.h"

#define PF "bus/pci/devices/0000:af:00.0/"
#define VF "bus/pci/devices/0000:af:01.0/"
#define IB "bus/pci/devices/0000:3b:00.0/infiniband/mlx5_0/ports/1/"

static const char *const attrs[] = {
	PF "sriov_totalvfs", PF "sriov_numvfs", PF "numa_node", PF "class", PF "vendor",
	PF "sriov_offset", PF "sriov_stride", VF "vendor", VF "device", VF "numa_node",
	VF "net/ens5f0v0/address", VF "net/ens5f0v0/type", IB "link_layer", IB "state",
};

static char root[64];
static char *saved[sizeof(attrs) / sizeof(attrs[0])];

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s = calloc(1, 4096);

	if (f && s)
		fread(s, 1, 4095, f);
	if (f)
		fclose(f);
	return s;
}

static void put(const char *rel, const void *data, size_t n)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, n, f);
		fclose(f);
	}
}

static void setup(void)
{
	char path[256];

	snprintf(root, sizeof(root), "%s", fuzz_tmpdir("sysfs"));
	if (sim_host_build_default(root) < 0)
		abort();
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, attrs[i]);
		saved[i] = slurp(path);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vfp_ctx *ctx = NULL;
	struct vfp_inventory *inv = NULL;
	size_t i = 0, start = 0;

	if (!root[0])
		setup();
	for (size_t k = 0; k <= size && i < sizeof(attrs) / sizeof(attrs[0]); k++)
		if (k == size || data[k] == 0xff) {
			put(attrs[i++], data + start, k - start);
			start = k + 1;
		}
	if (vfp_ctx_new(&ctx) < 0 || vfp_ctx_set_sysfs_root(ctx, root) < 0)
		abort();
	vfp_ctx_set_log_priority(ctx, 0);
	if (vfp_inventory_scan(ctx, &inv) >= 0)
		json_decref(vfp_inventory_to_json(inv));
	vfp_inventory_unref(inv);
	vfp_ctx_unref(ctx);
	while (i-- > 0)
		put(attrs[i], saved[i], strlen(saved[i]));
	return 0;
}
