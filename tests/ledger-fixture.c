/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sim/sim-host.h"
#include "ledger-fixture.h"

/* ib: the Mellanox VFs; eth: the Intel ones; one ConnectX-6 VF stays with the host. */
const char *const lfx_default_config =
	"{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"]}},"
	"             {\"name\": \"eth\", \"selector\": {\"vendors\": [\"8086\"]}}],"
	" \"exclude\": [\"0000:3b:00.4\"],"
	" \"guids\": {\"first\": \"02:c9:03:00:00:00:00:01\", \"count\": 16}}";

struct vfp_config *lfx_config(const char *json)
{
	json_t *root = json_loads(json, 0, NULL);
	struct vfp_config *c = NULL;
	char *err = NULL;

	ck_assert_ptr_nonnull(root);
	ck_assert_msg(vfp_config_load_json(root, &c, &err) == 0, "config: %s", err);
	json_decref(root);
	return c;
}

void lfx_rescan(struct lfx *t)
{
	vfp_inventory_unref(t->inv);
	t->inv = fixture_scan(&t->fx);
}

void lfx_reopen(struct lfx *t)
{
	vfp_ledger_unref(t->l);
	t->l = NULL;
	ck_assert_int_eq(vfp_ledger_open(t->fx.ctx, t->state_dir, &t->l), 0);
}

void lfx_setup(struct lfx *t, const char *config_json)
{
	memset(t, 0, sizeof(*t));
	fixture_setup(&t->fx);
	ck_assert_int_eq(sim_host_build_default(t->fx.root), 0);
	vfp_ctx_set_sysfs_write_handler(t->fx.ctx, sim_kernel_write, NULL);
	snprintf(t->state_dir, sizeof(t->state_dir), "%s/state", t->fx.root);
	t->config = lfx_config(config_json ? config_json : lfx_default_config);
	lfx_rescan(t);
	lfx_reopen(t);
	ck_assert_int_eq(vfp_ledger_reconcile(t->l, t->inv, t->config, NULL, NULL, NULL), 0);
}

void lfx_teardown(struct lfx *t)
{
	vfp_ledger_unref(t->l);
	vfp_inventory_unref(t->inv);
	vfp_config_unref(t->config);
	fixture_teardown(&t->fx);
}

int lfx_count(struct lfx *t, const char *pool, const char *state)
{
	struct vfp_pool_count *counts = NULL;
	size_t n = 0;
	int got = 0, s = vfp_vf_state_from_string(state);

	ck_assert_int_eq(vfp_ledger_counts(t->l, &counts, &n), 0);
	ck_assert_msg(s >= 0, "no VF state %s", state);
	for (size_t i = 0; i < n; i++)
		if (strcmp(counts[i].pool, pool) == 0)
			got = (int)counts[i].vfs[s];
	free(counts);
	return got;
}

const char *lfx_vf_state(struct lfx *t, const char *pci)
{
	struct vfp_ledger_vf vf;

	ck_assert_msg(vfp_ledger_get_vf(t->l, pci, &vf) == 0, "VF %s not in the ledger", pci);
	return vfp_vf_state_to_string(vf.state);
}

/* Claims and checks the result code; returns the allocation (NULL when @expect < 0). */
struct vfp_allocation *lfx_claim(struct lfx *t, const char *pool, unsigned count,
				 enum vfp_placement placement, int numa, const char *key, int expect)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_VM, .name = "one-42" };
	struct vfp_claim req = { .pool = pool, .count = count, .owner = &owner,
				 .idempotency_key = key, .numa_node = numa,
				 .placement = placement };
	struct vfp_allocation *alloc = NULL;
	int r = vfp_ledger_claim(t->l, t->config, &req, &alloc);

	ck_assert_msg(r == expect, "claim %u from %s: %d (%s), wanted %d", count, pool, r,
		      vfp_ledger_get_error(t->l), expect);
	return alloc;
}

void lfx_release(struct lfx *t, const char *id)
{
	ck_assert_int_eq(vfp_ledger_begin(t->l, id, VFP_OP_RELEASE), 0);
	ck_assert_int_eq(vfp_ledger_confirm(t->l, id, VFP_OP_RELEASE, true, NULL), 0);
}

int lfx_query_int(struct lfx *t, const char *sql)
{
	sqlite3_stmt *st;
	int v;

	ck_assert_int_eq(sqlite3_prepare_v2(t->l->db, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/*
 * What must hold after every reconcile: no VF in two live allocations, one
 * valid state per VF, held VFs are exactly those in allocation states,
 * allocations and their VFs agree, no intent left, and the audit log's
 * last word on every VF is its state.
 */
void lfx_assert_invariants(struct lfx *t)
{
	static const struct {
		const char *what, *sql;
	} checks[] = {
		{ "VFs in two live allocations",
		  "SELECT count(*) FROM (SELECT pci FROM allocation_vfs WHERE live = 1 "
		  "GROUP BY pci HAVING count(*) > 1)" },
		{ "VFs in an unknown state",
		  "SELECT count(*) FROM vfs WHERE state NOT IN ('free','reserved','attached',"
		  "'releasing','quarantined','unavailable')" },
		{ "held VFs not in an allocation state, or the reverse",
		  "SELECT count(*) FROM vfs f WHERE (f.state IN ('reserved','attached','releasing')) "
		  "!= EXISTS (SELECT 1 FROM allocation_vfs v WHERE v.pci = f.pci AND v.live = 1)" },
		{ "VFs whose state differs from their allocation's",
		  "SELECT count(*) FROM allocation_vfs v JOIN vfs f ON f.pci = v.pci JOIN allocations a "
		  "ON a.id = v.allocation_id WHERE v.live = 1 AND f.state != a.state" },
		{ "live allocations missing VFs",
		  "SELECT count(*) FROM allocations a WHERE a.state != 'released' AND "
		  "(SELECT count(*) FROM allocation_vfs v WHERE v.allocation_id = a.id AND v.live = 1) "
		  "!= (SELECT count(*) FROM allocation_vfs v WHERE v.allocation_id = a.id)" },
		{ "released allocations still holding VFs",
		  "SELECT count(*) FROM allocation_vfs v JOIN allocations a ON a.id = v.allocation_id "
		  "WHERE a.state = 'released' AND v.live = 1" },
		{ "intents left after reconcile", "SELECT count(*) FROM intents" },
		{ "VFs releasing after reconcile", "SELECT count(*) FROM vfs WHERE state = 'releasing'" },
		{ "VFs whose last audit entry is not their state (a pruned log may have none)",
		  "SELECT count(*) FROM vfs f WHERE EXISTS (SELECT 1 FROM audit a WHERE a.pci = f.pci) "
		  "AND f.state IS NOT (SELECT to_state FROM audit a WHERE a.pci = f.pci "
		  "ORDER BY seq DESC LIMIT 1)" },
		{ "per-PF free counts that disagree with the VFs",
		  "SELECT count(*) FROM (SELECT pool, pf, count(*) AS n FROM vfs WHERE state = 'free' "
		  "AND pool IS NOT NULL GROUP BY pool, pf) c FULL JOIN (SELECT * FROM pf_free "
		  "WHERE n_free > 0) p USING (pool, pf) WHERE c.n IS NOT p.n_free" },
		{ "GUIDs held twice",
		  "SELECT count(*) FROM (SELECT guid FROM allocation_vfs WHERE live = 1 AND guid "
		  "IS NOT NULL GROUP BY guid HAVING count(*) > 1)" },
	};

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		int n = lfx_query_int(t, checks[i].sql);

		ck_assert_msg(n == 0, "%d %s", n, checks[i].what);
	}
	/* every VF of the host is in the ledger once; vanished ones stay, unavailable */
	ck_assert_int_eq(lfx_query_int(t, "SELECT count(*) FROM vfs WHERE state != 'unavailable' "
				      "OR reason IS NOT 'vanished'"),
			 (int)vfp_inventory_get_vf_count(t->inv));
	for (size_t i = 0; i < vfp_inventory_get_pf_count(t->inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(t->inv, i);

		for (size_t j = 0; j < vfp_pf_get_vf_count(pf); j++)
			lfx_vf_state(t, vfp_vf_get_pci(vfp_pf_get_vf(pf, j)));
	}
}
