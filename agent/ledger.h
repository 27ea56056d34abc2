/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's ledger: the one owner of the library's ledger and of its lock
 * (SQLite's one connection serves every thread, one at a time). Nothing
 * else takes that lock: each function here does one job under it and
 * returns -errno, the error in the caller's buffer (@err may be NULL). A
 * section that needs several calls in one go holds a LEDGER_GUARD, released
 * when it goes out of scope. api/ reads through the functions (snapshots it
 * formats afterwards) and never holds the guard. Take state_lock, when
 * needed, before the ledger.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "libvfpool/libvfpool.h"

struct agent;
struct agent_ledger;

/* A VF a domain holds that the ledger does not give it (GET /v1/host). */
struct agent_foreign_vf {
	char pci[VFP_PCI_ADDR_LEN + 1];
	char domain[256];
	char uuid[37];
};

struct agent_foreign_vfs {
	struct agent_foreign_vf *vfs;
	size_t n, cap;
};

/* A domain libvirt ran at the agent's last look (GET /v1/host's "pending"). */
struct agent_running_domain {
	char name[256];
	char uuid[37];
};

struct agent_running_domains {
	struct agent_running_domain *d;
	size_t n, cap;
};

/* The ledger's view of one VF of the inventory; !known: the ledger has no row for it. */
struct ledger_vf_view {
	bool known;
	struct vfp_ledger_vf vf;
};

int ledger_open(struct agent *a, const char *state_dir);
void ledger_close(struct agent *a);
const char *ledger_path(struct agent *a);

/* The scoped guard: @g.l is the library's ledger while @g lives. */
struct ledger_guard {
	struct agent_ledger *owner;
	struct vfp_ledger *l;
};

struct ledger_guard ledger_guard_take(struct agent *a);
void ledger_guard_release(struct ledger_guard *g);
#define LEDGER_GUARD(g, a) \
	struct ledger_guard g __attribute__((cleanup(ledger_guard_release))) = ledger_guard_take(a)

/* One job each, under the lock. */
int ledger_reconcile(struct agent *a, const struct vfp_inventory *inv,
		     const struct vfp_config *config, const struct vfp_reconcile_ops *ops,
		     void *userdata, struct vfp_reconcile_report *ret_report, char *err,
		     size_t err_size);
int ledger_sync(struct agent *a, const struct vfp_inventory *inv, const struct vfp_config *config,
		struct vfp_reconcile_report *ret_report, char *err, size_t err_size);
int ledger_add_persisted_numvfs(struct agent *a, struct vfp_config *c, char *err,
				size_t err_size);
int ledger_persist_numvfs(struct agent *a, const char *pf, int numvfs, char *err,
			  size_t err_size);
int ledger_forget_numvfs(struct agent *a, const char *pf, char *err, size_t err_size);
int ledger_get_allocation_by_key(struct agent *a, const char *key,
				 struct vfp_allocation **ret, char *err, size_t err_size);
void ledger_claim_batch(void *agent, const struct vfp_config *config,
			const struct vfp_claim *reqs, size_t n, const bool *together,
			int *ret_results, struct vfp_allocation **ret_allocations, char **ret_errors);
int ledger_forget_key(struct agent *a, const char *key, char *err, size_t err_size);
int ledger_list_allocations(struct agent *a, const char *owner_key, bool with_released,
			    struct vfp_allocation ***ret_list, size_t *ret_n, char *err,
			    size_t err_size);
int ledger_list_domain_allocations(struct agent *a, const char *uuid,
				   struct vfp_allocation ***ret_list, size_t *ret_n, char *err,
				   size_t err_size);
int ledger_counts(struct agent *a, struct vfp_pool_count **ret_counts, size_t *ret_n);
int ledger_set_hold(struct agent *a, const char *id, const char *path, char *err,
		    size_t err_size);
int ledger_set_settings(struct agent *a, const char *id, const struct vfp_settings *s,
			char *err, size_t err_size);
int ledger_prune(struct agent *a, const struct vfp_retention *keep, unsigned *ret_pruned,
		 char *err, size_t err_size);
int ledger_get_vf(struct agent *a, const char *pci, struct vfp_ledger_vf *ret);
int ledger_get_vf_views(struct agent *a, const struct vfp_inventory *inv,
			struct ledger_vf_view **ret, size_t *ret_n);
int ledger_quarantine_vf(struct agent *a, const char *pci, const char *reason, char *err,
			 size_t err_size);
int ledger_repair_vf(struct agent *a, const char *pci, bool ok, const char *reason, char *err,
		     size_t err_size);
int ledger_set_restore_point(struct agent *a, const char *pci,
			     const struct vfp_restore_point *rp);
int ledger_update_restore_point(struct agent *a, const char *pci,
				const struct vfp_restore_point *rp);
int ledger_get_restore_point(struct agent *a, const char *pci, struct vfp_restore_point **ret,
			     char *err, size_t err_size);
uint64_t ledger_changes(struct agent *a);

/* What libvirt showed at the last look, kept beside the ledger's view. */
void ledger_set_domains(struct agent *a, struct agent_foreign_vfs *foreign,
			struct agent_running_domains *running);
int ledger_get_foreign_vfs(struct agent *a, struct agent_foreign_vf **ret, size_t *ret_n);
int ledger_get_running_domains(struct agent *a, struct agent_running_domain **ret,
			       size_t *ret_n);

/* Counts releases since the last prune; true when @every is reached (and starts again). */
bool ledger_count_release(struct agent *a, unsigned every);

/* The ends of operations (intents), written now or kept for when the ledger takes them. */
int agent_get_allocation(struct agent *a, const char *id, struct vfp_allocation **ret, char *err,
			 size_t err_size);
int agent_intent_begin(struct agent *a, const char *id, enum vfp_op op, bool durable, char *err,
		       size_t err_size);
int agent_intent_confirm(struct agent *a, const char *id, enum vfp_op op, bool ok,
			 const char *reason);
int agent_intents_begin_volatile(struct agent *a, const char *const *ids, size_t n,
				 enum vfp_op op, char *err, size_t err_size);
void agent_ledger_hold_lazy(struct agent *a, bool hold);
int agent_intents_confirm(struct agent *a, const char *const *ids, size_t n, enum vfp_op op,
			  bool ok, const char *reason);
void agent_intent_defer(struct agent *a, const char *id, enum vfp_op op, bool ok,
			const char *reason);
void agent_intent_defer_guarded(struct ledger_guard *g, const char *id, enum vfp_op op, bool ok,
				const char *reason);
int agent_ledger_ready(struct ledger_guard *g, char *err, size_t err_size);
void agent_record_deferred(struct agent *a);
