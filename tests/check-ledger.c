/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ledger: claims, every state transition, idempotency, intents, reconcile, GUIDs, leases. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/sim/sim-host.h"
#include "check-suites.h"
#include "ledger-fixture.h"

static struct lfx t;

static void setup(void)
{
	lfx_setup(&t, NULL);
}

static void teardown(void)
{
	lfx_teardown(&t);
}

static const char *alloc_id(const struct vfp_allocation *a)
{
	return vfp_allocation_get_id(a);
}

static const char *alloc_vf(const struct vfp_allocation *a, size_t i)
{
	return vfp_allocation_get_vf(a, i)->pci;
}

static const char *alloc_state(const struct vfp_allocation *a)
{
	return vfp_allocation_state_to_string(vfp_allocation_get_state(a));
}

static struct vfp_allocation *get_alloc(const char *id)
{
	struct vfp_allocation *a = NULL;

	ck_assert_int_eq(vfp_ledger_get_allocation(t.l, id, &a), 0);
	return a;
}

START_TEST(test_schema_and_pragmas)
{
	sqlite3_stmt *st;

	ck_assert_int_eq(sqlite3_prepare_v2(t.l->db, "PRAGMA journal_mode", -1, &st, NULL), 0);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	ck_assert_int_eq(sqlite3_prepare_v2(t.l->db, "PRAGMA synchronous", -1, &st, NULL), 0);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(st, 0), 2); /* FULL */
	sqlite3_finalize(st);
	ck_assert_int_eq(sqlite3_prepare_v2(t.l->db, "PRAGMA foreign_keys", -1, &st, NULL), 0);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(st, 0), 1);
	sqlite3_finalize(st);
	ck_assert_int_eq(sqlite3_prepare_v2(t.l->db, "PRAGMA user_version", -1, &st, NULL), 0);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(st, 0), vfp_ledger_schema_version());
	sqlite3_finalize(st);
}
END_TEST

/*
 * The statement cache grows past any count: more statements than the
 * library has never fail, each is prepared once, and a claim made after
 * them is still told apart from a short pool (-ENOBUFS means only that).
 */
START_TEST(test_statement_cache_grows)
{
	enum { N = 300 };
	static char sql[N][24];
	sqlite3_stmt *first[N], *st;
	struct vfp_allocation *a;

	for (int i = 0; i < N; i++) {
		snprintf(sql[i], sizeof(sql[i]), "SELECT %d", i);
		ck_assert_int_eq(vfp_ledger_stmt(t.l, sql[i], &first[i]), 0);
		ck_assert_int_eq(sqlite3_step(first[i]), SQLITE_ROW);
		ck_assert_int_eq(sqlite3_column_int(first[i], 0), i);
	}
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(vfp_ledger_stmt(t.l, sql[i], &st), 0);
		ck_assert_ptr_eq(st, first[i]); /* the cached one, reset */
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		ck_assert_int_eq(sqlite3_column_int(st, 0), i);
		sqlite3_reset(st);
	}
	ck_assert_uint_ge(t.l->n_cache, N);
	a = lfx_claim(&t, "eth", 2, VFP_PLACE_SPREAD, -1, NULL, 0);
	ck_assert_uint_eq(vfp_allocation_get_vf_count(a), 2);
	vfp_allocation_unref(a);
	lfx_claim(&t, "eth", 7, VFP_PLACE_SPREAD, -1, NULL, -ENOBUFS);
}
END_TEST

START_TEST(test_newer_schema_refused)
{
	struct vfp_ledger *l2 = NULL;

	ck_assert_int_eq(sqlite3_exec(t.l->db, "PRAGMA user_version = 99", NULL, NULL, NULL), 0);
	t.l = vfp_ledger_unref(t.l);
	ck_assert_int_eq(vfp_ledger_open(t.fx.ctx, t.state_dir, &l2), -EPROTO);
	ck_assert_ptr_null(l2);
}
END_TEST

/* The agent is the single writer: a second opener is turned away, not interleaved. */
START_TEST(test_second_writer_refused)
{
	struct vfp_ledger *l2 = NULL;

	ck_assert_int_eq(vfp_ledger_open(t.fx.ctx, t.state_dir, &l2), -EBUSY);
	ck_assert_ptr_null(l2);
	t.l = vfp_ledger_unref(t.l);
	ck_assert_int_eq(vfp_ledger_open(t.fx.ctx, t.state_dir, &l2), 0);
	t.l = l2;
}
END_TEST

START_TEST(test_first_reconcile)
{
	ck_assert_int_eq(lfx_count(&t, "ib", "free"), 7);
	ck_assert_int_eq(lfx_count(&t, "", "unavailable"), 1); /* excluded: in no pool */
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 6);
	ck_assert_str_eq(lfx_vf_state(&t, "0000:3b:00.4"), "unavailable");
	lfx_assert_invariants(&t);
}
END_TEST

START_TEST(test_claim_spread_and_release)
{
	struct vfp_allocation *a = lfx_claim(&t, "eth", 2, VFP_PLACE_SPREAD, -1, NULL, 0);
	struct vfp_allocation *b;

	ck_assert_str_eq(alloc_state(a), "reserved");
	ck_assert_uint_eq(vfp_allocation_get_vf_count(a), 2);
	/* spread: one VF on each Intel PF, the one with the most free VFs first */
	ck_assert_str_eq(alloc_vf(a, 0), "0000:af:01.0");
	ck_assert_str_eq(alloc_vf(a, 1), "0000:d8:10.0");
	ck_assert_str_eq(lfx_vf_state(&t, "0000:af:01.0"), "reserved");
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 4);
	lfx_release(&t, alloc_id(a));
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 6);
	b = get_alloc(alloc_id(a));
	ck_assert_str_eq(alloc_state(b), "released");
	ck_assert_str_eq(vfp_vf_state_to_string(vfp_allocation_get_vf(b, 0)->state),
			 "released");
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
}
END_TEST

START_TEST(test_claim_pack_and_numa)
{
	struct vfp_allocation *a = lfx_claim(&t, "eth", 2, VFP_PLACE_PACK, -1, NULL, 0);
	struct vfp_allocation *b = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, 1, NULL, 0);

	/* pack: the 82599 has exactly 2 free VFs, the tightest fit */
	ck_assert_str_eq(alloc_vf(a, 0), "0000:d8:10.0");
	ck_assert_str_eq(alloc_vf(a, 1), "0000:d8:10.2");
	ck_assert_str_eq(alloc_vf(b, 0), "0000:af:01.0"); /* the E810 is on node 1 */
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
}
END_TEST

START_TEST(test_claim_all_or_none)
{
	lfx_claim(&t, "eth", 7, VFP_PLACE_SPREAD, -1, NULL, -ENOBUFS);
	ck_assert_str_eq(vfp_ledger_get_error(t.l), "pool \"eth\" has 6 free VFs, 7 requested");
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 6);
	lfx_claim(&t, "nope", 1, VFP_PLACE_SPREAD, -1, NULL, -ENOENT);
	lfx_claim(&t, "eth", 0, VFP_PLACE_SPREAD, -1, NULL, -EINVAL);
	lfx_claim(&t, "eth", 65, VFP_PLACE_SPREAD, -1, NULL, -EINVAL);
	lfx_assert_invariants(&t);
}
END_TEST

/* Another thread's failure on the same ledger, and the message it saw. */
static void *fail_elsewhere(void *msg)
{
	struct vfp_allocation *a = NULL;

	if (vfp_ledger_get_allocation(t.l, "00000000-0000-0000-0000-000000000000", &a) != -ENOENT)
		return NULL;
	snprintf(msg, 512, "%s", vfp_ledger_get_error(t.l));
	return msg;
}

/* A failed call's message is its own thread's: another thread's failure never replaces it. */
START_TEST(test_error_is_the_callers)
{
	char other[512] = "";
	pthread_t th;
	void *ok;

	lfx_claim(&t, "eth", 7, VFP_PLACE_SPREAD, -1, NULL, -ENOBUFS);
	ck_assert_int_eq(pthread_create(&th, NULL, fail_elsewhere, other), 0);
	ck_assert_int_eq(pthread_join(th, &ok), 0);
	ck_assert_ptr_nonnull(ok);
	ck_assert_ptr_nonnull(strstr(other, "00000000-0000-0000-0000-000000000000"));
	ck_assert_str_eq(vfp_ledger_get_error(t.l), "pool \"eth\" has 6 free VFs, 7 requested");
}
END_TEST

START_TEST(test_idempotency)
{
	struct vfp_allocation *a = lfx_claim(&t, "ib", 2, VFP_PLACE_SPREAD, -1, "key-1", 0);
	struct vfp_allocation *b = lfx_claim(&t, "ib", 2, VFP_PLACE_SPREAD, -1, "key-1", 1);

	ck_assert_str_eq(alloc_id(a), alloc_id(b));
	ck_assert_int_eq(lfx_count(&t, "ib", "reserved"), 2);
	lfx_claim(&t, "ib", 3, VFP_PLACE_SPREAD, -1, "key-1", -EEXIST);
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), alloc_id(a)));
	lfx_release(&t, alloc_id(a));
	vfp_allocation_unref(b);
	/* after release the key is spent: a retry is told so, never handed the dead allocation */
	lfx_claim(&t, "ib", 2, VFP_PLACE_SPREAD, -1, "key-1", -EEXIST);
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), "released since"));
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), alloc_id(a)));
	ck_assert_int_eq(lfx_count(&t, "ib", "reserved"), 0);
	/* the same key with another placement is another request */
	b = lfx_claim(&t, "ib", 1, VFP_PLACE_SPREAD, -1, "key-2", 0);
	lfx_claim(&t, "ib", 1, VFP_PLACE_PACK, -1, "key-2", -EEXIST);
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
}
END_TEST

/* A CNI attachment's key: found live or released; a released one lets go of it for a new claim. */
START_TEST(test_key_lookup_and_forget)
{
	struct vfp_allocation *a = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, "cni:n/c/eth0", 0);
	struct vfp_allocation *b = NULL, *c;

	ck_assert_int_eq(vfp_ledger_get_allocation_by_key(t.l, "cni:n/c/eth0", &b), 0);
	ck_assert_str_eq(alloc_id(b), alloc_id(a));
	vfp_allocation_unref(b);
	ck_assert_int_eq(vfp_ledger_get_allocation_by_key(t.l, "cni:n/x/eth0", &b), -ENOENT);
	/* a live allocation keeps its key */
	ck_assert_int_eq(vfp_ledger_forget_key(t.l, "cni:n/c/eth0"), -EBUSY);
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), alloc_id(a)));
	lfx_release(&t, alloc_id(a));
	ck_assert_int_eq(vfp_ledger_get_allocation_by_key(t.l, "cni:n/c/eth0", &b), 0);
	ck_assert_str_eq(alloc_state(b), "released");
	vfp_allocation_unref(b);
	ck_assert_int_eq(vfp_ledger_forget_key(t.l, "cni:n/c/eth0"), 0);
	ck_assert_int_eq(vfp_ledger_forget_key(t.l, "cni:n/none/eth0"), 0); /* none: fine */
	c = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, "cni:n/c/eth0", 0); /* a new one */
	ck_assert_str_ne(alloc_id(c), alloc_id(a));
	b = get_alloc(alloc_id(a));
	ck_assert_ptr_null(vfp_allocation_get_idempotency_key(b));
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
	vfp_allocation_unref(c);
}
END_TEST

/* A claim of one named VF (Multus' deviceID): that VF, or nothing. */
START_TEST(test_claim_named_vf)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_CONTAINER, .netns = "c1" };
	struct vfp_claim req = { .pool = "eth", .count = 1, .owner = &owner, .numa_node = -1,
				 .pci = "0000:af:01.2" };
	struct vfp_allocation *a = NULL, *b = NULL;

	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &a), 0);
	ck_assert_str_eq(alloc_vf(a, 0), "0000:af:01.2");
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &b), -EBUSY); /* held */
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), "is not free: reserved"));
	req.pci = "0000:3b:00.4"; /* excluded: in no pool, as a VF another scheduler holds */
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &b), -EBUSY);
	req.pci = "0000:99:00.1";
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &b), -ENOENT);
	req.pci = "0000:af:01.3";
	req.count = 2;
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &b), -EINVAL);
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 5);
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
}
END_TEST

/*
 * Near the simulated host's GPU (0000:39:00.0): the ConnectX-6 on its PCIe
 * switch is PIX (3 free VFs of pool ib: 3b:00.4 is excluded), the
 * ConnectX-3 on the other switch of its root complex PHB (4 free).
 */
START_TEST(test_claim_near_a_device)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_CONTAINER, .netns = "c1" };
	struct vfp_pcie_topo *topo = NULL;
	struct vfp_claim req = { .pool = "ib", .count = 2, .owner = &owner, .numa_node = -1,
				 .near = "0000:39:00.0" };
	struct vfp_allocation *a = NULL, *b = NULL, *c = NULL;

	ck_assert_int_eq(vfp_pcie_topo_scan(t.fx.ctx, &topo), 0);
	req.topo = topo;
	/* spread would take one VF per PF: near takes both beside the GPU */
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &a), 0);
	ck_assert_str_eq(vfp_allocation_get_vf(a, 0)->pf, "0000:3b:00.0");
	ck_assert_str_eq(vfp_allocation_get_vf(a, 1)->pf, "0000:3b:00.0");
	/* 2 more within PIX: 1 is left there; refused, naming what is */
	req.max_distance = VFP_PCIE_PIX;
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &b), -EBUSY);
	ck_assert_str_eq(vfp_ledger_get_error(t.l),
			 "max_distance: no 2 free VFs of pool \"ib\" within PIX of 0000:39:00.0; "
			 "the closest free VFs are PIX (1)");
	ck_assert_int_eq(lfx_count(&t, "ib", "free"), 5);
	/* within PHB: the last one beside the GPU first, then the other switch */
	req.max_distance = VFP_PCIE_PHB;
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &b), 0);
	ck_assert_str_eq(vfp_allocation_get_vf(b, 0)->pf, "0000:3b:00.0");
	ck_assert_str_eq(vfp_allocation_get_vf(b, 1)->pf, "0000:5e:00.0");
	req.max_distance = VFP_PCIE_PIX;
	req.count = 1;
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &c), -EBUSY);
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), "the closest free VFs are PHB (3)"));
	req.near = "0000:99:00.0";
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &c), -ENOENT);
	ck_assert_str_eq(vfp_ledger_get_error(t.l), "near: no PCI device 0000:99:00.0 on this host");
	req.near = "gpu0";
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &c), -EINVAL);
	req.near = "0000:39:00.0";
	req.topo = NULL;
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &c), -EIO);
	/* too few free VFs in all stays what growing the pool may fix */
	req.topo = topo;
	req.count = 9;
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &c), -ENOBUFS);
	ck_assert_int_eq(lfx_count(&t, "ib", "free"), 3);
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
	vfp_pcie_topo_unref(topo);
}
END_TEST

/* An Idempotency-Key replays a claim near a device only for the same device and bound. */
START_TEST(test_claim_near_idempotency)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_CONTAINER, .netns = "c1" };
	struct vfp_pcie_topo *topo = NULL;
	struct vfp_claim req = { .pool = "ib", .count = 1, .owner = &owner, .numa_node = -1,
				 .near = "0000:39:00.0", .idempotency_key = "k1" };
	struct vfp_allocation *a = NULL, *b = NULL;

	ck_assert_int_eq(vfp_pcie_topo_scan(t.fx.ctx, &topo), 0);
	req.topo = topo;
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &a), 0);
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &b), 1);
	vfp_allocation_unref(b);
	req.max_distance = VFP_PCIE_PIX;
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &b), -EEXIST);
	req.near = NULL;
	req.max_distance = VFP_PCIE_SELF;
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &b), -EEXIST);
	vfp_allocation_unref(a);
	vfp_pcie_topo_unref(topo);
}
END_TEST

START_TEST(test_transitions)
{
	struct vfp_allocation *a = lfx_claim(&t, "ib", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	const char *id = alloc_id(a), *vf = alloc_vf(a, 0);

	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_ATTACH, true, NULL), -ENOENT);
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_DETACH), -EBUSY); /* not attached */
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_ATTACH), 0);
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_RELEASE), -EBUSY); /* attach in flight */
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), "is busy: attach in progress"));
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_ATTACH, false, "libvirt said no"), 0);
	ck_assert_str_eq(lfx_vf_state(&t, vf), "reserved");
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_ATTACH), 0);
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_ATTACH, true, NULL), 0);
	ck_assert_str_eq(lfx_vf_state(&t, vf), "attached");
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_DETACH), 0);
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_DETACH, true, NULL), 0);
	ck_assert_str_eq(lfx_vf_state(&t, vf), "reserved");
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_ATTACH), 0);
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_ATTACH, true, NULL), 0);
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_RELEASE), 0);
	ck_assert_str_eq(lfx_vf_state(&t, vf), "releasing");
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_RELEASE, false, "restore failed: EIO"), 0);
	ck_assert_str_eq(lfx_vf_state(&t, vf), "quarantined");
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_ATTACH), -EBUSY); /* released */
	ck_assert_int_eq(vfp_ledger_begin(t.l, "no-such-id", VFP_OP_ATTACH), -ENOENT);
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
}
END_TEST

/* Several allocations' intents begun, and confirmed, in one transaction: all or none. */
START_TEST(test_intents_many)
{
	struct vfp_allocation *a = lfx_claim(&t, "ib", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	struct vfp_allocation *b = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	const char *ids[] = { alloc_id(a), alloc_id(b) };
	const char *bogus[] = { alloc_id(a), "no-such-id" };

	ck_assert_int_eq(vfp_ledger_begin(t.l, ids[1], VFP_OP_ATTACH), 0);
	ck_assert_int_eq(vfp_ledger_begin_volatile_many(t.l, ids, 2, VFP_OP_ATTACH), -EBUSY);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM intents"), 1); /* b's own */
	ck_assert_int_eq(vfp_ledger_confirm(t.l, ids[1], VFP_OP_ATTACH, false, "no"), 0);
	ck_assert_int_eq(vfp_ledger_begin_volatile_many(t.l, ids, 2, VFP_OP_ATTACH), 0);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM intents"), 2);
	ck_assert_int_eq(vfp_ledger_confirm_many(t.l, bogus, 2, VFP_OP_ATTACH, true, NULL), -ENOENT);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM intents"), 2); /* none confirmed */
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 0)), "reserved");
	ck_assert_int_eq(vfp_ledger_confirm_many(t.l, ids, 2, VFP_OP_ATTACH, true, NULL), 0);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM intents"), 0);
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 0)), "attached");
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(b, 0)), "attached");
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 2);
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
}
END_TEST

START_TEST(test_audit_log)
{
	struct vfp_allocation *a = lfx_claim(&t, "ib", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	json_t *log;

	lfx_release(&t, alloc_id(a));
	log = vfp_ledger_audit(t.l, alloc_vf(a, 0), 10);
	ck_assert_uint_eq(json_array_size(log), 4); /* new, reserved, releasing, free */
	ck_assert(json_is_null(json_object_get(json_array_get(log, 0), "from")));
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(log, 1), "to")), "reserved");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(log, 1), "allocation")),
			 alloc_id(a));
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(log, 2), "to")), "releasing");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(log, 3), "to")), "free");
	json_decref(log);
	vfp_allocation_unref(a);
}
END_TEST

/* The audit rows after @seq, one line each: pci, from>to, allocation named (1/0), reason. */
static char *audit_since(int seq)
{
	sqlite3_stmt *st;
	char *s = NULL;

	ck_assert_int_eq(sqlite3_prepare_v2(t.l->db,
		"SELECT group_concat(line, ';') FROM (SELECT pci || ' ' || coalesce(from_state, '-') "
		"|| '>' || to_state || ' ' || (allocation_id IS NOT NULL) || ' ' || "
		"coalesce(reason, '') AS line FROM audit WHERE seq > ? ORDER BY seq)", -1, &st, NULL),
		SQLITE_OK);
	sqlite3_bind_int(st, 1, seq);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	s = strdup(sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
	sqlite3_finalize(st);
	return s;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The audit rows one step of @a's (3 VFs, [1] quarantined) writes: its other VFs by address. */
static void assert_step_audit(const struct vfp_allocation *a, const char *from, const char *to,
			      const char *reason, int *seq)
{
	const char *pcis[2] = { alloc_vf(a, 0), alloc_vf(a, 2) };
	char want[512] = "", *got = audit_since(*seq);

	qsort(pcis, 2, sizeof(*pcis), cmp_str);
	for (size_t i = 0; i < 2; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s %s>%s 1 %s",
			 i ? ";" : "", pcis[i], from, to, reason ? reason : "");
	ck_assert_str_eq(got, want);
	free(got);
	*seq = lfx_query_int(&t, "SELECT max(seq) FROM audit");
}

/*
 * An allocation's attach, detach and release write one audit row per VF
 * that changes state, in the VFs' address order, the allocation named, the
 * quarantined VF left out (it stays so); the same with a reason.
 */
START_TEST(test_audit_rows_per_vf)
{
	struct vfp_allocation *a = lfx_claim(&t, "ib", 3, VFP_PLACE_SPREAD, -1, NULL, 0);
	const char *id = alloc_id(a);
	int seq;

	ck_assert_int_eq(vfp_ledger_quarantine_vf(t.l, alloc_vf(a, 1), "bad"), 0);
	seq = lfx_query_int(&t, "SELECT max(seq) FROM audit");
	ck_assert_int_eq(vfp_ledger_begin_volatile(t.l, id, VFP_OP_ATTACH), 0);
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_ATTACH, true, NULL), 0);
	assert_step_audit(a, "reserved", "attached", NULL, &seq);
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_DETACH), 0);
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_DETACH, false, "stuck"), 0);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM audit"), seq); /* no change */
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_DETACH), 0);
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_DETACH, true, NULL), 0);
	assert_step_audit(a, "attached", "reserved", NULL, &seq);
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_ATTACH), 0);
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_ATTACH, false, "refused"), 0);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM audit"), seq);
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_RELEASE), 0);
	assert_step_audit(a, "reserved", "releasing", NULL, &seq);
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_RELEASE, true, NULL), 0);
	assert_step_audit(a, "releasing", "free", NULL, &seq);
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 1)), "quarantined");
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
}
END_TEST

START_TEST(test_owner_lookup)
{
	struct vfp_allocation *a = lfx_claim(&t, "ib", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	struct vfp_allocation **list = NULL, **none = NULL;
	size_t n_list = 0, n_none = 0;
	static const struct vfp_owner bad_owners[] = {
		{ .kind = (enum vfp_owner_kind)7 }, { .kind = VFP_OWNER_VM },
		{ .kind = VFP_OWNER_VM, .name = "" }, { .kind = VFP_OWNER_CONTAINER },
		{ .kind = VFP_OWNER_CONTAINER, .pid = -1 }, { .kind = VFP_OWNER_CONTAINER, .netns = "" },
	};
	char *key = NULL, *err = NULL;

	ck_assert_int_eq(vfp_ledger_list_allocations(t.l, "vm:one-42", false, &list, &n_list), 0);
	ck_assert_int_eq(vfp_ledger_list_allocations(t.l, "vm:one-43", false, &none, &n_none), 0);
	ck_assert_uint_eq(n_list, 1);
	ck_assert_str_eq(alloc_id(list[0]), alloc_id(a));
	ck_assert_str_eq(vfp_allocation_get_owner(list[0])->name, "one-42");
	ck_assert_int_eq(vfp_allocation_get_owner(list[0])->kind, VFP_OWNER_VM);
	ck_assert_uint_eq(n_none, 0);
	for (size_t i = 0; i < sizeof(bad_owners) / sizeof(bad_owners[0]); i++) {
		ck_assert_int_eq(vfp_owner_key(&bad_owners[i], &key, &err), -EINVAL);
		ck_assert_ptr_nonnull(err);
		ck_assert_msg(strncmp(err, "owner", 5) == 0, "error \"%s\" names no field", err);
		free(err);
		err = NULL;
	}
	ck_assert_int_eq(vfp_owner_key(&(struct vfp_owner){ .kind = VFP_OWNER_CONTAINER,
							     .pid = 42 },
				       &key, &err),
			 0);
	ck_assert_str_eq(key, "pid:42");
	free(key);
	vfp_allocation_list_free(list, n_list);
	vfp_allocation_list_free(none, n_none);
	vfp_allocation_unref(a);
}
END_TEST

/* A claim from "ib" for VM @name of domain @uuid (NULL: none). */
static struct vfp_allocation *claim_for(const char *name, const char *uuid)
{
	struct vfp_owner o = { .kind = VFP_OWNER_VM, .name = name, .uuid = uuid };
	struct vfp_claim req = { .pool = "ib", .count = 1, .owner = &o, .numa_node = -1 };
	struct vfp_allocation *alloc = NULL;

	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &alloc), 0);
	return alloc;
}

/* A domain's allocations: by its UUID in any case, under any name, live only. */
START_TEST(test_domain_lookup)
{
	static const char uuid[] = "8f6fd3c5-8a5e-4c19-9e0e-3c2d1f0a4b43";
	struct vfp_allocation *a = claim_for("one-42", uuid);
	struct vfp_allocation *b = claim_for("renamed", "8F6FD3C5-8A5E-4C19-9E0E-3C2D1F0A4B43");
	struct vfp_allocation *c = claim_for("one-43", "0f6fd3c5-8a5e-4c19-9e0e-3c2d1f0a4b43");
	struct vfp_allocation *d = claim_for("one-42", NULL);
	struct vfp_allocation **list = NULL;
	size_t n = 0;

	ck_assert_int_eq(vfp_ledger_list_domain_allocations(t.l, uuid, &list, &n), 0);
	ck_assert_uint_eq(n, 2); /* oldest first: within a second, by id */
	ck_assert(!strcmp(alloc_id(list[0]), alloc_id(a)) || !strcmp(alloc_id(list[1]), alloc_id(a)));
	ck_assert(!strcmp(alloc_id(list[0]), alloc_id(b)) || !strcmp(alloc_id(list[1]), alloc_id(b)));
	vfp_allocation_list_free(list, n);
	lfx_release(&t, alloc_id(a));
	ck_assert_int_eq(vfp_ledger_list_domain_allocations(t.l, "8F6FD3C5-8a5e-4c19-9e0e-3c2d1f0a4b43",
							    &list, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(alloc_id(list[0]), alloc_id(b));
	vfp_allocation_list_free(list, n);
	for (struct vfp_allocation **p = (struct vfp_allocation *[]){ a, b, c, d, NULL }; *p; p++)
		vfp_allocation_unref(*p);
}
END_TEST

START_TEST(test_guids)
{
	struct vfp_config *c = lfx_config(
		"{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"]}}, "
		"{\"name\": \"eth\", \"selector\": {\"vendors\": [\"8086\"]}}], "
		"\"guids\": {\"first\": \"02:c9:03:00:00:00:00:fe\", \"count\": 3}}");
	struct vfp_allocation *a, *b, *e;

	vfp_config_unref(t.config);
	t.config = c;
	a = lfx_claim(&t, "ib", 2, VFP_PLACE_SPREAD, -1, NULL, 0);
	b = lfx_claim(&t, "ib", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	ck_assert_str_eq(vfp_allocation_get_vf(a, 0)->guid,
			 "02:c9:03:00:00:00:00:fe");
	ck_assert_str_eq(vfp_allocation_get_vf(a, 1)->guid,
			 "02:c9:03:00:00:00:00:ff");
	ck_assert_str_eq(vfp_allocation_get_vf(b, 0)->guid,
			 "02:c9:03:00:00:00:01:00");
	lfx_claim(&t, "ib", 1, VFP_PLACE_SPREAD, -1, NULL, -EBUSY);
	ck_assert_str_eq(vfp_ledger_get_error(t.l),
			 "the GUID range 02:c9:03:00:00:00:00:fe + 3 is exhausted: every GUID is held");
	e = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, NULL, 0); /* Ethernet VFs take none */
	ck_assert_str_eq(vfp_allocation_get_vf(e, 0)->guid, "");
	lfx_release(&t, alloc_id(a));
	vfp_allocation_unref(a);
	a = lfx_claim(&t, "ib", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	ck_assert_str_eq(vfp_allocation_get_vf(a, 0)->guid,
			 "02:c9:03:00:00:00:00:fe");
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
	vfp_allocation_unref(e);
}
END_TEST

/* OpenNebula's security group ids of a NIC: checked, sorted, kept by the ledger across a restart. */
START_TEST(test_security_groups)
{
	static const char *const bad[] = { "x", "0,", ",0", "0,,1", "-1", "2147483648", "0x10",
					   "1 ", "00000000000000001" };
	static const struct vfp_owner owner = { .kind = VFP_OWNER_VM, .name = "one-7" };
	struct vfp_settings s;
	struct vfp_claim req = { .pool = "eth", .count = 1, .owner = &owner, .settings = &s,
				 .numa_node = -1 };
	struct vfp_allocation *a = NULL;
	char out[128], id[64];
	json_t *j;

	ck_assert_int_eq(vfp_security_groups_parse("101,0+7 101", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "0,7,101");
	ck_assert_int_eq(vfp_security_groups_parse("", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(vfp_security_groups_parse(bad[i], out, sizeof(out)) == -EINVAL,
			      "\"%s\" taken as \"%s\"", bad[i], out);
	ck_assert_int_eq(vfp_security_groups_parse("1,2,3", out, 4), -E2BIG);
	j = json_loads("[2147483647, 0, 0]", 0, NULL);
	ck_assert_int_eq(vfp_security_groups_from_json(j, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "0,2147483647");
	json_decref(j);
	j = json_loads("[\"0\"]", 0, NULL);
	ck_assert_int_eq(vfp_security_groups_from_json(j, out, sizeof(out)), -EINVAL);
	json_decref(j);

	vfp_settings_init(&s);
	ck_assert_int_eq(vfp_security_groups_parse("101,0", s.security_groups,
						   sizeof(s.security_groups)), 0);
	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &a), 0);
	snprintf(id, sizeof(id), "%s", alloc_id(a));
	vfp_allocation_unref(a);
	lfx_reopen(&t);
	a = get_alloc(id);
	ck_assert_str_eq(vfp_allocation_get_settings(a)->security_groups, "0,101");
	j = vfp_security_groups_to_json(vfp_allocation_get_settings(a)->security_groups);
	ck_assert_int_eq(json_integer_value(json_array_get(j, 1)), 101);
	json_decref(j);
	vfp_allocation_unref(a);
}
END_TEST

static time_t later(void)
{
	return time(NULL) + 3600;
}

START_TEST(test_lease_expiry)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_CONTAINER,
						.netns = "/run/netns/c1" };
	struct vfp_claim req = { .pool = "eth", .count = 1, .owner = &owner, .numa_node = -1,
				 .lease_seconds = 60 };
	struct vfp_reconcile_report rep;
	struct vfp_allocation *a = NULL;
	long long expires = 0;

	ck_assert_int_eq(vfp_ledger_claim(t.l, t.config, &req, &a), 0);
	ck_assert_int_eq(vfp_allocation_get_lease_expires(a, &expires), 0);
	ck_assert_int_eq(expires, vfp_allocation_get_created(a) + 60);
	ck_assert_str_eq(vfp_allocation_get_owner(a)->netns, "/run/netns/c1");
	ck_assert_int_eq(vfp_ledger_reconcile(t.l, t.inv, t.config, NULL, NULL, &rep), 0);
	ck_assert_uint_eq(rep.expired, 0);
	t.l->now = later;
	ck_assert_int_eq(vfp_ledger_reconcile(t.l, t.inv, t.config, NULL, NULL, &rep), 0);
	ck_assert_uint_eq(rep.expired, 1);
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 0)), "free");
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
}
END_TEST

/* What the host answers during reconcile, and what reconcile asked of it. */
struct host {
	int attached; /* is_attached's answer */
	int restore;  /* restore's result */
	unsigned detaches, restores;
};

static int host_is_attached(void *userdata, const struct vfp_allocation *alloc)
{
	return ((struct host *)userdata)->attached;
}

static int host_detach(void *userdata, const struct vfp_allocation *alloc)
{
	((struct host *)userdata)->detaches++;
	return 0;
}

static int host_restore(void *userdata, const struct vfp_allocation *alloc)
{
	struct host *h = userdata;

	h->restores++;
	return h->restore;
}

static const struct vfp_reconcile_ops host_ops = { host_is_attached, host_detach, host_restore };

/* Begins @op on a fresh allocation and "crashes": the ledger is closed without a confirm. */
static struct vfp_allocation *crash_during(enum vfp_op op)
{
	struct vfp_allocation *a = lfx_claim(&t, "ib", 2, VFP_PLACE_SPREAD, -1, NULL, 0);
	const char *id = alloc_id(a);

	if (op != VFP_OP_ATTACH) {
		ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_ATTACH), 0);
		ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_ATTACH, true, NULL), 0);
	}
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, op), 0);
	lfx_reopen(&t);
	return a;
}

static const struct {
	enum vfp_op op;
	int attached, restore;
	bool with_ops;
	const char *state;
	unsigned detaches, restores, back, forward;
} intents[] = {
	/* attach: rolled back unless the host shows it done */
	{ VFP_OP_ATTACH, 0, 0, false, "reserved", 0, 0, 1, 0 },
	{ VFP_OP_ATTACH, 0, 0, true, "reserved", 1, 0, 1, 0 },
	{ VFP_OP_ATTACH, 1, 0, true, "attached", 0, 0, 0, 1 },
	{ VFP_OP_ATTACH, -EIO, 0, true, "reserved", 1, 0, 1, 0 },
	/* detach: rolled forward */
	{ VFP_OP_DETACH, 1, 0, false, "reserved", 0, 0, 0, 1 },
	{ VFP_OP_DETACH, 1, 0, true, "reserved", 1, 0, 0, 1 },
	/* release: rolled forward; a failed restore quarantines */
	{ VFP_OP_RELEASE, 0, 0, false, "free", 0, 0, 0, 1 },
	{ VFP_OP_RELEASE, 0, 0, true, "free", 0, 1, 0, 1 },
	{ VFP_OP_RELEASE, 0, -EIO, true, "quarantined", 0, 1, 0, 1 },
};

START_TEST(test_half_done_intents)
{
	struct host h = { .attached = intents[_i].attached, .restore = intents[_i].restore };
	struct vfp_reconcile_report rep;
	struct vfp_allocation *a = crash_during(intents[_i].op);

	ck_assert_int_eq(vfp_ledger_reconcile(t.l, t.inv, t.config,
					      intents[_i].with_ops ? &host_ops : NULL, &h, &rep),
			 0);
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 0)), intents[_i].state);
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 1)), intents[_i].state);
	ck_assert_uint_eq(h.detaches, intents[_i].detaches);
	ck_assert_uint_eq(h.restores, intents[_i].restores);
	ck_assert_uint_eq(rep.intents_rolled_back, intents[_i].back);
	ck_assert_uint_eq(rep.intents_rolled_forward, intents[_i].forward);
	lfx_assert_invariants(&t);
	vfp_allocation_unref(a);
}
END_TEST

/* numvfs lowered and raised behind the ledger's back, through the simulated kernel. */
static void set_numvfs_behind_back(const char *pf, const char *n)
{
	char rel[64];
	int r = 0;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/sriov_numvfs", pf);
	ck_assert_int_eq(sim_kernel_write(NULL, t.fx.root, rel, n, &r), 1);
	ck_assert_int_eq(r, 0);
	lfx_rescan(&t);
}

START_TEST(test_vanish_and_return)
{
	struct vfp_allocation *a = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	struct vfp_allocation *b;
	struct vfp_reconcile_report rep;

	ck_assert_str_eq(alloc_vf(a, 0), "0000:af:01.0");
	set_numvfs_behind_back("0000:af:00.0", "0");
	ck_assert_int_eq(vfp_ledger_reconcile(t.l, t.inv, t.config, NULL, NULL, &rep), 0);
	ck_assert_uint_eq(rep.vanished, 4);
	ck_assert_str_eq(lfx_vf_state(&t, "0000:af:01.0"), "unavailable");
	ck_assert_str_eq(lfx_vf_state(&t, "0000:af:01.3"), "unavailable");
	b = get_alloc(alloc_id(a));
	ck_assert_str_eq(vfp_allocation_get_flag(b), "VF 0000:af:01.0 vanished");
	vfp_allocation_unref(b);
	set_numvfs_behind_back("0000:af:00.0", "4");
	ck_assert_int_eq(vfp_ledger_reconcile(t.l, t.inv, t.config, NULL, NULL, &rep), 0);
	ck_assert_uint_eq(rep.returned, 4);
	ck_assert_str_eq(lfx_vf_state(&t, "0000:af:01.0"), "quarantined"); /* still held */
	ck_assert_str_eq(lfx_vf_state(&t, "0000:af:01.1"), "free");
	vfp_allocation_unref(a);
}
END_TEST

START_TEST(test_new_vfs_and_exclusion_changes)
{
	struct vfp_config *c;
	struct vfp_reconcile_report rep;

	set_numvfs_behind_back("0000:d8:00.0", "0");
	set_numvfs_behind_back("0000:d8:00.0", "5");
	ck_assert_int_eq(vfp_ledger_reconcile(t.l, t.inv, t.config, NULL, NULL, &rep), 0);
	ck_assert_uint_eq(rep.added, 3);
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 9);
	c = lfx_config("{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"]}},"
		       "{\"name\": \"eth\", \"selector\": {\"vendors\": [\"8086\"]}}],"
		       "\"exclude\": [\"0000:d8:00.0\"]}");
	ck_assert_int_eq(vfp_ledger_sync(t.l, t.inv, c, NULL), 0);
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 4);
	ck_assert_int_eq(lfx_count(&t, "", "unavailable"), 5);
	ck_assert_str_eq(lfx_vf_state(&t, "0000:3b:00.4"), "free"); /* no longer excluded */
	ck_assert_int_eq(vfp_ledger_sync(t.l, t.inv, t.config, NULL), 0);
	ck_assert_int_eq(lfx_count(&t, "eth", "free"), 9);
	ck_assert_str_eq(lfx_vf_state(&t, "0000:3b:00.4"), "unavailable");
	lfx_assert_invariants(&t);
	vfp_config_unref(c);
}
END_TEST

START_TEST(test_restore_point)
{
	struct vfp_restore_point *rp = vfp_restore_point_new(), *got = NULL;

	vfp_vf_config_init(&rp->pf_side, 3);
	rp->has_pf_side = true;
	rp->pf_side.has_mac = true;
	memcpy(rp->pf_side.mac, "\xfa\x16\x3e\x00\x51\x51", 6);
	rp->pf_side.vlan = 0;
	rp->pf_side.link_state = 2;
	rp->pf_side.has_node_guid = true;
	rp->pf_side.node_guid = 0x02c9030000000001ULL;
	ck_assert_int_eq(vfp_restore_point_set(&rp->netns, "/run/netns/c1"), 0);
	ck_assert_int_eq(vfp_restore_point_set(&rp->ifname, "net1"), 0);
	rp->netns_inode = 4026532000ULL;
	rp->mtu = 9000;
	ck_assert_int_eq(vfp_restore_point_set(&rp->driver, ""), 0);
	ck_assert_int_eq(vfp_restore_point_set(&rp->dummy_xml, "<interface type=\"ethernet\"/>"), 0);
	ck_assert_int_eq(vfp_ledger_set_restore_point(t.l, "0000:af:01.0", rp), 0);
	ck_assert_int_eq(vfp_ledger_get_restore_point(t.l, "0000:af:01.0", &got), 0);
	ck_assert_ptr_nonnull(got);
	ck_assert(got->has_pf_side && got->pf_side.has_mac);
	ck_assert_mem_eq(got->pf_side.mac, rp->pf_side.mac, 6);
	ck_assert_int_eq(got->pf_side.vlan, 0);
	ck_assert_int_eq(got->pf_side.link_state, 2);
	ck_assert_int_eq(got->pf_side.spoofchk, VFP_UNSET);
	ck_assert(got->pf_side.has_node_guid && !got->pf_side.has_port_guid);
	ck_assert(got->pf_side.node_guid == 0x02c9030000000001ULL);
	ck_assert_str_eq(got->netns, "/run/netns/c1");
	ck_assert_str_eq(got->ifname, "net1");
	ck_assert(got->netns_inode == 4026532000ULL);
	ck_assert_str_eq(got->driver, ""); /* unbound before: not the same as untouched */
	ck_assert_ptr_null(got->domain_uuid);
	ck_assert_str_eq(got->dummy_xml, "<interface type=\"ethernet\"/>"); /* a live IB attach's */
	vfp_restore_point_free(got);
	ck_assert_int_eq(vfp_ledger_set_restore_point(t.l, "0000:99:00.1", rp), -ENOENT);
	ck_assert_int_eq(vfp_ledger_set_restore_point(t.l, "0000:af:01.0", NULL), 0);
	got = rp; /* anything but NULL */
	ck_assert_int_eq(vfp_ledger_get_restore_point(t.l, "0000:af:01.0", &got), 0);
	ck_assert_ptr_null(got);
	vfp_restore_point_free(rp);
}
END_TEST

START_TEST(test_state_names)
{
	for (int s = 0; s < _VFP_VF_STATE_MAX; s++)
		ck_assert_int_eq(vfp_vf_state_from_string(vfp_vf_state_to_string(s)), s);
	for (int s = 0; s < _VFP_ALLOCATION_STATE_MAX; s++)
		ck_assert_int_eq(vfp_allocation_state_from_string(vfp_allocation_state_to_string(s)),
				 s);
	ck_assert_int_eq(vfp_vf_state_from_string("Free"), -EINVAL);
	ck_assert_int_eq(vfp_vf_state_from_string(NULL), -EINVAL);
	ck_assert_int_eq(vfp_allocation_state_from_string("free"), -EINVAL);
	ck_assert_ptr_null(vfp_vf_state_to_string(_VFP_VF_STATE_MAX));
}
END_TEST

/* Group commit: each claim of a batch is all or none on its own. */
START_TEST(test_claim_batch)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_VM, .name = "one-9" };
	const struct vfp_claim reqs[] = {
		{ .pool = "eth", .count = 2, .owner = &owner, .numa_node = -1 },
		{ .pool = "eth", .count = 5, .owner = &owner, .numa_node = -1 }, /* 4 left */
		{ .pool = "nope", .count = 1, .owner = &owner, .numa_node = -1 },
		{ .pool = "eth", .count = 4, .owner = &owner, .numa_node = -1 },
	};
	int results[4];
	struct vfp_allocation *allocs[4];
	char *errors[4];

	ck_assert_int_eq(vfp_ledger_claim_batch(t.l, t.config, reqs, 4, results, allocs, errors), 0);
	ck_assert_int_eq(results[0], 0);
	ck_assert_int_eq(results[1], -ENOBUFS);
	ck_assert_str_eq(errors[1], "pool \"eth\" has 4 free VFs, 5 requested");
	ck_assert_int_eq(results[2], -ENOENT);
	ck_assert_int_eq(results[3], 0);
	ck_assert_ptr_null(allocs[1]);
	ck_assert_ptr_null(errors[0]);
	ck_assert_int_eq(lfx_count(&t, "eth", "reserved"), 6);
	lfx_assert_invariants(&t);
	for (int i = 0; i < 4; i++) {
		vfp_allocation_unref(allocs[i]);
		free(errors[i]);
	}
}
END_TEST

/*
 * Claims together (a deployment's, one per NIC): all or none in one savepoint,
 * each group on its own. Claims 0-2 are a group whose second cannot be met:
 * none is made, the others -ECANCELED; 3-4 a group that is met; 5 alone.
 */
START_TEST(test_claim_groups)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_VM, .name = "one-11" };
	const struct vfp_claim reqs[] = {
		{ .pool = "eth", .count = 2, .owner = &owner, .numa_node = -1, .attach = true },
		{ .pool = "eth", .count = 9, .owner = &owner, .numa_node = -1, .attach = true },
		{ .pool = "eth", .count = 1, .owner = &owner, .numa_node = -1, .attach = true },
		{ .pool = "eth", .count = 2, .owner = &owner, .numa_node = -1, .attach = true },
		{ .pool = "ib", .count = 1, .owner = &owner, .numa_node = -1, .attach = true },
		{ .pool = "eth", .count = 1, .owner = &owner, .numa_node = -1 },
	};
	const bool together[] = { true, true, false, true, false, false };
	int results[6];
	struct vfp_allocation *allocs[6];
	char *errors[6];

	ck_assert_int_eq(vfp_ledger_claim_groups(t.l, t.config, reqs, 6, together, results, allocs,
						 errors), 0);
	ck_assert_int_eq(results[0], -ECANCELED);
	ck_assert_int_eq(results[1], -ENOBUFS);
	ck_assert_str_eq(errors[1], "pool \"eth\" has 4 free VFs, 9 requested"); /* 2 of 6 in its group */
	ck_assert_int_eq(results[2], -ECANCELED);
	ck_assert_ptr_nonnull(errors[0]);
	ck_assert_ptr_nonnull(errors[2]);
	ck_assert_ptr_null(allocs[0]);
	ck_assert_ptr_null(allocs[2]);
	ck_assert_int_eq(results[3], 0);
	ck_assert_int_eq(results[4], 0);
	ck_assert_int_eq(results[5], 0);
	ck_assert_ptr_null(errors[3]);
	ck_assert_int_eq(lfx_count(&t, "eth", "attached"), 2);
	ck_assert_int_eq(lfx_count(&t, "eth", "reserved"), 1);
	ck_assert_int_eq(lfx_count(&t, "ib", "attached"), 1);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM intents"), 2);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM allocations"), 3);
	for (int i = 3; i < 5; i++)
		ck_assert_int_eq(vfp_ledger_confirm(t.l, vfp_allocation_get_id(allocs[i]),
						    VFP_OP_ATTACH, true, NULL), 0);
	lfx_assert_invariants(&t);
	for (int i = 0; i < 6; i++) {
		vfp_allocation_unref(allocs[i]);
		free(errors[i]);
	}
}
END_TEST

/* A claim that begins its attach (a deployment's): attached with its intent open, one commit. */
static struct vfp_allocation *claim_attached(int n_intents)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_VM, .name = "one-10" };
	const struct vfp_claim req = { .pool = "ib", .count = 2, .owner = &owner, .numa_node = -1,
				       .attach = true };
	struct vfp_allocation *a = NULL;
	int result;

	ck_assert_int_eq(vfp_ledger_claim_batch(t.l, t.config, &req, 1, &result, &a, NULL), 0);
	ck_assert_int_eq(result, 0);
	ck_assert_str_eq(alloc_state(a), "attached");
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 0)), "attached");
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 1)), "attached");
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM intents WHERE op = 'attach'"),
			 n_intents);
	ck_assert_int_eq(vfp_ledger_begin(t.l, alloc_id(a), VFP_OP_RELEASE), -EBUSY);
	return a;
}

START_TEST(test_claim_attached)
{
	struct vfp_allocation *a = claim_attached(1), *b = claim_attached(2), *now;

	ck_assert_int_eq(vfp_ledger_confirm(t.l, alloc_id(a), VFP_OP_ATTACH, true, NULL), 0);
	now = get_alloc(alloc_id(a));
	ck_assert_str_eq(alloc_state(now), "attached");
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 0)), "attached");
	vfp_allocation_unref(now);
	/* not done: reserved, the VFs saying why, as an attach begun on its own */
	ck_assert_int_eq(vfp_ledger_confirm(t.l, alloc_id(b), VFP_OP_ATTACH, false, "no"), 0);
	now = get_alloc(alloc_id(b));
	ck_assert_str_eq(alloc_state(now), "reserved");
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(b, 1)), "reserved");
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM vfs WHERE reason = 'no'"), 2);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM intents"), 0);
	lfx_assert_invariants(&t);
	ck_assert_int_eq(vfp_ledger_begin(t.l, alloc_id(b), VFP_OP_RELEASE), 0);
	vfp_allocation_unref(now);
	vfp_allocation_unref(a);
	vfp_allocation_unref(b);
}
END_TEST

/* A crash after a claim that began its attach: resolved by the attach rule (intents[0..3]). */
START_TEST(test_claim_attached_crash)
{
	struct host h = { .attached = intents[_i].attached, .restore = intents[_i].restore };
	struct vfp_reconcile_report rep;
	struct vfp_allocation *a = claim_attached(1), *now;

	lfx_reopen(&t);
	ck_assert_int_eq(vfp_ledger_reconcile(t.l, t.inv, t.config,
					      intents[_i].with_ops ? &host_ops : NULL, &h, &rep),
			 0);
	now = get_alloc(alloc_id(a));
	ck_assert_str_eq(alloc_state(now), intents[_i].state);
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 0)), intents[_i].state);
	ck_assert_str_eq(lfx_vf_state(&t, alloc_vf(a, 1)), intents[_i].state);
	ck_assert_uint_eq(h.detaches, intents[_i].detaches);
	ck_assert_uint_eq(rep.intents_rolled_back, intents[_i].back);
	ck_assert_uint_eq(rep.intents_rolled_forward, intents[_i].forward);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM intents"), 0);
	lfx_assert_invariants(&t);
	vfp_allocation_unref(now);
	vfp_allocation_unref(a);
}
END_TEST

/* The size of the ledger's file ("") or its write-ahead log ("-wal"). */
static long long ledger_bytes(const struct lfx *fx, const char *suffix)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ledger.db%s", fx->state_dir, suffix);
	return stat(path, &st) == 0 ? st.st_size : 0;
}

/*
 * 10,000 claim/release cycles, pruned as the agent prunes (every 64
 * releases), keeping 200 released allocations and 1,000 audit rows: the
 * file stays under 1 MiB and grows by at most 64 KiB from cycle 2,000 to
 * cycle 10,000; its write-ahead log stays under 4.5 MiB (SQLite checkpoints
 * at 1,000 pages of 4 KiB, and the ledger truncates it to 1 MiB after).
 */
START_TEST(test_prune_bounds_churn)
{
	const struct vfp_retention keep = { .seconds = 86400, .allocations = 200, .audit = 1000 };
	long long at_2000 = 0;
	unsigned pruned_total = 0;

	for (int i = 1; i <= 10000; i++) {
		struct vfp_allocation *a = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
		unsigned n = 0;

		lfx_release(&t, alloc_id(a));
		vfp_allocation_unref(a);
		if (i % 64 == 0) {
			ck_assert_int_eq(vfp_ledger_prune(t.l, &keep, &n), 0);
			pruned_total += n;
		}
		if (i == 2000)
			at_2000 = ledger_bytes(&t, "");
		ck_assert_int_lt(ledger_bytes(&t, "-wal"), 4608 << 10);
	}
	ck_assert_int_eq(vfp_ledger_prune(t.l, &keep, NULL), 0);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM allocations"), 200);
	ck_assert_int_le(lfx_query_int(&t, "SELECT count(*) FROM audit"), 1000);
	ck_assert_uint_ge(pruned_total, 9700);
	ck_assert_int_lt(ledger_bytes(&t, ""), 1 << 20);
	ck_assert_int_le(ledger_bytes(&t, ""), at_2000 + (64 << 10));
	lfx_assert_invariants(&t);
}
END_TEST

static time_t in_61s(void)
{
	return time(NULL) + 61;
}

/* Age first: released allocations older than the retention go, live ones never. */
START_TEST(test_prune_by_age)
{
	const struct vfp_retention keep = { .seconds = 60, .allocations = 1000, .audit = 1000 };
	struct vfp_allocation *gone = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	struct vfp_allocation *live = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	unsigned n = 0;

	lfx_release(&t, alloc_id(gone));
	ck_assert_int_eq(vfp_ledger_prune(t.l, &keep, &n), 0);
	ck_assert_uint_eq(n, 0); /* released just now */
	t.l->now = in_61s;
	ck_assert_int_eq(vfp_ledger_prune(t.l, &keep, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM allocations WHERE state = "
					   "'released'"), 0);
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM allocations"), 1);
	lfx_assert_invariants(&t);
	vfp_allocation_unref(gone);
	vfp_allocation_unref(live);
}
END_TEST

/*
 * A swap's rows: only an attached allocation's VF swaps, one swap at a time;
 * no intent begins meanwhile; the exchange gives the allocation the new VF
 * in the old one's place (attached) and the swap's claim the old one
 * (reserved), once; the row ends.
 */
START_TEST(test_swap_rows)
{
	struct vfp_allocation *a = lfx_claim(&t, "eth", 2, VFP_PLACE_SPREAD, -1, NULL, 0);
	struct vfp_allocation *sc = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, "swap:k", 0);
	struct vfp_allocation *after = NULL;
	const char *id = vfp_allocation_get_id(a), *tid = vfp_allocation_get_id(sc);
	char old[16], new_vf[16], second[16];
	struct vfp_swap s;

	snprintf(old, sizeof(old), "%s", vfp_allocation_get_vf(a, 0)->pci);
	snprintf(second, sizeof(second), "%s", vfp_allocation_get_vf(a, 1)->pci);
	snprintf(new_vf, sizeof(new_vf), "%s", vfp_allocation_get_vf(sc, 0)->pci);
	ck_assert_int_eq(vfp_ledger_swap_begin(t.l, id, old, "swap:k"), -EBUSY); /* reserved */
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_ATTACH), 0);
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_ATTACH, true, NULL), 0);
	ck_assert_int_eq(vfp_ledger_swap_begin(t.l, id, new_vf, "swap:k"), -EBUSY); /* not its VF */
	ck_assert_int_eq(vfp_ledger_swap_begin(t.l, id, old, "swap:k"), 0);
	ck_assert_int_eq(vfp_ledger_swap_begin(t.l, id, old, "swap:k2"), -EBUSY); /* one at a time */
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_DETACH), -EBUSY);
	ck_assert_ptr_nonnull(strstr(vfp_ledger_get_error(t.l), "a swap in progress"));
	ck_assert_int_eq(vfp_ledger_swap_step(t.l, id, VFP_SWAP_CLAIMED, new_vf), 0);
	ck_assert_int_eq(vfp_ledger_swap_step(t.l, id, VFP_SWAP_PLUGGING, NULL), 0);
	ck_assert_int_eq(vfp_ledger_swap_get(t.l, id, &s), 0);
	ck_assert_int_eq(s.step, VFP_SWAP_PLUGGING);
	ck_assert_str_eq(s.new_pci, new_vf);
	ck_assert_str_eq(s.temp_key, "swap:k");
	/* not steered until the swap says it put the guest's MAC on the PFs */
	ck_assert_int_eq(vfp_ledger_swap_steered(t.l, id), 0);
	ck_assert_int_eq(vfp_ledger_swap_set_steered(t.l, id, true), 0);
	ck_assert_int_eq(vfp_ledger_swap_steered(t.l, id), 1);
	ck_assert_int_eq(vfp_ledger_swap_set_steered(t.l, "nope", true), -ENOENT);
	ck_assert_int_eq(vfp_ledger_swap_steered(t.l, "nope"), -ENOENT);
	ck_assert_int_eq(vfp_ledger_swap_exchange(t.l, id, tid), 0);
	ck_assert_int_eq(vfp_ledger_swap_exchange(t.l, id, tid), 0); /* once: done is done */
	ck_assert_int_eq(vfp_ledger_get_allocation(t.l, id, &after), 0);
	ck_assert_str_eq(vfp_allocation_get_vf(after, 0)->pci, new_vf); /* in the old one's place */
	ck_assert_str_eq(vfp_allocation_get_vf(after, 1)->pci, second);
	ck_assert_str_eq(lfx_vf_state(&t, new_vf), "attached");
	ck_assert_str_eq(lfx_vf_state(&t, old), "reserved");
	vfp_allocation_unref(after);
	ck_assert_int_eq(vfp_ledger_get_allocation(t.l, tid, &after), 0);
	ck_assert_str_eq(vfp_allocation_get_vf(after, 0)->pci, old);
	vfp_allocation_unref(after);
	lfx_release(&t, tid);
	ck_assert_str_eq(lfx_vf_state(&t, old), "free");
	ck_assert_int_eq(vfp_ledger_swap_get(t.l, id, &s), 0); /* the steering's, after the claim */
	ck_assert_int_eq(s.step, VFP_SWAP_EXCHANGED);
	ck_assert_int_eq(vfp_ledger_swap_steered(t.l, id), 1);
	ck_assert_int_eq(vfp_ledger_swap_end(t.l, id), 0);
	ck_assert_int_eq(vfp_ledger_swap_get(t.l, id, &s), -ENOENT);
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_DETACH), 0); /* free to go on */
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_DETACH, true, NULL), 0);
	vfp_allocation_unref(a);
	vfp_allocation_unref(sc);
}
END_TEST

Suite *suite_ledger(void)
{
	Suite *s = suite_create("ledger");
	TCase *tc = tcase_create("ledger");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_schema_and_pragmas);
	tcase_add_test(tc, test_statement_cache_grows);
	tcase_add_test(tc, test_newer_schema_refused);
	tcase_add_test(tc, test_second_writer_refused);
	tcase_add_test(tc, test_first_reconcile);
	tcase_add_test(tc, test_claim_spread_and_release);
	tcase_add_test(tc, test_swap_rows);
	tcase_add_test(tc, test_claim_pack_and_numa);
	tcase_add_test(tc, test_claim_all_or_none);
	tcase_add_test(tc, test_error_is_the_callers);
	tcase_add_test(tc, test_claim_batch);
	tcase_add_test(tc, test_claim_groups);
	tcase_add_test(tc, test_claim_attached);
	tcase_add_loop_test(tc, test_claim_attached_crash, 0, 4);
	tcase_add_test(tc, test_key_lookup_and_forget);
	tcase_add_test(tc, test_claim_named_vf);
	tcase_add_test(tc, test_claim_near_a_device);
	tcase_add_test(tc, test_claim_near_idempotency);
	tcase_add_test(tc, test_idempotency);
	tcase_add_test(tc, test_transitions);
	tcase_add_test(tc, test_intents_many);
	tcase_add_test(tc, test_audit_log);
	tcase_add_test(tc, test_audit_rows_per_vf);
	tcase_add_test(tc, test_owner_lookup);
	tcase_add_test(tc, test_domain_lookup);
	tcase_add_test(tc, test_guids);
	tcase_add_test(tc, test_security_groups);
	tcase_add_test(tc, test_lease_expiry);
	tcase_add_loop_test(tc, test_half_done_intents, 0, sizeof(intents) / sizeof(intents[0]));
	tcase_add_test(tc, test_vanish_and_return);
	tcase_add_test(tc, test_new_vfs_and_exclusion_changes);
	tcase_add_test(tc, test_restore_point);
	tcase_add_test(tc, test_state_names);
	tcase_add_test(tc, test_prune_by_age);
	suite_add_tcase(s, tc);
	tc = tcase_create("churn");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_prune_bounds_churn);
	suite_add_tcase(s, tc);
	return s;
}
