/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Placement on its own: spread, pack, NUMA preference, not enough VFs. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "check-suites.h"
#include "libvfpool/placement.h"

/* PF A: 4 VFs on node 0; PF B: 2 VFs on node 1; PF C: 3 VFs on node 0. */
static const struct vfp_candidate pool[] = {
	{ "0000:3b:00.1", "0000:3b:00.0", 0, "infiniband" },
	{ "0000:3b:00.2", "0000:3b:00.0", 0, "infiniband" },
	{ "0000:3b:00.3", "0000:3b:00.0", 0, "infiniband" },
	{ "0000:3b:00.4", "0000:3b:00.0", 0, "infiniband" },
	{ "0000:5e:00.1", "0000:5e:00.0", 1, "infiniband" },
	{ "0000:5e:00.2", "0000:5e:00.0", 1, "infiniband" },
	{ "0000:86:00.1", "0000:86:00.0", 0, "infiniband" },
	{ "0000:86:00.2", "0000:86:00.0", 0, "infiniband" },
	{ "0000:86:00.3", "0000:86:00.0", 0, "infiniband" },
};
#define N (sizeof(pool) / sizeof(pool[0]))

static const char *pf_of(size_t i)
{
	return pool[i].pf;
}

START_TEST(test_spread_one_per_pf)
{
	size_t out[3];

	ck_assert_int_eq(vfp_place(pool, N, 3, -1, VFP_PLACE_SPREAD, out), 0);
	/* the PF with the most free VFs first, then the next, each once */
	ck_assert_str_eq(pool[out[0]].pci, "0000:3b:00.1");
	ck_assert_str_eq(pool[out[1]].pci, "0000:86:00.1");
	ck_assert_str_eq(pool[out[2]].pci, "0000:5e:00.1");
}
END_TEST

START_TEST(test_spread_wraps_around)
{
	size_t out[5];

	ck_assert_int_eq(vfp_place(pool, N, 5, -1, VFP_PLACE_SPREAD, out), 0);
	ck_assert_str_eq(pool[out[3]].pci, "0000:3b:00.2");
	ck_assert_str_eq(pool[out[4]].pci, "0000:86:00.2");
}
END_TEST

START_TEST(test_pack_best_fit)
{
	size_t out[3];

	/* 3 fit on A (4 free) and C (3 free): C is the tighter fit */
	ck_assert_int_eq(vfp_place(pool, N, 3, -1, VFP_PLACE_PACK, out), 0);
	for (size_t i = 0; i < 3; i++)
		ck_assert_str_eq(pf_of(out[i]), "0000:86:00.0");
}
END_TEST

START_TEST(test_pack_overflows_to_fullest)
{
	size_t out[6];

	ck_assert_int_eq(vfp_place(pool, N, 6, -1, VFP_PLACE_PACK, out), 0);
	for (size_t i = 0; i < 4; i++)
		ck_assert_str_eq(pf_of(out[i]), "0000:3b:00.0");
	ck_assert_str_eq(pf_of(out[4]), "0000:86:00.0");
}
END_TEST

START_TEST(test_numa_preferred_alone)
{
	size_t out[2];

	ck_assert_int_eq(vfp_place(pool, N, 2, 1, VFP_PLACE_SPREAD, out), 0);
	ck_assert_str_eq(pool[out[0]].pci, "0000:5e:00.1");
	ck_assert_str_eq(pool[out[1]].pci, "0000:5e:00.2");
}
END_TEST

START_TEST(test_numa_preferred_first)
{
	size_t out[3];

	ck_assert_int_eq(vfp_place(pool, N, 3, 1, VFP_PLACE_SPREAD, out), 0);
	ck_assert_int_eq(pool[out[0]].numa_node, 1);
	ck_assert_int_eq(pool[out[1]].numa_node, 1);
	ck_assert_int_eq(pool[out[2]].numa_node, 0);
}
END_TEST

START_TEST(test_not_enough)
{
	size_t out[10] = { 77 };

	ck_assert_int_eq(vfp_place(pool, N, 10, -1, VFP_PLACE_SPREAD, out), -EBUSY);
	ck_assert_uint_eq(out[0], 77);
	ck_assert_int_eq(vfp_place(pool, 0, 1, -1, VFP_PLACE_PACK, out), -EBUSY);
}
END_TEST

Suite *suite_placement(void)
{
	Suite *s = suite_create("placement");
	TCase *tc = tcase_create("place");

	tcase_add_test(tc, test_spread_one_per_pf);
	tcase_add_test(tc, test_spread_wraps_around);
	tcase_add_test(tc, test_pack_best_fit);
	tcase_add_test(tc, test_pack_overflows_to_fullest);
	tcase_add_test(tc, test_numa_preferred_alone);
	tcase_add_test(tc, test_numa_preferred_first);
	tcase_add_test(tc, test_not_enough);
	suite_add_tcase(s, tc);
	return s;
}
