/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/placement: what "near" costs a claim. 1,024 VFs (8 ConnectX PFs of
 * 128 VFs, two per PCIe switch under four root ports, two root complexes
 * on two NUMA nodes, a GPU beside the first PF), one ledger. In the same
 * run, in alternating rounds: claims of one VF and their releases without
 * "near", then with "near" the GPU (container owners: commits that do not
 * wait for the disk, so the placement's CPU shows); and the placement step
 * alone (vfp_place() vs the distances looked up and vfp_place_near()).
 * Prints the ratios (goal: a claim near a device <= 1.1x one without) and
 * what reading the tree costs, which the agent pays once per inventory.
 * BENCH_DIR picks the directory.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/sim/sim-host.h"
#include "libvfpool/libvfpool.h"
#include "libvfpool/placement.h"

#define ROUNDS 31
#define CLAIMS 40 /* per round and kind */
#define PLACES 20000
#define GPU "0000:1f:00.0"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of this thread: the work itself, not the waits for the disk */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Root ports 0000:00:01.0-02.0 (node 0) and 0000:80:01.0-02.0 (node 1), a switch under each. */
static int build_tree(const char *root)
{
	char rp[4][16], usp[4][16], dsp[8][16], prp[4][16], pusp[4][40], pdsp[8][64];
	int r = 0;

	for (int s = 0; r >= 0 && s < 4; s++) {
		unsigned rc = s < 2 ? 0x00 : 0x80, bus = rc + 0x10 * (unsigned)(s % 2 + 1);
		int node = s < 2 ? 0 : 1;
		struct sim_pcie_fn f[] = {
			{ rp[s], prp[s], "8086", "2030", 0x060400, node, 4, 0x001d, "pcieport" },
			{ usp[s], pusp[s], "10b5", "8747", 0x060400, node, 5, -1, "pcieport" },
			{ dsp[2 * s], pdsp[2 * s], "10b5", "8747", 0x060400, node, 6, 0, "pcieport" },
			{ dsp[2 * s + 1], pdsp[2 * s], "10b5", "8747", 0x060400, node, 6, 0,
			  "pcieport" },
		};

		snprintf(rp[s], sizeof(rp[s]), "0000:%02x:%02x.0", rc, s % 2 + 1);
		snprintf(prp[s], sizeof(prp[s]), "pci0000:%02x", rc);
		snprintf(usp[s], sizeof(usp[s]), "0000:%02x:00.0", bus);
		snprintf(pusp[s], sizeof(pusp[s]), "%.15s/%.15s", prp[s], rp[s]);
		snprintf(dsp[2 * s], sizeof(dsp[0]), "0000:%02x:00.0", bus + 1);
		snprintf(dsp[2 * s + 1], sizeof(dsp[0]), "0000:%02x:01.0", bus + 1);
		snprintf(pdsp[2 * s], sizeof(pdsp[0]), "%.39s/%.15s", pusp[s], usp[s]);
		r = sim_add_pcie_tree(root, f, 4);
	}
	for (int p = 0; r >= 0 && p < 8; p++) {
		char addr[16], ifname[16], parent[96];
		int s = p / 2;
		unsigned bus = (s < 2 ? 0x00 : 0x80) + 0x10 * (unsigned)(s % 2 + 1) + 2 + (p % 2) * 4;
		struct sim_pf_spec spec = { SIM_CX6_IB, addr, ifname, p * 200, s < 2 ? 0 : 1,
					    p * 200, 128, 128, NULL, parent };

		snprintf(addr, sizeof(addr), "0000:%02x:00.0", bus);
		snprintf(ifname, sizeof(ifname), "ib%d", p);
		snprintf(parent, sizeof(parent), "%.63s/%.15s", pdsp[2 * s], dsp[p]);
		r = sim_add_pf(root, &spec);
	}
	if (r >= 0) { /* a GPU on a third port of the first switch: PIX to the first two PFs */
		char parent[96];
		struct sim_pcie_fn f[] = {
			{ "0000:11:02.0", pdsp[0], "10b5", "8747", 0x060400, 0, 6, 0, "pcieport" },
			{ GPU, parent, "10de", "20b5", 0x030200, 0, 0, -1, NULL },
		};

		snprintf(parent, sizeof(parent), "%.63s/0000:11:02.0", pdsp[0]);
		r = sim_add_pcie_tree(root, f, 2);
	}
	return r;
}

/* @n claims of one VF and their releases; seconds taken (@ret_cpu: CPU seconds). */
static double claims(struct vfp_ledger *l, const struct vfp_config *c, struct vfp_claim *req,
		     int n, double *ret_cpu)
{
	char (*ids)[37] = calloc((size_t)n, sizeof(*ids));
	double t0 = now_s(), c0 = cpu_s();

	for (int i = 0; ids && i < n; i++) {
		struct vfp_allocation *a = NULL;

		if (vfp_ledger_claim(l, c, req, &a) < 0) {
			fprintf(stderr, "claim: %s\n", vfp_ledger_get_error(l));
			exit(EXIT_FAILURE);
		}
		snprintf(ids[i], 37, "%s", vfp_allocation_get_id(a));
		vfp_allocation_unref(a);
	}
	for (int i = 0; ids && i < n; i++)
		if (vfp_ledger_begin_volatile(l, ids[i], VFP_OP_RELEASE) < 0 ||
		    vfp_ledger_confirm(l, ids[i], VFP_OP_RELEASE, true, NULL) < 0)
			exit(EXIT_FAILURE);
	free(ids);
	if (ret_cpu)
		*ret_cpu = cpu_s() - c0;
	return now_s() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* The placement step alone, as the ledger runs it over 8 PFs' free counts; ns per call. */
static void placement_alone(const struct vfp_pcie_topo *t, const struct vfp_inventory *inv,
			    double *ret_plain, double *ret_near)
{
	struct vfp_pf_free pfs[8] = { 0 };
	size_t seq[1];
	double t0;
	int best;

	for (size_t i = 0; i < 8; i++) {
		snprintf(pfs[i].pf, sizeof(pfs[i].pf), "%s",
			 vfp_pf_get_pci(vfp_inventory_get_pf(inv, i)));
		pfs[i].numa_node = i < 4 ? 0 : 1;
		pfs[i].n_free = 128;
	}
	t0 = now_s();
	for (int i = 0; i < PLACES; i++)
		vfp_place(pfs, 8, 1, -1, VFP_PLACE_SPREAD, seq);
	*ret_plain = (now_s() - t0) / PLACES * 1e9;
	t0 = now_s();
	for (int i = 0; i < PLACES; i++) {
		for (size_t k = 0; k < 8; k++) {
			enum vfp_pcie_distance d;

			pfs[k].distance = vfp_pcie_topo_distance(t, pfs[k].pf, GPU, &d) < 0 ? -1
											  : (int)d;
		}
		vfp_place_near(pfs, 8, 1, VFP_PCIE_PXB, -1, VFP_PLACE_SPREAD, seq, &best);
	}
	*ret_near = (now_s() - t0) / PLACES * 1e9;
}

int main(void)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_CONTAINER, .netns = "bench" };
	char base[PATH_MAX], root[PATH_MAX + 32], state[PATH_MAX + 64], cmd[PATH_MAX + 48];
	json_t *cfg = json_loads("{\"pools\": [{\"name\": \"all\", \"selector\": "
				 "{\"vendors\": [\"15b3\"]}}]}", 0, NULL);
	struct vfp_claim plain = { .pool = "all", .count = 1, .owner = &owner, .numa_node = -1 };
	struct vfp_claim near = plain;
	struct vfp_ctx *ctx = NULL;
	struct vfp_inventory *inv = NULL;
	struct vfp_config *config = NULL;
	struct vfp_pcie_topo *t = NULL;
	struct vfp_ledger *l = NULL;
	double a[ROUNDS], b[ROUNDS], ca[ROUNDS], cb[ROUNDS], scan_ms, plain_ns, near_ns, t0;

	if (!realpath(getenv("BENCH_DIR") ? getenv("BENCH_DIR") : ".", base))
		return EXIT_FAILURE;
	snprintf(root, sizeof(root), "%.3000s/vfagent-bench-XXXXXX", base);
	if (!mkdtemp(root) || build_tree(root) < 0 || vfp_ctx_new(&ctx) < 0 ||
	    vfp_ctx_set_sysfs_root(ctx, root) < 0 || vfp_inventory_scan(ctx, &inv) < 0 ||
	    vfp_config_load_json(cfg, &config, NULL) < 0)
		return EXIT_FAILURE;
	t0 = now_s();
	if (vfp_pcie_topo_scan(ctx, &t) < 0)
		return EXIT_FAILURE;
	scan_ms = (now_s() - t0) * 1e3;
	snprintf(state, sizeof(state), "%s/state", root);
	if (vfp_ledger_open(ctx, state, &l) < 0 ||
	    vfp_ledger_reconcile(l, inv, config, NULL, NULL, NULL) < 0)
		return EXIT_FAILURE;
	near.near = GPU;
	near.max_distance = VFP_PCIE_PXB;
	near.topo = t;
	{ /* near means near: the VF comes from a PF beside the GPU */
		struct vfp_allocation *al = NULL;
		const char *pf;

		if (vfp_ledger_claim(l, config, &near, &al) < 0)
			return EXIT_FAILURE;
		pf = vfp_allocation_get_vf(al, 0)->pf;
		if (strcmp(pf, "0000:12:00.0") != 0 && strcmp(pf, "0000:16:00.0") != 0) {
			fprintf(stderr, "bench/placement: a claim near %s got a VF of %s\n", GPU, pf);
			return EXIT_FAILURE;
		}
		vfp_allocation_unref(al);
	}
	claims(l, config, &plain, CLAIMS, NULL); /* warm the statement and page caches */
	claims(l, config, &near, CLAIMS, NULL);
	for (int r = 0; r < ROUNDS; r++) {
		a[r] = claims(l, config, &plain, CLAIMS, &ca[r]) / CLAIMS * 1e6;
		b[r] = claims(l, config, &near, CLAIMS, &cb[r]) / CLAIMS * 1e6;
		ca[r] *= 1e6 / CLAIMS;
		cb[r] *= 1e6 / CLAIMS;
	}
	placement_alone(t, inv, &plain_ns, &near_ns);
	printf("bench/placement: %zu VFs on %zu PFs; claim + release of one VF, median of %d "
	       "rounds of %d\n",
	       vfp_inventory_get_vf_count(inv), vfp_inventory_get_pf_count(inv), ROUNDS, CLAIMS);
	printf("  %-30s %8.1f us (CPU %6.1f us)\n", "without near:", median(a, ROUNDS),
	       median(ca, ROUNDS));
	printf("  %-30s %8.1f us (CPU %6.1f us)   ratio %.3f, CPU %.3f (goal <= 1.1)\n",
	       "near " GPU " (<= PXB):", median(b, ROUNDS), median(cb, ROUNDS),
	       median(b, ROUNDS) / median(a, ROUNDS), median(cb, ROUNDS) / median(ca, ROUNDS));
	printf("  %-30s %8.0f ns plain, %.0f ns near (8 distances looked up)\n",
	       "placement step alone:",
	       plain_ns, near_ns);
	printf("  %-30s %8.2f ms (once per inventory in the agent)\n", "reading the PCIe tree:",
	       scan_ms);
	vfp_ledger_unref(l);
	vfp_pcie_topo_unref(t);
	vfp_inventory_unref(inv);
	vfp_config_unref(config);
	vfp_ctx_unref(ctx);
	json_decref(cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
