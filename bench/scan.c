/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/scan: a full inventory scan of 1,024 and 4,096 VFs against the
 * syscall floor — the same opens, reads, readlinks and directory listings
 * the scan makes, replayed from a list with no parsing and no allocation.
 * Prints the median of RUNS runs for both and their ratio, and what one
 * VF's refresh (vfp_inventory_refresh_vf(), after a rebind) costs beside
 * the scan it replaces.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/sim/sim-host.h"
#include "bench/syscall-plan.h"
#include "libvfpool/libvfpool.h"

#define RUNS 21

/* The files of one device the scan reads, named from the inventory (untimed). */
static void plan_device(struct syscall_plan *p, const char *root, const char *pci, const char *netdev,
			bool is_vf)
{
	plan_add(p, OP_READ, root, "bus/pci/devices/%s/vendor", pci);
	plan_add(p, OP_READ, root, "bus/pci/devices/%s/device", pci);
	plan_add(p, OP_READLINK, root, "bus/pci/devices/%s/driver", pci);
	plan_add(p, OP_READ, root, "bus/pci/devices/%s/numa_node", pci);
	plan_add(p, OP_LISTDIR, root, "bus/pci/devices/%s/net", pci);
	if (netdev) {
		plan_add(p, OP_READ, root, "bus/pci/devices/%s/net/%s/type", pci, netdev);
		plan_add(p, OP_READ, root, "bus/pci/devices/%s/net/%s/address", pci, netdev);
	}
	plan_add(p, OP_LISTDIR, root, "bus/pci/devices/%s/infiniband", pci);
	if (is_vf) {
		plan_add(p, OP_READLINK, root, "bus/pci/devices/%s/physfn", pci);
		plan_add(p, OP_READLINK, root, "bus/pci/devices/%s/iommu_group", pci);
	} else {
		plan_add(p, OP_READ, root, "bus/pci/devices/%s/sriov_numvfs", pci);
	}
}

static void plan_build(struct syscall_plan *p, const char *root, const struct vfp_inventory *inv)
{
	plan_add(p, OP_LISTDIR, root, "bus/pci/devices");
	for (size_t i = 0; i < vfp_inventory_get_pf_count(inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(inv, i);
		size_t n = vfp_pf_get_vf_count(pf);

		plan_add(p, OP_READ, root, "bus/pci/devices/%s/sriov_totalvfs", vfp_pf_get_pci(pf));
		plan_device(p, root, vfp_pf_get_pci(pf), vfp_pf_get_netdev(pf), false);
		for (size_t j = 0; j <= n; j++) /* the last virtfn probe finds nothing */
			plan_add(p, OP_READLINK, root, "bus/pci/devices/%s/virtfn%zu",
				 vfp_pf_get_pci(pf), j);
		for (size_t j = 0; j < n; j++) {
			const struct vfp_vf *vf = vfp_pf_get_vf(pf, j);

			/* every VF is also probed for sriov_totalvfs in the bus walk */
			plan_add(p, OP_READ, root, "bus/pci/devices/%s/sriov_totalvfs",
				 vfp_vf_get_pci(vf));
			plan_device(p, root, vfp_vf_get_pci(vf), vfp_vf_get_netdev(vf), true);
		}
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static int build_host(const char *root, unsigned n_pfs)
{
	for (unsigned i = 0; i < n_pfs; i++) {
		char addr[16], ifname[16];
		struct sim_pf_spec s = { SIM_CX6_IB, addr, ifname, (int)(i * 200), (int)(i % 2),
					 (int)(i * 200), 128, 128, NULL };
		int r;

		snprintf(addr, sizeof(addr), "0000:%02x:00.0", 0x10 + 2 * i);
		snprintf(ifname, sizeof(ifname), "ib%u", i);
		r = sim_add_pf(root, &s);
		if (r < 0)
			return r;
	}
	return 0;
}

static int bench(unsigned n_pfs, double *ret_scan, double *ret_floor)
{
	char root[] = "/tmp/vfagent-bench-XXXXXX", cmd[64];
	double scan[RUNS], floor[RUNS], refresh[RUNS], one;
	struct vfp_ctx *ctx = NULL;
	struct vfp_inventory *inv = NULL, *first, *next;
	char pci[VFP_PCI_ADDR_LEN + 1];
	struct syscall_plan plan = { 0 };

	if (!mkdtemp(root) || build_host(root, n_pfs) < 0 || vfp_ctx_new(&ctx) < 0 ||
	    vfp_ctx_set_sysfs_root(ctx, root) < 0 || vfp_inventory_scan(ctx, &inv) < 0)
		return -1;
	if (vfp_inventory_get_vf_count(inv) != n_pfs * 128u)
		return -1;
	plan_build(&plan, root, inv);
	first = inv;
	snprintf(pci, sizeof(pci), "%s", vfp_vf_get_pci(vfp_pf_get_vf(vfp_inventory_get_pf(
							first, n_pfs / 2), 64)));
	for (int i = 0; i < RUNS; i++) {
		double t0 = now_ms();

		vfp_inventory_scan(ctx, &inv);
		scan[i] = now_ms() - t0;
		vfp_inventory_unref(inv);
		t0 = now_ms();
		plan_run(&plan);
		floor[i] = now_ms() - t0;
		t0 = now_ms();
		if (vfp_inventory_refresh_vf(first, pci, &next) < 0)
			return -1;
		refresh[i] = now_ms() - t0;
		vfp_inventory_unref(next);
	}
	vfp_inventory_unref(first);
	*ret_scan = median(scan, RUNS);
	*ret_floor = median(floor, RUNS);
	one = median(refresh, RUNS);
	printf("%5u VFs (%2u PFs x 128): scan %8.2f ms   floor %8.2f ms (%zu syscall steps)   "
	       "ratio %.2f\n",
	       n_pfs * 128, n_pfs, *ret_scan, *ret_floor, plan.n, *ret_scan / *ret_floor);
	printf("%5u VFs: one VF refreshed %8.3f ms (the scan it replaces: %.0fx)\n", n_pfs * 128,
	       one, *ret_scan / one);
	plan_free(&plan);
	vfp_ctx_unref(ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* bench/scan --plan ROOT: the syscalls a scan of ROOT makes, for bench/syscall-replay. */
static int print_plan(const char *root)
{
	struct vfp_ctx *ctx = NULL;
	struct vfp_inventory *inv = NULL;
	struct syscall_plan plan = { 0 };

	if (vfp_ctx_new(&ctx) < 0 || vfp_ctx_set_sysfs_root(ctx, root) < 0 ||
	    vfp_inventory_scan(ctx, &inv) < 0) {
		fprintf(stderr, "bench/scan: cannot scan %s\n", root);
		vfp_ctx_unref(ctx);
		return EXIT_FAILURE;
	}
	plan_build(&plan, root, inv);
	plan_write(&plan, stdout);
	plan_free(&plan);
	vfp_inventory_unref(inv);
	vfp_ctx_unref(ctx);
	return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	double s1, f1, s4, f4;

	if (argc == 3 && strcmp(argv[1], "--plan") == 0)
		return print_plan(argv[2]);
	printf("bench/scan: median of %d runs, floor = same syscalls replayed without parsing\n",
	       RUNS);
	if (bench(8, &s1, &f1) < 0 || bench(32, &s4, &f4) < 0) {
		fprintf(stderr, "bench/scan: building or scanning the fake host failed\n");
		return EXIT_FAILURE;
	}
	printf("scaling 1,024 -> 4,096 VFs: scan x%.2f, floor x%.2f (linear = x4.00)\n", s4 / s1,
	       f4 / f1);
	return EXIT_SUCCESS;
}
