/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* VF settings and RDMA nldev messages on synthesized netlink: no socket, no kernel. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>
#include <stdlib.h>
#include <string.h>

#include "agent/netlink/rdmamsg.h"
#include "agent/netlink/vfinfo.h"
#include "check-suites.h"

#define BIG (256 * 1024)

static void put_pair(struct nlmsghdr *nlh, uint16_t type, uint32_t vf, uint32_t v)
{
	uint32_t p[2] = { vf, v };

	mnl_attr_put(nlh, type, sizeof(p), p);
}

/* One IFLA_VF_INFO as a kernel of today sends it, plus an attribute from the future. */
static void put_vf(struct nlmsghdr *nlh, uint32_t vf)
{
	struct nlattr *info = mnl_attr_nest_start(nlh, IFLA_VF_INFO), *list;
	struct ifla_vf_mac mac = { .vf = vf, .mac = { 0x02, 0, 0, 0, (uint8_t)(vf >> 8), (uint8_t)vf } };
	struct ifla_vf_vlan vlan = { .vf = vf, .vlan = 100 + vf, .qos = vf % 8 };
	struct ifla_vf_vlan_info vi = { .vf = vf, .vlan = 100 + vf, .qos = vf % 8,
					.vlan_proto = htons(vf % 2 ? 0x88a8 : 0x8100) };
	struct ifla_vf_rate rate = { .vf = vf, .min_tx_rate = vf, .max_tx_rate = 1000 + vf };

	mnl_attr_put(nlh, IFLA_VF_MAC, sizeof(mac), &mac);
	mnl_attr_put(nlh, IFLA_VF_VLAN, sizeof(vlan), &vlan);
	list = mnl_attr_nest_start(nlh, IFLA_VF_VLAN_LIST);
	mnl_attr_put(nlh, IFLA_VF_VLAN_INFO, sizeof(vi), &vi);
	mnl_attr_nest_end(nlh, list);
	put_pair(nlh, IFLA_VF_TX_RATE, vf, 1000 + vf);
	mnl_attr_put(nlh, IFLA_VF_RATE, sizeof(rate), &rate);
	put_pair(nlh, IFLA_VF_SPOOFCHK, vf, vf % 2);
	put_pair(nlh, IFLA_VF_LINK_STATE, vf, IFLA_VF_LINK_STATE_DISABLE);
	put_pair(nlh, IFLA_VF_TRUST, vf, 1);
	put_pair(nlh, 0x3f, vf, 7); /* unknown to this build: skipped */
	mnl_attr_nest_end(nlh, info);
}

static size_t make_pf_reply(char *buf, unsigned nvfs)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *list;

	nlh->nlmsg_type = RTM_NEWLINK;
	ifi->ifi_index = 4;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "ens5f0");
	mnl_attr_put_u32(nlh, IFLA_NUM_VF, nvfs);
	list = mnl_attr_nest_start(nlh, IFLA_VFINFO_LIST);
	for (unsigned i = 0; i < nvfs; i++)
		put_vf(nlh, i);
	mnl_attr_nest_end(nlh, list);
	return nlh->nlmsg_len;
}

START_TEST(test_vfinfo_128_vfs)
{
	char *buf = malloc(BIG);
	size_t len = make_pf_reply(buf, 128);
	struct vfp_vf_config s;

	ck_assert_uint_gt(len, 16384); /* more than any fixed page-sized buffer holds */
	ck_assert_int_eq(vfinfo_parse(buf, len, 127, &s), 0);
	ck_assert_uint_eq(s.index, 127);
	ck_assert(s.has_mac);
	ck_assert_uint_eq(s.mac[5], 127);
	ck_assert_int_eq(s.vlan, 227);
	ck_assert_int_eq(s.qos, 7);
	ck_assert_int_eq(s.vlan_proto, 0x88a8);
	ck_assert_int_eq(s.min_tx_rate, 127);
	ck_assert_int_eq(s.max_tx_rate, 1127);
	ck_assert_int_eq(s.spoofchk, 1);
	ck_assert_int_eq(s.trust, 1);
	ck_assert_int_eq(s.link_state, IFLA_VF_LINK_STATE_DISABLE);
	ck_assert(!s.has_node_guid);
	ck_assert_int_eq(vfinfo_parse(buf, len, 64, &s), 0);
	ck_assert_int_eq(s.vlan_proto, 0x8100);
	ck_assert_int_eq(s.spoofchk, 0);
	ck_assert_int_eq(vfinfo_parse(buf, len, 128, &s), -ENOENT);
	free(buf);
}
END_TEST

START_TEST(test_vfinfo_truncated)
{
	char *buf = malloc(BIG);
	size_t len = make_pf_reply(buf, 3);
	struct vfp_vf_config s = { .index = 99 };

	for (size_t cut = 0; cut < len; cut++)
		ck_assert_int_eq(vfinfo_parse(buf, cut, 2, &s), -EBADMSG);
	ck_assert_uint_eq(s.index, 99); /* untouched */
	free(buf);
}
END_TEST

START_TEST(test_vfinfo_short_attribute)
{
	char *buf = malloc(BIG);
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlattr *list, *info;
	uint32_t short_mac[2] = { 0, 0 };
	struct vfp_vf_config s;

	nlh->nlmsg_type = RTM_NEWLINK;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	list = mnl_attr_nest_start(nlh, IFLA_VFINFO_LIST);
	info = mnl_attr_nest_start(nlh, IFLA_VF_INFO);
	mnl_attr_put(nlh, IFLA_VF_MAC, sizeof(short_mac), short_mac); /* 8 bytes, not 36 */
	mnl_attr_nest_end(nlh, info);
	mnl_attr_nest_end(nlh, list);
	ck_assert_int_eq(vfinfo_parse(buf, nlh->nlmsg_len, 0, &s), -EBADMSG);
	nlh->nlmsg_type = RTM_NEWADDR;
	ck_assert_int_eq(vfinfo_parse(buf, nlh->nlmsg_len, 0, &s), -EPROTO);
	free(buf);
}
END_TEST

START_TEST(test_vfinfo_no_list)
{
	char buf[512];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct vfp_vf_config s;

	nlh->nlmsg_type = RTM_NEWLINK;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "veth0");
	ck_assert_int_eq(vfinfo_parse(buf, nlh->nlmsg_len, 0, &s), -ENOENT);
}
END_TEST

/* What we build is what a kernel would parse back: every field set, then only one. */
START_TEST(test_vfinfo_build_set)
{
	char *buf = malloc(BIG), *reply = malloc(BIG);
	struct vfp_vf_config s, back;
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	size_t len;

	vfp_vf_config_init(&s, 5);
	s.has_mac = true;
	memcpy(s.mac, "\x02\x11\x22\x33\x44\x55", 6);
	s.vlan = 42, s.qos = 3, s.vlan_proto = 0x88a8, s.spoofchk = 0, s.trust = 1;
	s.link_state = IFLA_VF_LINK_STATE_ENABLE, s.min_tx_rate = 10, s.max_tx_rate = 500;
	s.has_node_guid = s.has_port_guid = true;
	s.node_guid = s.port_guid = 0x0002c90300000001ULL;
	ck_assert_uint_eq(vfinfo_build_set(buf, 100, 1, 4, &s), 0);
	len = vfinfo_build_set(buf, BIG, 1, 4, &s);
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_eq(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
	memcpy(reply, buf, len); /* the request has the shape of a reply */
	ck_assert_int_eq(vfinfo_parse(reply, len, 5, &back), 0);
	ck_assert_int_eq(memcmp(back.mac, s.mac, 6), 0);
	ck_assert_int_eq(back.vlan, 42);
	ck_assert_int_eq(back.qos, 3);
	ck_assert_int_eq(back.vlan_proto, 0x88a8);
	ck_assert_int_eq(back.spoofchk, 0);
	ck_assert_int_eq(back.trust, 1);
	ck_assert_int_eq(back.link_state, IFLA_VF_LINK_STATE_ENABLE);
	ck_assert_int_eq(back.max_tx_rate, 500);
	ck_assert(back.has_node_guid && back.node_guid == 0x0002c90300000001ULL);
	ck_assert(back.has_port_guid && back.port_guid == 0x0002c90300000001ULL);

	vfp_vf_config_init(&s, 5);
	s.trust = 0;
	len = vfinfo_build_set(buf, BIG, 2, 4, &s);
	memcpy(reply, buf, len);
	ck_assert_int_eq(vfinfo_parse(reply, len, 5, &back), -EBADMSG); /* no MAC names no VF */
	free(buf);
	free(reply);
}
END_TEST

START_TEST(test_vfinfo_build_get)
{
	char buf[512];
	size_t len = vfinfo_build_get(buf, 7, "enp175s0f0");
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct nlattr *attr;
	const char *name = NULL;
	uint32_t mask = 0;

	ck_assert_uint_eq(nlh->nlmsg_type, RTM_GETLINK);
	ck_assert_uint_eq(nlh->nlmsg_len, len);
	mnl_attr_for_each(attr, nlh, sizeof(struct ifinfomsg))
		if (mnl_attr_get_type(attr) == IFLA_EXT_MASK)
			mask = mnl_attr_get_u32(attr);
		else if (mnl_attr_get_type(attr) == IFLA_IFNAME)
			name = mnl_attr_get_str(attr);
	ck_assert_uint_eq(mask, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name, "enp175s0f0");
	ck_assert_int_eq(((struct ifinfomsg *)mnl_nlmsg_get_payload(nlh))->ifi_index, 0);
}
END_TEST

static size_t rdma_reply(char *buf, int cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	nlh->nlmsg_flags = flags;
	return nlh->nlmsg_len;
}

START_TEST(test_rdma_netns_mode)
{
	char buf[512];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	int exclusive = -1;

	rdma_reply(buf, RDMA_NLDEV_CMD_SYS_GET, 0);
	ck_assert_int_eq(rdmamsg_parse_netns_mode(buf, nlh->nlmsg_len, &exclusive), -ENODATA);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 0);
	ck_assert_int_eq(rdmamsg_parse_netns_mode(buf, nlh->nlmsg_len, &exclusive), 0);
	ck_assert_int_eq(exclusive, 1);
	for (size_t cut = 0; cut < nlh->nlmsg_len; cut++)
		ck_assert_int_eq(rdmamsg_parse_netns_mode(buf, cut, &exclusive), -EBADMSG);
	rdma_reply(buf, RDMA_NLDEV_CMD_SYS_GET, 0);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1); /* wrong size */
	ck_assert_int_eq(rdmamsg_parse_netns_mode(buf, nlh->nlmsg_len, &exclusive), -EBADMSG);
	rdma_reply(buf, RDMA_NLDEV_CMD_GET, 0);
	ck_assert_int_eq(rdmamsg_parse_netns_mode(buf, nlh->nlmsg_len, &exclusive), -EPROTO);
}
END_TEST

static void put_dev(char *buf, size_t *off, uint32_t index, const char *name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + *off);

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
	nlh->nlmsg_flags = NLM_F_MULTI;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	*off += nlh->nlmsg_len;
}

START_TEST(test_rdma_find_dev)
{
	char buf[2048];
	size_t off = 0;
	uint32_t index = 0;
	struct nlmsghdr *done;

	put_dev(buf, &off, 0, "mlx5_0");
	put_dev(buf, &off, 3, "rxe0");
	ck_assert_int_eq(rdmamsg_find_dev(buf, off, "rxe0", &index), 0);
	ck_assert_uint_eq(index, 3);
	ck_assert_int_eq(rdmamsg_find_dev(buf, off, "mlx5_9", &index), -EAGAIN);
	done = mnl_nlmsg_put_header(buf + off);
	done->nlmsg_type = NLMSG_DONE;
	ck_assert_int_eq(rdmamsg_find_dev(buf, off + done->nlmsg_len, "mlx5_9", &index), -ENOENT);
	ck_assert_int_eq(rdmamsg_find_dev(buf, 10, "rxe0", &index), -EBADMSG);
}
END_TEST

START_TEST(test_rdma_build_set_netns)
{
	char buf[512];
	size_t len = rdmamsg_build_set_netns(buf, 9, 3, 17);
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct nlattr *attr;
	uint32_t index = 0, fd = 0;

	ck_assert_uint_eq(nlh->nlmsg_type, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SET));
	ck_assert_uint_eq(nlh->nlmsg_len, len);
	ck_assert(nlh->nlmsg_flags & NLM_F_ACK);
	mnl_attr_for_each(attr, nlh, 0) {
		if (mnl_attr_get_type(attr) == RDMA_NLDEV_ATTR_DEV_INDEX)
			index = mnl_attr_get_u32(attr);
		if (mnl_attr_get_type(attr) == RDMA_NLDEV_NET_NS_FD)
			fd = mnl_attr_get_u32(attr);
	}
	ck_assert_uint_eq(index, 3);
	ck_assert_uint_eq(fd, 17);
}
END_TEST

Suite *suite_vfinfo(void)
{
	Suite *s = suite_create("vfinfo");
	TCase *tc = tcase_create("vfinfo");

	tcase_add_test(tc, test_vfinfo_128_vfs);
	tcase_add_test(tc, test_vfinfo_truncated);
	tcase_add_test(tc, test_vfinfo_short_attribute);
	tcase_add_test(tc, test_vfinfo_no_list);
	tcase_add_test(tc, test_vfinfo_build_set);
	tcase_add_test(tc, test_vfinfo_build_get);
	tcase_add_test(tc, test_rdma_netns_mode);
	tcase_add_test(tc, test_rdma_find_dev);
	tcase_add_test(tc, test_rdma_build_set_netns);
	suite_add_tcase(s, tc);
	return s;
}
