/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Placement on its own: spread, pack, NUMA preference, not enough VFs. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "check-suites.h"
#include "libvfpool/placement.h"

/* PF A: 4 free VFs on node 0; PF B: 2 on node 1; PF C: 3 on node 0. */
static const struct vfp_pf_free pfs[] = {
	{ "0000:3b:00.0", 0, 4 },
	{ "0000:5e:00.0", 1, 2 },
	{ "0000:86:00.0", 0, 3 },
};
#define N (sizeof(pfs) / sizeof(pfs[0]))
enum { A, B, C };

static void assert_seq(const size_t *got, const size_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "VF %zu from PF %zu, wanted %zu", i, got[i],
			      want[i]);
}

START_TEST(test_spread_one_per_pf)
{
	size_t out[3];
	static const size_t want[] = { A, C, B };

	/* the PF with the most free VFs first, then the next, each once */
	ck_assert_int_eq(vfp_place(pfs, N, 3, -1, VFP_PLACE_SPREAD, out), 0);
	assert_seq(out, want, 3);
}
END_TEST

START_TEST(test_spread_wraps_around)
{
	size_t out[7];
	static const size_t want[] = { A, C, B, A, C, B, A };

	ck_assert_int_eq(vfp_place(pfs, N, 7, -1, VFP_PLACE_SPREAD, out), 0);
	assert_seq(out, want, 7);
}
END_TEST

START_TEST(test_pack_best_fit)
{
	size_t out[3];
	static const size_t want[] = { C, C, C };

	/* 3 fit on A (4 free) and C (3 free): C is the tighter fit */
	ck_assert_int_eq(vfp_place(pfs, N, 3, -1, VFP_PLACE_PACK, out), 0);
	assert_seq(out, want, 3);
}
END_TEST

START_TEST(test_pack_overflows_to_fullest)
{
	size_t out[6];
	static const size_t want[] = { A, A, A, A, C, C };

	ck_assert_int_eq(vfp_place(pfs, N, 6, -1, VFP_PLACE_PACK, out), 0);
	assert_seq(out, want, 6);
}
END_TEST

START_TEST(test_numa_preferred_alone)
{
	size_t out[2];
	static const size_t want[] = { B, B };

	ck_assert_int_eq(vfp_place(pfs, N, 2, 1, VFP_PLACE_SPREAD, out), 0);
	assert_seq(out, want, 2);
}
END_TEST

START_TEST(test_numa_preferred_first)
{
	size_t out[4];
	static const size_t want[] = { B, B, A, C };

	ck_assert_int_eq(vfp_place(pfs, N, 4, 1, VFP_PLACE_SPREAD, out), 0);
	assert_seq(out, want, 4);
}
END_TEST

START_TEST(test_not_enough)
{
	size_t out[10] = { 77 };

	ck_assert_int_eq(vfp_place(pfs, N, 10, -1, VFP_PLACE_SPREAD, out), -EBUSY);
	ck_assert_uint_eq(out[0], 77);
	ck_assert_int_eq(vfp_place(pfs, 0, 1, -1, VFP_PLACE_PACK, out), -EBUSY);
	ck_assert_int_eq(vfp_place(pfs, N, 0, -1, VFP_PLACE_PACK, out), -EBUSY);
}
END_TEST

/* Near a device: A is PIX (2 free), B PXB (3), C SYS (4), D's distance unknown (5). */
static const struct vfp_pf_free near_pfs[] = {
	{ "0000:3b:00.0", 0, 2, VFP_PCIE_PIX },
	{ "0000:5e:00.0", 0, 3, VFP_PCIE_PXB },
	{ "0000:86:00.0", 1, 4, VFP_PCIE_SYS },
	{ "0000:d8:00.0", -1, 5, -1 },
};
enum { NA, NB, NC, ND };

START_TEST(test_near_closest_class_first)
{
	size_t out[9];
	static const size_t want3[] = { NA, NA, NB };
	static const size_t want9[] = { NA, NA, NB, NB, NB, NC, NC, NC, NC };
	int best = 99;

	ck_assert_int_eq(vfp_place_near(near_pfs, 4, 3, VFP_PCIE_SELF, -1, VFP_PLACE_SPREAD, out,
					&best), 0);
	assert_seq(out, want3, 3);
	ck_assert_int_eq(best, VFP_PCIE_PIX);
	/* a PF whose distance is unknown is never taken */
	ck_assert_int_eq(vfp_place_near(near_pfs, 4, 9, VFP_PCIE_SELF, -1, VFP_PLACE_PACK, out,
					&best), 0);
	assert_seq(out, want9, 9);
	ck_assert_int_eq(vfp_place_near(near_pfs, 4, 10, VFP_PCIE_SYS, -1, VFP_PLACE_PACK, out,
					&best), -EBUSY);
}
END_TEST

START_TEST(test_near_bound_refuses)
{
	size_t out[6] = { 7, 7, 7, 7, 7, 7 };
	int best = 99;

	ck_assert_int_eq(vfp_place_near(near_pfs, 4, 6, VFP_PCIE_PXB, -1, VFP_PLACE_SPREAD, out,
					&best), -EBUSY);
	ck_assert_int_eq(best, VFP_PCIE_PIX);
	ck_assert_uint_eq(out[0], 7); /* untouched */
	ck_assert_int_eq(vfp_place_near(near_pfs + 1, 3, 1, VFP_PCIE_PIX, -1, VFP_PLACE_SPREAD,
					out, &best), -EBUSY);
	ck_assert_int_eq(best, VFP_PCIE_PXB);
	ck_assert_int_eq(vfp_place_near(near_pfs + 3, 1, 1, VFP_PCIE_SYS, -1, VFP_PLACE_SPREAD,
					out, &best), -EBUSY);
	ck_assert_int_eq(best, -1);
}
END_TEST

Suite *suite_placement(void)
{
	Suite *s = suite_create("placement");
	TCase *tc = tcase_create("place");

	tcase_add_test(tc, test_spread_one_per_pf);
	tcase_add_test(tc, test_near_closest_class_first);
	tcase_add_test(tc, test_near_bound_refuses);
	tcase_add_test(tc, test_spread_wraps_around);
	tcase_add_test(tc, test_pack_best_fit);
	tcase_add_test(tc, test_pack_overflows_to_fullest);
	tcase_add_test(tc, test_numa_preferred_alone);
	tcase_add_test(tc, test_numa_preferred_first);
	tcase_add_test(tc, test_not_enough);
	suite_add_tcase(s, tc);
	return s;
}
