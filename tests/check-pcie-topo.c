/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PCIe tree and distances on the trees of real machines, function by
 * function as `lspci -tv` draws them:
 *  - a DGX-like host: socket 0 as a DGX-1 (a PLX PEX 8747 per GPU pair,
 *    a GPU and an HCA on two downstream ports of one switch: PIX), socket 1
 *    as a DGX A100 (two levels of Broadcom PEX switches: the HCA is PXB
 *    from the GPU, ACS redirecting peer requests);
 *  - a two-socket Skylake server: each PCIe stack its own root complex
 *    (pci0000:17, :3a, :5d on socket 0; :ae, :d7 on socket 1), read as a
 *    user reads it (no config space: bridges known by their place);
 *  - an EPYC host where a device's bus number names no root complex
 *    (0000:21:00.0 and 0000:23:00.0 hang off pci0000:20) and a second PCI
 *    domain reuses bus numbers;
 *  - a DGX-like host with ConnectX-8 Data Direct: the GPU and the CX-8's
 *    DMA function (15b3:2100) on one PEX switch, the CX-8 PF on a CPU root
 *    port of its own, paired by the VPD "V3" both carry (as rdma-core's
 *    rdma_topo and mstflint pair them); a second CX-8 of the same board
 *    (same "SN", its own "V3") has no Data Direct.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sim/sim-host.h"
#include "libvfpool/sysfs.h"
#include "check-suites.h"
#include "fixtures.h"

#define ELEMS(a) (sizeof(a) / sizeof((a)[0]))
#define BRIDGE 0x060400
#define GPU 0x030200
#define NVME 0x010802
#define RP 4 /* PCIe port types */
#define USP 5
#define DSP 6
#define EP 0
#define ACS_KERNEL 0x001d /* SV RR CR UF: what Linux enables with an IOMMU */

#define S0 "pci0000:00/"
#define PLX0 S0 "0000:00:02.0/0000:02:00.0/"
#define PLX1 S0 "0000:00:03.0/0000:06:00.0/"
#define S1 "pci0000:80/0000:80:01.0/0000:81:00.0/"
#define PEX1 S1 "0000:82:00.0/0000:83:00.0/"

static const struct sim_pcie_fn dgx[] = {
	{ "0000:00:02.0", "pci0000:00", "8086", "2f04", BRIDGE, 0, RP, ACS_KERNEL, "pcieport" },
	{ "0000:02:00.0", S0 "0000:00:02.0", "10b5", "8747", BRIDGE, 0, USP, -1, "pcieport" },
	{ "0000:03:08.0", PLX0, "10b5", "8747", BRIDGE, 0, DSP, 0, "pcieport" },
	{ "0000:03:10.0", PLX0, "10b5", "8747", BRIDGE, 0, DSP, 0, "pcieport" },
	{ "0000:04:00.0", PLX0 "0000:03:08.0", "10de", "1db1", GPU, 0, EP, -1, "nvidia" },
	{ "0000:00:03.0", "pci0000:00", "8086", "2f08", BRIDGE, 0, RP, ACS_KERNEL, "pcieport" },
	{ "0000:06:00.0", S0 "0000:00:03.0", "10b5", "8747", BRIDGE, 0, USP, -1, "pcieport" },
	{ "0000:07:08.0", PLX1, "10b5", "8747", BRIDGE, 0, DSP, 0, "pcieport" },
	{ "0000:07:10.0", PLX1, "10b5", "8747", BRIDGE, 0, DSP, 0, "pcieport" },
	{ "0000:08:00.0", PLX1 "0000:07:08.0", "10de", "1db1", GPU, 0, EP, -1, "nvidia" },
	{ "0000:80:01.0", "pci0000:80", "8086", "2f02", BRIDGE, 1, RP, ACS_KERNEL, "pcieport" },
	{ "0000:81:00.0", "pci0000:80/0000:80:01.0", "1000", "c010", BRIDGE, 1, USP, -1,
	  "pcieport" },
	{ "0000:82:00.0", S1, "1000", "c010", BRIDGE, 1, DSP, ACS_KERNEL, "pcieport" },
	{ "0000:82:04.0", S1, "1000", "c010", BRIDGE, 1, DSP, ACS_KERNEL, "pcieport" },
	{ "0000:83:00.0", S1 "0000:82:00.0", "1000", "c010", BRIDGE, 1, USP, -1, "pcieport" },
	{ "0000:84:00.0", PEX1, "1000", "c010", BRIDGE, 1, DSP, ACS_KERNEL, "pcieport" },
	{ "0000:84:04.0", PEX1, "1000", "c010", BRIDGE, 1, DSP, ACS_KERNEL, "pcieport" },
	{ "0000:85:00.0", PEX1 "0000:84:00.0", "10de", "20b0", GPU, 1, EP, -1, "nvidia" },
	{ "0000:87:00.0", PEX1 "0000:84:04.0", "144d", "a824", NVME, 1, EP, -1, "nvme" },
};

/* The HCAs (ConnectX, 2 VFs each): beside the GPU on each PLX, beside the top PEX on socket 1. */
static const struct sim_pf_spec dgx_pfs[] = {
	{ SIM_CX6_IB, "0000:05:00.0", "ib0", 0, 0, 10, 8, 2, NULL, PLX0 "0000:03:10.0" },
	{ SIM_CX6_IB, "0000:09:00.0", "ib1", 4, 0, 20, 8, 2, NULL, PLX1 "0000:07:10.0" },
	{ SIM_CX6_IB, "0000:86:00.0", "ib2", 8, 1, 30, 8, 2, NULL, S1 "0000:82:04.0" },
};

/* Skylake: no config space (read without root), bridges known by their place. */
static const struct sim_pcie_fn skylake[] = {
	{ "0000:17:00.0", "pci0000:17", "8086", "2030", BRIDGE, 0, -1, -1, "pcieport" },
	{ "0000:18:00.0", "pci0000:17/0000:17:00.0", "8086", "0a54", NVME, 0, -1, -1, "nvme" },
	{ "0000:3a:00.0", "pci0000:3a", "8086", "2030", BRIDGE, 0, -1, -1, "pcieport" },
	{ "0000:5d:00.0", "pci0000:5d", "8086", "2030", BRIDGE, 0, -1, -1, "pcieport" },
	{ "0000:5e:00.0", "pci0000:5d/0000:5d:00.0", "10de", "1eb8", GPU, 0, -1, -1, "nvidia" },
	{ "0000:ae:00.0", "pci0000:ae", "8086", "2030", BRIDGE, 1, -1, -1, "pcieport" },
	{ "0000:d7:00.0", "pci0000:d7", "8086", "2030", BRIDGE, 1, -1, -1, "pcieport" },
	{ "0000:d8:00.0", "pci0000:d7/0000:d7:00.0", "1da3", "1000", 0x120000, 1, -1, -1,
	  "habanalabs" },
};

static const struct sim_pf_spec skylake_pfs[] = {
	{ SIM_CX6_IB, "0000:3b:00.0", "ib0", 0, 0, 40, 8, 2, NULL, "pci0000:3a/0000:3a:00.0" },
	{ SIM_E810, "0000:af:00.0", "ens5f0", 0, 1, 80, 8, 2, NULL, "pci0000:ae/0000:ae:00.0" },
};

/* EPYC (NPS1): one root complex per quadrant, buses 20-3f on pci0000:20; a second domain. */
static const struct sim_pcie_fn epyc[] = {
	{ "0000:00:01.1", "pci0000:00", "1022", "1483", BRIDGE, 0, -1, -1, "pcieport" },
	{ "0000:01:00.0", "pci0000:00/0000:00:01.1", "144d", "a80a", NVME, 0, -1, -1, "nvme" },
	{ "0000:20:01.1", "pci0000:20", "1022", "1483", BRIDGE, 0, -1, -1, "pcieport" },
	{ "0000:20:03.1", "pci0000:20", "1022", "1483", BRIDGE, 0, -1, -1, "pcieport" },
	{ "0000:23:00.0", "pci0000:20/0000:20:03.1", "10de", "20f1", GPU, 0, -1, -1, "nvidia" },
	{ "0001:00:01.0", "pci0001:00", "1022", "1483", BRIDGE, 0, -1, -1, "pcieport" },
	{ "0001:01:00.0", "pci0001:00/0001:00:01.0", "10de", "20f1", GPU, 0, -1, -1, "nvidia" },
};

static const struct sim_pf_spec epyc_pfs[] = {
	{ SIM_E810, "0000:21:00.0", "ens1f0", 0, 0, 10, 8, 2, NULL, "pci0000:20/0000:20:01.1" },
};

#define DD0 "pci0000:00/0000:00:01.0/0000:01:00.0/"
#define CX8_V3 "62ee5a540e91"

static const struct sim_pcie_fn data_direct[] = {
	{ "0000:00:01.0", "pci0000:00", "8086", "352a", BRIDGE, 0, RP, ACS_KERNEL, "pcieport" },
	{ "0000:01:00.0", "pci0000:00/0000:00:01.0", "1000", "c030", BRIDGE, 0, USP, -1,
	  "pcieport" },
	{ "0000:02:00.0", DD0, "1000", "c030", BRIDGE, 0, DSP, 0, "pcieport" },
	{ "0000:02:01.0", DD0, "1000", "c030", BRIDGE, 0, DSP, 0, "pcieport" },
	{ "0000:02:02.0", DD0, "1000", "c030", BRIDGE, 0, DSP, 0, "pcieport" },
	{ "0000:03:00.0", DD0 "0000:02:00.0", "10de", "2330", GPU, 0, EP, -1, "nvidia" },
	{ "0000:04:00.0", DD0 "0000:02:01.0", "15b3", "2100", 0x020700, 0, EP, -1,
	  "mlx5_data_direct" },
	{ "0000:05:00.0", DD0 "0000:02:02.0", "144d", "a825", NVME, 0, EP, -1, "nvme" },
	{ "0000:00:03.0", "pci0000:00", "8086", "352b", BRIDGE, 0, RP, ACS_KERNEL, "pcieport" },
	{ "0000:00:05.0", "pci0000:00", "8086", "352c", BRIDGE, 0, RP, ACS_KERNEL, "pcieport" },
};

static const struct sim_pf_spec data_direct_pfs[] = {
	{ SIM_CX8, "0000:06:00.0", "ens3np0", 0, 0, 10, 8, 2, NULL, "pci0000:00/0000:00:03.0" },
	{ SIM_CX8, "0000:07:00.0", "ens5np0", 4, 0, 20, 8, 2, NULL, "pci0000:00/0000:00:05.0" },
};

static struct fixture fx;
static struct vfp_pcie_topo *topo;

static void build(const struct sim_pcie_fn *fns, size_t n, const struct sim_pf_spec *pfs,
		  size_t n_pfs)
{
	fixture_setup(&fx);
	ck_assert_int_eq(sim_add_pcie_tree(fx.root, fns, n), 0);
	for (size_t i = 0; i < n_pfs; i++)
		ck_assert_int_eq(sim_add_pf(fx.root, &pfs[i]), 0);
	ck_assert_int_eq(vfp_pcie_topo_scan(fx.ctx, &topo), 0);
}

static void setup_dgx(void)
{
	build(dgx, ELEMS(dgx), dgx_pfs, ELEMS(dgx_pfs));
}

static void setup_skylake(void)
{
	build(skylake, ELEMS(skylake), skylake_pfs, ELEMS(skylake_pfs));
}

static void setup_epyc(void)
{
	build(epyc, ELEMS(epyc), epyc_pfs, ELEMS(epyc_pfs));
}

static void setup_data_direct(void)
{
	fixture_setup(&fx);
	ck_assert_int_eq(sim_add_pcie_tree(fx.root, data_direct, ELEMS(data_direct)), 0);
	for (size_t i = 0; i < ELEMS(data_direct_pfs); i++)
		ck_assert_int_eq(sim_add_pf(fx.root, &data_direct_pfs[i]), 0);
	ck_assert_int_eq(sim_write_vpd(fx.root, "0000:04:00.0", "NVIDIA ConnectX-8 DMA",
				       "MT2442XZ0A1B", CX8_V3), 0);
	ck_assert_int_eq(sim_write_vpd(fx.root, "0000:06:00.0", "NVIDIA ConnectX-8 C8180",
				       "MT2442XZ0A1B", CX8_V3), 0);
	ck_assert_int_eq(sim_write_vpd(fx.root, "0000:07:00.0", "NVIDIA ConnectX-8 C8180",
				       "MT2442XZ0A1B", "62ee5a540e92"), 0);
	ck_assert_int_eq(vfp_pcie_topo_scan(fx.ctx, &topo), 0);
}

static void teardown(void)
{
	topo = vfp_pcie_topo_unref(topo);
	fixture_teardown(&fx);
}

static void assert_distance(const char *a, const char *b, const char *want)
{
	enum vfp_pcie_distance d = _VFP_PCIE_DISTANCE_MAX, back = _VFP_PCIE_DISTANCE_MAX;

	ck_assert_int_eq(vfp_pcie_topo_distance(topo, a, b, &d), 0);
	ck_assert_int_eq(vfp_pcie_topo_distance(topo, b, a, &back), 0);
	ck_assert_msg(strcmp(vfp_pcie_distance_to_string(d), want) == 0, "%s to %s: %s, wanted %s",
		      a, b, vfp_pcie_distance_to_string(d), want);
	ck_assert_int_eq(d, back);
}

/* The entry of @arr whose @key is @value. */
static json_t *find(json_t *arr, const char *key, const char *value)
{
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e)
		if (strcmp(json_string_value(json_object_get(e, key)) ?: "", value) == 0)
			return e;
	ck_abort_msg("no %s %s", key, value);
	return NULL;
}

START_TEST(test_dgx_distances)
{
	assert_distance("0000:04:00.0", "0000:05:00.0", "PIX"); /* GPU and HCA on one PLX */
	assert_distance("0000:04:00.0", "0000:05:00.2", "PIX"); /* a VF sits beside its PF */
	assert_distance("0000:05:00.0", "0000:05:00.2", "PIX");
	assert_distance("0000:04:00.0", "0000:09:00.0", "PHB"); /* the other PLX, one root */
	assert_distance("0000:04:00.0", "0000:86:00.0", "SYS"); /* the other socket */
	assert_distance("0000:85:00.0", "0000:86:00.0", "PXB"); /* two levels of PEX */
	assert_distance("0000:85:00.0", "0000:87:00.0", "PIX");
	assert_distance("0000:87:00.0", "0000:86:00.0", "PXB");
	assert_distance("0000:04:00.0", "0000:04:00.0", "X");
	assert_distance("04:00.0", "0000:05:00.0", "PIX"); /* the short form lspci prints */
}
END_TEST

START_TEST(test_dgx_json_paths_roles_acs)
{
	struct vfp_inventory *inv = fixture_scan(&fx);
	json_t *j = vfp_pcie_topo_to_json(topo, inv), *pf, *path, *gpu, *d;

	ck_assert_ptr_nonnull(j);
	pf = find(json_object_get(j, "pfs"), "pci", "0000:86:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(pf, "pcieRoot")), "pci0000:80");
	ck_assert_int_eq(json_integer_value(json_object_get(pf, "numaNode")), 1);
	path = json_object_get(pf, "path");
	ck_assert_int_eq(json_array_size(path), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(path, 0), "role")),
			 "root_port");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(path, 1), "pci")),
			 "0000:81:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(path, 1), "role")),
			 "switch_upstream");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(path, 2), "role")),
			 "switch_downstream");
	ck_assert(json_is_true(json_object_get(
		json_object_get(json_array_get(path, 2), "acs"), "p2p_redirect")));
	ck_assert_int_eq(json_array_size(json_object_get(pf, "vfs")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_array_get(json_object_get(pf, "vfs"), 0), "parent")),
			 "0000:82:04.0");
	/* the devices worth being near: 3 GPUs and an NVMe drive, no bridge, no HCA */
	ck_assert_int_eq(json_array_size(json_object_get(j, "devices")), 4);
	gpu = find(json_object_get(j, "devices"), "pci", "0000:04:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(gpu, "kind")), "gpu");
	d = find(json_object_get(gpu, "distances"), "pf", "0000:05:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(d, "distance")), "PIX");
	ck_assert(json_is_false(json_object_get(d, "acs_redirect"))); /* ACS off on the PLX */
	gpu = find(json_object_get(j, "devices"), "pci", "0000:85:00.0");
	d = find(json_object_get(gpu, "distances"), "pf", "0000:86:00.0");
	ck_assert(json_is_true(json_object_get(d, "acs_redirect")));
	ck_assert_str_eq(json_string_value(json_object_get(
				 find(json_object_get(j, "devices"), "pci", "0000:87:00.0"), "kind")),
			 "nvme");
	json_decref(j);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_skylake_roots_per_stack)
{
	/* one socket, two root complexes: NODE; across sockets: SYS */
	assert_distance("0000:3b:00.0", "0000:5e:00.0", "NODE");
	assert_distance("0000:3b:00.0", "0000:18:00.0", "NODE");
	assert_distance("0000:af:00.0", "0000:5e:00.0", "SYS");
	assert_distance("0000:af:00.0", "0000:d8:00.0", "NODE");
	assert_distance("0000:af:00.0", "0000:af:01.0", "PIX"); /* E810 VF 0 */
	ck_assert_str_eq(vfp_pcie_topo_get_root(topo, "0000:3b:00.0"), "pci0000:3a");
	ck_assert_str_eq(vfp_pcie_topo_get_root(topo, "0000:5e:00.0"), "pci0000:5d");
}
END_TEST

START_TEST(test_skylake_roles_by_place_and_accelerator)
{
	struct vfp_inventory *inv = fixture_scan(&fx);
	json_t *j = vfp_pcie_topo_to_json(topo, inv), *pf, *acc;

	pf = find(json_object_get(j, "pfs"), "pci", "0000:3b:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_array_get(json_object_get(pf, "path"), 0), "role")),
			 "root_port");
	ck_assert(json_is_null(json_object_get(json_array_get(json_object_get(pf, "path"), 0),
					       "acs")));
	acc = find(json_object_get(j, "devices"), "pci", "0000:d8:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(acc, "kind")), "accelerator");
	ck_assert_str_eq(json_string_value(json_object_get(acc, "class")), "0x120000");
	json_decref(j);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_epyc_root_is_not_the_bus)
{
	/* 0000:21:00.0 and 0000:23:00.0: one root complex, two root ports */
	ck_assert_str_eq(vfp_pcie_topo_get_root(topo, "0000:21:00.0"), "pci0000:20");
	ck_assert_str_eq(vfp_pcie_topo_get_root(topo, "0000:23:00.0"), "pci0000:20");
	assert_distance("0000:21:00.0", "0000:23:00.0", "PHB");
	/* bus 01 of two domains: two root complexes */
	ck_assert_str_eq(vfp_pcie_topo_get_root(topo, "0001:01:00.0"), "pci0001:00");
	assert_distance("0000:01:00.0", "0001:01:00.0", "NODE");
	assert_distance("0000:21:00.0", "0001:01:00.0", "NODE");
}
END_TEST

START_TEST(test_epyc_inventory_carries_dra_attributes)
{
	struct vfp_inventory *inv = fixture_scan(&fx);
	struct vfp_pf *pf = vfp_inventory_find_pf(inv, "0000:21:00.0");
	json_t *vf;

	ck_assert_ptr_nonnull(pf);
	ck_assert_str_eq(vfp_pf_get_pcie_root(pf), "pci0000:20");
	vf = vfp_vf_to_json(vfp_pf_get_vf(pf, 0));
	ck_assert_str_eq(json_string_value(json_object_get(vf, "pcieRoot")), "pci0000:20");
	ck_assert_int_eq(json_integer_value(json_object_get(vf, "numaNode")), 0);
	json_decref(vf);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_unknown_and_bad_addresses)
{
	enum vfp_pcie_distance d = VFP_PCIE_SYS;

	ck_assert_int_eq(vfp_pcie_topo_distance(topo, "0000:99:00.0", "0000:21:00.0", &d), -ENOENT);
	ck_assert_int_eq(vfp_pcie_topo_distance(topo, "gpu0", "0000:21:00.0", &d), -EINVAL);
	ck_assert_int_eq(d, VFP_PCIE_SYS); /* untouched */
	ck_assert_ptr_null(vfp_pcie_topo_get_root(topo, "0000:99:00.0"));
}
END_TEST

START_TEST(test_distance_names)
{
	ck_assert_int_eq(vfp_pcie_distance_from_string("PXB"), VFP_PCIE_PXB);
	ck_assert_int_eq(vfp_pcie_distance_from_string("node"), VFP_PCIE_NODE);
	ck_assert_int_eq(vfp_pcie_distance_from_string("NV12"), -EINVAL);
	ck_assert_int_eq(vfp_pcie_distance_from_string(NULL), -EINVAL);
	ck_assert_str_eq(vfp_pcie_distance_to_string(VFP_PCIE_SYS), "SYS");
	ck_assert_ptr_null(vfp_pcie_distance_to_string(_VFP_PCIE_DISTANCE_MAX));
}
END_TEST

/* A tree whose bus/pci/devices entries are plain directories places nothing: no error. */
START_TEST(test_flat_tree_places_nothing)
{
	struct fixture flat;
	struct vfp_pcie_topo *t = NULL;
	enum vfp_pcie_distance d;

	fixture_setup(&flat);
	ck_assert_int_eq(sim_mkdir_p(flat.root, "bus/pci/devices/0000:3b:00.0"), 0);
	ck_assert_int_eq(sim_write(flat.root, "bus/pci/devices/0000:3b:00.0/class", "0x030000\n"),
			 0);
	ck_assert_int_eq(vfp_pcie_topo_scan(flat.ctx, &t), 0);
	ck_assert_int_eq(vfp_pcie_topo_distance(t, "0000:3b:00.0", "0000:3b:00.0", &d), -ENOENT);
	vfp_pcie_topo_unref(t);
	fixture_teardown(&flat);
}
END_TEST

/* The CX-8 PF hangs off its own root port; its data goes through the DMA function beside the GPU. */
START_TEST(test_data_direct_distances)
{
	assert_distance("0000:03:00.0", "0000:06:00.0", "PIX"); /* wired PHB */
	assert_distance("0000:05:00.0", "0000:06:00.0", "PIX");
	assert_distance("0000:03:00.0", "0000:04:00.0", "PIX");
	/* the board's other CX-8: the same SN, its own V3, no Data Direct */
	assert_distance("0000:03:00.0", "0000:07:00.0", "PHB");
	assert_distance("0000:06:00.0", "0000:07:00.0", "PHB");
}
END_TEST

START_TEST(test_data_direct_json)
{
	struct vfp_inventory *inv = fixture_scan(&fx);
	json_t *j = vfp_pcie_topo_to_json(topo, inv), *pf, *dd, *gpu, *d;

	ck_assert_ptr_nonnull(j);
	pf = find(json_object_get(j, "pfs"), "pci", "0000:06:00.0");
	ck_assert_int_eq(json_array_size(json_object_get(pf, "path")), 1); /* its root port */
	dd = json_object_get(pf, "data_direct");
	ck_assert_str_eq(json_string_value(json_object_get(dd, "pci")), "0000:04:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(dd, "vpd_v3")), CX8_V3);
	ck_assert_str_eq(json_string_value(json_object_get(dd, "pcieRoot")), "pci0000:00");
	ck_assert_int_eq(json_array_size(json_object_get(dd, "path")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_array_get(json_object_get(dd, "path"), 2), "pci")),
			 "0000:02:01.0");
	pf = find(json_object_get(j, "pfs"), "pci", "0000:07:00.0");
	ck_assert(json_is_null(json_object_get(pf, "data_direct")));
	/* the DMA function is no device worth being near: the GPU and the NVMe drive */
	ck_assert_int_eq(json_array_size(json_object_get(j, "devices")), 2);
	gpu = find(json_object_get(j, "devices"), "pci", "0000:03:00.0");
	d = find(json_object_get(gpu, "distances"), "pf", "0000:06:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(d, "distance")), "PIX");
	ck_assert(json_is_false(json_object_get(d, "acs_redirect")));
	d = find(json_object_get(gpu, "distances"), "pf", "0000:07:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(d, "distance")), "PHB");
	json_decref(j);
	vfp_inventory_unref(inv);
}
END_TEST

/* An unprogrammed VPD (all 0xff) pairs nothing, and the warning names the file. */
START_TEST(test_data_direct_garbage_vpd)
{
	unsigned char ff[64];
	struct vfp_vpd_ids ids;
	FILE *out;
	char path[256];

	memset(ff, 0xff, sizeof(ff));
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:04:00.0/vpd", fx.root);
	out = fopen(path, "we");
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(fwrite(ff, 1, sizeof(ff), out), sizeof(ff));
	ck_assert_int_eq(fclose(out), 0);
	ck_assert_int_eq(vfp_sysfs_read_vpd(fx.ctx, "0000:04:00.0", &ids), -EBADMSG);
	ck_assert_ptr_nonnull(fixture_find_warning(&fx, "bus/pci/devices/0000:04:00.0/vpd: not VPD"));
	ck_assert_int_eq(vfp_sysfs_read_vpd(fx.ctx, "0000:03:00.0", &ids), -ENOENT);
	ck_assert_int_eq(vfp_sysfs_read_vpd(fx.ctx, "0000:06:00.0", &ids), 0);
	ck_assert_str_eq(ids.sn, "MT2442XZ0A1B");
	ck_assert_str_eq(ids.v3, CX8_V3);
	topo = vfp_pcie_topo_unref(topo);
	ck_assert_int_eq(vfp_pcie_topo_scan(fx.ctx, &topo), 0);
	assert_distance("0000:03:00.0", "0000:06:00.0", "PHB");
}
END_TEST

/* VPD bytes as the PCI spec lays them out, and what is refused. */
START_TEST(test_vpd_parse)
{
	static const unsigned char good[] = { 0x82, 0x02, 0x00, 'C', 'X', 0x90, 0x0e, 0x00,
					      'S',  'N',  0x03, 'M', 'T', '1', 'V', '3',
					      0x02, 'a',  'b',  'R', 'V', 0x00, 0x78 };
	unsigned char bad[sizeof(good)];
	struct vfp_vpd_ids ids;

	ck_assert_int_eq(vfp_vpd_parse(good, sizeof(good), &ids), 0);
	ck_assert_str_eq(ids.sn, "MT1");
	ck_assert_str_eq(ids.v3, "ab");
	ck_assert_int_eq(vfp_vpd_parse(good, 4, &ids), -EBADMSG); /* the ID string cut short */
	ck_assert_int_eq(vfp_vpd_parse(good, 12, &ids), -EBADMSG); /* VPD-R cut short */
	memcpy(bad, good, sizeof(bad));
	bad[0] = 0x90; /* no Identifier String first */
	ck_assert_int_eq(vfp_vpd_parse(bad, sizeof(bad), &ids), -EBADMSG);
	memcpy(bad, good, sizeof(bad));
	bad[17] = 0x07; /* a control byte in V3, after a good SN */
	ck_assert_int_eq(vfp_vpd_parse(bad, sizeof(bad), &ids), -EBADMSG);
	ck_assert_str_eq(ids.v3, ""); /* a refused VPD leaves nothing half-read */
	memcpy(bad, good, sizeof(bad));
	bad[10] = 0x20; /* SN's length past the end of VPD-R */
	ck_assert_int_eq(vfp_vpd_parse(bad, sizeof(bad), &ids), -EBADMSG);
}
END_TEST

Suite *suite_pcie_topo(void)
{
	Suite *s = suite_create("pcie-topo");
	TCase *tc = tcase_create("dgx");

	tcase_add_checked_fixture(tc, setup_dgx, teardown);
	tcase_add_test(tc, test_dgx_distances);
	tcase_add_test(tc, test_dgx_json_paths_roles_acs);
	suite_add_tcase(s, tc);
	tc = tcase_create("skylake");
	tcase_add_checked_fixture(tc, setup_skylake, teardown);
	tcase_add_test(tc, test_skylake_roots_per_stack);
	tcase_add_test(tc, test_skylake_roles_by_place_and_accelerator);
	suite_add_tcase(s, tc);
	tc = tcase_create("epyc");
	tcase_add_checked_fixture(tc, setup_epyc, teardown);
	tcase_add_test(tc, test_epyc_root_is_not_the_bus);
	tcase_add_test(tc, test_epyc_inventory_carries_dra_attributes);
	tcase_add_test(tc, test_unknown_and_bad_addresses);
	suite_add_tcase(s, tc);
	tc = tcase_create("data-direct");
	tcase_add_checked_fixture(tc, setup_data_direct, teardown);
	tcase_add_test(tc, test_data_direct_distances);
	tcase_add_test(tc, test_data_direct_json);
	tcase_add_test(tc, test_data_direct_garbage_vpd);
	suite_add_tcase(s, tc);
	tc = tcase_create("names");
	tcase_add_test(tc, test_vpd_parse);
	tcase_add_test(tc, test_distance_names);
	tcase_add_test(tc, test_flat_tree_places_nothing);
	suite_add_tcase(s, tc);
	return s;
}
