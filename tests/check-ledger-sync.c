/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which ledger commits wait for the disk: claims, releases' intents and
 * restore points of before a change to a domain's config do; confirmations,
 * intents of kernel state only and the other restore points do not, yet a
 * crash of the process keeps them and the next durable commit makes them
 * durable. SQLite's own file layer, with a shim in front
 * that counts its syncs.
 */
#include "config.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-suites.h"
#include "ledger-fixture.h"

static struct lfx t;
static sqlite3_vfs *real_vfs;
static unsigned syncs;

struct counted_file {
	sqlite3_file base;
	sqlite3_file *real; /* follows this struct, real_vfs->szOsFile bytes */
};

#define REAL(f) (((struct counted_file *)(f))->real)

static int c_close(sqlite3_file *f)
{
	return REAL(f)->pMethods->xClose(REAL(f));
}
static int c_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
	return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}
static int c_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
	return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int c_truncate(sqlite3_file *f, sqlite3_int64 n)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), n);
}
static int c_size(sqlite3_file *f, sqlite3_int64 *n)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), n);
}
static int c_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}
static int c_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}
static int c_reserved(sqlite3_file *f, int *r)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r);
}
static int c_fcntl(sqlite3_file *f, int op, void *a)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, a);
}
static int c_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int c_caps(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int c_shm_map(sqlite3_file *f, int i, int n, int e, void volatile **p)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), i, n, e, p);
}
static int c_shm_lock(sqlite3_file *f, int o, int n, int fl)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), o, n, fl);
}
static void c_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int c_shm_unmap(sqlite3_file *f, int d)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), d);
}
static int c_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p)
{
	return REAL(f)->pMethods->xFetch(REAL(f), o, n, p);
}
static int c_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p)
{
	return REAL(f)->pMethods->xUnfetch(REAL(f), o, p);
}

static int c_sync(sqlite3_file *f, int flags)
{
	__atomic_add_fetch(&syncs, 1, __ATOMIC_SEQ_CST);
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static const sqlite3_io_methods counted_methods = {
	.iVersion = 3,
	.xClose = c_close,
	.xRead = c_read,
	.xWrite = c_write,
	.xTruncate = c_truncate,
	.xSync = c_sync,
	.xFileSize = c_size,
	.xLock = c_lock,
	.xUnlock = c_unlock,
	.xCheckReservedLock = c_reserved,
	.xFileControl = c_fcntl,
	.xSectorSize = c_sector,
	.xDeviceCharacteristics = c_caps,
	.xShmMap = c_shm_map,
	.xShmLock = c_shm_lock,
	.xShmBarrier = c_shm_barrier,
	.xShmUnmap = c_shm_unmap,
	.xFetch = c_fetch,
	.xUnfetch = c_unfetch,
};

static int c_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct counted_file *cf = (struct counted_file *)f;
	int rc;

	cf->real = (sqlite3_file *)(cf + 1);
	rc = real_vfs->xOpen(real_vfs, name, cf->real, flags, out);
	cf->base.pMethods = cf->real->pMethods ? &counted_methods : NULL;
	return rc;
}

static sqlite3_vfs counted_vfs;

/*
 * Every other method of the VFS is the real one's. Once per process: without
 * fork (CK_FORK=no, as under valgrind) every test's setup comes here, and
 * the default VFS is then this one.
 */
static void register_counting_vfs(void)
{
	if (real_vfs)
		return;
	real_vfs = sqlite3_vfs_find(NULL);
	ck_assert_ptr_nonnull(real_vfs);
	counted_vfs = *real_vfs;
	counted_vfs.zName = "vfagent-counted";
	counted_vfs.szOsFile = (int)sizeof(struct counted_file) + real_vfs->szOsFile;
	counted_vfs.xOpen = c_open;
	ck_assert_int_eq(sqlite3_vfs_register(&counted_vfs, 1), SQLITE_OK);
}

static void setup(void)
{
	register_counting_vfs();
	lfx_setup(&t, NULL);
}

static void teardown(void)
{
	lfx_teardown(&t);
}

static unsigned synced_since(unsigned before)
{
	return __atomic_load_n(&syncs, __ATOMIC_SEQ_CST) - before;
}

START_TEST(test_claim_and_intent_wait_confirm_does_not)
{
	unsigned s = syncs;
	struct vfp_allocation *a = lfx_claim(&t, "ib", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	const char *id = vfp_allocation_get_id(a), *vf = vfp_allocation_get_vf(a, 0)->pci;

	ck_assert_uint_ge(synced_since(s), 1);
	s = syncs;
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_ATTACH), 0);
	ck_assert_uint_ge(synced_since(s), 1);
	s = syncs;
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_ATTACH, true, NULL), 0);
	ck_assert_uint_eq(synced_since(s), 0);
	ck_assert_str_eq(lfx_vf_state(&t, vf), "attached");
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 2); /* FULL again */
	s = syncs;
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_RELEASE), 0);
	ck_assert_uint_ge(synced_since(s), 1); /* and it carries the confirmation with it */
	s = syncs;
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_RELEASE, true, NULL), 0);
	ck_assert_uint_eq(synced_since(s), 0);
	ck_assert_str_eq(lfx_vf_state(&t, vf), "free");
	vfp_allocation_unref(a);
}
END_TEST

/* An intent for kernel state only: neither it nor its confirmation waits; a release does. */
START_TEST(test_volatile_begin_does_not_wait)
{
	struct vfp_allocation *a = lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	const char *id = vfp_allocation_get_id(a), *vf = vfp_allocation_get_vf(a, 0)->pci;
	unsigned s = syncs;

	ck_assert_int_eq(vfp_ledger_begin_volatile(t.l, id, VFP_OP_ATTACH), 0);
	ck_assert_int_eq(vfp_ledger_begin_volatile(t.l, id, VFP_OP_ATTACH), -EBUSY);
	ck_assert_int_eq(vfp_ledger_confirm(t.l, id, VFP_OP_ATTACH, true, NULL), 0);
	ck_assert_uint_eq(synced_since(s), 0);
	ck_assert_str_eq(lfx_vf_state(&t, vf), "attached");
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 2);
	ck_assert_int_eq(vfp_ledger_begin_volatile(t.l, "no-such-id", VFP_OP_ATTACH), -ENOENT);
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 2);
	s = syncs;
	ck_assert_int_eq(vfp_ledger_begin(t.l, id, VFP_OP_RELEASE), 0);
	ck_assert_uint_ge(synced_since(s), 1);
	vfp_allocation_unref(a);
}
END_TEST

START_TEST(test_refused_confirm_leaves_full)
{
	unsigned s = syncs;

	ck_assert_int_eq(vfp_ledger_confirm(t.l, "no-such-id", VFP_OP_ATTACH, true, NULL), -ENOENT);
	ck_assert_uint_eq(synced_since(s), 0);
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 2);
	s = syncs;
	vfp_allocation_unref(lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, NULL, 0));
	ck_assert_uint_ge(synced_since(s), 1);
}
END_TEST

START_TEST(test_restore_point_before_waits_after_does_not)
{
	struct vfp_restore_point *rp = vfp_restore_point_new(), *got = NULL;
	unsigned s = syncs;

	ck_assert_int_eq(vfp_restore_point_set(&rp->netns, "/run/netns/c1"), 0);
	ck_assert_int_eq(vfp_ledger_set_restore_point(t.l, "0000:af:01.0", rp), 0);
	ck_assert_uint_ge(synced_since(s), 1);
	ck_assert_int_eq(vfp_restore_point_set(&rp->rdma_device, "mlx5_2"), 0);
	s = syncs;
	ck_assert_int_eq(vfp_ledger_update_restore_point(t.l, "0000:af:01.0", rp), 0);
	ck_assert_uint_eq(synced_since(s), 0);
	ck_assert_int_eq(vfp_ledger_get_restore_point(t.l, "0000:af:01.0", &got), 0);
	ck_assert_str_eq(got->rdma_device, "mlx5_2");
	vfp_restore_point_free(got);
	ck_assert_int_eq(vfp_ledger_update_restore_point(t.l, "0000:99:00.1", rp), -ENOENT);
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 2);
	ck_assert_int_eq(vfp_ledger_update_restore_point(t.l, "0000:af:01.0", NULL), 0);
	got = rp;
	ck_assert_int_eq(vfp_ledger_get_restore_point(t.l, "0000:af:01.0", &got), 0);
	ck_assert_ptr_null(got);
	vfp_restore_point_free(rp);
}
END_TEST

/*
 * Lazy commits held together (vfp_ledger_hold_lazy(): a deployment's restore
 * points and confirmation) leave NORMAL between them, and still none waits;
 * any other commit meanwhile, of anyone, waits for the disk; the release
 * puts FULL back.
 */
START_TEST(test_held_lazy_commits)
{
	struct vfp_restore_point *rp = vfp_restore_point_new();
	unsigned s;

	ck_assert_int_eq(vfp_restore_point_set(&rp->driver, "mlx5_core"), 0);
	vfp_ledger_hold_lazy(t.l);
	s = syncs;
	ck_assert_int_eq(vfp_ledger_update_restore_point(t.l, "0000:af:01.0", rp), 0);
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 1); /* NORMAL, held */
	ck_assert_int_eq(vfp_ledger_update_restore_point(t.l, "0000:af:01.1", rp), 0);
	ck_assert_uint_eq(synced_since(s), 0);
	s = syncs;
	ck_assert_int_eq(vfp_ledger_set_restore_point(t.l, "0000:af:01.2", rp), 0); /* durable */
	ck_assert_uint_ge(synced_since(s), 1);
	ck_assert_int_eq(vfp_ledger_update_restore_point(t.l, "0000:af:01.3", rp), 0);
	s = syncs;
	vfp_allocation_unref(lfx_claim(&t, "eth", 1, VFP_PLACE_SPREAD, -1, NULL, 0));
	ck_assert_uint_ge(synced_since(s), 1);
	s = syncs;
	vfp_ledger_hold_lazy(t.l); /* holds nest */
	ck_assert_int_eq(vfp_ledger_update_restore_point(t.l, "0000:af:01.0", NULL), 0);
	vfp_ledger_release_lazy(t.l);
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 1);
	ck_assert_int_eq(vfp_ledger_update_restore_point(t.l, "0000:af:01.1", NULL), 0);
	ck_assert_uint_eq(synced_since(s), 0);
	vfp_ledger_release_lazy(t.l);
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 2); /* FULL again */
	ck_assert_int_eq(vfp_ledger_update_restore_point(t.l, "0000:af:01.2", NULL), 0);
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 2); /* and after each, unheld */
	vfp_restore_point_free(rp);
}
END_TEST

/* A container's claim does not outlive a power cut: no sync; with a VM's in its batch, one. */
START_TEST(test_container_claims_do_not_wait)
{
	static const struct vfp_owner c = { .kind = VFP_OWNER_CONTAINER, .netns = "/run/netns/c1",
					    .netns_inode = 4026532000 };
	static const struct vfp_owner vm = { .kind = VFP_OWNER_VM, .name = "one-7" };
	struct vfp_claim reqs[2] = {
		{ .pool = "ib", .count = 1, .owner = &c, .numa_node = -1 },
		{ .pool = "ib", .count = 1, .owner = &vm, .numa_node = -1 },
	};
	struct vfp_allocation *allocs[2] = { NULL, NULL };
	int results[2];
	unsigned s = syncs;

	ck_assert_int_eq(vfp_ledger_claim_batch(t.l, t.config, reqs, 1, results, allocs, NULL), 0);
	ck_assert_int_eq(results[0], 0);
	ck_assert_uint_eq(synced_since(s), 0);
	ck_assert_int_eq(lfx_query_int(&t, "PRAGMA synchronous"), 2);
	ck_assert_str_eq(lfx_vf_state(&t, vfp_allocation_get_vf(allocs[0], 0)->pci), "reserved");
	vfp_allocation_unref(allocs[0]);
	s = syncs;
	ck_assert_int_eq(vfp_ledger_claim_batch(t.l, t.config, reqs, 2, results, allocs, NULL), 0);
	ck_assert_int_eq(results[0], 0);
	ck_assert_int_eq(results[1], 0);
	ck_assert_uint_ge(synced_since(s), 1);
	vfp_allocation_unref(allocs[0]);
	vfp_allocation_unref(allocs[1]);
}
END_TEST

/* A process that dies right after a lazy commit: the next one reads it. */
START_TEST(test_crash_keeps_lazy_commits)
{
	struct vfp_allocation *a = lfx_claim(&t, "ib", 1, VFP_PLACE_SPREAD, -1, NULL, 0);
	const char *vf = vfp_allocation_get_vf(a, 0)->pci;
	int status;
	pid_t pid;

	ck_assert_int_eq(vfp_ledger_begin(t.l, vfp_allocation_get_id(a), VFP_OP_ATTACH), 0);
	vfp_ledger_unref(t.l);
	t.l = NULL;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct vfp_ledger *l = NULL;

		if (vfp_ledger_open(t.fx.ctx, t.state_dir, &l) < 0 ||
		    vfp_ledger_confirm(l, vfp_allocation_get_id(a), VFP_OP_ATTACH, true, NULL) < 0)
			_exit(1);
		_exit(0); /* no close, no checkpoint */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	lfx_reopen(&t);
	ck_assert_str_eq(lfx_vf_state(&t, vf), "attached");
	ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM intents"), 0);
	vfp_allocation_unref(a);
}
END_TEST

Suite *suite_ledger_sync(void)
{
	Suite *s = suite_create("ledger-sync");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_claim_and_intent_wait_confirm_does_not);
	tcase_add_test(tc, test_volatile_begin_does_not_wait);
	tcase_add_test(tc, test_refused_confirm_leaves_full);
	tcase_add_test(tc, test_restore_point_before_waits_after_does_not);
	tcase_add_test(tc, test_crash_keeps_lazy_commits);
	tcase_add_test(tc, test_container_claims_do_not_wait);
	tcase_add_test(tc, test_held_lazy_commits);
	suite_add_tcase(s, tc);
	return s;
}
