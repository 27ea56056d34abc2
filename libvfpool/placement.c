/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement: given how many free VFs of a pool each PF has, say which PF
 * each of the @count VFs comes from (the caller then takes each PF's
 * lowest free VFs).
 *  - A preferred NUMA node is used alone when its PFs have enough free
 *    VFs, and first otherwise: a preference, not a requirement.
 *  - spread: one VF per PF in turn, the PF with the most free VFs first,
 *    so a guest's VFs do not share a PF (and its failure).
 *  - pack: the PF with the fewest free VFs that still has enough (best
 *    fit, keeping large PFs whole for large claims); when no PF has
 *    enough, the fullest PFs first.
 *  - near a device (vfp_place_near()): the PFs closest to it first, a
 *    distance class at a time (PIX, then PXB, …), the rules above among
 *    the PFs of one class; none farther than the bound.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

struct slot {
	size_t pf; /* index into the caller's array */
	unsigned left;
};

/* Most free VFs first; equal ones keep the caller's (PCI) order. */
static int cmp_most_free(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->left != y->left)
		return x->left > y->left ? -1 : 1;
	return x->pf < y->pf ? -1 : 1;
}

static size_t take_spread(struct slot *s, size_t ns, unsigned count, size_t *seq)
{
	size_t got = 0;
	bool progress = true;

	qsort(s, ns, sizeof(*s), cmp_most_free);
	while (got < count && progress) {
		progress = false;
		for (size_t i = 0; i < ns && got < count; i++) {
			if (s[i].left > 0) {
				s[i].left--;
				seq[got++] = s[i].pf;
				progress = true;
			}
		}
	}
	return got;
}

static size_t take_pack(struct slot *s, size_t ns, unsigned count, size_t *seq)
{
	size_t best = ns, got = 0;

	for (size_t i = 0; i < ns; i++)
		if (s[i].left >= count && (best == ns || s[i].left < s[best].left))
			best = i;
	if (best < ns) {
		for (; got < count; got++)
			seq[got] = s[best].pf;
		return got;
	}
	qsort(s, ns, sizeof(*s), cmp_most_free);
	for (size_t i = 0; i < ns && got < count; i++)
		for (unsigned k = 0; k < s[i].left && got < count; k++)
			seq[got++] = s[i].pf;
	return got;
}

enum which { ALL_PFS, ON_NODE, OFF_NODE };

/* Places up to @count VFs among the PFs @which selects relative to NUMA node @node. */
static size_t place_among(const struct vfp_pf_free *pfs, size_t n, enum which which, int node,
			  unsigned count, enum vfp_placement placement, size_t *seq)
{
	struct slot *s = calloc(n + 1, sizeof(*s));
	size_t ns = 0, got;

	if (!s)
		return 0;
	for (size_t i = 0; i < n; i++) {
		bool on = pfs[i].numa_node == node;

		if (which == ALL_PFS || (which == ON_NODE) == on)
			s[ns++] = (struct slot){ i, pfs[i].n_free };
	}
	got = placement == VFP_PLACE_PACK ? take_pack(s, ns, count, seq)
					  : take_spread(s, ns, count, seq);
	free(s);
	return got;
}

/**
 * vfp_place() - which PF each of @count VFs comes from
 * @ret_seq: @count indexes into @pfs, in the order the VFs are handed out
 *
 * -EBUSY when the PFs have fewer than @count free VFs in all; @ret_seq is
 * then untouched.
 */
int vfp_place(const struct vfp_pf_free *pfs, size_t n, unsigned count, int prefer_numa,
	      enum vfp_placement placement, size_t *ret_seq)
{
	unsigned total = 0, on_node = 0;
	size_t *seq, got;

	for (size_t i = 0; i < n; i++) {
		total += pfs[i].n_free;
		if (prefer_numa >= 0 && pfs[i].numa_node == prefer_numa)
			on_node += pfs[i].n_free;
	}
	if (count == 0 || total < count)
		return -EBUSY;
	seq = calloc(count, sizeof(*seq));
	if (!seq)
		return -ENOMEM;
	if (on_node >= count) {
		got = place_among(pfs, n, ON_NODE, prefer_numa, count, placement, seq);
	} else if (on_node > 0) {
		/* the preferred node's VFs first, the rest from the other nodes */
		got = place_among(pfs, n, ON_NODE, prefer_numa, on_node, placement, seq);
		got += place_among(pfs, n, OFF_NODE, prefer_numa, count - (unsigned)got, placement,
				   seq + got);
	} else {
		got = place_among(pfs, n, ALL_PFS, -1, count, placement, seq);
	}
	if (got == count)
		memcpy(ret_seq, seq, count * sizeof(*seq));
	free(seq);
	return got == count ? 0 : -ENOMEM;
}

/*
 * The PFs of @pfs at @distance into @sub (their indexes into @pfs in @idx);
 * their free VFs.
 */
static unsigned select_class(const struct vfp_pf_free *pfs, size_t n, int distance,
			     struct vfp_pf_free *sub, size_t *idx, size_t *ret_n)
{
	unsigned free_vfs = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (pfs[i].distance == distance) {
			sub[k] = pfs[i];
			idx[k++] = i;
			free_vfs += pfs[i].n_free;
		}
	*ret_n = k;
	return free_vfs;
}

/* The closest distance any PF with a free VF has; -1 when none has one. */
static int best_distance(const struct vfp_pf_free *pfs, size_t n)
{
	int best = -1;

	for (size_t i = 0; i < n; i++)
		if (pfs[i].n_free > 0 && pfs[i].distance >= 0 &&
		    (best < 0 || pfs[i].distance < best))
			best = pfs[i].distance;
	return best;
}

/**
 * vfp_place_near() - vfp_place() with the PFs closest to a device first
 * @pfs: each with its distance to the device (-1: unknown, never taken)
 * @max_distance: none farther; VFP_PCIE_SELF: no bound
 * @ret_best: the closest distance a free VF has (-1: none), set always
 *
 * -EBUSY when fewer than @count free VFs are within @max_distance;
 * @ret_seq is then untouched.
 */
int vfp_place_near(const struct vfp_pf_free *pfs, size_t n, unsigned count,
		   enum vfp_pcie_distance max_distance, int prefer_numa,
		   enum vfp_placement placement, size_t *ret_seq, int *ret_best)
{
	struct vfp_pf_free *sub = calloc(n + 1, sizeof(*sub));
	size_t *idx = calloc(n + 1, sizeof(*idx)), *seq = calloc(count + 1, sizeof(*seq));
	int bound = max_distance == VFP_PCIE_SELF ? VFP_PCIE_SYS : (int)max_distance, r = 0;
	unsigned got = 0, within = 0;

	*ret_best = best_distance(pfs, n);
	for (size_t i = 0; i < n; i++)
		if (pfs[i].distance >= 0 && pfs[i].distance <= bound)
			within += pfs[i].n_free;
	if (!sub || !idx || !seq)
		r = -ENOMEM;
	else if (count == 0 || within < count)
		r = -EBUSY;
	for (int d = VFP_PCIE_SELF; r >= 0 && d <= bound && got < count; d++) {
		size_t k;
		unsigned avail = select_class(pfs, n, d, sub, idx, &k), take;

		if (avail == 0)
			continue;
		take = avail < count - got ? avail : count - got;
		r = vfp_place(sub, k, take, prefer_numa, placement, seq + got);
		for (unsigned j = 0; r >= 0 && j < take; j++)
			seq[got + j] = idx[seq[got + j]];
		got += take;
	}
	if (r >= 0)
		memcpy(ret_seq, seq, count * sizeof(*seq));
	free(sub);
	free(idx);
	free(seq);
	return r;
}
