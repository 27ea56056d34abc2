/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Driver binding, fresh netdev lookups and IB GUID files, on the simulated host's kernel. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sim/sim-host.h"
#include "check-suites.h"
#include "fixtures.h"
#include "libvfpool/libvfpool.h"
#include "libvfpool/sysfs.h"

static struct fixture fx;

static void setup(void)
{
	fixture_setup(&fx);
	ck_assert_int_eq(sim_host_build_default(fx.root), 0);
	vfp_ctx_set_sysfs_write_handler(fx.ctx, sim_kernel_write, NULL);
}

static void teardown(void)
{
	fixture_teardown(&fx);
}

static const char *driver_of(const char *pci)
{
	static char buf[64];

	ck_assert_int_eq(vfp_device_read_driver(fx.ctx, pci, buf, sizeof(buf)), 0);
	return buf;
}

/* The first ConnectX-6 VF: mlx5_core with a netdev; to vfio-pci (no netdev) and back. */
START_TEST(test_bind_vfio_and_back)
{
	char netdev[32];

	ck_assert_str_eq(driver_of("0000:3b:00.1"), "mlx5_core");
	ck_assert_int_eq(vfp_device_read_netdev(fx.ctx, "0000:3b:00.1", netdev, sizeof(netdev)), 0);
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:3b:00.1", "vfio-pci"), 0);
	ck_assert_str_eq(driver_of("0000:3b:00.1"), "vfio-pci");
	ck_assert_int_eq(vfp_device_read_netdev(fx.ctx, "0000:3b:00.1", netdev, sizeof(netdev)),
			 -ENOENT);
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:3b:00.1", "vfio-pci"), 0); /* no-op */
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:3b:00.1", NULL), 0);
	ck_assert_str_eq(driver_of("0000:3b:00.1"), "mlx5_core");
	ck_assert_int_eq(vfp_device_read_netdev(fx.ctx, "0000:3b:00.1", netdev, sizeof(netdev)), 0);
}
END_TEST

/* The inventory's JSON, kept as text to compare. */
static char *inventory_text(const struct vfp_inventory *inv)
{
	json_t *o = vfp_inventory_to_json(inv);
	char *text = json_dumps(o, JSON_SORT_KEYS);

	json_decref(o);
	ck_assert_ptr_nonnull(text);
	return text;
}

/* A refreshed VF is as a scan of the host reads it; the old inventory stays as it was. */
static void assert_refresh_is_scan(struct vfp_inventory **inv, const char *pci)
{
	struct vfp_inventory *next = NULL, *scan = fixture_scan(&fx);
	char *before = inventory_text(*inv), *want = inventory_text(scan), *got, *old;

	ck_assert_int_eq(vfp_inventory_refresh_vf(*inv, pci, &next), 0);
	got = inventory_text(next);
	old = inventory_text(*inv);
	ck_assert_str_eq(got, want);
	ck_assert_str_eq(old, before);
	ck_assert_ptr_eq(vfp_vf_get_pf(vfp_inventory_find_vf(next, pci)),
			 vfp_inventory_find_pf(next, vfp_vf_get_pf_pci(vfp_inventory_find_vf(next, pci))));
	free(before);
	free(want);
	free(got);
	free(old);
	vfp_inventory_unref(scan);
	vfp_inventory_unref(*inv);
	*inv = next;
}

/* vfp_inventory_refresh_vf(): one VF read again after a rebind, to vfio-pci and back. */
START_TEST(test_refresh_vf)
{
	struct vfp_inventory *inv = fixture_scan(&fx), *next = NULL;
	char dir[PATH_MAX], path[PATH_MAX + 64];

	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:3b:00.1", "vfio-pci"), 0);
	assert_refresh_is_scan(&inv, "0000:3b:00.1");
	ck_assert_str_eq(vfp_vf_get_driver(vfp_inventory_find_vf(inv, "0000:3b:00.1")), "vfio-pci");
	ck_assert_ptr_null(vfp_vf_get_netdev(vfp_inventory_find_vf(inv, "0000:3b:00.1")));
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:3b:00.1", NULL), 0);
	assert_refresh_is_scan(&inv, "0000:3b:00.1");
	ck_assert_ptr_nonnull(vfp_vf_get_netdev(vfp_inventory_find_vf(inv, "0000:3b:00.1")));
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:af:01.0", ""), 0);
	assert_refresh_is_scan(&inv, "0000:af:01.0");
	/* a PF, an address the inventory does not have, a VF gone from the host */
	ck_assert_int_eq(vfp_inventory_refresh_vf(inv, "0000:3b:00.0", &next), -ENOENT);
	ck_assert_int_eq(vfp_inventory_refresh_vf(inv, "0000:99:00.1", &next), -ENOENT);
	ck_assert_int_eq(sim_device_dir(fx.root, "0000:3b:00.2", dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/%s", fx.root, dir);
	ck_assert_int_eq(rm_rf(path), 0);
	ck_assert_int_eq(vfp_inventory_refresh_vf(inv, "0000:3b:00.2", &next), -ENODEV);
	ck_assert_ptr_null(next);
	vfp_inventory_unref(inv);
}
END_TEST

/* Back to a driver named shorter than "vfio-pci": the override must not keep the old tail. */
START_TEST(test_bind_back_by_name)
{
	ck_assert_str_eq(driver_of("0000:af:01.0"), "iavf");
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:af:01.0", "vfio-pci"), 0);
	ck_assert_str_eq(driver_of("0000:af:01.0"), "vfio-pci");
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:af:01.0", "iavf"), 0);
	ck_assert_str_eq(driver_of("0000:af:01.0"), "iavf");
}
END_TEST

/* "" leaves a device with no driver, and no probe gives it one back; NULL does. */
START_TEST(test_bind_to_none)
{
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:af:01.1", ""), 0);
	ck_assert_str_eq(driver_of("0000:af:01.1"), "");
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:af:01.1", ""), 0); /* no-op */
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:af:01.1", NULL), 0);
	ck_assert_str_eq(driver_of("0000:af:01.1"), "iavf");
}
END_TEST

/* The third ConnectX-6 VF has no driver: reading says "", binding gives it one. */
START_TEST(test_bind_unbound)
{
	ck_assert_str_eq(driver_of("0000:3b:00.3"), "");
	ck_assert_int_eq(vfp_device_rebind(fx.ctx, "0000:3b:00.3"), 0);
	ck_assert_str_eq(driver_of("0000:3b:00.3"), "mlx5_core");
	ck_assert_int_eq(vfp_device_rebind(fx.ctx, "0000:3b:00.3"), 0);
	ck_assert_str_eq(driver_of("0000:3b:00.3"), "mlx5_core");
}
END_TEST

START_TEST(test_bind_bad_input)
{
	char buf[64];

	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:3b:00.1", "../../x"), -EINVAL);
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:3B:00.1", "vfio-pci"), -EINVAL);
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:99:00.1", "vfio-pci"), -ENODEV);
	ck_assert_int_eq(vfp_device_read_driver(fx.ctx, "../../etc", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(vfp_device_read_netdev(fx.ctx, "0000:3b:00.0/..", buf, sizeof(buf)),
			 -EINVAL);
	ck_assert_int_eq(vfp_device_rebind(fx.ctx, "x"), -EINVAL);
	ck_assert_str_eq(driver_of("0000:3b:00.1"), "mlx5_core"); /* nothing changed */
}
END_TEST

/* No driver takes the override: -ENXIO, the device stays unbound. */
START_TEST(test_bind_nobody_takes_it)
{
	ck_assert_int_eq(vfp_device_bind_driver(fx.ctx, "0000:3b:00.1", "no-such-driver"), -ENXIO);
	ck_assert_str_eq(driver_of("0000:3b:00.1"), "");
}
END_TEST

static void read_rel(const char *rel, char *buf, size_t size)
{
	ck_assert_int_ge(vfp_sysfs_read(fx.ctx, rel, buf, size), 0);
}

START_TEST(test_ib_guids_mlx5)
{
	char buf[64];

	ck_assert_int_eq(vfp_vf_write_ib_guids(fx.ctx, "0000:3b:00.0", "mlx5_core", 1,
					       "02:c9:03:00:00:00:00:07", "02:c9:03:00:00:00:00:08"),
			 0);
	read_rel("bus/pci/devices/0000:3b:00.0/sriov/1/node", buf, sizeof(buf));
	ck_assert_str_eq(buf, "02:c9:03:00:00:00:00:07");
	read_rel("bus/pci/devices/0000:3b:00.0/sriov/1/port", buf, sizeof(buf));
	ck_assert_str_eq(buf, "02:c9:03:00:00:00:00:08");
	read_rel("bus/pci/devices/0000:3b:00.0/sriov/1/policy", buf, sizeof(buf));
	ck_assert_str_eq(buf, "Follow");
	read_rel("bus/pci/devices/0000:3b:00.0/sriov/0/node", buf, sizeof(buf));
	ck_assert_str_eq(buf, "00:00:00:00:00:00:00:00"); /* the others untouched */
}
END_TEST

/* mlx4: VF N is slave N+1 of the PF's IB device; slave 0 (the PF) is never written. */
START_TEST(test_ib_guids_mlx4)
{
	char rel[160], buf[64], **ib = NULL;
	size_t n = 0;

	ck_assert_int_eq(vfp_sysfs_list_dir(fx.ctx, "bus/pci/devices/0000:5e:00.0/infiniband", &ib,
					    &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(vfp_vf_write_ib_guids(fx.ctx, "0000:5e:00.0", "mlx4_core", 0,
					       "02:c9:03:00:00:00:00:07", "02:c9:03:00:00:00:00:09"),
			 0);
	snprintf(rel, sizeof(rel), "bus/pci/devices/0000:5e:00.0/infiniband/%s/iov/ports/1/"
		 "admin_guids/1", ib[0]);
	read_rel(rel, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0x02c9030000000009");
	snprintf(rel, sizeof(rel), "bus/pci/devices/0000:5e:00.0/infiniband/%s/iov/ports/1/"
		 "admin_guids/0", ib[0]);
	read_rel(rel, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0x0000000000000000");
	vfp_strv_free(ib, n);
}
END_TEST

START_TEST(test_ib_guids_refused)
{
	ck_assert_int_eq(vfp_vf_write_ib_guids(fx.ctx, "0000:af:00.0", "ice", 0,
					       "02:c9:03:00:00:00:00:07", "02:c9:03:00:00:00:00:07"),
			 -EOPNOTSUPP);
	ck_assert_int_eq(vfp_vf_write_ib_guids(fx.ctx, "0000:3b:00.0", "mlx5_core", 0, "02:c9",
					       "02:c9:03:00:00:00:00:07"), -EINVAL);
	/* a VF the PF has no files for: the kernel's ENOENT, as it came */
	ck_assert_int_eq(vfp_vf_write_ib_guids(fx.ctx, "0000:3b:00.0", "mlx5_core", 99,
					       "02:c9:03:00:00:00:00:07", "02:c9:03:00:00:00:00:07"),
			 -ENOENT);
}
END_TEST

Suite *suite_bind(void)
{
	Suite *s = suite_create("bind");
	TCase *tc = tcase_create("bind");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_bind_vfio_and_back);
	tcase_add_test(tc, test_bind_back_by_name);
	tcase_add_test(tc, test_bind_to_none);
	tcase_add_test(tc, test_refresh_vf);
	tcase_add_test(tc, test_bind_unbound);
	tcase_add_test(tc, test_bind_bad_input);
	tcase_add_test(tc, test_bind_nobody_takes_it);
	tcase_add_test(tc, test_ib_guids_mlx5);
	tcase_add_test(tc, test_ib_guids_mlx4);
	tcase_add_test(tc, test_ib_guids_refused);
	suite_add_tcase(s, tc);
	return s;
}
