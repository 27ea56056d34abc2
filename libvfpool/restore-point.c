/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Restore points: what an attach changed on one VF, and their form in the
 * ledger (the vfs.original column, a JSON object whose keys are the
 * field names below, "vf_settings" for the PF side).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"

VFP_EXPORT struct vfp_restore_point *vfp_restore_point_new(void)
{
	struct vfp_restore_point *rp = calloc(1, sizeof(struct vfp_restore_point));

	if (rp)
		rp->pkey_idx0 = VFP_UNSET;
	return rp;
}

VFP_EXPORT void vfp_restore_point_free(struct vfp_restore_point *rp)
{
	if (!rp)
		return;
	free(rp->driver);
	free(rp->netns);
	free(rp->ifname);
	free(rp->rdma_device);
	free(rp->name);
	free(rp->mac);
	free(rp->altnames);
	free(rp->domain_uuid);
	free(rp->domain);
	free(rp->device_xml);
	free(rp->dummy_xml);
	free(rp->standby_xml);
	free(rp->steered_xml);
	free(rp);
}

/* *@field becomes a copy of @value (NULL clears it). */
VFP_EXPORT int vfp_restore_point_set(char **field, const char *value)
{
	char *copy = value ? strdup(value) : NULL;

	if (value && !copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

/* The string fields, by their key in the stored form. */
#define STRING_FIELDS(rp)                                                                          \
	{ "driver", &(rp)->driver },   { "netns", &(rp)->netns },                                  \
	{ "ifname", &(rp)->ifname },   { "rdma_device", &(rp)->rdma_device },                      \
	{ "name", &(rp)->name },       { "mac", &(rp)->mac },                                      \
	{ "altnames", &(rp)->altnames },                                                            \
	{ "domain_uuid", &(rp)->domain_uuid }, { "domain", &(rp)->domain },                        \
	{ "device_xml", &(rp)->device_xml }, { "dummy_xml", &(rp)->dummy_xml },                    \
	{ "standby_xml", &(rp)->standby_xml }, { "steered_xml", &(rp)->steered_xml }

struct string_field {
	const char *key;
	char **value;
};

char *vfp_restore_point_to_text(const struct vfp_restore_point *c)
{
	struct vfp_restore_point *rp = (struct vfp_restore_point *)c; /* fields are only read */
	const struct string_field fields[] = { STRING_FIELDS(rp) };
	json_t *o = json_object();
	char *text;

	for (size_t i = 0; i < ELEMENTSOF(fields); i++)
		if (*fields[i].value)
			json_object_set_new(o, fields[i].key, json_string(*fields[i].value));
	if (rp->has_pf_side)
		json_object_set_new(o, "vf_settings", vfp_vf_config_to_json(&rp->pf_side));
	if (rp->netns)
		json_object_set_new(o, "netns_inode", json_integer((json_int_t)rp->netns_inode));
	if (rp->netns_cookie)
		json_object_set_new(o, "netns_cookie", json_integer((json_int_t)rp->netns_cookie));
	if (rp->name) {
		json_object_set_new(o, "mtu", json_integer(rp->mtu));
		json_object_set_new(o, "up", json_boolean(rp->up));
	}
	if (rp->ifindex)
		json_object_set_new(o, "ifindex", json_integer(rp->ifindex));
	if (rp->peer_ifindex)
		json_object_set_new(o, "peer_ifindex", json_integer(rp->peer_ifindex));
	if (rp->domain_uuid) {
		json_object_set_new(o, "flags", json_integer(rp->flags));
		json_object_set_new(o, "since", json_integer(rp->since));
	}
	if (rp->pending)
		json_object_set_new(o, "pending", json_true());
	if (rp->pkey_idx0 != VFP_UNSET)
		json_object_set_new(o, "pkey_idx0", rp->pkey_idx0 == VFP_PKEY_NONE
							    ? json_string("none")
							    : json_integer(rp->pkey_idx0));
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return text;
}

static int from_json(json_t *o, struct vfp_restore_point *rp)
{
	const struct string_field fields[] = { STRING_FIELDS(rp) };
	json_t *pf = json_object_get(o, "vf_settings");
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(fields); i++) {
		json_t *v = json_object_get(o, fields[i].key);

		if (v && !json_is_string(v))
			return -EINVAL;
		r = vfp_restore_point_set(fields[i].value, json_string_value(v));
	}
	rp->has_pf_side = pf != NULL;
	if (r >= 0 && pf)
		r = vfp_vf_config_from_json(pf, 0, &rp->pf_side);
	rp->netns_inode = (unsigned long long)json_integer_value(json_object_get(o, "netns_inode"));
	rp->netns_cookie = (unsigned long long)json_integer_value(json_object_get(o, "netns_cookie"));
	rp->mtu = (unsigned)json_integer_value(json_object_get(o, "mtu"));
	rp->up = json_is_true(json_object_get(o, "up"));
	rp->ifindex = (int)json_integer_value(json_object_get(o, "ifindex"));
	rp->peer_ifindex = (int)json_integer_value(json_object_get(o, "peer_ifindex"));
	rp->flags = (unsigned)json_integer_value(json_object_get(o, "flags"));
	rp->since = json_integer_value(json_object_get(o, "since"));
	rp->pending = json_is_true(json_object_get(o, "pending"));
	rp->pkey_idx0 = json_is_integer(json_object_get(o, "pkey_idx0"))
				? (int)json_integer_value(json_object_get(o, "pkey_idx0"))
			: json_object_get(o, "pkey_idx0") ? VFP_PKEY_NONE
							   : VFP_UNSET;
	return r;
}

/* The stored form back; -EINVAL when it is not one. */
int vfp_restore_point_from_text(const char *text, struct vfp_restore_point **ret)
{
	json_t *o = json_loads(text, 0, NULL);
	struct vfp_restore_point *rp = vfp_restore_point_new();
	int r = !rp ? -ENOMEM : json_is_object(o) ? from_json(o, rp) : -EINVAL;

	json_decref(o);
	if (r < 0) {
		vfp_restore_point_free(rp);
		return r;
	}
	*ret = rp;
	return 0;
}
