/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A failover NIC's standby: the virtio NIC that libvirt pairs with an
 * Ethernet VF (<teaming type='persistent'/> on it, type='transient' on the
 * VF) and that carries the guest's traffic while the VF is away (a swap, a
 * live migration). Its form in the config's "networks" and in a claim:
 *   {"bridge": "br0"}                        a Linux bridge
 *   {"bridge": "ovs0", "openvswitch": true}  an Open vSwitch bridge: libvirt tags the VLAN
 *   {"macvtap": "ens2f0.{vlan}"}             a macvtap (libvirt's type='direct', mode bridge)
 * "{vlan}" in the name stands for the NIC's VLAN id, so that the standby
 * reaches the VLAN its VF is on (OpenNebula's 802.1Q driver names its
 * bridges onebr.<VLAN_ID>); libvirt tags a standby itself only on Open
 * vSwitch, so a Linux bridge or macvtap standby of a NIC with a VLAN needs it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config-errors.h"
#include "private.h"

#define VLAN_MARK "{vlan}"

static const char *kind_key(enum vfp_standby_kind k)
{
	return k == VFP_STANDBY_MACVTAP ? "macvtap" : "bridge";
}

/* The name with @vlan in place of VLAN_MARK; -ENAMETOOLONG past a netdev name's 15 bytes. */
static int expand(const char *source, int vlan, char *buf, size_t size)
{
	const char *mark = strstr(source, VLAN_MARK);
	int n;

	if (mark)
		n = snprintf(buf, size, "%.*s%d%s", (int)(mark - source), source, vlan,
			     mark + strlen(VLAN_MARK));
	else
		n = snprintf(buf, size, "%s", source);
	return n < 0 || (size_t)n >= size || n > 15 ? -ENAMETOOLONG : 0;
}

/* What the kernel takes as a netdev name (dev_valid_name()), VLAN_MARK once at most. */
static bool valid_source(const char *s)
{
	const char *mark = strstr(s, VLAN_MARK);
	char longest[64];

	if (!*s || !strcmp(s, ".") || !strcmp(s, "..") || strpbrk(s, "/: \t\n\r\v\f"))
		return false;
	if (mark && strstr(mark + 1, VLAN_MARK))
		return false;
	return expand(s, 4094, longest, sizeof(longest)) == 0;
}

/**
 * vfp_failover_from_json() - a standby as the config or a claim gives it
 * @path: the key's path, for the error ("networks[0].failover", "failover")
 *
 * -EINVAL with *@ret_error naming the field; @ret untouched then.
 */
VFP_EXPORT int vfp_failover_from_json(json_t *o, const char *path, struct vfp_failover *ret,
				      char **ret_error)
{
	static const char *const keys[] = { "bridge", "macvtap", "openvswitch", NULL };
	json_t *bridge = json_object_get(o, "bridge"), *macvtap = json_object_get(o, "macvtap");
	json_t *ovs = json_object_get(o, "openvswitch"), *name = bridge ? bridge : macvtap;
	struct vfp_failover f = { .kind = VFP_STANDBY_NONE };
	char sub[128];
	int r;

	if (!json_is_object(o))
		return vfp_config_error(ret_error, path, "must be an object like "
				       "{\"bridge\": \"br0\"} or {\"macvtap\": \"ens2f0.{vlan}\"}");
	r = vfp_json_check_keys(o, path, keys, ret_error);
	if (r < 0)
		return r;
	if (!bridge == !macvtap)
		return vfp_config_error(ret_error, path, "needs exactly one of \"bridge\" or "
				       "\"macvtap\": the standby's source");
	f.kind = bridge ? VFP_STANDBY_BRIDGE : VFP_STANDBY_MACVTAP;
	snprintf(sub, sizeof(sub), "%s.%s", path, kind_key(f.kind));
	if (!json_is_string(name) || !valid_source(json_string_value(name)))
		return vfp_config_error(ret_error, sub, "must be a network device name (at most 15 "
				       "bytes with \"{vlan}\" as 4094; no '/', ':' or space)");
	snprintf(sub, sizeof(sub), "%s.openvswitch", path);
	if (ovs && !json_is_boolean(ovs))
		return vfp_config_error(ret_error, sub, "must be true or false");
	if (json_is_true(ovs) && !bridge)
		return vfp_config_error(ret_error, sub, "only a \"bridge\" is an Open vSwitch one");
	if (json_is_true(ovs))
		f.kind = VFP_STANDBY_OPENVSWITCH;
	snprintf(f.source, sizeof(f.source), "%s", json_string_value(name));
	*ret = f;
	return 0;
}

/* @f as vfp_failover_from_json() reads it; NULL for none. */
VFP_EXPORT json_t *vfp_failover_to_json(const struct vfp_failover *f)
{
	json_t *o;

	if (!f || f->kind == VFP_STANDBY_NONE)
		return NULL;
	o = json_pack("{s:s}", kind_key(f->kind), f->source);
	if (o && f->kind == VFP_STANDBY_OPENVSWITCH)
		json_object_set_new(o, "openvswitch", json_true());
	return o;
}

/**
 * vfp_failover_standby_source() - the standby's bridge or macvtap device for
 * a NIC on VLAN @vlan (0 or -1: none)
 *
 * -EINVAL, with @err saying why, when the standby would not reach that VLAN:
 * a Linux bridge or a macvtap whose name has no "{vlan}" (libvirt tags only
 * on Open vSwitch); and when the name has "{vlan}" but the NIC no VLAN.
 */
VFP_EXPORT int vfp_failover_standby_source(const struct vfp_failover *f, int vlan, char *buf,
					   size_t size, char *err, size_t err_size)
{
	bool marked = strstr(f->source, VLAN_MARK) != NULL;

	if (vlan > 0 && !marked && f->kind != VFP_STANDBY_OPENVSWITCH) {
		snprintf(err, err_size, "the standby %s \"%s\" would not be on VLAN %d: libvirt tags "
			 "a standby only on Open vSwitch (\"openvswitch\": true); name the "
			 "VLAN's own device with \"{vlan}\"", kind_key(f->kind), f->source, vlan);
		return -EINVAL;
	}
	if (vlan <= 0 && marked) {
		snprintf(err, err_size, "the standby %s \"%s\" needs a VLAN and the NIC has none",
			 kind_key(f->kind), f->source);
		return -EINVAL;
	}
	if (expand(f->source, vlan, buf, size) < 0) {
		snprintf(err, err_size, "the standby %s \"%s\" is too long a name", kind_key(f->kind),
			 f->source);
		return -EINVAL;
	}
	return 0;
}
