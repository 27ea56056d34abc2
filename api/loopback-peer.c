/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "api/loopback-peer.h"

static bool is_v4_loopback(const struct in_addr *addr)
{
	return (ntohl(addr->s_addr) >> 24) == 127;
}

/* A v4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 one it is. */
static bool v4_of_mapped(const struct sockaddr_storage *ss, struct sockaddr_in *out)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return false;
	*out = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = s6->sin6_port };
	memcpy(&out->sin_addr, &s6->sin6_addr.s6_addr[12], 4);
	return true;
}

/* Whether @peer is an address of this host that any local user may take. */
bool loopback_peer_is_local(const struct sockaddr_storage *peer)
{
	struct sockaddr_in v4;

	if (peer->ss_family == AF_INET)
		return is_v4_loopback(&((const struct sockaddr_in *)peer)->sin_addr);
	if (v4_of_mapped(peer, &v4))
		return is_v4_loopback(&v4.sin_addr);
	return peer->ss_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)peer)->sin6_addr);
}

/* The peer's socket as sock_diag names it: its address is our peer, its peer is us. */
static int diag_id(const struct sockaddr_storage *local, const struct sockaddr_storage *peer,
		   struct inet_diag_req_v2 *r)
{
	struct sockaddr_in l4, p4;

	r->sdiag_protocol = IPPROTO_TCP;
	r->idiag_states = ~0U;
	r->id.idiag_cookie[0] = r->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (v4_of_mapped(local, &l4) && v4_of_mapped(peer, &p4))
		local = (const struct sockaddr_storage *)&l4, peer = (const struct sockaddr_storage *)&p4;
	r->sdiag_family = peer->ss_family;
	if (peer->ss_family == AF_INET && local->ss_family == AF_INET) {
		const struct sockaddr_in *l = (const void *)local, *p = (const void *)peer;

		r->id.idiag_sport = p->sin_port;
		r->id.idiag_dport = l->sin_port;
		memcpy(r->id.idiag_src, &p->sin_addr, 4);
		memcpy(r->id.idiag_dst, &l->sin_addr, 4);
		return 0;
	}
	if (peer->ss_family == AF_INET6 && local->ss_family == AF_INET6) {
		const struct sockaddr_in6 *l = (const void *)local, *p = (const void *)peer;

		r->id.idiag_sport = p->sin6_port;
		r->id.idiag_dport = l->sin6_port;
		memcpy(r->id.idiag_src, &p->sin6_addr, 16);
		memcpy(r->id.idiag_dst, &l->sin6_addr, 16);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* One exact sock_diag lookup; the kernel answers before sendto() returns. */
static int ask(const struct inet_diag_req_v2 *q, unsigned *ret_uid)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req = { .nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			  .nlmsg_flags = NLM_F_REQUEST },
		  .r = *q };
	union {
		struct nlmsghdr nh;
		char buf[1024];
	} ans;
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), r = -EIO;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (send(fd, &req, sizeof(req), 0) < 0)
		r = -errno;
	else if ((n = recv(fd, &ans, sizeof(ans), MSG_DONTWAIT)) < 0)
		r = -errno;
	else if (!NLMSG_OK(&ans.nh, (size_t)n))
		r = -EIO;
	else if (ans.nh.nlmsg_type == NLMSG_ERROR)
		r = ((struct nlmsgerr *)NLMSG_DATA(&ans.nh))->error ?: -ENOENT;
	else if (ans.nh.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		 NLMSG_PAYLOAD(&ans.nh, 0) >= sizeof(struct inet_diag_msg)) {
		*ret_uid = ((struct inet_diag_msg *)NLMSG_DATA(&ans.nh))->idiag_uid;
		r = 0;
	}
	close(fd);
	return r;
}

/**
 * loopback_peer_uid() - the uid that owns the other end of TCP connection
 * @fd, whose peer is a loopback address
 *
 * -ENOENT when that socket is gone already; -errno when the kernel cannot
 * say (then the caller counts the connection against all local users).
 */
int loopback_peer_uid(int fd, unsigned *ret_uid)
{
	struct sockaddr_storage local, peer;
	socklen_t ll = sizeof(local), pl = sizeof(peer);
	struct inet_diag_req_v2 q = { 0 };
	int r;

	if (getsockname(fd, (struct sockaddr *)&local, &ll) < 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) < 0)
		return -errno;
	r = diag_id(&local, &peer, &q);
	return r < 0 ? r : ask(&q, ret_uid);
}
