/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The inventory of well-formed trees: every card shape of the simulated
 * host, field by field, compared with the JSON an operator would see.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sim/sim-host.h"
#include "check-suites.h"
#include "fixtures.h"

static struct fixture fx;

static void setup(void)
{
	fixture_setup(&fx);
	ck_assert_int_eq(sim_host_build_default(fx.root), 0);
}

static void teardown(void)
{
	fixture_teardown(&fx);
}

static void assert_json(json_t *got, const char *expected_text)
{
	json_error_t err;
	json_t *expected = json_loads(expected_text, 0, &err);
	char *g;

	ck_assert_msg(expected, "bad expected JSON: %s", err.text);
	g = json_dumps(got, JSON_SORT_KEYS);
	ck_assert_msg(json_equal(got, expected), "got %s\nexpected %s", g, expected_text);
	free(g);
	json_decref(expected);
	json_decref(got);
}

static const char *const pfs[] = {
	"{\"pci\":\"0000:3b:00.0\",\"vendor\":\"15b3\",\"device\":\"101b\",\"driver\":\"mlx5_core\","
	"\"netdev\":\"ib0\",\"link_type\":\"infiniband\",\"rdma_device\":\"mlx5_0\",\"numa_node\":0,"
	"\"totalvfs\":16,\"numvfs\":4,\"numvfs_writable\":true,\"pcieRoot\":\"pci0000:36\",\"numaNode\":0}",
	"{\"pci\":\"0000:5e:00.0\",\"vendor\":\"15b3\",\"device\":\"1003\",\"driver\":\"mlx4_core\","
	"\"netdev\":\"ib1\",\"link_type\":\"infiniband\",\"rdma_device\":\"mlx4_10\",\"numa_node\":0,"
	"\"totalvfs\":4,\"numvfs\":4,\"numvfs_writable\":false,\"pcieRoot\":\"pci0000:36\",\"numaNode\":0}",
	"{\"pci\":\"0000:af:00.0\",\"vendor\":\"8086\",\"device\":\"159b\",\"driver\":\"ice\","
	"\"netdev\":\"ens5f0\",\"link_type\":\"ethernet\",\"rdma_device\":null,\"numa_node\":1,"
	"\"totalvfs\":128,\"numvfs\":4,\"numvfs_writable\":true,\"pcieRoot\":\"pci0000:ae\",\"numaNode\":1}",
	"{\"pci\":\"0000:d8:00.0\",\"vendor\":\"8086\",\"device\":\"10fb\",\"driver\":\"ixgbe\","
	"\"netdev\":\"enp216s0f0\",\"link_type\":\"ethernet\",\"rdma_device\":null,\"numa_node\":-1,"
	"\"totalvfs\":63,\"numvfs\":2,\"numvfs_writable\":true,\"pcieRoot\":\"pci0000:d7\"}",
};

START_TEST(test_pfs_in_order_with_exact_fields)
{
	struct vfp_inventory *inv = fixture_scan(&fx);

	ck_assert_uint_eq(vfp_inventory_get_pf_count(inv), 4);
	ck_assert_uint_eq(vfp_inventory_get_vf_count(inv), 14);
	ck_assert_uint_eq(fx.n_warnings, 0);
	for (size_t i = 0; i < 4; i++)
		assert_json(vfp_pf_to_json(vfp_inventory_get_pf(inv, i), false), pfs[i]);
	vfp_inventory_unref(inv);
}
END_TEST

/* ConnectX-6: VFs on mlx5_core (netdev, RDMA device), vfio-pci and no driver. */
static const char *const cx6_vfs[] = {
	"{\"pci\":\"0000:3b:00.1\",\"pf\":\"0000:3b:00.0\",\"index\":0,\"vendor\":\"15b3\","
	"\"device\":\"101c\",\"driver\":\"mlx5_core\",\"netdev\":\"ib0v0\",\"mac\":"
	"\"00:00:10:87:fe:80:00:00:00:00:00:00:02:c9:03:00:00:00:29:29\",\"link_type\":"
	"\"infiniband\",\"rdma_device\":\"mlx5_1\",\"numa_node\":0,\"iommu_group\":41,"
	"\"pcieRoot\":\"pci0000:36\",\"numaNode\":0}",
	"{\"pci\":\"0000:3b:00.2\",\"pf\":\"0000:3b:00.0\",\"index\":1,\"vendor\":\"15b3\","
	"\"device\":\"101c\",\"driver\":\"vfio-pci\",\"netdev\":null,\"mac\":null,\"link_type\":"
	"\"infiniband\",\"rdma_device\":null,\"numa_node\":0,\"iommu_group\":42,"
	"\"pcieRoot\":\"pci0000:36\",\"numaNode\":0}",
	"{\"pci\":\"0000:3b:00.3\",\"pf\":\"0000:3b:00.0\",\"index\":2,\"vendor\":\"15b3\","
	"\"device\":\"101c\",\"driver\":null,\"netdev\":null,\"mac\":null,\"link_type\":"
	"\"infiniband\",\"rdma_device\":null,\"numa_node\":0,\"iommu_group\":43,"
	"\"pcieRoot\":\"pci0000:36\",\"numaNode\":0}",
};

START_TEST(test_cx6_vfs)
{
	struct vfp_inventory *inv = fixture_scan(&fx);
	struct vfp_pf *pf = vfp_inventory_find_pf(inv, "0000:3b:00.0");

	ck_assert_ptr_nonnull(pf);
	ck_assert_uint_eq(vfp_pf_get_vf_count(pf), 4);
	for (size_t i = 0; i < 3; i++)
		assert_json(vfp_vf_to_json(vfp_pf_get_vf(pf, i)), cx6_vfs[i]);
	ck_assert_ptr_eq(vfp_vf_get_pf(vfp_pf_get_vf(pf, 3)), pf);
	ck_assert_ptr_null(vfp_pf_get_vf(pf, 4));
	vfp_inventory_unref(inv);
}
END_TEST

/* Intel: offset and stride place VFs on other slots; netdevs carry MACs. */
START_TEST(test_intel_vfs)
{
	struct vfp_inventory *inv = fixture_scan(&fx);

	assert_json(vfp_vf_to_json(vfp_inventory_find_vf(inv, "0000:af:01.3")),
		    "{\"pci\":\"0000:af:01.3\",\"pf\":\"0000:af:00.0\",\"index\":3,"
		    "\"vendor\":\"8086\",\"device\":\"1889\",\"driver\":\"iavf\",\"netdev\":"
		    "\"ens5f0v3\",\"mac\":\"fa:16:3e:00:54:54\",\"link_type\":\"ethernet\","
		    "\"rdma_device\":null,\"numa_node\":1,\"iommu_group\":84,"
		    "\"pcieRoot\":\"pci0000:ae\",\"numaNode\":1}");
	assert_json(vfp_vf_to_json(vfp_inventory_find_vf(inv, "0000:d8:10.2")),
		    "{\"pci\":\"0000:d8:10.2\",\"pf\":\"0000:d8:00.0\",\"index\":1,"
		    "\"vendor\":\"8086\",\"device\":\"10ed\",\"driver\":\"ixgbevf\",\"netdev\":"
		    "\"enp216s0f0v1\",\"mac\":\"fa:16:3e:00:66:66\",\"link_type\":\"ethernet\","
		    "\"rdma_device\":null,\"numa_node\":-1,\"iommu_group\":102,"
		    "\"pcieRoot\":\"pci0000:d7\"}");
	vfp_inventory_unref(inv);
}
END_TEST

/* rxe over a VF's netdev: no infiniband/ entry under the VF, its "parent" names the netdev. */
START_TEST(test_soft_rdma_over_vf_netdev)
{
	struct vfp_inventory *inv;

	ck_assert_int_eq(sim_write(fx.root, "class/infiniband/rxe0/parent", "ens5f0v3\n"), 0);
	ck_assert_int_eq(sim_write(fx.root, "class/infiniband/siw9/parent", "nosuchdev\n"), 0);
	inv = fixture_scan(&fx);
	ck_assert_str_eq(vfp_vf_get_rdma_device(vfp_inventory_find_vf(inv, "0000:af:01.3")), "rxe0");
	ck_assert_ptr_null(vfp_vf_get_rdma_device(vfp_inventory_find_vf(inv, "0000:af:01.2")));
	ck_assert_str_eq(vfp_vf_get_rdma_device(vfp_inventory_find_vf(inv, "0000:3b:00.1")), "mlx5_1");
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_non_sriov_devices_not_listed)
{
	struct vfp_inventory *inv = fixture_scan(&fx);
	static const char *const plain[] = { "0000:00:00.0", "0000:01:00.0", "0000:02:00.0" };

	for (size_t i = 0; i < 3; i++) {
		ck_assert_ptr_null(vfp_inventory_find_pf(inv, plain[i]));
		ck_assert_ptr_null(vfp_inventory_find_vf(inv, plain[i]));
	}
	/* a VF is listed under its PF, never as a PF of its own */
	ck_assert_ptr_null(vfp_inventory_find_pf(inv, "0000:3b:00.1"));
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_inventory_json_shape)
{
	struct vfp_inventory *inv = fixture_scan(&fx);
	json_t *o = vfp_inventory_to_json(inv);
	json_t *pf0, *vfs;

	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "pfs")), 4);
	pf0 = json_array_get(json_object_get(o, "pfs"), 0);
	vfs = json_object_get(pf0, "vfs");
	ck_assert_uint_eq(json_array_size(vfs), 4);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(vfs, 3), "pci")),
			 "0000:3b:00.4");
	ck_assert_uint_eq(json_object_size(pf0), 14);
	ck_assert_uint_eq(json_object_size(json_array_get(vfs, 0)), 14);
	json_decref(o);
	vfp_inventory_unref(inv);
}
END_TEST

START_TEST(test_unbound_pf_not_writable)
{
	struct vfp_inventory *inv;

	ck_assert_int_eq(sim_bind_driver(fx.root, "0000:af:00.0", NULL), 0);
	inv = fixture_scan(&fx);
	ck_assert_ptr_null(vfp_pf_get_driver(vfp_inventory_find_pf(inv, "0000:af:00.0")));
	ck_assert(!vfp_pf_get_numvfs_writable(vfp_inventory_find_pf(inv, "0000:af:00.0")));
	ck_assert(vfp_pf_get_numvfs_writable(vfp_inventory_find_pf(inv, "0000:3b:00.0")));
	vfp_inventory_unref(inv);
}
END_TEST

/* A PF with no netdev takes its link type from its RDMA port, else its PCI class. */
START_TEST(test_link_type_fallbacks)
{
	struct fixture f2;
	const struct sim_pf_spec ib = { SIM_CX6_IB, "0000:81:00.0", NULL, 0, 0, 10, 8, 2, NULL };
	const struct sim_pf_spec eth = { SIM_E810, "0000:85:00.0", NULL, 0, 0, 20, 8, 1, NULL };
	struct vfp_inventory *inv;

	fixture_setup(&f2);
	ck_assert_int_eq(sim_add_pf(f2.root, &ib), 0);
	ck_assert_int_eq(sim_add_pf(f2.root, &eth), 0);
	inv = fixture_scan(&f2);
	ck_assert_uint_eq(f2.n_warnings, 0);
	ck_assert_int_eq(vfp_pf_get_link_type(vfp_inventory_get_pf(inv, 0)), VFP_LINK_INFINIBAND);
	ck_assert_int_eq(vfp_pf_get_link_type(vfp_inventory_get_pf(inv, 1)), VFP_LINK_ETHERNET);
	ck_assert_int_eq(vfp_vf_get_link_type(vfp_inventory_find_vf(inv, "0000:85:01.0")),
			 VFP_LINK_ETHERNET);
	vfp_inventory_unref(inv);
	fixture_teardown(&f2);
}
END_TEST

START_TEST(test_missing_root)
{
	struct vfp_inventory *inv = NULL;

	ck_assert_int_eq(vfp_ctx_set_sysfs_root(fx.ctx, "/nonexistent/vfagent"), 0);
	ck_assert_int_eq(vfp_inventory_scan(fx.ctx, &inv), -ENOENT);
	ck_assert_ptr_null(inv);
}
END_TEST

START_TEST(test_empty_host)
{
	struct fixture f2;
	struct vfp_inventory *inv;

	fixture_setup(&f2);
	ck_assert_int_eq(sim_mkdir_p(f2.root, "bus/pci/devices"), 0);
	inv = fixture_scan(&f2);
	ck_assert_uint_eq(vfp_inventory_get_pf_count(inv), 0);
	ck_assert_ptr_null(vfp_inventory_get_pf(inv, 0));
	ck_assert_ptr_nonnull(vfp_inventory_ref(inv));
	ck_assert_ptr_null(vfp_inventory_unref(inv));
	ck_assert_ptr_null(vfp_inventory_unref(inv));
	fixture_teardown(&f2);
}
END_TEST

/*
 * An IOMMU group's members are listed once per inventory: a device that
 * joins the group later (a hotplug, which makes the agent scan again) is
 * in the next inventory's answer, not in this one's.
 */
START_TEST(test_iommu_group_listed_once_per_inventory)
{
	struct vfp_inventory *inv = fixture_scan(&fx), *next;
	const char *const *devs, *const *again;
	size_t n = 0, n2 = 0;

	ck_assert_int_eq(vfp_inventory_get_iommu_group_devices(inv, 41, &devs, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(devs[0], "0000:3b:00.1");
	ck_assert_int_eq(sim_symlink(fx.root, "kernel/iommu_groups/41/devices/0000:3b:00.7",
				     "devices/pci0000:00/0000:3b:00.7"), 0);
	ck_assert_int_eq(vfp_inventory_get_iommu_group_devices(inv, 41, &again, &n2), 0);
	ck_assert_ptr_eq(again, devs);
	ck_assert_uint_eq(n2, 1);
	next = fixture_scan(&fx);
	ck_assert_int_eq(vfp_inventory_get_iommu_group_devices(next, 41, &again, &n2), 0);
	ck_assert_uint_eq(n2, 2);
	ck_assert_str_eq(again[1], "0000:3b:00.7");
	ck_assert_int_eq(vfp_inventory_get_iommu_group_devices(inv, -1, &again, &n2), -EINVAL);
	/* a group that is not there is not remembered: once it exists, it is listed */
	ck_assert_int_eq(vfp_inventory_get_iommu_group_devices(inv, 999, &again, &n2), -ENOENT);
	ck_assert_int_eq(sim_symlink(fx.root, "kernel/iommu_groups/999/devices/0000:3b:00.7",
				     "devices/pci0000:00/0000:3b:00.7"), 0);
	ck_assert_int_eq(vfp_inventory_get_iommu_group_devices(inv, 999, &again, &n2), 0);
	ck_assert_uint_eq(n2, 1);
	vfp_inventory_unref(next);
	vfp_inventory_unref(inv);
}
END_TEST

Suite *suite_inventory(void)
{
	Suite *s = suite_create("inventory");
	TCase *tc = tcase_create("default-host");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pfs_in_order_with_exact_fields);
	tcase_add_test(tc, test_cx6_vfs);
	tcase_add_test(tc, test_intel_vfs);
	tcase_add_test(tc, test_soft_rdma_over_vf_netdev);
	tcase_add_test(tc, test_non_sriov_devices_not_listed);
	tcase_add_test(tc, test_inventory_json_shape);
	tcase_add_test(tc, test_unbound_pf_not_writable);
	tcase_add_test(tc, test_link_type_fallbacks);
	tcase_add_test(tc, test_missing_root);
	tcase_add_test(tc, test_empty_host);
	tcase_add_test(tc, test_iommu_group_listed_once_per_inventory);
	suite_add_tcase(s, tc);
	return s;
}
