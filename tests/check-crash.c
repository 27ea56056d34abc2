/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The crash test: a child loops allocate / attach / swap / detach / release on a
 * simulated host and is SIGKILLed at a random point, 200 times. After each
 * kill the ledger is reopened and reconciled (the swaps a kill left resolved
 * as the agent does), and every invariant of
 * lfx_assert_invariants() must hold: no VF in two allocations, one state
 * per VF, counts that add up, an audit log that agrees with the states.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-suites.h"
#include "ledger-fixture.h"

#define KILLS 200

static struct lfx t;

static void setup(void)
{
	lfx_setup(&t, NULL);
}

static void teardown(void)
{
	lfx_teardown(&t);
}

static void release_oldest(struct vfp_ledger *l)
{
	struct vfp_allocation **live = NULL;
	size_t n = 0;
	const char *id;

	if (vfp_ledger_list_allocations(l, NULL, false, &live, &n) < 0 || n == 0)
		return;
	id = vfp_allocation_get_id(live[0]);
	if (vfp_ledger_begin(l, id, VFP_OP_RELEASE) >= 0)
		vfp_ledger_confirm(l, id, VFP_OP_RELEASE, true, NULL);
	vfp_allocation_list_free(live, n);
}

/* Release allocation @id, as the agent does once its VFs are restored. */
static void release(struct vfp_ledger *l, const char *id)
{
	if (vfp_ledger_begin(l, id, VFP_OP_RELEASE) >= 0)
		vfp_ledger_confirm(l, id, VFP_OP_RELEASE, true, NULL);
}

/*
 * A swap of attached allocation @a's first VF, as agent/swap.c writes it:
 * the row, the swap's claim (by its key), the steps, the exchange, the
 * swap's claim (now the old VF's) released, the row gone.
 */
static void swap_round(struct vfp_ledger *l, struct vfp_config *c, struct vfp_allocation *a,
		       unsigned n)
{
	const char *id = vfp_allocation_get_id(a), *old = vfp_allocation_get_vf(a, 0)->pci;
	struct vfp_claim req = { .pool = vfp_allocation_get_pool(a), .count = 1,
				 .owner = vfp_allocation_get_owner(a), .numa_node = -1 };
	struct vfp_allocation *sc = NULL;
	char key[96];

	snprintf(key, sizeof(key), "swap:%s:%u", id, n);
	req.idempotency_key = key;
	if (vfp_ledger_swap_begin(l, id, old, key) < 0)
		return;
	if (vfp_ledger_claim(l, c, &req, &sc) == 0 &&
	    vfp_ledger_swap_step(l, id, VFP_SWAP_CLAIMED, vfp_allocation_get_vf(sc, 0)->pci) >= 0 &&
	    vfp_ledger_swap_step(l, id, VFP_SWAP_UNPLUGGING, NULL) >= 0 &&
	    vfp_ledger_swap_step(l, id, VFP_SWAP_PLUGGING, NULL) >= 0 &&
	    vfp_ledger_swap_exchange(l, id, vfp_allocation_get_id(sc)) >= 0)
		release(l, vfp_allocation_get_id(sc));
	else if (sc)
		release(l, vfp_allocation_get_id(sc));
	vfp_ledger_swap_end(l, id);
	vfp_allocation_unref(sc);
}

static void one_round(struct vfp_ledger *l, struct vfp_config *c, const struct vfp_owner *owner,
		      unsigned *seed)
{
	char key[16];
	struct vfp_claim req = { .pool = rand_r(seed) % 2 ? "ib" : "eth",
				 .count = 1 + (unsigned)rand_r(seed) % 3,
				 .owner = owner,
				 .numa_node = -1,
				 .placement = rand_r(seed) % 2 ? VFP_PLACE_PACK : VFP_PLACE_SPREAD };
	struct vfp_allocation *a = NULL;
	const char *id;

	if (rand_r(seed) % 4 == 0) {
		snprintf(key, sizeof(key), "key-%d", rand_r(seed) % 8);
		req.idempotency_key = key;
	}
	if (vfp_ledger_claim(l, c, &req, &a) != 0) {
		vfp_allocation_unref(a);
		release_oldest(l);
		return;
	}
	id = vfp_allocation_get_id(a);
	if (vfp_ledger_begin(l, id, VFP_OP_ATTACH) >= 0)
		vfp_ledger_confirm(l, id, VFP_OP_ATTACH, rand_r(seed) % 4 != 0, "refused");
	if (rand_r(seed) % 2 == 0)
		swap_round(l, c, a, (unsigned)rand_r(seed));
	if (rand_r(seed) % 3 == 0 && vfp_ledger_begin(l, id, VFP_OP_DETACH) >= 0)
		vfp_ledger_confirm(l, id, VFP_OP_DETACH, true, NULL);
	if (rand_r(seed) % 3 != 0 && vfp_ledger_begin(l, id, VFP_OP_RELEASE) >= 0)
		vfp_ledger_confirm(l, id, VFP_OP_RELEASE, true, NULL);
	vfp_allocation_unref(a);
}

/*
 * The "agent": starts as vfagentd does (open, reconcile), says so on
 * @ready, then works until killed.
 */
static _Noreturn void child(unsigned seed, int ready)
{
	struct vfp_ledger *l = NULL;
	static const struct vfp_owner owner = { .kind = VFP_OWNER_VM, .name = "one-7" };

	if (vfp_ledger_open(t.fx.ctx, t.state_dir, &l) < 0 ||
	    vfp_ledger_reconcile(l, t.inv, t.config, NULL, NULL, NULL) < 0)
		_exit(2);
	(void)!write(ready, "r", 1);
	close(ready);
	for (;;)
		one_round(l, t.config, &owner, &seed);
}

static int audit_rows(void)
{
	json_t *log = vfp_ledger_audit(t.l, NULL, 1000000);
	int n = (int)json_array_size(log);

	json_decref(log);
	return n;
}

/*
 * The swaps a kill left, resolved as agent_swap_reconcile() does in the
 * ledger: forward once exchanged (the swap's claim, holding the old VF,
 * released), else back (the swap's claim, holding the new VF, released);
 * either way the row goes. (Whether the new VF is in the guest is libvirt's
 * to say; tests/swap.sh kills the agent itself.)
 */
static unsigned resolve_swaps(struct vfp_ledger *l)
{
	struct vfp_swap *list = NULL;
	size_t n = 0;

	ck_assert_int_eq(vfp_ledger_swap_list(l, &list, &n), 0);
	for (size_t i = 0; i < n; i++) {
		struct vfp_allocation *sc = NULL;

		if (vfp_ledger_get_allocation_by_key(l, list[i].temp_key, &sc) == 0 &&
		    vfp_allocation_get_state(sc) != VFP_ALLOCATION_RELEASED)
			release(l, vfp_allocation_get_id(sc));
		vfp_allocation_unref(sc);
		ck_assert_int_eq(vfp_ledger_swap_end(l, list[i].allocation), 0);
	}
	free(list);
	return (unsigned)n;
}

START_TEST(test_sigkill_anywhere)
{
	unsigned seed = (unsigned)getpid(), swaps = 0;
	int rows_before = audit_rows();

	for (int i = 0; i < KILLS; i++) {
		int status = 0, ready[2];
		char c;
		pid_t pid;

		vfp_ledger_unref(t.l); /* no SQLite handle crosses a fork */
		t.l = NULL;
		ck_assert_int_eq(pipe(ready), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(ready[0]);
			child(seed + (unsigned)i, ready[1]);
		}
		close(ready[1]);
		/* the kill lands in the work, however slow the start (ASan, a loaded machine) */
		(void)!read(ready[0], &c, 1);
		close(ready[0]);
		usleep((useconds_t)(rand_r(&seed) % 40000));
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFSIGNALED(status), "child %d ended by itself: %d", i, status);
		lfx_reopen(&t);
		ck_assert_int_eq(vfp_ledger_reconcile(t.l, t.inv, t.config, NULL, NULL, NULL), 0);
		swaps += resolve_swaps(t.l);
		lfx_assert_invariants(&t);
		ck_assert_int_eq(lfx_query_int(&t, "SELECT count(*) FROM swaps"), 0);
	}
	ck_assert_int_gt(lfx_query_int(&t, "SELECT count(*) FROM audit WHERE reason = "
					   "'swapped out'"), 0); /* swaps were exchanged */
	fprintf(stderr, "crash: %u half-done swaps resolved after %d kills\n", swaps, KILLS);
	/* the children did real work between kills */
	ck_assert_int_gt(audit_rows(), rows_before + KILLS);
}
END_TEST

Suite *suite_crash(void)
{
	Suite *s = suite_create("crash");
	TCase *tc = tcase_create("sigkill");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_sigkill_anywhere);
	suite_add_tcase(s, tc);
	return s;
}
