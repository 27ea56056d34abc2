/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The GUID range (libvfpool/ledger-guid.c): a VM gets its released GUIDs
 * back, others get never-used GUIDs first, then the oldest released after a
 * quarantine, a container's before a VM's; the history outlives pruning and
 * is made from a version-9 ledger's released allocations on upgrade.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check-suites.h"
#include "ledger-fixture.h"

static struct lfx t;
static time_t clock_now;

static time_t fake_now(void)
{
	return clock_now;
}

/* Three GUIDs: ...:00:fe, ...:00:ff, ...:01:00. */
static const char range_config[] =
	"{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"]}}], "
	"\"guids\": {\"first\": \"02:c9:03:00:00:00:00:fe\", \"count\": 3}}";

static void setup(void)
{
	lfx_setup(&t, range_config);
	clock_now = 1000000;
	t.l->now = fake_now;
}

static void teardown(void)
{
	lfx_teardown(&t);
}

/* One IB VF for VM @vm (or container namespace @netns); its allocation, or NULL as @expect says. */
static struct vfp_allocation *claim(const char *vm, const char *netns, int expect)
{
	struct vfp_owner owner = { .kind = vm ? VFP_OWNER_VM : VFP_OWNER_CONTAINER,
				   .name = vm, .netns = netns };
	struct vfp_claim req = { .pool = "ib", .count = 1, .owner = &owner, .numa_node = -1 };
	struct vfp_allocation *a = NULL;
	int r = vfp_ledger_claim(t.l, t.config, &req, &a);

	ck_assert_msg(r == expect, "claim for %s: %d (%s), wanted %d", vm ? vm : netns, r,
		      vfp_ledger_get_error(t.l), expect);
	return a;
}

static const char *guid_of(const struct vfp_allocation *a)
{
	return vfp_allocation_get_vf(a, 0)->guid;
}

/* @a released at @when; unref'd. */
static void release_at(struct vfp_allocation *a, time_t when)
{
	clock_now = when;
	lfx_release(&t, vfp_allocation_get_id(a));
	vfp_allocation_unref(a);
}

START_TEST(test_guid_stays_with_its_vm)
{
	struct vfp_allocation *a, *b, *c;

	a = claim("one-1", NULL, 0);
	ck_assert_str_eq(guid_of(a), "02:c9:03:00:00:00:00:fe");
	release_at(a, 1000010); /* one-1 stopped: it resumes with its GUID */
	b = claim("one-2", NULL, 0);
	ck_assert_str_eq(guid_of(b), "02:c9:03:00:00:00:00:ff"); /* never used, not one-1's */
	a = claim("one-1", NULL, 0);
	ck_assert_str_eq(guid_of(a), "02:c9:03:00:00:00:00:fe"); /* its own back */
	c = claim(NULL, "c1", 0);
	ck_assert_str_eq(guid_of(c), "02:c9:03:00:00:00:01:00");
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
	vfp_allocation_unref(c);
}
END_TEST

/* A VM's two NICs, released a second apart, get their own GUIDs back in the order they claim. */
START_TEST(test_guid_each_nic_its_own)
{
	struct vfp_allocation *a = claim("one-3", NULL, 0), *b = claim("one-3", NULL, 0);

	ck_assert_str_eq(guid_of(a), "02:c9:03:00:00:00:00:fe");
	ck_assert_str_eq(guid_of(b), "02:c9:03:00:00:00:00:ff");
	release_at(a, 1000010);
	release_at(b, 1000011); /* the undeploy's second release, past a second's edge */
	a = claim("one-3", NULL, 0);
	b = claim("one-3", NULL, 0);
	ck_assert_str_eq(guid_of(a), "02:c9:03:00:00:00:00:fe");
	ck_assert_str_eq(guid_of(b), "02:c9:03:00:00:00:00:ff");
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
}
END_TEST

START_TEST(test_guid_quarantine_and_order)
{
	struct vfp_allocation *a = claim("one-1", NULL, 0), *b = claim("one-2", NULL, 0);
	struct vfp_allocation *c = claim(NULL, "c1", 0);

	release_at(a, 1000020);
	release_at(b, 1000030);
	release_at(c, 1000040);
	clock_now = 1000050;
	claim("one-4", NULL, -EBUSY); /* each released a moment ago: partitions.conf may list it */
	ck_assert_str_eq(vfp_ledger_get_error(t.l),
			 "the GUID range 02:c9:03:00:00:00:00:fe + 3 is exhausted: 3 GUIDs released "
			 "less than 3600 s ago (guids.quarantine_seconds), which the subnet manager "
			 "may still list in a partition; the rest held");
	clock_now = 1000040 + 3600;
	a = claim("one-4", NULL, 0);
	ck_assert_str_eq(guid_of(a), "02:c9:03:00:00:00:01:00"); /* the container's: it is gone */
	b = claim("one-5", NULL, 0);
	ck_assert_str_eq(guid_of(b), "02:c9:03:00:00:00:00:fe"); /* then the oldest VM's */
	c = claim("one-2", NULL, 0);
	ck_assert_str_eq(guid_of(c), "02:c9:03:00:00:00:00:ff"); /* one-2's own */
	claim("one-6", NULL, -EBUSY);
	ck_assert_str_eq(vfp_ledger_get_error(t.l),
			 "the GUID range 02:c9:03:00:00:00:00:fe + 3 is exhausted: every GUID is held");
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
	vfp_allocation_unref(c);
}
END_TEST

/* The quarantine as the config says: 0, a GUID released is another's at once (oldest first). */
START_TEST(test_guid_quarantine_configured)
{
	struct vfp_allocation *a, *b, *c;

	vfp_config_unref(t.config);
	t.config = lfx_config(
		"{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"]}}], "
		"\"guids\": {\"first\": \"02:c9:03:00:00:00:00:fe\", \"count\": 3, "
		"\"quarantine_seconds\": 0}}");
	a = claim("one-1", NULL, 0);
	b = claim("one-2", NULL, 0);
	c = claim("one-3", NULL, 0);
	release_at(b, 1000010);
	release_at(a, 1000020);
	a = claim("one-4", NULL, 0);
	ck_assert_str_eq(guid_of(a), "02:c9:03:00:00:00:00:ff"); /* one-2's: the oldest */
	vfp_allocation_unref(a);
	vfp_allocation_unref(c);
}
END_TEST

/* A GUID asked for by a claim is noted at its release too, and the history outlives pruning. */
START_TEST(test_guid_history_outlives_pruning)
{
	struct vfp_retention keep = { .seconds = 1, .allocations = 1000, .audit = 100000 };
	struct vfp_allocation *a = claim("one-1", NULL, 0);
	unsigned n = 0;

	release_at(a, 1000010);
	clock_now = 1000100;
	ck_assert_int_eq(vfp_ledger_prune(t.l, &keep, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM allocations"), 0);
	a = claim("one-2", NULL, 0);
	ck_assert_str_eq(guid_of(a), "02:c9:03:00:00:00:00:ff");
	vfp_allocation_unref(a);
}
END_TEST

/* A ledger of schema 9 (no GUID history) with released IB allocations, opened by this one. */
START_TEST(test_guid_history_from_version_9)
{
	struct vfp_allocation *a = claim("one-1", NULL, 0), *b = claim("one-2", NULL, 0);
	char path[256];
	sqlite3 *db;

	release_at(a, 1000010);
	t.l = vfp_ledger_unref(t.l); /* the file as vfagent with schema 9 left it */
	snprintf(path, sizeof(path), "%s/ledger.db", t.state_dir);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(db, "DROP TABLE guid_releases; ALTER TABLE swaps DROP COLUMN "
				   "steered; PRAGMA user_version = 9", NULL, NULL, NULL) == SQLITE_OK,
		      "to version 9: %s", sqlite3_errmsg(db));
	sqlite3_close(db);
	lfx_reopen(&t);
	t.l->now = fake_now;
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA user_version"), vfp_ledger_schema_version());
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM guid_releases WHERE owner_key = "
					   "'vm:one-1' AND guid = '02:c9:03:00:00:00:00:fe' AND "
					   "released = 1000010"),
			 1);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM guid_releases"), 1);
	a = claim("one-3", NULL, 0); /* not one-1's, released before the upgrade */
	ck_assert_str_eq(guid_of(a), "02:c9:03:00:00:00:01:00");
	release_at(b, 1000020);
	b = claim("one-1", NULL, 0);
	ck_assert_str_eq(guid_of(b), "02:c9:03:00:00:00:00:fe");
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
}
END_TEST

Suite *suite_ledger_guid(void)
{
	Suite *s = suite_create("ledger-guid");
	TCase *tc = tcase_create("ledger-guid");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_guid_stays_with_its_vm);
	tcase_add_test(tc, test_guid_each_nic_its_own);
	tcase_add_test(tc, test_guid_quarantine_and_order);
	tcase_add_test(tc, test_guid_quarantine_configured);
	tcase_add_test(tc, test_guid_history_outlives_pruning);
	tcase_add_test(tc, test_guid_history_from_version_9);
	suite_add_tcase(s, tc);
	return s;
}
