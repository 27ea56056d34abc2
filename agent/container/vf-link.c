/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent/container/vf-link.h"
#include "agent/netlink/nlsock.h"

static bool is_device(const struct nl_link *l, const void *pci)
{
	return strcmp(l->parent_bus, "pci") == 0 && strcmp(l->parent_dev, pci) == 0;
}

/**
 * vf_link_identify() - how the host's link @netdev will be known as VF @pci
 *
 * In the host, before it moves. A link whose parent device is another
 * device is refused (sysfs and the kernel disagree); a link with no parent
 * is a stand-in, known by its veth peer in the host.
 */
int vf_link_identify(const char *netdev, const char *pci, struct vf_link_id *ret,
		     struct nl_link *ret_link, char *err, size_t err_size)
{
	struct nl_conn host = { 0 };
	struct nl_link l = { 0 };
	int r = nl_conn_open(NETLINK_ROUTE, -1, &host);

	if (r >= 0)
		r = nl_conn_get_link(&host, netdev, &l, err, err_size);
	nl_conn_close(&host);
	if (r < 0) {
		snprintf(err, err_size, "netdev %s: %s", netdev, strerror(-r));
		return r;
	}
	if (strcmp(l.name, netdev) != 0) { /* the kernel looks names up among altnames too */
		snprintf(err, err_size, "netdev %s is an alternative name of %s: not the VF's own",
			 netdev, l.name);
		return -ENODEV;
	}
	*ret = (struct vf_link_id){ .pci = pci, .ifindex = l.ifindex };
	if (l.parent_dev[0] && !is_device(&l, pci)) {
		snprintf(err, err_size, "netdev %s belongs to %s device %s, not to VF %s", netdev,
			 l.parent_bus, l.parent_dev, pci);
		return -ENODEV;
	}
	if (!l.parent_dev[0]) {
		if (l.iflink <= 0 || l.iflink == l.ifindex || l.link_netnsid >= 0) {
			snprintf(err, err_size, "netdev %s has no parent device and no peer in the "
				 "host: nothing the agent could know it by in a namespace", netdev);
			return -ENODEV;
		}
		ret->peer_ifindex = l.iflink;
	}
	*ret_link = l;
	return 0;
}

/* A real VF's netdev in the socket's namespace: at its last ifindex, or searched. */
static int find_device(struct nl_conn *c, const struct vf_link_id *id, struct nl_link *ret)
{
	if (nl_conn_get_link_index(c, id->ifindex, ret) >= 0 && is_device(ret, id->pci))
		return 0;
	return nl_conn_find_link(c, is_device, id->pci, ret);
}

/*
 * A stand-in in @netns_fd (-1: the host), through its peer: the peer names
 * its ifindex and the namespace it is in, as the host sees them.
 */
static int find_stand_in(struct nl_conn *host, const struct vf_link_id *id, int netns_fd,
			 struct nl_link *ret)
{
	struct nl_conn inside = { 0 };
	struct nl_link peer = { 0 };
	int nsid = -1, r = nl_conn_get_link_index(host, id->peer_ifindex, &peer);

	if (r >= 0 && peer.iflink <= 0)
		r = -ENODEV;
	if (r >= 0 && netns_fd < 0)
		return peer.link_netnsid >= 0 ? -ENODEV
					      : nl_conn_get_link_index(host, peer.iflink, ret);
	if (r >= 0)
		r = nl_conn_get_nsid(host, netns_fd, &nsid);
	if (r >= 0 && (peer.link_netnsid < 0 || peer.link_netnsid != nsid))
		r = -ENODEV; /* not in that namespace */
	if (r >= 0)
		r = nl_conn_open(NETLINK_ROUTE, netns_fd, &inside);
	if (r >= 0)
		r = nl_conn_get_link_index(&inside, peer.iflink, ret);
	if (r >= 0 && ret->iflink != id->peer_ifindex)
		r = -ENODEV;
	nl_conn_close(&inside);
	return r;
}

/**
 * vf_link_find() - VF @id's netdev in the namespace @netns_fd (-1: the host)
 *
 * -ENODEV when it is not there, whatever links of its name there are.
 */
int vf_link_find(const struct vf_link_id *id, int netns_fd, struct nl_link *ret)
{
	struct nl_conn c = { 0 };
	int r;

	if (id->peer_ifindex) {
		r = nl_conn_open(NETLINK_ROUTE, -1, &c);
		if (r >= 0)
			r = find_stand_in(&c, id, netns_fd, ret);
	} else {
		r = nl_conn_open(NETLINK_ROUTE, netns_fd, &c);
		if (r >= 0)
			r = find_device(&c, id, ret);
	}
	nl_conn_close(&c);
	return r;
}
