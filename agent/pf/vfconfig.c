/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/log.h"
#include "libvfpool/macro.h"
#include "agent/netlink/nlmsg.h"
#include "agent/netlink/nlsock-thread.h"
#include "agent/netlink/nlsock.h"
#include "agent/pf/vfconfig.h"

/* The plain fields: the same meaning in a request and in the PF's view. */
static void fields_from_settings(const struct vfp_settings *in, struct vfp_vf_config *s)
{
	s->has_mac = in->mac[0] && vfp_mac_parse(in->mac, s->mac) == 0;
	s->vlan = in->vlan, s->qos = in->qos, s->vlan_proto = in->vlan_proto;
	s->spoofchk = in->spoofchk, s->trust = in->trust, s->link_state = in->link_state;
	s->min_tx_rate = in->min_tx_rate, s->max_tx_rate = in->max_tx_rate;
}

/**
 * vfconfig_from_request() - what an allocation's settings ask of one of its VFs
 * @vf: the allocation's VF; its GUID (from the GUID pool) becomes the node
 *	and port GUID
 * @first: the requested MAC and GUID apply to the allocation's first VF only
 *	   (one address, one VF)
 *
 * Settings were checked when the allocation was made; a combination that
 * is still wrong here (a ledger from an older version) names its keys in @err.
 */
int vfconfig_from_request(const struct vfp_settings *settings, const struct vfp_allocation_vf *vf,
			  bool first, struct vfp_vf_config *ret, char *err, size_t err_size)
{
	struct vfp_vf_config s;
	const char *guid = first && settings->guid[0] ? settings->guid : vf->guid;

	vfp_vf_config_init(&s, vf->index);
	fields_from_settings(settings, &s);
	if (settings->mac[0] && !s.has_mac) {
		snprintf(err, err_size, "settings.mac: bad value");
		return -EINVAL;
	}
	if (s.vlan == 0 && s.qos < 0)
		s.vlan = VFP_UNSET; /* "vlan":0 asks for nothing */
	if (s.vlan < 0 && (s.qos >= 0 || s.vlan_proto >= 0)) {
		snprintf(err, err_size, "settings.qos and vlan_proto need a vlan");
		return -EINVAL;
	}
	s.has_mac = s.has_mac && first;
	s.pkey = settings->pkey;
	if (guid[0] && vfp_guid_parse(guid, &s.node_guid) == 0) {
		s.port_guid = s.node_guid;
		s.has_node_guid = s.has_port_guid = true;
	}
	*ret = s;
	return 0;
}

static int pf_ifindex(struct nl_conn *c, const char *name, int *ret, char *err, size_t err_size)
{
	struct nl_link l = { 0 };
	int r = nl_conn_get_link(c, name, &l, err, err_size);

	if (r >= 0)
		*ret = l.ifindex;
	return r;
}

/*
 * VF @index's settings as the PF reports them now (IFLA_VFINFO_LIST of the
 * PF's netdev, asked by name: one exchange), over this thread's netlink
 * socket; one that failed to send or receive is not kept.
 */
int vfconfig_read(const struct vf_target *t, struct vfp_vf_config *ret, char *err, size_t err_size)
{
	struct nl_conn *c = NULL;
	_cleanup_free_ void *reply = NULL;
	char buf[NL_BUF_SIZE];
	size_t n;
	int r = t->pf_netdev ? nl_conn_thread_route(&c) : -ENODEV;

	if (r >= 0 && strlen(t->pf_netdev) >= IFNAMSIZ)
		r = -ENODEV;
	if (r >= 0)
		r = nl_conn_send(c, buf, vfinfo_build_get(buf, c->seq++, t->pf_netdev));
	if (r >= 0)
		r = nl_conn_recv(c, &reply, &n);
	if (r >= 0)
		r = ((struct nlmsghdr *)reply)->nlmsg_type == NLMSG_ERROR
			    ? nl_parse_ack(reply, n, err, err_size)
			    : vfinfo_parse(reply, n, t->index, ret);
	if (c)
		nl_conn_thread_done(c);
	if (r == -ENOENT) {
		snprintf(err, err_size, "PF %s reports no VF %u: its driver has no SR-IOV VF "
			 "settings", t->pf_netdev, t->index);
		r = -EOPNOTSUPP;
	} else if (r < 0) {
		snprintf(err, err_size, "reading VF %u's settings on PF %s: %s", t->index,
			 t->pf_netdev ? t->pf_netdev : t->pf_pci, strerror(-r));
	}
	return r;
}

/* GUIDs and a partition: nothing the PF's netdev has a say in. */
static bool only_guids(const struct vfp_vf_config *s)
{
	struct vfp_vf_config rest = *s;

	rest.has_node_guid = rest.has_port_guid = false;
	rest.pkey = VFP_UNSET;
	return vfp_vf_config_is_empty(&rest);
}

/**
 * vfconfig_snapshot() - the current values of the fields @want would change
 *
 * The restore point: only what the attach changes is put back. GUIDs the
 * PF does not report are left out, and a PF with no netdev has nothing to
 * report: that is not an error when only GUIDs are wanted.
 */
int vfconfig_snapshot(const struct vf_target *t, const struct vfp_vf_config *want,
		      struct vfp_vf_config *ret, char *err, size_t err_size)
{
	struct vfp_vf_config now, s;
	int r = vfconfig_read(t, &now, err, err_size);

	vfp_vf_config_init(&s, t->index);
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
	s.spoofchk = want->spoofchk >= 0 ? now.spoofchk : VFP_UNSET;
	s.trust = want->trust >= 0 ? now.trust : VFP_UNSET;
	s.link_state = want->link_state >= 0 ? now.link_state : VFP_UNSET;
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

/* Over this thread's netlink socket, as vfconfig_read(). */
static int set_vf(const struct vf_target *t, const struct vfp_vf_config *s, char *err,
		  size_t err_size)
{
	struct nl_conn *c = NULL;
	_cleanup_free_ char *buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	int ifindex = 0, r = !buf ? -ENOMEM : t->pf_netdev ? nl_conn_thread_route(&c) : -ENODEV;

	if (r >= 0)
		r = pf_ifindex(c, t->pf_netdev, &ifindex, err, err_size);
	if (r >= 0)
		r = nl_conn_ack(c, buf, vfinfo_build_set(buf, MNL_SOCKET_BUFFER_SIZE, c->seq++,
							  ifindex, s), err, err_size);
	if (c)
		nl_conn_thread_done(c);
	return r;
}

/*
 * Node and port GUID over netlink, else (refused, or no PF netdev) through
 * the PF driver's sysfs files; then the VF is rebound to take them, unless
 * it goes to a guest: its driver there reads them when it first probes
 * (and libvirt unbinds the host's driver first anyway).
 */
static int set_guids(const struct vf_target *t, const struct vfp_vf_config *s, char *err,
		     size_t err_size)
{
	struct vfp_vf_config g;
	char node[24], port[24], msg[AGENT_ERR_SIZE] = "";
	int r;

	vfp_vf_config_init(&g, t->index);
	g.has_node_guid = s->has_node_guid;
	g.node_guid = s->node_guid;
	g.has_port_guid = s->has_port_guid;
	g.port_guid = s->port_guid;
	r = set_vf(t, &g, msg, sizeof(msg));
	if (r == -EOPNOTSUPP || r == -EINVAL || r == -ENODEV) {
		vfp_guid_format(s->has_node_guid ? s->node_guid : s->port_guid, node);
		vfp_guid_format(s->has_port_guid ? s->port_guid : s->node_guid, port);
		r = vfp_vf_write_ib_guids(t->ctx, t->pf_pci, t->pf_driver, t->index, node, port);
		if (r < 0)
			snprintf(msg, sizeof(msg), "netlink refused and %s has no GUID files "
				 "we can write (%s)", t->pf_driver ? t->pf_driver : "the PF driver",
				 strerror(-r));
	}
	if (r >= 0 && !t->for_guest) {
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
int vfconfig_apply(const struct vf_target *t, const struct vfp_vf_config *s, char *err,
		   size_t err_size)
{
	struct vfp_vf_config rest = *s;
	char msg[AGENT_ERR_SIZE] = "";
	int r = 0;

	err[0] = '\0';
	rest.has_node_guid = rest.has_port_guid = false;
	rest.pkey = VFP_UNSET; /* the partition is pf_side_map_partition()'s */
	if (!vfp_vf_config_is_empty(&rest)) {
		r = set_vf(t, &rest, msg, sizeof(msg));
		if (r < 0)
			snprintf(err, err_size, "PF %s, VF %u: %s", t->pf_netdev ? t->pf_netdev :
				 t->pf_pci, t->index, msg[0] ? msg : strerror(-r));
	}
	if (r >= 0 && (s->has_node_guid || s->has_port_guid))
		r = set_guids(t, s, err, err_size);
	return r;
}
