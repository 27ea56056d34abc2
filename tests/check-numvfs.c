/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resizing PFs: the planner, applying through the simulated kernel, and growing a pool. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/sim/sim-host.h"
#include "check-suites.h"
#include "ledger-fixture.h"
#include "libvfpool/sysfs.h"

static struct lfx t;

static void setup(void)
{
	lfx_setup(&t, "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"]}},"
		      "{\"name\": \"eth\", \"selector\": {\"vendors\": [\"8086\"]}, "
		      "\"grow\": {\"step\": 3}}]}");
}

static void teardown(void)
{
	lfx_teardown(&t);
}

static int pf_numvfs(const char *pci)
{
	int n = -1;

	ck_assert_int_eq(vfp_pf_get_numvfs(vfp_inventory_find_pf(t.inv, pci), &n), 0);
	return n;
}

START_TEST(test_plan_allowed)
{
	struct vfp_numvfs_plan *plan = NULL;

	ck_assert_int_eq(vfp_numvfs_plan(t.l, t.inv, "0000:af:00.0", 8, &plan), 0);
	ck_assert(plan->allowed);
	ck_assert_str_eq(plan->pf, "0000:af:00.0");
	ck_assert_int_eq(plan->from, 4);
	ck_assert_int_eq(plan->to, 8);
	ck_assert_int_eq(plan->totalvfs, 128);
	ck_assert_uint_eq(plan->n_blockers, 0);
	ck_assert_str_eq(plan->reason, "");
	vfp_numvfs_plan_free(plan);
}
END_TEST

START_TEST(test_plan_blocked_names_allocation)
{
	struct vfp_allocation *a = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	struct vfp_numvfs_plan *plan = NULL;

	ck_assert_int_eq(vfp_numvfs_plan(t.l, t.inv, "0000:af:00.0", 2, &plan), -EBUSY);
	ck_assert(!plan->allowed);
	ck_assert_uint_eq(plan->n_blockers, 1);
	ck_assert_str_eq(vfp_allocation_get_id(plan->blockers[0]), vfp_allocation_get_id(a));
	ck_assert_str_eq(vfp_allocation_get_vf(plan->blockers[0], 0)->pci, "0000:af:01.0");
	ck_assert_ptr_nonnull(strstr(plan->reason, vfp_allocation_get_id(a)));
	vfp_numvfs_plan_free(plan);
	/* the apply is refused the same way and changes nothing */
	plan = NULL;
	ck_assert_int_eq(vfp_numvfs_apply(t.l, t.config, t.inv, "0000:af:00.0", 2, &plan, NULL),
			 -EBUSY);
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 5);
	vfp_numvfs_plan_free(plan);
	vfp_allocation_unref(a);
}
END_TEST

START_TEST(test_plan_refusals)
{
	struct vfp_numvfs_plan *plan = NULL;

	ck_assert_int_eq(vfp_numvfs_plan(t.l, t.inv, "0000:5e:00.0", 2, &plan), -EBUSY);
	ck_assert_ptr_nonnull(strstr(plan->reason, "module parameter"));
	vfp_numvfs_plan_free(plan);
	plan = NULL;
	ck_assert_int_eq(vfp_numvfs_plan(t.l, t.inv, "0000:d8:00.0", 64, &plan), -EINVAL);
	ck_assert_str_eq(vfp_ledger_get_error(t.l), "numvfs: 64 is outside [0, 63] for PF 0000:d8:00.0");
	ck_assert_str_eq(plan->reason, vfp_ledger_get_error(t.l));
	vfp_numvfs_plan_free(plan);
	plan = NULL;
	ck_assert_int_eq(vfp_numvfs_plan(t.l, t.inv, "0000:d8:10.0", 1, &plan), -ENOENT);
	ck_assert_ptr_null(plan);
}
END_TEST

START_TEST(test_apply_grow_and_shrink)
{
	struct vfp_inventory *inv2 = NULL;
	struct vfp_numvfs_plan *plan = NULL;

	ck_assert_int_eq(vfp_numvfs_apply(t.l, t.config, t.inv, "0000:d8:00.0", 6, &plan, &inv2), 0);
	vfp_inventory_unref(t.inv);
	t.inv = inv2;
	ck_assert_int_eq(pf_numvfs("0000:d8:00.0"), 6);
	ck_assert_uint_eq(vfp_pf_get_vf_count(vfp_inventory_find_pf(t.inv, "0000:d8:00.0")), 6);
	ck_assert_ptr_nonnull(vfp_inventory_find_vf(t.inv, "0000:d8:11.2")); /* VF 5: 0xd880 + 10 */
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 10);
	ck_assert_int_eq(plan->from, 2);
	vfp_numvfs_plan_free(plan);
	ck_assert_int_eq(vfp_numvfs_apply(t.l, t.config, t.inv, "0000:d8:00.0", 0, NULL, &inv2), 0);
	vfp_inventory_unref(t.inv);
	t.inv = inv2;
	ck_assert_int_eq(pf_numvfs("0000:d8:00.0"), 0);
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 4);
	/* the six are kept in the ledger as vanished, and no longer counted in the pool */
	ck_assert_int_eq(lfx_count(&t, "eth", "unavailable"), 0);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM vfs WHERE reason = 'vanished'"), 6);
	lfx_assert_invariants(&t);
}
END_TEST

START_TEST(test_kernel_rules)
{
	int r = 0;

	/* N on top of M != 0 is EBUSY, more than totalvfs ERANGE, a bad number EINVAL */
	ck_assert_int_eq(sim_kernel_write(NULL, t.fx.root, "bus/pci/devices/0000:d8:00.0/sriov_numvfs",
					  "3", &r), 1);
	ck_assert_int_eq(r, -EBUSY);
	ck_assert_int_eq(sim_kernel_write(NULL, t.fx.root, "bus/pci/devices/0000:d8:00.0/sriov_numvfs",
					  "64", &r), 1);
	ck_assert_int_eq(r, -ERANGE);
	ck_assert_int_eq(sim_kernel_write(NULL, t.fx.root, "bus/pci/devices/0000:d8:00.0/sriov_numvfs",
					  "x", &r), 1);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_int_eq(sim_kernel_write(NULL, t.fx.root, "bus/pci/devices/0000:d8:00.0/sriov_numvfs",
					  "-1", &r), 1);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_int_eq(sim_kernel_write(NULL, t.fx.root, "bus/pci/devices/0000:d8:00.0/sriov_numvfs",
					  "65536", &r), 1);
	ck_assert_int_eq(r, -EINVAL); /* kstrtou16 fails: EINVAL, not ERANGE */
	/* mlx4_core has no sriov_configure: ENOENT, after the range check and the no-op */
	ck_assert_int_eq(sim_kernel_write(NULL, t.fx.root, "bus/pci/devices/0000:5e:00.0/sriov_numvfs",
					  "0", &r), 1);
	ck_assert_int_eq(r, -ENOENT);
	ck_assert_int_eq(sim_kernel_write(NULL, t.fx.root, "bus/pci/devices/0000:5e:00.0/sriov_numvfs",
					  "4", &r), 1);
	ck_assert_int_eq(r, 0); /* the number it has: nothing to do, no driver asked */
	ck_assert_int_eq(sim_kernel_write(NULL, t.fx.root, "bus/pci/devices/0000:5e:00.0/sriov_numvfs",
					  "99", &r), 1);
	ck_assert_int_eq(r, -ERANGE);
	ck_assert_int_eq(sim_kernel_write(NULL, t.fx.root, "bus/pci/devices/0000:d8:00.0/numa_node",
					  "0", &r), 0);
}
END_TEST

START_TEST(test_write_error_leaves_ledger_truthful)
{
	struct vfp_inventory *inv2 = NULL;

	/* the PF loses its driver after the scan: the kernel refuses the write with ENOENT */
	ck_assert_int_eq(sim_bind_driver(t.fx.root, "0000:af:00.0", NULL), 0);
	ck_assert_int_eq(vfp_numvfs_apply(t.l, t.config, t.inv, "0000:af:00.0", 8, NULL, &inv2),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), "writing 0 to"));
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), "No such file or directory"));
	/* the VFs taken out for the resize are back, as the rescan shows them */
	vfp_inventory_unref(t.inv);
	t.inv = inv2;
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 6);
	ck_assert_int_eq(lfx_count(&t, "eth", "unavailable"), 0);
	lfx_assert_invariants(&t);
}
END_TEST

START_TEST(test_pool_grow)
{
	struct vfp_inventory *inv2 = NULL;
	struct vfp_allocation *a = lfx_claim(&t, "eth", 4, VFP_PLACE_PACK, -1, NULL, 0);
	struct vfp_pool_growth g;

	/* the E810 is fully held; the 82599 is idle and grows by the step: 2 -> 5 */
	ck_assert_int_eq(vfp_pool_grow(t.l, t.config, t.inv, "eth", &g, &inv2), 0);
	ck_assert_str_eq(g.pf, "0000:d8:00.0");
	ck_assert_int_eq(g.from, 2);
	ck_assert_int_eq(g.to, 5);
	vfp_inventory_unref(t.inv);
	t.inv = inv2;
	ck_assert_int_eq(pf_numvfs("0000:d8:00.0"), 5);
	ck_assert_int_eq(pf_numvfs("0000:af:00.0"), 4);
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 5);
	ck_assert_int_eq(vfp_pool_grow(t.l, t.config, t.inv, "ib", NULL, &inv2), -EBUSY);
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), "does not grow"));
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
}
END_TEST

/* driver_override + unbind + drivers_probe rebind a VF, as the kernel does. */
START_TEST(test_kernel_rebind)
{
	const char *vf = "0000:af:01.0";
	const struct vfp_vf *v;

	ck_assert_int_eq(vfp_sysfs_write(t.fx.ctx, "bus/pci/devices/0000:af:01.0/driver_override",
					 "vfio-pci"), 0);
	ck_assert_int_eq(vfp_sysfs_write(t.fx.ctx, "bus/pci/devices/0000:af:01.0/driver/unbind", vf), 0);
	ck_assert_int_eq(vfp_sysfs_write(t.fx.ctx, "bus/pci/drivers_probe", vf), 0);
	lfx_rescan(&t);
	v = vfp_inventory_find_vf(t.inv, vf);
	ck_assert_str_eq(vfp_vf_get_driver(v), "vfio-pci");
	ck_assert_ptr_null(vfp_vf_get_netdev(v));
	ck_assert_uint_eq(t.fx.n_warnings, 0);
	/* back: clear the override, unbind from vfio-pci, probe: iavf and its netdev return */
	ck_assert_int_eq(vfp_sysfs_write(t.fx.ctx, "bus/pci/devices/0000:af:01.0/driver_override", "\n"), 0);
	ck_assert_int_eq(vfp_sysfs_write(t.fx.ctx, "bus/pci/drivers/vfio-pci/unbind", vf), 0);
	ck_assert_int_eq(vfp_sysfs_write(t.fx.ctx, "bus/pci/drivers_probe", vf), 0);
	lfx_rescan(&t);
	v = vfp_inventory_find_vf(t.inv, vf);
	ck_assert_str_eq(vfp_vf_get_driver(v), "iavf");
	ck_assert_str_eq(vfp_vf_get_netdev(v), "ens5f0v0");
	ck_assert_int_eq(vfp_sysfs_write(t.fx.ctx, "bus/pci/drivers_probe", "0000:99:00.1"), -ENODEV);
}
END_TEST

Suite *suite_numvfs(void)
{
	Suite *s = suite_create("numvfs");
	TCase *tc = tcase_create("numvfs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_plan_allowed);
	tcase_add_test(tc, test_plan_blocked_names_allocation);
	tcase_add_test(tc, test_plan_refusals);
	tcase_add_test(tc, test_apply_grow_and_shrink);
	tcase_add_test(tc, test_kernel_rules);
	tcase_add_test(tc, test_kernel_rebind);
	tcase_add_test(tc, test_write_error_leaves_ledger_truthful);
	tcase_add_test(tc, test_pool_grow);
	suite_add_tcase(s, tc);
	return s;
}
