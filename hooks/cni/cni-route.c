/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The routes of a result, set in the container's namespace as the reference
 * plugins set them (containernetworking/plugins' ipam.ConfigureIface): each
 * of IPAM's routes out of the interface, via its "gw" or else the gateway of
 * the first IP of its family; a default route per family, so IPv4 and IPv6
 * together. A route that cannot be set is named with the kernel's reason.
 * CHECK finds each route of prevResult again, in whatever table. rtnetlink over a socket opened
 * inside the namespace: the plugin links libc and jansson only.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cni.h"
#include "libvfpool/macro.h"

#define BUF_SIZE 32768

struct route {
	int family;
	unsigned char dst[16], gw[16];
	unsigned plen;
	bool has_gw;
	char text[160]; /* "10.1.0.0/16 via 10.0.0.1 dev net1", for messages */
};

/* "10.1.0.0/16" or "::/0" into @r. */
static int parse_dst(const char *s, struct route *r)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = s ? strchr(s, '/') : NULL;
	unsigned plen;

	if (!slash || (size_t)(slash - s) >= sizeof(addr) || sscanf(slash + 1, "%u", &plen) != 1)
		return -EINVAL;
	snprintf(addr, sizeof(addr), "%.*s", (int)(slash - s), s);
	r->family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	r->plen = plen;
	if (inet_pton(r->family, addr, r->dst) != 1 || plen > (r->family == AF_INET ? 32u : 128u))
		return -EINVAL;
	return 0;
}

/* The gateway of the first IP of @family that has one (the reference plugins' rule). */
static const char *family_gateway(json_t *ips, int family)
{
	json_t *ip;
	size_t i;

	json_array_foreach(ips, i, ip) {
		const char *a = json_string_value(json_object_get(ip, "address"));
		const char *gw = json_string_value(json_object_get(ip, "gateway"));

		if (a && gw && (strchr(a, ':') ? AF_INET6 : AF_INET) == family)
			return gw;
	}
	return NULL;
}

/* Route @i of @routes into @r, its gateway from @ips when it names none. */
static int route_of(json_t *routes, size_t i, json_t *ips, const char *ifname, struct route *r,
		    struct cni_error *e)
{
	json_t *v = json_array_get(routes, i);
	const char *dst = json_string_value(json_object_get(v, "dst"));
	const char *gw = json_string_value(json_object_get(v, "gw"));

	*r = (struct route){ 0 };
	if (parse_dst(dst, r) < 0)
		return cni_fail(e, CNI_ERR_DECODE, "failed to decode content",
				"routes[%zu].dst: \"%.64s\" is not an address/prefix", i,
				dst ? dst : "");
	if (!gw)
		gw = family_gateway(ips, r->family);
	if (gw && inet_pton(r->family, gw, r->gw) != 1)
		return cni_fail(e, CNI_ERR_DECODE, "failed to decode content",
				"routes[%zu].gw: \"%.64s\" is not an address of %s's family", i, gw,
				dst);
	r->has_gw = gw != NULL;
	snprintf(r->text, sizeof(r->text), "%s%s%s dev %s", dst, gw ? " via " : "", gw ? gw : "",
		 ifname);
	return 0;
}

static void put_attr(struct nlmsghdr *nlh, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	nlh->nlmsg_len = NLMSG_ALIGN(nlh->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* RTM_NEWROUTE of @r out of @ifindex, and the kernel's answer: 0 or -errno. */
static int add_route(int fd, int ifindex, const struct route *r, unsigned seq)
{
	char buf[1024] __attribute__((aligned(NLMSG_ALIGNTO))) = { 0 };
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct rtmsg *rtm = NLMSG_DATA(nlh);
	size_t len = r->family == AF_INET ? 4 : 16;
	uint32_t oif = (uint32_t)ifindex;
	ssize_t n;

	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*rtm));
	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	nlh->nlmsg_seq = seq;
	*rtm = (struct rtmsg){ .rtm_family = (unsigned char)r->family,
			       .rtm_dst_len = (unsigned char)r->plen,
			       .rtm_table = RT_TABLE_MAIN,
			       .rtm_protocol = RTPROT_BOOT,
			       .rtm_scope = r->has_gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK,
			       .rtm_type = RTN_UNICAST };
	if (r->plen)
		put_attr(nlh, RTA_DST, r->dst, len);
	if (r->has_gw)
		put_attr(nlh, RTA_GATEWAY, r->gw, len);
	put_attr(nlh, RTA_OIF, &oif, sizeof(oif));
	if (send(fd, buf, nlh->nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	if ((size_t)n >= NLMSG_LENGTH(sizeof(struct nlmsgerr)) && nlh->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(nlh))->error;
	return -EIO;
}

/* A rtnetlink socket and @ifname's index, both of @netns. */
static int open_in(const char *netns, const char *ifname, int *ret_fd, int *ret_index,
		   struct cni_error *e)
{
	int home, fd, index;

	if (cni_netns_enter(netns, &home, e) < 0)
		return -1;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	index = (int)if_nametoindex(ifname);
	cni_netns_leave(home);
	if (fd < 0)
		return cni_fail(e, CNI_ERR_IO, "I/O failure", "rtnetlink: %s", strerror(errno));
	if (!index) {
		close(fd);
		return cni_fail(e, CNI_ERR_NETNS, "the interface is not in the container",
				"%s is not in %s", ifname, netns);
	}
	*ret_fd = fd;
	*ret_index = index;
	return 0;
}

typedef int (*route_visit)(int fd, int index, const struct route *rt, size_t i, const char *netns,
			   struct cni_error *e);

/*
 * @visit for each of @routes (gateways from @ips) out of @ifname in @netns,
 * until one fails; -1 with @e set by what failed.
 */
static int each_route(const char *netns, const char *ifname, json_t *routes, json_t *ips,
		      route_visit visit, struct cni_error *e)
{
	_cleanup_close_ int fd = -1;
	int index = 0, r = 0;

	if (json_array_size(routes) == 0)
		return 0;
	if (open_in(netns, ifname, &fd, &index, e) < 0)
		return -1;
	for (size_t i = 0; r >= 0 && i < json_array_size(routes); i++) {
		struct route rt;

		r = route_of(routes, i, ips, ifname, &rt, e);
		if (r >= 0)
			r = visit(fd, index, &rt, i, netns, e);
	}
	return r < 0 ? -1 : 0;
}

static int set_route(int fd, int index, const struct route *rt, size_t i, const char *netns,
		     struct cni_error *e)
{
	int r = add_route(fd, index, rt, (unsigned)i + 1);

	(void)netns;
	if (r < 0)
		cni_fail(e, CNI_ERR_ROUTE, "a route could not be set", "route %s: %s%s", rt->text,
			 strerror(-r),
			 r == -EEXIST ? " (the namespace has this route already: another "
					"network's?)"
				      : "");
	return r;
}

/**
 * cni_netns_routes() - IPAM's routes (@ipam's "routes", gateways from its
 * "ips") set out of @ifname in @netns
 */
int cni_netns_routes(const char *netns, const char *ifname, json_t *ipam, struct cni_error *e)
{
	return each_route(netns, ifname, json_object_get(ipam, "routes"),
			  json_object_get(ipam, "ips"), set_route, e);
}

/*
 * Whether one RTM_NEWROUTE of a dump is @want: its destination and gateway,
 * out of any interface, in any table (a later plugin of the chain may have
 * moved it, as the spec allows: sbr moves an interface's routes to a table
 * of their own).
 */
static bool is_route(const struct nlmsghdr *nlh, const struct route *want)
{
	const struct rtmsg *rtm = NLMSG_DATA(nlh);
	int len = (int)RTM_PAYLOAD(nlh);
	size_t alen = want->family == AF_INET ? 4 : 16;
	bool dst_ok = want->plen == 0, gw_ok = !want->has_gw;

	if (rtm->rtm_family != want->family || rtm->rtm_dst_len != want->plen)
		return false;
	for (const struct rtattr *a = RTM_RTA(rtm); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_DST && RTA_PAYLOAD(a) == alen)
			dst_ok = memcmp(RTA_DATA(a), want->dst, alen) == 0;
		else if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == alen)
			gw_ok = want->has_gw && memcmp(RTA_DATA(a), want->gw, alen) == 0;
	}
	return dst_ok && gw_ok;
}

/* Whether @fd's namespace has @want: 1, 0, or -errno. */
static int find_route(int fd, const struct route *want)
{
	struct {
		struct nlmsghdr nlh;
		struct rtmsg rtm;
	} req = { .nlh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETROUTE,
			   .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		  .rtm = { .rtm_family = (unsigned char)want->family } };
	static char buf[BUF_SIZE] __attribute__((aligned(NLMSG_ALIGNTO)));
	bool found = false;

	if (send(fd, &req, sizeof(req), 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		int len = (int)n;

		if (n < 0)
			return -errno;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return found;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error ?: -EIO;
			if (h->nlmsg_type == RTM_NEWROUTE && is_route(h, want))
				found = true;
		}
	}
}

static int check_route(int fd, int index, const struct route *rt, size_t i, const char *netns,
		       struct cni_error *e)
{
	int q = find_route(fd, rt);

	(void)index, (void)i;
	if (q == 0)
		return cni_fail(e, CNI_ERR_NETNS, "a route is missing", "route %s: not in %s",
				rt->text, netns);
	if (q < 0)
		return cni_fail(e, CNI_ERR_IO, "I/O failure", "listing routes: %s", strerror(-q));
	return 0;
}

/**
 * cni_netns_check_routes() - each of @routes (prevResult's, gateways from
 * its @ips) is in @netns out of @ifname
 */
int cni_netns_check_routes(const char *netns, const char *ifname, json_t *routes, json_t *ips,
			   struct cni_error *e)
{
	return each_route(netns, ifname, routes, ips, check_route, e);
}
