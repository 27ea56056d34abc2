/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's ledger and its lock: the only code that takes it (see
 * ledger.h). Each function copies the library's message into the caller's
 * buffer before it lets go, so no error outlives the call that made it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent-state.h"
#include "agent/ledger.h"
#include "agent/log.h"

struct agent_ledger {
	pthread_mutex_t lock;
	struct vfp_ledger *l;
	struct agent_foreign_vfs foreign;       /* what libvirt showed at its last look */
	struct agent_running_domains running;
	unsigned releases_unpruned;
	struct agent_unrecorded *unrecorded; /* ends of operations the ledger could not take yet */
	size_t n_unrecorded, cap_unrecorded;
};

/* How intent @op of allocation @id ended, kept to be written when the ledger takes it. */
struct agent_unrecorded {
	char id[40];
	enum vfp_op op;
	bool ok;
	char reason[AGENT_ERR_SIZE];
};

struct ledger_guard ledger_guard_take(struct agent *a)
{
	pthread_mutex_lock(&a->ledger->lock);
	return (struct ledger_guard){ .owner = a->ledger, .l = a->ledger->l };
}

void ledger_guard_release(struct ledger_guard *g)
{
	if (g->owner)
		pthread_mutex_unlock(&g->owner->lock);
	g->owner = NULL;
}

/* The library's message for @r into @err (may be NULL); returns @r. */
static int say(const struct ledger_guard *g, int r, char *err, size_t err_size)
{
	if (r < 0 && err && err_size)
		snprintf(err, err_size, "%s", vfp_ledger_get_error(g->l));
	return r;
}

int ledger_open(struct agent *a, const char *state_dir)
{
	struct agent_ledger *o = calloc(1, sizeof(*o));
	int r;

	if (!o)
		return -ENOMEM;
	r = vfp_ledger_open(a->ctx, state_dir, &o->l);
	if (r < 0) {
		free(o);
		return r;
	}
	pthread_mutex_init(&o->lock, NULL);
	a->ledger = o;
	return 0;
}

/* After the claims in flight are committed: the last user is gone. */
void ledger_close(struct agent *a)
{
	struct agent_ledger *o = a->ledger;

	if (!o)
		return;
	if (o->n_unrecorded)
		log_warning("%zu operations' ends were not recorded: the next start resolves them",
			    o->n_unrecorded);
	free(o->unrecorded);
	free(o->foreign.vfs);
	free(o->running.d);
	vfp_ledger_unref(o->l);
	pthread_mutex_destroy(&o->lock);
	free(o);
	a->ledger = NULL;
}

/* The file's path never changes once open. */
const char *ledger_path(struct agent *a)
{
	return vfp_ledger_get_path(a->ledger->l);
}

/*
 * At start, before any other thread has the agent: without the lock, for
 * @ops calls back into the ledger (a restore point read, an intent's end).
 */
int ledger_reconcile(struct agent *a, const struct vfp_inventory *inv,
		     const struct vfp_config *config, const struct vfp_reconcile_ops *ops,
		     void *userdata, struct vfp_reconcile_report *ret_report, char *err,
		     size_t err_size)
{
	struct ledger_guard g = { .l = a->ledger->l }; /* no owner: nothing to release */

	return say(&g, vfp_ledger_reconcile(g.l, inv, config, ops, userdata, ret_report), err,
		   err_size);
}

int ledger_sync(struct agent *a, const struct vfp_inventory *inv, const struct vfp_config *config,
		struct vfp_reconcile_report *ret_report, char *err, size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_sync(g.l, inv, config, ret_report), err, err_size);
}

int ledger_add_persisted_numvfs(struct agent *a, struct vfp_config *c, char *err,
				size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_add_persisted_numvfs(g.l, c), err, err_size);
}

int ledger_persist_numvfs(struct agent *a, const char *pf, int numvfs, char *err,
			  size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_persist_numvfs(g.l, pf, numvfs), err, err_size);
}

/* 1 when @pf had a persisted count, 0 when not. */
int ledger_forget_numvfs(struct agent *a, const char *pf, char *err, size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_forget_numvfs(g.l, pf), err, err_size);
}

/* -ENOENT (no message) when no allocation has @key. */
int ledger_get_allocation_by_key(struct agent *a, const char *key,
				 struct vfp_allocation **ret, char *err, size_t err_size)
{
	LEDGER_GUARD(g, a);
	int r = vfp_ledger_get_allocation_by_key(g.l, key, ret);

	return r == -ENOENT ? r : say(&g, r, err, err_size);
}

int ledger_forget_key(struct agent *a, const char *key, char *err, size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_forget_key(g.l, key), err, err_size);
}

int ledger_list_allocations(struct agent *a, const char *owner_key, bool with_released,
			    struct vfp_allocation ***ret_list, size_t *ret_n, char *err,
			    size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_list_allocations(g.l, owner_key, with_released, ret_list, ret_n),
		   err, err_size);
}

int ledger_list_domain_allocations(struct agent *a, const char *uuid,
				   struct vfp_allocation ***ret_list, size_t *ret_n, char *err,
				   size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_list_domain_allocations(g.l, uuid, ret_list, ret_n), err,
		   err_size);
}

int ledger_counts(struct agent *a, struct vfp_pool_count **ret_counts, size_t *ret_n)
{
	LEDGER_GUARD(g, a);

	return vfp_ledger_counts(g.l, ret_counts, ret_n);
}

int ledger_set_hold(struct agent *a, const char *id, const char *path, char *err,
		    size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_set_hold(g.l, id, path), err, err_size);
}

int ledger_set_settings(struct agent *a, const char *id, const struct vfp_settings *s,
			char *err, size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_set_settings(g.l, id, s), err, err_size);
}

/* Starts the count of releases between prunes again (ledger_count_release()). */
int ledger_prune(struct agent *a, const struct vfp_retention *keep, unsigned *ret_pruned,
		 char *err, size_t err_size)
{
	LEDGER_GUARD(g, a);

	g.owner->releases_unpruned = 0;
	return say(&g, vfp_ledger_prune(g.l, keep, ret_pruned), err, err_size);
}

bool ledger_count_release(struct agent *a, unsigned every)
{
	LEDGER_GUARD(g, a);

	return ++g.owner->releases_unpruned >= every;
}

int ledger_get_vf(struct agent *a, const char *pci, struct vfp_ledger_vf *ret)
{
	LEDGER_GUARD(g, a);

	return vfp_ledger_get_vf(g.l, pci, ret);
}

/**
 * ledger_get_vf_views() - the ledger's view of every VF of @inv, in the
 * inventory's order (PF after PF, each PF's VFs in order), in one array
 * the caller frees; a VF the ledger has no row for is !known.
 */
int ledger_get_vf_views(struct agent *a, const struct vfp_inventory *inv,
			struct ledger_vf_view **ret, size_t *ret_n)
{
	size_t n = vfp_inventory_get_vf_count(inv), k = 0;
	struct ledger_vf_view *v = calloc(n ? n : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	{
		LEDGER_GUARD(g, a);

		for (size_t i = 0; i < vfp_inventory_get_pf_count(inv); i++) {
			const struct vfp_pf *pf = vfp_inventory_get_pf(inv, i);

			for (size_t j = 0; j < vfp_pf_get_vf_count(pf) && k < n; j++, k++)
				v[k].known = vfp_ledger_get_vf(g.l, vfp_vf_get_pci(vfp_pf_get_vf(pf, j)),
							       &v[k].vf) >= 0;
		}
	}
	*ret = v;
	*ret_n = k;
	return 0;
}

int ledger_quarantine_vf(struct agent *a, const char *pci, const char *reason, char *err,
			 size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_quarantine_vf(g.l, pci, reason), err, err_size);
}

int ledger_repair_vf(struct agent *a, const char *pci, bool ok, const char *reason, char *err,
		     size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_repair_vf(g.l, pci, ok, reason), err, err_size);
}

int ledger_set_restore_point(struct agent *a, const char *pci,
			     const struct vfp_restore_point *rp)
{
	LEDGER_GUARD(g, a);

	return vfp_ledger_set_restore_point(g.l, pci, rp);
}

int ledger_update_restore_point(struct agent *a, const char *pci,
				const struct vfp_restore_point *rp)
{
	LEDGER_GUARD(g, a);

	return vfp_ledger_update_restore_point(g.l, pci, rp);
}

int ledger_get_restore_point(struct agent *a, const char *pci, struct vfp_restore_point **ret,
			     char *err, size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_get_restore_point(g.l, pci, ret), err, err_size);
}

uint64_t ledger_changes(struct agent *a)
{
	LEDGER_GUARD(g, a);

	return vfp_ledger_get_changes(g.l);
}

/* Takes both lists' contents: the ones they replace are freed. */
void ledger_set_domains(struct agent *a, struct agent_foreign_vfs *foreign,
			struct agent_running_domains *running)
{
	struct agent_foreign_vfs old_foreign;
	struct agent_running_domains old_running;

	{
		LEDGER_GUARD(g, a);

		old_foreign = g.owner->foreign;
		g.owner->foreign = *foreign;
		old_running = g.owner->running;
		g.owner->running = *running;
	}
	free(old_foreign.vfs);
	free(old_running.d);
}

/* A copy of @n elements of @size at @src (never NULL, even for none), the caller's to free. */
static void *copy_of(const void *src, size_t n, size_t size)
{
	void *copy = calloc(n ? n : 1, size);

	if (copy && n)
		memcpy(copy, src, n * size);
	return copy;
}

/* Copies of the lists, the caller's to free. */
int ledger_get_foreign_vfs(struct agent *a, struct agent_foreign_vf **ret, size_t *ret_n)
{
	LEDGER_GUARD(g, a);

	*ret = copy_of(g.owner->foreign.vfs, g.owner->foreign.n, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	*ret_n = g.owner->foreign.n;
	return 0;
}

int ledger_get_running_domains(struct agent *a, struct agent_running_domain **ret,
			       size_t *ret_n)
{
	LEDGER_GUARD(g, a);

	*ret = copy_of(g.owner->running.d, g.owner->running.n, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	*ret_n = g.owner->running.n;
	return 0;
}

/* Allocation @id as the ledger has it now; -ENOENT with @err saying so. */
int agent_get_allocation(struct agent *a, const char *id, struct vfp_allocation **ret, char *err,
			 size_t err_size)
{
	LEDGER_GUARD(g, a);

	return say(&g, vfp_ledger_get_allocation(g.l, id, ret), err, err_size);
}

/* Under @g: the end of @id's @op, to write later (a newer one for @id replaces it). */
void agent_intent_defer_guarded(struct ledger_guard *g, const char *id, enum vfp_op op, bool ok,
				const char *reason)
{
	struct agent_ledger *o = g->owner;
	struct agent_unrecorded *u = NULL;

	for (size_t i = 0; i < o->n_unrecorded && !u; i++)
		if (strcmp(o->unrecorded[i].id, id) == 0)
			u = &o->unrecorded[i];
	if (!u && o->n_unrecorded == o->cap_unrecorded) {
		size_t cap = o->cap_unrecorded ? 2 * o->cap_unrecorded : 8;
		struct agent_unrecorded *n = realloc(o->unrecorded, cap * sizeof(*n));

		if (!n) {
			log_error("allocation %s: %s %s: not recorded, and no memory to keep it: the "
				  "next start resolves it", id, vfp_op_to_string(op), ok ? "done" : "failed");
			return;
		}
		o->unrecorded = n, o->cap_unrecorded = cap;
	}
	if (!u)
		u = &o->unrecorded[o->n_unrecorded++];
	*u = (struct agent_unrecorded){ .op = op, .ok = ok };
	snprintf(u->id, sizeof(u->id), "%s", id);
	snprintf(u->reason, sizeof(u->reason), "%s", reason ? reason : "");
}

/*
 * Under @g: writes the ends of operations the ledger could not take when
 * they ended (a full disk). 0 once none is left; else the ledger's -errno,
 * and the rest stay for the next try. An end the ledger no longer expects
 * (-ENOENT: resolved meanwhile) is dropped.
 */
static int record_deferred(struct ledger_guard *g)
{
	struct agent_ledger *o = g->owner;

	while (o->n_unrecorded) {
		struct agent_unrecorded *u = &o->unrecorded[0];
		int r = vfp_ledger_confirm(g->l, u->id, u->op, u->ok, u->ok ? NULL : u->reason);

		if (r < 0 && r != -ENOENT)
			return r;
		log_info("allocation %s: %s %s: recorded now", u->id, vfp_op_to_string(u->op),
			 u->ok ? "done" : "failed");
		memmove(u, u + 1, --o->n_unrecorded * sizeof(*u));
	}
	return 0;
}

/**
 * agent_ledger_ready() - under @g, before an operation begins: the ends of
 * earlier ones written first; -errno with @err when they cannot be (the
 * disk is still full), rather than an operation "in progress" that ended
 * long ago
 */
int agent_ledger_ready(struct ledger_guard *g, char *err, size_t err_size)
{
	int r = record_deferred(g);

	if (r < 0)
		snprintf(err, err_size, "the ledger cannot record the end of an earlier operation "
			 "yet: %s", vfp_ledger_get_error(g->l));
	return r;
}

/**
 * agent_record_deferred() - write the ends of operations the ledger could
 * not take when they ended; for the main loop's quiet minute (a new
 * operation tries first anyway)
 */
void agent_record_deferred(struct agent *a)
{
	LEDGER_GUARD(g, a);

	if (g.owner->n_unrecorded && record_deferred(&g) < 0)
		log_warning("%zu operations' ends wait for the ledger: %s", g.owner->n_unrecorded,
			    vfp_ledger_get_error(g.l));
}

/*
 * Begins intent @op of allocation @id; @err on failure. @durable: it waits
 * for the disk, for an @op whose effect outlives a power cut (a domain's
 * persistent config, a release, a detach); see vfp_ledger_begin_volatile().
 */
int agent_intent_begin(struct agent *a, const char *id, enum vfp_op op, bool durable, char *err,
		       size_t err_size)
{
	LEDGER_GUARD(g, a);
	int r;

	err[0] = '\0';
	r = agent_ledger_ready(&g, err, err_size);
	if (r < 0)
		return r;
	r = durable ? vfp_ledger_begin(g.l, id, op) : vfp_ledger_begin_volatile(g.l, id, op);
	return say(&g, r, err, err_size);
}

/* agent_intent_begin(), not durable, for each of @ids in one transaction: all or none. */
int agent_intents_begin_volatile(struct agent *a, const char *const *ids, size_t n,
				 enum vfp_op op, char *err, size_t err_size)
{
	LEDGER_GUARD(g, a);
	int r;

	err[0] = '\0';
	r = agent_ledger_ready(&g, err, err_size);
	if (r < 0)
		return r;
	return say(&g, vfp_ledger_begin_volatile_many(g.l, ids, n, op), err, err_size);
}

/*
 * How intent @op of each allocation of @ids ended, in one transaction. One
 * the ledger cannot take now (a full disk) is logged and kept: written
 * before the next operation, or in the quiet minute; until then the intent
 * stays open, and a restart would resolve it by what the host shows.
 */
int agent_intents_confirm(struct agent *a, const char *const *ids, size_t n, enum vfp_op op,
			  bool ok, const char *reason)
{
	LEDGER_GUARD(g, a);
	int r = vfp_ledger_confirm_many(g.l, ids, n, op, ok, reason);

	if (r < 0)
		log_error("%s", vfp_ledger_get_error(g.l));
	for (size_t i = 0; r < 0 && r != -ENOENT && i < n; i++)
		agent_intent_defer_guarded(&g, ids[i], op, ok, reason);
	return r;
}

/*
 * @hold: the lazy commits that follow (restore points, a confirmation) kept
 * together until it is released (vfp_ledger_hold_lazy()); any other commit
 * still waits for the disk.
 */
void agent_ledger_hold_lazy(struct agent *a, bool hold)
{
	LEDGER_GUARD(g, a);

	if (hold)
		vfp_ledger_hold_lazy(g.l);
	else
		vfp_ledger_release_lazy(g.l);
}

/**
 * agent_intent_defer() - the end of @id's @op to record as @ok, replacing
 * one kept already (an attach the ledger could not record, undone since)
 */
void agent_intent_defer(struct agent *a, const char *id, enum vfp_op op, bool ok,
			const char *reason)
{
	LEDGER_GUARD(g, a);

	agent_intent_defer_guarded(&g, id, op, ok, reason);
}

/* How intent @op of allocation @id ended (@ok; @reason when not); a failure is logged. */
int agent_intent_confirm(struct agent *a, const char *id, enum vfp_op op, bool ok,
			 const char *reason)
{
	return agent_intents_confirm(a, &id, 1, op, ok, reason);
}

/*
 * The claim queue's commit (claim_queue_commit_fn, @agent its userdata):
 * vfp_ledger_claim_groups() (@together: a caller's claims all or none), each
 * claim's error in @ret_errors (the caller's to free); a commit that failed
 * fails every claim of the batch.
 */
void ledger_claim_batch(void *agent, const struct vfp_config *config,
			const struct vfp_claim *reqs, size_t n, const bool *together,
			int *ret_results, struct vfp_allocation **ret_allocations, char **ret_errors)
{
	LEDGER_GUARD(g, agent);

	if (vfp_ledger_claim_groups(g.l, config, reqs, n, together, ret_results, ret_allocations,
				    ret_errors) >= 0)
		return;
	/* the commit failed: no claim of the batch took effect */
	for (size_t k = 0; k < n; k++) {
		free(ret_errors[k]);
		ret_errors[k] = strdup(vfp_ledger_get_error(g.l));
		ret_results[k] = ret_results[k] < 0 ? ret_results[k] : -EIO;
	}
}
