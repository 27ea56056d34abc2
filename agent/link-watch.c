/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "libvfpool/macro.h"
#include "agent/link-watch.h"
#include "agent/netlink/nlmsg.h"

struct link_watch {
	struct mnl_socket *nl;
};

int link_watch_new(struct link_watch **ret, int *ret_fd)
{
	struct link_watch *w = calloc(1, sizeof(*w));
	int r = 0;

	if (!w)
		return -ENOMEM;
	w->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!w->nl || mnl_socket_bind(w->nl, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0)
		r = negative_errno();
	if (r < 0) {
		link_watch_free(w);
		return r;
	}
	*ret_fd = mnl_socket_get_fd(w->nl);
	*ret = w;
	return 0;
}

void link_watch_free(struct link_watch *w)
{
	if (!w)
		return;
	if (w->nl)
		mnl_socket_close(w->nl);
	free(w);
}

/*
 * Reads every pending datagram; returns how many link messages came. An
 * overrun (ENOBUFS) counts as one: events were lost, so look anyway.
 */
int link_watch_drain(struct link_watch *w)
{
	char buf[32768]; /* a PF's event carries its VF list; one cut short still counts */
	int n = 0;

	for (;;) {
		ssize_t len = mnl_socket_recvfrom(w->nl, buf, sizeof(buf));
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		int left = (int)len;

		if (len < 0 && errno == ENOSPC) { /* truncated, and consumed */
			n++;
			continue;
		}
		if (len < 0)
			return errno == ENOBUFS ? n + 1 : n;
		for (; left >= 0 && nl_msg_ok(nlh, (size_t)left); nlh = mnl_nlmsg_next(nlh, &left))
			n += nlh->nlmsg_type == RTM_NEWLINK || nlh->nlmsg_type == RTM_DELLINK;
	}
}
