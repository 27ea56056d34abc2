/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF hot-swap: a running guest's failover NIC moves to another free VF (on
 * another PF, or the one asked for) while its standby carries its traffic.
 * Each step is written to the ledger before it is taken (libvfpool's
 * ledger-swap.c), so that a crash anywhere is resolved at the next start
 * (agent_swap_reconcile()):
 *   1. the new VF claimed, as a claim of the swap's own (its key in the row)
 *   2. the new VF prepared as the old one is (PF side, vfio-pci, device XML)
 *   3. the guest's MAC steered to the PFs on its standby's bridge
 *      (vm_swap_steer(); the row says whether the entry is the swap's own),
 *      then the old VF out of the guest (its standby stays)
 *   4. the new VF into the guest
 *   5. the allocation and the swap's claim exchange VFs; the swap's claim,
 *      now the old VF's, released (restored, reset, checked); the request
 *      answers here
 *   6. libvirt.steer_hold seconds later, or later while the guest still
 *      sends over its standby (its new VF not up yet), from a thread of its
 *      own (swap-hold.c), the steering taken out and the row gone: the guest
 *      brings its new VF up meanwhile (agent_swap_unhold())
 * A failure before 4 is done leaves the guest on its old VF (plugged again
 * if it had left); after, the swap goes forward.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/claim.h"
#include "agent/ledger.h"
#include "agent/log.h"
#include "agent/release.h"
#include "agent/swap-hold.h"
#include "agent/swap.h"
#include "agent/vm/vm-swap.h"
#include "agent/vm/vm.h"

/* The ledger's answer to one call on @g.l, under its guard; its message into @err on failure. */
#define LEDGER(a, call, err, err_size)                                                             \
	({                                                                                         \
		LEDGER_GUARD(g, a);                                                                \
		int _r = (call);                                                                   \
		if (_r < 0 && (err))                                                               \
			snprintf((err), (err_size), "%s", vfp_ledger_get_error(g.l));              \
		_r;                                                                                \
	})

/* Whether @pci is free in the ledger now (a hint: the claim decides). */
static bool is_free(struct agent *a, const char *pci)
{
	struct vfp_ledger_vf v;

	return ledger_get_vf(a, pci, &v) >= 0 && v.state == VFP_VF_FREE;
}

/*
 * A free VF of @pool for the swap: on @pf when asked, else on another PF
 * than @old's. -EBUSY (saying which) when there is none.
 */
static int pick_vf(struct agent *a, const char *pool, const char *old_pf, const char *pf,
		   char out[VFP_PCI_ADDR_LEN + 1], char *err, size_t err_size)
{
	struct vfp_inventory *inv = agent_get_inventory(a);
	struct vfp_config *config = agent_get_config(a);
	int r = -EBUSY;

	for (size_t p = 0; r < 0 && p < vfp_inventory_get_pf_count(inv); p++) {
		const struct vfp_pf *f = vfp_inventory_get_pf(inv, p);
		const char *at = vfp_pf_get_pci(f);

		if (pf ? strcmp(at, pf) != 0 : strcmp(at, old_pf) == 0)
			continue;
		for (size_t i = 0; r < 0 && i < vfp_pf_get_vf_count(f); i++) {
			const struct vfp_vf *vf = vfp_pf_get_vf(f, i);
			const char *in = vfp_config_pool_for_vf(config, vf);

			if (in && !strcmp(in, pool) && is_free(a, vfp_vf_get_pci(vf))) {
				snprintf(out, VFP_PCI_ADDR_LEN + 1, "%s", vfp_vf_get_pci(vf));
				r = 0;
			}
		}
	}
	if (r < 0 && pf)
		snprintf(err, err_size, "pf: no free VF of pool %s on %s", pool, pf);
	else if (r < 0)
		snprintf(err, err_size, "no free VF of pool %s on another PF than %s", pool, old_pf);
	vfp_config_unref(config);
	vfp_inventory_unref(inv);
	return r;
}

/* The VF of @alloc to swap: @want, or its only one. */
static const struct vfp_allocation_vf *which_vf(const struct vfp_allocation *alloc,
						const char *want, char *err, size_t err_size)
{
	size_t n = vfp_allocation_get_vf_count(alloc);

	for (size_t i = 0; want && i < n; i++)
		if (!strcmp(vfp_allocation_get_vf(alloc, i)->pci, want))
			return vfp_allocation_get_vf(alloc, i);
	if (!want && n == 1)
		return vfp_allocation_get_vf(alloc, 0);
	if (want)
		snprintf(err, err_size, "vf: %.40s is not a VF of allocation %s", want,
			 vfp_allocation_get_id(alloc));
	else
		snprintf(err, err_size, "vf: allocation %s has %zu VFs; name the one to swap",
			 vfp_allocation_get_id(alloc), n);
	return NULL;
}

/*
 * VF @pci of the swap's claim @temp_id given back: out of the swap's domain
 * for good (no detach: its device XML names the other VF's interface too),
 * its host side restored, then the claim released (reset, health).
 */
static void give_back(struct agent *a, const char *temp_id, const char *pci)
{
	struct vfp_allocation_vf vf = { 0 };
	char msg[AGENT_ERR_SIZE] = "";

	snprintf(vf.pci, sizeof(vf.pci), "%s", pci);
	if (pci[0] && (vm_swap_forget_domain(a, pci) < 0 ||
		       vm_restore_vf(a, &vf, msg, sizeof(msg)) < 0))
		log_error("swap: VF %s back to the host: %s", pci, msg);
	if (agent_release_allocation(a, temp_id, msg, sizeof(msg)) < 0 &&
	    !strstr(msg, "released already"))
		log_error("swap: releasing its claim %s: %s", temp_id, msg);
}

/* The swap's claim, by its key; NULL when it was never made. */
static struct vfp_allocation *swap_claim(struct agent *a, const char *key)
{
	struct vfp_allocation *t = NULL;

	if (ledger_get_allocation_by_key(a, key, &t, NULL, 0) < 0)
		t = NULL;
	return t;
}

/* Whether the swap of allocation @id put the guest's MAC on the PFs itself (its row says). */
static bool steered(struct agent *a, const char *id)
{
	return LEDGER(a, vfp_ledger_swap_steered(g.l, id), NULL, 0) > 0;
}

/* Back: the old VF in the guest again where it left, the new one given back, the row gone. */
static void roll_back(struct agent *a, const struct vfp_swap *s)
{
	struct vfp_allocation *t = swap_claim(a, s->temp_key);
	int in = s->step >= VFP_SWAP_UNPLUGGING ? vm_swap_in_domain(a, s->old_pci) : -1;
	char msg[AGENT_ERR_SIZE] = "";

	if (in == 0 && vm_swap_plug(a, s->old_pci, msg, sizeof(msg)) < 0)
		log_error("swap of allocation %s: VF %s back into its guest: %s", s->allocation,
			  s->old_pci, msg);
	if (in >= 0) /* in again or never left: the FDB entries made for its leaving go */
		vm_swap_settled(a, s->old_pci, steered(a, s->allocation));
	if (t) /* never claimed, the VF is none of the swap's to touch */
		give_back(a, vfp_allocation_get_id(t), s->new_pci);
	vfp_allocation_unref(t);
	LEDGER(a, vfp_ledger_swap_end(g.l, s->allocation), NULL, 0);
}

static const struct swap_hold_ops hold_ops;

/*
 * Forward, once the new VF is in the guest: the exchange, the old VF given
 * back, then the steering out and the row gone, now, or after a hold of
 * @hold_ms when the swap steered (swap-hold.c).
 */
static int roll_forward(struct agent *a, const struct vfp_swap *s, int hold_ms, char *err,
			size_t err_size)
{
	struct vfp_allocation *t = swap_claim(a, s->temp_key);
	const char *tid = t ? vfp_allocation_get_id(t) : NULL;
	int r = tid ? 0 : -ENOENT;

	if (!tid)
		snprintf(err, err_size, "the swap's claim (key %s) is gone", s->temp_key);
	if (r >= 0)
		r = vm_swap_forget_domain(a, s->old_pci);
	if (r >= 0)
		r = LEDGER(a, vfp_ledger_swap_exchange(g.l, s->allocation, tid), err, err_size);
	if (r >= 0)
		give_back(a, tid, s->old_pci);
	if (r >= 0 && hold_ms > 0 && steered(a, s->allocation))
		swap_hold_start(a, s->allocation, hold_ms, &hold_ops);
	else if (r >= 0) /* after a crash, the plug's own undone nothing */
		agent_swap_unhold(a, s->allocation);
	vfp_allocation_unref(t);
	return r;
}

static int step(struct agent *a, struct vfp_swap *s, enum vfp_swap_step to, char *err,
		size_t err_size)
{
	const char *new_pci = s->new_pci[0] ? s->new_pci : NULL;
	int r = LEDGER(a, vfp_ledger_swap_step(g.l, s->allocation, to, new_pci), err,
		       err_size);

	if (r >= 0)
		s->step = to;
	return r;
}

/*
 * The guest's MAC of the swap's old VF steered onto its standby's PFs, the
 * row saying so first (a crash after the entry is made must find it); an
 * entry there already is not the swap's (the operator's): left alone.
 */
static void steer(struct agent *a, const struct vfp_swap *s)
{
	int r = LEDGER(a, vfp_ledger_swap_set_steered(g.l, s->allocation, true), NULL, 0);

	if (r >= 0 && vm_swap_steer(a, s->old_pci) <= 0)
		LEDGER(a, vfp_ledger_swap_set_steered(g.l, s->allocation, false), NULL, 0);
}

/* Steps 1 to 4; any failure goes back. */
static int run(struct agent *a, const struct vfp_allocation *alloc, struct vfp_swap *s, char *err,
	       size_t err_size)
{
	struct vfp_claim c = { .pool = vfp_allocation_get_pool(alloc), .count = 1,
			       .owner = vfp_allocation_get_owner(alloc), .numa_node = -1,
			       .pci = s->new_pci, .idempotency_key = s->temp_key };
	struct vfp_allocation *t = NULL;
	char msg[AGENT_ERR_SIZE];
	int r = agent_claim_quiet(a, &c, &t, err, err_size);

	if (r >= 0)
		r = step(a, s, VFP_SWAP_CLAIMED, err, err_size);
	if (r >= 0)
		log_info("swap of allocation %s: claimed VF %s", s->allocation, s->new_pci);
	if (r >= 0)
		r = vm_swap_prepare(a, s->old_pci, vfp_allocation_get_vf(t, 0), err, err_size);
	if (r >= 0)
		log_info("swap of allocation %s: VF %s prepared for the guest", s->allocation,
			 s->new_pci);
	if (r >= 0)
		r = step(a, s, VFP_SWAP_UNPLUGGING, err, err_size);
	if (r >= 0) /* undone by vm_swap_settled(), on either way out */
		steer(a, s);
	if (r >= 0 && (r = vm_swap_unplug(a, s->old_pci, msg, sizeof(msg))) < 0)
		snprintf(err, err_size, "the old VF %s out of the guest: %s", s->old_pci, msg);
	if (r >= 0)
		log_info("swap of allocation %s: VF %s out of the guest", s->allocation, s->old_pci);
	if (r >= 0)
		r = step(a, s, VFP_SWAP_PLUGGING, err, err_size);
	if (r >= 0 && (r = vm_swap_plug(a, s->new_pci, msg, sizeof(msg))) < 0)
		snprintf(err, err_size, "the new VF %s into the guest: %s", s->new_pci, msg);
	if (r >= 0)
		log_info("swap of allocation %s: VF %s into the guest", s->allocation, s->new_pci);
	vfp_allocation_unref(t);
	return r;
}

/**
 * agent_swap() - allocation @id's failover VF (@q->vf, or its only one) moved
 * to a free VF of its pool (on @q->pf, or on another PF than the old one's)
 * while the guest runs on its standby
 * @ret_old, @ret_new: the VFs, for the answer
 *
 * A failure before the new VF is in the guest leaves the guest on its old
 * VF; -EINVAL for a VF that is no failover NIC's (@err says so).
 */
int agent_swap(struct agent *a, const char *id, const struct agent_swap_request *q,
	       char ret_old[VFP_PCI_ADDR_LEN + 1], char ret_new[VFP_PCI_ADDR_LEN + 1], char *err,
	       size_t err_size)
{
	struct vfp_allocation *alloc = NULL;
	const struct vfp_allocation_vf *old = NULL;
	struct vfp_swap s = { .step = VFP_SWAP_CLAIMING };
	struct vfp_config *config = agent_get_config(a);
	int hold_ms = vfp_config_get_steer_hold(config) * 1000;
	struct timespec now;
	int r;

	vfp_config_unref(config);
	swap_hold_end(a, id); /* the last swap's steering: its row would make this one busy */
	r = agent_get_allocation(a, id, &alloc, err, err_size);

	if (r >= 0 && vfp_allocation_get_owner(alloc)->kind != VFP_OWNER_VM)
		r = -EINVAL, snprintf(err, err_size, "allocation %s is a container's: only a VM's "
				      "failover NIC swaps", id);
	if (r >= 0 && !(old = which_vf(alloc, q->vf, err, err_size)))
		r = q->vf || vfp_allocation_get_vf_count(alloc) != 1 ? -EINVAL : -ENOENT;
	if (r >= 0 && !vm_swap_possible(a, old->pci, err, err_size))
		r = -EBUSY;
	if (r >= 0)
		r = pick_vf(a, vfp_allocation_get_pool(alloc), old->pf, q->pf, s.new_pci, err,
			    err_size);
	clock_gettime(CLOCK_REALTIME, &now);
	if (r >= 0) {
		snprintf(s.allocation, sizeof(s.allocation), "%s", id);
		snprintf(s.old_pci, sizeof(s.old_pci), "%s", old->pci);
		snprintf(s.temp_key, sizeof(s.temp_key), "swap:%s:%s:%lld.%09ld", id, old->pci,
			 (long long)now.tv_sec, now.tv_nsec);
		r = LEDGER(a, vfp_ledger_swap_begin(g.l, id, old->pci, s.temp_key), err,
			   err_size);
	}
	if (r >= 0 && (r = run(a, alloc, &s, err, err_size)) < 0)
		roll_back(a, &s);
	if (r >= 0)
		r = roll_forward(a, &s, hold_ms, err, err_size);
	if (r >= 0) {
		snprintf(ret_old, VFP_PCI_ADDR_LEN + 1, "%s", s.old_pci);
		snprintf(ret_new, VFP_PCI_ADDR_LEN + 1, "%s", s.new_pci);
		log_info("allocation %s: VF %s swapped for %s", id, s.old_pci, s.new_pci);
	}
	vfp_allocation_unref(alloc);
	return r;
}

/**
 * agent_swap_unhold() - allocation @id's swap, gone forward, ends: the
 * standby's static FDB entry and the guest's MAC steered onto its PFs (when
 * the swap put it there) out, the row gone
 */
void agent_swap_unhold(struct agent *a, const char *id)
{
	struct vfp_swap s = { 0 };
	bool ours;

	if (LEDGER(a, vfp_ledger_swap_get(g.l, id, &s), NULL, 0) < 0 ||
	    s.step != VFP_SWAP_EXCHANGED)
		return;
	ours = steered(a, id);
	vm_swap_settled(a, s.new_pci, ours);
	LEDGER(a, vfp_ledger_swap_end(g.l, id), NULL, 0);
	if (ours)
		log_info("swap of allocation %s: steering over, the guest's MAC off its standby's PFs", id);
}

/*
 * Whether the guest of allocation @id's swap sent over its standby since
 * *@mark (updated): its new VF not up yet, the steering stays. No: nothing to
 * count (no tap here), the row gone. A count netlink did not give (an error
 * is not quiet) keeps it, logged, until the hold's cap.
 */
static bool standby_busy(struct agent *a, const char *id, uint64_t *mark)
{
	struct vfp_swap s = { 0 };
	uint64_t n = 0;
	int r = LEDGER(a, vfp_ledger_swap_get(g.l, id, &s), NULL, 0);
	bool busy;

	if (r >= 0)
		r = vm_swap_standby_sent(a, s.new_pci, &n);
	if (r == -ENODEV || r == -ENOENT)
		return false;
	if (r < 0) {
		log_warning("swap of allocation %s: its standby's count: %s", id, strerror(-r));
		return true;
	}
	busy = n != *mark;
	*mark = n;
	return busy;
}

static const struct swap_hold_ops hold_ops = { .end = agent_swap_unhold, .busy = standby_busy };

/* Whether the swap's claim is released: the swap went forward, only its steering is left. */
static bool only_steering_left(struct agent *a, const struct vfp_swap *s)
{
	struct vfp_allocation *t = swap_claim(a, s->temp_key);
	bool left = s->step == VFP_SWAP_EXCHANGED &&
		    (!t || vfp_allocation_get_state(t) == VFP_ALLOCATION_RELEASED);

	vfp_allocation_unref(t);
	return left;
}

/* One swap a crash left: forward once the new VF is in the guest, else back. */
static void resolve(struct agent *a, const struct vfp_swap *s)
{
	char err[AGENT_ERR_SIZE] = "";
	int in = s->new_pci[0] && s->step >= VFP_SWAP_PLUGGING ? vm_swap_in_domain(a, s->new_pci)
								 : 0;

	if (only_steering_left(a, s)) {
		agent_swap_unhold(a, s->allocation);
		log_info("swap of allocation %s (%s): its steering resolved, the guest on VF %s",
			 s->allocation, vfp_swap_step_to_string(s->step), s->new_pci);
		return;
	}
	if (in < 0) {
		log_warning("swap of allocation %s: libvirt cannot say where VF %s is; left for the "
			    "next start", s->allocation, s->new_pci);
		return;
	}
	if (s->step == VFP_SWAP_EXCHANGED || in == 1) {
		if (roll_forward(a, s, 0, err, sizeof(err)) < 0)
			log_error("swap of allocation %s: forward: %s", s->allocation, err);
		else
			log_info("swap of allocation %s (%s): rolled forward to VF %s", s->allocation,
				 vfp_swap_step_to_string(s->step), s->new_pci);
		return;
	}
	roll_back(a, s);
	log_info("swap of allocation %s (%s): rolled back, the guest on VF %s", s->allocation,
		 vfp_swap_step_to_string(s->step), s->old_pci);
}

/**
 * agent_swap_reconcile() - the swaps a crash left half done, resolved
 *
 * At start, once libvirt is asked: a swap whose new VF is in the guest goes
 * forward (the exchange, the old VF given back); any other goes back (the
 * old VF plugged again where it had left, the new one given back).
 */
void agent_swap_reconcile(struct agent *a)
{
	struct vfp_swap *list = NULL;
	size_t n = 0;

	if (LEDGER(a, vfp_ledger_swap_list(g.l, &list, &n), NULL, 0) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		resolve(a, &list[i]);
	free(list);
}
