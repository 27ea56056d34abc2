/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvfpool/macro.h"
#include "agent/netlink/nlmsg.h"
#include "agent/netlink/nlsock.h"
#include "agent/pf/vfconfig.h"

static const char *const link_states[] = {
	[IFLA_VF_LINK_STATE_AUTO] = "auto",
	[IFLA_VF_LINK_STATE_ENABLE] = "enable",
	[IFLA_VF_LINK_STATE_DISABLE] = "disable",
};

static int parse_guid(const char *s, uint64_t *ret)
{
	unsigned b[8];
	char end;

	if (!s || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
			 &b[5], &b[6], &b[7], &end) != 8)
		return -EINVAL;
	*ret = 0;
	for (int i = 0; i < 8; i++)
		*ret = *ret << 8 | b[i];
	return 0;
}

static void format_guid(uint64_t g, char buf[24])
{
	snprintf(buf, 24, "%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x", (unsigned)(g >> 56) & 0xff,
		 (unsigned)(g >> 48) & 0xff, (unsigned)(g >> 40) & 0xff, (unsigned)(g >> 32) & 0xff,
		 (unsigned)(g >> 24) & 0xff, (unsigned)(g >> 16) & 0xff, (unsigned)(g >> 8) & 0xff,
		 (unsigned)g & 0xff);
}

static int get_bool(json_t *o, const char *key, int *ret)
{
	json_t *v = json_object_get(o, key);

	if (v && !json_is_boolean(v))
		return -EINVAL;
	if (v)
		*ret = json_is_true(v);
	return 0;
}

static int get_int(json_t *o, const char *key, long long max, long long *ret)
{
	json_t *v = json_object_get(o, key);

	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max))
		return -EINVAL;
	if (v)
		*ret = json_integer_value(v);
	return 0;
}

/* The plain fields of a settings object: the same keys in a request and in a snapshot. */
static int fields_from_json(json_t *o, struct vf_settings *s, const char **ret_bad)
{
	const char *str;
	long long v;

	if ((str = json_string_value(json_object_get(o, "mac"))) && nl_parse_mac(str, s->mac) < 0)
		return *ret_bad = "mac", -EINVAL;
	s->has_mac = str != NULL;
	v = s->vlan;
	if (get_int(o, "vlan", 4095, &v) < 0)
		return *ret_bad = "vlan", -EINVAL;
	s->vlan = (int)v;
	v = s->qos;
	if (get_int(o, "qos", 7, &v) < 0)
		return *ret_bad = "qos", -EINVAL;
	s->qos = (int)v;
	str = json_string_value(json_object_get(o, "vlan_proto"));
	if (str && strcmp(str, "802.1Q") && strcmp(str, "802.1ad"))
		return *ret_bad = "vlan_proto", -EINVAL;
	if (str)
		s->vlan_proto = strcmp(str, "802.1Q") == 0 ? 0x8100 : 0x88a8;
	if (get_bool(o, "spoofchk", &s->spoofchk) < 0)
		return *ret_bad = "spoofchk", -EINVAL;
	if (get_bool(o, "trust", &s->trust) < 0)
		return *ret_bad = "trust", -EINVAL;
	str = json_string_value(json_object_get(o, "link_state"));
	for (int i = 0; str && i < (int)ELEMENTSOF(link_states); i++)
		if (strcmp(str, link_states[i]) == 0)
			s->link_state = i;
	if (str && s->link_state < 0)
		return *ret_bad = "link_state", -EINVAL;
	if (get_int(o, "min_tx_rate", UINT32_MAX, &s->min_tx_rate) < 0)
		return *ret_bad = "min_tx_rate", -EINVAL;
	if (get_int(o, "max_tx_rate", UINT32_MAX, &s->max_tx_rate) < 0)
		return *ret_bad = "max_tx_rate", -EINVAL;
	return 0;
}

/**
 * vfconfig_from_request() - what an allocation's settings ask of one of its VFs
 * @vf: the allocation's VF ({"pci","index","guid",…}); its GUID (from the
 *	GUID pool) becomes the node and port GUID
 * @first: the requested MAC and GUID apply to the allocation's first VF only
 *	   (one address, one VF)
 *
 * Settings were checked when the allocation was made; a value that is
 * still wrong here (a ledger from an older version) names its key in @err.
 */
int vfconfig_from_request(json_t *settings, json_t *vf, bool first, struct vf_settings *ret,
			  char *err, size_t err_size)
{
	struct vf_settings s;
	const char *bad = NULL, *guid = json_string_value(json_object_get(settings, "guid"));

	vf_settings_init(&s, (unsigned)json_integer_value(json_object_get(vf, "index")));
	if (fields_from_json(settings, &s, &bad) < 0) {
		snprintf(err, err_size, "settings.%s: bad value", bad);
		return -EINVAL;
	}
	if (s.vlan == 0 && s.qos < 0)
		s.vlan = VFINFO_UNSET; /* "vlan":0 asks for nothing */
	if (s.vlan < 0 && (s.qos >= 0 || s.vlan_proto >= 0)) {
		snprintf(err, err_size, "settings.qos and vlan_proto need a vlan");
		return -EINVAL;
	}
	s.has_mac = s.has_mac && first;
	if (!guid || !first)
		guid = json_string_value(json_object_get(vf, "guid")); /* from the GUID pool */
	if (guid && parse_guid(guid, &s.node_guid) == 0) {
		s.port_guid = s.node_guid;
		s.has_node_guid = s.has_port_guid = true;
	}
	*ret = s;
	return 0;
}

bool vfconfig_is_empty(const struct vf_settings *s)
{
	return !s->has_mac && s->vlan < 0 && s->spoofchk < 0 && s->trust < 0 &&
	       s->link_state < 0 && s->min_tx_rate < 0 && s->max_tx_rate < 0 &&
	       !s->has_node_guid && !s->has_port_guid;
}

static int pf_ifindex(struct nl_conn *c, const char *name, int *ret, char *err, size_t err_size)
{
	struct nl_link l = { 0 };
	int r = nl_conn_get_link(c, name, &l, err, err_size);

	if (r >= 0)
		*ret = l.ifindex;
	return r;
}

/* VF @index's settings as the PF reports them now. */
static int read_vf(const struct vf_target *t, struct vf_settings *ret, char *err, size_t err_size)
{
	struct nl_conn c = { 0 };
	_cleanup_free_ void *reply = NULL;
	char buf[NL_BUF_SIZE];
	size_t n;
	int ifindex = 0, r = t->pf_netdev ? nl_conn_open(NETLINK_ROUTE, -1, &c) : -ENODEV;

	if (r >= 0)
		r = pf_ifindex(&c, t->pf_netdev, &ifindex, err, err_size);
	if (r >= 0)
		r = nl_conn_send(&c, buf, vfinfo_build_get(buf, c.seq++, ifindex));
	if (r >= 0)
		r = nl_conn_recv(&c, &reply, &n);
	if (r >= 0)
		r = ((struct nlmsghdr *)reply)->nlmsg_type == NLMSG_ERROR
			    ? nl_parse_ack(reply, n, err, err_size)
			    : vfinfo_parse(reply, n, t->index, ret);
	nl_conn_close(&c);
	if (r == -ENOENT) {
		snprintf(err, err_size, "PF %s reports no VF %u: its driver has no SR-IOV VF "
			 "settings", t->pf_netdev, t->index);
		r = -EOPNOTSUPP;
	}
	return r;
}

static bool only_guids(const struct vf_settings *s)
{
	struct vf_settings rest = *s;

	rest.has_node_guid = rest.has_port_guid = false;
	return vfconfig_is_empty(&rest);
}

/**
 * vfconfig_snapshot() - the current values of the fields @want would change
 *
 * The restore point: only what the attach changes is put back. GUIDs the
 * PF does not report are left out, and a PF with no netdev has nothing to
 * report: that is not an error when only GUIDs are wanted.
 */
int vfconfig_snapshot(const struct vf_target *t, const struct vf_settings *want,
		      struct vf_settings *ret, char *err, size_t err_size)
{
	struct vf_settings now, s;
	int r = read_vf(t, &now, err, err_size);

	vf_settings_init(&s, t->index);
	if (r < 0 && only_guids(want)) {
		err[0] = '\0';
		*ret = s;
		return 0;
	}
	if (r < 0)
		return r;
	if (want->has_mac && now.has_mac) {
		s.has_mac = true;
		memcpy(s.mac, now.mac, sizeof(s.mac));
	}
	if (want->vlan >= 0) {
		s.vlan = now.vlan >= 0 ? now.vlan : 0;
		s.qos = now.qos >= 0 ? now.qos : 0;
		s.vlan_proto = now.vlan_proto > 0 ? now.vlan_proto : 0x8100;
	}
	s.spoofchk = want->spoofchk >= 0 ? now.spoofchk : VFINFO_UNSET;
	s.trust = want->trust >= 0 ? now.trust : VFINFO_UNSET;
	s.link_state = want->link_state >= 0 ? now.link_state : VFINFO_UNSET;
	if (want->min_tx_rate >= 0 || want->max_tx_rate >= 0) {
		s.min_tx_rate = now.min_tx_rate;
		s.max_tx_rate = now.max_tx_rate;
	}
	s.has_node_guid = want->has_node_guid && now.has_node_guid;
	s.node_guid = now.node_guid;
	s.has_port_guid = want->has_port_guid && now.has_port_guid;
	s.port_guid = now.port_guid;
	*ret = s;
	return 0;
}

static int set_vf(const struct vf_target *t, const struct vf_settings *s, char *err,
		  size_t err_size)
{
	struct nl_conn c = { 0 };
	_cleanup_free_ char *buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	int ifindex = 0, r = !buf ? -ENOMEM : t->pf_netdev ? nl_conn_open(NETLINK_ROUTE, -1, &c)
							    : -ENODEV;

	if (r >= 0)
		r = pf_ifindex(&c, t->pf_netdev, &ifindex, err, err_size);
	if (r >= 0)
		r = nl_conn_ack(&c, buf, vfinfo_build_set(buf, MNL_SOCKET_BUFFER_SIZE, c.seq++,
							   ifindex, s), err, err_size);
	nl_conn_close(&c);
	return r;
}

/*
 * Node and port GUID over netlink, else (refused, or no PF netdev) through
 * the PF driver's sysfs files; then the VF is rebound to take them.
 */
static int set_guids(const struct vf_target *t, const struct vf_settings *s, char *err,
		     size_t err_size)
{
	struct vf_settings g;
	char node[24], port[24], msg[256] = "";
	int r;

	vf_settings_init(&g, t->index);
	g.has_node_guid = s->has_node_guid;
	g.node_guid = s->node_guid;
	g.has_port_guid = s->has_port_guid;
	g.port_guid = s->port_guid;
	r = set_vf(t, &g, msg, sizeof(msg));
	if (r == -EOPNOTSUPP || r == -EINVAL || r == -ENODEV) {
		format_guid(s->has_node_guid ? s->node_guid : s->port_guid, node);
		format_guid(s->has_port_guid ? s->port_guid : s->node_guid, port);
		r = vfp_vf_write_ib_guids(t->ctx, t->pf_pci, t->pf_driver, t->index, node, port);
		if (r < 0)
			snprintf(msg, sizeof(msg), "netlink refused and %s has no GUID files "
				 "we can write (%s)", t->pf_driver ? t->pf_driver : "the PF driver",
				 strerror(-r));
	}
	if (r >= 0) {
		r = vfp_device_rebind(t->ctx, t->pci);
		if (r < 0)
			snprintf(msg, sizeof(msg), "rebinding the VF: %s", strerror(-r));
	}
	if (r < 0)
		snprintf(err, err_size, "IB GUIDs of VF %u: %s", t->index,
			 msg[0] ? msg : strerror(-r));
	return r;
}

/**
 * vfconfig_apply() - set @s on the VF's PF
 *
 * The kernel's -errno as it came, and its words (or which step failed) in
 * @err. Used for the attach and, with a snapshot, for the restore.
 */
int vfconfig_apply(const struct vf_target *t, const struct vf_settings *s, char *err,
		   size_t err_size)
{
	struct vf_settings rest = *s;
	char msg[256] = "";
	int r = 0;

	err[0] = '\0';
	rest.has_node_guid = rest.has_port_guid = false;
	if (!vfconfig_is_empty(&rest)) {
		r = set_vf(t, &rest, msg, sizeof(msg));
		if (r < 0)
			snprintf(err, err_size, "PF %s, VF %u: %s", t->pf_netdev ? t->pf_netdev :
				 t->pf_pci, t->index, msg[0] ? msg : strerror(-r));
	}
	if (r >= 0 && (s->has_node_guid || s->has_port_guid))
		r = set_guids(t, s, err, err_size);
	return r;
}

/* A snapshot as stored in the ledger: the keys of a request, plus the GUIDs. */
json_t *vfconfig_to_json(const struct vf_settings *s)
{
	json_t *o = json_object();
	char buf[24];

	if (s->has_mac) {
		snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", s->mac[0], s->mac[1],
			 s->mac[2], s->mac[3], s->mac[4], s->mac[5]);
		json_object_set_new(o, "mac", json_string(buf));
	}
	if (s->vlan >= 0) {
		json_object_set_new(o, "vlan", json_integer(s->vlan));
		json_object_set_new(o, "qos", json_integer(s->qos > 0 ? s->qos : 0));
		json_object_set_new(o, "vlan_proto",
				    json_string(s->vlan_proto == 0x88a8 ? "802.1ad" : "802.1Q"));
	}
	if (s->spoofchk >= 0)
		json_object_set_new(o, "spoofchk", json_boolean(s->spoofchk));
	if (s->trust >= 0)
		json_object_set_new(o, "trust", json_boolean(s->trust));
	if (s->link_state >= 0 && s->link_state < (int)ELEMENTSOF(link_states))
		json_object_set_new(o, "link_state", json_string(link_states[s->link_state]));
	if (s->min_tx_rate >= 0)
		json_object_set_new(o, "min_tx_rate", json_integer(s->min_tx_rate));
	if (s->max_tx_rate >= 0)
		json_object_set_new(o, "max_tx_rate", json_integer(s->max_tx_rate));
	if (s->has_node_guid) {
		format_guid(s->node_guid, buf);
		json_object_set_new(o, "node_guid", json_string(buf));
	}
	if (s->has_port_guid) {
		format_guid(s->port_guid, buf);
		json_object_set_new(o, "port_guid", json_string(buf));
	}
	return o;
}

int vfconfig_from_json(json_t *o, unsigned index, struct vf_settings *ret)
{
	struct vf_settings s;
	const char *bad;

	vf_settings_init(&s, index);
	if (!json_is_object(o) || fields_from_json(o, &s, &bad) < 0)
		return -EINVAL;
	s.has_node_guid = parse_guid(json_string_value(json_object_get(o, "node_guid")),
				     &s.node_guid) == 0;
	s.has_port_guid = parse_guid(json_string_value(json_object_get(o, "port_guid")),
				     &s.port_guid) == 0;
	*ret = s;
	return 0;
}
