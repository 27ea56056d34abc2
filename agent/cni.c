/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CNI attachments (agent/cni.h): ADD is a claim and an attach in one, all or
 * nothing (agent_claim_and_attach(), as POST /v1/allocations with "attach"),
 * DEL a release, GC the releases of every attachment the runtime no longer
 * knows. The ledger, the lease (the container's namespace), the reset and
 * the events are the REST API's.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claim.h"
#include "agent/cni.h"
#include "agent/cni-key.h"
#include "agent/release.h"
#include "agent/vf-reset.h"

/* The allocation keyed @key, live or released; NULL and 0 when there is none. */
static int find(struct agent *a, const char *key, struct vfp_allocation **ret, char *err,
		size_t err_size)
{
	int r;

	*ret = NULL;
	r = ledger_get_allocation_by_key(a, key, ret, err, err_size);
	return r == -ENOENT ? 0 : r;
}

static bool same_owner(const struct vfp_owner *x, const struct vfp_owner *y)
{
	char *kx = NULL, *ky = NULL, *e1 = NULL, *e2 = NULL;
	bool same = vfp_owner_key(x, &kx, &e1) >= 0 && vfp_owner_key(y, &ky, &e2) >= 0 &&
		    strcmp(kx, ky) == 0;

	free(kx), free(ky), free(e1), free(e2);
	return same;
}

static bool is_live(const struct vfp_allocation *alloc)
{
	return alloc && vfp_allocation_get_state(alloc) != VFP_ALLOCATION_RELEASED;
}

/*
 * What is left of an earlier ADD under @key, cleared so that a claim can take
 * the key again: a released allocation forgets it, a live one that is not
 * attached into @owner's namespace (a half-done ADD, or a namespace the
 * runtime replaced without a DEL) is released first. 1 when @ret is the
 * attachment, already done.
 */
static int clear_key(struct agent *a, const char *key, const struct vfp_owner *owner,
		     struct vfp_allocation **ret, char *err, size_t err_size)
{
	struct vfp_allocation *alloc = NULL;
	int r = find(a, key, &alloc, err, err_size);

	if (r >= 0 && is_live(alloc) && vfp_allocation_get_state(alloc) == VFP_ALLOCATION_ATTACHED &&
	    same_owner(vfp_allocation_get_owner(alloc), owner)) {
		*ret = alloc;
		return 1;
	}
	if (r >= 0 && is_live(alloc)) {
		log_info("CNI %s: allocation %s is %s elsewhere: released before the ADD", key,
			 vfp_allocation_get_id(alloc),
			 vfp_allocation_state_to_string(vfp_allocation_get_state(alloc)));
		r = agent_release_allocation(a, vfp_allocation_get_id(alloc), err, err_size);
		if (r == -ENOENT)
			r = 0;
	}
	if (r >= 0 && alloc)
		r = ledger_forget_key(a, key, err, err_size);
	vfp_allocation_unref(alloc);
	return r;
}

/**
 * agent_cni_add() - the attachment @c->idempotency_key: claimed and attached
 * into the namespace @q, or found so already
 * @ret: the allocation, attached (vfp_allocation_unref() it)
 *
 * 0 for a new attachment, 1 for the one an earlier ADD made; errors as
 * agent_claim_and_attach()'s, and nothing claimed then.
 */
int agent_cni_add(struct agent *a, const struct vfp_claim *c, const struct agent_netns_request *q,
		  struct vfp_allocation **ret, char *err, size_t err_size)
{
	struct agent_attach_target t = { .netns = q };
	struct cni_key k;
	int r = cni_key_parse(c->idempotency_key, &k, err, err_size);

	if (r >= 0)
		r = clear_key(a, c->idempotency_key, c->owner, ret, err, err_size);

	if (r != 0)
		return r;
	r = agent_claim_and_attach(a, c, &t, ret, err, err_size);
	if (r == 1) { /* replayed: another ADD of the same key took it meanwhile */
		vfp_allocation_unref(*ret);
		*ret = NULL;
		snprintf(err, err_size, "attachment %s: another ADD is under way",
			 c->idempotency_key);
		return -EAGAIN;
	}
	return r;
}

/**
 * agent_cni_attached() - the attachment @key, when it is attached into
 * @owner's namespace: 1 and @ret (vfp_allocation_unref() it); 0 when there
 * is none, or it is elsewhere (the ADD will redo it)
 */
int agent_cni_attached(struct agent *a, const char *key, const struct vfp_owner *owner,
		       struct vfp_allocation **ret, char *err, size_t err_size)
{
	struct vfp_allocation *alloc = NULL;
	int r = find(a, key, &alloc, err, err_size);

	if (r >= 0 && is_live(alloc) && vfp_allocation_get_state(alloc) == VFP_ALLOCATION_ATTACHED &&
	    same_owner(vfp_allocation_get_owner(alloc), owner)) {
		*ret = alloc;
		return 1;
	}
	vfp_allocation_unref(alloc);
	return r < 0 ? r : 0;
}

/**
 * agent_cni_del() - the attachment @key released, its VFs restored and reset
 *
 * No attachment (never added, deleted already, or released when its
 * namespace went) is not an error: DEL is idempotent.
 */
int agent_cni_del(struct agent *a, const char *key, char *err, size_t err_size)
{
	struct vfp_allocation *alloc = NULL;
	struct cni_key k;
	int r = cni_key_parse(key, &k, err, err_size);

	if (r >= 0)
		r = find(a, key, &alloc, err, err_size);
	if (r >= 0 && is_live(alloc))
		r = agent_release_allocation(a, vfp_allocation_get_id(alloc), err, err_size);
	vfp_allocation_unref(alloc);
	return r == -ENOENT ? 0 : r;
}

/*
 * Whether each VF of @alloc is in the namespace, named @ifname, as its
 * restore point says; 1 when it went in userspace mode (a namespace and no
 * netdev: nothing inside to look for).
 */
static int check_where(struct agent *a, const struct vfp_allocation *alloc, const char *ifname,
		       char *err, size_t err_size)
{
	size_t n = vfp_allocation_get_vf_count(alloc);
	struct vfp_restore_point **rps = agent_load_restore_points(a, alloc);
	int r = rps ? 0 : -ENOMEM;

	for (size_t i = 0; r >= 0 && i < n; i++)
		if (rps[i] && !rps[i]->ifname && rps[i]->netns)
			r = 1;
		else if (!rps[i] || !rps[i]->ifname ||
			 (n == 1 && strcmp(rps[i]->ifname, ifname) != 0))
			r = -EIO, snprintf(err, err_size, "VF %s is not attached as %s",
					   vfp_allocation_get_vf(alloc, i)->pci, ifname);
	agent_free_restore_points(rps, n);
	return r;
}

/**
 * agent_cni_check() - the attachment @key is attached into @owner's namespace
 * as @ifname: -ENOENT when there is none, -EIO when it is not as the ADD left
 * it (the message says how); 1 when its VF went in userspace mode
 */
int agent_cni_check(struct agent *a, const char *key, const struct vfp_owner *owner,
		    const char *ifname, char *err, size_t err_size)
{
	struct vfp_allocation *alloc = NULL;
	struct cni_key k;
	int r = cni_key_parse(key, &k, err, err_size);

	if (r >= 0)
		r = find(a, key, &alloc, err, err_size);
	if (r >= 0 && !is_live(alloc))
		r = -ENOENT, snprintf(err, err_size, "attachment %s: none (released, or never "
				      "added)", key);
	else if (r >= 0 && vfp_allocation_get_state(alloc) != VFP_ALLOCATION_ATTACHED)
		r = -EIO, snprintf(err, err_size, "attachment %s: allocation %s is %s, not attached",
				   key, vfp_allocation_get_id(alloc),
				   vfp_allocation_state_to_string(vfp_allocation_get_state(alloc)));
	else if (r >= 0 && !same_owner(vfp_allocation_get_owner(alloc), owner))
		r = -EIO, snprintf(err, err_size, "attachment %s: allocation %s is in another "
				   "namespace", key, vfp_allocation_get_id(alloc));
	if (r >= 0)
		r = check_where(a, alloc, ifname, err, err_size);
	vfp_allocation_unref(alloc);
	return r;
}

static bool kept(const char *key, const char *const *keep, size_t n_keep)
{
	for (size_t i = 0; i < n_keep; i++)
		if (strcmp(key, keep[i]) == 0)
			return true;
	return false;
}

/**
 * agent_cni_gc() - every live attachment of the network @prefix names
 * ("cni:NETWORK/") that is not in @keep is released
 * @ret_released: how many were
 *
 * A key belongs to the network its whole parse names, never to one whose
 * name is a prefix of it; a prefix of another shape is -EINVAL. Goes on
 * past a failed release; the last failure is returned, with every other
 * release done.
 */
int agent_cni_gc(struct agent *a, const char *prefix, const char *const *keep, size_t n_keep,
		 unsigned *ret_released, char *err, size_t err_size)
{
	struct vfp_allocation **list = NULL;
	char network[CNI_KEY_MAX];
	size_t n = 0;
	int r, failed = 0;

	*ret_released = 0;
	r = cni_gc_prefix_network(prefix, network, err, err_size);
	if (r < 0)
		return r;
	r = ledger_list_allocations(a, NULL, false, &list, &n, err, err_size);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		const char *key = vfp_allocation_get_idempotency_key(list[i]);
		int q;

		if (!cni_key_in_network(key, network) || kept(key, keep, n_keep))
			continue;
		log_info("CNI GC: %s is not a valid attachment: releasing allocation %s", key,
			 vfp_allocation_get_id(list[i]));
		q = agent_release_allocation(a, vfp_allocation_get_id(list[i]), err, err_size);
		if (q >= 0)
			(*ret_released)++;
		else if (q != -ENOENT)
			failed = q;
	}
	vfp_allocation_list_free(list, n);
	return r < 0 ? r : failed;
}

/* The free VFs of @pool, as the ledger counts them; -ENOENT for a pool it does not know. */
int agent_cni_free_vfs(struct agent *a, const char *pool, unsigned *ret_free)
{
	struct vfp_pool_count *counts = NULL;
	size_t n = 0;
	int r;

	r = ledger_counts(a, &counts, &n);
	for (size_t i = 0; r >= 0 && i < n; i++)
		if (strcmp(counts[i].pool, pool) == 0) {
			*ret_free = counts[i].vfs[VFP_VF_FREE];
			free(counts);
			return 0;
		}
	free(counts);
	return r < 0 ? r : -ENOENT;
}
