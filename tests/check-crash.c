/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The crash test: a child loops allocate / attach / detach / release on a
 * simulated host and is SIGKILLed at a random point, 200 times. After each
 * kill the ledger is reopened and reconciled, and every invariant of
 * lfx_assert_invariants() must hold: no VF in two allocations, one state
 * per VF, counts that add up, an audit log that agrees with the states.
 */
#include "config.h"

#include <signal.h>
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

START_TEST(test_sigkill_anywhere)
{
	unsigned seed = (unsigned)getpid();
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
		lfx_assert_invariants(&t);
	}
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
