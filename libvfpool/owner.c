/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who holds an allocation, its lookup key, and its form in the ledger:
 * {"kind":"vm","name":…[,"uuid":…]} or {"kind":"container","netns":…|"pid":…}.
 * A namespace is one owner however it is spelled: "c1", "/run/netns/c1"
 * and "/var/run/netns/c1" are all "c1".
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"
#include "selector.h"

#define MAX_PID 4194304 /* the kernel's PID_MAX_LIMIT */

/**
 * vfp_owner_netns_name() - the /run/netns name @netns spells ("c1" for
 * "c1", "/run/netns/c1" and "/var/run/netns/c1"), or NULL when it is not
 * one (empty, ".", "..", a '/' in the name, 64 bytes or more)
 */
VFP_EXPORT const char *vfp_owner_netns_name(const char *netns)
{
	const char *name = netns;

	if (strncmp(netns, "/run/netns/", 11) == 0)
		name = netns + 11;
	else if (strncmp(netns, "/var/run/netns/", 15) == 0)
		name = netns + 15;
	if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strlen(name) >= 64)
		return NULL;
	return name;
}

/**
 * vfp_uuid_is_valid() - @s is a UUID as libvirt spells a domain's: 36
 * characters, hex digits of either case with dashes at 8, 13, 18 and 23
 */
VFP_EXPORT bool vfp_uuid_is_valid(const char *s)
{
	if (!s)
		return false;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		/* a NUL fails both tests, so a short string ends the loop there */
		if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
	}
	return s[36] == '\0';
}

/**
 * vfp_owner_outlives_power_cut() - whether what @o holds outlives a power cut
 *
 * A VM's does: its domain's config stays, so its claims and releases wait
 * for the disk. A container's does not: its namespace dies with the host and
 * the next start releases its VFs anyway (see vfp_ledger_begin_lazy_tx()).
 * No owner: assume it does.
 */
VFP_EXPORT bool vfp_owner_outlives_power_cut(const struct vfp_owner *o)
{
	return !o || o->kind != VFP_OWNER_CONTAINER;
}

/**
 * vfp_owner_key() - the lookup key of an owner, after checking its shape
 *
 * A VM "vm:one-42" (its name); a container "netns:c1" (however the
 * namespace was spelled) or "pid:1234".
 */
VFP_EXPORT int vfp_owner_key(const struct vfp_owner *o, char **ret_key, char **ret_error)
{
	int r;

	if (!o)
		return vfp_config_error(ret_error, "owner", "must be an object");
	if (o->kind == VFP_OWNER_VM) {
		if (!o->name || !*o->name || strlen(o->name) > 256)
			return vfp_config_error(ret_error, "owner.name",
						"a VM owner needs its domain name");
		r = asprintf(ret_key, "vm:%s", o->name);
	} else if (o->kind != VFP_OWNER_CONTAINER) {
		return vfp_config_error(ret_error, "owner.kind", "must be \"vm\" or \"container\"");
	} else if (o->netns) {
		const char *name = vfp_owner_netns_name(o->netns);

		if (!name)
			return vfp_config_error(ret_error, "owner.netns",
						"must be a /run/netns name or path");
		r = asprintf(ret_key, "netns:%s", name);
	} else if (o->pid > 0 && o->pid <= MAX_PID) {
		r = asprintf(ret_key, "pid:%lld", o->pid);
	} else {
		return vfp_config_error(ret_error, "owner",
					"a container owner needs \"netns\" or a positive \"pid\"");
	}
	return r < 0 ? -ENOMEM : 0;
}

json_t *vfp_owner_to_json(const struct vfp_owner *o)
{
	json_t *j = json_pack("{s:s}", "kind", o->kind == VFP_OWNER_VM ? "vm" : "container");

	if (o->name)
		json_object_set_new(j, "name", json_string(o->name));
	if (o->uuid)
		json_object_set_new(j, "uuid", json_string(o->uuid));
	if (o->netns)
		json_object_set_new(j, "netns", json_string(o->netns));
	if (o->pid > 0)
		json_object_set_new(j, "pid", json_integer(o->pid));
	if (o->netns_inode)
		json_object_set_new(j, "netns_inode", json_integer((json_int_t)o->netns_inode));
	if (o->netns_cookie)
		json_object_set_new(j, "netns_cookie", json_integer((json_int_t)o->netns_cookie));
	return j;
}

/* The stored owner @j into @o; its strings point into @j. */
int vfp_owner_from_json(json_t *j, struct vfp_owner *o)
{
	const char *kind = json_string_value(json_object_get(j, "kind"));

	if (!kind || (strcmp(kind, "vm") && strcmp(kind, "container")))
		return -EINVAL;
	*o = (struct vfp_owner){
		.kind = strcmp(kind, "vm") == 0 ? VFP_OWNER_VM : VFP_OWNER_CONTAINER,
		.name = json_string_value(json_object_get(j, "name")),
		.uuid = json_string_value(json_object_get(j, "uuid")),
		.netns = json_string_value(json_object_get(j, "netns")),
		.pid = json_integer_value(json_object_get(j, "pid")),
		.netns_inode =
			(unsigned long long)json_integer_value(json_object_get(j, "netns_inode")),
		.netns_cookie =
			(unsigned long long)json_integer_value(json_object_get(j, "netns_cookie")),
	};
	return 0;
}
