/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rtnetlink builders and parsers on synthesized messages: no socket, no kernel. */
#include "config.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>

#include "agent/netlink/nlmsg.h"
#include "libvfpool/libvfpool.h"
#include "check-suites.h"

/* A link reply as the kernel sends it, with an attribute this build may not know. */
static size_t make_link_reply(char *buf, const char *name, unsigned mtu)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	static const unsigned char mac[6] = { 0xfa, 0x16, 0x3e, 0, 0x51, 0x51 };

	nlh->nlmsg_type = RTM_NEWLINK;
	ifi->ifi_index = 7;
	ifi->ifi_flags = IFF_UP | IFF_BROADCAST;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	mnl_attr_put(nlh, IFLA_ADDRESS, sizeof(mac), mac);
	mnl_attr_put_u32(nlh, 0x7ff0, 42); /* unknown: skipped */
	return nlh->nlmsg_len;
}

START_TEST(test_parse_link)
{
	char buf[NL_BUF_SIZE];
	struct nl_link l = { 0 };
	size_t len = make_link_reply(buf, "ens5f0v0", 1500);

	ck_assert_int_eq(nl_parse_link(buf, len, &l), 0);
	ck_assert_int_eq(l.ifindex, 7);
	ck_assert_str_eq(l.name, "ens5f0v0");
	ck_assert_uint_eq(l.mtu, 1500);
	ck_assert_uint_eq(l.mac_len, 6);
	ck_assert_uint_eq(l.mac[5], 0x51);
	ck_assert(l.flags & IFF_UP);
}
END_TEST

START_TEST(test_parse_link_truncated)
{
	char buf[NL_BUF_SIZE];
	struct nl_link l = { .ifindex = 99 };
	size_t len = make_link_reply(buf, "ens5f0v0", 1500);

	for (size_t cut = 0; cut < len; cut += 3)
		ck_assert_int_eq(nl_parse_link(buf, cut, &l), -EBADMSG);
	ck_assert_int_eq(l.ifindex, 99); /* untouched */
}
END_TEST

START_TEST(test_parse_link_bad_attribute)
{
	char buf[NL_BUF_SIZE];
	struct nl_link l;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	uint16_t two = 2;

	nlh->nlmsg_type = RTM_NEWLINK;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "x");
	mnl_attr_put(nlh, IFLA_MTU, sizeof(two), &two); /* a u16 where a u32 belongs */
	ck_assert_int_eq(nl_parse_link(buf, nlh->nlmsg_len, &l), -EBADMSG);
	nlh->nlmsg_type = RTM_NEWADDR;
	ck_assert_int_eq(nl_parse_link(buf, nlh->nlmsg_len, &l), -EPROTO);
}
END_TEST

/* IFLA_STATS64 (a kernel's struct rtnl_link_stats64): the first two counters; one too short refused. */
START_TEST(test_parse_link_stats)
{
	char buf[NL_BUF_SIZE];
	struct nl_link l = { 0 };
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct rtnl_link_stats64 st = { .rx_packets = 123456789012ULL, .tx_packets = 7 };
	uint64_t short_stats = 1;

	make_link_reply(buf, "vnet3", 1500);
	ck_assert_int_eq(nl_parse_link(buf, nlh->nlmsg_len, &l), 0);
	ck_assert(!l.has_stats);
	mnl_attr_put(nlh, IFLA_STATS64, sizeof(st), &st);
	ck_assert_int_eq(nl_parse_link(buf, nlh->nlmsg_len, &l), 0);
	ck_assert(l.has_stats);
	ck_assert_uint_eq(l.rx_packets, 123456789012ULL);
	ck_assert_uint_eq(l.tx_packets, 7);
	make_link_reply(buf, "vnet3", 1500);
	mnl_attr_put(nlh, IFLA_STATS64, sizeof(short_stats), &short_stats);
	ck_assert_int_eq(nl_parse_link(buf, nlh->nlmsg_len, &l), -EBADMSG);
}
END_TEST

/* The counters' request asks by index and does not skip them (the others do). */
START_TEST(test_build_getlink_stats)
{
	char buf[NL_BUF_SIZE];
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	const struct ifinfomsg *ifi;
	const struct nlattr *attr;
	size_t len = nl_build_getlink_stats(buf, 9, 42);

	ck_assert_uint_eq(len, nlh->nlmsg_len);
	ck_assert_uint_eq(nlh->nlmsg_type, RTM_GETLINK);
	ifi = mnl_nlmsg_get_payload(nlh);
	ck_assert_int_eq(ifi->ifi_index, 42);
	mnl_attr_for_each(attr, nlh, sizeof(*ifi))
		ck_assert_uint_ne(mnl_attr_get_type(attr), IFLA_EXT_MASK);
}
END_TEST

START_TEST(test_parse_ack_with_extack)
{
	char buf[NL_BUF_SIZE], msg[128];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = NLM_F_CAPPED | NLM_F_ACK_TLVS;
	e->error = -EOPNOTSUPP;
	e->msg.nlmsg_len = sizeof(struct nlmsghdr);
	mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, "Device does not support netns change");
	ck_assert_int_eq(nl_parse_ack(buf, nlh->nlmsg_len, msg, sizeof(msg)), -EOPNOTSUPP);
	ck_assert_str_eq(msg, "Device does not support netns change");
	e->error = 0;
	ck_assert_int_eq(nl_parse_ack(buf, nlh->nlmsg_len, msg, sizeof(msg)), 0);
	ck_assert_int_eq(nl_parse_ack(buf, 8, msg, sizeof(msg)), -EBADMSG);
}
END_TEST

START_TEST(test_build_setlink_move)
{
	char buf[NL_BUF_SIZE];
	struct nl_link_change c = { .name = "net1", .netns_fd = 5, .mtu = 1400, .up = 1 };
	size_t len = nl_build_setlink(buf, 9, 7, &c);
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	int seen = 0;

	ck_assert_uint_eq(len, nlh->nlmsg_len);
	ck_assert_int_eq(nlh->nlmsg_type, RTM_NEWLINK);
	ck_assert(nlh->nlmsg_flags & NLM_F_ACK);
	ck_assert_uint_eq(nlh->nlmsg_seq, 9);
	ck_assert_int_eq(ifi->ifi_index, 7);
	ck_assert_uint_eq(ifi->ifi_change, IFF_UP);
	ck_assert_uint_eq(ifi->ifi_flags, IFF_UP);
	mnl_attr_for_each(attr, nlh, sizeof(*ifi)) {
		switch (mnl_attr_get_type(attr)) {
		case IFLA_IFNAME:
			ck_assert_str_eq(mnl_attr_get_str(attr), "net1");
			seen |= 1;
			break;
		case IFLA_NET_NS_FD:
			ck_assert_uint_eq(mnl_attr_get_u32(attr), 5);
			seen |= 2;
			break;
		case IFLA_MTU:
			ck_assert_uint_eq(mnl_attr_get_u32(attr), 1400);
			seen |= 4;
			break;
		default:
			ck_abort_msg("unexpected attribute %d", mnl_attr_get_type(attr));
		}
	}
	ck_assert_int_eq(seen, 7);
}
END_TEST

/* What a tenant may set on a link, in a reply: a master, alternative names, an alias. */
START_TEST(test_parse_link_tenant_properties)
{
	char buf[NL_BUF_SIZE];
	struct nl_link l = { 0 };
	size_t len = make_link_reply(buf, "net1", 1500);
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct nlattr *list;

	ck_assert_uint_eq(len, nlh->nlmsg_len);
	mnl_attr_put_u32(nlh, IFLA_MASTER, 9);
	list = mnl_attr_nest_start(nlh, IFLA_PROP_LIST);
	mnl_attr_put_strz(nlh, IFLA_ALT_IFNAME, "ens5f0v1");
	mnl_attr_put_strz(nlh, IFLA_ALT_IFNAME, "net7");
	mnl_attr_nest_end(nlh, list);
	mnl_attr_put(nlh, IFLA_IFALIAS, 4, "mine");
	ck_assert_int_eq(nl_parse_link(buf, nlh->nlmsg_len, &l), 0);
	ck_assert_int_eq(l.master, 9);
	ck_assert_uint_eq(l.n_altnames, 2);
	ck_assert_str_eq(l.altnames, "ens5f0v1 net7");
	ck_assert(l.has_alias);
}
END_TEST

/* Undoing them: out of the master, alias cleared, an altname deleted, an upper deleted. */
START_TEST(test_build_strip)
{
	char buf[NL_BUF_SIZE];
	struct nl_link_change bare = { .netns_fd = -1, .up = -1, .nomaster = true, .alias = "" };
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	const struct nlattr *attr, *inner;
	bool master = false, alias = false, name = false;
	size_t len = nl_build_setlink(buf, 1, 5, &bare);

	ck_assert_uint_eq(len, nlh->nlmsg_len);
	mnl_attr_for_each(attr, nlh, sizeof(struct ifinfomsg)) {
		if (mnl_attr_get_type(attr) == IFLA_MASTER)
			master = mnl_attr_get_u32(attr) == 0;
		if (mnl_attr_get_type(attr) == IFLA_IFALIAS)
			alias = mnl_attr_get_payload_len(attr) == 0;
	}
	ck_assert(master && alias);
	nl_build_altname(buf, 2, 5, false, "net7");
	ck_assert_int_eq(nlh->nlmsg_type, RTM_DELLINKPROP);
	mnl_attr_for_each(attr, nlh, sizeof(struct ifinfomsg))
		if (mnl_attr_get_type(attr) == IFLA_PROP_LIST)
			mnl_attr_for_each_nested(inner, attr)
				name = mnl_attr_get_type(inner) == IFLA_ALT_IFNAME &&
				       strcmp(mnl_attr_get_str(inner), "net7") == 0;
	ck_assert(name);
	nl_build_dellink(buf, 3, 11);
	ck_assert_int_eq(nlh->nlmsg_type, RTM_DELLINK);
	ck_assert_int_eq(((const struct ifinfomsg *)mnl_nlmsg_get_payload(nlh))->ifi_index, 11);
}
END_TEST

START_TEST(test_parse_mac)
{
	unsigned char mac[6] = { 9, 9, 9, 9, 9, 9 };
	static const char *const bad[] = { "", "02:aa:bb:cc:dd", "02:aa:bb:cc:dd:0", "02:aa:bb:cc:dd:011",
					   "02-aa-bb-cc-dd-01", "0g:aa:bb:cc:dd:01", "2:aa:bb:cc:dd:01" };

	ck_assert_int_eq(vfp_mac_parse("02:aA:bb:cc:dd:F1", mac), 0);
	ck_assert_int_eq(mac[0], 0x02);
	ck_assert_int_eq(mac[1], 0xaa);
	ck_assert_int_eq(mac[5], 0xf1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(vfp_mac_parse(bad[i], mac), -EINVAL);
		ck_assert_int_eq(mac[5], 0xf1); /* untouched */
	}
}
END_TEST

START_TEST(test_build_addr_and_prefix)
{
	char buf[NL_BUF_SIZE];
	unsigned char addr[16];
	unsigned plen;
	int family;
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;

	ck_assert_int_eq(nl_parse_prefix("10.9.0.2/24", &family, addr, &plen), 0);
	ck_assert_int_eq(family, AF_INET);
	ck_assert_uint_eq(plen, 24);
	nl_build_addr(buf, 1, 3, family, addr, plen);
	ck_assert_int_eq(nlh->nlmsg_type, RTM_NEWADDR);
	ck_assert(nlh->nlmsg_flags & NLM_F_EXCL);
	ck_assert_int_eq(nl_parse_prefix("fd00::2/64", &family, addr, &plen), 0);
	ck_assert_int_eq(family, AF_INET6);
	ck_assert_int_eq(nl_parse_prefix("10.9.0.2", &family, addr, &plen), -EINVAL);
	ck_assert_int_eq(nl_parse_prefix("10.9.0.2/33", &family, addr, &plen), -EINVAL);
	ck_assert_int_eq(nl_parse_prefix("10.9.0.2/", &family, addr, &plen), -EINVAL);
	ck_assert_int_eq(nl_parse_prefix("fd00::2/129", &family, addr, &plen), -EINVAL);
	ck_assert_int_eq(nl_parse_prefix("x/8", &family, addr, &plen), -EINVAL);
}
END_TEST

Suite *suite_nlmsg(void)
{
	Suite *s = suite_create("nlmsg");
	TCase *tc = tcase_create("rtnetlink");

	tcase_add_test(tc, test_parse_link);
	tcase_add_test(tc, test_parse_link_truncated);
	tcase_add_test(tc, test_parse_link_bad_attribute);
	tcase_add_test(tc, test_parse_link_stats);
	tcase_add_test(tc, test_build_getlink_stats);
	tcase_add_test(tc, test_parse_ack_with_extack);
	tcase_add_test(tc, test_build_setlink_move);
	tcase_add_test(tc, test_parse_link_tenant_properties);
	tcase_add_test(tc, test_build_strip);
	tcase_add_test(tc, test_parse_mac);
	tcase_add_test(tc, test_build_addr_and_prefix);
	suite_add_tcase(s, tc);
	return s;
}
