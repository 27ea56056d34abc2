/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/netlink/nlmsg.h"

static struct nlmsghdr *start(void *buf, uint16_t type, uint16_t flags, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	return nlh;
}

/**
 * nl_attr_put() - mnl_attr_put(), with the padding after @data zeroed
 *
 * libmnl 1.0.4 (Debian 12's) leaves it as the buffer had it: stack bytes
 * sent to the kernel, which ignores them (valgrind rightly says so).
 */
void nl_attr_put(struct nlmsghdr *nlh, uint16_t type, size_t len, const void *data)
{
	size_t pad = MNL_ALIGN(len) - len;

	mnl_attr_put(nlh, type, len, data);
	memset((char *)nlh + nlh->nlmsg_len - pad, 0, pad);
}

void nl_attr_put_strz(struct nlmsghdr *nlh, uint16_t type, const char *s)
{
	nl_attr_put(nlh, type, strlen(s) + 1, s);
}

/* RTM_GETLINK by index, or by name when @ifindex is 0. */
size_t nl_build_getlink(void *buf, uint32_t seq, int ifindex, const char *name)
{
	struct nlmsghdr *nlh = start(buf, RTM_GETLINK, 0, seq);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (!ifindex && name)
		nl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	return nlh->nlmsg_len;
}

/* RTM_GETLINK by index with the link's counters (IFLA_STATS64), which the others skip. */
size_t nl_build_getlink_stats(void *buf, uint32_t seq, int ifindex)
{
	struct nlmsghdr *nlh = start(buf, RTM_GETLINK, 0, seq);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return nlh->nlmsg_len;
}

/* RTM_GETLINK of every link in the namespace. */
size_t nl_build_dumplinks(void *buf, uint32_t seq)
{
	struct nlmsghdr *nlh = start(buf, RTM_GETLINK, NLM_F_DUMP, seq);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	return nlh->nlmsg_len;
}

/* RTM_GETNSID: the id the socket's namespace has for the namespace @netns_fd. */
size_t nl_build_getnsid(void *buf, uint32_t seq, int netns_fd)
{
	struct nlmsghdr *nlh = start(buf, RTM_GETNSID, 0, seq);
	struct rtgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));

	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NETNSA_FD, (uint32_t)netns_fd);
	return nlh->nlmsg_len;
}

/*
 * RTM_NEWLINK on an existing link. With a netns fd and a name in one
 * message, the rename happens in the target namespace: the new name never
 * shows up in the host, where udev could race for it.
 */
size_t nl_build_setlink(void *buf, uint32_t seq, int ifindex, const struct nl_link_change *c)
{
	struct nlmsghdr *nlh = start(buf, RTM_NEWLINK, NLM_F_ACK, seq);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (c->up >= 0) {
		ifi->ifi_change = IFF_UP;
		ifi->ifi_flags = c->up ? IFF_UP : 0;
	}
	if (c->name)
		nl_attr_put_strz(nlh, IFLA_IFNAME, c->name);
	if (c->netns_fd >= 0)
		mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)c->netns_fd);
	if (c->mtu)
		mnl_attr_put_u32(nlh, IFLA_MTU, c->mtu);
	if (c->mac)
		nl_attr_put(nlh, IFLA_ADDRESS, 6, c->mac);
	if (c->nomaster)
		mnl_attr_put_u32(nlh, IFLA_MASTER, 0);
	if (c->alias) /* the kernel takes the bytes, no NUL; none clears it */
		nl_attr_put(nlh, IFLA_IFALIAS, strlen(c->alias), c->alias);
	return nlh->nlmsg_len;
}

/* RTM_DELLINK of link @ifindex. */
size_t nl_build_dellink(void *buf, uint32_t seq, int ifindex)
{
	struct nlmsghdr *nlh = start(buf, RTM_DELLINK, NLM_F_ACK, seq);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return nlh->nlmsg_len;
}

/* RTM_NEWLINKPROP (@add) or RTM_DELLINKPROP: alternative name @altname of link @ifindex. */
size_t nl_build_altname(void *buf, uint32_t seq, int ifindex, bool add, const char *altname)
{
	struct nlmsghdr *nlh = start(buf, add ? RTM_NEWLINKPROP : RTM_DELLINKPROP,
				     NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_EXCL : 0), seq);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *list;

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	list = mnl_attr_nest_start(nlh, IFLA_PROP_LIST);
	nl_attr_put_strz(nlh, IFLA_ALT_IFNAME, altname);
	mnl_attr_nest_end(nlh, list);
	return nlh->nlmsg_len;
}

size_t nl_build_addr(void *buf, uint32_t seq, int ifindex, int family, const void *addr,
		     unsigned prefixlen)
{
	struct nlmsghdr *nlh = start(buf, RTM_NEWADDR, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, seq);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	size_t len = family == AF_INET ? 4 : 16;

	ifa->ifa_family = (unsigned char)family;
	ifa->ifa_prefixlen = (unsigned char)prefixlen;
	ifa->ifa_index = (unsigned)ifindex;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	nl_attr_put(nlh, IFA_LOCAL, len, addr);
	nl_attr_put(nlh, IFA_ADDRESS, len, addr);
	if (family == AF_INET && prefixlen < 31) { /* "brd +", as iproute2 and the CNI plugins */
		uint32_t a, brd;

		memcpy(&a, addr, 4);
		brd = a | htonl(prefixlen ? 0xffffffffu >> prefixlen : 0xffffffffu);
		nl_attr_put(nlh, IFA_BROADCAST, 4, &brd);
	}
	return nlh->nlmsg_len;
}

/* RTM_NEWROUTE: the default route of @family via @gateway, out of @ifindex. */
size_t nl_build_default_route(void *buf, uint32_t seq, int ifindex, int family,
			      const void *gateway)
{
	struct nlmsghdr *nlh = start(buf, RTM_NEWROUTE, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, seq);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

	rtm->rtm_family = (unsigned char)family;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	nl_attr_put(nlh, RTA_GATEWAY, family == AF_INET ? 4 : 16, gateway);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	return nlh->nlmsg_len;
}

struct link_attrs {
	const struct nlattr *tb[IFLA_MAX + 1];
};

static int link_attr(const struct nlattr *attr, void *data)
{
	struct link_attrs *a = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, IFLA_MAX) < 0)
		return MNL_CB_OK; /* newer than this build: skip it */
	switch (type) {
	case IFLA_IFNAME:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return MNL_CB_ERROR;
		break;
	case IFLA_MTU:
	case IFLA_LINK:
	case IFLA_LINK_NETNSID:
	case IFLA_MASTER:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			return MNL_CB_ERROR;
		break;
	case IFLA_PARENT_DEV_NAME:
	case IFLA_PARENT_DEV_BUS_NAME:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return MNL_CB_ERROR;
		break;
	case IFLA_LINKINFO:
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
			return MNL_CB_ERROR;
		break;
	case IFLA_STATS64: /* struct rtnl_link_stats64, which only grows: its first two read */
		if (mnl_attr_get_payload_len(attr) < 2 * sizeof(uint64_t))
			return MNL_CB_ERROR;
		break;
	default:
		break;
	}
	a->tb[type] = attr;
	return MNL_CB_OK;
}

/* The alternative names in IFLA_PROP_LIST, as many as fit in @l->altnames. */
static void link_altnames(const struct nlattr *list, struct nl_link *l)
{
	const struct nlattr *attr;

	mnl_attr_for_each_nested(attr, list) {
		size_t used = strlen(l->altnames), len;
		const char *name;

		if (mnl_attr_get_type(attr) != IFLA_ALT_IFNAME ||
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			continue;
		name = mnl_attr_get_str(attr);
		len = strlen(name);
		l->n_altnames++;
		if (used + 1 + len >= sizeof(l->altnames))
			continue;
		if (used)
			l->altnames[used++] = ' ';
		memcpy(l->altnames + used, name, len + 1);
	}
}

/* A VLAN link's id, from IFLA_INFO_DATA; -1 when it carries none. */
static int link_vlan_id(const struct nlattr *data)
{
	const struct nlattr *attr;

	mnl_attr_for_each_nested(attr, data)
		if (mnl_attr_get_type(attr) == IFLA_VLAN_ID &&
		    mnl_attr_validate(attr, MNL_TYPE_U16) >= 0)
			return mnl_attr_get_u16(attr);
	return -1;
}

/* What kind of link it is (IFLA_LINKINFO's IFLA_INFO_KIND) and, for a VLAN link, its id. */
static void link_kind(const struct nlattr *info, struct nl_link *l)
{
	const struct nlattr *attr, *data = NULL;

	mnl_attr_for_each_nested(attr, info) {
		if (mnl_attr_get_type(attr) == IFLA_INFO_KIND &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(l->kind, sizeof(l->kind), "%s", mnl_attr_get_str(attr));
		if (mnl_attr_get_type(attr) == IFLA_INFO_DATA &&
		    mnl_attr_validate(attr, MNL_TYPE_NESTED) >= 0)
			data = attr;
	}
	if (data && !strcmp(l->kind, "vlan"))
		l->vlan_id = link_vlan_id(data);
}

/* Who the link is: its parent device, and the link it stands on (a veth's peer). */
static void link_relations(const struct link_attrs *a, struct nl_link *l)
{
	l->link_netnsid = -1;
	if (a->tb[IFLA_LINK])
		l->iflink = (int)mnl_attr_get_u32(a->tb[IFLA_LINK]);
	if (a->tb[IFLA_LINK_NETNSID])
		l->link_netnsid = (int)mnl_attr_get_u32(a->tb[IFLA_LINK_NETNSID]);
	if (a->tb[IFLA_PARENT_DEV_NAME])
		snprintf(l->parent_dev, sizeof(l->parent_dev), "%s",
			 mnl_attr_get_str(a->tb[IFLA_PARENT_DEV_NAME]));
	if (a->tb[IFLA_PARENT_DEV_BUS_NAME])
		snprintf(l->parent_bus, sizeof(l->parent_bus), "%s",
			 mnl_attr_get_str(a->tb[IFLA_PARENT_DEV_BUS_NAME]));
}

/**
 * nl_parse_link() - an RTM_NEWLINK reply into @ret
 *
 * -EBADMSG for a truncated message or an attribute of the wrong size;
 * -EPROTO when it is not a link message; unknown attributes are skipped.
 */
int nl_parse_link(const void *buf, size_t len, struct nl_link *ret)
{
	const struct nlmsghdr *nlh = buf;
	const struct ifinfomsg *ifi;
	struct link_attrs a = { { NULL } };
	struct nl_link l = { 0 };

	if (!nl_msg_ok(nlh, len) || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifi)))
		return -EBADMSG;
	if (nlh->nlmsg_type != RTM_NEWLINK)
		return -EPROTO;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (mnl_attr_parse(nlh, sizeof(*ifi), link_attr, &a) < 0)
		return -EBADMSG;
	if (!a.tb[IFLA_IFNAME])
		return -EBADMSG;
	l.ifindex = ifi->ifi_index;
	l.flags = ifi->ifi_flags;
	snprintf(l.name, sizeof(l.name), "%s", mnl_attr_get_str(a.tb[IFLA_IFNAME]));
	if (a.tb[IFLA_MTU])
		l.mtu = mnl_attr_get_u32(a.tb[IFLA_MTU]);
	link_relations(&a, &l);
	if (a.tb[IFLA_MASTER])
		l.master = (int)mnl_attr_get_u32(a.tb[IFLA_MASTER]);
	l.vlan_id = -1;
	if (a.tb[IFLA_STATS64]) {
		const char *st = mnl_attr_get_payload(a.tb[IFLA_STATS64]);

		l.has_stats = true;
		memcpy(&l.rx_packets, st, sizeof(l.rx_packets));
		memcpy(&l.tx_packets, st + sizeof(l.rx_packets), sizeof(l.tx_packets));
	}
	if (a.tb[IFLA_LINKINFO])
		link_kind(a.tb[IFLA_LINKINFO], &l);
	if (a.tb[IFLA_PROP_LIST] && mnl_attr_validate(a.tb[IFLA_PROP_LIST], MNL_TYPE_NESTED) >= 0)
		link_altnames(a.tb[IFLA_PROP_LIST], &l);
	l.has_alias = a.tb[IFLA_IFALIAS] && mnl_attr_get_payload_len(a.tb[IFLA_IFALIAS]) > 0 &&
		      *(const char *)mnl_attr_get_payload(a.tb[IFLA_IFALIAS]);
	if (a.tb[IFLA_ADDRESS] && mnl_attr_get_payload_len(a.tb[IFLA_ADDRESS]) <= sizeof(l.mac)) {
		l.mac_len = mnl_attr_get_payload_len(a.tb[IFLA_ADDRESS]);
		memcpy(l.mac, mnl_attr_get_payload(a.tb[IFLA_ADDRESS]), l.mac_len);
	}
	*ret = l;
	return 0;
}

static int nsid_attr(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(attr, NETNSA_MAX) < 0)
		return MNL_CB_OK;
	if (mnl_attr_get_type(attr) == NETNSA_NSID && mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
		return MNL_CB_ERROR;
	tb[mnl_attr_get_type(attr)] = attr;
	return MNL_CB_OK;
}

/* An RTM_NEWNSID reply: the id, or -1 (NETNSA_NSID_NOT_ASSIGNED). */
int nl_parse_nsid(const void *buf, size_t len, int *ret_nsid)
{
	const struct nlmsghdr *nlh = buf;
	const struct nlattr *tb[NETNSA_MAX + 1] = { NULL };

	if (!nl_msg_ok(nlh, len) || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct rtgenmsg)))
		return -EBADMSG;
	if (nlh->nlmsg_type != RTM_NEWNSID)
		return -EPROTO;
	if (mnl_attr_parse(nlh, sizeof(struct rtgenmsg), nsid_attr, tb) < 0 || !tb[NETNSA_NSID])
		return -EBADMSG;
	*ret_nsid = (int)mnl_attr_get_u32(tb[NETNSA_NSID]);
	return 0;
}

/*
 * An NLMSG_ERROR ack: 0 for success, else the kernel's -errno as it came,
 * with its extended-ack text (if any) in @msg.
 */
int nl_parse_ack(const void *buf, size_t len, char *msg, size_t msg_size)
{
	const struct nlmsghdr *nlh = buf;
	const struct nlmsgerr *err;
	const struct nlattr *attr;

	msg[0] = '\0';
	if (!nl_msg_ok(nlh, len))
		return -EBADMSG;
	if (nlh->nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err)))
		return -EBADMSG;
	err = mnl_nlmsg_get_payload(nlh);
	if (err->error == 0)
		return 0;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		size_t off = sizeof(*err), payload = mnl_nlmsg_get_payload_len(nlh);

		/* the echoed request's length is the sender's word: check it against ours */
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off = err->msg.nlmsg_len >= sizeof(struct nlmsghdr) &&
				      err->msg.nlmsg_len - sizeof(struct nlmsghdr) <= payload - off
				      ? off + err->msg.nlmsg_len - sizeof(struct nlmsghdr)
				      : payload;
		mnl_attr_for_each(attr, nlh, off)
			if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
			    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				snprintf(msg, msg_size, "%s", mnl_attr_get_str(attr));
	}
	return err->error < 0 ? err->error : -EPROTO;
}

/**
 * nl_msg_ok() - @nlh is a whole message inside @len bytes
 *
 * As mnl_nlmsg_ok(), but stricter where libmnl trusts the sender: the
 * claimed nlmsg_len is compared unsigned (libmnl casts it to int, and 2^31
 * or more passes), and with its padding (libmnl's attribute walk reads up
 * to the aligned end).
 */
bool nl_msg_ok(const struct nlmsghdr *nlh, size_t len)
{
	return len >= sizeof(*nlh) && len <= INT32_MAX && nlh->nlmsg_len >= sizeof(*nlh) &&
	       nlh->nlmsg_len <= len && MNL_ALIGN(nlh->nlmsg_len) <= len;
}

/* "10.1.0.5/16" or "fd00::5/64". */
int nl_parse_prefix(const char *s, int *ret_family, unsigned char addr[16], unsigned *ret_len)
{
	char host[64];
	const char *slash = strchr(s, '/');
	char *end;
	long len;
	int family;

	if (!slash || (size_t)(slash - s) >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, (size_t)(slash - s));
	host[slash - s] = '\0';
	family = strchr(host, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(family, host, addr) != 1)
		return -EINVAL;
	len = strtol(slash + 1, &end, 10);
	if (!slash[1] || *end || len < 0 || len > (family == AF_INET ? 32 : 128))
		return -EINVAL;
	*ret_family = family;
	*ret_len = (unsigned)len;
	return 0;
}
