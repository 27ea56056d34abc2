/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement: given the free VFs of a pool (sorted by PF, then VF index),
 * choose @count of them.
 *  - A preferred NUMA node is used alone when it has enough free VFs, and
 *    first otherwise: a preference, not a requirement.
 *  - spread: one VF per PF in turn, the PF with the most free VFs first,
 *    so a guest's VFs do not share a PF (and its failure).
 *  - pack: the PF with the fewest free VFs that still has enough (best fit,
 *    keeping large PFs whole for large claims); when no PF has enough, the
 *    fullest PFs first.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

struct pf_group {
	size_t first, n, taken;
	bool preferred;
};

/* Groups consecutive candidates by PF; @keep says which candidates are eligible. */
static size_t group_by_pf(const struct vfp_candidate *c, size_t n, const bool *keep,
			  struct pf_group *g, size_t *order)
{
	size_t ng = 0;

	for (size_t i = 0; i < n; i++) {
		if (!keep[i])
			continue;
		if (ng == 0 || strcmp(c[order[g[ng - 1].first]].pf, c[i].pf) != 0) {
			g[ng].first = ng ? g[ng - 1].first + g[ng - 1].n : 0;
			g[ng].n = 0;
			g[ng].taken = 0;
			ng++;
		}
		order[g[ng - 1].first + g[ng - 1].n++] = i;
	}
	return ng;
}

static int cmp_most_free(const void *a, const void *b)
{
	const struct pf_group *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->first < y->first ? -1 : 1;
}

static size_t take_spread(struct pf_group *g, size_t ng, const size_t *order, unsigned count,
			  size_t *out)
{
	size_t got = 0;
	bool progress = true;

	qsort(g, ng, sizeof(*g), cmp_most_free);
	while (got < count && progress) {
		progress = false;
		for (size_t i = 0; i < ng && got < count; i++) {
			if (g[i].taken < g[i].n) {
				out[got++] = order[g[i].first + g[i].taken++];
				progress = true;
			}
		}
	}
	return got;
}

static size_t take_pack(struct pf_group *g, size_t ng, const size_t *order, unsigned count,
			size_t *out)
{
	size_t best = ng, got = 0;

	for (size_t i = 0; i < ng; i++)
		if (g[i].n >= count && (best == ng || g[i].n < g[best].n))
			best = i;
	if (best < ng) {
		for (size_t k = 0; k < count; k++)
			out[k] = order[g[best].first + k];
		return count;
	}
	qsort(g, ng, sizeof(*g), cmp_most_free);
	for (size_t i = 0; i < ng && got < count; i++)
		for (size_t k = 0; k < g[i].n && got < count; k++)
			out[got++] = order[g[i].first + k];
	return got;
}

static size_t place_among(const struct vfp_candidate *c, size_t n, const bool *keep,
			  unsigned count, enum vfp_placement placement, size_t *out)
{
	struct pf_group *g = calloc(n + 1, sizeof(*g));
	size_t *order = calloc(n + 1, sizeof(*order));
	size_t ng, got = 0;

	if (g && order) {
		ng = group_by_pf(c, n, keep, g, order);
		got = placement == VFP_PLACE_PACK ? take_pack(g, ng, order, count, out)
						  : take_spread(g, ng, order, count, out);
	}
	free(g);
	free(order);
	return got;
}

/**
 * vfp_place() - choose @count of the @n candidates
 * @ret_chosen: @count indexes into @c, in the order the VFs are handed out
 *
 * Returns -EBUSY when fewer than @count candidates exist; @ret_chosen is
 * then untouched.
 */
int vfp_place(const struct vfp_candidate *c, size_t n, unsigned count, int prefer_numa,
	      enum vfp_placement placement, size_t *ret_chosen)
{
	bool *keep;
	size_t *out, on_node = 0, got;

	if (count == 0 || n < count)
		return -EBUSY;
	keep = calloc(n, sizeof(*keep));
	out = calloc(count, sizeof(*out));
	if (!keep || !out) {
		free(keep);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		on_node += prefer_numa >= 0 && c[i].numa_node == prefer_numa;
	got = 0;
	if (on_node >= count) {
		for (size_t i = 0; i < n; i++)
			keep[i] = c[i].numa_node == prefer_numa;
		got = place_among(c, n, keep, count, placement, out);
	} else if (on_node > 0) {
		/* the preferred node's VFs first, the rest from anywhere */
		for (size_t i = 0; i < n; i++)
			keep[i] = c[i].numa_node == prefer_numa;
		got = place_among(c, n, keep, (unsigned)on_node, placement, out);
		for (size_t i = 0; i < n; i++)
			keep[i] = c[i].numa_node != prefer_numa;
		got += place_among(c, n, keep, count - (unsigned)got, placement, out + got);
	} else {
		for (size_t i = 0; i < n; i++)
			keep[i] = true;
		got = place_among(c, n, keep, count, placement, out);
	}
	if (got == count)
		memcpy(ret_chosen, out, count * sizeof(*out));
	free(keep);
	free(out);
	return got == count ? 0 : -ENOMEM;
}
