/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tenant's program, for tests/tenant-undo.sh: it moves any link named
 * NAME of the namespace it runs in into the namespace at NETNS_PATH, again
 * and again, the instant it appears. It asks the kernel by name (index 0,
 * IFLA_IFNAME), so the name is looked up under the kernel's RTNL lock: a
 * request that waits behind the agent's move of a VF is served right after
 * it, before the agent's next step.
 *
 *   tenant-mover NETNS_PATH NAME
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <sys/socket.h>

/* One RTM_SETLINK of link @name into @netns_fd: 0 when it moved, else the kernel's -errno. */
static int move_once(struct mnl_socket *nl, unsigned seq, const char *name, int netns_fd)
{
	char buf[8192];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;
	ssize_t n;

	nlh->nlmsg_type = RTM_SETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)netns_fd);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	return mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(nl), NULL, NULL) < 0 ? -errno
											    : 0;
}

int main(int argc, char **argv)
{
	struct mnl_socket *nl;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s NETNS_PATH NAME\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (fd < 0 || !nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror(argv[1]);
		return 1;
	}
	for (unsigned seq = 1;; seq++)
		if (move_once(nl, seq, argv[2], fd) == 0) {
			printf("moved %s\n", argv[2]);
			fflush(stdout);
		}
}
