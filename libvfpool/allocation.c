/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An allocation: a pool's VFs held by one owner, as the ledger has it at one moment. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"

struct vfp_allocation *vfp_allocation_new(void)
{
	struct vfp_allocation *a = calloc(1, sizeof(*a));

	if (a) {
		a->refcount = 1;
		vfp_settings_init(&a->settings);
	}
	return a;
}

static int dup_or_null(const char *s, char **ret)
{
	*ret = s ? strdup(s) : NULL;
	return s && !*ret ? -ENOMEM : 0;
}

/* A copy of @o, its strings owned by @a. */
int vfp_allocation_set_owner(struct vfp_allocation *a, const struct vfp_owner *o)
{
	int r = dup_or_null(o->name, &a->owner_name);

	if (r >= 0)
		r = dup_or_null(o->uuid, &a->owner_uuid);
	if (r >= 0)
		r = dup_or_null(o->netns, &a->owner_netns);
	a->owner = (struct vfp_owner){ .kind = o->kind, .name = a->owner_name,
				       .uuid = a->owner_uuid, .netns = a->owner_netns,
				       .pid = o->pid, .netns_inode = o->netns_inode,
				       .netns_cookie = o->netns_cookie };
	return r;
}

VFP_EXPORT struct vfp_allocation *vfp_allocation_ref(struct vfp_allocation *a)
{
	if (a)
		vfp_ref_inc(&a->refcount);
	return a;
}

VFP_EXPORT struct vfp_allocation *vfp_allocation_unref(struct vfp_allocation *a)
{
	if (!a || vfp_ref_dec(&a->refcount) > 0)
		return NULL;
	free(a->pool);
	free(a->owner_name);
	free(a->owner_uuid);
	free(a->owner_netns);
	free(a->idempotency_key);
	free(a->flag);
	free(a->hold_path);
	free(a->vfs);
	free(a);
	return NULL;
}

VFP_EXPORT void vfp_allocation_list_free(struct vfp_allocation **list, size_t n)
{
	for (size_t i = 0; list && i < n; i++)
		vfp_allocation_unref(list[i]);
	free(list);
}

VFP_EXPORT const char *vfp_allocation_get_id(const struct vfp_allocation *a)
{
	return a->id;
}

VFP_EXPORT const char *vfp_allocation_get_pool(const struct vfp_allocation *a)
{
	return a->pool;
}

VFP_EXPORT enum vfp_allocation_state vfp_allocation_get_state(const struct vfp_allocation *a)
{
	return a->state;
}

VFP_EXPORT const struct vfp_owner *vfp_allocation_get_owner(const struct vfp_allocation *a)
{
	return &a->owner;
}

VFP_EXPORT const struct vfp_settings *vfp_allocation_get_settings(const struct vfp_allocation *a)
{
	return &a->settings;
}

/* NULL when the claim had no Idempotency-Key. */
VFP_EXPORT const char *vfp_allocation_get_idempotency_key(const struct vfp_allocation *a)
{
	return a->idempotency_key;
}

/* Why the ledger flagged the allocation (a VF vanished…), or NULL. */
VFP_EXPORT const char *vfp_allocation_get_flag(const struct vfp_allocation *a)
{
	return a->flag;
}

/* The file whose existence holds this reservation for its owner (vfp_ledger_set_hold()), or NULL. */
VFP_EXPORT const char *vfp_allocation_get_hold_path(const struct vfp_allocation *a)
{
	return a->hold_path;
}

/* -ENODATA for a reservation that never expires. */
VFP_EXPORT int vfp_allocation_get_lease_expires(const struct vfp_allocation *a, long long *ret)
{
	if (!a->has_lease)
		return -ENODATA;
	*ret = a->lease_expires;
	return 0;
}

VFP_EXPORT long long vfp_allocation_get_created(const struct vfp_allocation *a)
{
	return a->created;
}

VFP_EXPORT long long vfp_allocation_get_updated(const struct vfp_allocation *a)
{
	return a->updated;
}

VFP_EXPORT size_t vfp_allocation_get_vf_count(const struct vfp_allocation *a)
{
	return a->n_vfs;
}

/* VF @i in claim order; NULL past the end. */
VFP_EXPORT const struct vfp_allocation_vf *vfp_allocation_get_vf(const struct vfp_allocation *a,
								 size_t i)
{
	return i < a->n_vfs ? &a->vfs[i] : NULL;
}
