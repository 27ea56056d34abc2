/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad sysfs never stops a scan: each case spoils one file of a small host
 * (a ConnectX-6 PF with three VFs) and checks what the scan still reports,
 * what it leaves absent, and that exactly one warning names the file.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/sim/sim-host.h"
#include "check-suites.h"
#include "fixtures.h"

#define PF "0000:3b:00.0"
#define VF0 "0000:3b:00.1"
#define VF1 "0000:3b:00.2"
#define VF2 "0000:3b:00.3"

static struct fixture fx;

static void setup(void)
{
	const struct sim_pf_spec spec = { SIM_CX6_IB, PF, "ib0", 0, 0, 40, 8, 3, NULL };

	fixture_setup(&fx);
	ck_assert_int_eq(sim_add_pf(fx.root, &spec), 0);
}

static void teardown(void)
{
	fixture_teardown(&fx);
}

/* Absolute path of a file in a device's directory. */
static const char *devfile(const char *addr, const char *file)
{
	static char path[2 * PATH_MAX];
	char dev[PATH_MAX];

	ck_assert_int_eq(sim_device_dir(fx.root, addr, dev, sizeof(dev)), 0);
	snprintf(path, sizeof(path), "%s/%s/%s", fx.root, dev, file);
	return path;
}

static void spoil(const char *addr, const char *file, const char *content)
{
	FILE *f = fopen(devfile(addr, file), "we");

	ck_assert_ptr_nonnull(f);
	fputs(content, f);
	fclose(f);
}

static void relink(const char *addr, const char *file, const char *target)
{
	const char *path = devfile(addr, file);

	unlink(path);
	ck_assert_int_eq(symlink(target, path), 0);
}

/* Scans and checks that exactly one warning was emitted, naming @file and saying @what. */
static struct vfp_inventory *scan_one_warning(const char *file, const char *what)
{
	struct vfp_inventory *inv = fixture_scan(&fx);
	char name[PATH_MAX];

	snprintf(name, sizeof(name), "%s/bus/pci/devices/%s:", fx.root, file);
	ck_assert_msg(fx.n_warnings == 1, "%zu warnings, first: %s", fx.n_warnings,
		      fx.n_warnings ? fx.warnings[0] : "(none)");
	ck_assert_msg(strstr(fx.warnings[0], name), "warning \"%s\" does not name %s",
		      fx.warnings[0], name);
	ck_assert_msg(strstr(fx.warnings[0], what), "warning \"%s\" does not say \"%s\"",
		      fx.warnings[0], what);
	return inv;
}

static int opt(int (*get)(const struct vfp_pf *, int *), const struct vfp_pf *pf)
{
	int v = 12345;

	return get(pf, &v) < 0 ? -999 : v;
}

START_TEST(test_totalvfs_not_numeric)
{
	struct vfp_inventory *inv;
	struct vfp_pf *pf;

	spoil(PF, "sriov_totalvfs", "abc\n");
	inv = scan_one_warning(PF "/sriov_totalvfs", "\"abc\"");
	pf = vfp_inventory_find_pf(inv, PF);
	ck_assert_ptr_nonnull(pf);
	ck_assert_int_eq(opt(vfp_pf_get_totalvfs, pf), -999);
	ck_assert_int_eq(opt(vfp_pf_get_numvfs, pf), 3);
	ck_assert_uint_eq(vfp_pf_get_vf_count(pf), 3);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_numvfs_empty)
{
	struct vfp_inventory *inv;
	struct vfp_pf *pf;

	spoil(PF, "sriov_numvfs", "");
	inv = scan_one_warning(PF "/sriov_numvfs", "\"\"");
	pf = vfp_inventory_find_pf(inv, PF);
	ck_assert_int_eq(opt(vfp_pf_get_numvfs, pf), -999);
	ck_assert_int_eq(opt(vfp_pf_get_totalvfs, pf), 8);
	ck_assert_uint_eq(vfp_pf_get_vf_count(pf), 3);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_numa_node_garbage)
{
	struct vfp_inventory *inv;
	struct vfp_vf *vf;
	int node = 77;

	spoil(VF1, "numa_node", "north\n");
	inv = scan_one_warning(VF1 "/numa_node", "\"north\"");
	vf = vfp_inventory_find_vf(inv, VF1);
	ck_assert_int_lt(vfp_vf_get_numa_node(vf, &node), 0);
	ck_assert_int_eq(node, 77);
	ck_assert_int_eq(vfp_vf_get_numa_node(vfp_inventory_find_vf(inv, VF2), &node), 0);
	ck_assert_int_eq(node, 0);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_numa_node_out_of_range)
{
	struct vfp_inventory *inv;

	spoil(PF, "numa_node", "-2\n");
	inv = scan_one_warning(PF "/numa_node", "\"-2\"");
	ck_assert_int_eq(opt(vfp_pf_get_numa_node, vfp_inventory_find_pf(inv, PF)), -999);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_vendor_garbage)
{
	struct vfp_inventory *inv;
	struct vfp_vf *vf;

	spoil(VF0, "vendor", "0x15b3zz\n");
	inv = scan_one_warning(VF0 "/vendor", "not a PCI id");
	vf = vfp_inventory_find_vf(inv, VF0);
	ck_assert_ptr_null(vfp_vf_get_vendor(vf));
	ck_assert_str_eq(vfp_vf_get_device(vf), "101c");
	ck_assert_str_eq(vfp_vf_get_netdev(vf), "ib0v0");
	vfp_inventory_unref(inv);
}
END_TEST

/* Six characters, "0x" first, yet no id: strtol took "0x0x12" for 0x12; a sign or a space */
START_TEST(test_vendor_six_chars_not_hex)
{
	static const char *const garbage[] = { "0x0x12\n", "0x+1b3\n", "0x 1b3\n" };
	struct vfp_inventory *inv;

	spoil(VF0, "vendor", garbage[_i]);
	inv = scan_one_warning(VF0 "/vendor", "not a PCI id");
	ck_assert_ptr_null(vfp_vf_get_vendor(vfp_inventory_find_vf(inv, VF0)));
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_vendor_upper_case)
{
	struct vfp_inventory *inv;

	spoil(VF0, "vendor", "0x15B3\n");
	inv = fixture_scan(&fx);
	ck_assert_uint_eq(fx.n_warnings, 0);
	ck_assert_str_eq(vfp_vf_get_vendor(vfp_inventory_find_vf(inv, VF0)), "15b3");
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_virtfn_dangling)
{
	char path[PATH_MAX];
	struct vfp_inventory *inv;
	struct vfp_pf *pf;

	/* the VF's directory and bus link are gone; the PF's virtfn1 still points at it */
	snprintf(path, sizeof(path), "%s/bus/pci/devices/" VF1, fx.root);
	ck_assert_int_eq(rm_rf(devfile(VF1, "")), 0);
	ck_assert_int_eq(unlink(path), 0);
	inv = scan_one_warning(PF "/virtfn1", "dangling link to " VF1);
	pf = vfp_inventory_find_pf(inv, PF);
	ck_assert_uint_eq(vfp_pf_get_vf_count(pf), 2);
	ck_assert_uint_eq(vfp_vf_get_index(vfp_pf_get_vf(pf, 0)), 0);
	ck_assert_uint_eq(vfp_vf_get_index(vfp_pf_get_vf(pf, 1)), 2);
	ck_assert_str_eq(vfp_vf_get_pci(vfp_pf_get_vf(pf, 1)), VF2);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_virtfn_outside_pci_tree)
{
	struct vfp_inventory *inv;
	struct vfp_pf *pf;

	relink(PF, "virtfn1", "../../../../../etc");
	inv = scan_one_warning(PF "/virtfn1", "points outside the PCI tree");
	pf = vfp_inventory_find_pf(inv, PF);
	ck_assert_uint_eq(vfp_pf_get_vf_count(pf), 2);
	ck_assert_ptr_null(vfp_inventory_find_vf(inv, VF1));
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_virtfn_absolute_target)
{
	struct vfp_inventory *inv;

	relink(PF, "virtfn0", "/sys/bus/pci/devices/" VF0);
	inv = scan_one_warning(PF "/virtfn0", "points outside the PCI tree");
	ck_assert_ptr_null(vfp_inventory_find_vf(inv, VF0));
	ck_assert_ptr_nonnull(vfp_inventory_find_vf(inv, VF1));
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_virtfn_not_a_link)
{
	struct vfp_inventory *inv;

	ck_assert_int_eq(unlink(devfile(PF, "virtfn0")), 0);
	spoil(PF, "virtfn0", "0000:3b:00.1\n");
	inv = scan_one_warning(PF "/virtfn0", "not a readable link");
	ck_assert_uint_eq(vfp_pf_get_vf_count(vfp_inventory_find_pf(inv, PF)), 2);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_unreadable_attribute)
{
	struct vfp_inventory *inv;
	struct vfp_pf *pf;

	/* a directory where a file should be: unreadable even for root */
	ck_assert_int_eq(unlink(devfile(PF, "sriov_numvfs")), 0);
	ck_assert_int_eq(mkdir(devfile(PF, "sriov_numvfs"), 0755), 0);
	inv = scan_one_warning(PF "/sriov_numvfs", "cannot read: Is a directory");
	pf = vfp_inventory_find_pf(inv, PF);
	ck_assert_int_eq(opt(vfp_pf_get_numvfs, pf), -999);
	ck_assert_str_eq(vfp_pf_get_driver(pf), "mlx5_core");
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_unreadable_permission)
{
	struct vfp_inventory *inv;

	if (geteuid() == 0)
		return; /* root reads mode-000 files; test_unreadable_attribute covers this */
	ck_assert_int_eq(chmod(devfile(VF2, "device"), 0), 0);
	inv = scan_one_warning(VF2 "/device", "Permission denied");
	ck_assert_ptr_null(vfp_vf_get_device(vfp_inventory_find_vf(inv, VF2)));
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_net_with_two_entries)
{
	struct vfp_inventory *inv;
	struct vfp_vf *vf;

	ck_assert_int_eq(sim_add_netdev(fx.root, VF0, "ib0v0b", 32, "00:11:22:33:44:55"), 0);
	inv = scan_one_warning(VF0 "/net", "2 entries (ib0v0, ib0v0b");
	vf = vfp_inventory_find_vf(inv, VF0);
	ck_assert_ptr_null(vfp_vf_get_netdev(vf));
	ck_assert_ptr_null(vfp_vf_get_mac(vf));
	ck_assert_str_eq(vfp_vf_get_rdma_device(vf), "mlx5_1");
	ck_assert_int_eq(vfp_vf_get_link_type(vf), VFP_LINK_INFINIBAND); /* from the PF */
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_physfn_missing)
{
	struct vfp_inventory *inv;
	struct vfp_vf *vf;

	ck_assert_int_eq(unlink(devfile(VF0, "physfn")), 0);
	inv = scan_one_warning(VF0 "/physfn", "missing");
	vf = vfp_inventory_find_vf(inv, VF0);
	ck_assert_ptr_nonnull(vf);
	ck_assert_str_eq(vfp_vf_get_pf_pci(vf), PF);
	ck_assert_str_eq(vfp_vf_get_driver(vf), "mlx5_core");
	ck_assert_str_eq(vfp_vf_get_netdev(vf), "ib0v0");
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_physfn_points_elsewhere)
{
	struct vfp_inventory *inv;

	relink(VF2, "physfn", "../0000:3b:00.7");
	inv = scan_one_warning(VF2 "/physfn", "points at 0000:3b:00.7, not at PF " PF);
	ck_assert_ptr_nonnull(vfp_inventory_find_vf(inv, VF2));
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_iommu_group_garbage)
{
	struct vfp_inventory *inv;
	int g = 5;

	relink(VF1, "iommu_group", "../../../../kernel/iommu_groups/abc");
	inv = scan_one_warning(VF1 "/iommu_group", "\"abc\"");
	ck_assert_int_lt(vfp_vf_get_iommu_group(vfp_inventory_find_vf(inv, VF1), &g), 0);
	ck_assert_int_eq(vfp_vf_get_iommu_group(vfp_inventory_find_vf(inv, VF2), &g), 0);
	ck_assert_int_eq(g, 43);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_netdev_type_garbage)
{
	struct vfp_inventory *inv;
	struct vfp_vf *vf;

	spoil(VF0, "net/ib0v0/type", "ether\n");
	inv = scan_one_warning(VF0 "/net/ib0v0/type", "\"ether\"");
	vf = vfp_inventory_find_vf(inv, VF0);
	ck_assert_str_eq(vfp_vf_get_netdev(vf), "ib0v0");
	ck_assert_int_eq(vfp_vf_get_link_type(vf), VFP_LINK_INFINIBAND); /* the PF's */
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_mac_garbage)
{
	struct vfp_inventory *inv;

	spoil(VF2, "net/ib0v2/address", "zz:zz\n");
	inv = scan_one_warning(VF2 "/net/ib0v2/address", "not a hardware address");
	ck_assert_ptr_null(vfp_vf_get_mac(vfp_inventory_find_vf(inv, VF2)));
	ck_assert_str_eq(vfp_vf_get_netdev(vfp_inventory_find_vf(inv, VF2)), "ib0v2");
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_driver_not_a_link)
{
	struct vfp_inventory *inv;

	ck_assert_int_eq(unlink(devfile(VF1, "driver")), 0);
	spoil(VF1, "driver", "mlx5_core\n");
	inv = scan_one_warning(VF1 "/driver", "not a readable link");
	ck_assert_ptr_null(vfp_vf_get_driver(vfp_inventory_find_vf(inv, VF1)));
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_netdev_name_not_ascii)
{
	char from[2 * PATH_MAX];
	struct vfp_inventory *inv;

	snprintf(from, sizeof(from), "%s", devfile(VF2, "net/ib0v2"));
	ck_assert_int_eq(rename(from, devfile(VF2, "net/ib\xff")), 0);
	inv = scan_one_warning(VF2 "/net", "not printable ASCII");
	ck_assert_ptr_null(vfp_vf_get_netdev(vfp_inventory_find_vf(inv, VF2)));
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_bus_entry_not_pci_address)
{
	char path[PATH_MAX];
	struct vfp_inventory *inv;

	snprintf(path, sizeof(path), "%s/bus/pci/devices/not-a-device", fx.root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	inv = fixture_scan(&fx);
	ck_assert_uint_eq(fx.n_warnings, 0);
	ck_assert_uint_eq(vfp_inventory_get_pf_count(inv), 1);
	vfp_inventory_unref(inv);
}
END_TEST

Suite *suite_garbage(void)
{
	Suite *s = suite_create("garbage");
	TCase *tc = tcase_create("bad-sysfs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_totalvfs_not_numeric);
	tcase_add_test(tc, test_numvfs_empty);
	tcase_add_test(tc, test_numa_node_garbage);
	tcase_add_test(tc, test_numa_node_out_of_range);
	tcase_add_test(tc, test_vendor_garbage);
	tcase_add_loop_test(tc, test_vendor_six_chars_not_hex, 0, 3);
	tcase_add_test(tc, test_vendor_upper_case);
	tcase_add_test(tc, test_virtfn_dangling);
	tcase_add_test(tc, test_virtfn_outside_pci_tree);
	tcase_add_test(tc, test_virtfn_absolute_target);
	tcase_add_test(tc, test_virtfn_not_a_link);
	tcase_add_test(tc, test_unreadable_attribute);
	tcase_add_test(tc, test_unreadable_permission);
	tcase_add_test(tc, test_net_with_two_entries);
	tcase_add_test(tc, test_physfn_missing);
	tcase_add_test(tc, test_physfn_points_elsewhere);
	tcase_add_test(tc, test_iommu_group_garbage);
	tcase_add_test(tc, test_netdev_type_garbage);
	tcase_add_test(tc, test_mac_garbage);
	tcase_add_test(tc, test_driver_not_a_link);
	tcase_add_test(tc, test_netdev_name_not_ascii);
	tcase_add_test(tc, test_bus_entry_not_pci_address);
	suite_add_tcase(s, tc);
	return s;
}
